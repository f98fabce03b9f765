"""Stream mode's pages (``anonbox.stream``): the creator's settings, "Show on stream" on a
message, and the overlay itself, which OBS (or any browser) shows at its secret address.

The overlay is a page of its own, not the site's layout: the question, large, on a
transparent background, in the creator's language. ``stream.js`` keeps it current through
server-sent events from the live fan-out (``stream:{user_id}``); without scripts it
reloads itself every few seconds. An address that was revoked shows nothing: 404.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import msgspec
from litestar import Request, get, post
from litestar.response import Redirect, ServerSentEvent, Template
from litestar.response.sse import ServerSentEventMessage
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import NotFound, RateLimited
from anonbox.core.i18n import set_locale
from anonbox.core.paths import RowId
from anonbox.outbox.dependencies import HubDep
from anonbox.outbox.fanout import Hub
from anonbox.stream import service as stream
from anonbox.web.infra.dependencies import (
    OwnedPageLink,
    SignedInBrowser,
    SignedInForm,
    signed_in_pages,
)
from anonbox.web.infra.forms import Done, back_path, dashboard_page, redirect_to
from anonbox.web.infra.live import CONNECTED, KEEP_ALIVE, OpenStreams, gives_places_back, wakes
from anonbox.web.infra.locale import browser_language
from anonbox.web.infra.routing import site_url

AnyRequest = Request[Any, Any, Any]

MAX_STREAMS_PER_OVERLAY = 5  # open overlays of one address, in this process
_overlays = OpenStreams(MAX_STREAMS_PER_OVERLAY)
_NO_STORE = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex"}


@get("/dashboard/stream")
async def stream_settings(
    request: AnyRequest, browser: SignedInBrowser, db: DB, settings: AppSettings
) -> Template:
    user_id = browser.principal.user_id
    overlay = await stream.overlay(db, user_id=user_id, secret_key=settings.secret_key)
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_stream.html",
        {
            "profile": await account.signed_in_as(db, user_id=user_id),
            "here": "/dashboard/stream",
            "overlay_url": None
            if overlay is None
            else f"{site_url(request, settings)}/stream/{overlay.token}",
            "showing": overlay is not None and overlay.message_id is not None,
        },
    )


@post("/dashboard/stream/address", status_code=303)
async def new_address(
    browser: SignedInBrowser, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    """Turn stream mode on, or give the overlay a new address (the old one stops)."""
    await stream.new_address(db, user_id=browser.principal.user_id, secret_key=settings.secret_key)
    return redirect_to(browser, settings, "/dashboard/stream")


@post("/dashboard/stream/hide", status_code=303)
async def hide(
    browser: SignedInBrowser, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    await stream.hide(db, user_id=browser.principal.user_id)
    return redirect_to(browser, settings, back_path(form, "/dashboard/stream"))


@post("/dashboard/links/{link_id:str}/messages/{message_id:str}/stream", status_code=303)
async def show(
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    """Put this message on the creator's overlay (turning stream mode on if it is off)."""
    await stream.show(
        db,
        user_id=browser.principal.user_id,
        link_id=link.link_id,
        message_id=message_id,
        secret_key=settings.secret_key,
    )
    back = back_path(form, f"/dashboard/links/{link.link_id}/messages/{message_id}")
    return redirect_to(browser, settings, back, Done.ON_STREAM)


@get("/stream/{token:str}")
async def overlay_page(request: AnyRequest, token: str, db: DB) -> Template:
    try:
        shown = await stream.on_screen(db, token=token)
    except NotFound:
        set_locale(browser_language(request))
        raise
    set_locale(shown.language or browser_language(request))
    return Template(
        template_name="stream_overlay.html",
        context={"question": shown.question, "events_url": f"/stream/{token}/events"},
        headers=_NO_STORE,
    )


async def _changes(db: Database, hub: Hub, token: str, key: str) -> AsyncGenerator[Any, None]:
    """The question whenever it differs from the last one sent. A wake need not mean a
    change (another instance's feed, or a change this stream already read, may arrive
    late), so an unchanged question sends nothing: the overlay hears only changes."""
    sent: list[str | None] = []  # empty until the first look, then the question sent last
    yield CONNECTED
    async for looked in wakes(hub, key):
        if not looked:
            yield KEEP_ALIVE
            continue
        try:
            shown = await stream.on_screen(db, token=token)
        except NotFound:  # a new address was made: this one shows nothing more
            yield ServerSentEventMessage(data="{}", event="revoked")
            return
        if sent == [shown.question]:
            continue
        sent[:] = [shown.question]
        data = msgspec.json.encode({"question": shown.question}).decode()
        yield ServerSentEventMessage(data=data, event="question")


@get("/stream/{token:str}/events", middleware=[gives_places_back])
async def overlay_events(request: AnyRequest, token: str, db: DB, hub: HubDep) -> ServerSentEvent:
    """The question on the overlay, as server-sent events (``question``: JSON with the
    text, or null), whenever the creator picks another."""
    shown = await stream.on_screen(db, token=token)
    changes = _overlays.take(request, token, _changes(db, hub, token, shown.key))
    if changes is None:
        raise RateLimited(
            f"At most {MAX_STREAMS_PER_OVERLAY} overlays of one address at once", retry_after=5
        )
    return ServerSentEvent(changes, headers={**_NO_STORE, "X-Accel-Buffering": "no"})


ROUTES: list[ControllerRouterHandler] = [
    signed_in_pages(stream_settings, new_address, hide, show),
    overlay_page,
    overlay_events,
]
