"""Answer receipts for senders.

A receipt is a private link a sender may keep after posting: it shows whether the
creator answered, the public answers, and lets the sender send one follow-up into the
same thread. Its token is kept only as its SHA-256 (``token_hash``); the message's text
is kept sealed with a key derived from the token (``receipts.sealing``), so only the
token's holder can read it, even for a message that was dropped or later deleted. A
receipt goes with its link and is purged 30 days after it was issued.

``messages.follow_up_of`` marks a follow-up with the message it follows (no foreign key:
the original may have been dropped, or deleted since). ``links.follow_ups`` is the
creator's per-link switch, on by default.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

ULID = sa.String(26)


def upgrade() -> None:
    op.create_table(
        "receipts",
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("message_id", ULID, nullable=False),
        sa.Column("content", sa.Text, nullable=False),  # sealed: see receipts.sealing
        sa.Column("follow_up_id", ULID, nullable=True),
        sa.Column("follow_up_content", sa.Text, nullable=True),  # sealed too
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("token_hash", name="pk_receipts"),
        sa.UniqueConstraint("message_id", name="uq_receipts_message_id"),
        sa.ForeignKeyConstraint(
            ["link_id"], ["links.id"], name="fk_receipts_link_id_links", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_receipts_link_id", "receipts", ["link_id"])
    op.create_index("ix_receipts_expires_at", "receipts", ["expires_at"])
    op.add_column("messages", sa.Column("follow_up_of", ULID, nullable=True))
    op.add_column(
        "links",
        sa.Column("follow_ups", sa.Boolean, nullable=False, server_default=sa.true()),
    )


def downgrade() -> None:
    # Plain ALTER TABLE … DROP COLUMN (SQLite 3.35+): a batch copy of messages would drop
    # the triggers other revisions keep on it.
    op.execute("ALTER TABLE links DROP COLUMN follow_ups")
    op.execute("ALTER TABLE messages DROP COLUMN follow_up_of")
    op.drop_index("ix_receipts_expires_at", "receipts")
    op.drop_index("ix_receipts_link_id", "receipts")
    op.drop_table("receipts")
