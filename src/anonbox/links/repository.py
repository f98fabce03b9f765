"""SQL for links."""

from __future__ import annotations

from anonbox.core.database import Connection
from anonbox.core.ids import new_link_id

DEFAULT_PROMPT = "Send me anonymous messages!"


async def insert_default_link(conn: Connection, *, user_id: str, created_at: int) -> str:
    link_id = new_link_id()
    await conn.execute(
        "INSERT INTO links (id, user_id, prompt, created_at) VALUES ($1, $2, $3, $4)",
        link_id,
        user_id,
        DEFAULT_PROMPT,
        created_at,
    )
    return link_id


async def link_owner(conn: Connection, link_id: str) -> str | None:
    row = await conn.fetchrow("SELECT user_id FROM links WHERE id = $1", link_id)
    return None if row is None else str(row["user_id"])
