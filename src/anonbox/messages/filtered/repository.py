"""SQL for the filtered folder (``filtered_messages``): messages caught by muted words,
kept out of ``messages`` so that nothing that reads the inbox sees them.

A message moves between the two tables under its own id. On PostgreSQL a move is one
statement (``DELETE … RETURNING`` feeding the ``INSERT``), so a reply committed meanwhile
cannot leave a copy in both; on SQLite the writer is single, and the two statements run
in the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from anonbox.core.database import Connection, Row
from anonbox.outbox import repository as events
from anonbox.outbox.schemas import Kind

_COLUMNS = (
    "id, link_id, content, created_at, sender_epoch, sender_hash, sender_network_hash, follow_up_of"
)
_EVENTS = events.INSERT_MESSAGE_EVENTS


async def _move_out(conn: Connection, where: str, args: Sequence[object]) -> int:
    """Move the unanswered messages matching ``where`` (about ``messages``, with ``$2``…
    for ``args``; ``$1`` is the time) into the folder, each with a ``message.filtered``
    event so that an open dashboard drops it (no channel takes that kind); how many
    moved."""
    if conn.dialect == "postgresql":
        row = await conn.fetchrow(
            f"WITH moved AS (DELETE FROM messages WHERE reply_count = 0 AND ({where})"  # noqa: S608
            f" RETURNING {_COLUMNS}),"
            f" kept AS (INSERT INTO filtered_messages ({_COLUMNS}, filtered_at)"
            f" SELECT {_COLUMNS}, CAST($1 AS BIGINT) FROM moved RETURNING id, link_id),"
            f" told AS ({_EVENTS} SELECT l.user_id, k.link_id, '{Kind.MESSAGE_FILTERED}',"
            " k.id, CAST($1 AS BIGINT) FROM kept k JOIN links l ON l.id = k.link_id ORDER BY k.id)"
            f" SELECT count(*) AS n, {events.notify_links('kept')} AS notified FROM kept",
            *args,
        )
        return 0 if row is None else int(row["n"])
    await conn.execute(
        f"INSERT INTO filtered_messages ({_COLUMNS}, filtered_at)"  # noqa: S608
        f" SELECT {_COLUMNS}, CAST($1 AS BIGINT) FROM messages"
        f" WHERE reply_count = 0 AND ({where})",
        *args,
    )
    # Before the rows go (SQLite's live fan-out tails these events: no notification).
    await conn.execute(
        f"{_EVENTS} SELECT (SELECT l.user_id FROM links l WHERE l.id = messages.link_id),"  # noqa: S608
        f" link_id, '{Kind.MESSAGE_FILTERED}', id, CAST($1 AS BIGINT) FROM messages"
        f" WHERE reply_count = 0 AND ({where}) ORDER BY id",
        *args,
    )
    # The time is not needed here, but SQLite expects as many parameters as the highest
    # number named: $1 is named anyway, so the same args fit.
    return await conn.execute(
        f"DELETE FROM messages WHERE reply_count = 0 AND ({where}) AND $1 IS NOT NULL",  # noqa: S608
        *args,
    )


async def move_ids(conn: Connection, *, ids: Sequence[str], now: int) -> int:
    """Move these messages (when still unanswered) into the folder."""
    if not ids:
        return 0
    if conn.dialect == "sqlite":
        return await _move_out(
            conn,
            "id IN (SELECT value FROM json_each($2))",
            [now, msgspec.json.encode(list(ids)).decode()],
        )
    return await _move_out(conn, "id = ANY($2::text[])", [now, list(ids)])


async def unanswered_batch(
    conn: Connection, *, owner_id: str | None, before: str | None, limit: int
) -> Sequence[Row]:
    """Unanswered messages (id, content), newest first, from just before ``before``: of
    ``owner_id``'s links, or of every link."""
    where = ["m.reply_count = 0"]
    args: list[object] = [limit]
    if owner_id is not None:
        args.append(owner_id)
        where.append(f"m.link_id IN (SELECT id FROM links WHERE user_id = ${len(args)})")  # noqa: S608
    if before is not None:
        args.append(before)
        where.append(f"m.id < ${len(args)}")
    return await conn.fetch(
        "SELECT m.id, m.content FROM messages m WHERE "  # noqa: S608 - constant clauses
        + " AND ".join(where)
        + " ORDER BY m.id DESC LIMIT $1",
        *args,
    )


