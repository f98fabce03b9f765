"""Request and response bodies of reports and the admin's moderation endpoints."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp

MAX_REASON_CHARACTERS = 500

ReportStatus = Literal["open", "resolved"]
Action = Literal["dismiss", "delete_message", "block_sender"]

# Bounds are documented here but checked after NFC normalisation, in the service.
Reason = Annotated[
    str,
    KwargDefinition(
        min_length=1,
        max_length=MAX_REASON_CHARACTERS,
        description="Why this message should be looked at: 1 to 500 characters, "
        "not only whitespace",
    ),
]


class ReportIn(msgspec.Struct):
    reason: Reason


class ReportReceipt(msgspec.Struct):
    id: str
    status: ReportStatus


class ResolveIn(msgspec.Struct):
    action: Annotated[
        Action,
        KwargDefinition(
            description="dismiss: nothing to do; delete_message: delete the message and its "
            "replies; block_sender: block its sender site-wide, then delete it"
        ),
    ]


class ReportOut(msgspec.Struct):
    id: str
    message_id: str | None  # None once the message is deleted
    link_id: str | None
    message_excerpt: str
    reason: str
    status: ReportStatus
    resolution: Action | None
    created_at: Timestamp
    resolved_at: Timestamp | None


class ReportPage(msgspec.Struct):
    items: list[ReportOut]
    next_cursor: str | None
