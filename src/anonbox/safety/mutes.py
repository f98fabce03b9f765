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

from collections import OrderedDict
from dataclasses import dataclass

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database
from anonbox.core.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from anonbox.core.ids import new_ulid
from anonbox.core.text import contains_control_characters
from anonbox.messages import filtered_repository
from anonbox.safety import repository
from anonbox.safety.schemas import (
    MAX_WORD_CHARACTERS,
    NO_MUTED_WORDS,
    MutedWordList,
    MutedWordOut,
    MutedWords,
    folded,
)

# What a word becomes once folded: NFKC may lengthen it (the column holds 400).
MAX_FOLDED_CHARACTERS = 400
MAX_MUTED_WORDS = 1000
_CACHED_CREATORS = 10_000
# How many waiting (unanswered) messages, newest first, a newly muted word is looked for
# in: a bound on the work done in the transaction that mutes it.
MOVE_SCAN_LIMIT = 10_000
_MOVE_BATCH = 1_000


class TooManyMutedWords(Conflict):
    code = "too_many_muted_words"


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


async def _site_phrases(db: Database, version: Version) -> MutedWords:
    global _site
    if _site[0] != version:
        _site = (version, MutedWords.of(await repository.site_phrases(db)))
    return _site[1]


async def muted_of(db: Database, owner_id: str) -> MutedWords:
    """The creator's muted words together with the site's muted phrases."""
    row = await repository.muted_versions(db, owner_id)
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
        own = MutedWords.of(await repository.muted_words_of(db, owner_id))
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
        inserted = await repository.insert_muted_word(
            tx,
            word_id=word_id,
            owner_id=owner_id,
            word=shown,
            normalized=normalized,
            created_at=now,
            most=MAX_MUTED_WORDS,
        )
        if inserted:
            await move_muted(
                tx, db.dialect, owner_id=owner_id, words=MutedWords.of([normalized]), now=now
            )
    if not inserted:
        if await repository.muted_word_exists(db, owner_id=owner_id, normalized=normalized):
            raise Conflict(f"{shown!r} is already muted")
        raise TooManyMutedWords(
            f"You have muted {MAX_MUTED_WORDS} words, the most there can be; unmute some first"
        )
    return MutedWordOut(id=word_id, word=shown, created_at=isoformat_us(now))


async def muted_words(db: Database, *, owner_id: str) -> MutedWordList:
    rows = await repository.muted_word_rows(db, owner_id)
    return MutedWordList(
        items=[
            MutedWordOut(id=row["id"], word=row["word"], created_at=isoformat_us(row["created_at"]))
            for row in rows
        ]
    )


async def unmute(db: Database, *, owner_id: str, word_id: str) -> None:
    if not await repository.delete_muted_word(db, owner_id=owner_id, word_id=word_id):
        raise NotFound("No muted word with this id among yours")
