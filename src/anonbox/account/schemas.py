"""What the account endpoints answer: the export document's parts and the deletion state.

The export is written piece by piece (``account.export``), but each piece is one of these,
so the document the OpenAPI description shows is the document a creator downloads.
"""

from __future__ import annotations

from typing import Any

import msgspec

from anonbox.core.envelope import Timestamp

EXPORT_FORMAT = "anonbox-export/1"


class DeletionState(msgspec.Struct):
    scheduled: bool
    requested_at: Timestamp | None
    erase_at: Timestamp | None  # when everything is erased, unless cancelled before


class ExportProfile(msgspec.Struct):
    user_id: str
    email: str
    name: str
    picture_url: str | None
    google_subject: str | None  # the Google account this one signs in with
    is_admin: bool
    created_at: Timestamp
    language: str | None = None  # of the creator's pages and mail (core.i18n.LANGUAGES)
    time_zone: str | None = None  # IANA name; None reads as UTC


class ExportEmailNotices(msgspec.Struct):
    mode: str
    confirmed_address: str | None
    updated_at: Timestamp


class ExportReply(msgspec.Struct):
    id: str
    message_content: str
    created_at: Timestamp


class ExportMessage(msgspec.Struct):
    id: str
    link_id: str
    message_content: str
    like_by_creator: bool
    created_at: Timestamp
    replies: list[ExportReply]


class ExportFilteredMessage(msgspec.Struct):
    """A message waiting in a link's filtered folder (caught by a muted word, or from a
    sender blocked while it waited)."""

    id: str
    link_id: str
    message_content: str
    created_at: Timestamp
    filtered_at: Timestamp
    filtered: bool = True


class ExportBlock(msgspec.Struct):
    id: str
    message_excerpt: str
    network: bool
    created_at: Timestamp


class ExportMutedWord(msgspec.Struct):
    id: str
    word: str
    created_at: Timestamp


class ExportApiKey(msgspec.Struct):
    id: str
    name: str
    last_chars: str
    created_at: Timestamp
    last_used_at: Timestamp | None
    revoked_at: Timestamp | None


class ExportWebhook(msgspec.Struct):
    id: str
    url: str
    events: list[str]
    disabled_reason: str | None
    created_at: Timestamp


class ExportPushDevices(msgspec.Struct):
    count: int
    created_at: list[Timestamp]


class AccountExport(msgspec.Struct):
    """Everything the account owns. Links carry every setting they have; times are
    ISO 8601 UTC. Nothing about any sender is in it."""

    format: str
    exported_at: Timestamp
    profile: ExportProfile
    email_notices: ExportEmailNotices | None
    links: list[dict[str, Any]]
    messages: list[ExportMessage]  # oldest first, link by link
    blocks: list[ExportBlock]
    muted_words: list[ExportMutedWord]
    api_keys: list[ExportApiKey]
    webhooks: list[ExportWebhook]
    push_devices: ExportPushDevices


class Preferences(msgspec.Struct):
    """The language of the creator's pages and mail, and the time zone of their times."""

    language: str | None  # None until their first dashboard page
    time_zone: str
