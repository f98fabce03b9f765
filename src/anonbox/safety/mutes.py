"""Muted words: a creator's list of words that make a message disappear on arrival.

Matching is on whole words, after the same folding on both sides: NFKC (so full-width
letters and ligatures are plain letters), case folding, and accents removed. "Idiot",
"IDIOT", "ídiot" and the same in full-width letters all match a muted "idiot";
"idiotic" does not.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

import msgspec

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database
from anonbox.core.envelope import Timestamp
from anonbox.core.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from anonbox.core.ids import new_ulid
from anonbox.core.text import contains_control_characters

MAX_WORD_CHARACTERS = 100


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


def contains_muted(text: str, muted: Iterable[str]) -> bool:
    """Whether ``text`` contains one of the already-folded ``muted`` words as a whole word."""
    words = list(muted)
    if not words:
        return False
    pattern = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.search(rf"(?<!\w)(?:{pattern})(?!\w)", folded(text)) is not None


async def muted_of(db: Database, owner_id: str) -> list[str]:
    rows = await db.fetch("SELECT normalized FROM muted_words WHERE user_id = $1", owner_id)
    return [row["normalized"] for row in rows]


async def mute(db: Database, *, owner_id: str, word: str) -> MutedWordOut:
    shown = " ".join(word.split())
    normalized = folded(shown)
    if not normalized or len(shown) > MAX_WORD_CHARACTERS:
        raise ValidationFailed(
            f"word must be 1 to {MAX_WORD_CHARACTERS} characters, not only whitespace",
            [FieldProblem("word", "blank" if not normalized else "too_long")],
        )
    if contains_control_characters(shown):
        raise ValidationFailed(
            "word must not contain control characters",
            [FieldProblem("word", "control_character")],
        )
    now = now_us()
    word_id = new_ulid(now)
    inserted = await db.execute(
        "INSERT INTO muted_words (id, user_id, word, normalized, created_at)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, normalized) DO NOTHING",
        word_id,
        owner_id,
        shown,
        normalized,
        now,
    )
    if not inserted:
        raise Conflict(f"{shown!r} is already muted")
    return MutedWordOut(id=word_id, word=shown, created_at=isoformat_us(now))


async def muted_words(db: Database, *, owner_id: str) -> MutedWordList:
    rows = await db.fetch(
        "SELECT id, word, created_at FROM muted_words WHERE user_id = $1 ORDER BY id DESC",
        owner_id,
    )
    return MutedWordList(
        items=[
            MutedWordOut(id=row["id"], word=row["word"], created_at=isoformat_us(row["created_at"]))
            for row in rows
        ]
    )


async def unmute(db: Database, *, owner_id: str, word_id: str) -> None:
    if not await db.execute(
        "DELETE FROM muted_words WHERE id = $1 AND user_id = $2", word_id, owner_id
    ):
        raise NotFound("No muted word with this id among yours")
