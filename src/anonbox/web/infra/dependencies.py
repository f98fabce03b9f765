"""The pages' access rules (``core/access.py``), declared once: the signed-in browser, the
link it owns, the form it posted. A page lists them in its signature (``SignedInBrowser``,
``OwnedPageLink``, ``SignedInForm``; ``AccountHolderBrowser`` and ``AccountHolderForm`` for
the one page an account being erased still sees), whatever the parameters' names.

A browser that is not signed in gets the sign-in page (401) instead of the page. On a
form post, a signed-in browser counts only with the CSRF token of its own sign-in
session (``web.infra.security``), checked before anything else reads the form.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, Router
from litestar.datastructures import FormMultiDict
from litestar.response import Redirect
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.access import INJECTED, UNCHECKED, AccessRule
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import Unauthorized
from anonbox.core.i18n import N_, set_locale
from anonbox.core.paths import LinkId
from anonbox.core.routing import OptionsRouter
from anonbox.links.availability import require_owner
from anonbox.links.dependencies import LinkAccess
from anonbox.web.infra.locale import browser_language
from anonbox.web.infra.security import checked_form
from anonbox.web.infra.session import (
    Browser,
    browser_session,
    carry_renewal_of,
    clear_session_cookies,
)
from anonbox.web.infra.signin_page import signin_page

AnyRequest = Request[Any, Any, Any]
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


class NotSignedIn(Unauthorized):
    """Rendered as the sign-in page rather than an error."""


def _signin_instead(request: AnyRequest, exc: NotSignedIn) -> Response[Any]:
    settings = request.app.state.settings
    page = signin_page(request, settings, message=exc.message, status_code=401)
    # A session that can no longer be renewed is over: forget its cookies.
    clear_session_cookies(page, settings)
    return page


async def signed_in_browser(request: AnyRequest, db: DB, settings: AppSettings) -> Browser:
    """The browser's sign-in session; for a form post, only with that session's token."""
    browser = await account_holder_browser(request, db, settings)
    if browser.principal.erasing:
        raise ErasureScheduled("This account is scheduled for erasure.")
    return browser


class ErasureScheduled(Unauthorized):
    """The account is being deleted: its one page says when, and offers to cancel."""


DELETION_PAGE = "/dashboard/deletion"


def _deletion_page_instead(request: AnyRequest, exc: ErasureScheduled) -> Response[Any]:
    response = Redirect(path=DELETION_PAGE, status_code=303, headers={"Cache-Control": "no-store"})
    carry_renewal_of(request, response)
    return response


async def account_holder_browser(request: AnyRequest, db: DB, settings: AppSettings) -> Browser:
    """The signed-in browser even while its account is scheduled for erasure (only the
    deletion page takes it); for a form post, only with that session's token."""
    browser = await browser_session(request, db, settings)
    if browser is None:
        raise NotSignedIn(N_("Sign in to see your inbox."))
    if request.method not in _SAFE_METHODS:
        await checked_form(request, browser.principal.credential_id)
    # The creator's own pages speak their language, with times in their zone.
    chosen = await account.preferences(
        db, user_id=browser.principal.user_id, first_language=browser_language(request)
    )
    set_locale(
        chosen.language or browser_language(request),
        chosen.time_zone,
        zone_chosen=chosen.time_zone_chosen,
    )
    return browser


async def owned_page_link(link_id: LinkId, browser: SignedInBrowser, db: DB) -> LinkAccess:
    """The link in the path, if the browser's creator owns it: the API's rule."""
    await require_owner(db, link_id, browser.principal.user_id)
    return LinkAccess(link_id=link_id, is_creator=True)


async def signed_in_form(request: AnyRequest, browser: SignedInBrowser) -> FormMultiDict:
    """The posted form; taken after ``browser``, so its token has been checked."""
    return await request.form()


async def account_holder_form(request: AnyRequest, browser: AccountHolderBrowser) -> FormMultiDict:
    """The posted form of the deletion page; taken after ``browser``, so its token has
    been checked."""
    return await request.form()


SignedInBrowser = Annotated[
    Browser, INJECTED, UNCHECKED, AccessRule("SignedInBrowser", signed_in_browser, Browser)
]
AccountHolderBrowser = Annotated[
    Browser,
    INJECTED,
    UNCHECKED,
    AccessRule("AccountHolderBrowser", account_holder_browser, Browser),
]
OwnedPageLink = Annotated[
    LinkAccess, INJECTED, UNCHECKED, AccessRule("OwnedPageLink", owned_page_link, LinkAccess)
]
SignedInForm = Annotated[
    FormMultiDict, INJECTED, UNCHECKED, AccessRule("SignedInForm", signed_in_form, FormMultiDict)
]
AccountHolderForm = Annotated[
    FormMultiDict,
    INJECTED,
    UNCHECKED,
    AccessRule("AccountHolderForm", account_holder_form, FormMultiDict),
]


def signed_in_pages(*handlers: ControllerRouterHandler) -> Router:
    """The pages of a signed-in browser: a browser not signed in gets the sign-in page, an
    account being erased its deletion page."""
    return OptionsRouter(
        path="/",
        route_handlers=list(handlers),
        exception_handlers={NotSignedIn: _signin_instead, ErasureScheduled: _deletion_page_instead},
    )


def account_holder_pages(*handlers: ControllerRouterHandler) -> Router:
    """The pages an account scheduled for erasure may still see (its deletion page)."""
    return OptionsRouter(
        path="/",
        route_handlers=list(handlers),
        exception_handlers={NotSignedIn: _signin_instead},
    )
