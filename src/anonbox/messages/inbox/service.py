"""The inbox as the creator's dashboard shows it: filters, unread counts, the seen mark,
the replies of a page at once, and the messages stored since a given id; and the API's
listing of a link's messages and of a message's replies.

A message is unread when its id is greater than its link's ``seen_message_id`` (ULIDs
sort by time) and it has not been opened on its own page (``messages.opened``). Listing
the inbox reads nothing; "Mark all as read" moves the mark (issue 41).
Every statement walks ``ix_messages_link_id_id`` (``repository``). Ownership is settled
before these run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from anonbox.core.clock import isoformat_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.errors import NotFound
from anonbox.messages.inbox import repository
from anonbox.messages.inbox.schemas import (
    InboxFilter as InboxFilter,  # the pages: inbox.InboxFilter
)
from anonbox.messages.inbox.schemas import Message, Reply
from anonbox.messages.inbox.schemas import Page as Page  # the pages and search: inbox.Page
from anonbox.messages.schemas import InboxItem, InboxPage, ReplyOut, ReplyPage
from anonbox.outbox import repository as events

# How much of the message a follow-up follows its card shows.
FOLLOWED_EXCERPT_CHARACTERS = 80

_NO_MESSAGE = "No message with this id under this link"


def _next_cursor(rows: Sequence[Row], limit: int) -> str | None:
    return str(rows[limit - 1]["id"]) if len(rows) > limit else None


async def inbox(
    db: Database, *, link_id: str, cursor: str | None, limit: int, answered_only: bool
) -> InboxPage:
    """The creator sees every message; anyone else only the answered ones."""
    rows = await repository.inbox_page(
        db, link_id=link_id, before=cursor, limit=limit + 1, answered_only=answered_only
    )
    items = [item_of(row, thread=not answered_only) for row in rows[:limit]]
    return InboxPage(items=items, next_cursor=_next_cursor(rows, limit))


async def answered_message(db: Database, *, link_id: str, message_id: str) -> InboxItem | None:
    """One message of the link that has a reply (what anyone may see), or None."""
    row = await repository.answered_message(db, link_id=link_id, message_id=message_id)
    return None if row is None else item_of(row)


async def replies(
    db: Database, *, link_id: str, message_id: str, cursor: str | None, limit: int, is_creator: bool
) -> ReplyPage:
    count = await repository.reply_count(db, link_id=link_id, message_id=message_id)
    # An unanswered message is private to the creator: to others it does not exist.
    if count is None or (count == 0 and not is_creator):
        raise NotFound(_NO_MESSAGE)
    rows = await repository.replies_page(db, message_id=message_id, before=cursor, limit=limit + 1)
    items = [
        ReplyOut(
            message_id=message_id,
            reply_message_id=row["id"],
            message_content=row["content"],
            created_at=isoformat_us(row["created_at"]),
        )
        for row in rows[:limit]
    ]
    return ReplyPage(items=items, next_cursor=_next_cursor(rows, limit))


async def seen_mark(conn: Connection, link_id: str) -> str:
    """The link's seen mark ("" when nothing was seen)."""
    return await repository.seen_mark(conn, link_id)


async def mark_seen(conn: Connection, *, link_id: str, message_id: str) -> None:
    """Move the mark up to ``message_id``; never down, so an older tab cannot unread."""
    await repository.mark_seen(conn, link_id=link_id, message_id=message_id)


async def mark_all_read(conn: Connection, *, link_id: str, up_to: str) -> None:
    """Every message up to ``up_to`` (the newest one the page showed) is read; one that
    came after it stays unread, though the button was pressed later. ``up_to`` is
    trusted no further than the link's own messages: the mark lands on one of them."""
    newest = await repository.newest_id_up_to(conn, link_id=link_id, up_to=up_to)
    if newest:
        await repository.mark_seen(conn, link_id=link_id, message_id=newest)


async def links_with_unread(conn: Connection, user_id: str) -> Sequence[Row]:
    """The creator's links, oldest (the default) first, each with its unread count."""
    return await repository.links_with_unread(conn, user_id)


async def since(conn: Connection, *, link_id: str, after: str, limit: int = 50) -> Sequence[Row]:
    """Messages stored under the link after ``after``, oldest first (for live updates)."""
    return await repository.since(conn, link_id=link_id, after=after, limit=limit)


