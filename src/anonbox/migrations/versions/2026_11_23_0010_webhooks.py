"""Signed webhooks: a creator's endpoints, and one delivery row per event and endpoint.

A delivery is written in the relay's transaction (``notifications.webhooks``), so an
event handed over is a delivery that will be attempted until it arrives or its retries
run out. Its id is the ``webhook-id`` every attempt carries.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

ULID = sa.String(26)


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", ULID, primary_key=True),
        sa.Column("user_id", ULID, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("secret", sa.Text, nullable=False),  # whsec_…: needed to sign, so kept
        sa.Column("events", sa.Text, nullable=False),  # comma-separated event kinds
        sa.Column("disabled_reason", sa.Text, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_webhook_endpoints_user_id_users", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_webhook_endpoints_user_id", "webhook_endpoints", ["user_id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", ULID, primary_key=True),  # the webhook-id header
        sa.Column("endpoint_id", ULID, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),  # pending | delivered | failed
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("next_attempt_at", sa.BigInteger, nullable=False),
        sa.Column("last_status_code", sa.Integer, nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("finished_at", sa.BigInteger, nullable=True),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoints.id"],
            name="fk_webhook_deliveries_endpoint_id_webhook_endpoints",
            ondelete="CASCADE",
        ),
    )
    op.create_index(
        "ix_webhook_deliveries_due", "webhook_deliveries", ["status", "next_attempt_at"]
    )
    op.create_index("ix_webhook_deliveries_endpoint", "webhook_deliveries", ["endpoint_id", "id"])


def downgrade() -> None:
    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_endpoints")
