"""The public page of a link: the send page at ``/{link_id}`` with its answered messages
(the share card of each is ``web.pages.share_card``). See ``docs/pages.md``.

Both go through the services the JSON API uses: a form post is ``create_message`` with
the same gate (rate limits, blocks, muted words, pause), and the answers are the public
listing (answered messages only, never the inbox).

The page an anonymous visitor gets is the same for all of them (no token, no cookie): it
is kept per content version and served conditionally (``web.infra.page_cache``, issue 43).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from litestar import Response, get, post
from litestar.exceptions import NotFoundException
from litestar.response import Redirect, Template
from litestar.types import ControllerRouterHandler

from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.dependencies import DB, AppSettings, PublicDB
from anonbox.core.envelope import AnyRequest
from anonbox.core.errors import Gone, NotFound, RateLimited, ValidationFailed
from anonbox.core.exception_handlers import handle_anonbox_error, handle_http_exception
from anonbox.core.i18n import N_, _, current_language, ngettext
from anonbox.core.paths import Cursor
from anonbox.core.requests import prefers_html
from anonbox.core.settings import Settings
from anonbox.core.text import isolated
from anonbox.federation import negotiation
from anonbox.federation.dependencies import FederationDep
from anonbox.links import service as links
from anonbox.links.availability import NO_LINK
from anonbox.links.schemas import PublicLink
from anonbox.messages import service as messages
from anonbox.messages.content import MAX_CHARACTERS
from anonbox.messages.dependencies import PostingDep
from anonbox.messages.inbox import service as inbox
from anonbox.messages.schemas import InboxItem, ReplyOut
from anonbox.receipts import service as receipts
from anonbox.receipts.schemas import RECEIPT_DAYS, ReceiptLink
from anonbox.safety.flood import ProofOfWorkRequired
from anonbox.web.infra import page_cache
from anonbox.web.infra.locale import in_creator_zone
from anonbox.web.infra.routing import error_page, readable, site_url
from anonbox.web.infra.security import (
    CSRF_FIELD,
    checked_form,
    checked_origin,
    cookie_name,
    session_csrf_token,
    set_csrf_cookie,
)
from anonbox.web.infra.session import Browser, browser_session, carry_renewal
from anonbox.web.pages import previews

ANSWERS_PER_PAGE = 10
REPLIES_PER_ANSWER = 10
# What the API accepts as a link id (core.paths.LinkId); anything else is no link at all.
_LINK_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

# The service's validation problems, as a person typing would want to hear them.
_PROBLEMS = {
    "too_short": N_("Write a message first."),
    "blank": N_("Write a message first."),
    "control_character": N_("Your message contains characters that cannot be sent."),
}


def problem_text(problem: str, fallback: str) -> str:
    """A validation problem of a message, in the reader's language."""
    if problem == "too_long":
        return ngettext(
            "Your message is longer than %(num)d character: shorten it and send it again.",
            "Your message is longer than %(num)d characters: shorten it and send it again.",
            MAX_CHARACTERS,
        )
    return _(_PROBLEMS[problem]) if problem in _PROBLEMS else fallback


def too_fast(retry_after: int) -> str:
    return ngettext(
        "You are sending too fast. Try again in %(num)d second.",
        "You are sending too fast. Try again in %(num)d seconds.",
        retry_after,
    )


# Carries a form post's receipt token to the page it redirects to, once: the token is a
# credential, so it travels in an HttpOnly cookie for a few minutes, never in an address.
RECEIPT_COOKIE = "anonbox_receipt"
_RECEIPT_COOKIE_SECONDS = 300


@dataclass(frozen=True, slots=True)
class Answer:
    message: InboxItem
    replies: list[ReplyOut]


def character_count(text: str) -> int:
    """Characters as the service counts them: code points after NFC (send.js does the same)."""
    return len(unicodedata.normalize("NFC", text))


def not_found(request: AnyRequest, missing: NotFound | None = None) -> Response[Any]:
    """A browser gets a page; an API client the same envelope as for an unknown route. A
    link that was deleted, or whose account is, is gone (410) rather than never there."""
    if isinstance(missing, Gone):
        if prefers_html(request):
            return error_page(410, _("This link is no longer available."))
        return handle_anonbox_error(request, missing)
    if prefers_html(request):
        return error_page(404, _("There is no link here. Check the address you were given."))
    return handle_http_exception(request, NotFoundException())


