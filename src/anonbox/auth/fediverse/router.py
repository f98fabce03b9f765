"""HTTP endpoints for a creator's fediverse accounts: list them, remove one. Signing in
and linking are pages (``web/pages/signin.py``, ``web/pages/account.py``): they go
through the instance in the browser."""

from __future__ import annotations

from litestar import delete, get

from anonbox.auth.fediverse import service
from anonbox.auth.fediverse.dependencies import FediverseDep
from anonbox.auth.fediverse.schemas import FediverseAccountList
from anonbox.core.dependencies import DB
from anonbox.core.envelope import OK, AnyRequest, Envelope, envelope, error_responses
from anonbox.identity.dependencies import Creator

_TAGS = ["account"]


@get(
    "/account/fediverse",
    summary="Your Mastodon and Misskey accounts that sign in to this account",
    description="connected is false once the instance refused anonbox's token: answers "
    "are then not posted to it until you sign in with it again. Tokens are never shown.",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def list_fediverse_accounts(
    request: AnyRequest, db: DB, creator: Creator
) -> Envelope[OK, FediverseAccountList]:
    items = await service.accounts(db, user_id=creator.user_id)
    return envelope(request, 200, "Fediverse accounts", FediverseAccountList(items=items))


_UNLINKED = {
    service.Revocation.REVOKED: "Fediverse account removed, and its access revoked at the instance",
    service.Revocation.FAILED: "Fediverse account removed here; the instance did not confirm "
    "revoking anonbox's access: remove anonbox in your instance's settings",
    service.Revocation.NOT_OFFERED: "Fediverse account removed here; Misskey lets no app "
    "revoke its own access: remove anonbox in your Misskey settings",
    service.Revocation.NONE: "Fediverse account removed",
}


@delete(
    "/account/fediverse/{account_id:str}",
    status_code=200,
    summary="Stop a Mastodon or Misskey account signing in to this account",
    description="Refused (409 last_way_in) when it is the only way into the account. "
    "anonbox's token is revoked at a Mastodon instance first (`POST /oauth/revoke`), then "
    "forgotten; the message says when the instance could not be asked, or (Misskey) offers "
    "no way to: the account is removed here all the same.",
    responses=error_responses(401, 403, 404, 409, 503),
    tags=_TAGS,
)
async def unlink_fediverse_account(
    request: AnyRequest, account_id: str, db: DB, creator: Creator, fediverse: FediverseDep
) -> Envelope[OK, None]:
    revocation = await service.unlink(db, fediverse, user_id=creator.user_id, account_id=account_id)
    return envelope(request, 200, _UNLINKED[revocation], None)


ROUTES = [list_fediverse_accounts, unlink_fediverse_account]
