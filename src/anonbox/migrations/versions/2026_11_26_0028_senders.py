"""Who may send to a link (``links.senders``): 'anyone', or 'signed_in' (any anonbox
account's sign-in or API key, the sender staying anonymous to the creator: see
``docs/safety.md``). Existing links keep taking messages from anyone.

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("links") as batch:
        batch.add_column(
            sa.Column("senders", sa.String(16), nullable=False, server_default="anyone")
        )


def downgrade() -> None:
    with op.batch_alter_table("links") as batch:
        batch.drop_column("senders")
