"""A version per list of muted words (``muted_list_versions``).

Every post asks whether its creator's muted words (and the site's muted phrases) changed
since this process built their automaton. Counting the list to find out read every one of
its rows: with 1,000 muted words, some 130 µs a post on SQLite. The version is one row per
list, bumped in the transaction that changes the list: ``owner`` is the creator's id, or
``site`` for the site's muted phrases. A list without a row has never held anything.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "muted_list_versions",
        sa.Column("owner", sa.String(26), primary_key=True),
        sa.Column("version", sa.BigInteger, nullable=False),
    )
    # Lists that hold words today start at version 1 (any value differs from "no row").
    op.execute(
        "INSERT INTO muted_list_versions (owner, version)"
        " SELECT DISTINCT user_id, 1 FROM muted_words"
    )
    op.execute(
        "INSERT INTO muted_list_versions (owner, version)"
        " SELECT 'site', 1 WHERE EXISTS (SELECT 1 FROM muted_phrases)"
    )


def downgrade() -> None:
    op.drop_table("muted_list_versions")
