"""Safety's rules: blocked senders and muted words.

Blocking "whoever sent this message", by a creator or site-wide by an admin.

A block holds the sender's keyed hash under the period the message was sent in, and
the message's id and excerpt so its owner knows what they blocked; it never shows the
hash. Each block is about its own message: blocking a second message of a sender who is
already blocked makes a second block, so no answer tells that the two share a sender.
When a blocked sender posts again, their blocks are re-keyed to the current period, so
a sender who keeps trying stays blocked across key rotation.

A block may also cover the sender's whole network (``network``: the IPv4 /24 or IPv6 /48
around them, ``senders.network_of_block``), for a sender who rotates addresses; it is
kept as that network's keyed hash, and is a block of its own beside the sender's.

A block applies to new messages only: nothing already waiting moves, in the inbox or
anywhere else. Moving the sender's (or network's) other waiting messages would show the
creator exactly which messages share a sender, the one thing a block must never tell
(``docs/decisions.md``, issue 32). The blocked message itself stays where it is too.

Muted words: a creator's list of words that make a message disappear on arrival.

Matching (``safety.matching``) normalises text and words the same way (NFKC, case,
width and kana folding, accents and invisible characters removed, kana voicing kept),
finds words anywhere in scripts written without spaces (Japanese, Chinese, Korean,
Thai…) and elsewhere as whole words with their plural: a muted "idiot" catches "IDIOT",
"ídiot", "id\u200biot" and "idiots" but not "idiotic"; a muted "ばか" catches "バカ" and
"ﾊﾞｶ" in "お前はﾊﾞｶだ" but not "はか".

A creator may mute at most ``MAX_MUTED_WORDS`` words. They are matched by one
Aho-Corasick automaton, one pass over a post whatever the list's length, never by one
pattern of all the words. Each process keeps every creator's automaton until their list
changes, which a cheap query (count and newest id) notices on every post, on every
instance; the site's phrases are an automaton of their own, shared by every creator.

The site's muted phrases (``muted_phrases``, kept by admins through ``moderation``) are
muted words of every link: they join each creator's own list and act exactly like them.
The same query that checks a creator's list checks the site's, so they cost no query of
their own on a post, and no instance matches a stale site list either.

A word muted later applies to the messages already waiting too: in the same transaction
as the word, the newest ``MOVE_SCAN_LIMIT`` unanswered messages (of the creator's links,
or of every link for a site phrase) are looked at, and those holding it move to their
link's filtered folder (``MoveMuted``: messages' filtered folder does it, and builds on
safety, so the caller hands it in); answered ones stay where they are.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database, Row, one_at_a_time
from anonbox.core.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from anonbox.core.ids import new_ulid
from anonbox.core.text import contains_control_characters
from anonbox.safety import repository
from anonbox.safety.matching import NOTHING, Matcher, normalised
from anonbox.safety.schemas import (
    MAX_WORD_CHARACTERS,
    BlockList,
    BlockOut,
    IPAddress,
    MessageSender,
    MutedWordList,
    MutedWordOut,
    SenderId,
)
from anonbox.safety.senders import SenderKeys

_EXCERPT_CHARACTERS = 120
# What a word becomes once normalised: NFKC may lengthen it (the column holds 400).
MAX_FOLDED_CHARACTERS = 400
MAX_MUTED_WORDS = 1000
_CACHED_CREATORS = 10_000
# And at most this many words in all across them: an automaton takes about 250 bytes a
# word (measured with 1,000 words), so the cache stays within about 100 MB.
_CACHED_WORDS = 400_000
# How many waiting (unanswered) messages, newest first, a newly muted word is looked for
# in: a bound on the work done in the transaction that mutes it.
MOVE_SCAN_LIMIT = 10_000


# --- blocks ------------------------------------------------------------------------------


async def sender_of(conn: Connection, *, message_id: str, link_id: str | None) -> MessageSender:
    """The sender of a message (under ``link_id`` when given), as far as it is still known."""
    row = await repository.message_sender(conn, message_id=message_id, link_id=link_id)
    if row is None:
        raise NotFound("No message with this id under this link")
    if row["sender_hash"] is None:
        raise Conflict("This message is too old: its sender can no longer be recognised")
    return MessageSender(
        message_id=message_id,
        excerpt=row["content"][:_EXCERPT_CHARACTERS],
        sender=SenderId(
            epoch=row["sender_epoch"], hash=row["sender_hash"], network=row["sender_network_hash"]
        ),
    )


async def block(
    db: Connection,
    *,
    owner_id: str | None,
    target: MessageSender,
    network: bool = False,
) -> BlockOut:
    """Block the sender of this message (or with ``network``, their whole network) for
    ``owner_id``'s links, or everywhere when ``owner_id`` is None, from their next message
    on: no message already stored moves. Blocking one message twice the same way answers
    with the same block."""
    sender_hash = target.sender.network if network else target.sender.hash
    if sender_hash is None:
        raise Conflict("This message is too old: its sender's network can no longer be recognised")
    existing = await repository.block_of_message(
        db, owner_id=owner_id, message_id=target.message_id, network=network
    )
    if existing is not None:
        return _block_out(existing, site_wide=owner_id is None)
    now = now_us()
    block_id = new_ulid(now)
    await repository.insert_block(
        db,
        block_id=block_id,
        owner_id=owner_id,
        message_id=target.message_id,
        sender_epoch=target.sender.epoch,
        sender_hash=sender_hash,
        excerpt=target.excerpt,
        created_at=now,
        network=network,
    )
    return BlockOut(
        id=block_id,
        message_excerpt=target.excerpt,
        created_at=isoformat_us(now),
        site_wide=owner_id is None,
        network=network,
    )


def _block_out(row: Row, *, site_wide: bool) -> BlockOut:
    return BlockOut(
        id=row["id"],
        message_excerpt=row["message_excerpt"],
        created_at=isoformat_us(row["created_at"]),
        site_wide=site_wide,
        network=bool(row["network"]),
    )


async def blocks_of(db: Database, *, owner_id: str) -> BlockList:
    rows = await repository.blocks_of(db, owner_id)
    return BlockList(items=[_block_out(row, site_wide=False) for row in rows])


async def blocks_from(db: Database, *, owner_id: str, message_id: str) -> list[BlockOut]:
    """The blocks the creator made from this message, and only those: never the blocks
    made from another message of the same sender, which would tell that the two share one
    (DESIGN §6). The message's page shows them, each with its undo."""
    rows = await repository.blocks_from_message(db, owner_id=owner_id, message_id=message_id)
    return [_block_out(row, site_wide=False) for row in rows]


