"""A block is about the message that was blocked.

Blocking a second message of a sender who is already blocked used to answer with the
first block (its id and the first message's excerpt), which told the creator that the two
messages came from one person. Each block now records its own message, so blocking is
idempotent per message and says nothing about any other. Blocks made before this have
no message id (NULL) and stay as they are.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("blocks") as batch:
        batch.add_column(sa.Column("message_id", sa.String(26), nullable=True))
        batch.create_index("ix_blocks_message_id", ["message_id"])


def downgrade() -> None:
    with op.batch_alter_table("blocks") as batch:
        batch.drop_index("ix_blocks_message_id")
        batch.drop_column("message_id")
