"""Link settings: a pause with an end (``paused_until``), and dates hidden on the public
page (``hide_dates``).

A timed pause sets ``paused`` as an open one does, and ``paused_until``; the service
resumes links whose time has come (``links.service.resume_ended``), so every reader of
``paused`` stays as it is.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("links") as batch:
        batch.add_column(sa.Column("paused_until", sa.BigInteger, nullable=True))
        batch.add_column(
            sa.Column("hide_dates", sa.Boolean, nullable=False, server_default=sa.false())
        )
    op.create_index(
        "ix_links_paused_until",
        "links",
        ["paused_until"],
        sqlite_where=sa.text("paused_until IS NOT NULL"),
        postgresql_where=sa.text("paused_until IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_links_paused_until", table_name="links")
    with op.batch_alter_table("links") as batch:
        batch.drop_column("hide_dates")
        batch.drop_column("paused_until")
