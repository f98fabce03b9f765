"""Dropped messages are written, not imitated.

A message from a blocked sender, or with a muted word, is dropped: its text and sender
are not kept. What is kept is that its id exists under its link, written in the same
group commit as stored messages, so that a drop takes what a store takes and every later
request about the id (a report, above all) answers as for a stored message the creator
has not published. The rows go with their link.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dropped_messages",
        sa.Column("id", sa.String(26), nullable=False),
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        # Reports on it: counted, never kept (see moderation.service.report_message).
        sa.Column("reports", sa.Integer, nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("id", name="pk_dropped_messages"),
        sa.ForeignKeyConstraint(
            ["link_id"], ["links.id"], name="fk_dropped_messages_link_id_links", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_dropped_messages_link_id", "dropped_messages", ["link_id"])


def downgrade() -> None:
    op.drop_index("ix_dropped_messages_link_id", "dropped_messages")
    op.drop_table("dropped_messages")
