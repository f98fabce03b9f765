"""SQL for messages and replies (the creator's likes: ``messages.likes.repository``).
Every statement names the whole chain link → message → reply, so a row under another
link is simply not found."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from anonbox.core.database import Connection, Database, Row
from anonbox.outbox import repository as events
from anonbox.outbox.schemas import Kind


class NewMessage(NamedTuple):
    id: str
    link_id: str
    content: str
    created_at: int
    sender_epoch: int | None
    sender_hash: str | None
    sender_network_hash: str | None


class DroppedMessage(NamedTuple):
    """What is kept of a dropped message: that its id exists under its link."""

    id: str
    link_id: str
    created_at: int


class FilteredMessage(NamedTuple):
    """A message with a muted word, kept in the link's filtered folder
    (``filtered_messages``): stored as a message is, without an event."""

    id: str
    link_id: str
    content: str
    created_at: int
    sender_epoch: int | None
    sender_hash: str | None
    sender_network_hash: str | None


Post = NewMessage | DroppedMessage | FilteredMessage

# Many messages in one statement (one transaction, one fsync): the rows travel as one
# parameter, which each database unpacks its own way; the join drops rows whose link is gone.
_INSERT_MANY = {
    "sqlite": (
        "INSERT INTO messages (id, link_id, content, created_at, sender_epoch, sender_hash,"
        " sender_network_hash)"
        " SELECT r.value ->> 0, l.id, r.value ->> 2, r.value ->> 3, r.value ->> 4, r.value ->> 5,"
        " r.value ->> 6"
        " FROM json_each($1) r JOIN links l ON l.id = r.value ->> 1"
        " RETURNING id"
    ),
    # One statement: the messages, their events (the outbox) and a notification per link
    # (delivered on commit), in one round trip.
    "postgresql": (
        "WITH m AS ("  # noqa: S608 - the outbox's fragments
        " INSERT INTO messages (id, link_id, content, created_at, sender_epoch, sender_hash,"
        " sender_network_hash)"
        " SELECT r.id, l.id, r.content, r.created_at, r.sender_epoch, r.sender_hash,"
        " r.sender_network_hash"
        " FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::int[], $6::text[],"
        " $7::text[])"
        " AS r(id, link_id, content, created_at, sender_epoch, sender_hash, sender_network_hash)"
        " JOIN links l ON l.id = r.link_id"
        " RETURNING id, link_id, created_at),"
        f" e AS ( {events.message_created_events('m')})"
        f" SELECT m.id, {events.notify_links('m')} AS notified FROM m"
    ),
}


async def insert_message(conn: Connection, message: Post) -> bool:
    """Insert under its link, with its event (in the caller's transaction); False when
    there is no such link (it may just have gone)."""
    if isinstance(message, DroppedMessage):
        inserted = await conn.execute(
            "INSERT INTO dropped_messages (id, link_id, created_at)"
            " SELECT $1, id, $3 FROM links WHERE id = $2",
            *message,
        )
    elif isinstance(message, FilteredMessage):
        inserted = await conn.execute(
            "INSERT INTO filtered_messages (id, link_id, content, created_at, sender_epoch,"
            " sender_hash, sender_network_hash, filtered_at)"
            " SELECT $1, id, $3, $4, $5, $6, $7, $4 FROM links WHERE id = $2",
            *message,
        )
    else:
        inserted = await conn.execute(
            "INSERT INTO messages (id, link_id, content, created_at, sender_epoch, sender_hash,"
            " sender_network_hash) SELECT $1, id, $3, $4, $5, $6, $7 FROM links WHERE id = $2",
            *message,
        )
        if inserted:
            await events.record_new_messages(conn, [message.id], [message.link_id])
    return inserted == 1


_INSERT_DROPPED_MANY = {
    "sqlite": (
        "INSERT INTO dropped_messages (id, link_id, created_at)"
        " SELECT r.value ->> 0, l.id, r.value ->> 2"
        " FROM json_each($1) r JOIN links l ON l.id = r.value ->> 1"
        " RETURNING id"
    ),
    "postgresql": (
        "INSERT INTO dropped_messages (id, link_id, created_at)"
        " SELECT r.id, l.id, r.created_at"
        " FROM unnest($1::text[], $2::text[], $3::bigint[]) AS r(id, link_id, created_at)"
        " JOIN links l ON l.id = r.link_id"
        " RETURNING id"
    ),
}


_INSERT_FILTERED_MANY = {
    "sqlite": (
        "INSERT INTO filtered_messages (id, link_id, content, created_at, sender_epoch,"
        " sender_hash, sender_network_hash, filtered_at)"
        " SELECT r.value ->> 0, l.id, r.value ->> 2, r.value ->> 3, r.value ->> 4,"
        " r.value ->> 5, r.value ->> 6, r.value ->> 3"
        " FROM json_each($1) r JOIN links l ON l.id = r.value ->> 1"
        " RETURNING id"
    ),
    "postgresql": (
        "INSERT INTO filtered_messages (id, link_id, content, created_at, sender_epoch,"
        " sender_hash, sender_network_hash, filtered_at)"
        " SELECT r.id, l.id, r.content, r.created_at, r.sender_epoch, r.sender_hash,"
        " r.sender_network_hash, r.created_at"
        " FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::int[], $6::text[],"
        " $7::text[])"
        " AS r(id, link_id, content, created_at, sender_epoch, sender_hash, sender_network_hash)"
        " JOIN links l ON l.id = r.link_id"
        " RETURNING id"
    ),
}


async def _insert_many(
    conn: Connection, sql: dict[str, str], rows: Sequence[NamedTuple]
) -> set[str]:
    if conn.dialect == "sqlite":
        found = await conn.fetch(sql[conn.dialect], msgspec.json.encode(rows).decode())
    else:
        found = await conn.fetch(sql[conn.dialect], *(list(c) for c in zip(*rows, strict=True)))
    return {row["id"] for row in found}


async def insert_posts(db: Database, posts: Sequence[Post]) -> list[bool]:
    """Insert stored, filtered and dropped messages alike, all in one transaction (one
    statement for each kind present); for each, False when its link no longer exists."""
    kept = [post for post in posts if isinstance(post, NewMessage)]
    dropped = [post for post in posts if isinstance(post, DroppedMessage)]
    filtered = [post for post in posts if isinstance(post, FilteredMessage)]
    present = [
        (sql, rows)
        for sql, rows in (
            (_INSERT_MANY, kept),
            (_INSERT_DROPPED_MANY, dropped),
            (_INSERT_FILTERED_MANY, filtered),
        )
        if rows
    ]
    # One kind is one statement, committed on its own; but on SQLite the stored messages'
    # events are a second statement, so in the same transaction (on PostgreSQL they are
    # part of the one insert: see _INSERT_MANY).
    if len(present) == 1 and not (kept and db.dialect == "sqlite"):
        [(sql, rows)] = present
        inserted = await _insert_many(db, sql, rows)
    else:
        async with db.transaction() as tx:
            inserted = await _insert_many(tx, _INSERT_MANY, kept) if kept else set()
            if kept and db.dialect == "sqlite":
                await events.record_new_messages(
                    tx, sorted(inserted), [post.link_id for post in kept]
                )
            if dropped:
                inserted |= await _insert_many(tx, _INSERT_DROPPED_MANY, dropped)
            if filtered:
                inserted |= await _insert_many(tx, _INSERT_FILTERED_MANY, filtered)
    return [post.id in inserted for post in posts]


async def idempotent_original(conn: Connection, *, link_id: str, key: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT request_hash, message_id, created_at FROM idempotency_keys"
        " WHERE link_id = $1 AND key = $2",
        link_id,
        key,
    )


async def remember_idempotent(
    conn: Connection,
    *,
    link_id: str,
    key: str,
    request_hash: str,
    message_id: str,
    created_at: int,
) -> bool:
    """Record the answer to a keyed post; False when a post with that key got there first."""
    inserted = await conn.execute(
        "INSERT INTO idempotency_keys (link_id, key, request_hash, message_id, created_at)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (link_id, key) DO NOTHING",
        link_id,
        key,
        request_hash,
        message_id,
        created_at,
    )
    return inserted == 1


async def _delete_telling(conn: Connection, *, where: str, args: Sequence[object], now: int) -> int:
    """Delete the link's messages matching ``where`` (about ``messages``; ``$1`` is the
    link, ``$2``… are ``args[1:]``, and the last parameter is ``now``), each with a
    ``message.deleted`` event, as a single deletion has: an open dashboard drops them and
    webhooks hear of them. How many went."""
    at = f"CAST(${len(args) + 1} AS BIGINT)"
    if conn.dialect == "postgresql":  # one statement: exactly the rows deleted get events
        row = await conn.fetchrow(
            f"WITH gone AS (DELETE FROM messages WHERE link_id = $1 AND ({where})"  # noqa: S608
            " RETURNING id),"
            f" told AS ({events.INSERT_MESSAGE_EVENTS}"
            " SELECT (SELECT user_id FROM links WHERE id = $1), CAST($1 AS VARCHAR(16)),"
            f" '{Kind.MESSAGE_DELETED}',"
            f" id, {at} FROM gone ORDER BY id)"
            " SELECT count(*) AS n FROM gone",
            *args,
            now,
        )
        deleted = 0 if row is None else int(row["n"])
        if deleted:
            await events.notify(conn, [f"link:{args[0]}"])
        return deleted
    # SQLite has one writer: the events, then the rows, in the caller's transaction.
    await conn.execute(
        f"{events.INSERT_MESSAGE_EVENTS}"  # noqa: S608 - constant kinds and ours
        " SELECT (SELECT user_id FROM links WHERE id = $1), CAST($1 AS VARCHAR(16)),"
        f" '{Kind.MESSAGE_DELETED}',"
        f" id, {at} FROM messages WHERE link_id = $1 AND ({where}) ORDER BY id",
        *args,
        now,
    )
    return await conn.execute(
        f"DELETE FROM messages WHERE link_id = $1 AND ({where})",  # noqa: S608 - ours
        *args,
    )


async def delete_unanswered(conn: Connection, *, link_id: str, now: int) -> int:
    return await _delete_telling(conn, where="reply_count = 0", args=(link_id,), now=now)


# For the creator's writes, which check ownership in their own statement and ask why only
# when they find nothing (``links.availability.require_owner``): true only while the link
# {link} is the user {owner}'s and in use. Each such statement names its own parameters
# (here $2 and $3; the likes' in ``messages.likes.repository``).
LINK_OWNED_BY = (
    "EXISTS (SELECT 1 FROM links l WHERE l.id = {link} AND l.user_id = {owner}"
    " AND NOT EXISTS (SELECT 1 FROM account_deletions d WHERE d.user_id = l.user_id))"
)
_OWNED = LINK_OWNED_BY.format(link="$2", owner="$3")
_COUNT_OWNED_REPLY = (
    "UPDATE messages SET reply_count = reply_count + 1 WHERE id = $1"  # noqa: S608 - constants
    + " AND link_id = $2 AND "
    + _OWNED
)


class NewReply(NamedTuple):
    """A creator's reply, as the group commit hands it over (``messages.service.reply``)."""

    message_id: str
    link_id: str
    owner_id: str
    reply_id: str
    content: str
    created_at: int
    # The message's answer page id, used if this is its first reply
    # (``messages.answers.service.new_answer_id``); a published answer keeps its own.
    answer_id: str


