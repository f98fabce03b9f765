"""The home page at ``/``: what anonbox is, how senders are protected, and the way in."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.core.dependencies import DB, AppSettings
from anonbox.web.infra.routing import site_url
from anonbox.web.infra.session import browser_session, carry_renewal
from anonbox.web.pages import previews


@get("/")
async def home(request: Request[Any, Any, Any], db: DB, settings: AppSettings) -> Response[Any]:
    """A signed-in creator goes straight to the dashboard; anyone else sees the home page."""
    browser = await browser_session(request, db, settings)
    if browser is not None:
        response = Redirect(
            path="/dashboard", status_code=303, headers={"Cache-Control": "no-store"}
        )
        carry_renewal(response, browser, settings)
        return response
    return Template(
        template_name="home.html",
        context={
            "example_link": f"{site_url(request, settings)}/k3v9x0q2ab",
            "retention_days": settings.sender_retention_days,
            # The ways in this server offers, as the sign-in page offers them: Google only
            # when configured, e-mail only where mail (or development's console) works.
            "google": settings.google_client_id is not None,
            "email_signin": settings.email_signin_enabled,
            "preview": previews.home_page(site_url(request, settings)),
        },
        headers={"Cache-Control": "no-store"},
    )


ROUTES: list[ControllerRouterHandler] = [home]
