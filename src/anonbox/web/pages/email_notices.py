"""Page routes of e-mail notices, through the API's service (``notifications.email.service``):
the form on the notifications page (``web.pages.notifications`` shows it), and the two pages a
mail links to, which a person opens in a browser: confirming the address, and stopping
notices. The stop page's URL is also every notice's ``List-Unsubscribe``: a mail program
POSTs ``List-Unsubscribe=One-Click`` to it (RFC 8058), a person gets a button that does
the same (a GET changes nothing, so a link scanner cannot unsubscribe anyone)."""

from __future__ import annotations

from litestar import get, post
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.core.dependencies import DB, AppSettings, MailerDep
from anonbox.core.errors import FieldProblem, NotFound, ValidationFailed
from anonbox.core.i18n import N_, _
from anonbox.notifications.email import service as email_service
from anonbox.notifications.email.delivery import (
    CONFIRM_PAGE,
    SETTINGS_PAGE,
    UNSUBSCRIBE_PAGE,
    unsubscribe_token_valid,
)
from anonbox.notifications.email.schemas import MODES, Token
from anonbox.web.infra.dependencies import SignedInBrowser, SignedInForm, signed_in_pages
from anonbox.web.infra.forms import redirect_to, text_field


@post(
    "/dashboard/email-notices",
    status_code=303,
)
async def choose_email_notices(
    browser: SignedInBrowser, form: SignedInForm, db: DB, settings: AppSettings, mailer: MailerDep
) -> Redirect:
    mode = text_field(form, "mode")
    if mode not in MODES:
        problem = [FieldProblem("mode", "invalid")]
        raise ValidationFailed(f"mode must be one of {', '.join(MODES)}", problem)
    await email_service.choose(db, settings, mailer, creator=browser.principal, mode=mode)
    return redirect_to(browser, settings, SETTINGS_PAGE)


_MODE_LABELS = {
    "immediately": N_("at once"),
    "hourly": N_("an hourly digest"),
    "daily": N_("a daily digest"),
}
_NO_STORE = {"Cache-Control": "no-store"}


def _page(state: str, **context: object) -> Template:
    return Template(
        template_name="email_notices.html",
        context={"state": state, "settings_page": SETTINGS_PAGE, **context},
        headers=_NO_STORE,
    )


@get(CONFIRM_PAGE)
async def confirm_address(db: DB, settings: AppSettings, token: Token) -> Template:
    confirmed = await email_service.confirm(db, settings, token=token)
    return _page(
        "confirmed",
        address=confirmed.address,
        active=confirmed.active,
        mode_label=_(_MODE_LABELS.get(confirmed.mode, confirmed.mode)),
    )


@get(UNSUBSCRIBE_PAGE)
async def unsubscribe_page(settings: AppSettings, token: Token) -> Template:
    if not unsubscribe_token_valid(settings.secret_key, token):
        raise NotFound("This link is not valid")  # as the POST says (``email_service``)
    return _page("unsubscribe", action=f"{UNSUBSCRIBE_PAGE}?token={token}")


@post(UNSUBSCRIBE_PAGE, status_code=200)
async def unsubscribe(db: DB, settings: AppSettings, token: Token) -> Template:
    await email_service.unsubscribe(db, settings, token=token)
    return _page("unsubscribed")


ROUTES: list[ControllerRouterHandler] = [
    signed_in_pages(choose_email_notices),
    confirm_address,
    unsubscribe_page,
    unsubscribe,
]