async def unblock(
    db: Database, *, owner_id: str, block_id: str, message_id: str | None = None
) -> None:
    """Take back one of the creator's blocks (with ``message_id``: one made from it)."""
    if not await repository.delete_block(
        db, owner_id=owner_id, block_id=block_id, message_id=message_id
    ):
        raise NotFound("No block with this id among yours")


async def is_blocked(
    db: Database,
    keys: SenderKeys,
    *,
    owner_id: str,
    address: IPAddress,
    current: SenderId,
    account: str | None = None,
) -> bool:
    """Whether this sender (their ``account`` when they are known by one:
    ``senders.identity_of``), or their network, is blocked by the link's owner or
    site-wide."""
    rows = await repository.blocks_against(db, owner_id)
    # Per period: the sender's hash and their network's, as each block of that period has it.
    hashes: dict[int, tuple[str, str | None] | None] = {
        current.epoch: (current.hash, current.network)
    }
    blocked = False
    for row in rows:
        epoch = row["sender_epoch"]
        if epoch not in hashes:
            key = await keys.key(db, epoch)
            hashes[epoch] = (
                None
                if key is None
                else (
                    keys.hash_with(key, address, account),
                    keys.network_hash_with(key, address),
                )
            )
        known = hashes[epoch]
        is_network = bool(row["network"])
        if known is not None and known[is_network] == row["sender_hash"]:
            blocked = True
            if epoch != current.epoch:  # every block of this sender follows them
                await repository.rekey_block(
                    db,
                    block_id=row["id"],
                    epoch=current.epoch,
                    sender_hash=current.network if is_network else current.hash,
                )
    return blocked


