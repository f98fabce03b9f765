"""Request and response bodies of reports and the admin's moderation endpoints."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp
from anonbox.core.text import TEXT_PATTERN
from anonbox.safety.schemas import MAX_WORD_CHARACTERS, WORD_PATTERN

MAX_REASON_CHARACTERS = 500

ReportStatus = Literal["open", "resolved"]
Action = Literal["dismiss", "delete_message", "block_sender"]

# Bounds are documented here but checked after NFC normalisation, in the service.
Reason = Annotated[
    str,
    KwargDefinition(
        min_length=1,
        max_length=MAX_REASON_CHARACTERS,
        pattern=TEXT_PATTERN,
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


class ReportOut(msgspec.Struct, kw_only=True):
    """A report. Once its message is deleted or moved to the filtered folder, the report
    keeps only the excerpt: `message_id` and `link_id` are left out."""

    # Left out, not null: a client reading ids off a page (schemathesis's inferred links
    # pick any item's) must never be handed a null to put in a path.
    id: str
    message_id: str | msgspec.UnsetType = msgspec.UNSET
    link_id: str | msgspec.UnsetType = msgspec.UNSET
    message_excerpt: str
    reason: str
    status: ReportStatus
    resolution: Action | None
    created_at: Timestamp
    resolved_at: Timestamp | None


class ReportPage(msgspec.Struct):
    items: list[ReportOut]
    next_cursor: str | None


class ContextReply(msgspec.Struct):
    id: str
    content: str
    created_at: Timestamp


class QueuedReport(msgspec.Struct):
    """An open report with what an admin needs to judge it: the message's latest replies."""

    report: ReportOut
    replies: list[ContextReply]


class ReportQueue(msgspec.Struct):
    items: list[QueuedReport]
    next_cursor: str | None


# The same bounds as a creator's muted word, documented here and checked in the service.
Phrase = Annotated[
    str,
    KwargDefinition(
        min_length=1,
        max_length=MAX_WORD_CHARACTERS,
        pattern=WORD_PATTERN,
        description="1 to 100 characters, not only whitespace; matched as whole words, "
        "whatever the case, accents or width, exactly as a creator's muted words",
    ),
]


class MutedPhraseIn(msgspec.Struct):
    phrase: Phrase


class MutedPhraseOut(msgspec.Struct):
    id: str
    phrase: str
    created_at: Timestamp


class MutedPhraseList(msgspec.Struct):
    items: list[MutedPhraseOut]


AuditAction = Literal[
    "report.resolve", "message.delete", "sender.block", "muted_phrase.add", "muted_phrase.remove"
]


class AuditEntry(msgspec.Struct):
    id: str
    admin_id: str  # the admin's user id
    action: AuditAction
    target_id: str  # the report, message or muted phrase acted on
    detail: str
    created_at: Timestamp


class AuditPage(msgspec.Struct):
    items: list[AuditEntry]
    next_cursor: str | None
