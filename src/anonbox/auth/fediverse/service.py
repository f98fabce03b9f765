"""Sign-in with a Mastodon or Misskey account, and such accounts as ways into an account.

A sign-in starts with the instance's address: its software is read (NodeInfo), anonbox
is registered with a Mastodon instance once (kept in ``fediverse_apps``), and the browser
goes to the instance (OAuth with PKCE where offered; MiAuth for Misskey) bound to an
HttpOnly cookie, as Google's sign-in is. Back from the instance, the remote account signs
in to the anonbox account it is linked to, or to a new one; or, when a signed-in creator
started it from the account page, is linked to theirs. The instance's token is kept for
posting answers (``notifications.crosspost``) and never leaves the server.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
from dataclasses import dataclass
from enum import StrEnum

from anonbox.auth.fediverse import repository
from anonbox.auth.fediverse.client import (
    AppRegistration,
    InstanceClient,
    InstanceRefused,
    RemoteAccount,
    instance_base,
)
from anonbox.auth.fediverse.schemas import FediverseAccount
from anonbox.auth.oidc import SignInFailed
from anonbox.auth.sessions import SessionTokens, open_session
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.errors import Conflict, NotFound
from anonbox.core.i18n import N_
from anonbox.core.ids import new_ulid
from anonbox.core.settings import Settings
from anonbox.identity.credentials import credential_hash
from anonbox.links import repository as links
from anonbox.links.prompts import default_prompt

_US = 1_000_000
_PURGE_AFTER_US = 3600 * _US
# An account made by a fediverse sign-in has no e-mail address; ``users.email`` is
# required and unique, so it holds one under the reserved ``.invalid`` domain (RFC 2606):
# no mail reaches it and no e-mail sign-in can claim it. See docs/decisions.md.
PLACEHOLDER_DOMAIN = "fediverse.invalid"
logger = logging.getLogger("anonbox.auth")


class LastWayIn(Conflict):
    code = "last_way_in"


class AlreadyLinked(Conflict):
    code = "fediverse_account_linked_elsewhere"


@dataclass(frozen=True, slots=True)
class Started:
    url: str  # where the browser goes: the instance's authorization or MiAuth page
    binding: str  # the browser's secret, for the HttpOnly cookie


@dataclass(frozen=True, slots=True)
class Finished:
    tokens: SessionTokens | None  # a sign-in's session; None when an account was linked
    user_id: str


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


async def _app(
    db: Database, client: InstanceClient, base: str, *, redirect_uri: str, website: str
) -> AppRegistration:
    """anonbox's registration with this instance: made the first time, then kept."""
    row = await repository.app_for(db, instance=base, redirect_uri=redirect_uri)
    if row is None:
        made = await client.register_app(base, redirect_uri=redirect_uri, website=website)
        await repository.insert_app(
            db,
            instance=base,
            redirect_uri=redirect_uri,
            client_id=made.client_id,
            client_secret=made.client_secret,
            created_at=now_us(),
        )
        row = await repository.app_for(db, instance=base, redirect_uri=redirect_uri)
        assert row is not None, "a registration was just kept"
    return AppRegistration(str(row["client_id"]), str(row["client_secret"]))


