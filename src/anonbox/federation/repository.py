"""SQL for the fediverse: actors' keys, followers, remote keys, blocked servers, the
answers sent, and the deliveries the courier makes. Both dialects read every statement."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row, insert_many, placeholders
from anonbox.notifications import repository as deliveries

# --- actors ------------------------------------------------------------------------------

_FROM_PROFILE = (
    " FROM links l JOIN users u ON u.id = l.user_id"
    " LEFT JOIN avatars a ON a.user_id = u.id"
    " LEFT JOIN federation_actors f ON f.link_id = l.id"
)
_PROFILE_COLUMNS = (
    "l.id AS link_id, l.user_id, l.prompt, l.fediverse, u.display_name,"
    " a.id AS avatar_id, l.fediverse_discoverable, l.created_at AS link_created_at,"
    " f.public_key, f.private_key, f.told_state,"
    " EXISTS (SELECT 1 FROM account_deletions d WHERE d.user_id = l.user_id) AS disabled"
)
_PROFILE = f"SELECT {_PROFILE_COLUMNS}{_FROM_PROFILE}"
# Everything the actor document is made of, as one text (``$2``: the document's shape,
# ``activities.ACTOR_SHAPE``): what followers were last told is this, kept in
# ``told_state``; when it differs, they are sent an Update. The prompt's length comes
# before it, so no two different states read the same.
_STATE = (
    "CAST($2 AS VARCHAR(16)) || '|'"
    " || CASE WHEN l.fediverse_discoverable THEN '1' ELSE '0' END || '|'"
    " || COALESCE(a.id, '') || '|' || CAST(LENGTH(l.prompt) AS VARCHAR(8)) || '|'"
    " || l.prompt || '|' || COALESCE(u.display_name, '')"
)


async def tell_as_now(conn: Connection, *, link_id: str, shape: str) -> None:
    """Count the actor's followers as told of it as it is now: an actor started afresh
    has none, and its first follower reads it whole (no Update owed to anyone)."""
    await conn.execute(
        f"UPDATE federation_actors SET told_state = (SELECT {_STATE}"  # noqa: S608 - constants
        " FROM links l JOIN users u ON u.id = l.user_id"
        " LEFT JOIN avatars a ON a.user_id = u.id WHERE l.id = $1 LIMIT 1)"
        " WHERE link_id = $1",
        link_id,
        shape,
    )


async def profile(conn: Connection, link_id: str) -> Row | None:
    """The link with what its actor shows and its keys (null until first followable)."""
    return await conn.fetchrow(_PROFILE + " WHERE l.id = $1", link_id)


async def has_actor(conn: Connection, link_id: str) -> bool:
    found = await conn.fetchrow("SELECT 1 FROM federation_actors WHERE link_id = $1", link_id)
    return found is not None


async def insert_actor(
    conn: Connection,
    *,
    link_id: str,
    private_key: str,
    public_key: str,
    shape: str,
    now: int,
) -> None:
    """The link's actor, its followers told of it as it is now (there are none yet)."""
    await conn.execute(
        "INSERT INTO federation_actors"  # noqa: S608 - constant columns
        " (link_id, private_key, public_key, told_state, created_at)"
        f" SELECT l.id, $3, $4, {_STATE}, $5"
        " FROM links l JOIN users u ON u.id = l.user_id"
        " LEFT JOIN avatars a ON a.user_id = u.id WHERE l.id = $1"
        " ON CONFLICT (link_id) DO NOTHING",
        link_id,
        shape,
        private_key,
        public_key,
        now,
    )


async def private_key(conn: Connection, link_id: str) -> str | None:
    row = await conn.fetchrow(
        "SELECT private_key FROM federation_actors WHERE link_id = $1", link_id
    )
    return None if row is None or not row["private_key"] else str(row["private_key"])


async def changed_actors(conn: Connection, shape: str, limit: int = 100) -> Sequence[Row]:
    """Followed actors whose document differs from what followers were last told (the
    name, the prompt, the picture, discoverable, or ``shape``), with it as ``state``."""
    return await conn.fetch(
        f"SELECT * FROM (SELECT {_PROFILE_COLUMNS}, {_STATE} AS state{_FROM_PROFILE}"  # noqa: S608
        " WHERE l.fediverse"
        " AND EXISTS (SELECT 1 FROM federation_followers w WHERE w.link_id = l.id)) p"
        " WHERE COALESCE(p.told_state, '') <> p.state LIMIT $1",
        limit,
        shape,
    )


async def mark_told(conn: Connection, *, link_id: str, state: str, was: str | None) -> bool:
    """Record that followers were told ``state``, if what they were told is still ``was``
    (False: another instance told them meanwhile)."""
    changed = await conn.execute(
        "UPDATE federation_actors SET told_state = $2"
        " WHERE link_id = $1 AND COALESCE(told_state, '') = COALESCE($3, '')",
        link_id,
        state,
        was,
    )
    return changed == 1


async def followable_count(conn: Connection) -> int:
    row = await conn.fetchrow("SELECT COUNT(*) AS n FROM links WHERE fediverse")
    return 0 if row is None else int(row["n"])


