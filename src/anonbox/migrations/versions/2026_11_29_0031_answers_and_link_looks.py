"""Answer pages and how a link looks to the world (issue 41).

``answers``: each published answer's own page ``/{link_id}/a/{id}``. Its id is random
(``secrets.token_urlsafe(9)``: 12 characters, 72 bits) and tells no time, unlike a
message id (a ULID carries its send time, which would undo "hide dates"). A row is
written when a message gets its first reply and is never deleted with the message:
``message_id`` becomes NULL (``ON DELETE SET NULL``) so that the page answers 410 Gone
for an answer that was published and removed, and 404 for an id that never was one. It
goes with its link (``ON DELETE CASCADE``). Messages answered before this revision get
their row here.

``links.language``: the language the link speaks to the world (previews, alt texts, the
cards, ActivityPub objects); NULL reads as the creator's language. ``links.card_theme``:
the story card's theme; NULL reads as the default theme.

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-29
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

ULID = sa.String(26)


def upgrade() -> None:
    op.create_table(
        "answers",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("link_id", sa.String(16), nullable=False),
        sa.Column("message_id", ULID, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_answers"),
        sa.UniqueConstraint("message_id", name="uq_answers_message_id"),
        sa.ForeignKeyConstraint(
            ["link_id"], ["links.id"], name="fk_answers_link_id_links", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_answers_message_id_messages",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_answers_link_id", "answers", ["link_id"])
    with op.batch_alter_table("links") as batch:
        batch.add_column(sa.Column("language", sa.String(35), nullable=True))
        batch.add_column(sa.Column("card_theme", sa.String(16), nullable=True))
    bind = op.get_bind()
    answered = bind.execute(
        sa.text("SELECT id, link_id FROM messages WHERE reply_count > 0")
    ).fetchall()
    if answered:
        bind.execute(
            sa.text(
                "INSERT INTO answers (id, link_id, message_id) VALUES (:id, :link_id, :message_id)"
            ),
            [
                {"id": secrets.token_urlsafe(9), "link_id": row.link_id, "message_id": row.id}
                for row in answered
            ],
        )


def downgrade() -> None:
    with op.batch_alter_table("links") as batch:
        batch.drop_column("card_theme")
        batch.drop_column("language")
    op.drop_index("ix_answers_link_id", table_name="answers")
    op.drop_table("answers")
