"""Site-wide muted phrases and the admins' audit log.

A muted phrase applies to every link, as a creator's muted word applies to theirs. The
audit log keeps one row per admin action: who (the admin's user id), what, on which row,
when; never anything about a sender. It has no foreign key to ``users``: the record of
what an admin did outlives the admin's account.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

ULID = sa.String(26)


def upgrade() -> None:
    op.create_table(
        "muted_phrases",
        sa.Column("id", ULID, nullable=False),
        sa.Column("phrase", sa.String(100), nullable=False),  # as the admin typed it
        sa.Column("normalized", sa.String(400), nullable=False),  # as it is matched
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_muted_phrases"),
        sa.UniqueConstraint("normalized", name="uq_muted_phrases_normalized"),
    )
    op.create_table(
        "admin_audit",
        sa.Column("id", ULID, nullable=False),  # time-ordered: newest first by id
        sa.Column("admin_id", ULID, nullable=False),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("target_id", ULID, nullable=False),
        sa.Column("detail", sa.String(300), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_admin_audit"),
    )


def downgrade() -> None:
    op.drop_table("admin_audit")
    op.drop_table("muted_phrases")
