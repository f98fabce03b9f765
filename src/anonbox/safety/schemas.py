"""Safety's types: the bodies of its endpoints (blocks, muted words), and the values its
rules pass around (a sender's keyed hash, the sender of a message to block). Muted words
are matched by ``safety.matching``."""

import ipaddress
from dataclasses import dataclass
from typing import Annotated

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp
from anonbox.core.openapi import keep_component_names
from anonbox.core.text import text_pattern
from anonbox.safety.matching import DEFAULT_IGNORABLE

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_WORD_CHARACTERS = 100


# --- senders -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SenderId:
    """A sender's keyed hash under one key period, and their network's
    (``senders.network_of_block``)."""

    epoch: int
    hash: str
    network: str | None = None


# --- blocks ------------------------------------------------------------------------------


class BlockOut(msgspec.Struct):
    id: str
    message_excerpt: str
    created_at: Timestamp
    site_wide: bool
    network: bool = False  # the sender's whole network, not only the sender


class BlockList(msgspec.Struct):
    items: list[BlockOut]


@dataclass(frozen=True, slots=True)
class MessageSender:
    message_id: str
    excerpt: str
    sender: SenderId


# --- muted words -------------------------------------------------------------------------

# A muted word (and a site-wide phrase) as the API document states it: the text rule, where
# default-ignorable code points count as blank too, since matching removes them
# (``safety.matching.normalised``; a word of nothing but a zero-width space is refused as
# "blank"). The planes above the first are left out: ECMA-262 patterns without the ``u``
# flag cannot name them, and only tag and format characters of theirs are ignorable.
WORD_PATTERN = text_pattern(
    "".join(f"\\u{first:04x}-\\u{last:04x}" for first, last in DEFAULT_IGNORABLE if last <= 0xFFFF)
)


class MuteIn(msgspec.Struct):
    # Documented here, checked in the service (``service.checked_word``) with its own codes.
    word: Annotated[
        str,
        KwargDefinition(min_length=1, max_length=MAX_WORD_CHARACTERS, pattern=WORD_PATTERN),
    ]


class MutedWordOut(msgspec.Struct):
    id: str
    word: str
    created_at: Timestamp


class MutedWordList(msgspec.Struct):
    items: list[MutedWordOut]


keep_component_names("anonbox.safety.blocks", BlockOut, BlockList)
keep_component_names("anonbox.safety.mutes", MutedWordOut, MutedWordList)
