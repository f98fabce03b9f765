"""SQL for e-mail notices: each creator's choice and confirmed address
(``email_notice_settings``), and the notices waiting to be mailed (``email_notices``)."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row, insert_many, placeholders


async def choice_of(conn: Connection, user_id: str) -> Row | None:
    """The account's address and sign-in, with its choice (NULLs when never made)."""
    return await conn.fetchrow(
        "SELECT u.email, u.google_sub, u.language, u.time_zone,"
        " s.mode, s.confirmed_address, s.confirmation_sent_at"
        " FROM users u LEFT JOIN email_notice_settings s ON s.user_id = u.id WHERE u.id = $1",
        user_id,
    )


async def has_signed_in(conn: Connection, user_id: str) -> bool:
    """Whether the account ever had a session: only a verified sign-in starts one."""
    found = await conn.fetchrow("SELECT 1 FROM sessions WHERE user_id = $1 LIMIT 1", user_id)
    return found is not None


async def save_choice(
    conn: Connection,
    *,
    user_id: str,
    mode: str,
    confirmed_address: str | None,
    confirmation_sent_at: int | None,
    at: int,
) -> None:
    await conn.execute(
        "INSERT INTO email_notice_settings (user_id, mode, confirmed_address,"
        " confirmation_sent_at, updated_at) VALUES ($1, $2, $3, $4, $5)"
        " ON CONFLICT (user_id) DO UPDATE SET mode = excluded.mode,"
        " confirmed_address = excluded.confirmed_address,"
        " confirmation_sent_at = excluded.confirmation_sent_at, updated_at = excluded.updated_at",
        user_id,
        mode,
        confirmed_address,
        confirmation_sent_at,
        at,
    )


async def confirm_address(conn: Connection, *, user_id: str, address: str, at: int) -> bool:
    """Confirm ``address`` if it is still the account's; False otherwise."""
    changed = await conn.execute(
        "UPDATE email_notice_settings SET confirmed_address = $2, updated_at = $3"
        " WHERE user_id = $1 AND $2 = (SELECT email FROM users WHERE id = $1)",
        user_id,
        address,
        at,
    )
    return changed == 1


async def turn_off(conn: Connection, *, user_id: str, at: int) -> None:
    """Notices off, and the ones waiting dropped."""
    await conn.execute(
        "UPDATE email_notice_settings SET mode = 'off', updated_at = $2 WHERE user_id = $1",
        user_id,
        at,
    )
    await drop_pending(conn, user_id=user_id, at=at)


async def drop_pending(conn: Connection, *, user_id: str, at: int) -> None:
    await conn.execute(
        "UPDATE email_notices SET status = 'dropped', finished_at = $2"
        " WHERE user_id = $1 AND status = 'pending'",
        user_id,
        at,
    )


async def subscribers(conn: Connection, user_ids: Sequence[str]) -> dict[str, str]:
    """The mode of each of these creators who gets notices at a confirmed address."""
    users = sorted(set(user_ids))
    if not users:
        return {}
    rows = await conn.fetch(
        "SELECT s.user_id, s.mode FROM email_notice_settings s JOIN users u ON u.id = s.user_id"  # noqa: S608 - placeholders only
        f" WHERE s.user_id IN ({placeholders(1, len(users))})"
        " AND s.mode <> 'off' AND s.confirmed_address = u.email",
        *users,
    )
    return {row["user_id"]: row["mode"] for row in rows}


def notice_row(
    *, notice_id: str, user_id: str, message_id: str, at: int, due: int
) -> tuple[object, ...]:
    """A pending notice, due at ``due``, for ``insert_notices``."""
    return (notice_id, user_id, message_id, at, "pending", 0, due)


async def insert_notices(conn: Connection, rows: Sequence[tuple[object, ...]]) -> None:
    columns = ("id", "user_id", "message_id", "created_at", "status", "attempts")
    await insert_many(conn, "email_notices", (*columns, "next_attempt_at"), rows)


async def due_creators(
    conn: Connection, now: int, limit: int, busy: Sequence[str] = ()
) -> Sequence[Row]:
    """Creators with notices due (``user_id``), the longest waiting first, not in ``busy``."""
    skip = f" AND user_id NOT IN ({placeholders(3, len(busy))})" if busy else ""
    return await conn.fetch(
        "SELECT user_id, MIN(id) AS first FROM email_notices"  # noqa: S608 - placeholders only
        f" WHERE status = 'pending' AND next_attempt_at <= $1{skip}"
        " GROUP BY user_id ORDER BY first LIMIT $2",
        now,
        limit,
        *busy,
    )


async def claim_due_notices(
    conn: Connection, *, user_id: str, now: int, until: int, limit: int
) -> Sequence[Row]:
    """Take a creator's due notices (the oldest ``limit``) until ``until``, in one
    statement: two instances never split one creator's notices between two mails."""
    return await conn.fetch(
        "UPDATE email_notices SET next_attempt_at = $3"
        " WHERE id IN (SELECT id FROM email_notices WHERE user_id = $1 AND status = 'pending'"
        " AND next_attempt_at <= $2 ORDER BY id LIMIT $4)"
        " AND status = 'pending' AND next_attempt_at <= $2"
        " RETURNING id, message_id, attempts, created_at",
        user_id,
        now,
        until,
        limit,
    )


async def recipient(conn: Connection, user_id: str) -> Row | None:
    """Where a creator's notices go now: their confirmed address, if notices are on."""
    return await conn.fetchrow(
        "SELECT u.email, u.language, u.time_zone"
        " FROM email_notice_settings s JOIN users u ON u.id = s.user_id"
        " WHERE s.user_id = $1 AND s.mode <> 'off' AND s.confirmed_address = u.email",
        user_id,
    )


async def finish_notice(
    conn: Connection,
    *,
    notice_id: str,
    status: str,
    next_attempt_at: int,
    error: str | None,
    finished_at: int | None,
) -> None:
    await conn.execute(
        "UPDATE email_notices SET status = $2, attempts = attempts + 1, next_attempt_at = $3,"
        " last_error = $4, finished_at = $5 WHERE id = $1",
        notice_id,
        status,
        next_attempt_at,
        error,
        finished_at,
    )


async def purge_finished(conn: Connection, before: int) -> int:
    return await conn.execute(
        "DELETE FROM email_notices WHERE status <> 'pending' AND finished_at < $1", before
    )
