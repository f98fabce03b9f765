"""What the account endpoints answer: the export document's parts and the deletion state.

The export is written piece by piece (``account.export``), but each piece is one of these,
so the document the OpenAPI description shows is the document a creator downloads.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar.openapi.spec import Schema
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp
from anonbox.core.text import NO_CONTROLS_PATTERN, VISIBLE_TEXT_PATTERN

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
    display_name: str | None = None  # the public name they chose (None: not yet)
    bio: str | None = None
    avatar_url: str | None = None  # where their uploaded picture is (None: none uploaded)


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
    """A message waiting in a link's filtered folder (caught by a muted word)."""

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
    # False until a zone is stored: their first dashboard page sends the browser's.
    time_zone_chosen: bool = True


# --- the public profile ---------------------------------------------------------------------

MAX_DISPLAY_NAME_CHARACTERS = 80
MAX_BIO_CHARACTERS = 160


class ProfilePatch(msgspec.Struct):
    """Send at least one field; an absent field keeps its value, an unknown one is ignored."""

    display_name: Annotated[
        str | msgspec.UnsetType,
        KwargDefinition(
            min_length=1,
            max_length=MAX_DISPLAY_NAME_CHARACTERS,
            pattern=VISIBLE_TEXT_PATTERN,
            description="The name public pages and cards show: 1 to 80 characters once "
            "surrounding whitespace is trimmed, not only characters that draw nothing "
            "(zero-width and other default-ignorable ones, Hangul fillers, the braille "
            "blank): such a name is refused as blank",
        ),
    ] = msgspec.UNSET
    bio: Annotated[
        str | msgspec.UnsetType | None,
        KwargDefinition(
            max_length=MAX_BIO_CHARACTERS,
            pattern=NO_CONTROLS_PATTERN,
            description="A few words under the name on the public page: up to 160 "
            "characters, no control characters; empty, null, or only whitespace and characters "
            "that draw nothing removes it",
        ),
    ] = msgspec.UNSET


PROFILE_PATCH_RULES: dict[str, object] = {
    "min_properties": 1,
    "any_of": [Schema(required=[f.encode_name]) for f in msgspec.structs.fields(ProfilePatch)],
}


class PublicProfile(msgspec.Struct):
    """The creator's public face; ``display_name`` is null until they choose one (public
    pages then show a neutral name: ``links.schemas.NEUTRAL_NAME``)."""

    display_name: str | None
    bio: str | None


class SignedInAs(msgspec.Struct):
    """What the dashboard's navigation calls the signed-in creator: their display name once
    chosen, until then their account's name. A creator who shares their screen (a live
    stream, a screenshot) shows the name they chose, not their e-mail's."""

    name: str


class AvatarOut(msgspec.Struct):
    """The picture public pages and cards show for the creator: ``avatar_url`` is its
    address on this site (a generated one while ``uploaded`` is false)."""

    avatar_url: str
    uploaded: bool