_PAGE = (
    "SELECT id, content, created_at, follow_up_of FROM filtered_messages"
    " WHERE link_id = $1{before} ORDER BY id DESC LIMIT $2"
)


async def page(conn: Connection, *, link_id: str, before: str | None, limit: int) -> Sequence[Row]:
    """Newest first, from just before the cursor id (the inbox's paging)."""
    if before is None:
        return await conn.fetch(_PAGE.format(before=""), link_id, limit)
    return await conn.fetch(_PAGE.format(before=" AND id < $3"), link_id, limit, before)


async def count(conn: Connection, *, link_id: str) -> int:
    row = await conn.fetchrow(
        "SELECT count(*) AS n FROM filtered_messages WHERE link_id = $1", link_id
    )
    return 0 if row is None else int(row["n"])


async def restore(conn: Connection, *, link_id: str, message_id: str) -> bool:
    """Move one message from the folder back to the inbox, with its ``message.created``
    event (in the caller's transaction); False when it is not in this link's folder."""
    back = (
        "INSERT INTO messages (id, link_id, content, created_at, sender_epoch, sender_hash,"
        " sender_network_hash, follow_up_of)"
    )
    if conn.dialect == "postgresql":
        row = await conn.fetchrow(
            f"WITH r AS (DELETE FROM filtered_messages WHERE id = $1 AND link_id = $2"  # noqa: S608
            f" RETURNING {_COLUMNS}), i AS ({back} SELECT {_COLUMNS} FROM r RETURNING id)"
            " SELECT count(*) AS n FROM i",
            message_id,
            link_id,
        )
        moved = 0 if row is None else int(row["n"])
    else:
        await conn.execute(
            f"{back} SELECT {_COLUMNS} FROM filtered_messages"  # noqa: S608 - constant columns
            " WHERE id = $1 AND link_id = $2",
            message_id,
            link_id,
        )
        moved = await conn.execute(
            "DELETE FROM filtered_messages WHERE id = $1 AND link_id = $2", message_id, link_id
        )
    if moved:
        await events.record_new_messages(conn, [message_id], [link_id])
    return moved == 1


async def empty(conn: Connection, *, link_id: str) -> int:
    return await conn.execute("DELETE FROM filtered_messages WHERE link_id = $1", link_id)


async def purge(conn: Connection, *, filtered_before: int) -> int:
    return await conn.execute(
        "DELETE FROM filtered_messages WHERE filtered_at <= $1", filtered_before
    )


async def mark_follow_up(conn: Connection, *, message_id: str, original_id: str) -> None:
    await conn.execute(
        "UPDATE filtered_messages SET follow_up_of = $2 WHERE id = $1", message_id, original_id
    )


async def is_filtered(conn: Connection, *, message_id: str) -> bool:
    return (
        await conn.fetchrow("SELECT 1 FROM filtered_messages WHERE id = $1", message_id) is not None
    )


async def of_user(
    conn: Connection, *, user_id: str, after: str | None, limit: int
) -> Sequence[Row]:
    """A creator's filtered messages, oldest first from just after ``after`` (the export)."""
    sql = (
        "SELECT f.id, f.link_id, f.content, f.created_at, f.filtered_at FROM filtered_messages f"
        " JOIN links l ON l.id = f.link_id WHERE l.user_id = $1{after} ORDER BY f.id LIMIT $2"
    )
    if after is None:
        return await conn.fetch(sql.format(after=""), user_id, limit)
    return await conn.fetch(sql.format(after=" AND f.id > $3"), user_id, limit, after)
