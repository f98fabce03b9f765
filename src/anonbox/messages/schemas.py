"""Request and response bodies of the message endpoints (the ``data`` of the envelope)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp
from anonbox.core.text import TEXT_PATTERN
from anonbox.messages.content import MAX_CHARACTERS
from anonbox.receipts.schemas import ReceiptLink

# Bounds are documented here but checked after NFC normalisation, in content.py.
Content = Annotated[
    str,
    KwargDefinition(
        min_length=1,
        max_length=MAX_CHARACTERS,
        pattern=TEXT_PATTERN,
        description="1 to 500 characters (Unicode code points after NFC), not only whitespace",
    ),
]


class MessageIn(msgspec.Struct):
    message_content: Content


class MessageOut(msgspec.Struct):
    id: str
    message_content: str
    created_at: Timestamp
    # Only when the sender asked for one (POST /message/{link_id}?receipt=true).
    receipt: ReceiptLink | msgspec.UnsetType = msgspec.UNSET


class ReplyOut(msgspec.Struct):
    message_id: str
    reply_message_id: str
    message_content: str
    created_at: Timestamp


class LikeState(msgspec.Struct):
    message_id: str
    like_by_creator: bool


class InboxItem(msgspec.Struct):
    id: str
    message_content: str
    like_by_creator: bool
    created_at: Timestamp
    reply_count: int
    # The message this one follows up, sent through its sender's receipt; shown to the
    # creator only (null in the public listing).
    follow_up_of: str | None = None
    # The id of the message's answer page, /{link_id}/a/{answer_id}: set once it has a
    # reply (kept when it is answered again), null while it has none.
    answer_id: str | None = None


class InboxPage(msgspec.Struct):
    items: list[InboxItem]
    next_cursor: str | None


class ReplyPage(msgspec.Struct):
    items: list[ReplyOut]
    next_cursor: str | None


class Deleted(msgspec.Struct):
    deleted: int
