"""Safety: sender keyed hashes, blocks, muted words, paused links, idempotent posts, reports.

No column anywhere holds an address. A message keeps the keyed hash of its sender
under the key period it was sent in (``sender_epoch``), and only for as long as
blocks and clean-up need it; ``sender_epochs`` holds each period's random salt,
deleted when the period's retention ends.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ULID = sa.String(26)
HASH = sa.String(64)


def upgrade() -> None:
    op.create_table(
        "sender_epochs",
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("salt", sa.String(64), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("epoch", name="pk_sender_epochs"),
    )
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("sender_epoch", sa.Integer, nullable=True))
        batch.add_column(sa.Column("sender_hash", HASH, nullable=True))
    op.create_index("ix_messages_sender", "messages", ["sender_epoch", "sender_hash"])

    with op.batch_alter_table("links") as batch:
        batch.add_column(sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.false()))

    op.create_table(
        "blocks",
        sa.Column("id", ULID, nullable=False),
        # NULL: a site-wide block placed by an admin.
        sa.Column("user_id", ULID, nullable=True),
        sa.Column("sender_epoch", sa.Integer, nullable=False),
        sa.Column("sender_hash", HASH, nullable=False),
        sa.Column("message_excerpt", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_blocks"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_blocks_user_id_users", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_blocks_user_id", "blocks", ["user_id"])
    op.create_index("ix_blocks_sender", "blocks", ["sender_epoch", "sender_hash"])

    op.create_table(
        "muted_words",
        sa.Column("id", ULID, nullable=False),
        sa.Column("user_id", ULID, nullable=False),
        sa.Column("word", sa.String(100), nullable=False),
        sa.Column("normalized", sa.String(400), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_muted_words"),
        sa.UniqueConstraint("user_id", "normalized", name="uq_muted_words_user_id_normalized"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_muted_words_user_id_users", ondelete="CASCADE"
        ),
    )

    op.create_table(
        "idempotency_keys",
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("request_hash", HASH, nullable=False),
        sa.Column("message_id", ULID, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("link_id", "key", name="pk_idempotency_keys"),
        sa.ForeignKeyConstraint(
            ["link_id"], ["links.id"], name="fk_idempotency_keys_link_id_links", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_idempotency_keys_created_at", "idempotency_keys", ["created_at"])

    op.create_table(
        "reports",
        sa.Column("id", ULID, nullable=False),
        # Kept when the message is deleted (by its creator, or as the report's outcome).
        sa.Column("message_id", ULID, nullable=True),
        sa.Column("message_excerpt", sa.Text, nullable=False),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="open"),
        sa.Column("resolution", sa.String(32), nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("resolved_at", sa.BigInteger, nullable=True),
        sa.Column("resolved_by", ULID, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_reports"),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_reports_message_id_messages",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_reports_status_id", "reports", ["status", "id"])
    # Deleting a message sets its reports' message_id to NULL: find them by index.
    op.create_index("ix_reports_message_id", "reports", ["message_id"])


def downgrade() -> None:
    op.drop_table("reports")
    op.drop_table("idempotency_keys")
    op.drop_table("muted_words")
    op.drop_table("blocks")
    with op.batch_alter_table("links") as batch:
        batch.drop_column("paused")
    op.drop_index("ix_messages_sender", "messages")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("sender_hash")
        batch.drop_column("sender_epoch")
    op.drop_table("sender_epochs")
