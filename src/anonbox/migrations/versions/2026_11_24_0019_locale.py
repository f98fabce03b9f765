"""The creator's language and time zone (``users.language``, ``users.time_zone``).

``language`` is one of ``core.i18n.LANGUAGES``: the language of the creator's own pages and
of the mail anonbox sends them. NULL until their first dashboard page, which stores the
best match of their browser's ``Accept-Language``. ``time_zone`` is an IANA name; NULL
reads as UTC.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("language", sa.String(8), nullable=True))
        batch.add_column(sa.Column("time_zone", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("time_zone")
        batch.drop_column("language")
