"""SQL of the inbox reads: the API's listing and threads, and the creator's dashboard
(filters, unread counts, the seen mark, the replies of a page at once, and the messages
stored since a given id). Every statement walks ``ix_messages_link_id_id``."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row, placeholders
from anonbox.messages.inbox.schemas import InboxFilter

# Counting stops here: a badge says "99+", and a huge inbox costs no more than this.
UNREAD_COUNT_CAP = 100

_CONDITIONS = {
    InboxFilter.ALL: "",
    InboxFilter.UNANSWERED: " AND reply_count = 0",
    InboxFilter.ANSWERED: " AND reply_count > 0",
    InboxFilter.LIKED: " AND like_by_creator",
}


async def answered_message(conn: Connection, *, link_id: str, message_id: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT m.id, m.content, m.like_by_creator, m.created_at, m.reply_count,"
        " a.id AS answer_id FROM messages m LEFT JOIN answers a ON a.message_id = m.id"
        " WHERE m.id = $1 AND m.link_id = $2 AND m.reply_count > 0",
        message_id,
        link_id,
    )


async def reply_count(conn: Connection, *, link_id: str, message_id: str) -> int | None:
    row = await conn.fetchrow(
        "SELECT reply_count FROM messages WHERE id = $1 AND link_id = $2", message_id, link_id
    )
    return None if row is None else int(row["reply_count"])


# A message's answer is looked up only when it has replies (the listing shows no answer
# without them, ``service.item_of``): a join probed ``answers`` for every message of the
# page, a third more of PostgreSQL's time for a page of unanswered ones (issue 43 item 5).
_INBOX = (
    "SELECT m.id, m.content, m.like_by_creator, m.created_at, m.reply_count, m.follow_up_of,"
    " CASE WHEN m.reply_count > 0 THEN"
    " (SELECT a.id FROM answers a WHERE a.message_id = m.id) END AS answer_id"
    " FROM messages m JOIN (SELECT id FROM messages WHERE link_id = $1{answered}{before}"
    " ORDER BY id DESC LIMIT $2) page ON page.id = m.id ORDER BY m.id DESC"
)


async def inbox_page(
    conn: Connection, *, link_id: str, before: str | None, limit: int, answered_only: bool
) -> Sequence[Row]:
    """Newest first, from just before the cursor id; walks an index, never OFFSET.

    The page's ids come from (link_id, id) alone, an index-only walk; only then are
    their rows read. Asked for the rows directly, PostgreSQL may walk the primary key
    instead and filter, skipping every newer message of every other link.
    """
    sql = _INBOX.format(
        answered=" AND reply_count > 0" if answered_only else "",
        before="" if before is None else " AND id < $3",
    )
    if before is None:
        return await conn.fetch(sql, link_id, limit)
    return await conn.fetch(sql, link_id, limit, before)


_REPLIES = "SELECT id, content, created_at FROM replies WHERE message_id = $1"


async def replies_page(
    conn: Connection, *, message_id: str, before: str | None, limit: int
) -> Sequence[Row]:
    if before is None:
        return await conn.fetch(_REPLIES + " ORDER BY id DESC LIMIT $2", message_id, limit)
    return await conn.fetch(
        _REPLIES + " AND id < $3 ORDER BY id DESC LIMIT $2", message_id, limit, before
    )


async def seen_mark(conn: Connection, link_id: str) -> str:
    row = await conn.fetchrow("SELECT seen_message_id FROM links WHERE id = $1", link_id)
    return "" if row is None or row["seen_message_id"] is None else str(row["seen_message_id"])


async def mark_seen(conn: Connection, *, link_id: str, message_id: str) -> None:
    """Move the mark up to ``message_id``; never down, so an older tab cannot unread."""
    await conn.execute(
        "UPDATE links SET seen_message_id = $2"
        " WHERE id = $1 AND (seen_message_id IS NULL OR seen_message_id < $2)",
        link_id,
        message_id,
    )


async def newest_id_up_to(conn: Connection, *, link_id: str, up_to: str) -> str:
    """The link's newest message id not above ``up_to`` ("" when there is none)."""
    row = await conn.fetchrow(
        "SELECT id FROM messages WHERE link_id = $1 AND id <= $2 ORDER BY id DESC LIMIT 1",
        link_id,
        up_to,
    )
    return "" if row is None else str(row["id"])


