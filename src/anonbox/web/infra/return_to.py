"""Where a finished sign-in goes: the dashboard, or back to the send page that asked a
visitor to sign in (``web.pages.public``: a link for signed-in senders only).

The sign-in page takes that page as ``next`` and keeps it in a short-lived cookie for
whichever way the visitor signs in (the mail's link, Google's or the fediverse
instance's redirect back). Only a send page's path is taken, ``/{link_id}``: never an
address elsewhere, so the parameter cannot send anyone to another site.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from litestar import Request, Response
from litestar.params import QueryParameter
from litestar.response import Redirect

from anonbox.core.settings import Settings
from anonbox.web.infra.security import cookie_name

RETURN_COOKIE = "anonbox_return"
_SEND_PAGE = re.compile(r"/[A-Za-z0-9_-]{1,64}")
_NO_STORE = {"Cache-Control": "no-store"}

ReturnPath = Annotated[
    str | None,
    QueryParameter(
        name="next",
        max_length=100,
        description="A send page's path (/{link_id}) to come back to once signed in",
    ),
]


def return_path(value: str | None) -> str | None:
    """The value if it is a send page's path, else None."""
    return value if value is not None and _SEND_PAGE.fullmatch(value) else None


def remember_return(response: Response[Any], settings: Settings, path: str) -> None:
    _set(response, settings, path, max_age=settings.signin_state_ttl_seconds)


def to_dashboard(request: Request[Any, Any, Any], settings: Settings) -> Redirect:
    """On to the dashboard, or back to the send page the sign-in began on (once)."""
    back = return_path(request.cookies.get(cookie_name(RETURN_COOKIE, settings)))
    response = Redirect(path=back or "/dashboard", status_code=303, headers=dict(_NO_STORE))
    if back is not None:
        _set(response, settings, "", max_age=0)
    return response


def _set(response: Response[Any], settings: Settings, path: str, *, max_age: int) -> None:
    response.set_cookie(
        cookie_name(RETURN_COOKIE, settings),
        path,
        path="/",
        max_age=max_age,
        httponly=True,
        secure=settings.secure_cookies,
        samesite="lax",  # sent on the provider's and the mail's top-level way back
    )
