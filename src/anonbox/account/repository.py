"""SQL for the account as a whole: reading all of it out, scheduling its deletion, and
erasing every row it owns.

Exports read in keyset pages (``id > $after ORDER BY id LIMIT``), never all at once and
never with OFFSET. Nothing here reads a sender's hash or anything else about a sender.
"""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row
from anonbox.outbox import repository as events

# --- export ------------------------------------------------------------------------------


async def profile(conn: Connection, user_id: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT u.id, u.email, u.name, u.picture_url, u.google_sub, u.is_admin, u.created_at,"
        " u.language, u.time_zone, u.display_name, u.bio, a.id AS avatar_id FROM users u"
        " LEFT JOIN avatars a ON a.user_id = u.id WHERE u.id = $1",
        user_id,
    )


async def email_notice_choice(conn: Connection, user_id: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT mode, confirmed_address, updated_at FROM email_notice_settings WHERE user_id = $1",
        user_id,
    )


async def links(conn: Connection, user_id: str) -> Sequence[Row]:
    """Every column of the creator's links: whatever settings a link has are theirs."""
    return await conn.fetch(
        "SELECT * FROM links WHERE user_id = $1 ORDER BY created_at, id",
        user_id,
    )


async def boolean_columns(conn: Connection, table: str) -> set[str]:
    """The table's columns declared BOOLEAN: SQLite hands their values back as 0 and 1."""
    if conn.dialect != "sqlite":
        return set()  # PostgreSQL hands back booleans
    rows = await conn.fetch("SELECT name, type FROM pragma_table_info($1)", table)
    return {str(row["name"]) for row in rows if str(row["type"]).upper() == "BOOLEAN"}


async def messages_page(conn: Connection, *, link_id: str, after: str, limit: int) -> Sequence[Row]:
    """The link's messages after ``after``, oldest first: the columns the creator sees."""
    return await conn.fetch(
        "SELECT id, content, like_by_creator, reply_count, created_at FROM messages"
        " WHERE link_id = $1 AND id > $2 ORDER BY id LIMIT $3",
        link_id,
        after,
        limit,
    )


async def filtered_page(conn: Connection, *, link_id: str, after: str, limit: int) -> Sequence[Row]:
    """The link's filtered folder after ``after``, oldest first."""
    return await conn.fetch(
        "SELECT id, content, created_at, filtered_at FROM filtered_messages"
        " WHERE link_id = $1 AND id > $2 ORDER BY id LIMIT $3",
        link_id,
        after,
        limit,
    )


async def replies_between(
    conn: Connection, *, link_id: str, after: str, through: str
) -> Sequence[Row]:
    """The replies to the link's messages with ids in (after, through], oldest first."""
    return await conn.fetch(
        "SELECT r.message_id, r.id, r.content, r.created_at FROM replies r"
        " JOIN messages m ON m.id = r.message_id"
        " WHERE m.link_id = $1 AND m.id > $2 AND m.id <= $3 ORDER BY r.message_id, r.id",
        link_id,
        after,
        through,
    )


async def blocks_page(conn: Connection, *, user_id: str, after: str, limit: int) -> Sequence[Row]:
    return await conn.fetch(
        "SELECT id, message_excerpt, network, created_at FROM blocks"
        " WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3",
        user_id,
        after,
        limit,
    )


async def muted_words(conn: Connection, user_id: str) -> Sequence[Row]:
    return await conn.fetch(
        "SELECT id, word, created_at FROM muted_words WHERE user_id = $1 ORDER BY id", user_id
    )


async def api_keys_page(conn: Connection, *, user_id: str, after: str, limit: int) -> Sequence[Row]:
    return await conn.fetch(
        "SELECT id, name, last_chars, created_at, last_used_at, revoked_at FROM api_keys"
        " WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3",
        user_id,
        after,
        limit,
    )


async def webhooks(conn: Connection, user_id: str) -> Sequence[Row]:
    return await conn.fetch(
        "SELECT id, url, events, disabled_reason, created_at FROM webhook_endpoints"
        " WHERE user_id = $1 ORDER BY id",
        user_id,
    )


async def push_devices(conn: Connection, user_id: str) -> Sequence[Row]:
    return await conn.fetch(
        "SELECT created_at FROM push_subscriptions WHERE user_id = $1 ORDER BY created_at",
        user_id,
    )


# --- deletion ----------------------------------------------------------------------------


async def deletion_of(conn: Connection, user_id: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT requested_at, erase_at, claimed_until FROM account_deletions WHERE user_id = $1",
        user_id,
    )


async def schedule_deletion(
    conn: Connection, *, user_id: str, requested_at: int, erase_at: int
) -> None:
    """Schedule the erasure; asked again, the first date stands."""
    await conn.execute(
        "INSERT INTO account_deletions (user_id, requested_at, erase_at) VALUES ($1, $2, $3)"
        " ON CONFLICT (user_id) DO NOTHING",
        user_id,
        requested_at,
        erase_at,
    )


