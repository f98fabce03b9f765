"""Each webhook endpoint's pending deliveries, in order (``ix_webhook_deliveries_pending``).

An endpoint receives its events in order, so only its oldest pending delivery can be
attempted. The dispatcher finds those heads endpoint by endpoint through this partial
index, one probe each, instead of scanning every pending delivery: with endpoints that
never answer, pending rows pile up (ten a post for ten endpoints), and the scan grew with
them until it took most of the process (``notifications.webhooks.repository``). The index
that scan used (``ix_webhook_deliveries_due``: status, next_attempt_at) serves nothing
else and goes, so a hand-over still updates as many indexes a delivery as before.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

_PENDING = sa.text("status = 'pending'")


def upgrade() -> None:
    op.drop_index("ix_webhook_deliveries_due", table_name="webhook_deliveries")
    op.create_index(
        "ix_webhook_deliveries_pending",
        "webhook_deliveries",
        ["endpoint_id", "id"],
        sqlite_where=_PENDING,
        postgresql_where=_PENDING,
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_pending", table_name="webhook_deliveries")
    op.create_index(
        "ix_webhook_deliveries_due", "webhook_deliveries", ["status", "next_attempt_at"]
    )
