"""Request and response bodies of the receipt endpoints (the ``data`` of the envelope)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar.params import Parameter

from anonbox.core.envelope import Timestamp

RECEIPT_DAYS = 30  # how long a receipt's link works

# Any string: a token of the wrong shape is as unknown as a wrong one (404), never a 400.
ReceiptToken = Annotated[
    str,
    Parameter(
        description="The receipt token the post's answer gave (`receipt.token`): a bearer "
        "credential, 43 URL-safe characters"
    ),
]


class ReceiptLink(msgspec.Struct):
    """What a sender who asked for a receipt gets with the 201 of their post."""

    token: str
    url: str
    expires_at: Timestamp


class ThreadReply(msgspec.Struct):
    message_content: str
    created_at: Timestamp


class ThreadMessage(msgspec.Struct):
    """A message of the sender's thread as the sender sees it: its text, and the
    creator's public replies (none until the creator answers)."""

    message_content: str
    created_at: Timestamp
    answered: bool
    replies: list[ThreadReply]
    # Once answered: the id of the answer's public page, /{link_id}/a/{answer_id}.
    answer_id: str | msgspec.UnsetType = msgspec.UNSET


class ReceiptOut(msgspec.Struct):
    message: ThreadMessage
    follow_up: ThreadMessage | None
    can_follow_up: bool
    expires_at: Timestamp
