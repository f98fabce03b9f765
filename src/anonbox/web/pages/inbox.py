"""Page routes: the creator's inbox of each link, and "Mark all as read" (its settings:
``web.pages.link_settings``). Showing the list reads nothing; opening a message
(``web.pages.message``) or "Mark all as read" does (``messages.inbox.service``).

Every action is a plain form post carrying the CSRF field, answered with a redirect back
to the page it came from (``web.infra.forms``); ``static/dashboard.js`` only adds live updates
(``web.pages.events``). Actions call the same services as the JSON API, so each rule lives in
one place. See ``docs/pages.md``.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from litestar import Request, get, post
from litestar.params import QueryParameter
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.auth.fediverse import service as fediverse_accounts
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import FieldProblem, NotFound, ValidationFailed
from anonbox.core.i18n import N_
from anonbox.core.ids import FIRST_ULID, is_ulid
from anonbox.core.paths import Cursor
from anonbox.core.settings import Settings
from anonbox.messages.filtered import service as filtered
from anonbox.messages.inbox import service as inbox
from anonbox.safety.dependencies import GateDep
from anonbox.safety.gate import Gate
from anonbox.web.infra.dependencies import (
    OwnedPageLink,
    SignedInBrowser,
    SignedInForm,
    signed_in_pages,
)
from anonbox.web.infra.forms import Done, back_path, dashboard_page, redirect_to
from anonbox.web.infra.routing import site_url
from anonbox.web.infra.session import Browser
from anonbox.web.pages.account import profile_prompt_dismissed

PAGE_SIZE = 20

AnyRequest = Request[Any, Any, Any]

FilterName = Annotated[
    str, QueryParameter(name="filter", pattern="^(all|unread|unanswered|answered|liked)$")
]


async def _inbox_page(
    request: AnyRequest,
    db: Database,
    settings: Settings,
    browser: Browser,
    link_id: str | None,
    which: inbox.InboxFilter,
    cursor: str | None,
    gate: Gate,
) -> Template:
    """The inbox of ``link_id`` (already found to be the browser's), else of its first link."""
    user_id = browser.principal.user_id
    owned = await inbox.links_with_unread(db, user_id)
    if link_id is None:
        if not owned:
            raise NotFound(N_("You have no link yet."))
        link_id = str(owned[0]["id"])
    current = next(row for row in owned if row["id"] == link_id)
    # Where the live stream starts, read before the page: a message stored while the page
    # is drawn is shown or streamed (the script skips one it has), never neither. An empty
    # inbox streams from the first id there can be: whatever comes is new.
    newest = await inbox.newest_id(db, link_id) or FIRST_ULID
    listing = await inbox.page(db, link_id=link_id, which=which, before=cursor, limit=PAGE_SIZE)
    # Showing the list reads nothing (issue 41): opening a message does, or "Mark all as
    # read" (mark_all_read below).
    unread = int(current["unread"])
    live = cursor is None and which in {inbox.InboxFilter.ALL, inbox.InboxFilter.UNREAD}
    base = f"/dashboard/links/{link_id}"
    here = base + ("" if which is inbox.InboxFilter.ALL else f"?filter={which.value}")
    if cursor:
        here += ("&" if "?" in here else "?") + f"cursor={cursor}"
    profile = await account.signed_in_as(db, user_id=user_id)
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard.html",
        {
            "profile": profile,
            # Asked for on the dashboard until a name is chosen or "Not now" is pressed.
            "ask_profile": (await account.public_profile(db, user_id=user_id)).display_name is None
            and not profile_prompt_dismissed(request, settings),
            "links": [
                {
                    "id": row["id"],
                    "prompt": row["prompt"],
                    "paused": bool(row["paused"]),
                    "unread": int(row["unread"]),
                }
                for row in owned
            ],
            "link": {
                "id": link_id,
                "prompt": current["prompt"],
                "paused": bool(current["paused"]),
            },
            "base": base,
            "share_url": f"{site_url(request, settings)}/{link_id}",
            "here": here,
            "filter": which.value,
            "filters": [f.value for f in inbox.InboxFilter],
            "page": listing,
            "unread": unread,
            # The tab's title counts every link's unread messages: this one's as the page
            # says, the others' as their badges do (dashboard.js adds those that arrive).
            "other_unread": sum(int(r["unread"]) for r in owned if r["id"] != link_id),
            "newest": newest,
            "live": live,
            # Posts refused for want of a proof of work: the link is under a flood.
            "flood_refused": await gate.flood.refused_last_hour(link_id),
            "filtered_count": await filtered.count(db, link_id=link_id),
            # Fediverse accounts whose server refused their token: said until reconnected.
            "disconnected": [
                f.acct
                for f in await fediverse_accounts.accounts(db, user_id=user_id)
                if not f.connected
            ],
        },
    )


@get("/dashboard")
async def dashboard(
    request: AnyRequest,
    browser: SignedInBrowser,
    db: DB,
    settings: AppSettings,
    gate: GateDep,
    which: FilterName = "all",
    cursor: Cursor = None,
) -> Template:
    return await _inbox_page(
        request, db, settings, browser, None, inbox.InboxFilter(which), cursor, gate
    )


@get("/dashboard/links/{link_id:str}")
async def link_inbox(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    db: DB,
    settings: AppSettings,
    gate: GateDep,
    which: FilterName = "all",
    cursor: Cursor = None,
    q: str = "",
) -> Template | Redirect:
    # The inbox's one form holds the search box and the filter: words are a search.
    if q.strip():
        query = {"q": q, **({} if which == "all" else {"filter": which})}
        return redirect_to(
            browser, settings, f"/dashboard/links/{link.link_id}/search?{urlencode(query)}"
        )
    return await _inbox_page(
        request, db, settings, browser, link.link_id, inbox.InboxFilter(which), cursor, gate
    )


@post("/dashboard/links/{link_id:str}/read", status_code=303)
async def mark_all_read(
    browser: SignedInBrowser, link: OwnedPageLink, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    """Mark all as read: every message up to the newest the page showed (``up_to``)."""
    up_to = form.get("up_to")
    if not isinstance(up_to, str) or not is_ulid(up_to):
        raise ValidationFailed("up_to is not a message id", [FieldProblem("up_to", "invalid")])
    await inbox.mark_all_read(db, link_id=link.link_id, up_to=up_to)
    inbox_path = f"/dashboard/links/{link.link_id}"
    return redirect_to(browser, settings, back_path(form, inbox_path), Done.READ)


ROUTES: list[ControllerRouterHandler] = [signed_in_pages(dashboard, link_inbox, mark_all_read)]
