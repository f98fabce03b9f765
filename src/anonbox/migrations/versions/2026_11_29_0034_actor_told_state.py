"""What a link's followers were last told of its actor, whole (issue 42, item 2).

``federation_actors.told_state`` replaces ``told_name`` and ``told_prompt``: it holds
everything the actor document is made of (the creator's name, the prompt, the picture,
the discoverable setting, and the document's shape), written by one SQL expression
(``federation.repository``), so that a change of any of them is found by comparing it
and sends one ``Update`` of the actor. It starts empty: after this upgrade every followed
actor sends one ``Update``, which tells its followers of the new PNG picture and profile
fields.

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("federation_actors") as batch:
        batch.add_column(sa.Column("told_state", sa.Text, nullable=True))
        batch.drop_column("told_name")
        batch.drop_column("told_prompt")


def downgrade() -> None:
    with op.batch_alter_table("federation_actors") as batch:
        batch.add_column(sa.Column("told_name", sa.Text, nullable=True))
        batch.add_column(sa.Column("told_prompt", sa.Text, nullable=False, server_default=""))
        batch.drop_column("told_state")
    # What the followers were told is not kept: the current name and prompt, so that a
    # downgrade does not send an Update of every actor.
    op.execute(
        "UPDATE federation_actors SET"
        " told_prompt = (SELECT l.prompt FROM links l WHERE l.id = federation_actors.link_id),"
        " told_name = (SELECT u.display_name FROM links l JOIN users u ON u.id = l.user_id"
        " WHERE l.id = federation_actors.link_id)"
    )