async def public_link(db: DB, link_id: str) -> PublicLink | NotFound:
    """The link as anyone sees it, or why there is none (``Gone`` for one deleted)."""
    if not _LINK_ID.fullmatch(link_id):
        return NotFound(NO_LINK)
    try:
        return await links.public_link(db, link_id=link_id)
    except NotFound as missing:
        return missing


async def _answers(db: DB, link_id: str, cursor: str | None) -> tuple[list[Answer], str | None]:
    """A page of answered messages, newest first, each with its latest replies."""
    page = await inbox.inbox(
        db, link_id=link_id, cursor=cursor, limit=ANSWERS_PER_PAGE, answered_only=True
    )
    answers = []
    for item in page.items:
        try:
            replies = await inbox.replies(
                db,
                link_id=link_id,
                message_id=item.id,
                cursor=None,
                limit=REPLIES_PER_ANSWER,
                is_creator=False,
            )
        except NotFound:  # its last reply was deleted a moment ago
            continue
        answers.append(Answer(item, replies.items))
    return answers, page.next_cursor


async def signed_in_sender(
    request: AnyRequest, db: DB, settings: Settings, link: PublicLink
) -> Browser | None:
    """On a link for signed-in senders only, the browser's sign-in (None: not signed in).
    Elsewhere None without looking: every sender there is their network."""
    if link.senders != "signed_in":
        return None
    return await browser_session(request, db, settings)


def signed_in_as(browser: Browser | None) -> Callable[[], Awaitable[str | None]]:
    """The browser's account, as ``messages.service.create_message`` asks for it."""

    async def ask() -> str | None:
        return None if browser is None else browser.principal.user_id

    return ask


def signin_to_send(link: PublicLink) -> str:
    """The sign-in page, coming back to this send page once signed in (``signin.py``
    takes only a send page's path as ``next``)."""
    return "/signin?" + urlencode({"next": f"/{link.id}"})


def shown_name(link: PublicLink) -> str:
    """The name public pages show: the one the creator chose, else a neutral one in the
    reader's language (never anything from the creator's e-mail address)."""
    return link.creator_name if link.creator_named else _("The creator")


async def _send_page(
    request: AnyRequest,
    db: DB,
    settings: Settings,
    link: PublicLink,
    *,
    cursor: str | None = None,
    status_code: int = 200,
    text: str = "",
    error: str | None = None,
    sent: bool = False,
    receipt_url: str | None = None,
    signin_url: str | None = None,
    activitypub_id: str | None = None,
    sender: Browser | None = None,
) -> Template:
    """The page for one visitor (a post's answer, a signed-in sender's page): private."""
    token, new = (
        session_csrf_token(request, sender.principal.credential_id)
        if sender is not None
        else (None, None)
    )
    page = Template(
        template_name="public.html",
        context={
            **await _send_context(
                request,
                db,
                settings,
                link,
                cursor=cursor,
                text=text,
                error=error,
                sent=sent,
                receipt_url=receipt_url,
                signin_url=signin_url,
                activitypub_id=activitypub_id,
            ),
            "csrf_token": token,
        },
        status_code=status_code,
        headers={"Cache-Control": page_cache.PRIVATE, "Vary": "Accept"},
    )
    if new:
        set_csrf_cookie(page, new, settings)
    return page


