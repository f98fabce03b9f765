"""Who a credential proves: ``Principal``, ``authenticate`` and the cache of proven credentials.

Every caller's identity, for the API's access rules (``identity.dependencies``), the
pages' session (``web.infra.session``) and the live streams, comes from here; signing
in, sign-up and API keys are ``auth``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from anonbox.core.clock import now_us
from anonbox.core.database import Database
from anonbox.core.errors import Unauthorized
from anonbox.identity import repository
from anonbox.identity.credential_cache import CredentialCache, changed_key, session_key
from anonbox.identity.credentials import (
    ACCESS_TOKEN_PREFIX,
    API_KEY_PREFIX,
    MAX_CREDENTIAL_LENGTH,
    credential_hash,
    hashes_match,
)

# Recording every use would turn each authenticated read into a write.
_LAST_USED_RESOLUTION_US = 60 * 1_000_000

# When this process last recorded each key's use: requests already in flight when the
# minute runs out all read the old time, and without this would all write the new one.
_touched_at: dict[str, int] = {}

_TOUCHED_KEYS_KEPT = 10_000

_US = 1_000_000


@dataclass(frozen=True, slots=True)
class Principal:
    """The creator a request acts for, and the credential that proved it."""

    user_id: str
    credential_id: str  # the API key's id, or the session's
    kind: Literal["api_key", "session"]
    is_admin: bool = False
    # The account is scheduled for erasure: only its deletion endpoints and page take it.
    erasing: bool = False


# Credentials proven lately: one cache per process (see ``credential_cache``).
proven: CredentialCache[Principal] = CredentialCache()


async def authenticate(db: Database, credential: str, *, sign_in_only: bool = False) -> Principal:
    """The creator a credential proves; with ``sign_in_only``, only a sign-in session's
    access token counts (an API key is refused as if unknown). A credential proven
    lately is taken from ``proven`` without a query (``credential_cache``)."""
    if len(credential) > MAX_CREDENTIAL_LENGTH:
        raise Unauthorized("The credential is not valid")
    if sign_in_only and not credential.startswith(ACCESS_TOKEN_PREFIX):
        raise Unauthorized("Sign in to do this; an API key cannot")
    presented = credential_hash(credential)
    remembered = proven.get(presented)
    if remembered is not None:
        if remembered.kind == "api_key":
            await _touch_api_key(db, remembered.credential_id, now_us())
        return remembered
    ticket = proven.ticket()
    if credential.startswith(ACCESS_TOKEN_PREFIX):
        now = now_us()
        session = await repository.active_session_by_access(db, presented, now)
        if session is None or not hashes_match(session["access_hash"], presented):
            raise Unauthorized("The access token is not valid, has expired, or was signed out")
        principal = Principal(
            user_id=session["user_id"],
            credential_id=session["id"],
            kind="session",
            is_admin=bool(session["is_admin"]),
            erasing=bool(session["erasing"]),
        )
        proven.put(
            presented,
            principal,
            ticket,
            keys=(changed_key(principal.user_id), session_key(principal.credential_id)),
            valid_for=(session["access_expires_at"] - now) / _US,
        )
        return principal
    if credential.startswith(API_KEY_PREFIX):
        key = await repository.active_api_key(db, presented)
        if key is None or not hashes_match(key["key_hash"], presented):
            raise Unauthorized("The API key is not valid, or has been revoked")
        principal = Principal(
            user_id=key["user_id"],
            credential_id=key["id"],
            kind="api_key",
            is_admin=bool(key["is_admin"]),
            erasing=bool(key["erasing"]),
        )
        if key["last_used_at"] is not None:
            seen = _touched_at.get(principal.credential_id, 0)
            _touched_at[principal.credential_id] = max(seen, key["last_used_at"])
        await _touch_api_key(db, principal.credential_id, now_us())
        proven.put(presented, principal, ticket, keys=(changed_key(principal.user_id),))
        return principal
    raise Unauthorized("The credential is not valid")


def forget_credentials(*keys: str) -> None:
    """After a commit that announced ``keys`` (``credential_cache.announce``): this process
    stops using the credentials under them at once."""
    for key in keys:
        proven.forget(key)


async def _touch_api_key(db: Database, key_id: str, now: int) -> None:
    """Record a key's use, once a minute per process however many requests see it stale."""
    if now - _touched_at.get(key_id, 0) <= _LAST_USED_RESOLUTION_US:
        return
    if len(_touched_at) >= _TOUCHED_KEYS_KEPT:
        _touched_at.clear()
    _touched_at[key_id] = now
    await repository.touch_api_key(db, key_id, now)
