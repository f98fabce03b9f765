"""A creator may block a sender's whole network, not only the sender.

A sender who rotates addresses inside one network (the many /64s of an IPv6 /48, the
hosts of an IPv4 /24) escapes a block of one sender. Each message now also keeps its
sender's network as a keyed hash, the same kind of hash as the sender's, under the same
period key and erased with it; a block marked ``network`` matches that network.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("sender_network_hash", sa.String(64), nullable=True))
    with op.batch_alter_table("blocks") as batch:
        batch.add_column(
            sa.Column("network", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("blocks") as batch:
        batch.drop_column("network")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("sender_network_hash")