# PostgreSQL writes a batch of replies in one statement: counts them on their messages
# (only where the message is under the link and the link is the owner's and in use), then
# inserts the replies that were counted, their ``reply.created`` events and one
# notification per link; it returns the ids of the replies written. The UPDATE takes the
# row locks, so a message deleted meanwhile counts nothing and gets no reply. The events
# and replies take the link id from the row, not from the path: a parameter of any length
# (the document allows ids up to 64 characters) would not fit events.link_id.
_ADD_REPLIES_PG = (
    "WITH b AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],"  # noqa: S608
    " $5::text[], $6::bigint[], $7::text[]) AS b(message_id, link_id, owner_id, reply_id,"
    " content, created_at, answer_id)),"
    " m AS (UPDATE messages SET reply_count = messages.reply_count + c.n"
    " FROM (SELECT message_id, link_id, owner_id, count(*) AS n FROM b"
    " GROUP BY message_id, link_id, owner_id) c"
    " WHERE messages.id = c.message_id AND messages.link_id = c.link_id AND "
    + LINK_OWNED_BY.format(link="messages.link_id", owner="c.owner_id")
    + " RETURNING messages.id, messages.link_id, c.owner_id),"  # noqa: S608 - constants
    " a AS (SELECT b.reply_id, m.id AS message_id, m.link_id, b.owner_id, b.content,"
    " b.created_at, b.answer_id"
    " FROM b JOIN m ON m.id = b.message_id AND m.owner_id = b.owner_id),"
    " r AS (INSERT INTO replies (id, message_id, content, created_at)"
    " SELECT reply_id, message_id, content, created_at FROM a),"
    # A message's first reply publishes it: one answer row, one id (its first reply's).
    " p AS (INSERT INTO answers (id, link_id, message_id)"
    " SELECT DISTINCT ON (message_id) answer_id, link_id, message_id FROM a"
    " ORDER BY message_id, reply_id ON CONFLICT (message_id) DO NOTHING),"
    f" e AS ({events.INSERT_EVENTS}"
    " SELECT owner_id, link_id, $8, message_id, reply_id, created_at FROM a ORDER BY reply_id)"
    " SELECT a.reply_id, (SELECT count(pg_notify($9, 'link:' || d.link_id))"
    " FROM (SELECT DISTINCT link_id FROM a) d) AS notified FROM a"
)


