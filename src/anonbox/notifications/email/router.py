"""HTTP endpoints for e-mail notices (``email.delivery`` mails them)."""

from __future__ import annotations

from litestar import get, post, put

from anonbox.core.dependencies import DB, AppSettings, MailerDep
from anonbox.core.envelope import BODY_ERRORS, OK, AnyRequest, Envelope, envelope, error_responses
from anonbox.identity.dependencies import Creator
from anonbox.notifications.email import service
from anonbox.notifications.email.delivery import CONFIRM_PATH, UNSUBSCRIBE_PATH
from anonbox.notifications.email.schemas import EmailNoticesIn, EmailNoticesOut, Token

_TAGS = ["notifications"]


@get(
    "/notifications/email",
    summary="Your e-mail notices: the mode, and whether the address is confirmed",
    responses=error_responses(401, 403, 503),
    tags=_TAGS,
)
async def email_notices(
    request: AnyRequest, db: DB, creator: Creator
) -> Envelope[OK, EmailNoticesOut]:
    return envelope(
        request, 200, "E-mail notices", await service.choice(db, user_id=creator.user_id)
    )


@put(
    "/notifications/email",
    summary="Choose e-mail notices: immediately, hourly or daily digest, or off",
    description="Notices go to the account's address once it is confirmed: at once if "
    "it was verified by signing in, otherwise after a click on the link this mails.",
    responses=error_responses(400, 401, 403, *BODY_ERRORS, 503),
    tags=_TAGS,
)
async def choose_email_notices(
    request: AnyRequest,
    data: EmailNoticesIn,
    db: DB,
    settings: AppSettings,
    mailer: MailerDep,
    creator: Creator,
) -> Envelope[OK, EmailNoticesOut]:
    chosen = await service.choose(db, settings, mailer, creator=creator, mode=data.mode)
    return envelope(request, 200, "E-mail notices saved", chosen)


@get(
    CONFIRM_PATH,
    summary="Confirm the address e-mail notices go to (the link in the confirmation mail)",
    responses=error_responses(400, 404, 503),
    tags=_TAGS,
)
async def confirm_email(
    request: AnyRequest, db: DB, settings: AppSettings, token: Token
) -> Envelope[OK, EmailNoticesOut]:
    confirmed = await service.confirm(db, settings, token=token)
    return envelope(request, 200, "Address confirmed", confirmed)


@post(
    UNSUBSCRIBE_PATH,
    status_code=200,
    summary="Turn e-mail notices off, without signing in (RFC 8058 one-click)",
    description="The URL of every notice's List-Unsubscribe header; mail programs POST "
    "`List-Unsubscribe=One-Click` to it.",
    responses=error_responses(400, 404, 503),
    tags=_TAGS,
)
async def unsubscribe(
    request: AnyRequest, db: DB, settings: AppSettings, token: Token
) -> Envelope[OK, None]:
    await service.unsubscribe(db, settings, token=token)
    return envelope(request, 200, "E-mail notices turned off", None)


ROUTES = [email_notices, choose_email_notices, confirm_email, unsubscribe]