# --- followers ---------------------------------------------------------------------------


async def add_follower(
    conn: Connection,
    *,
    link_id: str,
    actor_id: str,
    inbox: str,
    shared_inbox: str | None,
    domain: str,
    now: int,
) -> None:
    await conn.execute(
        "INSERT INTO federation_followers"
        " (link_id, actor_id, inbox, shared_inbox, domain, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (link_id, actor_id)"
        " DO UPDATE SET inbox = excluded.inbox, shared_inbox = excluded.shared_inbox",
        link_id,
        actor_id,
        inbox,
        shared_inbox,
        domain,
        now,
    )


async def remove_follower(conn: Connection, *, link_id: str, actor_id: str) -> int:
    return await conn.execute(
        "DELETE FROM federation_followers WHERE link_id = $1 AND actor_id = $2",
        link_id,
        actor_id,
    )


async def follower_count(conn: Connection, link_id: str) -> int:
    row = await conn.fetchrow(
        "SELECT COUNT(*) AS n FROM federation_followers WHERE link_id = $1", link_id
    )
    return 0 if row is None else int(row["n"])


async def inboxes(conn: Connection, link_id: str) -> list[str]:
    """Where the link's followers are reached: one shared inbox per server, else each
    follower's own."""
    rows = await conn.fetch(
        "SELECT DISTINCT COALESCE(shared_inbox, inbox) AS inbox FROM federation_followers"
        " WHERE link_id = $1 ORDER BY 1",
        link_id,
    )
    return [str(row["inbox"]) for row in rows]


# --- remote keys ---------------------------------------------------------------------------


async def remote_key(conn: Connection, key_id: str) -> Row | None:
    """A remote actor's key as last read, with its inboxes and when that reading expires
    (``inbox`` and ``expires_at`` are null for keys read before they were kept)."""
    return await conn.fetchrow(
        "SELECT actor_id, public_key, inbox, shared_inbox, expires_at"
        " FROM federation_remote_keys WHERE key_id = $1",
        key_id,
    )


async def store_remote_key(
    conn: Connection,
    *,
    key_id: str,
    actor_id: str,
    public_key: str,
    inbox: str,
    shared_inbox: str | None,
    now: int,
    expires_at: int,
) -> None:
    await conn.execute(
        "INSERT INTO federation_remote_keys (key_id, actor_id, public_key, inbox,"
        " shared_inbox, fetched_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)"
        " ON CONFLICT (key_id) DO UPDATE SET actor_id = excluded.actor_id,"
        " public_key = excluded.public_key, inbox = excluded.inbox,"
        " shared_inbox = excluded.shared_inbox, fetched_at = excluded.fetched_at,"
        " expires_at = excluded.expires_at",
        key_id,
        actor_id,
        public_key,
        inbox,
        shared_inbox,
        now,
        expires_at,
    )


# --- remote servers --------------------------------------------------------------------------


async def signature_standard(conn: Connection, host: str) -> str | None:
    """Which signature standard the server at ``host`` was last found to accept, if known."""
    row = await conn.fetchrow(
        "SELECT signature_standard FROM federation_servers WHERE host = $1", host
    )
    return None if row is None else str(row["signature_standard"])


async def remember_signature_standard(
    conn: Connection, *, host: str, standard: str, now: int
) -> None:
    await conn.execute(
        "INSERT INTO federation_servers (host, signature_standard, checked_at)"
        " VALUES ($1, $2, $3) ON CONFLICT (host) DO UPDATE SET"
        " signature_standard = excluded.signature_standard, checked_at = excluded.checked_at",
        host,
        standard,
        now,
    )


# --- signatures seen (each counts once) ----------------------------------------------------


async def signature_seen(conn: Connection, fingerprint: str) -> bool:
    found = await conn.fetchrow(
        "SELECT 1 FROM federation_signatures WHERE fingerprint = $1", fingerprint
    )
    return found is not None


async def remember_signature(conn: Connection, *, fingerprint: str, until: int) -> bool:
    """Remember a signature until ``until``; False if it is remembered already (the key
    is unique: of two parallel inserts, one waits for the other and then inserts nothing)."""
    added = await conn.execute(
        "INSERT INTO federation_signatures (fingerprint, expires_at) VALUES ($1, $2)"
        " ON CONFLICT (fingerprint) DO NOTHING",
        fingerprint,
        until,
    )
    return added == 1


async def forget_signatures(conn: Connection, *, before: int) -> int:
    return await conn.execute("DELETE FROM federation_signatures WHERE expires_at < $1", before)


# --- blocked servers -----------------------------------------------------------------------


async def blocked_among(conn: Connection, domains: Sequence[str]) -> bool:
    if not domains:
        return False
    found = await conn.fetchrow(
        "SELECT 1 FROM federation_blocked_domains"  # noqa: S608 - placeholders only
        f" WHERE domain IN ({placeholders(1, len(domains))}) LIMIT 1",
        *domains,
    )
    return found is not None


