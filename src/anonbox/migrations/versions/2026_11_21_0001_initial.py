"""Users, links, API keys, messages and replies.

Times are BIGINT microseconds since the Unix epoch (UTC): exact, and the same on
SQLite and PostgreSQL. Row ids are ULIDs, so ``ORDER BY id`` is creation order.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ULID = sa.String(26)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", ULID, primary_key=True),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("picture_url", sa.String(2000), nullable=True),
        sa.Column("google_sub", sa.String(255), nullable=True),
        sa.Column("is_admin", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("email", name="uq_users_email"),
        sa.UniqueConstraint("google_sub", name="uq_users_google_sub"),
    )
    op.create_table(
        "links",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("user_id", ULID, nullable=False),
        sa.Column("prompt", sa.String(300), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_links"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_links_user_id_users", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_links_user_id", "links", ["user_id"])
    op.create_table(
        "api_keys",
        sa.Column("id", ULID, primary_key=True),
        sa.Column("user_id", ULID, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("last_chars", sa.String(8), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("last_used_at", sa.BigInteger, nullable=True),
        sa.Column("revoked_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_keys"),
        sa.UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_api_keys_user_id_users", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_api_keys_user_id", "api_keys", ["user_id"])
    op.create_table(
        "messages",
        sa.Column("id", ULID, primary_key=True),
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("like_by_creator", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("reply_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_messages"),
        sa.ForeignKeyConstraint(
            ["link_id"], ["links.id"], name="fk_messages_link_id_links", ondelete="CASCADE"
        ),
    )
    # Inbox pages walk this index backwards from the cursor: no OFFSET, same cost at any depth.
    op.create_index("ix_messages_link_id_id", "messages", ["link_id", "id"])
    # The public view lists only answered messages; a partial index keeps that walk as cheap.
    op.create_index(
        "ix_messages_link_id_id_answered",
        "messages",
        ["link_id", "id"],
        sqlite_where=sa.text("reply_count > 0"),
        postgresql_where=sa.text("reply_count > 0"),
    )
    op.create_table(
        "replies",
        sa.Column("id", ULID, primary_key=True),
        sa.Column("message_id", ULID, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_replies"),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_replies_message_id_messages",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_replies_message_id_id", "replies", ["message_id", "id"])


def downgrade() -> None:
    op.drop_table("replies")
    op.drop_table("messages")
    op.drop_table("api_keys")
    op.drop_table("links")
    op.drop_table("users")
