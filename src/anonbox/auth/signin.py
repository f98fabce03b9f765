"""Sign-in with an OpenID Connect provider: authorization code flow with PKCE, state
and nonce (RFC 9700 §2.1), finished by any instance from what the database keeps."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass

from anonbox.auth import repository
from anonbox.auth.oidc import OIDCClient, SignInFailed
from anonbox.auth.service import account_for_identity
from anonbox.auth.sessions import SessionTokens, open_session
from anonbox.core.clock import now_us
from anonbox.core.database import Database
from anonbox.core.settings import Settings
from anonbox.identity.credentials import credential_hash

_US = 1_000_000
_PURGE_AFTER_US = 3600 * _US  # used or expired states are kept an hour, then dropped


@dataclass(frozen=True, slots=True)
class SignInStart:
    url: str
    binding: str  # the user agent's secret, for the HttpOnly cookie


def _pkce_challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


async def start_signin(db: Database, oidc: OIDCClient, settings: Settings) -> SignInStart:
    state = secrets.token_urlsafe(32)
    verifier = secrets.token_urlsafe(64)  # 86 characters: RFC 7636 allows 43 to 128
    nonce = secrets.token_urlsafe(32)
    binding = secrets.token_urlsafe(32)
    url = await oidc.authorization_url(
        state=state, code_challenge=_pkce_challenge(verifier), nonce=nonce
    )
    now = now_us()
    async with db.transaction() as tx:
        await repository.purge_signin_states(tx, expired_before=now - _PURGE_AFTER_US)
        await repository.insert_signin_state(
            tx,
            state=state,
            binding_hash=credential_hash(binding),
            code_verifier=verifier,
            nonce=nonce,
            expires_at=now + settings.signin_state_ttl_seconds * _US,
        )
    return SignInStart(url=url, binding=binding)


async def finish_signin(
    db: Database,
    oidc: OIDCClient,
    settings: Settings,
    *,
    code: str,
    state: str,
    binding: str | None,
    language: str | None = None,
) -> SessionTokens:
    """The provider's answer: a session for its identity's account (made if new, in the
    signing-in browser's ``language``)."""
    if not binding:
        raise SignInFailed(
            "This sign-in was not started in this browser; start again from the sign-in link"
        )
    pending = await repository.consume_signin_state(
        db, state=state, binding_hash=credential_hash(binding), now=now_us()
    )
    if pending is None:
        raise SignInFailed(
            "This sign-in is unknown, expired, already used, or was started elsewhere; "
            "start again from the sign-in link"
        )
    id_token = await oidc.exchange_code(code=code, code_verifier=pending["code_verifier"])
    identity = await oidc.verify_id_token(id_token, nonce=pending["nonce"])
    async with db.transaction() as tx:
        user_id = await account_for_identity(
            tx,
            subject=identity.subject,
            email=identity.email,
            name=identity.name,
            picture_url=identity.picture_url,
            language=language,
        )
        return await open_session(tx, user_id=user_id, settings=settings)
