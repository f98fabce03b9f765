"""Fediverse accounts: sign-in with Mastodon or Misskey, and answers posted to them.

``fediverse_apps``: anonbox's registration with a Mastodon instance (``POST /api/v1/apps``),
made once per instance and kept (a Misskey instance needs none: MiAuth names the app per
sign-in). ``fediverse_accounts``: one remote account (instance, its id there) linked to
one anonbox account, with the access token anonbox posts with; ``access_token`` is
emptied and ``disconnected_at`` set when the instance refuses it. ``fediverse_signins``:
a sign-in or linking in progress (state, PKCE verifier or MiAuth session, the browser's
binding, which account a linking is for). On ``links``: ``crosspost`` (NULL: answers are
not posted; else the visibility, ``public``, ``unlisted`` or ``followers``) and
``crosspost_cw`` (a content warning) and ``crosspost_since`` (when it was turned on:
answers written before are not posted). ``crosspost_deliveries``: one post of one answer to
one account, attempted by the durable courier.

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "fediverse_apps",
        sa.Column("instance", sa.String(300), primary_key=True),  # https://host[:port]
        sa.Column("redirect_uri", sa.String(1000), primary_key=True),
        sa.Column("client_id", sa.String(300), nullable=False),
        sa.Column("client_secret", sa.String(300), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "fediverse_accounts",
        sa.Column("id", sa.String(26), primary_key=True),
        sa.Column("user_id", sa.String(26), nullable=False),
        sa.Column("software", sa.String(16), nullable=False),  # mastodon | misskey
        sa.Column("instance", sa.String(300), nullable=False),
        sa.Column("remote_id", sa.String(300), nullable=False),
        sa.Column("acct", sa.String(600), nullable=False),  # user@host, as shown
        sa.Column("access_token", sa.String(1000), nullable=False),  # '' once disconnected
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("disconnected_at", sa.BigInteger, nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name="fk_fediverse_accounts_user_id_users",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("instance", "remote_id", name="uq_fediverse_accounts_remote"),
    )
    op.create_index("ix_fediverse_accounts_user_id", "fediverse_accounts", ["user_id"])
    op.create_table(
        "fediverse_signins",
        sa.Column("state", sa.String(64), primary_key=True),
        sa.Column("binding_hash", sa.String(64), nullable=False),
        sa.Column("software", sa.String(16), nullable=False),
        sa.Column("instance", sa.String(300), nullable=False),
        sa.Column("code_verifier", sa.String(128), nullable=True),  # None: no PKCE offered
        sa.Column("user_id", sa.String(26), nullable=True),  # linking to this account
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("used_at", sa.BigInteger, nullable=True),
    )
    op.create_index("ix_fediverse_signins_expires_at", "fediverse_signins", ["expires_at"])
    with op.batch_alter_table("links") as batch:
        batch.add_column(sa.Column("crosspost", sa.String(16), nullable=True))
        batch.add_column(sa.Column("crosspost_cw", sa.String(500), nullable=True))
        batch.add_column(sa.Column("crosspost_since", sa.BigInteger, nullable=True))
    op.create_table(
        "crosspost_deliveries",
        sa.Column("id", sa.String(26), primary_key=True),
        sa.Column("account_id", sa.String(26), nullable=False),
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("message_id", sa.String(26), nullable=False),
        sa.Column("reply_id", sa.String(26), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),  # pending | delivered | failed
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("finished_at", sa.BigInteger, nullable=True),
        sa.Column("last_error", sa.String(300), nullable=True),
        sa.Column("post_url", sa.String(1000), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["fediverse_accounts.id"],
            name="fk_crosspost_deliveries_account_id_fediverse_accounts",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["link_id"],
            ["links.id"],
            name="fk_crosspost_deliveries_link_id_links",
            ondelete="CASCADE",
        ),
    )
    op.create_index(
        "ix_crosspost_deliveries_pending", "crosspost_deliveries", ["status", "next_attempt_at"]
    )


def downgrade() -> None:
    op.drop_table("crosspost_deliveries")
    with op.batch_alter_table("links") as batch:
        batch.drop_column("crosspost_since")
        batch.drop_column("crosspost_cw")
        batch.drop_column("crosspost")
    op.drop_table("fediverse_signins")
    op.drop_table("fediverse_accounts")
    op.drop_table("fediverse_apps")