async def mark_opened(conn: Connection, *, link_id: str, message_id: str) -> None:
    """The message was opened: read, whatever the link's mark says."""
    await conn.execute(
        "UPDATE messages SET opened = $3 WHERE id = $1 AND link_id = $2 AND NOT opened",
        message_id,
        link_id,
        True,
    )


async def unread_count(conn: Connection, link_id: str) -> int:
    row = await conn.fetchrow(
        "SELECT COUNT(*) AS n FROM (SELECT 1 FROM messages WHERE link_id = $1 AND id > $2"
        " AND NOT opened LIMIT $3) capped",
        link_id,
        await seen_mark(conn, link_id),
        UNREAD_COUNT_CAP,
    )
    assert row is not None, "an aggregate always returns a row"
    return int(row["n"])


async def links_with_unread(conn: Connection, user_id: str) -> Sequence[Row]:
    """The creator's links, oldest (the default) first, each with its unread count."""
    return await conn.fetch(
        "SELECT l.id, l.prompt, l.paused,"
        " (SELECT COUNT(*) FROM (SELECT 1 FROM messages m WHERE m.link_id = l.id"
        "   AND m.id > COALESCE(l.seen_message_id, '') AND NOT m.opened LIMIT $2) capped)"
        " AS unread"
        " FROM links l WHERE l.user_id = $1 ORDER BY l.created_at, l.id",
        user_id,
        UNREAD_COUNT_CAP,
    )


async def dashboard_page(
    conn: Connection, *, link_id: str, which: InboxFilter, seen: str, before: str | None, limit: int
) -> Sequence[Row]:
    """Up to ``limit`` messages, newest first, keyset-paged; ``seen`` is the link's seen
    mark (for the unread filter)."""
    args: list[object] = [link_id, limit]

    def bound(value: str) -> str:
        args.append(value)
        return f"${len(args)}"

    where = "link_id = $1" + (
        f" AND id > {bound(seen)} AND NOT opened"
        if which is InboxFilter.UNREAD
        else _CONDITIONS[which]
    )
    if before:
        where += f" AND id < {bound(before)}"
    # Only fixed fragments are joined here; every value is bound.
    sql = f"SELECT id, content, created_at, like_by_creator, reply_count, follow_up_of, opened FROM messages WHERE {where} ORDER BY id DESC LIMIT $2"  # noqa: S608, E501
    return await conn.fetch(sql, *args)


async def dashboard_message(conn: Connection, *, link_id: str, message_id: str) -> Row | None:
    """One message of the link as the dashboard's page per message shows it."""
    return await conn.fetchrow(
        "SELECT id, content, created_at, like_by_creator, reply_count, follow_up_of, opened"
        " FROM messages WHERE id = $1 AND link_id = $2",
        message_id,
        link_id,
    )


async def answer_id(conn: Connection, message_id: str) -> str | None:
    """The id of the message's answer page (``answers``), if it was ever answered."""
    row = await conn.fetchrow("SELECT id FROM answers WHERE message_id = $1", message_id)
    return None if row is None else str(row["id"])


async def contents_of(conn: Connection, message_ids: list[str]) -> Sequence[Row]:
    """The text of these messages (those no longer in the inbox are absent)."""
    marks = placeholders(1, len(message_ids))
    return await conn.fetch(
        f"SELECT id, content FROM messages WHERE id IN ({marks})",  # noqa: S608 - placeholders only
        *message_ids,
    )


async def replies_of(conn: Connection, message_ids: list[str]) -> Sequence[Row]:
    """The replies of these messages, newest first."""
    marks = placeholders(1, len(message_ids))
    return await conn.fetch(
        f"SELECT id, message_id, content, created_at FROM replies WHERE message_id IN ({marks})"  # noqa: S608 - placeholders only
        " ORDER BY id DESC",
        *message_ids,
    )


async def since(conn: Connection, *, link_id: str, after: str, limit: int = 50) -> Sequence[Row]:
    """Messages stored under the link after ``after``, oldest first (for live updates)."""
    return await conn.fetch(
        "SELECT id, content, created_at FROM messages WHERE link_id = $1 AND id > $2"
        " ORDER BY id LIMIT $3",
        link_id,
        after,
        limit,
    )


async def newest_id(conn: Connection, link_id: str) -> str:
    row = await conn.fetchrow(
        "SELECT id FROM messages WHERE link_id = $1 ORDER BY id DESC LIMIT 1", link_id
    )
    return "" if row is None else str(row["id"])