async def start(
    db: Database,
    client: InstanceClient,
    settings: Settings,
    *,
    typed: str,
    redirect_uri: str,
    website: str,
    user_id: str | None = None,
) -> Started:
    """Begin signing in with the instance at ``typed`` (or linking it to ``user_id``)."""
    base = instance_base(typed, allow_private=client.allow_private)
    software = await client.software(base)
    binding = secrets.token_urlsafe(32)
    verifier: str | None = None
    if software == "misskey":
        state = secrets.token_hex(16)  # the MiAuth session id, a UUID's worth of randomness
        url = client.miauth_url(base, session=state, callback=redirect_uri)
    else:
        app = await _app(db, client, base, redirect_uri=redirect_uri, website=website)
        state = secrets.token_urlsafe(32)
        if await client.offers_pkce(base):
            verifier = secrets.token_urlsafe(64)
        url = client.authorization_url(
            base,
            client_id=app.client_id,
            redirect_uri=redirect_uri,
            state=state,
            challenge=None if verifier is None else _challenge(verifier),
        )
    now = now_us()
    async with db.transaction() as tx:
        await repository.purge_signins(tx, expired_before=now - _PURGE_AFTER_US)
        await repository.insert_signin(
            tx,
            state=state,
            binding_hash=credential_hash(binding),
            software=software,
            instance=base,
            code_verifier=verifier,
            user_id=user_id,
            expires_at=now + settings.signin_state_ttl_seconds * _US,
        )
    return Started(url=url, binding=binding)


async def finish(
    db: Database,
    client: InstanceClient,
    settings: Settings,
    *,
    state: str,
    code: str | None,
    binding: str | None,
    redirect_uri: str,
    website: str,
    language: str | None = None,
) -> Finished:
    """Back from the instance: a session for the account the remote account opens (made
    if new), or the remote account linked to the creator who started the linking."""
    if not binding:
        raise SignInFailed(
            N_("This sign-in was not started in this browser; start again from the sign-in page.")
        )
    pending = await repository.consume_signin(
        db, state=state, binding_hash=credential_hash(binding), now=now_us()
    )
    if pending is None:
        raise SignInFailed(
            N_(
                "This sign-in is unknown, expired, already used, or was started elsewhere; "
                "start again from the sign-in page."
            )
        )
    base = str(pending["instance"])
    if pending["software"] == "misskey":
        token, remote = await client.miauth_check(base, state)
    else:
        if not code:
            raise SignInFailed(
                N_("This sign-in address is incomplete; start again from the sign-in page.")
            )
        app = await _app(db, client, base, redirect_uri=redirect_uri, website=website)
        try:
            token = await client.exchange_code(
                base,
                app=app,
                code=code,
                redirect_uri=redirect_uri,
                verifier=pending["code_verifier"],
            )
        except InstanceRefused as exc:
            raise SignInFailed(
                N_("The instance refused to sign you in; please try again.")
            ) from exc
        remote = await client.mastodon_account(base, token)
    async with db.transaction() as tx:
        user_id = await _attach(
            tx,
            software=str(pending["software"]),
            instance=base,
            remote=remote,
            token=token,
            linking_to=pending["user_id"],
            language=language,
        )
        if pending["user_id"] is not None:
            return Finished(tokens=None, user_id=user_id)
        return Finished(
            tokens=await open_session(tx, user_id=user_id, settings=settings), user_id=user_id
        )


async def _attach(
    conn: Connection,
    *,
    software: str,
    instance: str,
    remote: RemoteAccount,
    token: str,
    linking_to: str | None,
    language: str | None,
) -> str:
    """The anonbox account the remote account belongs to, its token kept: the one it is
    linked to; else ``linking_to``; else a new account with a default link."""
    known = await repository.account_by_remote(conn, instance=instance, remote_id=remote.remote_id)
    if known is not None:
        if linking_to is not None and known["user_id"] != linking_to:
            raise AlreadyLinked(
                N_("This fediverse account already signs in to another anonbox account.")
            )
        await repository.reconnect(
            conn, account_id=str(known["id"]), acct=remote.acct, access_token=token
        )
        return str(known["user_id"])
    now = now_us()
    user_id = linking_to
    if user_id is None:
        user_id = new_ulid(now)
        await repository.insert_user(
            conn,
            user_id=user_id,
            email=f"{user_id.lower()}@{PLACEHOLDER_DOMAIN}",
            name=remote.name,
            language=language,
            created_at=now,
        )
        await links.insert_link(
            conn,
            user_id=user_id,
            prompt=default_prompt(language),
            created_at=now,
            language=language,
        )
    inserted = await repository.insert_account(
        conn,
        account_id=new_ulid(now),
        user_id=user_id,
        software=software,
        instance=instance,
        remote_id=remote.remote_id,
        acct=remote.acct,
        access_token=token,
        created_at=now,
    )
    if not inserted:  # the same remote account signed in twice at once
        raise Conflict(N_("Signing in twice at once: please try again."))
    return user_id


