"""What every page answer carries: a strict Content Security Policy and its companions,
and CSRF protection for form posts.

CSRF: a random nonce lives in an HttpOnly, SameSite=Strict cookie. An anonymous form
(the sign-in form) carries the nonce itself (double submit). The anonymous send form
carries nothing, so that its page is the same for every visitor and may be cached
(issue 43): its post is refused when the browser says it comes from another site
(``checked_origin``). A signed-in
browser's forms carry HMAC(secret key, session id, nonce) instead, so a token is good
only for the sign-in session it was shown to: not in another creator's session, not
from before sign-in, not after signing out and in again. A cross-site form can neither
read the cookie nor compute the token, and SameSite keeps the browser from sending the
cookie cross-site at all. Where the browser says where a post comes from
(``Sec-Fetch-Site`` / ``Origin``), a cross-site post is refused outright.

Where cookies are Secure (outside development) they are named ``__Host-…``: a browser
then takes them only from this very host, over HTTPS, for path ``/``, so a neighbouring
subdomain cannot plant a nonce of its choosing. Development over plain HTTP keeps the
plain names: browsers refuse the prefix on a cookie without ``Secure``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Any
from urllib.parse import urlsplit

from litestar import Request, Response
from litestar.datastructures import FormMultiDict

from anonbox.core.errors import BadRequest, Forbidden
from anonbox.core.settings import Settings

CSP = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    )
)

PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}

CSRF_COOKIE = "anonbox_csrf"
CSRF_FIELD = "csrf_token"
HOST_PREFIX = "__Host-"

AnyRequest = Request[Any, Any, Any]


def cookie_name(name: str, settings: Settings) -> str:
    """``__Host-name`` where cookies are Secure; set such a cookie with path ``/`` and
    no domain, or browsers drop it."""
    return HOST_PREFIX + name if settings.secure_cookies else name


def page_headers(response: Response[Any]) -> Response[Any]:
    """``after_request`` for page routes."""
    for name, value in PAGE_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _nonce(request: AnyRequest) -> str | None:
    settings: Settings = request.app.state.settings
    nonce = request.cookies.get(cookie_name(CSRF_COOKIE, settings))
    return nonce if nonce and 20 <= len(nonce) <= 100 else None


def _bound(nonce: str, session_id: str, settings: Settings) -> str:
    # Session ids are ULIDs and nonces URL-safe base64: neither holds the separator.
    message = f"csrf:{session_id}:{nonce}".encode()
    digest = hmac.new(settings.secret_key.encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def csrf_token(request: AnyRequest) -> tuple[str, bool]:
    """An anonymous page's token (the nonce itself), and whether it is new, so that the
    answer must set it (``set_csrf_cookie``)."""
    nonce = _nonce(request)
    return (nonce, False) if nonce else (secrets.token_urlsafe(32), True)


def session_csrf_token(request: AnyRequest, session_id: str) -> tuple[str, str | None]:
    """A signed-in page's token, bound to its session, and the nonce under it if that is
    new (the answer must then set it: ``set_csrf_cookie``)."""
    settings: Settings = request.app.state.settings
    nonce, new = csrf_token(request)
    return _bound(nonce, session_id, settings), nonce if new else None


def set_csrf_cookie(response: Response[Any], nonce: str, settings: Settings) -> None:
    response.set_cookie(
        cookie_name(CSRF_COOKIE, settings),
        nonce,
        httponly=True,
        secure=settings.secure_cookies,
        samesite="strict",
        path="/",
    )


async def checked_form(request: AnyRequest, session_id: str | None = None) -> FormMultiDict:
    """The posted form, once its CSRF token is checked (a file in its place is no token):
    an anonymous one, or with ``session_id`` the one bound to that sign-in session."""
    try:
        form = await request.form()
    except (ValueError, LookupError) as exc:  # a part not in its charset, or no such charset
        raise BadRequest("The form could not be read: send it as UTF-8") from exc
    submitted = form.get(CSRF_FIELD)
    check_csrf(request, submitted if isinstance(submitted, str) else None, session_id)
    return form


def _netloc(origin: str) -> str | None:
    """The origin's host and port; None for one that is not a URL (``http://[::1``)."""
    try:
        return urlsplit(origin).netloc
    except ValueError:
        return None


async def checked_origin(request: AnyRequest) -> FormMultiDict:
    """The posted form of a page that is the same for everyone and so carries no token (the
    anonymous send form: issue 43), once its origin is checked: a post the browser says
    came from another site is refused. A post that says nothing of where it comes from (no
    ``Sec-Fetch-Site``, no ``Origin``: a browser older than 2020, or no browser) is taken:
    what it can do, anyone can do without a browser (docs/decisions.md, issue 43)."""
    _check_origin(request)
    try:
        return await request.form()
    except (ValueError, LookupError) as exc:  # a part not in its charset, or no such charset
        raise BadRequest("The form could not be read: send it as UTF-8") from exc


def _check_origin(request: AnyRequest) -> None:
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in {"same-origin", "none"}:
        raise Forbidden("This form was sent from another site")
    origin = request.headers.get("origin")
    # "null" is what a sandboxed frame or a file sends: never one of our own pages.
    if origin and (origin == "null" or _netloc(origin) != request.headers.get("host")):
        raise Forbidden("This form was sent from another site")


def check_csrf(request: AnyRequest, submitted: str | None, session_id: str | None = None) -> None:
    """Refuse a form post that did not come from one of our own pages (for ``session_id``,
    from a page shown in that sign-in session)."""
    _check_origin(request)
    nonce = _nonce(request)
    if nonce is not None and session_id is not None:
        expected: str | None = _bound(nonce, session_id, request.app.state.settings)
    else:
        expected = nonce
    if not expected or not submitted or not hmac.compare_digest(expected, submitted):
        raise Forbidden("The form expired; reload the page and try again")
