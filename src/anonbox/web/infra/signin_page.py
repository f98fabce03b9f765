"""The sign-in page itself: what the sign-in routes draw, and what a page that needs a
signed-in browser answers an anonymous one with (``web.infra.dependencies``)."""

from __future__ import annotations

from litestar.response import Template

from anonbox.core.envelope import AnyRequest
from anonbox.core.i18n import _
from anonbox.core.settings import Settings
from anonbox.web.infra.security import CSRF_FIELD, csrf_token, set_csrf_cookie

_NO_STORE = {"Cache-Control": "no-store"}


def signin_page(
    request: AnyRequest,
    settings: Settings,
    *,
    message: str | None = None,
    problem: str | None = None,
    email: str = "",
    instance: str = "",
    status_code: int = 200,
) -> Template:
    """The sign-in page, offering only the ways this server is configured for."""
    token, new = csrf_token(request)
    page = Template(
        template_name="signin.html",
        context={
            # Texts marked where they are raised (N_), in the reader's language here.
            "message": _(message) if message else None,
            "problem": _(problem) if problem else None,
            "email": email,
            "instance": instance,
            "google": settings.google_client_id is not None,
            "email_signin": settings.email_signin_enabled,
            "csrf_token": token,
            "csrf_field": CSRF_FIELD,
        },
        status_code=status_code,
        headers=dict(_NO_STORE),
    )
    if new:
        set_csrf_cookie(page, token, settings)
    return page
