"""SQL of the inbox search: the messages of one link whose text, or one of whose replies,
contains the query, newest first, keyset-paged like the inbox.

Both databases index trigrams (migration 0015): FTS5 ``messages_search`` and
``replies_search`` on SQLite, ``pg_trgm`` GIN indexes on PostgreSQL. A page is found in
two steps, each cheap where the other is not:

1. The walk: the link's newest ``WINDOW`` messages below the cursor, walked on
   ``ix_messages_link_id_id`` and tested one by one (then, if that found some but not a
   page, 20 times as many). A query found in many messages fills its page here, without
   reading the (large) set of all its matches.
2. Only when the walk did not fill the page and the link goes on: the index, for what
   lies below the walk, newest first. A query the walk found so seldom has few matches,
   so this is cheap too. A query of one or two characters has no trigram, so it walks
   the rest of the link instead.

Both steps test the same thing (case-insensitive substring), so which step finds a
message never changes whether it is found. SQLite folds ASCII letters only (its
``lower()``); PostgreSQL folds every letter (``ILIKE``).
"""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Database, Row
from anonbox.messages.inbox.schemas import InboxFilter

# Messages tested one by one before the index is asked. The first walk costs about
# 0.2 ms; a second, longer one only follows when the first found some but not a page's
# worth (a text in a few percent of messages: cheaper walked than gathered from the index).
WINDOW = 200
WALKS = (WINDOW, 20 * WINDOW)
# Shorter queries have no trigram: no index can narrow them down.
TRIGRAM = 3
# The cursor of a first page: a ULID's first character is at most "7".
ABOVE_EVERY_ID = "z" * 26

# ``opened``: whether the message is unread (``messages.inbox.service.message_of``).
_COLUMNS = "id, content, like_by_creator, created_at, reply_count, follow_up_of, opened"
_M_COLUMNS = (
    "m.id, m.content, m.like_by_creator, m.created_at, m.reply_count, m.follow_up_of, m.opened"
)

_FILTERS = {
    InboxFilter.ALL: "",
    InboxFilter.UNANSWERED: " AND {t}reply_count = 0",
    InboxFilter.ANSWERED: " AND {t}reply_count > 0",
    InboxFilter.LIKED: " AND {t}like_by_creator",
    InboxFilter.UNREAD: " AND {t}id > {seen} AND NOT {t}opened",
}


def _ascii_lower(text: str) -> str:
    """What SQLite's built-in ``lower()`` does: ASCII letters only."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _phrase(text: str) -> str:
    """An FTS5 string: every character literal, a double quote doubled."""
    return '"' + text.replace('"', '""') + '"'


def _contains(dialect: str, column: str) -> str:
    """Whether ``column`` contains the query (bound as $2, as ``_needle`` gives it)."""
    if dialect == "sqlite":
        return f"instr(lower({column}), $2) > 0"
    return f"{column} ILIKE $2"


def _needle(dialect: str, text: str) -> str:
    return _ascii_lower(text) if dialect == "sqlite" else _like_pattern(text)


def _walked(which: InboxFilter, below: str, seen: str) -> str:
    """The link's messages below the id bound as ``below``, as the filter keeps them."""
    return f"FROM messages WHERE link_id = $1 AND id < {below}" + _FILTERS[which].format(
        t="", seen=seen
    )


def _hit(dialect: str, table: str) -> str:
    """A message of ``table`` matches: its text or one of its replies' contains the query."""
    return (
        f"({_contains(dialect, f'{table}.content')} OR ({table}.reply_count > 0 AND EXISTS"  # noqa: S608
        f" (SELECT 1 FROM replies r WHERE r.message_id = {table}.id"
        f" AND {_contains(dialect, 'r.content')})))"
    )