async def newest_id(conn: Connection, link_id: str) -> str:
    """The id of the link's newest message ("" when it has none)."""
    return await repository.newest_id(conn, link_id)


async def page(
    conn: Connection, *, link_id: str, which: InboxFilter, before: str | None, limit: int
) -> Page:
    """Newest first, keyset-paged; each message with its replies (newest first)."""
    seen = await repository.seen_mark(conn, link_id)
    rows = await repository.dashboard_page(
        conn, link_id=link_id, which=which, seen=seen, before=before, limit=limit + 1
    )
    shown = rows[:limit]
    next_cursor = str(shown[-1]["id"]) if len(rows) > limit else None
    return Page(messages=await cards(conn, shown, seen), next_cursor=next_cursor, seen_before=seen)


async def one(conn: Connection, *, link_id: str, message_id: str) -> Message:
    """One message of the link with its replies, as its own page shows it; 404 for one
    that is not (or no longer) in the inbox."""
    row = await repository.dashboard_message(conn, link_id=link_id, message_id=message_id)
    if row is None:
        raise NotFound(_NO_MESSAGE)
    seen = await repository.seen_mark(conn, link_id)
    card = (await cards(conn, [row], seen))[0]
    if not card.reply_count:
        return card
    # Once answered, its public page's id: what its Share passes on.
    return dataclasses.replace(card, answer_id=await repository.answer_id(conn, message_id))


async def open_message(conn: Connection, *, link_id: str, message_id: str) -> Message:
    """``one``, opened by the creator: from now on it is read."""
    await repository.mark_opened(conn, link_id=link_id, message_id=message_id)
    return await one(conn, link_id=link_id, message_id=message_id)


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
        unread=row["id"] > seen and not row["opened"],
        replies=replies.get(row["id"], []),
        follow_up_of=follow_up_of,
        follows=None if follow_up_of is None else followed.get(follow_up_of),
    )


def item_of(row: Row, *, thread: bool = False, answers: bool = True) -> InboxItem:
    """One message row as the API's inbox item (the inbox's and search's). ``thread``:
    show which message a follow-up follows (to the creator only: to anyone else two
    answered messages of one thread would be two messages of one sender). ``answers``:
    the row has its answer's id (``answer_id``, from ``answers``; search's rows have not)."""
    return InboxItem(
        id=row["id"],
        message_content=row["content"],
        like_by_creator=bool(row["like_by_creator"]),
        created_at=isoformat_us(row["created_at"]),
        reply_count=int(row["reply_count"]),
        follow_up_of=row["follow_up_of"] if thread else None,
        answer_id=row["answer_id"] if answers and row["reply_count"] else None,
    )


async def _excerpts_of(conn: Connection, message_ids: list[str]) -> dict[str, str]:
    """The start of these messages' text, by id (those no longer in the inbox are absent)."""
    if not message_ids:
        return {}
    rows = await repository.contents_of(conn, message_ids)
    return {str(row["id"]): _excerpt(str(row["content"])) for row in rows}


def _excerpt(text: str) -> str:
    if len(text) <= FOLLOWED_EXCERPT_CHARACTERS:
        return text
    return text[: FOLLOWED_EXCERPT_CHARACTERS - 1].rstrip() + "…"


async def _replies_of(conn: Connection, message_ids: list[str]) -> dict[str, list[Reply]]:
    if not message_ids:
        return {}
    found: dict[str, list[Reply]] = {}
    for row in await repository.replies_of(conn, message_ids):
        found.setdefault(row["message_id"], []).append(
            Reply(id=row["id"], content=row["content"], created_at=isoformat_us(row["created_at"]))
        )
    return found


async def removals_since(db: Database, *, link_id: str, after: int | None) -> tuple[int, list[Row]]:
    """The messages that left the link's inbox (deleted, or moved to its folder) in the
    outbox's events after seq ``after``, oldest first, read a page at a time (a bulk
    deletion may take more than one read); and the seq to read after next time. For the
    dashboard's live stream (``web/pages/events.py``)."""
    removed: list[Row] = []
    while True:
        after, rows = await events.removals_since(db, link_id=link_id, after=after)
        removed.extend(rows)
        if len(rows) < events.REMOVALS_PER_READ:
            return after, removed
