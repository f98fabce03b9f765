"""The creator's public profile: a display name and a short bio (``users``).

Both start empty: until a creator chooses a name, public pages, cards and the API show a
neutral name ("The creator"), never anything taken from the e-mail address.
``users.name`` stays what it was (the provider's name, or the address's local part for
older e-mail accounts) and is shown only to the creator and in their export.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("display_name", sa.String(80), nullable=True))
        batch.add_column(sa.Column("bio", sa.String(160), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("bio")
        batch.drop_column("display_name")
