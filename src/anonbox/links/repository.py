"""SQL for links. Statements on a creator's link name the creator too, so another's is not found."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row
from anonbox.core.ids import new_link_id

DEFAULT_PROMPT = "Send me anonymous messages!"

_LINK = "SELECT id, prompt, paused, created_at FROM links"


async def insert_link(conn: Connection, *, user_id: str, prompt: str, created_at: int) -> str:
    """A new link with a fresh random id; returns the id."""
    link_id = new_link_id()
    await conn.execute(
        "INSERT INTO links (id, user_id, prompt, created_at) VALUES ($1, $2, $3, $4)",
        link_id,
        user_id,
        prompt,
        created_at,
    )
    return link_id


async def insert_default_link(conn: Connection, *, user_id: str, created_at: int) -> str:
    return await insert_link(conn, user_id=user_id, prompt=DEFAULT_PROMPT, created_at=created_at)


async def link_owner(conn: Connection, link_id: str) -> str | None:
    row = await conn.fetchrow("SELECT user_id FROM links WHERE id = $1", link_id)
    return None if row is None else str(row["user_id"])


async def count_links(conn: Connection, user_id: str) -> int:
    row = await conn.fetchrow("SELECT COUNT(*) AS n FROM links WHERE user_id = $1", user_id)
    assert row is not None, "an aggregate always returns a row"
    return int(row["n"])


async def links_of(conn: Connection, user_id: str) -> Sequence[Row]:
    """Oldest first: the same order that makes the first one the account's default link."""
    return await conn.fetch(_LINK + " WHERE user_id = $1 ORDER BY created_at, id", user_id)


async def link_of(conn: Connection, *, link_id: str, user_id: str) -> Row | None:
    return await conn.fetchrow(_LINK + " WHERE id = $1 AND user_id = $2", link_id, user_id)


async def public_link(conn: Connection, link_id: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT l.id, l.prompt, l.paused, u.name, u.picture_url"
        " FROM links l JOIN users u ON u.id = l.user_id WHERE l.id = $1",
        link_id,
    )


async def update_link(
    conn: Connection, *, link_id: str, user_id: str, prompt: str | None, paused: bool | None
) -> Row | None:
    """Set the given settings (None keeps the current value) in one statement."""
    return await conn.fetchrow(
        "UPDATE links SET prompt = COALESCE($3, prompt), paused = COALESCE($4, paused)"
        " WHERE id = $1 AND user_id = $2 RETURNING id, prompt, paused, created_at",
        link_id,
        user_id,
        prompt,
        paused,
    )


async def delete_link(conn: Connection, *, link_id: str, user_id: str) -> bool:
    """Delete the link; its messages, their replies and its idempotency records go with it
    (ON DELETE CASCADE), while reports on its messages stay, detached."""
    deleted = await conn.execute(
        "DELETE FROM links WHERE id = $1 AND user_id = $2", link_id, user_id
    )
    return deleted == 1
