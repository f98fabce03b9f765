"""Page routes for admins: the report queue, the site's muted phrases, the audit log.

A signed-in browser of an admin only (``AdminBrowser``): anyone else signed in gets the 403
page, a browser not signed in the sign-in page. Form posts carry the session's CSRF token
and are answered with a redirect back, as the dashboard's are; each calls the service the
API calls, so a page action is audited exactly as the API's. Deleting a message and
blocking a sender ask for a confirmation first (a ``<details>`` that opens the button,
and a ``confirm`` field the post must carry).
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get, post
from litestar.datastructures import FormMultiDict
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.access import INJECTED, UNCHECKED, AccessRule
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import Conflict, FieldProblem, Forbidden, ValidationFailed
from anonbox.core.i18n import N_
from anonbox.core.paths import Cursor, RowId
from anonbox.core.routing import OptionsRouter
from anonbox.core.settings import Settings
from anonbox.moderation import service as moderation
from anonbox.moderation.schemas import Action
from anonbox.web.infra.dependencies import SignedInBrowser, SignedInForm, signed_in_pages
from anonbox.web.infra.forms import dashboard_page, redirect_to, text_field
from anonbox.web.infra.routing import readable
from anonbox.web.infra.session import Browser

QUEUE = "/admin"
PHRASES = "/admin/phrases"
AUDIT = "/admin/log"
PAGE_SIZE = 20
_ACTIONS: dict[str, Action] = {
    "dismiss": "dismiss",
    "delete_message": "delete_message",
    "block_sender": "block_sender",
}
_CONFIRMED = "yes"

AnyRequest = Request[Any, Any, Any]


async def admin_browser(browser: SignedInBrowser) -> Browser:
    """The signed-in browser, if its account is an admin's (after the CSRF check)."""
    if not browser.principal.is_admin:
        raise Forbidden(N_("Only an admin can see this page."))
    return browser


AdminBrowser = Annotated[
    Browser, INJECTED, UNCHECKED, AccessRule("AdminBrowser", admin_browser, Browser)
]


async def _page(
    request: AnyRequest,
    db: Database,
    settings: Settings,
    browser: Browser,
    template: str,
    here: str,
    context: dict[str, Any],
    status_code: int = 200,
) -> Template:
    profile = await account.signed_in_as(db, user_id=browser.principal.user_id)
    return dashboard_page(
        request,
        browser,
        settings,
        template,
        {**context, "profile": profile, "here": here, "me": browser.principal.user_id},
        status_code,
    )


@get(QUEUE)
async def queue_page(
    request: AnyRequest,
    admin_browser: AdminBrowser,
    db: DB,
    settings: AppSettings,
    cursor: Cursor = None,
) -> Template:
    queue = await moderation.queue(db, cursor=cursor, limit=PAGE_SIZE)
    return await _page(
        request, db, settings, admin_browser, "admin_queue.html", QUEUE, {"queue": queue}
    )


@post(QUEUE + "/queue/{report_id:str}", status_code=303)
async def resolve_report(
    admin_browser: AdminBrowser,
    form: SignedInForm,
    report_id: RowId,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    action = _chosen_action(form)
    await moderation.resolve(
        db, report_id=report_id, action=action, admin_id=admin_browser.principal.user_id
    )
    return redirect_to(admin_browser, settings, QUEUE)


def _chosen_action(form: FormMultiDict) -> Action:
    action = _ACTIONS.get(text_field(form, "action"))
    if action is None:
        raise ValidationFailed(
            "action must be dismiss, delete_message or block_sender",
            [FieldProblem("action", "invalid")],
        )
    if action != "dismiss" and form.get("confirm") != _CONFIRMED:
        raise ValidationFailed(
            "Confirm first: this cannot be undone", [FieldProblem("confirm", "missing")]
        )
    return action


async def _phrases_page(
    request: AnyRequest,
    db: Database,
    settings: Settings,
    browser: Browser,
    status_code: int = 200,
    *,
    problem: str | None = None,
    phrase: str = "",
) -> Template:
    return await _page(
        request,
        db,
        settings,
        browser,
        "admin_phrases.html",
        PHRASES,
        {
            "phrases": (await moderation.muted_phrases(db)).items,
            "most": moderation.MAX_MUTED_PHRASES,
            "problem": problem,
            "phrase": phrase,
        },
        status_code,
    )


@get(PHRASES)
async def phrases_page(
    request: AnyRequest, admin_browser: AdminBrowser, db: DB, settings: AppSettings
) -> Template:
    return await _phrases_page(request, db, settings, admin_browser)


@post(PHRASES, status_code=303)
async def add_phrase(
    request: AnyRequest,
    admin_browser: AdminBrowser,
    form: SignedInForm,
    db: DB,
    settings: AppSettings,
) -> Redirect | Template:
    """A refused phrase comes back in the form, with why."""
    phrase = text_field(form, "phrase")
    try:
        await moderation.add_muted_phrase(
            db, phrase=phrase, admin_id=admin_browser.principal.user_id
        )
    except (ValidationFailed, Conflict) as refused:
        code = 400 if isinstance(refused, ValidationFailed) else 409
        return await _phrases_page(
            request,
            db,
            settings,
            admin_browser,
            code,
            problem=readable(refused.message, code, refused.code),
            phrase=phrase,
        )
    return redirect_to(admin_browser, settings, PHRASES)


@post(PHRASES + "/{phrase_id:str}/delete", status_code=303)
async def remove_phrase(
    admin_browser: AdminBrowser, phrase_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    await moderation.remove_muted_phrase(
        db, phrase_id=phrase_id, admin_id=admin_browser.principal.user_id
    )
    return redirect_to(admin_browser, settings, PHRASES)


@get(AUDIT)
async def audit_page(
    request: AnyRequest,
    admin_browser: AdminBrowser,
    db: DB,
    settings: AppSettings,
    cursor: Cursor = None,
) -> Template:
    log = await moderation.audit(db, cursor=cursor, limit=PAGE_SIZE)
    return await _page(
        request, db, settings, admin_browser, "admin_audit.html", AUDIT, {"log": log}
    )


ROUTES: list[ControllerRouterHandler] = [
    OptionsRouter(
        path="/",
        route_handlers=[
            signed_in_pages(
                queue_page, resolve_report, phrases_page, add_phrase, remove_phrase, audit_page
            )
        ],
    )
]
