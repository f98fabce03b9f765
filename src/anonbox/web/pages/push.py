"""Page routes: "Notify me on this device" — the devices that get a push per new message,
and the service worker that shows them (``/sw.js``, so that its scope is the whole site).

The page's script (``static/push.js``) subscribes the browser with the VAPID key and
posts the subscription as a form field with the session's CSRF token, as every dashboard
form does (``web.infra.forms``); the answer is a redirect back to the page.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, get, post
from litestar.response import File, Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import FieldProblem, ValidationFailed
from anonbox.core.paths import RowId
from anonbox.notifications.push import service as push_service
from anonbox.notifications.push.schemas import PushSubscriptionIn
from anonbox.web.infra.dependencies import SignedInBrowser, SignedInForm, signed_in_pages
from anonbox.web.infra.forms import dashboard_page, redirect_to, text_field
from anonbox.web.infra.routing import HERE

PUSH_PAGE = "/dashboard/push"
SERVICE_WORKER = HERE / "static" / "sw.js"

AnyRequest = Request[Any, Any, Any]


@get(PUSH_PAGE)
async def push_page(
    request: AnyRequest, browser: SignedInBrowser, db: DB, settings: AppSettings
) -> Template:
    user_id = browser.principal.user_id
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_push.html",
        {
            "profile": await account.signed_in_as(db, user_id=user_id),
            "devices": (await push_service.subscriptions(db, user_id=user_id)).items,
            "vapid_key": (await push_service.public_key(db)).public_key,
            "here": PUSH_PAGE,
        },
    )


@post("/dashboard/push/subscriptions", status_code=303)
async def add_device(
    browser: SignedInBrowser, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    try:
        subscription = msgspec.json.decode(
            text_field(form, "subscription"), type=PushSubscriptionIn
        )
    except msgspec.DecodeError:
        raise ValidationFailed(
            "subscription must be a browser's PushSubscription as JSON",
            [FieldProblem("subscription", "invalid")],
        ) from None
    subscription.preview = form.get("preview") == "on"
    await push_service.subscribe(
        db,
        user_id=browser.principal.user_id,
        subscription=subscription,
        allow_local=settings.push_allow_local,
    )
    return redirect_to(browser, settings, PUSH_PAGE)


@post("/dashboard/push/subscriptions/{subscription_id:str}/delete", status_code=303)
async def remove_device(
    browser: SignedInBrowser, subscription_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    await push_service.unsubscribe(
        db, user_id=browser.principal.user_id, subscription_id=subscription_id
    )
    return redirect_to(browser, settings, PUSH_PAGE)


@get("/sw.js", media_type="text/javascript")
async def service_worker() -> File:
    """At the root, so the worker may control (and open) every dashboard page."""
    return File(
        SERVICE_WORKER,
        content_disposition_type="inline",
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache"},
    )


ROUTES: list[ControllerRouterHandler] = [
    signed_in_pages(push_page, add_device, remove_device),
    service_worker,
]
