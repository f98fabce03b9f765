"""SQL for the outbox (``events``): written in the transaction of what it tells about,
read in order by the relay, and by each process's live fan-out on SQLite."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from anonbox.core.database import Connection, Row, insert_many, placeholders

# Every process LISTENs here on PostgreSQL; a payload is a hub key (``link:…``, ``session:…``).
NOTIFY_CHANNEL = "anonbox_events"

MESSAGE_CREATED = "message.created"
REPLY_CREATED = "reply.created"
MESSAGE_DELETED = "message.deleted"
MESSAGE_REPORTED = "message.reported"  # someone reported one of the creator's messages
# A waiting message moved to its link's filtered folder by a muted word or a block added
# later. For the live dashboard only: no channel takes it (not in ``schemas.EVENT_KINDS``).
MESSAGE_FILTERED = "message.filtered"
# The head of an INSERT … SELECT writing events about messages, for the statements of
# other domains that write an event per row they change, in the same statement or
# transaction (bulk deletions, moves to the filtered folder).
INSERT_MESSAGE_EVENTS = "INSERT INTO events (user_id, link_id, kind, message_id, created_at)"
# What took a message out of its link's inbox, as the live dashboard hears of it.
_REMOVALS = f"'{MESSAGE_DELETED}', '{MESSAGE_FILTERED}'"

_FROM_MESSAGES = {
    "sqlite": (
        "INSERT INTO events (user_id, link_id, kind, message_id, created_at)"
        " SELECT l.user_id, m.link_id, 'message.created', m.id, m.created_at"
        " FROM messages m JOIN links l ON l.id = m.link_id"
        " WHERE m.id IN (SELECT value FROM json_each($1)) ORDER BY m.id"
    ),
    "postgresql": (
        "INSERT INTO events (user_id, link_id, kind, message_id, created_at)"
        " SELECT l.user_id, m.link_id, 'message.created', m.id, m.created_at"
        " FROM messages m JOIN links l ON l.id = m.link_id"
        " WHERE m.id = ANY($1::text[]) ORDER BY m.id"
    ),
}


async def record_new_messages(
    conn: Connection, dialect: str, message_ids: Sequence[str], link_ids: Sequence[str]
) -> None:
    """One ``message.created`` event per stored message (in the messages' transaction),
    and on PostgreSQL a notification per link, delivered when that transaction commits."""
    if not message_ids:
        return
    if dialect == "sqlite":  # the ids travel as one JSON parameter, as the messages did
        await conn.execute(_FROM_MESSAGES[dialect], msgspec.json.encode(list(message_ids)).decode())
    else:
        await conn.execute(_FROM_MESSAGES[dialect], list(message_ids))
        await notify(conn, dialect, [f"link:{link_id}" for link_id in sorted(set(link_ids))])


async def record(
    conn: Connection,
    dialect: str,
    *,
    kind: str,
    link_id: str,
    message_id: str,
    reply_id: str | None,
    created_at: int,
) -> None:
    """One event about one message of ``link_id`` (in the caller's transaction)."""
    await conn.execute(
        "INSERT INTO events (user_id, link_id, kind, message_id, reply_id, created_at)"
        " SELECT user_id, id, $2, $3, $4, $5 FROM links WHERE id = $1",
        link_id,
        kind,
        message_id,
        reply_id,
        created_at,
    )
    await notify(conn, dialect, [f"link:{link_id}"])


async def notify(conn: Connection, dialect: str, keys: Sequence[str]) -> None:
    """Wake the live fan-out of every instance (PostgreSQL; on commit of the transaction)."""
    if dialect == "postgresql" and keys:
        await conn.execute(
            "SELECT pg_notify($1, key) FROM unnest($2::text[]) AS key", NOTIFY_CHANNEL, list(keys)
        )


async def any_pending(conn: Connection) -> bool:
    return await conn.fetchrow("SELECT 1 FROM events WHERE handed_at IS NULL LIMIT 1") is not None


async def pending(conn: Connection, limit: int) -> Sequence[Row]:
    """Events not yet handed to the channels, oldest first."""
    return await conn.fetch(
        "SELECT seq, user_id, link_id, kind, message_id, reply_id, created_at FROM events"
        " WHERE handed_at IS NULL ORDER BY seq LIMIT $1",
        limit,
    )


async def mark_handed(conn: Connection, dialect: str, seqs: Sequence[int], at: int) -> None:
    """Exactly these events (one committed meanwhile with a lower seq waits its turn)."""
    if dialect == "sqlite":
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


async def last_seq(conn: Connection) -> int:
    row = await conn.fetchrow("SELECT COALESCE(MAX(seq), 0) AS seq FROM events")
    return int(row["seq"]) if row is not None else 0


async def links_since(conn: Connection, seq: int) -> Sequence[Row]:
    """Events after ``seq`` (their link), for a process tailing the outbox (SQLite)."""
    return await conn.fetch(
        "SELECT seq, link_id FROM events WHERE seq > $1 ORDER BY seq LIMIT 1000", seq
    )


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


# --- webhooks ------------------------------------------------------------------------------

_ENDPOINT = "SELECT id, url, events, disabled_reason, created_at FROM webhook_endpoints"


async def insert_endpoint(
    conn: Connection,
    *,
    endpoint_id: str,
    user_id: str,
    url: str,
    secret: str,
    events: str,
    created_at: int,
) -> None:
    await conn.execute(
        "INSERT INTO webhook_endpoints (id, user_id, url, secret, events, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        endpoint_id,
        user_id,
        url,
        secret,
        events,
        created_at,
    )


async def endpoints_of(conn: Connection, user_id: str) -> Sequence[Row]:
    return await conn.fetch(_ENDPOINT + " WHERE user_id = $1 ORDER BY id", user_id)


async def endpoint_of(conn: Connection, *, endpoint_id: str, user_id: str) -> Row | None:
    return await conn.fetchrow(_ENDPOINT + " WHERE id = $1 AND user_id = $2", endpoint_id, user_id)


async def delete_endpoint(conn: Connection, *, endpoint_id: str, user_id: str) -> bool:
    deleted = await conn.execute(
        "DELETE FROM webhook_endpoints WHERE id = $1 AND user_id = $2", endpoint_id, user_id
    )
    return deleted == 1


async def enabled_endpoints(conn: Connection, user_ids: Sequence[str]) -> Sequence[Row]:
    """The enabled endpoints of these creators (for the relay's hand-over)."""
    users = sorted(set(user_ids))
    if not users:
        return []
    return await conn.fetch(
        "SELECT id, user_id, events FROM webhook_endpoints"  # noqa: S608 - placeholders only
        f" WHERE user_id IN ({placeholders(1, len(users))}) AND disabled_reason IS NULL"
        " ORDER BY id",
        *users,
    )


async def message_texts(
    conn: Connection, message_ids: Sequence[str], reply_ids: Sequence[str]
) -> dict[str, str]:
    """The current text of these messages and replies, by id (gone ones are absent)."""
    texts: dict[str, str] = {}
    for table, ids in (("messages", sorted(set(message_ids))), ("replies", sorted(set(reply_ids)))):
        if ids:
            rows = await conn.fetch(
                f"SELECT id, content FROM {table} WHERE id IN ({placeholders(1, len(ids))})",  # noqa: S608 - placeholders only
                *ids,
            )
            texts.update((row["id"], row["content"]) for row in rows)
    return texts


_DELIVERY = ("id", "endpoint_id", "kind", "payload", "created_at", "status", "attempts")
_DELIVERY_COLUMNS = (*_DELIVERY, "next_attempt_at")


def delivery_row(
    *, delivery_id: str, endpoint_id: str, kind: str, payload: str, at: int
) -> tuple[object, ...]:
    """A pending delivery, due now, for ``insert_deliveries``."""
    return (delivery_id, endpoint_id, kind, payload, at, "pending", 0, at)


async def insert_deliveries(conn: Connection, rows: Sequence[tuple[object, ...]]) -> None:
    await insert_many(conn, "webhook_deliveries", _DELIVERY_COLUMNS, rows)


async def due_deliveries(
    conn: Connection, now: int, limit: int, busy: Sequence[str] = ()
) -> Sequence[Row]:
    """Pending deliveries whose time has come, each the oldest pending of its endpoint
    (an endpoint receives its events in order), of creators not in ``busy``."""
    skip = f" AND e.user_id NOT IN ({placeholders(3, len(busy))})" if busy else ""
    return await conn.fetch(
        "SELECT d.id, d.endpoint_id, d.kind, d.payload, d.attempts, d.created_at,"  # noqa: S608 - placeholders only
        " d.next_attempt_at, e.url, e.secret, e.user_id"
        " FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id"
        " WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND e.disabled_reason IS NULL"
        f"{skip} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p"
        " WHERE p.endpoint_id = d.endpoint_id AND p.status = 'pending' AND p.id < d.id)"
        " ORDER BY d.id LIMIT $2",
        now,
        limit,
        *busy,
    )


async def claim_delivery(conn: Connection, *, delivery_id: str, seen_at: int, until: int) -> bool:
    """Take a delivery for one attempt (until ``until``); False if another instance has."""
    claimed = await conn.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = $3"
        " WHERE id = $1 AND status = 'pending' AND next_attempt_at = $2",
        delivery_id,
        seen_at,
        until,
    )
    return claimed == 1


async def finish_attempt(
    conn: Connection,
    *,
    delivery_id: str,
    status: str,
    attempts: int,
    next_attempt_at: int,
    status_code: int | None,
    error: str | None,
    finished_at: int | None,
) -> None:
    await conn.execute(
        "UPDATE webhook_deliveries SET status = $2, attempts = $3, next_attempt_at = $4,"
        " last_status_code = $5, last_error = $6, finished_at = $7 WHERE id = $1",
        delivery_id,
        status,
        attempts,
        next_attempt_at,
        status_code,
        error,
        finished_at,
    )


async def disable_endpoint(conn: Connection, *, endpoint_id: str, reason: str) -> None:
    await conn.execute(
        "UPDATE webhook_endpoints SET disabled_reason = $2 WHERE id = $1", endpoint_id, reason
    )


async def deliveries_of(conn: Connection, *, endpoint_id: str, limit: int) -> Sequence[Row]:
    return await conn.fetch(
        "SELECT id, kind, status, attempts, last_status_code, last_error, created_at,"
        " finished_at FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2",
        endpoint_id,
        limit,
    )
