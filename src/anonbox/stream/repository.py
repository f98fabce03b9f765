"""SQL for stream mode: a creator's overlay (``stream_overlays``)."""

from __future__ import annotations

from anonbox.core.database import Connection, Row


async def overlay_of(conn: Connection, user_id: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT user_id, nonce, message_id FROM stream_overlays WHERE user_id = $1", user_id
    )


async def put_overlay(
    conn: Connection, *, user_id: str, nonce: str, token_hash: str, at: int
) -> None:
    """Make the creator's overlay, or give it a new address (the old one stops working)."""
    await conn.execute(
        "INSERT INTO stream_overlays (user_id, nonce, token_hash, message_id, updated_at)"
        " VALUES ($1, $2, $3, NULL, $4) ON CONFLICT (user_id) DO UPDATE"
        " SET nonce = excluded.nonce, token_hash = excluded.token_hash,"
        " updated_at = excluded.updated_at",
        user_id,
        nonce,
        token_hash,
        at,
    )


async def show(conn: Connection, *, user_id: str, link_id: str, message_id: str, at: int) -> bool:
    """Put one of the creator's messages on screen; False if it is not theirs (or gone)."""
    changed = await conn.execute(
        "UPDATE stream_overlays SET message_id = $3, updated_at = $4 WHERE user_id = $1"
        " AND EXISTS (SELECT 1 FROM messages m JOIN links l ON l.id = m.link_id"
        " WHERE m.id = $3 AND m.link_id = $2 AND l.user_id = $1)",
        user_id,
        link_id,
        message_id,
        at,
    )
    return changed == 1


async def clear(conn: Connection, *, user_id: str, at: int) -> None:
    await conn.execute(
        "UPDATE stream_overlays SET message_id = NULL, updated_at = $2 WHERE user_id = $1",
        user_id,
        at,
    )


async def on_screen(conn: Connection, token_hash: str) -> Row | None:
    """The overlay at this address: its creator, their language, the question shown (its
    text, or NULL), and the hash again (so the caller compares it in constant time)."""
    return await conn.fetchrow(
        "SELECT o.user_id, o.token_hash, u.language, m.content"
        " FROM stream_overlays o JOIN users u ON u.id = o.user_id"
        " LEFT JOIN messages m ON m.id = o.message_id"
        " WHERE o.token_hash = $1",
        token_hash,
    )