def _out(row: Row) -> FediverseAccount:
    gone = row["disconnected_at"]
    return FediverseAccount(
        id=str(row["id"]),
        software=row["software"],
        instance=str(row["instance"]),
        acct=str(row["acct"]),
        connected=gone is None,
        created_at=isoformat_us(int(row["created_at"])),
        disconnected_at=None if gone is None else isoformat_us(int(gone)),
    )


async def accounts(db: Database, *, user_id: str) -> list[FediverseAccount]:
    return [_out(row) for row in await repository.accounts_of(db, user_id)]


_LAST_WAY_IN = N_(
    "This is the only way into your account: link another way in before you remove it."
)


class Revocation(StrEnum):
    """What became of the token at the instance when its account was unlinked."""

    REVOKED = "revoked"  # the instance revoked it (Mastodon's /oauth/revoke answered 200)
    FAILED = "failed"  # the instance could not be asked, or refused: the person revokes it
    NOT_OFFERED = "not_offered"  # Misskey: no endpoint an app's token may call to revoke
    NONE = "none"  # no token left: the instance had refused it already


async def _removable(conn: Connection, *, user_id: str, account_id: str) -> Row:
    """The account's token row, if it is the creator's and not their only way in."""
    row = await repository.token_of(conn, account_id=account_id, user_id=user_id)
    if row is None:
        raise NotFound(N_("No fediverse account with this id among yours."))
    if await repository.other_ways_in(conn, user_id=user_id, account_id=account_id) == 0:
        raise LastWayIn(_LAST_WAY_IN)
    return row


async def _revoke(db: Database, client: InstanceClient, row: Row) -> Revocation:
    """Ask the instance to revoke the token, with each registration anonbox has there
    (a token is revoked only by the application it was issued to)."""
    token = str(row["access_token"])
    if not token:
        return Revocation.NONE
    if row["software"] == "misskey":
        # Misskey's i/revoke-token is "secure": only its own web client's credential may
        # call it, never an app's token (docs/decisions.md).
        return Revocation.NOT_OFFERED
    base = str(row["instance"])
    for app in await repository.apps_of(db, instance=base):
        registration = AppRegistration(str(app["client_id"]), str(app["client_secret"]))
        if await client.revoke_token(base, app=registration, token=token):
            return Revocation.REVOKED
    return Revocation.FAILED


async def unlink(
    db: Database, client: InstanceClient, *, user_id: str, account_id: str
) -> Revocation:
    """Remove a fediverse account from the ways in, never the last one: its token is
    revoked at the instance first, then forgotten. An instance that is down or refuses
    does not keep the account here (``Revocation.FAILED``: the person is told to revoke
    anonbox's access there); nothing is kept to retry with. See docs/decisions.md."""
    row = await _removable(db, user_id=user_id, account_id=account_id)
    # Outside a transaction: no write lock is held while the instance answers.
    revocation = await _revoke(db, client, row)
    if revocation is Revocation.FAILED:
        # No account, instance or token in the log: only that a revocation failed.
        logger.warning("fediverse unlink: the instance did not revoke the token; forgotten here")
    async with db.transaction() as tx:
        # Again: another way in may have been removed while the instance answered.
        last = await repository.other_ways_in(tx, user_id=user_id, account_id=account_id) == 0
        if not last:
            await repository.delete_account(tx, account_id=account_id, user_id=user_id)
        elif revocation is Revocation.REVOKED:  # the account stays, but its token is dead
            await repository.forget_token(tx, account_id=account_id, now=now_us())
    if last:
        raise LastWayIn(_LAST_WAY_IN)
    return revocation
