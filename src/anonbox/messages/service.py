"""What can be done with messages, and the rules for doing it.

Link ownership is settled before these run (``links.dependencies.owned_link``);
here every statement also names the link, so a message of another link is not found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database, Row
from anonbox.core.errors import NotFound
from anonbox.core.ids import new_ulid
from anonbox.messages import repository
from anonbox.messages.content import normalised_content
from anonbox.messages.schemas import (
    InboxItem,
    InboxPage,
    LikeState,
    MessageOut,
    ReplyOut,
    ReplyPage,
)

_NO_LINK = "No link with this id"
_NO_MESSAGE = "No message with this id under this link"


@dataclass(frozen=True, slots=True)
class Sender:
    """Who posted an anonymous message, as far as abuse controls need to know.

    Never stored: the address is here only so that limits and blocks can key on it.
    """

    ip: str


async def create_message(db: Database, *, link_id: str, content: str, sender: Sender) -> MessageOut:
    text = normalised_content(content)
    now = now_us()
    message_id = new_ulid(now)
    if not await repository.insert_message(
        db, message_id=message_id, link_id=link_id, content=text, created_at=now
    ):
        raise NotFound(_NO_LINK)
    return MessageOut(id=message_id, message_content=text, created_at=isoformat_us(now))


async def reply(db: Database, *, link_id: str, message_id: str, content: str) -> ReplyOut:
    text = normalised_content(content)
    now = now_us()
    reply_id = new_ulid(now)
    async with db.transaction() as tx:
        if not await repository.count_reply(tx, link_id=link_id, message_id=message_id, delta=1):
            raise NotFound(_NO_MESSAGE)
        await repository.insert_reply(
            tx, reply_id=reply_id, message_id=message_id, content=text, created_at=now
        )
    return ReplyOut(
        message_id=message_id,
        reply_message_id=reply_id,
        message_content=text,
        created_at=isoformat_us(now),
    )


async def toggle_like(db: Database, *, link_id: str, message_id: str) -> LikeState:
    liked = await repository.toggle_like(db, link_id=link_id, message_id=message_id)
    if liked is None:
        raise NotFound(_NO_MESSAGE)
    return LikeState(message_id=message_id, like_by_creator=liked)


async def delete_reply(db: Database, *, link_id: str, message_id: str, reply_id: str) -> None:
    async with db.transaction() as tx:
        if not await repository.delete_reply(
            tx, link_id=link_id, message_id=message_id, reply_id=reply_id
        ):
            raise NotFound("No reply with this id under this message")
        await repository.count_reply(tx, link_id=link_id, message_id=message_id, delta=-1)


async def delete_message(db: Database, *, link_id: str, message_id: str) -> None:
    if not await repository.delete_message(db, link_id=link_id, message_id=message_id):
        raise NotFound(_NO_MESSAGE)


def _next_cursor(rows: Sequence[Row], limit: int) -> str | None:
    return str(rows[limit - 1]["id"]) if len(rows) > limit else None


async def inbox(
    db: Database, *, link_id: str, cursor: str | None, limit: int, answered_only: bool
) -> InboxPage:
    """The creator sees every message; anyone else only the answered ones."""
    rows = await repository.inbox_page(
        db, link_id=link_id, before=cursor, limit=limit + 1, answered_only=answered_only
    )
    items = [
        InboxItem(
            id=row["id"],
            message_content=row["content"],
            like_by_creator=bool(row["like_by_creator"]),
            created_at=isoformat_us(row["created_at"]),
            reply_count=row["reply_count"],
        )
        for row in rows[:limit]
    ]
    return InboxPage(items=items, next_cursor=_next_cursor(rows, limit))


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
