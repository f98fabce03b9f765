"""Sign-in state, sessions and spent refresh tokens; accounts keyed by provider subject.

E-mail stops being unique: a Google account is its ``sub``, and two accounts may
have used the same address over time.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ULID = sa.String(26)
HASH = sa.String(64)


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint("uq_users_email", type_="unique")
        batch.create_index("ix_users_email", ["email"])

    op.create_table(
        "signin_states",
        sa.Column("state", sa.String(64), nullable=False),
        sa.Column("binding_hash", HASH, nullable=False),
        sa.Column("code_verifier", sa.String(128), nullable=False),
        sa.Column("nonce", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("used_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("state", name="pk_signin_states"),
    )
    op.create_index("ix_signin_states_expires_at", "signin_states", ["expires_at"])

    op.create_table(
        "sessions",
        sa.Column("id", ULID, nullable=False),
        sa.Column("user_id", ULID, nullable=False),
        sa.Column("access_hash", HASH, nullable=False),
        sa.Column("access_expires_at", sa.BigInteger, nullable=False),
        sa.Column("refresh_hash", HASH, nullable=False),
        sa.Column("refresh_expires_at", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("revoked_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_sessions"),
        sa.UniqueConstraint("access_hash", name="uq_sessions_access_hash"),
        sa.UniqueConstraint("refresh_hash", name="uq_sessions_refresh_hash"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_sessions_user_id_users", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_sessions_user_id", "sessions", ["user_id"])

    # A refresh token presented after it was rotated out means a copy exists: the
    # session it belonged to is revoked. These rows are how it is recognised.
    op.create_table(
        "spent_refresh_tokens",
        sa.Column("refresh_hash", HASH, nullable=False),
        sa.Column("session_id", ULID, nullable=False),
        sa.Column("spent_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("refresh_hash", name="pk_spent_refresh_tokens"),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            name="fk_spent_refresh_tokens_session_id_sessions",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("spent_refresh_tokens")
    op.drop_table("sessions")
    op.drop_table("signin_states")
    with op.batch_alter_table("users") as batch:
        batch.drop_index("ix_users_email")
        batch.create_unique_constraint("uq_users_email", ["email"])
