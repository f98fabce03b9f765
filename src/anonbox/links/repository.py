"""SQL for links. Statements on a creator's link name the creator too, so another's is not found."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row
from anonbox.core.ids import new_link_id

_COLUMNS = (
    "id, prompt, paused, created_at, follow_ups, paused_until, hide_dates, muted,"
    " crosspost, crosspost_cw, fediverse, senders, language, card_theme,"
    " federation_visibility, fediverse_discoverable,"
    " (SELECT u.language FROM users u WHERE u.id = links.user_id) AS creator_language"
)
_LINK = f"SELECT {_COLUMNS} FROM links"  # noqa: S608 - constant columns


# Tries at a fresh id before giving up: only a broken random source would need a second.
_LINK_ID_TRIES = 100


async def insert_link(
    conn: Connection, *, user_id: str, prompt: str, created_at: int, language: str | None = None
) -> str:
    """A new link with a fresh random id, never one an erased account had; returns the id.
    ``language``: what it speaks to the world (None: its creator's, whatever that is)."""
    for _ in range(_LINK_ID_TRIES):
        link_id = new_link_id()
        inserted = await conn.execute(
            # CAST: PostgreSQL must deduce one type for $1 from both of its uses.
            "INSERT INTO links (id, user_id, prompt, created_at, language)"
            " SELECT CAST($1 AS VARCHAR(16)), $2, $3, $4, CAST($5 AS VARCHAR(35))"
            " WHERE NOT EXISTS"
            " (SELECT 1 FROM link_tombstones WHERE id = CAST($1 AS VARCHAR(16)))",
            link_id,
            user_id,
            prompt,
            created_at,
            language,
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


async def user_language(conn: Connection, user_id: str) -> str | None:
    """The language the creator reads (None: not chosen yet, or no such account)."""
    row = await conn.fetchrow("SELECT language FROM users WHERE id = $1", user_id)
    return None if row is None else row["language"]


async def paused_until(conn: Connection, link_id: str) -> int | None:
    """When a timed pause of the link ends (None: open, paused open-endedly, or no link)."""
    row = await conn.fetchrow("SELECT paused_until FROM links WHERE id = $1", link_id)
    return None if row is None or row["paused_until"] is None else int(row["paused_until"])


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
        "SELECT l.id, l.prompt, l.paused, l.hide_dates, l.senders, u.display_name, u.bio,"
        " u.picture_url, l.language, l.card_theme, u.language AS creator_language,"
        " u.id AS user_id, a.id AS avatar_id,"
        " EXISTS (SELECT 1 FROM account_deletions d WHERE d.user_id = u.id) AS disabled"
        " FROM links l JOIN users u ON u.id = l.user_id"
        " LEFT JOIN avatars a ON a.user_id = u.id WHERE l.id = $1",
        link_id,
    )


async def content_version(conn: Connection, link_id: str) -> Row | None:
    """What the public pages' cache is keyed by (migration 0036's triggers move it)."""
    return await conn.fetchrow(
        "SELECT content_version, paused_until FROM links WHERE id = $1", link_id
    )


async def creator_time_zone(conn: Connection, link_id: str) -> str | None:
    row = await conn.fetchrow(
        "SELECT u.time_zone FROM links l JOIN users u ON u.id = l.user_id WHERE l.id = $1",
        link_id,
    )
    return None if row is None else row["time_zone"]


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
    crosspost: str | None = None,
    crosspost_cw: str | None = None,
    senders: str | None = None,
    now: int = 0,
    fediverse: bool | None = None,
    language: str | None = None,
    card_theme: str | None = None,
    federation_visibility: str | None = None,
    fediverse_discoverable: bool | None = None,
) -> Row | None:
    """Set the given settings (None keeps the current value) in one statement. Setting
    ``paused`` ends a timed pause; ``paused_until`` pauses until then. ``crosspost``
    'off' and ``crosspost_cw`` '' clear theirs; turning ``crosspost`` on from off notes
    ``now`` (answers written before are not posted)."""
    return await conn.fetchrow(
        "UPDATE links SET prompt = COALESCE($3, prompt),"  # noqa: S608 - constant columns
        " paused = CASE WHEN CAST($6 AS BIGINT) IS NOT NULL THEN TRUE"
        " ELSE COALESCE($4, paused) END,"
        " paused_until = CASE WHEN CAST($6 AS BIGINT) IS NOT NULL THEN CAST($6 AS BIGINT)"
        " WHEN CAST($4 AS BOOLEAN) IS NOT NULL THEN NULL ELSE paused_until END,"
        " follow_ups = COALESCE($5, follow_ups), hide_dates = COALESCE($7, hide_dates),"
        " muted = COALESCE($8, muted),"
        " crosspost_since = CASE WHEN CAST($9 AS VARCHAR(16)) IS NULL"
        " OR CAST($9 AS VARCHAR(16)) = 'off' THEN crosspost_since"
        " WHEN crosspost IS NULL THEN CAST($11 AS BIGINT) ELSE crosspost_since END,"
        " crosspost = CASE WHEN CAST($9 AS VARCHAR(16)) IS NULL THEN crosspost"
        " WHEN CAST($9 AS VARCHAR(16)) = 'off' THEN NULL ELSE CAST($9 AS VARCHAR(16)) END,"
        " crosspost_cw = CASE WHEN CAST($10 AS VARCHAR(500)) IS NULL THEN crosspost_cw"
        " WHEN CAST($10 AS VARCHAR(500)) = '' THEN NULL ELSE CAST($10 AS VARCHAR(500)) END,"
        " fediverse = COALESCE($12, fediverse),"
        " senders = COALESCE(CAST($13 AS VARCHAR(16)), senders),"
        " language = COALESCE(CAST($14 AS VARCHAR(35)), language),"
        " card_theme = COALESCE(CAST($15 AS VARCHAR(16)), card_theme),"
        " federation_visibility = COALESCE(CAST($16 AS VARCHAR(16)), federation_visibility),"
        " fediverse_discoverable = COALESCE(CAST($17 AS BOOLEAN), fediverse_discoverable)"
        f" WHERE id = $1 AND user_id = $2 RETURNING {_COLUMNS}",
        link_id,
        user_id,
        prompt,
        paused,
        follow_ups,
        paused_until,
        hide_dates,
        muted,
        crosspost,
        crosspost_cw,
        now,
        fediverse,
        senders,
        language,
        card_theme,
        federation_visibility,
        fediverse_discoverable,
    )


async def has_fediverse_account(conn: Connection, user_id: str) -> bool:
    """Whether the creator has a connected Mastodon or Misskey account to post answers to."""
    row = await conn.fetchrow(
        "SELECT 1 FROM fediverse_accounts WHERE user_id = $1 AND disconnected_at IS NULL LIMIT 1",
        user_id,
    )
    return row is not None


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


async def posting_target(conn: Connection, link_id: str) -> Row | None:
    """The link's owner, whether it accepts messages, what happens to a message with a
    muted word (``muted``: 'filter' or 'drop'), and whether the owner's account is being
    deleted (``disabled``), and who may send (``senders``: 'anyone' or 'signed_in')."""
    return await conn.fetchrow(
        "SELECT l.user_id, l.paused, l.muted, l.senders, EXISTS (SELECT 1 FROM account_deletions d"
        " WHERE d.user_id = l.user_id) AS disabled FROM links l WHERE l.id = $1",
        link_id,
    )
