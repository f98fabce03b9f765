"""SQL for Web Push: the VAPID key pair, device subscriptions, and pending deliveries."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row, insert_many, placeholders

_SUBSCRIPTION = "SELECT id, endpoint, preview, created_at FROM push_subscriptions"


async def vapid_keys(conn: Connection) -> Row | None:
    return await conn.fetchrow("SELECT private_key, public_key FROM push_vapid_keys WHERE id = 1")


async def offer_vapid_keys(conn: Connection, *, private_key: str, public_key: str, at: int) -> None:
    """Keep this pair unless an instance has kept one already (the first one wins)."""
    await conn.execute(
        "INSERT INTO push_vapid_keys (id, private_key, public_key, created_at)"
        " VALUES (1, $1, $2, $3) ON CONFLICT (id) DO NOTHING",
        private_key,
        public_key,
        at,
    )


async def upsert_subscription(
    conn: Connection,
    *,
    subscription_id: str,
    user_id: str,
    endpoint: str,
    p256dh: str,
    auth: str,
    preview: bool,
    created_at: int,
) -> None:
    """One row per endpoint: a device subscribing again updates its keys and choice (and
    belongs to whoever signed in on it last)."""
    await conn.execute(
        "INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, preview, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (endpoint) DO UPDATE SET"
        " user_id = excluded.user_id, p256dh = excluded.p256dh, auth = excluded.auth,"
        " preview = excluded.preview",
        subscription_id,
        user_id,
        endpoint,
        p256dh,
        auth,
        preview,
        created_at,
    )


async def subscription_at(conn: Connection, *, endpoint: str, user_id: str) -> Row | None:
    return await conn.fetchrow(
        _SUBSCRIPTION + " WHERE endpoint = $1 AND user_id = $2", endpoint, user_id
    )


async def subscriptions_of(conn: Connection, user_id: str) -> Sequence[Row]:
    return await conn.fetch(_SUBSCRIPTION + " WHERE user_id = $1 ORDER BY id", user_id)


async def delete_subscription(conn: Connection, *, subscription_id: str, user_id: str) -> bool:
    deleted = await conn.execute(
        "DELETE FROM push_subscriptions WHERE id = $1 AND user_id = $2", subscription_id, user_id
    )
    return deleted == 1


async def forget_subscription(conn: Connection, subscription_id: str) -> None:
    """The push service says it is gone (404, 410): its pending deliveries go with it."""
    await conn.execute("DELETE FROM push_subscriptions WHERE id = $1", subscription_id)


async def subscriptions_for(conn: Connection, user_ids: Sequence[str]) -> Sequence[Row]:
    """The subscriptions of these creators (for the relay's hand-over)."""
    users = sorted(set(user_ids))
    if not users:
        return []
    return await conn.fetch(
        "SELECT s.id, s.user_id, s.preview, u.language"  # noqa: S608 - placeholders only
        " FROM push_subscriptions s JOIN users u ON u.id = s.user_id"
        f" WHERE s.user_id IN ({placeholders(1, len(users))}) ORDER BY s.id",
        *users,
    )


def delivery_row(
    *, delivery_id: str, subscription_id: str, payload: str, at: int
) -> tuple[object, ...]:
    """A push due now, for ``insert_deliveries``."""
    return (delivery_id, subscription_id, payload, at, 0, at)


async def insert_deliveries(conn: Connection, rows: Sequence[tuple[object, ...]]) -> None:
    columns = ("id", "subscription_id", "payload", "created_at", "attempts", "next_attempt_at")
    await insert_many(conn, "push_deliveries", columns, rows)


async def due_deliveries(
    conn: Connection, now: int, limit: int, busy: Sequence[str] = ()
) -> Sequence[Row]:
    """Deliveries whose time has come, oldest first, of creators not in ``busy``."""
    skip = f" AND s.user_id NOT IN ({placeholders(3, len(busy))})" if busy else ""
    return await conn.fetch(
        "SELECT d.id, d.subscription_id, d.payload, d.attempts, d.created_at,"  # noqa: S608 - placeholders only
        " d.next_attempt_at, s.endpoint, s.p256dh, s.auth, s.user_id"
        " FROM push_deliveries d JOIN push_subscriptions s ON s.id = d.subscription_id"
        f" WHERE d.next_attempt_at <= $1{skip} ORDER BY d.id LIMIT $2",
        now,
        limit,
        *busy,
    )


async def claim_delivery(conn: Connection, *, delivery_id: str, seen_at: int, until: int) -> bool:
    """Take a delivery for one attempt (until ``until``); False if another instance has."""
    claimed = await conn.execute(
        "UPDATE push_deliveries SET next_attempt_at = $3 WHERE id = $1 AND next_attempt_at = $2",
        delivery_id,
        seen_at,
        until,
    )
    return claimed == 1


async def retry_delivery(
    conn: Connection, *, delivery_id: str, attempts: int, next_attempt_at: int
) -> None:
    await conn.execute(
        "UPDATE push_deliveries SET attempts = $2, next_attempt_at = $3 WHERE id = $1",
        delivery_id,
        attempts,
        next_attempt_at,
    )


async def delete_delivery(conn: Connection, delivery_id: str) -> None:
    """Delivered or given up: what it carried is not kept."""
    await conn.execute("DELETE FROM push_deliveries WHERE id = $1", delivery_id)