async def blocked_domains(conn: Connection) -> Sequence[Row]:
    return await conn.fetch(
        "SELECT domain, created_at FROM federation_blocked_domains ORDER BY domain"
    )


async def block_domain(conn: Connection, *, domain: str, now: int) -> Row | None:
    """Block the server (None if it was already); its followers go, and what waits for it."""
    row = await conn.fetchrow(
        "INSERT INTO federation_blocked_domains (domain, created_at) VALUES ($1, $2)"
        " ON CONFLICT (domain) DO NOTHING RETURNING domain, created_at",
        domain,
        now,
    )
    suffix = f"%.{domain}"
    await conn.execute(
        "DELETE FROM federation_followers WHERE domain = $1 OR domain LIKE $2", domain, suffix
    )
    await conn.execute(
        "UPDATE federation_deliveries SET status = 'failed', finished_at = $3,"
        " error = 'blocked' WHERE status = 'pending' AND (inbox LIKE $1 OR inbox LIKE $2)",
        f"%://{domain}/%",
        f"%.{domain}/%",
        now,
    )
    return row


async def unblock_domain(conn: Connection, domain: str) -> int:
    return await conn.execute("DELETE FROM federation_blocked_domains WHERE domain = $1", domain)


# --- answers sent (their SQL as Notes: ``notes.repository``) -------------------------------


async def links_with_followers(conn: Connection, link_ids: Sequence[str]) -> set[str]:
    if not link_ids:
        return set()
    rows = await conn.fetch(
        "SELECT DISTINCT l.id FROM links l JOIN federation_actors a ON a.link_id = l.id"  # noqa: S608
        f" WHERE l.fediverse AND l.id IN ({placeholders(1, len(link_ids))})"
        " AND EXISTS (SELECT 1 FROM federation_followers w WHERE w.link_id = l.id)",
        *link_ids,
    )
    return {str(row["id"]) for row in rows}


async def record_sent(
    conn: Connection, *, reply_id: str, link_id: str, message_id: str, now: int
) -> None:
    await conn.execute(
        "INSERT INTO federation_notes (reply_id, link_id, message_id, created_at)"
        " VALUES ($1, $2, $3, $4) ON CONFLICT (reply_id) DO NOTHING",
        reply_id,
        link_id,
        message_id,
        now,
    )


async def deleted_answers(conn: Connection, limit: int = 100) -> Sequence[Row]:
    """Answers sent to followers that no longer exist."""
    return await conn.fetch(
        "SELECT n.reply_id, n.link_id, l.user_id, l.federation_visibility AS visibility"
        " FROM federation_notes n"
        " JOIN links l ON l.id = n.link_id"
        " WHERE NOT EXISTS (SELECT 1 FROM replies r WHERE r.id = n.reply_id) LIMIT $1",
        limit,
    )


async def forget_sent(conn: Connection, reply_id: str) -> int:
    return await conn.execute("DELETE FROM federation_notes WHERE reply_id = $1", reply_id)


# --- deliveries ----------------------------------------------------------------------------

NewDelivery = tuple[str, str, str, str, str, int]  # id, user_id, link_id, inbox, payload, now


async def insert_deliveries(conn: Connection, rows: Sequence[NewDelivery]) -> None:
    await insert_many(
        conn,
        "federation_deliveries",
        ("id", "user_id", "link_id", "inbox", "payload", "next_attempt_at", "created_at"),
        [(*row, row[-1]) for row in rows],
    )


async def due_deliveries(
    conn: Connection, now: int, limit: int, busy: Sequence[str] = ()
) -> Sequence[Row]:
    skip = f" AND user_id NOT IN ({placeholders(3, len(busy))})" if busy else ""
    return await conn.fetch(
        "SELECT id, user_id, link_id, inbox, payload, attempts, created_at, next_attempt_at"  # noqa: S608
        " FROM federation_deliveries WHERE status = 'pending' AND next_attempt_at <= $1"
        f"{skip} ORDER BY next_attempt_at, id LIMIT $2",
        now,
        limit,
        *busy,
    )


async def claim_delivery(conn: Connection, *, delivery_id: str, seen_at: int, until: int) -> bool:
    """Take a delivery for one attempt (until ``until``); False if another instance has."""
    return await deliveries.claim_delivery(
        conn, "federation_deliveries", delivery_id=delivery_id, seen_at=seen_at, until=until
    )


async def finish_attempt(
    conn: Connection,
    *,
    delivery_id: str,
    status: str,
    attempts: int,
    next_attempt_at: int,
    error: str | None,
    finished_at: int | None,
) -> None:
    await conn.execute(
        "UPDATE federation_deliveries SET status = $2, attempts = $3, next_attempt_at = $4,"
        " error = $5, finished_at = $6 WHERE id = $1",
        delivery_id,
        status,
        attempts,
        next_attempt_at,
        error,
        finished_at,
    )


async def purge_finished(conn: Connection, before: int) -> int:
    return await conn.execute(
        "DELETE FROM federation_deliveries WHERE status <> 'pending' AND finished_at < $1", before
    )
