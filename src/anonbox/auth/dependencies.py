"""What auth's own handlers take: the OpenID Connect client and the sign-in cookie.

The access rules every domain takes (``Creator``, ``Viewer``, ``SignedIn``, ``Admin``) are
``identity.dependencies``.
"""

from __future__ import annotations

from typing import Annotated

from litestar.datastructures import Cookie, State

from anonbox.auth.oidc import OIDCClient
from anonbox.core.access import INJECTED, UNCHECKED, Provided
from anonbox.core.errors import NotFound
from anonbox.core.settings import Settings

# Not offered here, rather than unavailable for now: a 503 would ask clients to come back
# in a few seconds, for a setting that only an operator changes.
GOOGLE_NOT_CONFIGURED = (
    "Sign-in with Google is not offered on this server (ANONBOX_GOOGLE_CLIENT_ID is not set)"
)


def provide_oidc(state: State) -> OIDCClient:
    """The process's OpenID Connect client (``anonbox.wiring``); 404 where Google
    sign-in is not configured."""
    oidc: OIDCClient | None = state.parts.oidc
    if oidc is None:
        raise NotFound(GOOGLE_NOT_CONFIGURED)
    return oidc


OIDC = Annotated[
    OIDCClient, INJECTED, UNCHECKED, Provided("oidc")
]  # 404 where Google sign-in is not configured

MaybeOIDC = Annotated[
    OIDCClient | None, INJECTED, UNCHECKED, Provided("google")
]  # None where Google sign-in is not configured

SIGNIN_COOKIE = "anonbox_signin"

AUTH_COOKIE_PATH = "/auth"


def signin_cookie(settings: Settings, binding: str) -> Cookie:
    """Binds a sign-in to the user agent that started it (also used by the sign-in page)."""
    return Cookie(
        key=SIGNIN_COOKIE,
        value=binding,
        path=AUTH_COOKIE_PATH,
        max_age=settings.signin_state_ttl_seconds,
        httponly=True,
        secure=settings.secure_cookies,
        samesite="lax",  # sent on the provider's top-level redirect back to us
    )
