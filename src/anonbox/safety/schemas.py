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
from anonbox.safety.matching import vanishing

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
# what matching removes whole counts as blank too (``safety.matching.vanishing``:
# default-ignorable code points, marks on no letter; a word of nothing but a zero-width
# space or an acute accent is refused as "blank"). The planes above the first are left
# out: ECMA-262 patterns without the ``u`` flag cannot name them.
WORD_PATTERN = text_pattern("".join(f"\\u{first:04x}-\\u{last:04x}" for first, last in vanishing()))


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
