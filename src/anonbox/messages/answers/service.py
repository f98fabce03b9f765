"""Published answers: a message's own public page, under an id of its own.

A message gets an answer id with its first reply (``new_answer_id``, written by
``messages.repository.add_replies``), kept for good: later replies, and a reply deleted
and written again, keep it. The id is random (72 bits) and tells no time, unlike the
message's ULID (which would undo "hide dates"). ``published_answer`` tells three cases
apart: shown (the message is there and has a reply), gone (it was published, then the
message was deleted or lost its last reply: ``Gone``, a page's 410), and never (no such
id under the link: unanswered, filtered, dropped, unknown, malformed, another link's:
``NotFound``, the same whatever the reason). See ``docs/decisions.md``.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from anonbox.core.database import Database
from anonbox.core.errors import Gone, NotFound
from anonbox.messages.answers import repository
from anonbox.messages.inbox import service as inbox
from anonbox.messages.schemas import InboxItem, ReplyOut

# ``secrets.token_urlsafe(9)``: 9 random bytes, 12 URL-safe characters.
ANSWER_ID = re.compile(r"[A-Za-z0-9_-]{12}")
# The replies an answer page shows (the newest; a thread longer than this is rare).
REPLIES_SHOWN = 50

_NO_ANSWER = "No answer with this id under this link"
_REMOVED = "This answer was removed"


def new_answer_id() -> str:
    """A new answer's id: random, 12 URL-safe characters."""
    return secrets.token_urlsafe(9)


@dataclass(frozen=True, slots=True)
class PublishedAnswer:
    answer_id: str
    message: InboxItem
    replies: list[ReplyOut]  # newest first, as the listing's (``replies[0]`` is the latest)


async def published_answer(db: Database, *, link_id: str, answer_id: str) -> PublishedAnswer:
    """The answer ``answer_id`` of the link as anyone may see it; ``NotFound`` for an id
    that never was one of the link's answers, ``Gone`` for one published then removed."""
    if not ANSWER_ID.fullmatch(answer_id):
        raise NotFound(_NO_ANSWER)
    row = await repository.published(db, link_id=link_id, answer_id=answer_id)
    if row is None:
        raise NotFound(_NO_ANSWER)
    if row["id"] is None or int(row["reply_count"]) == 0:
        raise Gone(_REMOVED)
    try:
        replies = await inbox.replies(
            db,
            link_id=link_id,
            message_id=str(row["id"]),
            cursor=None,
            limit=REPLIES_SHOWN,
            is_creator=False,
        )
    except NotFound:  # its message or last reply went a moment ago
        raise Gone(_REMOVED) from None
    if not replies.items:
        raise Gone(_REMOVED)
    return PublishedAnswer(answer_id=answer_id, message=inbox.item_of(row), replies=replies.items)
