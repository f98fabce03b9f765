"""SQL of the goodbyes: which actors are to say it, and what is forgotten once it is
delivered. Both dialects read every statement."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row

_NONE_PENDING = (
    " NOT EXISTS (SELECT 1 FROM federation_deliveries d"
    " WHERE d.link_id = federation_actors.link_id AND d.status = 'pending')"
)


async def due(conn: Connection, limit: int = 100) -> Sequence[Row]:
    """Actors that have not said goodbye, though their link was deleted (or erased with its
    account) or its switch turned off; with the link's owner while the link is there."""
    return await conn.fetch(
        "SELECT f.link_id, l.user_id FROM federation_actors f"
        " LEFT JOIN links l ON l.id = f.link_id"
        " WHERE f.gone_at IS NULL AND (l.id IS NULL OR NOT l.fediverse) LIMIT $1",
        limit,
    )


# A link is made followable in two steps, its actor first, then ``links.fediverse``: an
# actor younger than this is not taken for one whose switch is off (a goodbye claimed in
# between made a link just switched on answer 410 until the next renewal).
_NEWBORN_US = 5_000_000


async def claim(conn: Connection, *, link_id: str, now: int) -> bool:
    """Mark the actor gone, if its link is still not followable and no one did (False: its
    switch is on again, or another instance said the goodbye). What it was last told is
    forgotten: the name and prompt of an erased account are kept nowhere."""
    changed = await conn.execute(
        "UPDATE federation_actors SET gone_at = $2, told_state = NULL"
        " WHERE link_id = $1 AND gone_at IS NULL AND created_at < $3 AND NOT EXISTS"
        " (SELECT 1 FROM links l WHERE l.id = federation_actors.link_id AND l.fediverse)",
        link_id,
        now,
        now - _NEWBORN_US,
    )
    return changed == 1


async def drop_pending(conn: Connection, link_id: str) -> int:
    """Drop what still waits to be sent for the link. Deleted, not marked failed: an
    attempt in flight then finds no row to put back to pending (a goodbye retried after
    the actor started afresh would be signed with its new key)."""
    return await conn.execute(
        "DELETE FROM federation_deliveries WHERE link_id = $1 AND status = 'pending'", link_id
    )


async def forget_followers(conn: Connection, link_id: str) -> int:
    return await conn.execute("DELETE FROM federation_followers WHERE link_id = $1", link_id)


async def gone_at(conn: Connection, link_id: str) -> Row | None:
    """The link's actor, if it has one: ``gone_at`` (null while it answers)."""
    return await conn.fetchrow("SELECT gone_at FROM federation_actors WHERE link_id = $1", link_id)


async def tombstone(conn: Connection, link_id: str) -> Row | None:
    """The deleted (or erased) link's tombstone: when it went."""
    return await conn.fetchrow("SELECT erased_at FROM link_tombstones WHERE id = $1", link_id)


async def said(conn: Connection, limit: int = 100) -> Sequence[Row]:
    """Actors whose goodbye is delivered or given up and whose key is still kept;
    ``kept``: whether their link is still there (switched off, not deleted)."""
    return await conn.fetch(
        "SELECT f.link_id, l.id AS kept FROM federation_actors f"  # noqa: S608 - constant
        " LEFT JOIN links l ON l.id = f.link_id"
        " WHERE f.gone_at IS NOT NULL AND (f.private_key <> '' OR l.id IS NULL)"
        " AND" + _NONE_PENDING.replace("federation_actors.", "f.") + " LIMIT $1",
        limit,
    )


async def release_key(conn: Connection, link_id: str) -> int:
    """Forget the key pair of an actor whose goodbye is over (it signs nothing more; an
    actor that starts afresh gets a new one). The row stays: it answers 410."""
    return await conn.execute(
        "UPDATE federation_actors SET private_key = '', public_key = ''"  # noqa: S608 - constant
        " WHERE link_id = $1 AND gone_at IS NOT NULL AND" + _NONE_PENDING,
        link_id,
    )


async def forget_actor(conn: Connection, link_id: str) -> bool:
    """Forget everything federation kept of a deleted link, its goodbye over: the link's
    tombstone answers 410 from now on. False if a delivery still waits."""
    forgotten = await conn.execute(
        "DELETE FROM federation_actors"  # noqa: S608 - constant
        " WHERE link_id = $1 AND gone_at IS NOT NULL AND"
        + _NONE_PENDING
        + " AND NOT EXISTS (SELECT 1 FROM links l WHERE l.id = $1)",
        link_id,
    )
    if forgotten != 1:
        return False
    await conn.execute("DELETE FROM federation_followers WHERE link_id = $1", link_id)
    await conn.execute("DELETE FROM federation_deliveries WHERE link_id = $1", link_id)
    return True


async def stuck(conn: Connection, limit: int = 100) -> Sequence[Row]:
    """Gone actors whose link is followable again (their fresh start was interrupted)."""
    return await conn.fetch(
        "SELECT f.link_id FROM federation_actors f JOIN links l ON l.id = f.link_id"
        " WHERE l.fediverse AND f.gone_at IS NOT NULL LIMIT $1",
        limit,
    )


async def renew(
    conn: Connection, *, link_id: str, private_key: str, public_key: str, now: int
) -> bool:
    """Start a gone actor afresh: a new key pair, answering again (False: it was not gone)."""
    changed = await conn.execute(
        "UPDATE federation_actors SET private_key = $2, public_key = $3, gone_at = NULL,"
        " told_state = NULL, created_at = $4 WHERE link_id = $1 AND gone_at IS NOT NULL",
        link_id,
        private_key,
        public_key,
        now,
    )
    return changed == 1
