"""A message is read when it is opened (issue 41), not when the inbox lists it.

Until now a link's one ``seen_message_id`` mark said what was read, and showing the inbox
moved it past every message listed: 5 unread became 0 before any was opened. The mark
stays, moved by "Mark all as read" (and still the cheap bound of every unread count);
``messages.opened`` marks the one message opened on its own page. A message is unread
when its id is above the mark and it has not been opened. Adding a column with a constant
default rewrites no rows (PostgreSQL 11+, SQLite), and no row needs a value from the past:
what was below the mark stays read.

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Not batch mode: SQLite adds a column in place; a copied messages table would lose
    # the search index's triggers.
    op.add_column(
        "messages", sa.Column("opened", sa.Boolean, nullable=False, server_default=sa.false())
    )


def downgrade() -> None:
    # Plain ALTER TABLE … DROP COLUMN (SQLite 3.35+), as in 0016: a batch copy would drop
    # the search triggers with the table.
    op.execute("ALTER TABLE messages DROP COLUMN opened")
