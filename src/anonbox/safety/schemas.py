"""Safety's types: the bodies of its endpoints (blocks, muted words), and the values its
rules pass around (a sender's keyed hash, the sender of a message to block, a creator's
muted words ready to match)."""

import bisect
import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from typing import Annotated

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp
from anonbox.core.openapi import keep_component_names
from anonbox.core.text import TEXT_PATTERN

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_WORD_CHARACTERS = 100
_NOT_WORD_CHARACTER = re.compile(r"\W")


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

    @property
    def sender_key(self) -> tuple[int, str]:
        return self.sender.epoch, self.sender.hash


# --- muted words -------------------------------------------------------------------------


class MuteIn(msgspec.Struct):
    # Documented here, checked in the service (``service.checked_word``) with its own codes.
    word: Annotated[
        str,
        KwargDefinition(min_length=1, max_length=MAX_WORD_CHARACTERS, pattern=TEXT_PATTERN),
    ]


class MutedWordOut(msgspec.Struct):
    id: str
    word: str
    created_at: Timestamp


class MutedWordList(msgspec.Struct):
    items: list[MutedWordOut]


def folded(text: str) -> str:
    """Text as it is compared: NFKC, case-folded, without combining marks, single-spaced."""
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text).casefold())
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(unicodedata.normalize("NFC", bare).split())


@dataclass(frozen=True, slots=True)
class MutedWords:
    """A creator's folded muted words, ready to match."""

    words: frozenset[str]
    lengths: frozenset[int]

    @classmethod
    def of(cls, words: list[str]) -> "MutedWords":
        return cls(frozenset(words), frozenset(len(word) for word in words))

    def joined(self, other: "MutedWords") -> "MutedWords":
        return MutedWords(self.words | other.words, self.lengths | other.lengths)

    def found_in(self, text: str) -> bool:
        r"""Whether ``text`` holds one of the words whole: not preceded or followed by a
        word character (what the regular expression ``(?<!\w)word(?!\w)`` finds)."""
        if not self.words:
            return False
        text = folded(text)
        breaks = [found.start() for found in _NOT_WORD_CHARACTER.finditer(text)]
        starts = [0, *(i + 1 for i in breaks)]  # nothing or a non-word character before
        ends = [*breaks, len(text)]  # nothing or a non-word character after
        longest = max(self.lengths)
        for start in starts:
            first = bisect.bisect_right(ends, start)
            for end in ends[first:]:
                if end - start > longest:
                    break
                if end - start in self.lengths and text[start:end] in self.words:
                    return True
        return False


NO_MUTED_WORDS = MutedWords.of([])

keep_component_names("anonbox.safety.blocks", BlockOut, BlockList)
keep_component_names("anonbox.safety.mutes", MutedWordOut, MutedWordList)
