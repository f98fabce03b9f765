"""``federation_signatures``: each signature an inbox accepted, by a hash of its value,
until its Date leaves the window, so that a replayed request is refused on every
instance. And the remote key cache emptied: keys cached before an actor's own document
had to vouch for them may map a key to an actor that never listed it; every key is read
again, under the new rule, when next used.

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "federation_signatures",
        sa.Column("fingerprint", sa.String(64), primary_key=True),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_federation_signatures_expires_at", "federation_signatures", ["expires_at"])
    op.execute("DELETE FROM federation_remote_keys")


def downgrade() -> None:
    op.drop_index("ix_federation_signatures_expires_at", table_name="federation_signatures")
    op.drop_table("federation_signatures")
