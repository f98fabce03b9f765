"""Muted words: a creator's list of words that make a message disappear on arrival.

Matching is on whole words, after the same folding on both sides: NFKC (so full-width
letters and ligatures are plain letters), case folding, and accents removed. "Idiot",
"IDIOT", "ídiot" and the same in full-width letters all match a muted "idiot";
"idiotic" does not.

A creator may mute at most ``MAX_MUTED_WORDS`` words. Matching costs the same however
many there are: the words are a set, and a message is looked up in it by its stretches
between word boundaries (at most ``MAX_WORD_CHARACTERS`` long), never by one pattern of
all the words. Each process keeps every creator's set until their list changes, which a
cheap query (count and newest id) notices on every post, on every instance.

The site's muted phrases (``muted_phrases``, kept by admins through ``moderation``) are
muted words of every link: they join each creator's own set and act exactly like them.
The same query that checks a creator's list checks the site's, so they cost no query of
their own on a post, and no instance matches a stale site list either.

A word muted later applies to the messages already waiting too: in the same transaction
as the word, the newest ``MOVE_SCAN_LIMIT`` unanswered messages (of the creator's links,
or of every link for a site phrase) are looked at, and those holding it move to their
link's filtered folder (``move_muted``); answered ones stay where they are.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass

import msgspec

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database
from anonbox.core.envelope import Timestamp
from anonbox.core.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from anonbox.core.ids import new_ulid
from anonbox.core.text import contains_control_characters
from anonbox.messages.filtered import repository as filtered_repository

MAX_WORD_CHARACTERS = 100
# What a word becomes once folded: NFKC may lengthen it (the column holds 400).
MAX_FOLDED_CHARACTERS = 400
MAX_MUTED_WORDS = 1000
_CACHED_CREATORS = 10_000
# How many waiting (unanswered) messages, newest first, a newly muted word is looked for
# in: a bound on the work done in the transaction that mutes it.
MOVE_SCAN_LIMIT = 10_000
_MOVE_BATCH = 1_000
_NOT_WORD_CHARACTER = re.compile(r"\W")


class TooManyMutedWords(Conflict):
    code = "too_many_muted_words"


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
    def of(cls, words: list[str]) -> MutedWords:
        return cls(frozenset(words), frozenset(len(word) for word in words))

    def joined(self, other: MutedWords) -> MutedWords:
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
Version = tuple[int, str | None]  # a list's size and newest id: any change alters it


@dataclass(frozen=True, slots=True)
class _Cached:
    own_version: Version
    own: MutedWords
    site_version: Version
    both: MutedWords


# owner -> their words, and with the site's: seen stale on the next post after any change
# (a word added or removed, on any instance).
_cache: OrderedDict[str, _Cached] = OrderedDict()
_site: tuple[Version, MutedWords] = ((0, None), NO_MUTED_WORDS)

# One indexed aggregate for the creator's list, two for the site's (at most
# MAX_MUTED_WORDS rows): the one query a post makes for muted words.
_VERSIONS = (
    "SELECT count(*) AS n, max(id) AS newest,"
    " (SELECT count(*) FROM muted_phrases) AS site_n,"
    " (SELECT max(id) FROM muted_phrases) AS site_newest"
    " FROM muted_words WHERE user_id = $1"
)


async def _site_phrases(db: Database, version: Version) -> MutedWords:
    global _site
    if _site[0] != version:
        rows = await db.fetch("SELECT normalized FROM muted_phrases")
        _site = (version, MutedWords.of([row["normalized"] for row in rows]))
    return _site[1]


async def muted_of(db: Database, owner_id: str) -> MutedWords:
    """The creator's muted words together with the site's muted phrases."""
    row = await db.fetchrow(_VERSIONS, owner_id)
    assert row is not None, "an aggregate always answers a row"
    own_version: Version = (int(row["n"]), row["newest"])
    site_version: Version = (int(row["site_n"]), row["site_newest"])
    if own_version[0] == 0:
        return NO_MUTED_WORDS if site_version[0] == 0 else await _site_phrases(db, site_version)
    cached = _cache.get(owner_id)
    if cached is not None and (cached.own_version, cached.site_version) == (
        own_version,
        site_version,
    ):
        _cache.move_to_end(owner_id)
        return cached.both
    if cached is not None and cached.own_version == own_version:
        own = cached.own
    else:
        rows = await db.fetch("SELECT normalized FROM muted_words WHERE user_id = $1", owner_id)
        own = MutedWords.of([row["normalized"] for row in rows])
    both = own if site_version[0] == 0 else own.joined(await _site_phrases(db, site_version))
    _cache[owner_id] = _Cached(own_version, own, site_version, both)
    _cache.move_to_end(owner_id)
    if len(_cache) > _CACHED_CREATORS:
        _cache.popitem(last=False)
    return both


def checked_word(text: str, *, field: str) -> tuple[str, str]:
    """A word or phrase to mute as shown (single-spaced) and as matched (folded); 400 when
    it is blank, longer than ``MAX_WORD_CHARACTERS``, or holds a control character."""
    shown = " ".join(text.split())
    normalized = folded(shown)
    if not normalized or len(text) > MAX_WORD_CHARACTERS:
        raise ValidationFailed(
            f"{field} must be 1 to {MAX_WORD_CHARACTERS} characters, not only whitespace",
            [FieldProblem(field, "blank" if not normalized else "too_long")],
        )
    if len(normalized) > MAX_FOLDED_CHARACTERS:
        raise ValidationFailed(
            f"{field} is too long once its letters are spelled out",
            [FieldProblem(field, "too_long")],
        )
    if contains_control_characters(text):  # split() takes some controls for whitespace
        raise ValidationFailed(
            f"{field} must not contain control characters",
            [FieldProblem(field, "control_character")],
        )
    return shown, normalized


async def move_muted(
    conn: Connection, dialect: str, *, owner_id: str | None, words: MutedWords, now: int
) -> int:
    """Move the waiting messages holding one of ``words`` to their folders: of
    ``owner_id``'s links, or of every link; the newest ``MOVE_SCAN_LIMIT`` are looked at.
    How many moved."""
    moved, before, seen = 0, None, 0
    while seen < MOVE_SCAN_LIMIT:
        rows = await filtered_repository.unanswered_batch(
            conn, owner_id=owner_id, before=before, limit=min(_MOVE_BATCH, MOVE_SCAN_LIMIT - seen)
        )
        if not rows:
            break
        seen += len(rows)
        before = str(rows[-1]["id"])
        caught = [str(row["id"]) for row in rows if words.found_in(row["content"])]
        moved += await filtered_repository.move_ids(conn, dialect, ids=caught, now=now)
    return moved


async def mute(db: Database, *, owner_id: str, word: str) -> MutedWordOut:
    """Mute the word, and move the creator's waiting messages that hold it to their
    links' filtered folders, in one transaction."""
    shown, normalized = checked_word(word, field="word")
    now = now_us()
    word_id = new_ulid(now)
    async with db.transaction() as tx:
        inserted = await tx.execute(
            "INSERT INTO muted_words (id, user_id, word, normalized, created_at)"
            " SELECT $1, $2, $3, $4, $5"
            # $7 is $2 again: PostgreSQL infers one type per parameter, and these two differ.
            " WHERE (SELECT count(*) FROM muted_words WHERE user_id = $7) < $6"
            " ON CONFLICT (user_id, normalized) DO NOTHING",
            word_id,
            owner_id,
            shown,
            normalized,
            now,
            MAX_MUTED_WORDS,
            owner_id,
        )
        if inserted:
            await move_muted(
                tx, db.dialect, owner_id=owner_id, words=MutedWords.of([normalized]), now=now
            )
    if not inserted:
        if await db.fetchrow(
            "SELECT 1 FROM muted_words WHERE user_id = $1 AND normalized = $2", owner_id, normalized
        ):
            raise Conflict(f"{shown!r} is already muted")
        raise TooManyMutedWords(
            f"You have muted {MAX_MUTED_WORDS} words, the most there can be; unmute some first"
        )
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
