"""The browser's sign-in session: the same access and refresh tokens as the API, in cookies.

Only a sign-in session opens the pages: an API key put in the session cookie is refused
like any unknown value, so a leaked script key cannot reach key management or sign-out
through the pages (the API refuses it there too: ``identity.dependencies.signed_in_creator``).

Both cookies are HttpOnly (no script reads them), ``Secure`` and named ``__Host-…``
outside local development (``web.infra.security.cookie_name``), and SameSite=Lax: the session
begins on the provider's redirect back to us, a cross-site top-level navigation, after
which a Strict cookie would not be sent to ``/dashboard``.
Form posts are protected by the CSRF token (``web.infra.security``), not by SameSite alone.

When the access token has expired, the refresh token renews it on the way (one rotation,
as ``POST /auth/refresh`` does) and the answer carries the new pair, an error page too:
the old refresh token is spent, and presented again it would sign the session out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Request, Response

from anonbox.auth.sessions import SessionTokens, refresh_session
from anonbox.core.database import Database
from anonbox.core.errors import Unauthorized
from anonbox.core.settings import Settings
from anonbox.identity.service import Principal, authenticate
from anonbox.web.infra.security import cookie_name

ACCESS_COOKIE = "anonbox_session"
REFRESH_COOKIE = "anonbox_session_refresh"
# Where an error page finds a renewal made on the way (``carry_renewal_of``).
_RENEWED = "anonbox_renewed_session"


@dataclass(frozen=True, slots=True)
class Browser:
    """Who the browser is signed in as, and the tokens to hand back if they were renewed."""

    principal: Principal
    renewed: SessionTokens | None = None


async def browser_session(
    request: Request[Any, Any, Any], db: Database, settings: Settings
) -> Browser | None:
    """The signed-in creator of this browser, renewing an expired access token; None if
    the browser is not signed in (or its session ended)."""
    access = request.cookies.get(cookie_name(ACCESS_COOKIE, settings))
    if access:
        try:
            return Browser(await authenticate(db, access, sign_in_only=True))
        except Unauthorized:
            pass
    refresh = request.cookies.get(cookie_name(REFRESH_COOKIE, settings))
    if not refresh:
        return None
    try:
        tokens = await refresh_session(db, refresh_token=refresh, settings=settings)
        request.state[_RENEWED] = tokens
        return Browser(
            await authenticate(db, tokens.access_token, sign_in_only=True), renewed=tokens
        )
    except Unauthorized:
        return None


def set_session_cookies(response: Response[Any], tokens: SessionTokens, settings: Settings) -> None:
    for name, value, max_age in (
        (ACCESS_COOKIE, tokens.access_token, tokens.expires_in),
        (REFRESH_COOKIE, tokens.refresh_token, settings.refresh_token_ttl_seconds),
    ):
        response.set_cookie(
            cookie_name(name, settings),
            value,
            path="/",
            max_age=max_age,
            httponly=True,
            secure=settings.secure_cookies,
            samesite="lax",
        )


def clear_session_cookies(response: Response[Any], settings: Settings) -> None:
    for name in (ACCESS_COOKIE, REFRESH_COOKIE):
        # With the attributes it was set with: a browser ignores a ``__Host-`` cookie without.
        response.set_cookie(
            cookie_name(name, settings),
            "",
            path="/",
            max_age=0,
            expires=0,
            httponly=True,
            secure=settings.secure_cookies,
            samesite="lax",
        )


def carry_renewal(response: Response[Any], browser: Browser | None, settings: Settings) -> None:
    """Hand a renewed token pair back to the browser with whatever this answer is."""
    if browser is not None and browser.renewed is not None:
        set_session_cookies(response, browser.renewed, settings)


def carry_renewal_of(request: Request[Any, Any, Any], response: Response[Any]) -> None:
    """Hand back a renewal made while answering ``request``, for answers (error pages) made
    without the ``Browser`` at hand."""
    tokens: SessionTokens | None = request.state.get(_RENEWED)
    if tokens is not None:
        set_session_cookies(response, tokens, request.app.state.settings)
