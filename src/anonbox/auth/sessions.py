"""Sign-in sessions: a short-lived access token and a refresh token that rotates.

A session is renewed at most until ``session_max_seconds`` (90 days) after it was opened,
however often it is used; its last access token then runs out within the hour. Each new
sign-in forgets the sessions that ended (expired, signed out, or past that limit) longer
ago than a refresh token lives: until then a replayed refresh token is still recognised.

Presenting a refresh token that was already rotated out means someone holds a copy
(RFC 9700 §4.14.2): the whole session is revoked, for the thief and the owner alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from anonbox.auth import repository
from anonbox.core.clock import now_us
from anonbox.core.database import Connection, Database
from anonbox.core.errors import Unauthorized
from anonbox.core.ids import new_ulid
from anonbox.core.settings import Settings
from anonbox.identity.credential_cache import announce, changed_key, session_key
from anonbox.identity.credentials import (
    ACCESS_TOKEN_PREFIX,
    REFRESH_TOKEN_PREFIX,
    credential_hash,
    new_credential,
)
from anonbox.identity.service import forget_credentials

_US = 1_000_000


@dataclass(frozen=True, slots=True)
class SessionTokens:
    access_token: str
    refresh_token: str
    expires_in: int  # seconds the access token lives


@dataclass(frozen=True, slots=True)
class _Issued:
    """New tokens, and what of them the database keeps."""

    tokens: SessionTokens
    access_hash: str
    access_expires_at: int
    refresh_hash: str
    refresh_expires_at: int


def _issue(settings: Settings, now: int) -> _Issued:
    tokens = SessionTokens(
        access_token=new_credential(ACCESS_TOKEN_PREFIX),
        refresh_token=new_credential(REFRESH_TOKEN_PREFIX),
        expires_in=settings.access_token_ttl_seconds,
    )
    return _Issued(
        tokens=tokens,
        access_hash=credential_hash(tokens.access_token),
        access_expires_at=now + settings.access_token_ttl_seconds * _US,
        refresh_hash=credential_hash(tokens.refresh_token),
        refresh_expires_at=now + settings.refresh_token_ttl_seconds * _US,
    )


async def open_session(conn: Connection, *, user_id: str, settings: Settings) -> SessionTokens:
    now = now_us()
    kept = settings.refresh_token_ttl_seconds * _US
    await repository.purge_sessions(
        conn,
        ended_before=now - kept,
        opened_before=now - settings.session_max_seconds * _US - kept,
    )
    issued = _issue(settings, now)
    await repository.insert_session(
        conn,
        session_id=new_ulid(now),
        user_id=user_id,
        access_hash=issued.access_hash,
        access_expires_at=issued.access_expires_at,
        refresh_hash=issued.refresh_hash,
        refresh_expires_at=issued.refresh_expires_at,
        created_at=now,
    )
    return issued.tokens


async def refresh_session(db: Database, *, refresh_token: str, settings: Settings) -> SessionTokens:
    presented = credential_hash(refresh_token)
    now = now_us()
    issued = _issue(settings, now)
    reused_session: str | None = None
    async with db.transaction() as tx:
        rotated = await repository.rotate_session(
            tx,
            old_refresh_hash=presented,
            access_hash=issued.access_hash,
            access_expires_at=issued.access_expires_at,
            refresh_hash=issued.refresh_hash,
            refresh_expires_at=issued.refresh_expires_at,
            now=now,
            opened_after=now - settings.session_max_seconds * _US,
        )
        if rotated is not None:
            await repository.spend_refresh_token(
                tx, refresh_hash=presented, session_id=rotated["id"], spent_at=now
            )
            # The access token it replaces stops working at once, everywhere.
            await announce(tx, [changed_key(rotated["user_id"])])
        else:
            reused_session = await repository.session_of_spent_token(tx, presented)
            if reused_session is not None:
                await repository.revoke_session(tx, session_id=reused_session, revoked_at=now)
                await announce(tx, [session_key(reused_session)])
    # Raised after the commit, so that a detected reuse stays revoked.
    if reused_session is not None:
        forget_credentials(session_key(reused_session))
        raise Unauthorized(
            "This refresh token was already used, so the session has been signed out; sign in again"
        )
    if rotated is None:
        raise Unauthorized("The refresh token is not valid, has expired, or was signed out")
    forget_credentials(changed_key(rotated["user_id"]))
    return issued.tokens


async def close_session(db: Database, *, session_id: str) -> None:
    """Sign a session out; its live streams, on every instance, end (``outbox``)."""
    async with db.transaction() as tx:
        await repository.revoke_session(tx, session_id=session_id, revoked_at=now_us())
        await announce(tx, [session_key(session_id)])
    forget_credentials(session_key(session_id))


async def still_signed_in(db: Database, *, session_id: str) -> bool:
    """Whether a session checked earlier is still open (for what outlives one request)."""
    return await repository.session_is_open(db, session_id, now_us())