async def _send_context(
    request: AnyRequest,
    db: DB,
    settings: Settings,
    link: PublicLink,
    *,
    cursor: str | None = None,
    text: str = "",
    error: str | None = None,
    sent: bool = False,
    receipt_url: str | None = None,
    signin_url: str | None = None,
    activitypub_id: str | None = None,
) -> dict[str, Any]:
    """What the send page shows. With none of the per-visitor arguments, the same for every
    visitor in one language: no CSRF token (the form's post is checked by its origin)."""
    answers, next_cursor = await _answers(db, link.id, cursor)
    # A timed pause says when it ends (an open-ended one only that the link is paused); an
    # end just passed, not yet resumed by the chore (links.service.RESUME_SECONDS), none.
    until = await links.pause_end(db, link_id=link.id) if link.paused else None
    await in_creator_zone(db, link.id)  # times as the creator reads them
    name = shown_name(link)
    return {
        "link": link,
        "name": name,
        "csrf_field": CSRF_FIELD,
        "csrf_token": None,
        "max_characters": MAX_CHARACTERS,
        "text": text,
        "count": character_count(text),
        "error": error,
        "sent": sent,
        "receipt_url": receipt_url,
        "signin_url": signin_url,  # set: the visitor must sign in to send
        "paused_until": isoformat_us(until) if until and until > now_us() else None,
        "receipt_days": RECEIPT_DAYS,
        "answers": answers,
        "cursor": cursor,
        "next_cursor": next_cursor,
        "site": site_url(request, settings),
        "preview": previews.send_page(site_url(request, settings), link),
        # Its ActivityPub face (<link rel="alternate">), while the link is followable.
        "activitypub_id": activitypub_id,
    }


@get("/{link_id:str}", name="public:send")
async def send_page(
    request: AnyRequest,
    link_id: str,
    public_db: PublicDB,
    db: DB,
    settings: AppSettings,
    federation: FederationDep,
    cursor: Cursor = None,
    sent: str | None = None,
) -> Response[Any]:
    reads = public_db  # anyone's reads: a replica's when there is one (core.replicas)
    activitypub = negotiation.activitypub_type(request.headers.get("accept"), page=True)
    # The page every anonymous visitor gets: kept per content version (web.infra.page_cache).
    if sent is None and not activitypub and not page_cache.has_session(request):
        version = await links.content_version(reads, link_id=link_id)
        if version is not None:
            return await _shared_send_page(
                request, reads, settings, federation, link_id, cursor, version
            )
    link = await public_link(reads, link_id)
    if isinstance(link, NotFound):
        return not_found(request, link)
    # A fediverse server asking for the address a person pasted: the link's actor.
    actor = await negotiation.actor_of(reads, federation, link.id)
    if actor is not None and activitypub:
        return negotiation.document(actor, activitypub)
    cookie = cookie_name(RECEIPT_COOKIE, settings)
    flashed = request.cookies.get(cookie) if sent == "1" else None
    link_id_part, _, token = (flashed or "").partition(".")
    receipt_url = (
        receipts.receipt_url(site_url(request, settings), token)
        if token and link_id_part == link.id
        else None
    )
    # The sign-in is the primary's: a session just opened, or renewed on the way (a write).
    sender = await signed_in_sender(request, db, settings, link)
    page = await _send_page(
        request,
        reads,
        settings,
        link,
        cursor=cursor,
        sent=sent == "1",
        receipt_url=receipt_url,
        signin_url=signin_to_send(link) if link.senders == "signed_in" and sender is None else None,
        activitypub_id=None if actor is None else actor["id"],
        sender=sender,
    )
    carry_renewal(page, sender, settings)
    if flashed is not None:  # shown once
        # With the attributes it was set with, or a browser ignores the deletion.
        page.set_cookie(
            cookie,
            "",
            max_age=0,
            expires=0,
            httponly=True,
            secure=settings.secure_cookies,
            samesite="strict",
            path="/",
        )
    return page