async def revoke_credentials(conn: Connection, *, user_id: str, now: int) -> list[str]:
    """Revoke every API key and session of the account; the ids of the sessions revoked."""
    await conn.execute(
        "UPDATE api_keys SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL",
        user_id,
        now,
    )
    rows = await conn.fetch(
        "UPDATE sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL"
        " RETURNING id",
        user_id,
        now,
    )
    return [str(row["id"]) for row in rows]


async def cancel_deletion(conn: Connection, *, user_id: str, now: int) -> bool:
    """Cancel, unless the erasure is due or has begun; False when nothing was cancelled."""
    cancelled = await conn.execute(
        "DELETE FROM account_deletions"
        " WHERE user_id = $1 AND claimed_until IS NULL AND erase_at > $2",
        user_id,
        now,
    )
    return cancelled == 1


async def due_deletions(conn: Connection, *, now: int, limit: int) -> list[str]:
    """Accounts whose erasure is due and that no instance holds a live claim on."""
    rows = await conn.fetch(
        "SELECT user_id FROM account_deletions WHERE erase_at <= $1"
        " AND (claimed_until IS NULL OR claimed_until < $1) ORDER BY erase_at LIMIT $2",
        now,
        limit,
    )
    return [str(row["user_id"]) for row in rows]


async def claim_erasure(conn: Connection, *, user_id: str, now: int, until: int) -> bool:
    """Take the erasure of a due account until ``until``: one conditional UPDATE, so of
    several instances asking at once exactly one gets it (or one whose claim ran out)."""
    claimed = await conn.execute(
        "UPDATE account_deletions SET claimed_until = $3 WHERE user_id = $1 AND erase_at <= $2"
        " AND (claimed_until IS NULL OR claimed_until < $2)",
        user_id,
        now,
        until,
    )
    return claimed == 1


async def renew_claim(conn: Connection, *, user_id: str, held_until: int, until: int) -> bool:
    """Extend a claim this instance still holds; False when another has taken it over."""
    renewed = await conn.execute(
        "UPDATE account_deletions SET claimed_until = $3 WHERE user_id = $1 AND claimed_until = $2",
        user_id,
        held_until,
        until,
    )
    return renewed == 1


async def link_ids_of(conn: Connection, user_id: str) -> list[str]:
    rows = await conn.fetch("SELECT id FROM links WHERE user_id = $1 ORDER BY id", user_id)
    return [str(row["id"]) for row in rows]


async def chunk_end(conn: Connection, *, link_id: str, size: int) -> str | None:
    """The id of the link's ``size``-th oldest message, or None when it has fewer."""
    row = await conn.fetchrow(
        "SELECT id FROM messages WHERE link_id = $1 ORDER BY id LIMIT 1 OFFSET $2",
        link_id,
        size - 1,
    )
    return None if row is None else str(row["id"])


async def erase_messages(conn: Connection, *, link_id: str, through: str | None) -> int:
    """Delete the link's messages up to ``through`` (all with None), the reports on them
    first (a report would otherwise outlive its message, detached), replies by cascade."""
    bound = "" if through is None else " AND id <= $2"
    args = (link_id,) if through is None else (link_id, through)
    await conn.execute(
        f"DELETE FROM reports WHERE message_id IN (SELECT id FROM messages WHERE link_id = $1{bound})",  # noqa: S608, E501 - ours
        *args,
    )
    return await conn.execute(
        f"DELETE FROM messages WHERE link_id = $1{bound}",  # noqa: S608 - ours
        *args,
    )


# Everything else the account owns, in an order no foreign key objects to. Each names the
# account by $1; the link ids go to the tombstones first, at $2.
_ERASE_REST = (
    "DELETE FROM reports WHERE message_id IN (SELECT m.id FROM messages m"
    " JOIN links l ON l.id = m.link_id WHERE l.user_id = $1)",
    "UPDATE reports SET resolved_by = NULL WHERE resolved_by = $1",
    "INSERT INTO link_tombstones (id, erased_at) SELECT id, $2 FROM links WHERE user_id = $1"
    " ON CONFLICT (id) DO NOTHING",
    events.ERASE_EVENTS,
    "DELETE FROM email_signin_tokens WHERE email = (SELECT email FROM users WHERE id = $1)",
    # Linked Mastodon and Misskey accounts, their tokens and their posts' deliveries.
    "DELETE FROM fediverse_accounts WHERE user_id = $1",
    "DELETE FROM fediverse_signins WHERE user_id = $1",
    # A followable link's actor outlives its link until it has said goodbye (federation's
    # chore sends it, then forgets the actor): what its followers were told (the name and
    # prompt) and the account's deliveries go now; its goodbye is not sent as the account's.
    "UPDATE federation_actors SET told_state = NULL"
    " WHERE link_id IN (SELECT id FROM links WHERE user_id = $1)",
    "DELETE FROM federation_deliveries WHERE user_id = $1",
    "DELETE FROM links WHERE user_id = $1",  # messages, replies, drops, idempotency records
    "DELETE FROM blocks WHERE user_id = $1",
    "DELETE FROM muted_words WHERE user_id = $1",
    "DELETE FROM muted_list_versions WHERE owner = $1",
    "DELETE FROM webhook_endpoints WHERE user_id = $1",  # and their deliveries
    "DELETE FROM push_subscriptions WHERE user_id = $1",  # and their deliveries
    "DELETE FROM email_notices WHERE user_id = $1",
    "DELETE FROM email_notice_settings WHERE user_id = $1",
    "DELETE FROM sessions WHERE user_id = $1",  # and their spent refresh tokens
    "DELETE FROM api_keys WHERE user_id = $1",
    "DELETE FROM avatars WHERE user_id = $1",
    "DELETE FROM users WHERE id = $1",  # and the account_deletions row
)