async def add_replies(db: Database, replies: Sequence[NewReply]) -> list[bool]:
    """Write a batch of replies in one transaction (one commit for all of them), each
    counted on its message, with its event, a message's first reply publishing its answer
    (``answers``; one answered before keeps its row); per reply, whether it was written
    (False: no such message under the link, or the link is not the owner's or not in use)."""
    if db.dialect == "postgresql":
        written = await db.fetch(
            _ADD_REPLIES_PG,
            *(list(column) for column in zip(*replies, strict=True)),
            Kind.REPLY_CREATED,
            events.NOTIFY_CHANNEL,
        )
        ids = {row["reply_id"] for row in written}
        return [reply.reply_id in ids for reply in replies]
    added: list[bool] = []
    async with db.transaction() as tx:  # SQLite: the same four statements a reply
        for reply in replies:
            counted = await tx.execute(
                _COUNT_OWNED_REPLY, reply.message_id, reply.link_id, reply.owner_id
            )
            if counted == 1:
                await insert_reply(
                    tx,
                    reply_id=reply.reply_id,
                    message_id=reply.message_id,
                    content=reply.content,
                    created_at=reply.created_at,
                )
                await tx.execute(
                    "INSERT INTO answers (id, link_id, message_id) VALUES ($1, $2, $3)"
                    " ON CONFLICT (message_id) DO NOTHING",
                    reply.answer_id,
                    reply.link_id,
                    reply.message_id,
                )
                await events.record(
                    tx,
                    kind=Kind.REPLY_CREATED,
                    link_id=reply.link_id,
                    message_id=reply.message_id,
                    reply_id=reply.reply_id,
                    created_at=reply.created_at,
                )
            added.append(counted == 1)
    return added


