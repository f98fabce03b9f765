"""The inbox as the creator's dashboard shows it: filters, unread counts, the seen mark,
the replies of a page at once, and the messages stored since a given id.

A message is unread when its id is greater than its link's ``seen_message_id``
(ULIDs sort by time); opening the inbox moves the mark up to the newest message shown.
Every statement walks ``ix_messages_link_id_id``. Ownership is settled before these run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from anonbox.core.clock import isoformat_us
from anonbox.core.database import Connection, Row, placeholders
from anonbox.messages.schemas import InboxItem

# Counting stops here: a badge says "99+", and a huge inbox costs no more than this.
UNREAD_COUNT_CAP = 100
# How much of the message a follow-up follows its card shows.
FOLLOWED_EXCERPT_CHARACTERS = 80


class InboxFilter(StrEnum):
    ALL = "all"
    UNREAD = "unread"
    UNANSWERED = "unanswered"
    ANSWERED = "answered"
    LIKED = "liked"


_CONDITIONS = {
    InboxFilter.ALL: "",
    InboxFilter.UNANSWERED: " AND reply_count = 0",
    InboxFilter.ANSWERED: " AND reply_count > 0",
    InboxFilter.LIKED: " AND like_by_creator",
}


@dataclass(frozen=True, slots=True)
class Reply:
    id: str
    content: str
    created_at: str


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    content: str
    created_at: str
    liked: bool
    reply_count: int
    unread: bool
    replies: list[Reply]
    # A sender's follow-up through their receipt: the message it follows, and the start
    # of that message's text while it is still in the inbox (else None).
    follow_up_of: str | None = None
    follows: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    messages: list[Message]
    next_cursor: str | None
    seen_before: str  # the seen mark when the page was read ("" when nothing was seen)


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


async def unread_count(conn: Connection, link_id: str) -> int:
    row = await conn.fetchrow(
        "SELECT COUNT(*) AS n FROM (SELECT 1 FROM messages WHERE link_id = $1 AND id > $2"
        " LIMIT $3) capped",
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
        "   AND m.id > COALESCE(l.seen_message_id, '') LIMIT $2) capped) AS unread"
        " FROM links l WHERE l.user_id = $1 ORDER BY l.created_at, l.id",
        user_id,
        UNREAD_COUNT_CAP,
    )


async def page(
    conn: Connection, *, link_id: str, which: InboxFilter, before: str | None, limit: int
) -> Page:
    """Newest first, keyset-paged; each message with its replies (newest first)."""
    seen = await seen_mark(conn, link_id)
    args: list[object] = [link_id, limit + 1]

    def bound(value: str) -> str:
        args.append(value)
        return f"${len(args)}"

    where = "link_id = $1" + (
        f" AND id > {bound(seen)}" if which is InboxFilter.UNREAD else _CONDITIONS[which]
    )
    if before:
        where += f" AND id < {bound(before)}"
    # Only fixed fragments are joined here; every value is bound.
    sql = f"SELECT id, content, created_at, like_by_creator, reply_count, follow_up_of FROM messages WHERE {where} ORDER BY id DESC LIMIT $2"  # noqa: S608, E501
    rows = await conn.fetch(sql, *args)
    shown = rows[:limit]
    next_cursor = str(shown[-1]["id"]) if len(rows) > limit else None
    return Page(messages=await cards(conn, shown, seen), next_cursor=next_cursor, seen_before=seen)


async def cards(conn: Connection, rows: Sequence[Row], seen: str) -> list[Message]:
    """Message rows as the dashboard shows them (the inbox's page and search's), with
    their replies, and the messages the follow-ups among them follow, read in one query
    each; ``seen`` is the link's seen mark."""
    replies = await _replies_of(conn, [str(row["id"]) for row in rows if row["reply_count"] > 0])
    followed = await _excerpts_of(
        conn, sorted({str(r["follow_up_of"]) for r in rows if r["follow_up_of"]})
    )
    return [message_of(row, seen, replies, followed) for row in rows]


def message_of(
    row: Row, seen: str, replies: dict[str, list[Reply]], followed: dict[str, str]
) -> Message:
    """One message row as a dashboard card (``replies``: by message id, newest first;
    ``followed``: excerpts of the messages follow-ups follow, by id)."""
    follow_up_of = row["follow_up_of"]
    return Message(
        id=row["id"],
        content=row["content"],
        created_at=isoformat_us(row["created_at"]),
        liked=bool(row["like_by_creator"]),
        reply_count=int(row["reply_count"]),
        unread=row["id"] > seen,
        replies=replies.get(row["id"], []),
        follow_up_of=follow_up_of,
        follows=None if follow_up_of is None else followed.get(follow_up_of),
    )


def item_of(row: Row, *, thread: bool = False) -> InboxItem:
    """One message row as the API's inbox item (the inbox's and search's). ``thread``:
    show which message a follow-up follows (to the creator only: to anyone else two
    answered messages of one thread would be two messages of one sender)."""
    return InboxItem(
        id=row["id"],
        message_content=row["content"],
        like_by_creator=bool(row["like_by_creator"]),
        created_at=isoformat_us(row["created_at"]),
        reply_count=int(row["reply_count"]),
        follow_up_of=row["follow_up_of"] if thread else None,
    )


async def _excerpts_of(conn: Connection, message_ids: list[str]) -> dict[str, str]:
    """The start of these messages' text, by id (those no longer in the inbox are absent)."""
    if not message_ids:
        return {}
    marks = placeholders(1, len(message_ids))
    rows = await conn.fetch(
        f"SELECT id, content FROM messages WHERE id IN ({marks})",  # noqa: S608 - placeholders only
        *message_ids,
    )
    return {str(row["id"]): _excerpt(str(row["content"])) for row in rows}


def _excerpt(text: str) -> str:
    if len(text) <= FOLLOWED_EXCERPT_CHARACTERS:
        return text
    return text[: FOLLOWED_EXCERPT_CHARACTERS - 1].rstrip() + "…"


async def _replies_of(conn: Connection, message_ids: list[str]) -> dict[str, list[Reply]]:
    if not message_ids:
        return {}
    marks = placeholders(1, len(message_ids))
    rows = await conn.fetch(
        f"SELECT id, message_id, content, created_at FROM replies WHERE message_id IN ({marks})"  # noqa: S608 - placeholders only
        " ORDER BY id DESC",
        *message_ids,
    )
    found: dict[str, list[Reply]] = {}
    for row in rows:
        found.setdefault(row["message_id"], []).append(
            Reply(id=row["id"], content=row["content"], created_at=isoformat_us(row["created_at"]))
        )
    return found


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
