"""What the inbox reads return besides the API's bodies (``messages.schemas``): the
filters, and the creator's dashboard cards."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class InboxFilter(StrEnum):
    ALL = "all"
    UNREAD = "unread"
    UNANSWERED = "unanswered"
    ANSWERED = "answered"
    LIKED = "liked"


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
    # Its answer page's id (/{link_id}/a/{answer_id}), on the message's own page once
    # answered (``service.one``); None elsewhere.
    answer_id: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    messages: list[Message]
    next_cursor: str | None
    seen_before: str  # the seen mark when the page was read ("" when nothing was seen)