async def matching_messages(
    db: Database,
    *,
    link_id: str,
    text: str,
    which: InboxFilter,
    seen: str,
    before: str | None,
    limit: int,
) -> list[Row]:
    """Up to ``limit`` messages of the link matching ``text``, newest first, below
    ``before``; ``seen`` is the link's seen mark (for the unread filter)."""
    dialect = db.dialect
    needle = _needle(dialect, text)
    # The seen mark is the last parameter, and only for the unread filter: PostgreSQL wants
    # every parameter it is given to appear in the statement.
    extra = [seen] if which is InboxFilter.UNREAD else []
    # The matches among the next $4 messages below $3, newest first, and only the $5
    # wanted: SQLite stops reading once it has them.
    hits = (
        f"SELECT * FROM (SELECT {_COLUMNS} {_walked(which, '$3', '$6')}"  # noqa: S608
        f" ORDER BY id DESC LIMIT $4) w WHERE {_hit(dialect, 'w')} ORDER BY w.id DESC LIMIT $5"
    )
    # When they are too few: how far the walk went, and whether the link ended within it.
    extent = (
        "SELECT count(*) AS walked, min(id) AS last_id FROM"  # noqa: S608
        f" (SELECT id {_walked(which, '$2', '$4')} ORDER BY id DESC LIMIT $3) w"
    )
    found: list[Row] = []
    below = before or ABOVE_EVERY_ID
    for size in WALKS:
        found += await db.fetch(hits, link_id, needle, below, size, limit - len(found), *extra)
        if len(found) >= limit:
            return found
        walk = await db.fetchrow(extent, link_id, below, size, *extra)
        if walk is None or walk["walked"] < size:
            return found
        below = str(walk["last_id"])
        if not found:  # none among the newest: a rare text, for the index
            break
    rest = await _below_window(
        db,
        link_id=link_id,
        text=text,
        needle=needle,
        which=which,
        extra=extra,
        below=below,
        limit=limit - len(found),
    )
    return found + list(rest)


async def _below_window(
    db: Database,
    *,
    link_id: str,
    text: str,
    needle: str,
    which: InboxFilter,
    extra: list[str],
    below: str,
    limit: int,
) -> Sequence[Row]:
    dialect = db.dialect
    if len(text) < TRIGRAM:  # no index helps: walk the rest of the link
        condition = " AND id < $3" + _FILTERS[which].format(t="", seen="$5")
        return await db.fetch(
            f"SELECT {_COLUMNS} FROM messages m WHERE link_id = $1{condition}"  # noqa: S608 - fixed fragments only
            f" AND {_hit(dialect, 'm')} ORDER BY id DESC LIMIT $4",
            link_id,
            needle,
            below,
            limit,
            *extra,
        )
    condition = " AND m.id < $3" + _FILTERS[which].format(t="m.", seen="$5")
    if dialect == "sqlite":
        return await _sqlite_index(db, link_id, text, below, limit, condition, extra)
    return await _postgres_index(db, link_id, needle, below, limit, condition, extra)


async def _sqlite_index(
    conn: Connection,
    link_id: str,
    text: str,
    below: str,
    limit: int,
    condition: str,
    extra: list[str],
) -> Sequence[Row]:
    # The index holds every link's messages; the link is checked on the rows it names.
    # (Asking the index for the link's trigrams too was slower: at 100,000 messages in the
    # link, 7 ms against 0.1 ms for a rare text.)
    # CROSS JOIN keeps the index's matches the outer loop: never a walk of the whole link.
    return await conn.fetch(
        f"SELECT {_COLUMNS} FROM ("  # noqa: S608 - fixed fragments only
        f" SELECT * FROM (SELECT {_M_COLUMNS} FROM messages_search($2) s"
        " CROSS JOIN messages m ON m.rowid = s.rowid"
        f" WHERE m.link_id = $1{condition} ORDER BY m.id DESC LIMIT $4)"
        " UNION"
        f" SELECT * FROM (SELECT DISTINCT {_M_COLUMNS} FROM replies_search($2) s"
        " CROSS JOIN replies r ON r.rowid = s.rowid CROSS JOIN messages m ON m.id = r.message_id"
        f" WHERE m.link_id = $1{condition} ORDER BY m.id DESC LIMIT $4)"
        ") ORDER BY id DESC LIMIT $4",
        link_id,
        f"content : {_phrase(_ascii_lower(text))}",
        below,
        limit,
        *extra,
    )


async def _postgres_index(
    db: Database,
    link_id: str,
    needle: str,
    below: str,
    limit: int,
    condition: str,
    extra: list[str],
) -> Sequence[Row]:
    sql = (
        f"(SELECT {_M_COLUMNS} FROM messages m WHERE m.link_id = $1{condition}"  # noqa: S608 - fixed fragments only
        " AND m.content ILIKE $2 ORDER BY m.id DESC LIMIT $4)"
        " UNION"
        f" (SELECT DISTINCT {_M_COLUMNS} FROM replies r JOIN messages m ON m.id = r.message_id"
        f" WHERE r.content ILIKE $2 AND m.link_id = $1{condition} ORDER BY m.id DESC LIMIT $4)"
        " ORDER BY id DESC LIMIT $4"
    )
    async with db.transaction() as tx:
        # Whether the index or the link's own order is cheaper depends on the query's
        # text: plan with it every time, never with a generic plan cached for another.
        await tx.execute("SET LOCAL plan_cache_mode = force_custom_plan")
        return await tx.fetch(sql, link_id, needle, below, limit, *extra)
