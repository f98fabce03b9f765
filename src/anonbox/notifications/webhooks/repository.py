"""SQL for webhooks: a creator's endpoints (``webhook_endpoints``), and the deliveries
made to them (``webhook_deliveries``)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from anonbox.core.database import Connection, Row, placeholders
from anonbox.notifications import repository as deliveries

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


# A pending delivery, due now: (id, endpoint id, kind, payload, created at).
NewDelivery = tuple[str, str, str, str, int]

# All of a hand-over's deliveries in one statement with one parameter, whatever their
# number: the statement is parsed once and kept, and no list of placeholders is built.
_INSERT_DELIVERIES = {
    "sqlite": (
        "INSERT INTO webhook_deliveries"
        " (id, endpoint_id, kind, payload, created_at, status, attempts, next_attempt_at)"
        " SELECT r.value ->> 0, r.value ->> 1, r.value ->> 2, r.value ->> 3, r.value ->> 4,"
        " 'pending', 0, r.value ->> 4 FROM json_each($1) r"
    ),
    "postgresql": (
        "INSERT INTO webhook_deliveries"
        " (id, endpoint_id, kind, payload, created_at, status, attempts, next_attempt_at)"
        " SELECT r.id, r.endpoint_id, r.kind, r.payload, r.at, 'pending', 0, r.at"
        " FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])"
        " AS r(id, endpoint_id, kind, payload, at)"
    ),
}


async def insert_deliveries(conn: Connection, rows: Sequence[NewDelivery]) -> None:
    if not rows:
        return
    if conn.dialect == "sqlite":
        await conn.execute(_INSERT_DELIVERIES["sqlite"], msgspec.json.encode(rows).decode())
    else:
        columns = [list(column) for column in zip(*rows, strict=True)]
        await conn.execute(_INSERT_DELIVERIES["postgresql"], *columns)


async def due_deliveries(
    conn: Connection, now: int, limit: int, busy: Sequence[str] = ()
) -> Sequence[Row]:
    """Pending deliveries whose time has come, each the oldest pending of its endpoint
    (an endpoint receives its events in order), of creators not in ``busy``.

    Found endpoint by endpoint: each enabled endpoint's oldest pending delivery is one
    probe of ``ix_webhook_deliveries_pending``. Only those heads can be attempted, and an
    endpoint that never answers keeps every later delivery pending behind its head: a
    query over the pending deliveries themselves grew with that pile (200 ms at 180,000
    rows) and ran several times a second."""
    skip = f" AND e.user_id NOT IN ({placeholders(3, len(busy))})" if busy else ""
    return await conn.fetch(
        "SELECT d.id, d.endpoint_id, d.kind, d.payload, d.attempts, d.created_at,"  # noqa: S608 - placeholders only
        " d.next_attempt_at, e.url, e.secret, e.user_id"
        " FROM webhook_endpoints e JOIN webhook_deliveries d ON d.id = (SELECT p.id"
        " FROM webhook_deliveries p WHERE p.endpoint_id = e.id AND p.status = 'pending'"
        " ORDER BY p.id LIMIT 1)"
        f" WHERE e.disabled_reason IS NULL{skip} AND d.next_attempt_at <= $1"
        " ORDER BY d.id LIMIT $2",
        now,
        limit,
        *busy,
    )


async def claim_delivery(conn: Connection, *, delivery_id: str, seen_at: int, until: int) -> bool:
    """Take a delivery for one attempt (until ``until``); False if another instance has."""
    return await deliveries.claim_delivery(
        conn, "webhook_deliveries", delivery_id=delivery_id, seen_at=seen_at, until=until
    )


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
