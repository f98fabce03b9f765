"""Full-text search over a creator's messages and replies.

A creator searches for a piece of text as they remember it: in Japanese, Korean or
Indonesian as often as in English. Words are not enough (Japanese and Chinese are written
without spaces, so "a word" would be a whole sentence), so both databases index trigrams
(every run of three characters) and a search finds the text as a substring.

SQLite: two FTS5 tables with the ``trigram`` tokenizer, ``messages_search`` and
``replies_search``, external-content: they hold only the index,
keyed by the implicit rowid of ``messages`` and ``replies``, never a second copy of the
text. The content comes through views that lower-case it as SQLite's ``lower()`` does
(ASCII letters), and the tokenizer is case-sensitive: an index match is then exactly
``instr(lower(content), lower(q)) > 0``, the test the search also runs row by row. Triggers
keep the index in step with every insert, delete (cascades included) and change of text,
so no code that writes messages or replies changes. A rowid the index names is only
stable while the table is not rebuilt: after a VACUUM, or a migration that recreates
``messages`` or ``replies`` (batch mode), run ``INSERT INTO messages_search(messages_search)
VALUES ('rebuild')`` (and the same for ``replies_search``) and recreate the triggers.

PostgreSQL: ``pg_trgm`` GIN indexes on ``messages.content`` and ``replies.content``, used
by ``ILIKE '%q%'`` (case-insensitive for every letter). Not a ``tsvector``: the 'simple'
configuration splits on spaces and punctuation, so it cannot find a Japanese substring,
and two indexes per row would cost the anonymous write twice.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_SQLITE_UP = [
    "CREATE VIEW messages_search_source AS"
    " SELECT rowid AS doc, lower(content) AS content FROM messages",
    "CREATE VIRTUAL TABLE messages_search USING fts5(content,"
    " content='messages_search_source', content_rowid='doc',"
    " tokenize='trigram case_sensitive 1')",
    "CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN"
    " INSERT INTO messages_search (rowid, content) VALUES (new.rowid, lower(new.content)); END",
    "CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN"
    " INSERT INTO messages_search (messages_search, rowid, content)"
    " VALUES ('delete', old.rowid, lower(old.content)); END",
    "CREATE TRIGGER messages_search_update AFTER UPDATE OF content ON messages BEGIN"
    " INSERT INTO messages_search (messages_search, rowid, content)"
    " VALUES ('delete', old.rowid, lower(old.content));"
    " INSERT INTO messages_search (rowid, content) VALUES (new.rowid, lower(new.content)); END",
    "INSERT INTO messages_search (messages_search) VALUES ('rebuild')",
    "CREATE VIEW replies_search_source AS"
    " SELECT rowid AS doc, lower(content) AS content FROM replies",
    "CREATE VIRTUAL TABLE replies_search USING fts5(content,"
    " content='replies_search_source', content_rowid='doc',"
    " tokenize='trigram case_sensitive 1')",
    "CREATE TRIGGER replies_search_insert AFTER INSERT ON replies BEGIN"
    " INSERT INTO replies_search (rowid, content) VALUES (new.rowid, lower(new.content)); END",
    "CREATE TRIGGER replies_search_delete AFTER DELETE ON replies BEGIN"
    " INSERT INTO replies_search (replies_search, rowid, content)"
    " VALUES ('delete', old.rowid, lower(old.content)); END",
    "CREATE TRIGGER replies_search_update AFTER UPDATE OF content ON replies BEGIN"
    " INSERT INTO replies_search (replies_search, rowid, content)"
    " VALUES ('delete', old.rowid, lower(old.content));"
    " INSERT INTO replies_search (rowid, content) VALUES (new.rowid, lower(new.content)); END",
    "INSERT INTO replies_search (replies_search) VALUES ('rebuild')",
]

_SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS replies_search_update",
    "DROP TRIGGER IF EXISTS replies_search_delete",
    "DROP TRIGGER IF EXISTS replies_search_insert",
    "DROP TABLE IF EXISTS replies_search",
    "DROP VIEW IF EXISTS replies_search_source",
    "DROP TRIGGER IF EXISTS messages_search_update",
    "DROP TRIGGER IF EXISTS messages_search_delete",
    "DROP TRIGGER IF EXISTS messages_search_insert",
    "DROP TABLE IF EXISTS messages_search",
    "DROP VIEW IF EXISTS messages_search_source",
]

# pg_trgm is a trusted extension (PostgreSQL 13+): the database's owner may create it.
# Building the indexes reads every existing row: that is the backfill.
_POSTGRESQL_UP = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX ix_messages_content_trgm ON messages USING gin (content gin_trgm_ops)",
    "CREATE INDEX ix_replies_content_trgm ON replies USING gin (content gin_trgm_ops)",
]

# The extension stays: other objects may have come to use it.
_POSTGRESQL_DOWN = [
    "DROP INDEX IF EXISTS ix_replies_content_trgm",
    "DROP INDEX IF EXISTS ix_messages_content_trgm",
]


def upgrade() -> None:
    for statement in _SQLITE_UP if op.get_bind().dialect.name == "sqlite" else _POSTGRESQL_UP:
        op.execute(statement)


def downgrade() -> None:
    for statement in _SQLITE_DOWN if op.get_bind().dialect.name == "sqlite" else _POSTGRESQL_DOWN:
        op.execute(statement)
