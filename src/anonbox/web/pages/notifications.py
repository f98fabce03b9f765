"""Page routes: the creator's notifications — webhooks, each with its latest deliveries.

Form posts as in ``web.pages.account``: the session's CSRF token, a redirect back (except a
new webhook, whose secret is shown this once on the page itself), the API's services
(``notifications.service``).
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import Conflict, Forbidden, ValidationFailed
from anonbox.core.i18n import N_, gettext
from anonbox.core.paths import RowId
from anonbox.core.settings import Settings
from anonbox.notifications.email import service as email_service
from anonbox.notifications.webhooks import service as notifications
from anonbox.notifications.webhooks.schemas import EVENT_KINDS, TEST_EVENT
from anonbox.web.infra.dependencies import SignedInBrowser, SignedInForm, signed_in_pages
from anonbox.web.infra.forms import dashboard_page, redirect_to, text_field
from anonbox.web.infra.routing import readable
from anonbox.web.infra.session import Browser

NOTIFICATIONS = "/dashboard/notifications"
DELIVERIES_SHOWN = 10

# What people read for a webhook's events and a delivery's state: never the wire names
# (``message.created``), which are for the receiving program (issue 41).
_EVENT_LABELS = {
    "message.created": N_("New message"),
    "reply.created": N_("Your reply"),
    "message.deleted": N_("Message deleted"),
    "message.reported": N_("Message reported"),
    TEST_EVENT: N_("Test event"),
}
_STATUS_LABELS = {
    "pending": N_("waiting"),
    "delivered": N_("delivered"),
    "failed": N_("failed"),
}
assert set(EVENT_KINDS) <= set(_EVENT_LABELS), "a webhook event without a label"


def event_labels() -> dict[str, str]:
    """Each webhook event's name in the page's language."""
    return {kind: gettext(label) for kind, label in _EVENT_LABELS.items()}


def status_labels() -> dict[str, str]:
    """Each delivery state in the page's language."""
    return {state: gettext(label) for state, label in _STATUS_LABELS.items()}


AnyRequest = Request[Any, Any, Any]


async def _page(
    request: AnyRequest,
    db: Database,
    settings: Settings,
    browser: Browser,
    new_secret: str | None = None,
    status_code: int = 200,
    *,
    problem: str | None = None,
    url: str = "",
) -> Template:
    user_id = browser.principal.user_id
    hooks = (await notifications.endpoints(db, user_id=user_id)).items
    deliveries = {
        hook.id: (await notifications.deliveries(db, user_id=user_id, endpoint_id=hook.id)).items[
            :DELIVERIES_SHOWN
        ]
        for hook in hooks
    }
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_notifications.html",
        {
            "profile": await account.signed_in_as(db, user_id=user_id),
            "email_notices": await email_service.choice(db, user_id=user_id),
            "webhooks": hooks,
            "deliveries": deliveries,
            "event_kinds": EVENT_KINDS,
            "event_labels": event_labels(),
            "status_labels": status_labels(),
            "new_secret": new_secret,
            "webhook_problem": problem,
            "webhook_url": url,
            "here": NOTIFICATIONS,
        },
        status_code,
    )


@get(NOTIFICATIONS)
async def notifications_page(
    request: AnyRequest, browser: SignedInBrowser, db: DB, settings: AppSettings
) -> Template:
    return await _page(request, db, settings, browser)


@post("/dashboard/webhooks", status_code=201)
async def add_webhook(
    request: AnyRequest,
    browser: SignedInBrowser,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Template:
    """Answered with the page itself, not a redirect: the secret is shown this once (sent
    again, the same URL is refused, so a reload adds no second webhook). A URL that is
    refused comes back in the form, with why."""
    url = text_field(form, "url").strip()
    try:
        added = await notifications.add_endpoint(
            db,
            user_id=browser.principal.user_id,
            url=url,
            events=[kind for kind in form.getall("events", []) if isinstance(kind, str)] or None,
            allow_private=settings.webhook_allow_private,
        )
    except (ValidationFailed, Forbidden, Conflict) as refused:
        code = refused.status_code  # 400 malformed, 403 a private address, 409 a duplicate
        return await _page(
            request,
            db,
            settings,
            browser,
            None,
            code,
            problem=readable(refused.message, code, refused.code),
            url=url,
        )
    return await _page(request, db, settings, browser, added.secret, 201)


@post("/dashboard/webhooks/{webhook_id:str}/test", status_code=303)
async def test_webhook(
    browser: SignedInBrowser, webhook_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    await notifications.send_test(db, user_id=browser.principal.user_id, endpoint_id=webhook_id)
    return redirect_to(browser, settings, NOTIFICATIONS)


@post("/dashboard/webhooks/{webhook_id:str}/delete", status_code=303)
async def remove_webhook(
    browser: SignedInBrowser, webhook_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    await notifications.remove_endpoint(
        db, user_id=browser.principal.user_id, endpoint_id=webhook_id
    )
    return redirect_to(browser, settings, NOTIFICATIONS)


ROUTES: list[ControllerRouterHandler] = [
    signed_in_pages(notifications_page, add_webhook, test_webhook, remove_webhook)
]