@post(
    "/{link_id:str}",
    name="public:send-form",
)
async def send_from_form(
    request: AnyRequest, link_id: str, db: DB, settings: AppSettings, posting: PostingDep
) -> Response[Any]:
    """The send form without JavaScript: post, then redirect to the page (post/redirect/get)."""
    link = await public_link(db, link_id)
    if isinstance(link, NotFound):
        return not_found(request, link)
    sender = await signed_in_sender(request, db, settings, link)
    # A signed-in sender's page carries a token bound to their session; the anonymous page
    # is the same for everyone and carries none: its post is checked by where it comes from.
    form = await (
        checked_form(request, sender.principal.credential_id)
        if sender is not None
        else checked_origin(request)
    )
    if link.senders == "signed_in" and sender is None:
        return await _send_page(
            request, db, settings, link, status_code=401, signin_url=signin_to_send(link)
        )
    field = form.get("message_content")
    # Browsers send a textarea's line breaks as CRLF, but show and count them as one
    # character (as send.js does): store them as the LF a JSON client would send.
    text = field.replace("\r\n", "\n") if isinstance(field, str) else ""
    try:
        sent = await messages.create_message(
            posting,
            link_id=link.id,
            content=text,
            address=posting.clients.of(request.scope),
            receipt_site=site_url(request, settings),
            account=signed_in_as(sender),
        )
    except ValidationFailed as exc:
        problem = exc.fields[0].problem if exc.fields else ""
        error = problem_text(problem, readable(exc.message, 400, exc.code))
        return await _send_page(
            request, db, settings, link, status_code=400, text=text, error=error
        )
    except messages.SignInRequired:  # the link was switched to signed-in senders meanwhile
        return await _send_page(
            request, db, settings, link, status_code=401, signin_url=signin_to_send(link)
        )
    except messages.LinkPaused:
        paused = PublicLink(**{**_fields(link), "paused": True})
        error = (
            # A plain string in the page's sentence: no <bdi> around the name.
            _("%(name)s is not accepting messages right now.", name=isolated(paused.creator_name))
            if paused.creator_named
            else _("This creator is not accepting messages right now.")
        )
        return await _send_page(
            request, db, settings, paused, status_code=409, text=text, error=error
        )
    except RateLimited as exc:
        page = await _send_page(
            request,
            db,
            settings,
            link,
            status_code=429,
            text=text,
            error=too_fast(exc.retry_after),
        )
        page.headers["Retry-After"] = str(exc.retry_after)
        return page
    except ProofOfWorkRequired:
        # A proof of work needs the page's script (send.js); without it, only waiting helps.
        error = _(
            "This link is receiving a flood of messages right now. Sending needs JavaScript "
            "to show you are a person: turn it on, or try again in a few minutes."
        )
        return await _send_page(
            request, db, settings, link, status_code=429, text=text, error=error
        )
    except NotFound as missing:  # deleted while the form was being posted
        return not_found(request, missing)
    redirect = Redirect(
        path=f"/{link.id}?sent=1",
        status_code=303,
        headers={"Cache-Control": page_cache.PRIVATE},
    )
    carry_renewal(redirect, sender, settings)
    if isinstance(sent.receipt, ReceiptLink):
        redirect.set_cookie(
            cookie_name(RECEIPT_COOKIE, settings),
            f"{link.id}.{sent.receipt.token}",
            max_age=_RECEIPT_COOKIE_SECONDS,
            httponly=True,
            secure=settings.secure_cookies,
            samesite="strict",
            path="/",
        )
    return redirect


async def _shared_send_page(
    request: AnyRequest,
    db: DB,
    settings: Settings,
    federation: FederationDep,
    link_id: str,
    cursor: str | None,
    version: tuple[int, int | None],
) -> Response[Any]:
    """The send page as every anonymous visitor in this language gets it: conditional,
    kept per content version, ``public`` for shared caches (a cursor's page too)."""
    content_version, paused_until = version
    # A timed pause's notice says how long is left ("in 3 hours"): a minute's page at most.
    minute = now_us() // 60_000_000 if paused_until is not None else None
    site = site_url(request, settings)
    key = ("send", link_id, cursor, content_version, current_language(), site, minute)

    async def render() -> bytes | Response[Any]:
        link = await public_link(db, link_id)
        if isinstance(link, NotFound):
            return not_found(request, link)
        actor = await negotiation.actor_of(db, federation, link.id)
        context = await _send_context(
            request,
            db,
            settings,
            link,
            cursor=cursor,
            # On a link for signed-in senders, anyone not signed in is asked to sign in.
            signin_url=signin_to_send(link) if link.senders == "signed_in" else None,
            activitypub_id=None if actor is None else actor["id"],
        )
        return page_cache.render_template(request, "public.html", context)

    return await page_cache.public_page(request, key, render, vary="Accept")


def _fields(link: PublicLink) -> dict[str, Any]:
    return {name: getattr(link, name) for name in link.__struct_fields__}


ROUTES: list[ControllerRouterHandler] = [send_page, send_from_form]
