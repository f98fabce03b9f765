"""Web Push: the service's VAPID key pair, creators' device subscriptions, and one
pending delivery per new message and subscription.

A delivery row lives only until its push is accepted (or its subscription is gone): what
it carries (perhaps a message's first words) is not kept after.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

ULID = sa.String(26)


def upgrade() -> None:
    op.create_table(
        "push_vapid_keys",  # one row: every instance signs with the same key
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("private_key", sa.Text, nullable=False),  # raw 32-byte scalar, base64url
        sa.Column("public_key", sa.Text, nullable=False),  # uncompressed point, base64url
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.CheckConstraint("id = 1", name="ck_push_vapid_keys_one_row"),
    )
    op.create_table(
        "push_subscriptions",
        sa.Column("id", ULID, primary_key=True),
        sa.Column("user_id", ULID, nullable=False),
        sa.Column("endpoint", sa.Text, nullable=False),
        sa.Column("p256dh", sa.Text, nullable=False),
        sa.Column("auth", sa.Text, nullable=False),
        sa.Column("preview", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name="fk_push_subscriptions_user_id_users",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("endpoint", name="uq_push_subscriptions_endpoint"),
    )
    op.create_index("ix_push_subscriptions_user_id", "push_subscriptions", ["user_id"])
    op.create_table(
        "push_deliveries",
        sa.Column("id", ULID, primary_key=True),
        sa.Column("subscription_id", ULID, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("next_attempt_at", sa.BigInteger, nullable=False),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["push_subscriptions.id"],
            name="fk_push_deliveries_subscription_id_push_subscriptions",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_push_deliveries_due", "push_deliveries", ["next_attempt_at"])


def downgrade() -> None:
    op.drop_table("push_deliveries")
    op.drop_table("push_subscriptions")
    op.drop_table("push_vapid_keys")
