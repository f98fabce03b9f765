"""What every page answer carries: a strict Content Security Policy and its companions,
and CSRF protection for form posts.

CSRF is the double-submit pattern: a random token in an HttpOnly, SameSite=Strict cookie
and the same token in a hidden form field; a form post whose field does not match the
cookie is refused. A cross-site form cannot read the cookie to copy it, and SameSite
keeps the browser from sending it cross-site at all. Where the browser says where a post
comes from (``Sec-Fetch-Site`` / ``Origin``), a cross-site post is refused outright.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any
from urllib.parse import urlsplit

from litestar import Request, Response
from litestar.datastructures import FormMultiDict

from anonbox.core.errors import Forbidden
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


def page_headers(response: Response[Any]) -> Response[Any]:
    """``after_request`` for page routes."""
    for name, value in PAGE_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def csrf_token(request: Request[Any, Any, Any]) -> tuple[str, bool]:
    """The visitor's CSRF token, and whether it is new (so the answer must set the cookie)."""
    token = request.cookies.get(CSRF_COOKIE)
    if token and 20 <= len(token) <= 100:
        return token, False
    return secrets.token_urlsafe(32), True


def set_csrf_cookie(response: Response[Any], token: str, settings: Settings) -> None:
    response.set_cookie(
        CSRF_COOKIE,
        token,
        httponly=True,
        secure=settings.secure_cookies,
        samesite="strict",
        path="/",
    )


async def checked_form(request: Request[Any, Any, Any]) -> FormMultiDict:
    """The posted form, once its CSRF token is checked (a file in its place is no token)."""
    form = await request.form()
    submitted = form.get(CSRF_FIELD)
    check_csrf(request, submitted if isinstance(submitted, str) else None)
    return form


def check_csrf(request: Request[Any, Any, Any], submitted: str | None) -> None:
    """Refuse a form post that did not come from one of our own pages."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in {"same-origin", "none"}:
        raise Forbidden("This form was sent from another site")
    origin = request.headers.get("origin")
    # "null" is what a sandboxed frame or a file sends: never one of our own pages.
    if origin and (origin == "null" or urlsplit(origin).netloc != request.headers.get("host")):
        raise Forbidden("This form was sent from another site")
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not cookie or not submitted or not hmac.compare_digest(cookie, submitted):
        raise Forbidden("The form expired; reload the page and try again")
