"""Page route: the e-mail notices form on the notifications page (``web.notifications``
shows it), through the API's service (``notifications.email_service``)."""

from __future__ import annotations

from litestar import post
from litestar.di import Provide
from litestar.response import Redirect
from litestar.types import ControllerRouterHandler

from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import FieldProblem, ValidationFailed
from anonbox.notifications import email_service
from anonbox.notifications.email_notices import SETTINGS_PAGE
from anonbox.notifications.email_router import MailerDep, provide_mailer
from anonbox.notifications.email_schemas import MODES
from anonbox.web.dependencies import SignedInBrowser, SignedInForm, signed_in_pages
from anonbox.web.forms import redirect_to, text_field


@post(
    "/dashboard/email-notices",
    status_code=303,
    dependencies={"mailer": Provide(provide_mailer, sync_to_thread=False)},
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


ROUTES: list[ControllerRouterHandler] = [signed_in_pages(choose_email_notices)]
