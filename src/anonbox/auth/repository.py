"""SQL for users and API keys."""

from __future__ import annotations

from anonbox.core.database import Connection, Row


async def insert_user(
    conn: Connection, *, user_id: str, email: str, name: str, created_at: int
) -> None:
    await conn.execute(
        "INSERT INTO users (id, email, name, created_at) VALUES ($1, $2, $3, $4)",
        user_id,
        email,
        name,
        created_at,
    )


async def user_id_by_email(conn: Connection, email: str) -> str | None:
    row = await conn.fetchrow("SELECT id FROM users WHERE email = $1", email)
    return None if row is None else str(row["id"])


async def insert_api_key(
    conn: Connection,
    *,
    key_id: str,
    user_id: str,
    name: str,
    key_hash: str,
    last_chars: str,
    created_at: int,
) -> None:
    await conn.execute(
        "INSERT INTO api_keys (id, user_id, name, key_hash, last_chars, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        key_id,
        user_id,
        name,
        key_hash,
        last_chars,
        created_at,
    )


async def active_api_key(conn: Connection, key_hash: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT id, user_id, key_hash, last_used_at FROM api_keys"
        " WHERE key_hash = $1 AND revoked_at IS NULL",
        key_hash,
    )


async def touch_api_key(conn: Connection, key_id: str, used_at: int) -> None:
    await conn.execute("UPDATE api_keys SET last_used_at = $1 WHERE id = $2", used_at, key_id)
