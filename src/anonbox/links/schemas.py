"""Request and response bodies of the link endpoints (the ``data`` of the envelope)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp
from anonbox.links.repository import DEFAULT_PROMPT

MAX_PROMPT_CHARACTERS = 300

# Bounds are documented here but checked after NFC and trimming, in the service.
_PROMPT_DOC = KwargDefinition(
    min_length=1,
    max_length=MAX_PROMPT_CHARACTERS,
    description="What the public page asks senders: 1 to 300 characters once surrounding "
    "whitespace is trimmed",
)


class LinkIn(msgspec.Struct):
    prompt: Annotated[str, _PROMPT_DOC] = DEFAULT_PROMPT


class LinkPatch(msgspec.Struct):
    """Send at least one field; an absent field keeps its value."""

    prompt: Annotated[str | msgspec.UnsetType, _PROMPT_DOC] = msgspec.UNSET
    paused: Annotated[
        bool | msgspec.UnsetType,
        KwargDefinition(description="While true, the link refuses new messages"),
    ] = msgspec.UNSET


class LinkOut(msgspec.Struct):
    id: str
    prompt: str
    paused: bool
    created_at: Timestamp


class LinkList(msgspec.Struct):
    items: list[LinkOut]


class PublicLink(msgspec.Struct):
    """What a visitor's send page shows: never the creator's e-mail or account id."""

    id: str
    prompt: str
    paused: bool
    creator_name: str
    creator_picture_url: str | None