_REMOVE_OWNED_REPLY = (
    "DELETE FROM replies WHERE id = $4 AND message_id = $1"  # noqa: S608 - constants
    " AND EXISTS (SELECT 1 FROM messages WHERE id = $1 AND link_id = $2) AND " + _OWNED
)
_REMOVE_REPLY_PG = (
    "WITH r AS (" + _REMOVE_OWNED_REPLY + " RETURNING message_id)"  # noqa: S608 - constants
    " UPDATE messages SET reply_count = reply_count - 1"
    " WHERE id IN (SELECT message_id FROM r) RETURNING id"
)


async def remove_reply(
    db: Database, *, link_id: str, owner_id: str, message_id: str, reply_id: str
) -> bool:
    """Delete a reply under a message of ``owner_id``'s live link, uncounted from the
    message; False when there is no such reply (or message, link, owner)."""
    if db.dialect == "postgresql":  # one statement, one round trip
        removed = await db.fetchrow(_REMOVE_REPLY_PG, message_id, link_id, owner_id, reply_id)
        return removed is not None
    async with db.transaction() as tx:
        if await tx.execute(_REMOVE_OWNED_REPLY, message_id, link_id, owner_id, reply_id) != 1:
            return False
        await count_reply(tx, link_id=link_id, message_id=message_id, delta=-1)
    return True


async def count_reply(conn: Connection, *, link_id: str, message_id: str, delta: int) -> bool:
    changed = await conn.execute(
        "UPDATE messages SET reply_count = reply_count + $3 WHERE id = $1 AND link_id = $2",
        message_id,
        link_id,
        delta,
    )
    return changed == 1


async def insert_reply(
    conn: Connection, *, reply_id: str, message_id: str, content: str, created_at: int
) -> None:
    await conn.execute(
        "INSERT INTO replies (id, message_id, content, created_at) VALUES ($1, $2, $3, $4)",
        reply_id,
        message_id,
        content,
        created_at,
    )


async def delete_message(conn: Connection, *, link_id: str, message_id: str) -> bool:
    deleted = await conn.execute(
        "DELETE FROM messages WHERE id = $1 AND link_id = $2", message_id, link_id
    )
    return deleted == 1


# A sender's follow-up through their receipt (``service.follow_up``).
async def withheld(conn: Connection, *, message_id: str, owner_id: str) -> tuple[bool, bool]:
    """Whether the creator never got this message (it was dropped) or blocked its sender:
    then a follow-up through its receipt is dropped too, whatever address it comes from;
    and whether the message waits in the filtered folder: then its follow-up joins it."""
    row = await conn.fetchrow(
        "SELECT EXISTS (SELECT 1 FROM dropped_messages WHERE id = $1)"
        " OR EXISTS (SELECT 1 FROM blocks WHERE message_id = $1"
        " AND (user_id = $2 OR user_id IS NULL)) AS withheld,"
        " EXISTS (SELECT 1 FROM filtered_messages WHERE id = $1) AS filtered",
        message_id,
        owner_id,
    )
    if row is None:
        return False, False
    return bool(row["withheld"]), bool(row["filtered"])


async def mark_follow_up(conn: Connection, *, message_id: str, original_id: str) -> None:
    """Thread a stored or filtered follow-up under its original (a dropped one has no row
    to mark)."""
    await conn.execute(
        "UPDATE messages SET follow_up_of = $2 WHERE id = $1", message_id, original_id
    )
    await conn.execute(
        "UPDATE filtered_messages SET follow_up_of = $2 WHERE id = $1", message_id, original_id
    )
