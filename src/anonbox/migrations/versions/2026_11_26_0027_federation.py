"""Links people can follow from the fediverse (``docs/fediverse.md``).

``links.fediverse``: whether the link is an ActivityPub actor (off by default).
``federation_actors``: a followable link's key pair (RSA, PEM; the private key never
leaves the server) and the name and prompt its followers were last told, so a change is
sent as an ``Update``. ``federation_followers``: who follows a link: the remote actor's
id, its inbox and shared inbox, and its server's domain; nothing else of them.
``federation_remote_keys``: remote actors' public keys, cached by key id.
``federation_blocked_domains``: servers an admin blocked. ``federation_notes``: the
answers sent to followers, so that a deleted one is sent as ``Delete``.
``federation_deliveries``: one signed POST to one inbox, retried by the courier.

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

URL = 2048


def _link(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["link_id"], ["links.id"], name=f"fk_{table}_link_id_links", ondelete="CASCADE"
    )


def upgrade() -> None:
    op.add_column(
        "links", sa.Column("fediverse", sa.Boolean, nullable=False, server_default=sa.false())
    )
    op.create_table(
        "federation_actors",
        sa.Column("link_id", sa.String(16), primary_key=True),
        sa.Column("private_key", sa.Text, nullable=False),
        sa.Column("public_key", sa.Text, nullable=False),
        sa.Column("told_name", sa.Text, nullable=True),
        sa.Column("told_prompt", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        _link("federation_actors"),
    )
    op.create_table(
        "federation_followers",
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("actor_id", sa.String(URL), nullable=False),
        sa.Column("inbox", sa.String(URL), nullable=False),
        sa.Column("shared_inbox", sa.String(URL), nullable=True),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("link_id", "actor_id"),
        _link("federation_followers"),
    )
    op.create_index("ix_federation_followers_domain", "federation_followers", ["domain"])
    op.create_table(
        "federation_remote_keys",
        sa.Column("key_id", sa.String(URL), primary_key=True),
        sa.Column("actor_id", sa.String(URL), nullable=False),
        sa.Column("public_key", sa.Text, nullable=False),
        sa.Column("fetched_at", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "federation_blocked_domains",
        sa.Column("domain", sa.String(253), primary_key=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "federation_notes",
        sa.Column("reply_id", sa.String(26), primary_key=True),
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("message_id", sa.String(26), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        _link("federation_notes"),
    )
    op.create_index("ix_federation_notes_link_id", "federation_notes", ["link_id", "reply_id"])
    op.create_table(
        "federation_deliveries",
        sa.Column("id", sa.String(26), primary_key=True),
        sa.Column("user_id", sa.String(26), nullable=False),
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("inbox", sa.String(URL), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="pending"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("next_attempt_at", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("finished_at", sa.BigInteger, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        _link("federation_deliveries"),
    )
    op.create_index(
        "ix_federation_deliveries_due", "federation_deliveries", ["status", "next_attempt_at"]
    )


def downgrade() -> None:
    op.drop_table("federation_deliveries")
    op.drop_table("federation_notes")
    op.drop_table("federation_blocked_domains")
    op.drop_table("federation_remote_keys")
    op.drop_index("ix_federation_followers_domain", table_name="federation_followers")
    op.drop_table("federation_followers")
    op.drop_table("federation_actors")
    with op.batch_alter_table("links") as batch:
        batch.drop_column("fediverse")
