"""Request and response bodies of the link endpoints (the ``data`` of the envelope)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from litestar.openapi.spec import Schema
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp
from anonbox.core.text import TEXT_PATTERN
from anonbox.links.repository import DEFAULT_PROMPT

MAX_PROMPT_CHARACTERS = 300
MAX_PAUSE_HOURS = 365 * 24

# What happens to a new message with a muted word: kept in the filtered folder, or dropped.
MutedMode = Literal["filter", "drop"]

# Bounds are documented here but checked after NFC and trimming, in the service.
_PROMPT_DOC = KwargDefinition(
    min_length=1,
    max_length=MAX_PROMPT_CHARACTERS,
    pattern=TEXT_PATTERN,
    description="What the public page asks senders: 1 to 300 characters once surrounding "
    "whitespace is trimmed",
)


class LinkIn(msgspec.Struct):
    prompt: Annotated[str, _PROMPT_DOC] = DEFAULT_PROMPT


class LinkPatch(msgspec.Struct):
    """Send at least one field; an absent field keeps its value, an unknown one is ignored."""

    prompt: Annotated[str | msgspec.UnsetType, _PROMPT_DOC] = msgspec.UNSET
    paused: Annotated[
        bool | msgspec.UnsetType,
        KwargDefinition(description="While true, the link refuses new messages"),
    ] = msgspec.UNSET
    follow_ups: Annotated[
        bool | msgspec.UnsetType,
        KwargDefinition(
            description="Whether a sender may send one follow-up through their receipt "
            "(true for a new link)"
        ),
    ] = msgspec.UNSET
    pause_for_hours: Annotated[
        int | msgspec.UnsetType,
        KwargDefinition(
            ge=1,
            le=MAX_PAUSE_HOURS,
            description="Pause the link for this many hours (1 to 8760); it resumes by "
            "itself within a minute of the end. Not together with paused.",
        ),
    ] = msgspec.UNSET
    hide_dates: Annotated[
        bool | msgspec.UnsetType,
        KwargDefinition(description="Whether the public page leaves out when messages came"),
    ] = msgspec.UNSET
    muted: Annotated[
        MutedMode | msgspec.UnsetType,
        KwargDefinition(
            description="A new message with a muted word: 'filter' keeps it in the link's "
            "filtered folder ('filter' for a new link), 'drop' drops it silently"
        ),
    ] = msgspec.UNSET


# The rules of a patch across its fields, as the document states them; the service checks
# them (``service.update_link``): at least one setting (unknown fields are ignored, so
# ``minProperties`` alone would let ``{"colour": "red"}`` through), not both ways to pause.
LINK_PATCH_RULES: dict[str, object] = {
    "min_properties": 1,
    "any_of": [Schema(required=[f.encode_name]) for f in msgspec.structs.fields(LinkPatch)],
    "not": Schema(required=["paused", "pause_for_hours"]),
}


class LinkOut(msgspec.Struct):
    id: str
    prompt: str
    paused: bool
    created_at: Timestamp
    follow_ups: bool = True
    paused_until: Timestamp | None = None  # a timed pause's end; null when open-ended
    hide_dates: bool = False
    muted: MutedMode = "filter"  # a message with a muted word: the filtered folder, or dropped


class LinkList(msgspec.Struct):
    items: list[LinkOut]


class PublicLink(msgspec.Struct):
    """What a visitor's send page shows: never the creator's e-mail or account id."""

    id: str
    prompt: str
    paused: bool
    creator_name: str
    creator_picture_url: str | None
    hide_dates: bool = False  # the page leaves out when messages came
