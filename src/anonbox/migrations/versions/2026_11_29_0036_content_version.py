"""A link's content version: one number that changes, in the same transaction, with
anything its public pages show (issue 43, item 2).

``links.content_version`` is what the public pages' cache (``web.infra.page_cache``) and
their ETags are keyed by: a page read checks it with one primary-key read, so a change made
through any instance shows on every instance at once. It is bumped by triggers, not by the
code that writes, so no write path can forget it (the search index, migration 0015, is
kept the same way):

- ``links``: any change but the creator's read mark (``seen_message_id``, moved each time
  they read their inbox) and the version itself: prompt, pause and its end (the resume
  chore included), settings, language, looks, senders, federation.
- ``users``, ``avatars``, ``account_deletions``: every link of the account (name, bio,
  picture, time zone, language; an erasure asked for or cancelled).
- ``messages``: an answered one changed (a reply counted, a like, its text) or deleted (by
  its creator, a moderator, a cascade, or moved to the filtered folder); an unanswered one
  is on no public page, so the anonymous write bumps nothing.
- ``replies``: a reply's text changed (a new or deleted reply changes ``reply_count``).
- ``answers``, ``federation_notes``, ``federation_actors``: an answer page's id, its Note,
  the link's actor (the pages name them in their head).

SQLite: a migration that recreates one of these tables (batch mode) drops its triggers;
recreate them after it. PostgreSQL: the trigger on ``links`` is BEFORE UPDATE (it sets the
new row's version, no second write); the others update ``links``.

Revision ID: 0036
Revises: 0035
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None

_BUMP_LINK = "UPDATE links SET content_version = content_version + 1 WHERE id = {link}"
_BUMP_USER = "UPDATE links SET content_version = content_version + 1 WHERE user_id = {user}"
_BUMP_MESSAGE = (
    "UPDATE links SET content_version = content_version + 1"
    " WHERE id = (SELECT link_id FROM messages WHERE id = {message})"
)

# (name, table, event, condition or None, statement with NEW/OLD)
_TRIGGERS: list[tuple[str, str, str, str | None, str]] = [
    ("users_bump_u", "users", "UPDATE", None, _BUMP_USER.format(user="NEW.id")),
    ("avatars_bump_i", "avatars", "INSERT", None, _BUMP_USER.format(user="NEW.user_id")),
    ("avatars_bump_u", "avatars", "UPDATE", None, _BUMP_USER.format(user="NEW.user_id")),
    ("avatars_bump_d", "avatars", "DELETE", None, _BUMP_USER.format(user="OLD.user_id")),
    (
        "account_deletions_bump_i",
        "account_deletions",
        "INSERT",
        None,
        _BUMP_USER.format(user="NEW.user_id"),
    ),
    (
        "account_deletions_bump_d",
        "account_deletions",
        "DELETE",
        None,
        _BUMP_USER.format(user="OLD.user_id"),
    ),
    (
        "messages_bump_i",
        "messages",
        "INSERT",
        "NEW.reply_count > 0",
        _BUMP_LINK.format(link="NEW.link_id"),
    ),
    (
        "messages_bump_u",
        "messages",
        "UPDATE",
        "(OLD.reply_count > 0 OR NEW.reply_count > 0) AND NEW.opened = OLD.opened",
        _BUMP_LINK.format(link="NEW.link_id"),
    ),
    (
        "messages_bump_d",
        "messages",
        "DELETE",
        "OLD.reply_count > 0",
        _BUMP_LINK.format(link="OLD.link_id"),
    ),
    ("replies_bump_u", "replies", "UPDATE", None, _BUMP_MESSAGE.format(message="NEW.message_id")),
    ("answers_bump_i", "answers", "INSERT", None, _BUMP_LINK.format(link="NEW.link_id")),
    ("answers_bump_d", "answers", "DELETE", None, _BUMP_LINK.format(link="OLD.link_id")),
    ("notes_bump_i", "federation_notes", "INSERT", None, _BUMP_LINK.format(link="NEW.link_id")),
    ("notes_bump_d", "federation_notes", "DELETE", None, _BUMP_LINK.format(link="OLD.link_id")),
    ("actors_bump_i", "federation_actors", "INSERT", None, _BUMP_LINK.format(link="NEW.link_id")),
    ("actors_bump_d", "federation_actors", "DELETE", None, _BUMP_LINK.format(link="OLD.link_id")),
]

# A change of the link itself, but for the creator's read mark and the version itself.
_LINK_CHANGED = (
    "NEW.content_version = OLD.content_version"
    " AND NEW.seen_message_id IS NOT DISTINCT FROM OLD.seen_message_id"
)


def _sqlite() -> list[str]:
    made = [
        "CREATE TRIGGER links_bump_u AFTER UPDATE ON links WHEN "
        + _LINK_CHANGED.replace("IS NOT DISTINCT FROM", "IS")
        + " BEGIN "
        + _BUMP_LINK.format(link="NEW.id")
        + "; END"
    ]
    for name, table, event, condition, statement in _TRIGGERS:
        when = f" WHEN {condition}" if condition else ""
        made.append(f"CREATE TRIGGER {name} AFTER {event} ON {table}{when} BEGIN {statement}; END")
    return made


def _postgresql() -> list[str]:
    made = [
        "CREATE FUNCTION links_bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" IF {_LINK_CHANGED} THEN NEW.content_version := OLD.content_version + 1; END IF;"
        " RETURN NEW; END $$",
        "CREATE TRIGGER links_bump_u BEFORE UPDATE ON links FOR EACH ROW EXECUTE FUNCTION"
        " links_bump()",
    ]
    for name, table, event, condition, statement in _TRIGGERS:
        made.append(
            f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            f" {statement}; RETURN NULL; END $$"
        )
        when = f" WHEN ({condition})" if condition else ""
        made.append(
            f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{when}"
            f" EXECUTE FUNCTION {name}()"
        )
    return made


def upgrade() -> None:
    op.add_column(
        "links",
        sa.Column("content_version", sa.BigInteger, nullable=False, server_default="0"),
    )
    sqlite = op.get_bind().dialect.name == "sqlite"
    for statement in _sqlite() if sqlite else _postgresql():
        op.execute(statement)


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    names = ["links_bump_u"] + [name for name, *_ in _TRIGGERS]
    tables = ["links"] + [table for _, table, *_ in _TRIGGERS]
    for name, table in zip(names, tables, strict=True):
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + ("" if sqlite else f" ON {table}"))
        if not sqlite:
            op.execute(f"DROP FUNCTION IF EXISTS {name}()")
    if not sqlite:
        op.execute("DROP FUNCTION IF EXISTS links_bump()")
    with op.batch_alter_table("links") as batch:
        batch.drop_column("content_version")
