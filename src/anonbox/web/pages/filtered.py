"""Page routes: a link's filtered folder (messages caught by muted words; a block moves
nothing there), with Restore on each, and "Empty the folder…"
behind a confirmation page (the house pattern of ``web.pages.links``).

The actions call the API's service (``messages.filtered.service``), so each rule lives in
one place.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.i18n import _
from anonbox.core.paths import Cursor, RowId
from anonbox.links import service as links
from anonbox.messages.filtered import service as filtered
from anonbox.web.infra.dependencies import (
    OwnedPageLink,
    SignedInBrowser,
    SignedInForm,
    signed_in_pages,
)
from anonbox.web.infra.forms import back_path, confirm_page, dashboard_page, redirect_to
from anonbox.web.pages.links import LINKS_PAGE

PAGE_SIZE = 20

AnyRequest = Request[Any, Any, Any]
_FOLDER = LINKS_PAGE + "/{link_id:str}/filtered"


@get(_FOLDER)
async def folder_page(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    db: DB,
    settings: AppSettings,
    cursor: Cursor = None,
) -> Template:
    user_id = browser.principal.user_id
    base = f"{LINKS_PAGE}/{link.link_id}"
    here = f"{base}/filtered" + (f"?cursor={cursor}" if cursor else "")
    page = await filtered.folder(db, link_id=link.link_id, cursor=cursor, limit=PAGE_SIZE)
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_filtered.html",
        {
            "profile": await account.signed_in_as(db, user_id=user_id),
            "link": await links.link(db, link_id=link.link_id, user_id=user_id),
            "base": base,
            "here": here,
            "page": page,
            "count": await filtered.count(db, link_id=link.link_id),
            "days": filtered.FOLDER_DAYS,
        },
    )


@post(_FOLDER + "/{message_id:str}/restore", status_code=303)
async def restore(
    browser: SignedInBrowser,
    link: OwnedPageLink,
    message_id: RowId,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    await filtered.restore(db, link_id=link.link_id, message_id=message_id)
    folder = f"{LINKS_PAGE}/{link.link_id}/filtered"
    return redirect_to(browser, settings, back_path(form, folder))


@get(_FOLDER + "/empty")
async def confirm_empty(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    db: DB,
    settings: AppSettings,
) -> Template:
    return await confirm_page(
        request,
        browser,
        db,
        settings,
        title=_("Empty the filtered folder?"),
        text=_("Every message in this link's filtered folder is deleted for good."),
        action=f"{LINKS_PAGE}/{link.link_id}/filtered/empty",
        button=_("Empty the folder"),
        cancel=f"{LINKS_PAGE}/{link.link_id}/filtered",
    )


@post(_FOLDER + "/empty", status_code=303)
async def empty(
    browser: SignedInBrowser, link: OwnedPageLink, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    await filtered.empty(db, link_id=link.link_id)
    return redirect_to(browser, settings, f"{LINKS_PAGE}/{link.link_id}/filtered")


ROUTES: list[ControllerRouterHandler] = [
    signed_in_pages(folder_page, restore, confirm_empty, empty)
]
