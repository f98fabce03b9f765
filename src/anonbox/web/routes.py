"""Every page route, in one list for the application."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from anonbox.web.infra.routing import STATIC, page_router
from anonbox.web.pages import (
    account,
    answer,
    apidocs,
    avatars,
    email_notices,
    events,
    filtered,
    home,
    inbox,
    installable,
    language_switch,
    link_settings,
    links,
    message,
    moderation,
    notifications,
    public,
    push,
    receipt,
    search,
    share_card,
    signin,
    stream,
)

# Fixed paths come first: they must not read as link ids.
ROUTES: list[ControllerRouterHandler] = [
    page_router(
        *home.ROUTES,
        *installable.ROUTES,
        *language_switch.ROUTES,
        *signin.ROUTES,
        *links.ROUTES,
        *filtered.ROUTES,
        *link_settings.ROUTES,
        *inbox.ROUTES,
        *message.ROUTES,
        *search.ROUTES,
        *events.ROUTES,
        *account.ROUTES,
        *notifications.ROUTES,
        *moderation.ROUTES,
        *email_notices.ROUTES,
        *push.ROUTES,
        *apidocs.ROUTES,
        *avatars.ROUTES,
        *stream.ROUTES,
        *receipt.ROUTES,
        *public.ROUTES,
        *answer.ROUTES,
        *share_card.ROUTES,
    ),
    signin.google_callback_page,
    STATIC,
]
