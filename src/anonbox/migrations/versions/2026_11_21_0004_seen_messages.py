"""Unread messages: each link remembers the newest message its creator has seen.

A message is unread when its id (a ULID, so time-ordered) is greater than the link's
``seen_message_id``; counting them walks ``ix_messages_link_id_id``. One column, written
once per inbox view, instead of a flag on every message.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("links") as batch:
        # NULL: nothing seen yet, every message is unread.
        batch.add_column(sa.Column("seen_message_id", sa.String(26), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("links") as batch:
        batch.drop_column("seen_message_id")
