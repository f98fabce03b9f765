"""SQL for the outbox (``events``): written in the transaction of what it tells about,
read in order by the relay, and by each process's live fan-out on SQLite.

The only place events are written. A caller records them in its own transaction with
``record`` (one event) or ``record_new_messages``; a statement of another domain that
writes events about the rows it changes, in that same statement, composes the fragments
here (``INSERT_MESSAGE_EVENTS``, ``INSERT_EVENTS``, ``message_created_events``,
``notify_links``) rather than naming the table itself. The kinds: ``schemas.Kind``."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
import msgspec

from anonbox.core.database import Connection, Row, placeholders
from anonbox.outbox.schemas import Kind

# Every process LISTENs here on PostgreSQL; a payload is a hub key (``link:…``, ``session:…``).
NOTIFY_CHANNEL = "anonbox_events"

# --- writing -------------------------------------------------------------------------------

# The head of an INSERT … SELECT writing events about messages, for the statements of
# other domains that write an event per row they change, in the same statement or
# transaction (bulk deletions, moves to the filtered folder).
INSERT_MESSAGE_EVENTS = "INSERT INTO events (user_id, link_id, kind, message_id, created_at)"
# The same with the reply an event is about (``reply.created``).
INSERT_EVENTS = "INSERT INTO events (user_id, link_id, kind, message_id, reply_id, created_at)"
# An account's events, erased with the rest of it (``account``'s erasure; $1: the account).
ERASE_EVENTS = "DELETE FROM events WHERE user_id = $1"


def message_created_events(source: str, where: str = "") -> str:
    """An INSERT … SELECT writing a ``message.created`` event for each message of
    ``source``, aliased ``m`` (``messages m``, or a CTE named ``m`` returning id, link_id
    and created_at), under its link's owner, in the messages' order; ``where``: a clause
    that picks them (with its leading space)."""
    return (
        f"{INSERT_MESSAGE_EVENTS}"  # noqa: S608 - constant kinds, and the caller's clauses
        f" SELECT l.user_id, m.link_id, '{Kind.MESSAGE_CREATED}', m.id, m.created_at"
        f" FROM {source} JOIN links l ON l.id = m.link_id{where} ORDER BY m.id"
    )


def notify_links(rows: str) -> str:
    """A scalar subquery for PostgreSQL: a notification to every distinct ``link_id`` of
    ``rows`` (a CTE's name), delivered on commit, as ``notify`` sends; how many."""
    return (
        f"(SELECT count(pg_notify('{NOTIFY_CHANNEL}', 'link:' || d.link_id))"  # noqa: S608 - ours
        f" FROM (SELECT DISTINCT link_id FROM {rows}) d)"
    )


_FROM_MESSAGES = {
    "sqlite": message_created_events(
        "messages m", " WHERE m.id IN (SELECT value FROM json_each($1))"
    ),
    "postgresql": message_created_events("messages m", " WHERE m.id = ANY($1::text[])"),
}


async def record_new_messages(
    conn: Connection, message_ids: Sequence[str], link_ids: Sequence[str]
) -> None:
    """One ``message.created`` event per stored message (in the messages' transaction),
    and on PostgreSQL a notification per link, delivered when that transaction commits."""
    if not message_ids:
        return
    sql = _FROM_MESSAGES[conn.dialect]
    if conn.dialect == "sqlite":  # the ids travel as one JSON parameter, as the messages did
        await conn.execute(sql, msgspec.json.encode(list(message_ids)).decode())
    else:
        await conn.execute(sql, list(message_ids))
        await notify(conn, [f"link:{link_id}" for link_id in sorted(set(link_ids))])


async def record(
    conn: Connection,
    *,
    kind: Kind,
    link_id: str,
    message_id: str,
    reply_id: str | None,
    created_at: int,
) -> None:
    """One event about one message of ``link_id`` (in the caller's transaction)."""
    await conn.execute(
        f"{INSERT_EVENTS} SELECT user_id, id, $2, $3, $4, $5 FROM links WHERE id = $1",  # noqa: S608
        link_id,
        kind,
        message_id,
        reply_id,
        created_at,
    )
    await notify(conn, [f"link:{link_id}"])


def notifies(conn: Connection) -> bool:
    """Whether the database itself tells every instance of what ``notify`` names
    (PostgreSQL's NOTIFY, which a process LISTENs to); elsewhere each process tails the
    outbox (``fanout.TailFeed``)."""
    return conn.dialect == "postgresql"


async def notify(conn: Connection, keys: Sequence[str]) -> None:
    """Wake the live fan-out of every instance (PostgreSQL; on commit of the transaction)."""
    if notifies(conn) and keys:
        await conn.execute(
            "SELECT pg_notify($1, key) FROM unnest($2::text[]) AS key", NOTIFY_CHANNEL, list(keys)
        )


# --- the relay -----------------------------------------------------------------------------


async def take_turn(conn: Connection, lock: int) -> bool:
    """Whether this transaction has the relays' turn. PostgreSQL: whether it takes their
    advisory lock (held until it ends), or another instance's relay has it; SQLite: always,
    its single writer already takes turns."""
    if conn.dialect != "postgresql":
        return True
    turn = await conn.fetchrow("SELECT pg_try_advisory_xact_lock($1) AS ok", lock)
    return turn is not None and bool(turn["ok"])


async def any_pending(conn: Connection) -> bool:
    return await conn.fetchrow("SELECT 1 FROM events WHERE handed_at IS NULL LIMIT 1") is not None


async def pending(conn: Connection, limit: int) -> Sequence[Row]:
    """Events not yet handed to the channels, oldest first."""
    return await conn.fetch(
        "SELECT seq, user_id, link_id, kind, message_id, reply_id, created_at FROM events"
        " WHERE handed_at IS NULL ORDER BY seq LIMIT $1",
        limit,
    )


async def mark_handed(conn: Connection, seqs: Sequence[int], at: int) -> None:
    """Exactly these events (one committed meanwhile with a lower seq waits its turn)."""
    if conn.dialect == "sqlite":
        sql = "UPDATE events SET handed_at = $1 WHERE seq IN (SELECT value FROM json_each($2))"
        await conn.execute(sql, at, msgspec.json.encode(list(seqs)).decode())
    else:
        await conn.execute(
            "UPDATE events SET handed_at = $1 WHERE seq = ANY($2::bigint[])", at, list(seqs)
        )


async def purge_handed(conn: Connection, before: int) -> int:
    return await conn.execute(
        "DELETE FROM events WHERE handed_at IS NOT NULL AND handed_at < $1", before
    )


# --- the live fan-out ----------------------------------------------------------------------


async def echo(conn: asyncpg.Connection, channel: str, payload: str, *, within: float) -> None:
    """PostgreSQL: notify ``channel`` (a listener's own) on the listener's connection,
    the statement given ``within`` seconds."""
    await conn.execute("SELECT pg_notify($1, $2)", channel, payload, timeout=within)


async def last_seq(conn: Connection) -> int:
    row = await conn.fetchrow("SELECT COALESCE(MAX(seq), 0) AS seq FROM events")
    return int(row["seq"]) if row is not None else 0


async def links_since(conn: Connection, seq: int) -> Sequence[Row]:
    """Events after ``seq`` (their link), for a process tailing the outbox (SQLite)."""
    return await conn.fetch(
        "SELECT seq, link_id FROM events WHERE seq > $1 ORDER BY seq LIMIT 1000", seq
    )


# What took a message out of its link's inbox, as the live dashboard hears of it.
_REMOVALS = f"'{Kind.MESSAGE_DELETED}', '{Kind.MESSAGE_FILTERED}'"
# At most this many removals are read at a time; the stream reads on while they fill it.
REMOVALS_PER_READ = 200


async def removals_since(
    conn: Connection, *, link_id: str, after: int | None, limit: int = REMOVALS_PER_READ
) -> tuple[int, Sequence[Row]]:
    """The messages that left the link's inbox (deleted, or moved to its folder) in events
    after seq ``after``, oldest first (seq, kind, message_id); and the seq to read after
    next time. With ``after`` None, only that seq: nothing before it is news.

    On PostgreSQL a seq is taken before its transaction commits, so one committed just
    after a read may fall below it and be missed, as a message whose id is older than the
    stream's newest is (``messages.inbox.since``): a live page is a convenience, a reload
    is the truth."""
    if after is None:
        return await last_seq(conn), []
    rows = await conn.fetch(
        "SELECT t.top, e.seq, e.kind, e.message_id"  # noqa: S608 - constant kinds
        " FROM (SELECT COALESCE(MAX(seq), 0) AS top FROM events) t"
        " LEFT JOIN events e ON e.seq > $1 AND e.seq <= t.top AND e.link_id = $2"
        f" AND e.kind IN ({_REMOVALS})"
        " ORDER BY e.seq LIMIT $3",
        after,
        link_id,
        limit,
    )
    found = [row for row in rows if row["seq"] is not None]
    if len(found) == limit:  # more to come: read on from the last one
        return int(found[-1]["seq"]), found
    return max(after, int(rows[0]["top"])) if rows else after, found


async def sessions_ended_since(conn: Connection, since: int) -> Sequence[Row]:
    return await conn.fetch("SELECT id FROM sessions WHERE revoked_at >= $1", since)


async def overlays_changed_since(conn: Connection, since: int) -> Sequence[Row]:
    """Stream overlays changed at ``since`` or later (their creator, and when), oldest
    first, for a process tailing the database (SQLite): elsewhere the change is a
    notification (``stream.service``)."""
    return await conn.fetch(
        "SELECT user_id, updated_at FROM stream_overlays WHERE updated_at >= $1"
        " ORDER BY updated_at",
        since,
    )


# --- what an event names, for the channels ------------------------------------------------


async def message_texts(
    conn: Connection, message_ids: Sequence[str], reply_ids: Sequence[str]
) -> dict[str, str]:
    """The current text of these messages and replies, by id (gone ones are absent): what
    a channel shows of the messages its events name, as the creator's own inbox does."""
    texts: dict[str, str] = {}
    for table, ids in (("messages", sorted(set(message_ids))), ("replies", sorted(set(reply_ids)))):
        if ids:
            rows = await conn.fetch(
                f"SELECT id, content FROM {table} WHERE id IN ({placeholders(1, len(ids))})",  # noqa: S608 - placeholders only
                *ids,
            )
            texts.update((row["id"], row["content"]) for row in rows)
    return texts