# --- muted words -------------------------------------------------------------------------


class TooManyMutedWords(Conflict):
    code = "too_many_muted_words"


Version = int  # of a list: bumped by every change (safety.repository.muted_list_changed)


@dataclass(frozen=True, slots=True)
class _Cached:
    version: Version
    own: Matcher


# owner -> their words' automaton: seen stale on the next post after any change (a word
# added or removed, on any instance). The site's phrases are one automaton for everyone.
_cache: OrderedDict[str, _Cached] = OrderedDict()
_cached_words = 0
_site: tuple[Version, Matcher] = (0, NOTHING)


async def _site_phrases(db: Database, version: Version) -> Matcher:
    global _site
    if _site[0] != version:
        _site = (version, Matcher.of(await repository.site_phrases(db)))
    return _site[1]


async def _own_words(db: Database, owner_id: str, version: Version) -> Matcher:
    global _cached_words
    cached = _cache.get(owner_id)
    if cached is not None and cached.version == version:
        _cache.move_to_end(owner_id)
        return cached.own
    own = Matcher.of(await repository.muted_words_of(db, owner_id))
    if cached is not None:
        _cached_words -= cached.own.size
    _cache[owner_id] = _Cached(version, own)
    _cache.move_to_end(owner_id)
    _cached_words += own.size
    while len(_cache) > 1 and (len(_cache) > _CACHED_CREATORS or _cached_words > _CACHED_WORDS):
        _, evicted = _cache.popitem(last=False)
        _cached_words -= evicted.own.size
    return own


async def muted_of(db: Database, owner_id: str) -> Matcher:
    """The creator's muted words together with the site's muted phrases."""
    row = await repository.muted_versions(db, owner_id)
    own_version, site_version = row["own"], row["site"]
    own = NOTHING if own_version is None else await _own_words(db, owner_id, int(own_version))
    if site_version is None:
        return own
    return own.joined(await _site_phrases(db, int(site_version)))


async def muted_list_changed(conn: Connection, owner_id: str | None) -> None:
    """Say, in the transaction that changed it, that the creator's list of muted words
    (None: the site's muted phrases) changed: every process builds it again."""
    await repository.muted_list_changed(conn, repository.SITE if owner_id is None else owner_id)


def checked_word(text: str, *, field: str) -> tuple[str, str]:
    """A word or phrase to mute as shown (single-spaced) and as matched (normalised); 400
    when it is blank, longer than ``MAX_WORD_CHARACTERS``, or holds a control character."""
    shown = " ".join(text.split())
    normalized = normalised(shown)
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


class MoveMuted(Protocol):
    """Moves the waiting messages holding one of ``words`` to their filtered folders, in
    the caller's transaction: of ``owner_id``'s links, or of every link; how many moved.
    The folders are messages' (``messages.filtered.service.move_muted``), which builds on
    safety: its handlers and pages hand it to ``mute``."""

    async def __call__(
        self, conn: Connection, *, owner_id: str | None, words: Matcher, now: int
    ) -> int: ...


async def mute(db: Database, *, owner_id: str, word: str, move: MoveMuted) -> MutedWordOut:
    """Mute the word, and move the creator's waiting messages that hold it to their
    links' filtered folders, in one transaction."""
    shown, normalized = checked_word(word, field="word")
    now = now_us()
    word_id = new_ulid(now)
    async with db.transaction() as tx:
        # Alone for this creator, on every instance: the insert counts the list first, and
        # parallel ones on PostgreSQL all counted below the cap before any was added.
        await one_at_a_time(tx, f"muted_words:{owner_id}")
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
            await muted_list_changed(tx, owner_id)
            await move(tx, owner_id=owner_id, words=Matcher.of([shown]), now=now)
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
    async with db.transaction() as tx:
        if not await repository.delete_muted_word(tx, owner_id=owner_id, word_id=word_id):
            raise NotFound("No muted word with this id among yours")
        await muted_list_changed(tx, owner_id)
