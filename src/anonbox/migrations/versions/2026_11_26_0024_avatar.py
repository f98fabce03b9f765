"""The creator's uploaded avatar (``avatars``).

One row per creator who uploaded a picture: ``id`` is random, new with every upload, and
names the picture in its public address (``/avatars/{id}.webp``), so the address never
tells who the creator is and a changed picture is a new address; ``image`` is the picture
as served, re-encoded by the service (256 x 256 WebP, no metadata, some kilobytes). A
creator without a row gets a generated picture (``account.avatar``).

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "avatars",
        sa.Column("user_id", sa.String(26), primary_key=True),
        sa.Column("id", sa.String(32), nullable=False, unique=True),
        sa.Column("image", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_avatars_user_id_users", ondelete="CASCADE"
        ),
    )


def downgrade() -> None:
    op.drop_table("avatars")
