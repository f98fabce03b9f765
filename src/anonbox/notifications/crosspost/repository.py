"""SQL for posted answers: the links that post them, the accounts they go to
(``fediverse_accounts``), and one post of one answer to one account
(``crosspost_deliveries``)."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row, placeholders
from anonbox.notifications import repository as deliveries


async def posting_links(conn: Connection, link_ids: Sequence[str]) -> Sequence[Row]:
    """Of these links, those whose answers are posted, with the connected accounts of
    their creators: one row per (link, account)."""
    ids = sorted(set(link_ids))
    if not ids:
        return []
    return await conn.fetch(
        "SELECT l.id AS link_id, l.crosspost_since, a.id AS account_id FROM links l"  # noqa: S608 - placeholders only
        " JOIN fediverse_accounts a ON a.user_id = l.user_id AND a.disconnected_at IS NULL"
        f" WHERE l.id IN ({placeholders(1, len(ids))}) AND l.crosspost IS NOT NULL"
        " ORDER BY l.id, a.id",
        *ids,
    )


async def insert_delivery(
    conn: Connection,
    *,
    delivery_id: str,
    account_id: str,
    link_id: str,
    message_id: str,
    reply_id: str,
    created_at: int,
) -> None:
    await conn.execute(
        "INSERT INTO crosspost_deliveries (id, account_id, link_id, message_id, reply_id,"
        " status, attempts, next_attempt_at, created_at)"
        " VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $6)",
        delivery_id,
        account_id,
        link_id,
        message_id,
        reply_id,
        created_at,
    )


async def due_deliveries(
    conn: Connection, now: int, limit: int, busy: Sequence[str] = ()
) -> Sequence[Row]:
    """Pending posts whose time has come, of connected accounts, oldest first, leaving
    out the creators in ``busy``; with what the attempt needs."""
    skip = f" AND a.user_id NOT IN ({placeholders(3, len(busy))})" if busy else ""
    return await conn.fetch(
        "SELECT d.id, d.account_id, d.link_id, d.message_id, d.reply_id, d.attempts,"  # noqa: S608 - placeholders only
        " d.created_at, d.next_attempt_at, a.user_id, a.software, a.instance,"
        " a.access_token, l.crosspost, l.crosspost_cw, l.prompt,"
        # The link's language (what its card speaks), else the creator's.
        " COALESCE(l.language, u.language) AS language,"
        " p.id AS answer_id"
        " FROM crosspost_deliveries d JOIN fediverse_accounts a ON a.id = d.account_id"
        " JOIN links l ON l.id = d.link_id JOIN users u ON u.id = a.user_id"
        " LEFT JOIN answers p ON p.message_id = d.message_id"
        " WHERE d.status = 'pending' AND d.next_attempt_at <= $1"
        f" AND a.disconnected_at IS NULL{skip} ORDER BY d.id LIMIT $2",
        now,
        limit,
        *busy,
    )


async def claim_delivery(conn: Connection, *, delivery_id: str, seen_at: int, until: int) -> bool:
    """Take a delivery for one attempt (until ``until``); False if another instance has."""
    return await deliveries.claim_delivery(
        conn, "crosspost_deliveries", delivery_id=delivery_id, seen_at=seen_at, until=until
    )


async def finish_attempt(
    conn: Connection,
    *,
    delivery_id: str,
    status: str,
    attempts: int,
    next_attempt_at: int,
    error: str | None,
    post_url: str | None,
    finished_at: int | None,
) -> None:
    await conn.execute(
        "UPDATE crosspost_deliveries SET status = $2, attempts = $3, next_attempt_at = $4,"
        " last_error = $5, post_url = $6, finished_at = $7 WHERE id = $1",
        delivery_id,
        status,
        attempts,
        next_attempt_at,
        error,
        post_url,
        finished_at,
    )


async def disconnect(conn: Connection, *, account_id: str, at: int) -> None:
    """The instance refused the token: forget it, and say so to the creator."""
    await conn.execute(
        "UPDATE fediverse_accounts SET access_token = '', disconnected_at = $2"
        " WHERE id = $1 AND disconnected_at IS NULL",
        account_id,
        at,
    )


async def fail_pending_of(conn: Connection, *, account_id: str, at: int, error: str) -> None:
    """A disconnected account's waiting posts: given up (its token is gone)."""
    await conn.execute(
        "UPDATE crosspost_deliveries SET status = 'failed', last_error = $3, finished_at = $2"
        " WHERE account_id = $1 AND status = 'pending'",
        account_id,
        at,
        error,
    )


async def purge_finished(conn: Connection, *, finished_before: int) -> None:
    await conn.execute(
        "DELETE FROM crosspost_deliveries WHERE finished_at IS NOT NULL AND finished_at < $1",
        finished_before,
    )
