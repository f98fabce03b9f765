"""Deleting an account: at once disabled, erased for good after a grace period.

Asking disables the account in one transaction: its links are gone (404 ``link_gone``) to
everyone (see ``links.availability``), every API key and session is revoked, and live
streams of those sessions end. Its creator may still sign in, and then sees only the
deletion and a way to cancel it (``identity.dependencies.in_service``); cancelling brings
everything back but the revoked keys.

After ``ANONBOX_ACCOUNT_ERASE_DAYS`` the erasure chore (``erase_due``, a chore of every
instance: ``core.chores``) of any instance claims the account (a conditional UPDATE:
exactly one instance gets it; a claim is a lease, renewed as the work goes on, so
another instance finishes the job if this one dies) and deletes every row it owns:
messages a chunk per transaction, so a large account never holds SQLite's writer for
long, then the rest and the account itself in one last transaction. Its link ids are
kept, alone, so that no one is ever given one of them again.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

from anonbox.account import avatar, repository
from anonbox.account.schemas import (
    MAX_BIO_CHARACTERS,
    MAX_DISPLAY_NAME_CHARACTERS,
    AvatarOut,
    DeletionState,
    Preferences,
    PublicProfile,
    SignedInAs,
)
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database, Row
from anonbox.core.errors import Conflict, FieldProblem, Unauthorized, ValidationFailed
from anonbox.core.i18n import LANGUAGES, valid_time_zone
from anonbox.core.settings import Settings
from anonbox.core.text import contains_control_characters, draws_nothing, normalised_text
from anonbox.identity.credential_cache import announce, changed_key, session_key
from anonbox.identity.service import forget_credentials

logger = logging.getLogger("anonbox.account")

_US = 1_000_000
_DAY_US = 24 * 3600 * _US
# Messages deleted per transaction while erasing: SQLite's one writer is held for a few
# milliseconds at a time, and posts to other links go on meanwhile.
ERASE_CHUNK = 2000
# How long a claim holds without being renewed: long past any one chunk, short enough
# that an instance that died mid-way is relieved soon.
CLAIM_US = 5 * 60 * _US
# Accounts one sweep takes on; the next sweep takes the rest.
SWEEP_ACCOUNTS = 10
# A checkpoint waits for readers of older snapshots; tried again briefly, else the next
# erasure's (or SQLite's own automatic checkpoints) will.
_CHECKPOINT_TRIES = 20

# Pictures re-encoded at once by this process: each is tens of milliseconds of CPU and up
# to 64 MiB of decoded pixels (account.avatar.MAX_PIXELS), so a burst of uploads waits
# rather than filling the memory.
_ENCODING = asyncio.Semaphore(2)
_NOT_SCHEDULED = DeletionState(scheduled=False, requested_at=None, erase_at=None)


class ErasureBegun(Conflict):
    code = "erasure_begun"


def _state(row: Row | None) -> DeletionState:
    if row is None:
        return _NOT_SCHEDULED
    return DeletionState(
        scheduled=True,
        requested_at=isoformat_us(row["requested_at"]),
        erase_at=isoformat_us(row["erase_at"]),
    )


def grace_us(settings: Settings) -> int:
    return int(settings.account_erase_days * _DAY_US)


async def deletion_state(db: Database, *, user_id: str) -> DeletionState:
    return _state(await repository.deletion_of(db, user_id))


async def request_deletion(db: Database, *, user_id: str, settings: Settings) -> DeletionState:
    """Disable the account now and schedule its erasure; asked again, the date stands."""
    now = now_us()
    async with db.transaction() as tx:
        await repository.schedule_deletion(
            tx, user_id=user_id, requested_at=now, erase_at=now + grace_us(settings)
        )
        sessions = await repository.revoke_credentials(tx, user_id=user_id, now=now)
        # Live streams of those sessions end, and every instance stops taking the
        # account's credentials (notifications.fanout, identity.credential_cache).
        changed = [changed_key(user_id), *(session_key(session) for session in sessions)]
        await announce(tx, changed)
        row = await repository.deletion_of(tx, user_id)
    forget_credentials(*changed)
    return _state(row)


async def cancel_deletion(db: Database, *, user_id: str) -> DeletionState:
    """Bring the account back (its revoked keys stay revoked); fine when none is scheduled."""
    changed = changed_key(user_id)  # its sign-ins are no longer only for the deletion
    async with db.transaction() as tx:
        cancelled = await repository.cancel_deletion(tx, user_id=user_id, now=now_us())
        if cancelled:
            await announce(tx, [changed])
    if cancelled:
        forget_credentials(changed)
    elif await repository.deletion_of(db, user_id) is not None:
        raise ErasureBegun("The erasure of this account has begun; it can no longer be cancelled")
    return _NOT_SCHEDULED


async def erase_account(db: Database, *, user_id: str) -> bool:
    """Erase a due account if this instance gets the claim; whether it did."""
    now = now_us()
    held = now + CLAIM_US
    if not await repository.claim_erasure(db, user_id=user_id, now=now, until=held):
        return False  # another instance has it, or it was cancelled
    erased = 0
    for link_id in await repository.link_ids_of(db, user_id):
        while True:
            through = await repository.chunk_end(db, link_id=link_id, size=ERASE_CHUNK)
            async with db.transaction() as tx:
                renewed = now_us() + CLAIM_US
                if not await repository.renew_claim(
                    tx, user_id=user_id, held_until=held, until=renewed
                ):
                    return False  # our claim ran out and another instance took over
                held = renewed
                erased += await repository.erase_messages(tx, link_id=link_id, through=through)
            if through is None:
                break
    async with db.transaction() as tx:
        if not await repository.renew_claim(tx, user_id=user_id, held_until=held, until=held):
            return False
        await repository.erase_rest(tx, user_id=user_id, now=now_us())
        await announce(tx, [changed_key(user_id)])
    forget_credentials(changed_key(user_id))
    # No copy left behind: the search index merged without the erased texts, and SQLite's
    # WAL (which still holds every page the deletes changed) written back and emptied.
    await repository.merge_search_index(db)
    for _ in range(_CHECKPOINT_TRIES):
        if await db.checkpoint():
            break
        await asyncio.sleep(0.05)
    else:
        logger.warning("after an erasure the database log could not be emptied: readers busy")
    # No id: once erased, nothing anywhere should name the account, logs included.
    logger.info("an account was erased, with %d messages", erased)
    return True


def erase_every(settings: Settings) -> float:
    """Seconds between sweeps: a tenth of the grace period, between 0.2 s (tests) and a
    minute."""
    return min(60.0, max(0.2, grace_us(settings) / _US / 10))


async def erase_due(db: Database) -> int:
    """One sweep, the scheduled chore: every instance runs it (``core.chores``), and each
    due account is erased once, by the instance whose claim holds; how many this one
    erased."""
    erased = 0
    for user_id in await repository.due_deletions(db, now=now_us(), limit=SWEEP_ACCOUNTS):
        erased += await erase_account(db, user_id=user_id)
    return erased


# --- preferences ---------------------------------------------------------------------------


async def preferences(db: Database, *, user_id: str, first_language: str) -> Preferences:
    """The creator's language and time zone; a creator without a language yet gets
    ``first_language`` (their browser's), stored, so their mail speaks it too."""
    row = await repository.preferences(db, user_id)
    language = row["language"] if row is not None else None
    if language not in LANGUAGES:
        language = first_language
        await repository.set_language_once(db, user_id, language)
    zone = valid_time_zone((row["time_zone"] if row is not None else None) or "")
    return Preferences(language=language, time_zone=zone or "UTC", time_zone_chosen=bool(zone))


async def first_time_zone(db: Database, *, user_id: str, time_zone: str) -> None:
    """The zone of the creator's browser, told by their first dashboard page: stored only
    while they have none (a zone once chosen is never overwritten)."""
    if valid_time_zone(time_zone) is None:
        raise ValidationFailed("time zone unknown", [FieldProblem("time_zone", "unknown")])
    await repository.set_time_zone_once(db, user_id, time_zone)


async def set_preferences(db: Database, *, user_id: str, language: str, time_zone: str) -> None:
    problems = []
    if language not in LANGUAGES:
        problems.append(FieldProblem("language", "unknown"))
    if valid_time_zone(time_zone) is None:
        problems.append(FieldProblem("time_zone", "unknown"))
    if problems:
        raise ValidationFailed("language or time zone unknown", problems)
    await repository.set_preferences(db, user_id, language, time_zone)


# --- the public profile ----------------------------------------------------------------------


async def public_profile(db: Database, *, user_id: str) -> PublicProfile:
    row = await repository.public_profile(db, user_id)
    if row is None:  # the account was deleted while its credential was in flight
        raise Unauthorized("This account no longer exists")
    return PublicProfile(display_name=row["display_name"], bio=row["bio"])


async def signed_in_as(db: Database, *, user_id: str) -> SignedInAs:
    row = await repository.signed_in_as(db, user_id)
    if row is None:  # the account was deleted while its credential was in flight
        raise Unauthorized("This account no longer exists")
    return SignedInAs(name=row["name"])


def _bio(bio: str) -> str | None:
    """A bio of only whitespace and characters that draw nothing (zero-width ones, Hangul
    fillers, the braille blank: ``core.text.draws_nothing``) is no bio; otherwise the rules
    of any typed text. Control characters are refused first, even in a blank one:
    ``str.strip()`` takes some of them (U+001C to U+001F, U+0085) for whitespace, and the
    document's pattern refuses them."""
    if contains_control_characters(bio):
        raise ValidationFailed(
            "bio must not contain control characters", [FieldProblem("bio", "control_character")]
        )
    if draws_nothing(bio):
        return None
    return normalised_text(bio, field="bio", max_characters=MAX_BIO_CHARACTERS, trim=True)


async def set_public_profile(
    db: Database, *, user_id: str, display_name: str | None, bio: str | None, set_bio: bool
) -> PublicProfile:
    """Choose the public name (None keeps it) and, if ``set_bio``, the bio (None or empty
    removes it). Both are NFC-normalised and trimmed; a bad one changes nothing."""
    problems: list[FieldProblem] = []
    name = None
    if display_name is not None:
        try:
            name = normalised_text(
                display_name,
                field="display_name",
                max_characters=MAX_DISPLAY_NAME_CHARACTERS,
                trim=True,
                visible=True,  # a name of zero-width characters would look like none
            )
        except ValidationFailed as exc:
            problems += exc.fields
    text = None
    if set_bio and bio is not None:
        try:
            text = _bio(bio)
        except ValidationFailed as exc:
            problems += exc.fields
    if problems:
        raise ValidationFailed(
            f"display_name must be 1 to {MAX_DISPLAY_NAME_CHARACTERS} characters and bio at "
            f"most {MAX_BIO_CHARACTERS}, without control characters",
            problems,
        )
    row = await repository.set_public_profile(
        db, user_id, display_name=name, bio=text, set_bio=set_bio
    )
    if row is None:
        raise Unauthorized("This account no longer exists")
    return PublicProfile(display_name=row["display_name"], bio=row["bio"])


# --- the avatar ------------------------------------------------------------------------------


async def _avatar_out(db: Database, user_id: str) -> AvatarOut:
    row = await repository.public_profile(db, user_id)
    if row is None:
        raise Unauthorized("This account no longer exists")
    uploaded = await repository.avatar_id(db, user_id)
    ref = avatar.avatar_ref(user_id=user_id, uploaded=uploaded, named=bool(row["display_name"]))
    return AvatarOut(avatar_url=ref.url, uploaded=uploaded is not None)


async def avatar_of(db: Database, *, user_id: str) -> AvatarOut:
    return await _avatar_out(db, user_id)


async def set_avatar(db: Database, *, user_id: str, data: bytes) -> AvatarOut:
    """Re-encode the upload (``account.avatar``: a bad one changes nothing) and make it
    the creator's picture, at a new address."""
    async with _ENCODING:
        image = await asyncio.to_thread(avatar.reencode, data)
    await repository.set_avatar(
        db, user_id=user_id, avatar_id=secrets.token_urlsafe(16), image=image, now=now_us()
    )
    return await _avatar_out(db, user_id)


async def delete_avatar(db: Database, *, user_id: str) -> AvatarOut:
    """Back to the generated picture; fine when there was no upload."""
    await repository.delete_avatar(db, user_id)
    return await _avatar_out(db, user_id)


async def avatar_image(db: Database, *, avatar_id: str) -> bytes | None:
    return await repository.avatar_image(db, avatar_id)
