"""HTTP endpoints for sign-in, sessions, the profile and API keys."""

from __future__ import annotations

from typing import Any

from litestar import Response, delete, get, post
from litestar.datastructures import Cookie

from anonbox.auth import service
from anonbox.auth.dependencies import AUTH_COOKIE_PATH, OIDC, SIGNIN_COOKIE, signin_cookie
from anonbox.auth.schemas import (
    AccessToken,
    ApiKeyIn,
    ApiKeyList,
    CallbackIn,
    NewApiKey,
    Profile,
    RefreshedTokens,
    RefreshIn,
    SignInURL,
)
from anonbox.auth.sessions import SessionTokens, close_session, refresh_session
from anonbox.auth.signin import finish_signin, start_signin
from anonbox.core.dependencies import DB, AppSettings, ClientAddress
from anonbox.core.envelope import (
    OK,
    AnyRequest,
    Created,
    Envelope,
    envelope,
    error_responses,
)
from anonbox.core.errors import Unauthorized
from anonbox.core.i18n import negotiate
from anonbox.core.paths import RowId
from anonbox.identity.dependencies import Creator, SignedIn
from anonbox.safety.dependencies import GateDep

REFRESH_COOKIE = "anonbox_refresh"
_NO_STORE = {"Cache-Control": "no-store"}  # RFC 6749 §5.1: never cache a token response
_TAGS = ["auth"]


def _refresh_cookie(settings: AppSettings, token: str) -> Cookie:
    return Cookie(
        key=REFRESH_COOKIE,
        value=token,
        path=AUTH_COOKIE_PATH,
        max_age=settings.refresh_token_ttl_seconds,
        httponly=True,
        secure=settings.secure_cookies,
        samesite="strict",
    )


@get(
    "/auth/google/url",
    summary="Start signing in with Google",
    description="Returns the provider URL to send the user to, and binds the sign-in to "
    "this user agent with an HttpOnly cookie.",
    responses=error_responses(404, 429, 502, 503),
    tags=_TAGS,
)
async def google_url(
    request: AnyRequest,
    db: DB,
    oidc: OIDC,
    settings: AppSettings,
    gate: GateDep,
    client_address: ClientAddress,
) -> Response[Envelope[OK, SignInURL]]:
    # Each start writes a row: starts count against the network's sign-in limit.
    await gate.throttle_client(db, address=client_address, limit=settings.limit_signin_network)
    started = await start_signin(db, oidc, settings)
    cookie = signin_cookie(settings, started.binding)
    body: Envelope[OK, SignInURL] = envelope(
        request, 200, "Send the user to this URL", SignInURL(url=started.url)
    )
    return Response(body, cookies=[cookie], headers=_NO_STORE)


@post(
    "/auth/google/callback",
    status_code=200,
    summary="Finish signing in: exchange the provider's code for an access token",
    description="The refresh token comes in the HttpOnly cookie anonbox_refresh and in "
    "the X-Refresh-Token header.",
    responses=error_responses(400, 404, 413, 415, 502, 503),
    tags=_TAGS,
)
async def google_callback(
    request: AnyRequest, data: CallbackIn, db: DB, oidc: OIDC, settings: AppSettings
) -> Response[Envelope[OK, AccessToken]]:
    tokens = await finish_signin(
        db,
        oidc,
        settings,
        code=data.code,
        state=data.state,
        binding=request.cookies.get(SIGNIN_COOKIE),
        language=negotiate(request.headers.get("accept-language")),
    )
    body: Envelope[OK, AccessToken] = envelope(
        request, 200, "Signed in", AccessToken(access_token=tokens.access_token)
    )
    response = Response(
        body,
        cookies=[_refresh_cookie(settings, tokens.refresh_token)],
        headers={**_NO_STORE, "X-Refresh-Token": tokens.refresh_token},
    )
    response.delete_cookie(SIGNIN_COOKIE, path=AUTH_COOKIE_PATH)
    return response


def _refreshed(request: AnyRequest, settings: AppSettings, tokens: SessionTokens) -> Response[Any]:
    body = envelope(
        request,
        200,
        "Session renewed",
        RefreshedTokens(
            access_token=tokens.access_token,
            refresh_token=tokens.refresh_token,
            expires_in=tokens.expires_in,
        ),
    )
    return Response(
        body, cookies=[_refresh_cookie(settings, tokens.refresh_token)], headers=_NO_STORE
    )


@post(
    "/auth/refresh",
    status_code=200,
    summary="Renew the access token with the refresh token (cookie or body)",
    description="Each refresh token works once. Presenting one that was already used "
    "signs the whole session out.",
    responses=error_responses(400, 401, 415, 503),
    tags=_TAGS,
)
async def refresh(
    request: AnyRequest, db: DB, settings: AppSettings, data: RefreshIn | None = None
) -> Response[Envelope[OK, RefreshedTokens]]:
    token = (data.refresh_token if data else None) or request.cookies.get(REFRESH_COOKIE)
    if not token:
        raise Unauthorized("Send the refresh token in the body or the anonbox_refresh cookie")
    tokens = await refresh_session(db, refresh_token=token, settings=settings)
    return _refreshed(request, settings, tokens)


@post(
    "/auth/logout",
    status_code=200,
    summary="Sign out: the session's access and refresh tokens stop working at once",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def logout(request: AnyRequest, db: DB, signed_in: SignedIn) -> Response[Envelope[OK, None]]:
    await close_session(db, session_id=signed_in.credential_id)
    body: Envelope[OK, None] = envelope(request, 200, "Signed out", None)
    response = Response(body)
    response.delete_cookie(REFRESH_COOKIE, path=AUTH_COOKIE_PATH)
    return response


@get(
    "/user",
    summary="The signed-in creator's profile",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def user_profile(request: AnyRequest, db: DB, creator: Creator) -> Envelope[OK, Profile]:
    return envelope(request, 200, "Profile", await service.profile(db, user_id=creator.user_id))


@post(
    "/auth/api-keys",
    status_code=201,
    summary="Create an API key (shown once)",
    description=f"A creator may have up to {service.MAX_API_KEYS} keys not revoked; "
    "past that, 409 `too_many_api_keys` until one is revoked.",
    responses=error_responses(400, 401, 403, 409, 413, 415, 503),
    tags=_TAGS,
)
async def create_api_key(
    request: AnyRequest, data: ApiKeyIn, db: DB, signed_in: SignedIn
) -> Envelope[Created, NewApiKey]:
    key = await service.create_api_key(db, user_id=signed_in.user_id, name=data.name)
    return envelope(request, 201, "API key created; it will not be shown again", key)


@get(
    "/auth/api-keys",
    summary="List your API keys (never their secrets)",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def list_api_keys(
    request: AnyRequest, db: DB, signed_in: SignedIn
) -> Envelope[OK, ApiKeyList]:
    items = await service.list_api_keys(db, user_id=signed_in.user_id)
    return envelope(request, 200, "API keys", ApiKeyList(items=items))


@delete(
    "/auth/api-keys/{key_id:str}",
    status_code=200,
    summary="Revoke an API key; it stops working at once",
    responses=error_responses(400, 401, 403, 404, 503),
    tags=_TAGS,
)
async def revoke_api_key(
    request: AnyRequest, key_id: RowId, db: DB, signed_in: SignedIn
) -> Envelope[OK, None]:
    await service.revoke_api_key(db, user_id=signed_in.user_id, key_id=key_id)
    return envelope(request, 200, "API key revoked", None)


ROUTES = [
    google_url,
    google_callback,
    refresh,
    logout,
    user_profile,
    create_api_key,
    list_api_keys,
    revoke_api_key,
]
