"""The fediverse as Mastodon and Misskey users see it (issue 42).

``links.fediverse_discoverable``: whether the link's actor says ``discoverable`` and
``indexable`` (false unless the creator opts in). ``links.federation_visibility``: how
its Notes are addressed: ``public``, ``unlisted`` or ``followers`` (NULL reads
``public``).

``federation_actors.gone_at``: when the actor said goodbye (``Delete`` of the actor to
its followers, after the link was deleted, its switch turned off or its account erased);
from then on the actor, its Notes and WebFinger answer 410. Turning the switch on again
clears it, with no followers.

``federation_servers``: what each remote server accepts, per host:
``signature_standard`` (``cavage`` or ``rfc9421``), learnt by double-knocking.

``federation_remote_keys`` gains the actor's ``inbox`` and ``shared_inbox`` and an
``expires_at``: one fetch of a follower's actor serves both the signature check and the
Follow, until it expires or its key changes.

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None

URL = 2048


def upgrade() -> None:
    with op.batch_alter_table("links") as batch:
        batch.add_column(
            sa.Column(
                "fediverse_discoverable", sa.Boolean, nullable=False, server_default=sa.false()
            )
        )
        batch.add_column(sa.Column("federation_visibility", sa.String(16), nullable=True))
    with op.batch_alter_table("federation_actors") as batch:
        batch.add_column(sa.Column("gone_at", sa.BigInteger, nullable=True))
    with op.batch_alter_table("federation_remote_keys") as batch:
        batch.add_column(sa.Column("inbox", sa.String(URL), nullable=True))
        batch.add_column(sa.Column("shared_inbox", sa.String(URL), nullable=True))
        batch.add_column(sa.Column("expires_at", sa.BigInteger, nullable=True))
    op.create_table(
        "federation_servers",
        sa.Column("host", sa.String(253), primary_key=True),
        sa.Column("signature_standard", sa.String(16), nullable=False),
        sa.Column("checked_at", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("federation_servers")
    with op.batch_alter_table("federation_remote_keys") as batch:
        batch.drop_column("expires_at")
        batch.drop_column("shared_inbox")
        batch.drop_column("inbox")
    with op.batch_alter_table("federation_actors") as batch:
        batch.drop_column("gone_at")
    with op.batch_alter_table("links") as batch:
        batch.drop_column("federation_visibility")
        batch.drop_column("fediverse_discoverable")
