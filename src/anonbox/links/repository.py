"""SQL for links. Statements on a creator's link name the creator too, so another's is not found."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row
from anonbox.core.ids import new_link_id

DEFAULT_PROMPT = "Send me anonymous messages!"

_COLUMNS = "id, prompt, paused, created_at, follow_ups, paused_until, hide_dates, muted"
_LINK = f"SELECT {_COLUMNS} FROM links"  # noqa: S608 - constant columns


# Tries at a fresh id before giving up: only a broken random source would need a second.
_LINK_ID_TRIES = 100


async def insert_link(conn: Connection, *, user_id: str, prompt: str, created_at: int) -> str:
    """A new link with a fresh random id, never one an erased account had; returns the id."""
    for _ in range(_LINK_ID_TRIES):
        link_id = new_link_id()
        inserted = await conn.execute(
            # CAST: PostgreSQL must deduce one type for $1 from both of its uses.
            "INSERT INTO links (id, user_id, prompt, created_at)"
            " SELECT CAST($1 AS VARCHAR(16)), $2, $3, $4 WHERE NOT EXISTS"
            " (SELECT 1 FROM link_tombstones WHERE id = CAST($1 AS VARCHAR(16)))",
            link_id,
            user_id,
            prompt,
            created_at,
        )
        if inserted == 1:
            return link_id
    raise RuntimeError("no fresh link id after many tries: is the random source broken?")


async def link_erased(conn: Connection, link_id: str) -> bool:
    """Whether the id belonged to a link that was deleted, or erased with its account
    (never given out again)."""
    return await conn.fetchrow("SELECT 1 FROM link_tombstones WHERE id = $1", link_id) is not None


async def link_holder(conn: Connection, link_id: str) -> Row | None:
    """The link's owner (``user_id``) and whether the owner's account is being deleted
    (``disabled``): then the link is gone for everyone."""
    return await conn.fetchrow(
        "SELECT l.user_id, EXISTS (SELECT 1 FROM account_deletions d"
        " WHERE d.user_id = l.user_id) AS disabled FROM links l WHERE l.id = $1",
        link_id,
    )


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
        "SELECT l.id, l.prompt, l.paused, l.hide_dates, u.name, u.picture_url,"
        " EXISTS (SELECT 1 FROM account_deletions d WHERE d.user_id = u.id) AS disabled"
        " FROM links l JOIN users u ON u.id = l.user_id WHERE l.id = $1",
        link_id,
    )


async def creator_language(conn: Connection, link_id: str) -> str | None:
    row = await conn.fetchrow(
        "SELECT u.language FROM links l JOIN users u ON u.id = l.user_id WHERE l.id = $1",
        link_id,
    )
    return None if row is None else row["language"]


async def update_link(
    conn: Connection,
    *,
    link_id: str,
    user_id: str,
    prompt: str | None,
    paused: bool | None,
    follow_ups: bool | None = None,
    paused_until: int | None = None,
    hide_dates: bool | None = None,
    muted: str | None = None,
) -> Row | None:
    """Set the given settings (None keeps the current value) in one statement. Setting
    ``paused`` ends a timed pause; ``paused_until`` pauses until then."""
    return await conn.fetchrow(
        "UPDATE links SET prompt = COALESCE($3, prompt),"  # noqa: S608 - constant columns
        " paused = CASE WHEN CAST($6 AS BIGINT) IS NOT NULL THEN TRUE"
        " ELSE COALESCE($4, paused) END,"
        " paused_until = CASE WHEN CAST($6 AS BIGINT) IS NOT NULL THEN CAST($6 AS BIGINT)"
        " WHEN CAST($4 AS BOOLEAN) IS NOT NULL THEN NULL ELSE paused_until END,"
        " follow_ups = COALESCE($5, follow_ups), hide_dates = COALESCE($7, hide_dates),"
        " muted = COALESCE($8, muted)"
        f" WHERE id = $1 AND user_id = $2 RETURNING {_COLUMNS}",
        link_id,
        user_id,
        prompt,
        paused,
        follow_ups,
        paused_until,
        hide_dates,
        muted,
    )


async def resume_ended_pauses(conn: Connection, now: int) -> int:
    """Resume the links whose timed pause has ended."""
    return await conn.execute(
        "UPDATE links SET paused = FALSE, paused_until = NULL"
        " WHERE paused_until IS NOT NULL AND paused_until <= $1",
        now,
    )


async def delete_link(conn: Connection, *, link_id: str, user_id: str, now: int) -> bool:
    """Delete the link; its messages, their replies and its idempotency records go with it
    (ON DELETE CASCADE), while reports on its messages stay, detached. Its id goes to the
    tombstones, so it is never handed out again and answers "gone" from now on. Run in a
    transaction: the tombstone and the deletion land together."""
    await conn.execute(
        "INSERT INTO link_tombstones (id, erased_at) SELECT id, $3 FROM links"
        " WHERE id = $1 AND user_id = $2 ON CONFLICT (id) DO NOTHING",
        link_id,
        user_id,
        now,
    )
    deleted = await conn.execute(
        "DELETE FROM links WHERE id = $1 AND user_id = $2", link_id, user_id
    )
    return deleted == 1
