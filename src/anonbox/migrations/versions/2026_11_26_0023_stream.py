"""Stream mode: a creator's overlay for a live stream (``stream_overlays``).

One row per creator who turned it on: ``nonce`` makes the secret overlay address (the
address is an HMAC of it under the service's key, so it can be shown again and revoked by
a new nonce), ``token_hash`` finds the row from an address, ``message_id`` is the
question on screen (none: an empty overlay), ``updated_at`` lets a process that tails the
database (SQLite) hear of a change.

Revision ID: 0023
Revises: 0021
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stream_overlays",
        sa.Column("user_id", sa.String(26), primary_key=True),
        sa.Column("nonce", sa.String(32), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("message_id", sa.String(26), nullable=True),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_stream_overlays_user_id_users", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_stream_overlays_message_id_messages",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_stream_overlays_updated_at", "stream_overlays", ["updated_at"])


def downgrade() -> None:
    op.drop_table("stream_overlays")
