"""Page routes: the creator's links (make one, open its inbox, delete it) and the
clean-ups that delete many messages at once, each behind a confirmation page.

A confirmation is a page of its own (GET, changing nothing) whose form posts the action;
it works without JavaScript, and a mistaken click on "Delete all unanswered" costs a
second click, not the inbox. The actions call the API's services (``links.service``,
``messages.service``), so each rule lives in one place.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.i18n import _, negotiate, ngettext, number
from anonbox.links import service as links
from anonbox.messages import service as messages
from anonbox.messages.filtered import service as filtered
from anonbox.web.infra.dependencies import (
    OwnedPageLink,
    SignedInBrowser,
    SignedInForm,
    signed_in_pages,
)
from anonbox.web.infra.forms import (
    confirm_page,
    dashboard_page,
    preset_choice,
    redirect_to,
)
from anonbox.web.infra.routing import site_url

AnyRequest = Request[Any, Any, Any]
LINKS_PAGE = "/dashboard/links"


@get(LINKS_PAGE)
async def links_page(
    request: AnyRequest, browser: SignedInBrowser, db: DB, settings: AppSettings
) -> Template:
    user_id = browser.principal.user_id
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_links.html",
        {
            "profile": await account.signed_in_as(db, user_id=user_id),
            "links": (await links.links_of(db, user_id=user_id)).items,
            "site": site_url(request, settings),
        },
    )


@post(LINKS_PAGE, status_code=303)
async def create_link(
    request: AnyRequest,
    browser: SignedInBrowser,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    # A preset, else the words typed, else (nothing typed) the default prompt.
    typed = form.get("prompt")
    prompt = preset_choice(form) or (typed if isinstance(typed, str) and typed.strip() else None)
    # The link speaks the language of the browser that made it (changed in its settings).
    header = request.headers.get("accept-language")
    made = await links.create_link(
        db,
        user_id=browser.principal.user_id,
        prompt=prompt,
        language=negotiate(header) if header else None,
    )
    return redirect_to(browser, settings, f"{LINKS_PAGE}/{made.id}")


_DELETE_LINK = LINKS_PAGE + "/{link_id:str}/delete"


@get(_DELETE_LINK)
async def confirm_delete_link(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    db: DB,
    settings: AppSettings,
) -> Template:
    found = await links.link(db, link_id=link.link_id, user_id=browser.principal.user_id)
    return await confirm_page(
        request,
        browser,
        db,
        settings,
        title=_("Delete this link?"),
        text=_(
            "“%(prompt)s” and every message and reply it holds are deleted for good. "
            "The link stops working for anyone who has it.",
            prompt=found.prompt,
        ),
        action=f"{LINKS_PAGE}/{link.link_id}/delete",
        button=_("Delete the link and its messages"),
        cancel=LINKS_PAGE,
    )


@post(_DELETE_LINK, status_code=303)
async def delete_link(
    browser: SignedInBrowser, link: OwnedPageLink, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    await links.delete_link(db, link_id=link.link_id, user_id=browser.principal.user_id)
    return redirect_to(browser, settings, LINKS_PAGE)


_UNANSWERED = LINKS_PAGE + "/{link_id:str}/unanswered/delete"


@get(_UNANSWERED)
async def confirm_delete_unanswered(
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
        title=_("Delete every unanswered message?"),
        text=_unanswered_text(await filtered.count(db, link_id=link.link_id)),
        action=f"{LINKS_PAGE}/{link.link_id}/unanswered/delete",
        button=_("Delete all unanswered"),
        cancel=f"{LINKS_PAGE}/{link.link_id}",
    )


def _unanswered_text(in_folder: int) -> str:
    """What "Delete all unanswered" deletes: the folder's messages too (none is answered)."""
    if in_folder:
        return ngettext(
            "Every message of this link that you have not replied to is deleted for good. "
            "That includes the one message in the Filtered folder.",
            "Every message of this link that you have not replied to is deleted for good. "
            "That includes the %(num)s messages in the Filtered folder.",
            in_folder,
            num=number(in_folder),
        )
    return _("Every message of this link that you have not replied to is deleted for good.")


@post(_UNANSWERED, status_code=303)
async def delete_unanswered(
    browser: SignedInBrowser, link: OwnedPageLink, form: SignedInForm, db: DB, settings: AppSettings
) -> Redirect:
    await messages.delete_unanswered(db, link_id=link.link_id)
    return redirect_to(browser, settings, f"{LINKS_PAGE}/{link.link_id}")


ROUTES: list[ControllerRouterHandler] = [
    signed_in_pages(
        links_page,
        create_link,
        confirm_delete_link,
        delete_link,
        confirm_delete_unanswered,
        delete_unanswered,
    )
]
