"""Sign-in links by e-mail; one account per e-mail address again.

An account is one person: Google and e-mail sign-ins with the same verified address
reach the same account, so the address is unique once more (stored in lower case).
Two accounts that already share an address cannot be merged here without losing
whose messages are whose: the upgrade stops and names the addresses instead.

A sign-in link is kept only as the SHA-256 of its token, with the hash of the browser
binding it must be opened in (NULL for links printed by ``anonbox signin-link``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

HASH = sa.String(64)


def upgrade() -> None:
    conn = op.get_bind()
    shared = conn.execute(
        sa.text("SELECT lower(email) FROM users GROUP BY lower(email) HAVING count(*) > 1")
    ).scalars()
    addresses = sorted(shared)
    if addresses:
        raise RuntimeError(
            "These e-mail addresses belong to more than one account; merge or delete the "
            f"extra accounts, then migrate again: {', '.join(addresses)}"
        )
    conn.execute(sa.text("UPDATE users SET email = lower(email) WHERE email <> lower(email)"))
    with op.batch_alter_table("users") as batch:
        batch.drop_index("ix_users_email")
        batch.create_unique_constraint("uq_users_email", ["email"])

    op.create_table(
        "email_signin_tokens",
        sa.Column("token_hash", HASH, nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("binding_hash", HASH, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("used_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name="pk_email_signin_tokens"),
    )
    op.create_index("ix_email_signin_tokens_expires_at", "email_signin_tokens", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_email_signin_tokens_expires_at", "email_signin_tokens")
    op.drop_table("email_signin_tokens")
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint("uq_users_email", type_="unique")
        batch.create_index("ix_users_email", ["email"])
