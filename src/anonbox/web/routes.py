"""Every page route, in one list for the application."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from anonbox.web import (
    account,
    apidocs,
    email_notices,
    events,
    home,
    inbox,
    notifications,
    public,
    push,
    share_card,
    signin,
)
from anonbox.web.routing import STATIC, page_router

# Fixed paths come first: they must not read as link ids.
ROUTES: list[ControllerRouterHandler] = [
    page_router(
        *home.ROUTES,
        *signin.ROUTES,
        *inbox.ROUTES,
        *events.ROUTES,
        *account.ROUTES,
        *notifications.ROUTES,
        *email_notices.ROUTES,
        *push.ROUTES,
        *apidocs.ROUTES,
        *public.ROUTES,
        *share_card.ROUTES,
    ),
    signin.google_callback_page,
    STATIC,
]
