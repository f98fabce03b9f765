"""Account deletion with a grace period, and the link ids erasure leaves behind.

A row in ``account_deletions`` means the account is disabled: its links answer 410, its
keys and sessions were revoked when it was asked for, and only a sign-in that cancels is
let in. At ``erase_at`` an instance claims it (``claimed_until``: a lease, so that
exactly one erases it, and another takes over if that one dies) and deletes every row the
account owns; the row goes with the user.

``link_tombstones`` keeps the ids of erased links, and nothing else (no owner, no
message): a link id once given out is never given to anyone else.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "account_deletions",
        sa.Column("user_id", sa.String(26), nullable=False),
        sa.Column("requested_at", sa.BigInteger, nullable=False),
        sa.Column("erase_at", sa.BigInteger, nullable=False),
        # Set by the instance erasing it, until when its claim holds; NULL: not begun (only
        # then can the creator still cancel).
        sa.Column("claimed_until", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("user_id", name="pk_account_deletions"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_account_deletions_user_id_users", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_account_deletions_erase_at", "account_deletions", ["erase_at"])
    op.create_table(
        "link_tombstones",
        sa.Column("id", sa.String(16), nullable=False),
        sa.Column("erased_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_link_tombstones"),
    )


def downgrade() -> None:
    op.drop_table("link_tombstones")
    op.drop_index("ix_account_deletions_erase_at", "account_deletions")
    op.drop_table("account_deletions")
