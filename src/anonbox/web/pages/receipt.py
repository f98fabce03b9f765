"""A sender's receipt page at ``/r/{token}``: their message, whether it was answered, the
answers, and the form for their one follow-up. It goes through the services the JSON API
uses (``receipts.service`` to read it, ``messages.service`` to follow up) and works without
JavaScript; ``copy.js`` adds a copy button.

The token in the address is the sender's only credential: the page is never cached and
its requests carry the origin only, never the path, so the address leaves the browser
only when the sender shares it.
"""

from __future__ import annotations

from typing import Any

from litestar import Response, get, post
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.dependencies import DB, AppSettings, PublicDB
from anonbox.core.envelope import AnyRequest
from anonbox.core.errors import AnonboxError, NotFound, RateLimited, ValidationFailed
from anonbox.core.i18n import _, ngettext
from anonbox.core.settings import Settings
from anonbox.links import service as links
from anonbox.links.schemas import PublicLink
from anonbox.messages import service as messages
from anonbox.messages.content import MAX_CHARACTERS
from anonbox.messages.dependencies import PostingDep
from anonbox.receipts import service as receipts
from anonbox.receipts.schemas import RECEIPT_DAYS, ReceiptOut
from anonbox.safety.flood import ProofOfWorkRequired
from anonbox.web.infra.locale import in_creator_zone
from anonbox.web.infra.routing import error_page, readable, site_url
from anonbox.web.infra.security import CSRF_FIELD, checked_form, csrf_token, set_csrf_cookie
from anonbox.web.infra.session import Browser, browser_session
from anonbox.web.pages.public import (
    character_count,
    problem_text,
    signed_in_sender,
    signin_to_send,
    too_fast,
)

RECEIPT_HEADERS = {
    "Cache-Control": "no-store",
    # Never the path (it holds the token) in a Referer; the origin still goes in Origin,
    # which the form's CSRF check needs ("no-referrer" would make it "null").
    "Referrer-Policy": "strict-origin",
    "X-Robots-Tag": "noindex",
}


def _no_receipt() -> str:
    return ngettext(
        "There is no receipt here: the link is not complete, or it expired %(num)d day "
        "after the message was sent.",
        "There is no receipt here: the link is not complete, or it expired %(num)d days "
        "after the message was sent.",
        RECEIPT_DAYS,
    )


async def _creator_of(db: DB, link_id: str) -> tuple[str, PublicLink | None]:
    """The creator's chosen name, public on their send page anyway (else a neutral one),
    and the link as anyone sees it (None: gone a moment ago)."""
    try:
        link = await links.public_link(db, link_id=link_id)
    except AnonboxError:
        return _("The creator"), None
    return (link.creator_name if link.creator_named else _("The creator")), link


async def _signed_in(
    request: AnyRequest, db: DB, settings: Settings, link: PublicLink | None
) -> Browser | None:
    return None if link is None else await signed_in_sender(request, db, settings, link)


async def _page(
    request: AnyRequest,
    db: DB,
    settings: Settings,
    token: str,
    found: tuple[str, ReceiptOut],
    *,
    status_code: int = 200,
    text: str = "",
    error: str | None = None,
    followed: bool = False,
) -> Template:
    csrf, new = csrf_token(request)
    link_id, receipt = found
    name, link = await _creator_of(db, link_id)
    await in_creator_zone(db, link_id)  # times as the creator reads them
    # On a link for signed-in senders only, a follow-up is a post there: a browser that
    # is not signed in is asked to sign in instead of shown the form.
    signin_url = None
    if (
        link is not None
        and link.senders == "signed_in"
        and receipt.can_follow_up
        and await _signed_in(request, db, settings, link) is None
    ):
        signin_url = signin_to_send(link)
    # A paused link says so, and until when (an open-ended pause, only that it is paused),
    # rather than that follow-ups are not taken (issue 41).
    paused = link is not None and link.paused and receipt.follow_up is None
    until = await links.pause_end(db, link_id=link_id) if paused else None
    page = Template(
        template_name="receipt.html",
        context={
            "receipt": receipt,
            "link_id": link_id,
            "token": token,
            "receipt_url": receipts.receipt_url(site_url(request, settings), token),
            "name": name,
            "signin_url": signin_url,
            "csrf_field": CSRF_FIELD,
            "csrf_token": csrf,
            "max_characters": MAX_CHARACTERS,
            "text": text,
            "count": character_count(text),
            "error": error,
            "followed": followed,
            "receipt_days": RECEIPT_DAYS,
            "paused": paused,
            "paused_until": isoformat_us(until) if until and until > now_us() else None,
        },
        status_code=status_code,
        headers=dict(RECEIPT_HEADERS),
    )
    if new:
        set_csrf_cookie(page, csrf, settings)
    return page


def _not_found() -> Response[Any]:
    page = error_page(404, _no_receipt())
    page.headers.update(RECEIPT_HEADERS)
    return page


@get("/r/{token:str}", name="receipt:page")
async def receipt_page(
    request: AnyRequest,
    token: str,
    db: DB,
    public_db: PublicDB,
    settings: AppSettings,
    followed: str | None = None,
) -> Response[Any]:
    # Anyone's read, a replica's (core.replicas); but right after the sender's own
    # follow-up, the primary's, which has it.
    db = db if followed == "1" else public_db
    try:
        found = await receipts.receipt_of_link(db, token=token)
    except NotFound:
        return _not_found()
    return await _page(request, db, settings, token, found, followed=followed == "1")


@post(
    "/r/{token:str}",
    name="receipt:follow-up",
)
async def follow_up_from_form(
    request: AnyRequest, token: str, db: DB, settings: AppSettings, posting: PostingDep
) -> Response[Any]:
    """The follow-up form: send, then back to the receipt (post/redirect/get)."""
    form = await checked_form(request)
    field = form.get("message_content")
    text = field.replace("\r\n", "\n") if isinstance(field, str) else ""  # as web.pages.public

    async def account() -> str | None:
        """Asked by the service on a link for signed-in senders only, as a post's is."""
        browser = await browser_session(request, db, settings)
        return None if browser is None else browser.principal.user_id

    try:
        await messages.follow_up(
            posting,
            token=token,
            content=text,
            address=posting.clients.of(request.scope),
            account=account,
        )
    except NotFound:
        return _not_found()
    except messages.SignInRequired:  # the page shows why, and where to sign in
        error, status = None, 401
    except ValidationFailed as exc:
        problem = exc.fields[0].problem if exc.fields else ""
        error, status = problem_text(problem, readable(exc.message, 400, exc.code)), 400
    except messages.LinkPaused:
        error, status = _("This link is not accepting messages right now."), 409
    except receipts.FollowUpsOff:
        error, status = _("The creator does not take follow-ups on this link."), 409
    except receipts.FollowUpSent:
        error, status = _("This receipt's follow-up was already sent."), 409
    except RateLimited as exc:
        error, status = too_fast(exc.retry_after), 429
    except ProofOfWorkRequired:
        error, status = (
            _("This link is receiving a flood of messages right now. Try again in a few minutes."),
            429,
        )
    else:
        return Redirect(path=f"{receipts.RECEIPT_PATH}{token}?followed=1", status_code=303)
    try:
        found = await receipts.receipt_of_link(db, token=token)
    except NotFound:
        return _not_found()
    return await _page(
        request, db, settings, token, found, status_code=status, text=text, error=error
    )


ROUTES: list[ControllerRouterHandler] = [receipt_page, follow_up_from_form]
