"""The outbox: one event row per thing a creator is told about, written in the same
transaction as the thing itself.

A message, a reply or a report is committed together with its event, so nothing a
creator should hear about can be committed without it, nor an event without its cause.
The relay (``notifications.relay``) hands events to the channels in order, and purges
them a while after (on SQLite each process also tails it for live fan-out).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        # Never reused (SQLite AUTOINCREMENT), so the order of events is the order of seq.
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("user_id", sa.String(26), nullable=False),
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("message_id", sa.String(26), nullable=False),
        sa.Column("reply_id", sa.String(26), nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        # When the relay handed it to the channels; kept a while after, then purged.
        sa.Column("handed_at", sa.BigInteger, nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_events_handed_at", "events", ["handed_at"])


def downgrade() -> None:
    op.drop_index("ix_events_handed_at", "events")
    op.drop_table("events")
