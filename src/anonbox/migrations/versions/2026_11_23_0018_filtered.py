"""The filtered folder: messages caught by muted words, kept apart for the creator.

A message with a muted word (the creator's or the site's) is kept in
``filtered_messages`` instead of ``messages`` when its link says so (``links.muted`` =
'filter', the default; 'drop' drops it as before). A table of its own rather than a flag
on ``messages``: every reader of ``messages`` (inbox, unread counts, public page, search
and its triggers, events, share card) leaves filtered messages out without a change, and
restoring moves the row back under the same id. Rows go with their link, and are purged
30 days after ``filtered_at``.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

ULID = sa.String(26)


def upgrade() -> None:
    op.create_table(
        "filtered_messages",
        sa.Column("id", ULID, nullable=False),
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("sender_epoch", sa.Integer, nullable=True),
        sa.Column("sender_hash", sa.String(64), nullable=True),
        sa.Column("sender_network_hash", sa.String(64), nullable=True),
        sa.Column("follow_up_of", ULID, nullable=True),
        sa.Column("filtered_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_filtered_messages"),
        sa.ForeignKeyConstraint(
            ["link_id"],
            ["links.id"],
            name="fk_filtered_messages_link_id_links",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_filtered_messages_link_id_id", "filtered_messages", ["link_id", "id"])
    op.create_index("ix_filtered_messages_filtered_at", "filtered_messages", ["filtered_at"])
    # A network block moves the network's waiting messages: find them by index.
    op.create_index(
        "ix_messages_sender_network",
        "messages",
        ["sender_epoch", "sender_network_hash"],
        sqlite_where=sa.text("sender_network_hash IS NOT NULL"),
        postgresql_where=sa.text("sender_network_hash IS NOT NULL"),
    )
    # 'filter' (the folder) or 'drop' (silence): what happens to a message with a muted word.
    # Plain ALTER TABLE (no batch copy of links, whose children cascade from it).
    op.add_column(
        "links",
        sa.Column("muted", sa.String(8), nullable=False, server_default="filter"),
    )


def downgrade() -> None:
    op.execute("ALTER TABLE links DROP COLUMN muted")
    op.drop_index("ix_messages_sender_network", table_name="messages")
    op.drop_index("ix_filtered_messages_filtered_at", table_name="filtered_messages")
    op.drop_index("ix_filtered_messages_link_id_id", table_name="filtered_messages")
    op.drop_table("filtered_messages")
