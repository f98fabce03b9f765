"""The SQL that proves a credential: the active API key or session behind a hash."""

from __future__ import annotations

from anonbox.core.database import Connection, Row


async def active_api_key(conn: Connection, key_hash: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT k.id, k.user_id, k.key_hash, k.last_used_at, u.is_admin,"
        " EXISTS (SELECT 1 FROM account_deletions d WHERE d.user_id = u.id) AS erasing"
        " FROM api_keys k JOIN users u ON u.id = k.user_id"
        " WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
        key_hash,
    )


async def touch_api_key(conn: Connection, key_id: str, used_at: int) -> None:
    await conn.execute("UPDATE api_keys SET last_used_at = $1 WHERE id = $2", used_at, key_id)


async def active_session_by_access(conn: Connection, access_hash: str, now: int) -> Row | None:
    return await conn.fetchrow(
        "SELECT s.id, s.user_id, s.access_hash, s.access_expires_at, u.is_admin,"
        " EXISTS (SELECT 1 FROM account_deletions d WHERE d.user_id = u.id) AS erasing"
        " FROM sessions s JOIN users u ON u.id = s.user_id"
        " WHERE s.access_hash = $1 AND s.revoked_at IS NULL AND s.access_expires_at > $2",
        access_hash,
        now,
    )
