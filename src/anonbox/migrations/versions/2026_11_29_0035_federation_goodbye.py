"""A followable link's actor outlives its link until it has said goodbye (issue 42, item 4).

``federation_actors``, ``federation_followers`` and ``federation_deliveries`` no longer
go with their link (``ON DELETE CASCADE`` dropped): when a link is deleted or its account
erased, the actor's key, its followers' inboxes and the deliveries of its ``Delete`` are
what the goodbye is made of, and the federation chore (``federation.goodbye``) removes
them itself once the goodbye is delivered or given up.

Revision ID: 0035
Revises: 0034
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None

TABLES = ("federation_actors", "federation_followers", "federation_deliveries")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(f"fk_{table}_link_id_links", type_="foreignkey")


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"DELETE FROM {table} WHERE link_id NOT IN (SELECT id FROM links)")  # noqa: S608
        with op.batch_alter_table(table) as batch:
            batch.create_foreign_key(
                f"fk_{table}_link_id_links", "links", ["link_id"], ["id"], ondelete="CASCADE"
            )