async def erase_rest(conn: Connection, *, user_id: str, now: int) -> None:
    for statement in _ERASE_REST:
        if "$2" in statement:
            await conn.execute(statement, user_id, now)
        else:
            await conn.execute(statement, user_id)


# --- preferences ---------------------------------------------------------------------------


async def preferences(conn: Connection, user_id: str) -> Row | None:
    return await conn.fetchrow("SELECT language, time_zone FROM users WHERE id = $1", user_id)


async def set_language_once(conn: Connection, user_id: str, language: str) -> None:
    """The first language only: a creator's own choice is never overwritten."""
    await conn.execute(
        "UPDATE users SET language = $2 WHERE id = $1 AND language IS NULL", user_id, language
    )


async def set_time_zone_once(conn: Connection, user_id: str, time_zone: str) -> None:
    """The first zone only, as ``set_language_once``."""
    await conn.execute(
        "UPDATE users SET time_zone = $2 WHERE id = $1 AND time_zone IS NULL", user_id, time_zone
    )


async def set_preferences(conn: Connection, user_id: str, language: str, time_zone: str) -> None:
    await conn.execute(
        "UPDATE users SET language = $2, time_zone = $3 WHERE id = $1",
        user_id,
        language,
        time_zone,
    )


# --- the public profile ----------------------------------------------------------------------


async def public_profile(conn: Connection, user_id: str) -> Row | None:
    return await conn.fetchrow("SELECT display_name, bio FROM users WHERE id = $1", user_id)


async def signed_in_as(conn: Connection, user_id: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT COALESCE(display_name, name) AS name FROM users WHERE id = $1", user_id
    )


async def set_public_profile(
    conn: Connection, user_id: str, *, display_name: str | None, bio: str | None, set_bio: bool
) -> Row | None:
    """Set the name (None keeps it) and, if ``set_bio``, the bio (None removes it)."""
    return await conn.fetchrow(
        "UPDATE users SET display_name = COALESCE($2, display_name),"
        " bio = CASE WHEN CAST($4 AS BOOLEAN) THEN $3 ELSE bio END"
        " WHERE id = $1 RETURNING display_name, bio",
        user_id,
        display_name,
        bio,
        set_bio,
    )


async def merge_search_index(conn: Connection) -> None:
    """SQLite: rewrite the full-text indexes into one segment each. A deleted row's
    trigrams stay in the segment that has them, behind a delete marker, until a merge
    drops them; PostgreSQL's trigram indexes lose dead entries at vacuum."""
    if conn.dialect != "sqlite":
        return
    await conn.execute("INSERT INTO messages_search (messages_search) VALUES ('optimize')")
    await conn.execute("INSERT INTO replies_search (replies_search) VALUES ('optimize')")


# --- the avatar ------------------------------------------------------------------------------


async def avatar_id(conn: Connection, user_id: str) -> str | None:
    row = await conn.fetchrow("SELECT id FROM avatars WHERE user_id = $1", user_id)
    return None if row is None else str(row["id"])


async def set_avatar(
    conn: Connection, *, user_id: str, avatar_id: str, image: bytes, now: int
) -> None:
    """The creator's picture, replacing any before (its address with it)."""
    await conn.execute(
        "INSERT INTO avatars (user_id, id, image, created_at) VALUES ($1, $2, $3, $4)"
        " ON CONFLICT (user_id) DO UPDATE SET id = excluded.id, image = excluded.image,"
        " created_at = excluded.created_at",
        user_id,
        avatar_id,
        image,
        now,
    )


async def delete_avatar(conn: Connection, user_id: str) -> None:
    await conn.execute("DELETE FROM avatars WHERE user_id = $1", user_id)


async def avatar_image(conn: Connection, avatar_id: str) -> bytes | None:
    """The stored picture at this address, unless its account is being deleted."""
    row = await conn.fetchrow(
        "SELECT a.image FROM avatars a WHERE a.id = $1 AND NOT EXISTS"
        " (SELECT 1 FROM account_deletions d WHERE d.user_id = a.user_id)",
        avatar_id,
    )
    return None if row is None else bytes(row["image"])
