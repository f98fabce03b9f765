"""The filtered folder: messages caught by muted words (the creator's or the site's). A
block moves nothing here: it applies to the sender's next messages, which are dropped.

Only the creator sees it (link ownership is settled before these run, by
``links.dependencies.owned_link``). From it a message may be restored to the inbox, under
its own id, with a ``message.created`` event (the creator chose to receive it: webhooks,
push and e-mail hear of it then, and never while it was filtered); or the folder may be
emptied. A message stays at most ``FOLDER_DAYS`` days after it was filtered: every
instance purges older ones hourly (the delete is idempotent).
"""

from __future__ import annotations

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database
from anonbox.core.errors import NotFound
from anonbox.messages.filtered import repository
from anonbox.messages.schemas import InboxItem, InboxPage
from anonbox.safety.matching import Matcher
from anonbox.safety.service import MOVE_SCAN_LIMIT

FOLDER_DAYS = 30
PURGE_EVERY_SECONDS = 3600
_US_PER_DAY = 86_400 * 1_000_000
MOVE_BATCH = 1_000


async def folder(db: Database, *, link_id: str, cursor: str | None, limit: int) -> InboxPage:
    """The link's filtered messages, newest first, in the inbox's item shape and paging."""
    rows = await repository.page(db, link_id=link_id, before=cursor, limit=limit + 1)
    items = [
        InboxItem(
            id=row["id"],
            message_content=row["content"],
            like_by_creator=False,
            created_at=isoformat_us(row["created_at"]),
            reply_count=0,
            follow_up_of=row["follow_up_of"],
        )
        for row in rows[:limit]
    ]
    next_cursor = str(rows[limit - 1]["id"]) if len(rows) > limit else None
    return InboxPage(items=items, next_cursor=next_cursor)


async def count(db: Database, *, link_id: str) -> int:
    return await repository.count(db, link_id=link_id)


async def restore(db: Database, *, link_id: str, message_id: str) -> None:
    """Back to the inbox, as it came; 404 when it is not in this link's folder."""
    async with db.transaction() as tx:
        if not await repository.restore(tx, link_id=link_id, message_id=message_id):
            raise NotFound("No message with this id in this link's filtered folder")


async def empty(db: Database, *, link_id: str) -> int:
    """Delete every message of the link's folder; how many."""
    return await repository.empty(db, link_id=link_id)


async def purge_expired(db: Database, *, now: int | None = None) -> int:
    """Delete messages filtered more than ``FOLDER_DAYS`` days ago; how many. A chore of
    every instance, every ``PURGE_EVERY_SECONDS`` (``core.chores``): the delete is the same
    whoever runs it."""
    moment = now_us() if now is None else now
    return await repository.purge(db, filtered_before=moment - FOLDER_DAYS * _US_PER_DAY)


async def move_muted(conn: Connection, *, owner_id: str | None, words: Matcher, now: int) -> int:
    """Move the waiting messages holding one of ``words`` to their folders: of
    ``owner_id``'s links, or of every link; the newest ``MOVE_SCAN_LIMIT`` are looked at.
    How many moved. Safety's ``MoveMuted``, handed to its ``mute``."""
    moved, before, seen = 0, None, 0
    while seen < MOVE_SCAN_LIMIT:
        rows = await repository.unanswered_batch(
            conn, owner_id=owner_id, before=before, limit=min(MOVE_BATCH, MOVE_SCAN_LIMIT - seen)
        )
        if not rows:
            break
        seen += len(rows)
        before = str(rows[-1]["id"])
        caught = [str(row["id"]) for row in rows if words.found_in(row["content"])]
        moved += await repository.move_ids(conn, ids=caught, now=now)
    return moved
