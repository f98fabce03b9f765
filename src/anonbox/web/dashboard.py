"""Page routes: the creator's dashboard (signing in and out is ``web.signin``).

Every action is a plain form post carrying the CSRF field, answered with a redirect back
to the page it came from (post/redirect/get), so the dashboard works without JavaScript;
``static/dashboard.js`` only adds live updates. Actions call the same services as the
JSON API, so each rule lives in one place. See ``docs/pages.md``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, Router, get, post
from litestar.datastructures import FormMultiDict
from litestar.params import Parameter
from litestar.response import Redirect, ServerSentEvent, Template
from litestar.response.sse import ServerSentEventMessage

from anonbox.auth import service as accounts
from anonbox.auth.sessions import still_signed_in
from anonbox.core.clock import isoformat_us
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import (
    FieldProblem,
    Forbidden,
    NotFound,
    RateLimited,
    Unauthorized,
    ValidationFailed,
)
from anonbox.core.ids import is_ulid
from anonbox.core.paths import Cursor, LinkId, RowId
from anonbox.core.settings import Settings
from anonbox.links import service as links
from anonbox.links.repository import link_owner
from anonbox.messages import inbox
from anonbox.messages import service as messages
from anonbox.safety import blocks, mutes
from anonbox.web.routing import site_url
from anonbox.web.security import CSRF_FIELD, checked_form, csrf_token, set_csrf_cookie
from anonbox.web.session import (
    Browser,
    browser_session,
    carry_renewal,
    clear_session_cookies,
)
from anonbox.web.signin import signin_page

PAGE_SIZE = 20
_NO_STORE = {"Cache-Control": "no-store"}
# Live updates poll the database: every instance and worker sees every commit that way.
POLL_SECONDS = 1.0
KEEP_ALIVE_SECONDS = 15.0
# A stream ends after this long; the browser reconnects (Last-Event-ID) and is checked again.
STREAM_SECONDS = 300.0
# While it lasts, an idle stream stops within this long of its session being signed out.
SESSION_CHECK_SECONDS = 2.0
# Open streams per sign-in session, in this process: a few tabs, not hundreds of them.
MAX_STREAMS_PER_SESSION = 5
_open_streams: dict[str, int] = {}

AnyRequest = Request[Any, Any, Any]


class NotSignedIn(Unauthorized):
    """Rendered as the sign-in page rather than an error."""


def _signin_page(request: AnyRequest, exc: NotSignedIn) -> Response[Any]:
    page = signin_page(request, request.app.state.settings, message=exc.message, status_code=401)
    # A session that can no longer be renewed is over: forget its cookies.
    clear_session_cookies(page)
    return page


async def _signed_in(request: AnyRequest, db: Database, settings: Settings) -> Browser:
    browser = await browser_session(request, db, settings)
    if browser is None:
        raise NotSignedIn("Sign in to see your inbox.")
    return browser


async def _own(db: Database, browser: Browser, link_id: str) -> None:
    owner = await link_owner(db, link_id)
    if owner is None:
        raise NotFound("No link with this id")
    if owner != browser.principal.user_id:
        raise Forbidden("This link belongs to someone else")


def _page(
    request: AnyRequest,
    browser: Browser,
    settings: Settings,
    template: str,
    context: dict[str, Any],
    status_code: int = 200,
) -> Template:
    token, new = csrf_token(request)
    page = Template(
        template_name=template,
        context={**context, "csrf_token": token, "csrf_field": CSRF_FIELD},
        status_code=status_code,
        headers=_NO_STORE,
    )
    if new:
        set_csrf_cookie(page, token, settings)
    carry_renewal(page, browser, settings)
    return page


def _back(form: FormMultiDict, default: str) -> str:
    """Where a form post returns to: one of the dashboard's own pages, nothing else."""
    back = str(form.get("back") or "")
    if back.startswith("/dashboard") and "//" not in back and "\\" not in back:
        return back
    return default


def _done(browser: Browser, settings: Settings, location: str) -> Redirect:
    response = Redirect(path=location, status_code=303, headers=_NO_STORE)
    carry_renewal(response, browser, settings)
    return response


def _text(form: FormMultiDict, name: str) -> str:
    value = form.get(name)
    if not isinstance(value, str):
        raise ValidationFailed(f"{name} is missing", [FieldProblem(name, "missing")])
    return value


# --- the inbox ----------------------------------------------------------------------------

FilterName = Annotated[
    str, Parameter(query="filter", pattern="^(all|unread|unanswered|answered|liked)$")
]


async def _inbox_page(
    request: AnyRequest,
    db: Database,
    settings: Settings,
    browser: Browser,
    link_id: str | None,
    which: inbox.InboxFilter,
    cursor: str | None,
) -> Template:
    user_id = browser.principal.user_id
    owned = await inbox.links_with_unread(db, user_id)
    if link_id is None:
        if not owned:
            raise NotFound("You have no link yet")
        link_id = str(owned[0]["id"])
    else:
        await _own(db, browser, link_id)
    current = next(row for row in owned if row["id"] == link_id)
    listing = await inbox.page(db, link_id=link_id, which=which, before=cursor, limit=PAGE_SIZE)
    unread = sum(1 for m in listing.messages if m.unread) if cursor else int(current["unread"])
    newest = await inbox.newest_id(db, link_id)
    live = cursor is None and which in {inbox.InboxFilter.ALL, inbox.InboxFilter.UNREAD}
    if live and listing.messages:  # what is shown now has been seen
        await inbox.mark_seen(db, link_id=link_id, message_id=listing.messages[0].id)
    base = f"/dashboard/links/{link_id}"
    here = base + ("" if which is inbox.InboxFilter.ALL else f"?filter={which.value}")
    if cursor:
        here += ("&" if "?" in here else "?") + f"cursor={cursor}"
    profile = await accounts.profile(db, user_id=user_id)
    return _page(
        request,
        browser,
        settings,
        "dashboard.html",
        {
            "profile": profile,
            "links": [
                {
                    "id": row["id"],
                    "prompt": row["prompt"],
                    "paused": bool(row["paused"]),
                    "unread": 0 if row["id"] == link_id else int(row["unread"]),
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
            "newest": newest,
            "live": live,
        },
    )


@get("/dashboard")
async def dashboard(
    request: AnyRequest,
    db: DB,
    settings: AppSettings,
    which: FilterName = "all",
    cursor: Cursor = None,
) -> Template:
    browser = await _signed_in(request, db, settings)
    return await _inbox_page(request, db, settings, browser, None, inbox.InboxFilter(which), cursor)


@get("/dashboard/links/{link_id:str}")
async def link_inbox(
    request: AnyRequest,
    link_id: LinkId,
    db: DB,
    settings: AppSettings,
    which: FilterName = "all",
    cursor: Cursor = None,
) -> Template:
    browser = await _signed_in(request, db, settings)
    return await _inbox_page(
        request, db, settings, browser, link_id, inbox.InboxFilter(which), cursor
    )


async def _new_messages(
    db: Database, link_id: str, after: str, session_id: str
) -> AsyncIterator[ServerSentEventMessage]:
    # Counted once the stream runs (an answer never sent never ends, so never uncounts).
    _open_streams[session_id] = _open_streams.get(session_id, 0) + 1
    try:
        async for event in _stream(db, link_id, after, session_id):
            yield event
    finally:
        left = _open_streams.pop(session_id, 1) - 1
        if left:
            _open_streams[session_id] = left


async def _stream(
    db: Database, link_id: str, after: str, session_id: str
) -> AsyncIterator[ServerSentEventMessage]:
    yield ServerSentEventMessage(data=None, comment="connected", retry=2000)
    started = last_sent = last_checked = time.monotonic()
    while time.monotonic() - started < STREAM_SECONDS:
        rows = await inbox.since(db, link_id=link_id, after=after)
        # Nothing goes out for a session signed out meanwhile: checked before anything is
        # sent, and every few seconds so that an idle stream ends too. The browser's
        # reconnect then meets the sign-in page.
        if rows or time.monotonic() - last_checked >= SESSION_CHECK_SECONDS:
            if not await still_signed_in(db, session_id=session_id):
                return
            last_checked = time.monotonic()
        for row in rows:
            after = str(row["id"])
            data = {
                "id": after,
                "message_content": row["content"],
                "created_at": isoformat_us(row["created_at"]),
            }
            yield ServerSentEventMessage(
                data=msgspec.json.encode(data).decode(), event="message", id=after
            )
            last_sent = time.monotonic()
        if time.monotonic() - last_sent >= KEEP_ALIVE_SECONDS:
            yield ServerSentEventMessage(data=None, comment="keep-alive")
            last_sent = time.monotonic()
        await asyncio.sleep(POLL_SECONDS)


@get("/dashboard/links/{link_id:str}/events")
async def link_events(
    request: AnyRequest,
    link_id: LinkId,
    db: DB,
    settings: AppSettings,
    after: str | None = None,
) -> ServerSentEvent:
    """New messages of the link as they are stored, as server-sent events (JSON data)."""
    browser = await _signed_in(request, db, settings)
    await _own(db, browser, link_id)
    start = request.headers.get("last-event-id") or after
    if start is None or not is_ulid(start):
        start = await inbox.newest_id(db, link_id)
    session_id = browser.principal.credential_id
    if _open_streams.get(session_id, 0) >= MAX_STREAMS_PER_SESSION:
        raise RateLimited(
            f"At most {MAX_STREAMS_PER_SESSION} live inboxes at once; close a tab", retry_after=5
        )
    stream = ServerSentEvent(
        _new_messages(db, link_id, start, session_id),
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
    carry_renewal(stream, browser, settings)
    return stream


# --- actions on a message -----------------------------------------------------------------


async def _message_action(
    request: AnyRequest, db: Database, settings: Settings, link_id: str
) -> tuple[Browser, FormMultiDict, str]:
    form = await checked_form(request)
    browser = await _signed_in(request, db, settings)
    await _own(db, browser, link_id)
    return browser, form, _back(form, f"/dashboard/links/{link_id}")


_MESSAGE = "/dashboard/links/{link_id:str}/messages/{message_id:str}"


@post(_MESSAGE + "/reply", status_code=303)
async def reply(
    request: AnyRequest, link_id: LinkId, message_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    browser, form, back = await _message_action(request, db, settings, link_id)
    await messages.reply(
        db, link_id=link_id, message_id=message_id, content=_text(form, "message_content")
    )
    return _done(browser, settings, back)


@post(_MESSAGE + "/like", status_code=303)
async def like(
    request: AnyRequest, link_id: LinkId, message_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    browser, _, back = await _message_action(request, db, settings, link_id)
    await messages.toggle_like(db, link_id=link_id, message_id=message_id)
    return _done(browser, settings, back)


@post(_MESSAGE + "/delete", status_code=303)
async def delete_message(
    request: AnyRequest, link_id: LinkId, message_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    browser, _, back = await _message_action(request, db, settings, link_id)
    await messages.delete_message(db, link_id=link_id, message_id=message_id)
    return _done(browser, settings, back)


@post(_MESSAGE + "/replies/{reply_id:str}/delete", status_code=303)
async def delete_reply(
    request: AnyRequest,
    link_id: LinkId,
    message_id: RowId,
    reply_id: RowId,
    db: DB,
    settings: AppSettings,
) -> Redirect:
    browser, _, back = await _message_action(request, db, settings, link_id)
    await messages.delete_reply(db, link_id=link_id, message_id=message_id, reply_id=reply_id)
    return _done(browser, settings, back)


@post(_MESSAGE + "/block", status_code=303)
async def block_sender(
    request: AnyRequest, link_id: LinkId, message_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    browser, _, back = await _message_action(request, db, settings, link_id)
    target = await blocks.sender_of(db, message_id=message_id, link_id=link_id)
    await blocks.block(db, owner_id=browser.principal.user_id, target=target)
    return _done(browser, settings, back)


@post("/dashboard/links/{link_id:str}/settings", status_code=303)
async def link_settings(
    request: AnyRequest, link_id: LinkId, db: DB, settings: AppSettings
) -> Redirect:
    browser, form, back = await _message_action(request, db, settings, link_id)
    await links.update_link(
        db,
        link_id=link_id,
        user_id=browser.principal.user_id,
        prompt=_text(form, "prompt"),
        paused=form.get("paused") == "on",
    )
    return _done(browser, settings, back)


# --- the account: muted words and API keys ------------------------------------------------


async def _account_page(
    request: AnyRequest,
    db: Database,
    settings: Settings,
    browser: Browser,
    new_key: str | None = None,
    status_code: int = 200,
) -> Template:
    user_id = browser.principal.user_id
    return _page(
        request,
        browser,
        settings,
        "dashboard_account.html",
        {
            "profile": await accounts.profile(db, user_id=user_id),
            "muted": (await mutes.muted_words(db, owner_id=user_id)).items,
            "api_keys": await accounts.list_api_keys(db, user_id=user_id),
            "blocked": (await blocks.blocks_of(db, owner_id=user_id)).items,
            "new_key": new_key,
            "here": "/dashboard/account",
        },
        status_code,
    )


@get("/dashboard/account")
async def account(request: AnyRequest, db: DB, settings: AppSettings) -> Template:
    browser = await _signed_in(request, db, settings)
    return await _account_page(request, db, settings, browser)


async def _account_action(
    request: AnyRequest, db: Database, settings: Settings
) -> tuple[Browser, FormMultiDict]:
    form = await checked_form(request)
    return await _signed_in(request, db, settings), form


@post("/dashboard/muted-words", status_code=303)
async def mute_word(request: AnyRequest, db: DB, settings: AppSettings) -> Redirect:
    browser, form = await _account_action(request, db, settings)
    await mutes.mute(db, owner_id=browser.principal.user_id, word=_text(form, "word"))
    return _done(browser, settings, "/dashboard/account")


@post("/dashboard/muted-words/{word_id:str}/delete", status_code=303)
async def unmute_word(
    request: AnyRequest, word_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    browser, _ = await _account_action(request, db, settings)
    await mutes.unmute(db, owner_id=browser.principal.user_id, word_id=word_id)
    return _done(browser, settings, "/dashboard/account")


@post("/dashboard/blocks/{block_id:str}/delete", status_code=303)
async def unblock(request: AnyRequest, block_id: RowId, db: DB, settings: AppSettings) -> Redirect:
    browser, _ = await _account_action(request, db, settings)
    await blocks.unblock(db, owner_id=browser.principal.user_id, block_id=block_id)
    return _done(browser, settings, "/dashboard/account")


@post("/dashboard/api-keys", status_code=201)
async def create_api_key(request: AnyRequest, db: DB, settings: AppSettings) -> Template:
    """Answered with the page itself, not a redirect: the key is shown this once."""
    browser, form = await _account_action(request, db, settings)
    name = _text(form, "name")
    if len(name) > 100:
        raise ValidationFailed(
            "name must be 1 to 100 characters", [FieldProblem("name", "too_long")]
        )
    key = await accounts.create_api_key(db, user_id=browser.principal.user_id, name=name)
    return await _account_page(request, db, settings, browser, key.api_key, 201)


@post("/dashboard/api-keys/{key_id:str}/revoke", status_code=303)
async def revoke_api_key(
    request: AnyRequest, key_id: RowId, db: DB, settings: AppSettings
) -> Redirect:
    browser, _ = await _account_action(request, db, settings)
    await accounts.revoke_api_key(db, user_id=browser.principal.user_id, key_id=key_id)
    return _done(browser, settings, "/dashboard/account")


ROUTES = [
    Router(
        path="/",
        route_handlers=[
            dashboard,
            link_inbox,
            link_events,
            reply,
            like,
            delete_message,
            delete_reply,
            block_sender,
            link_settings,
            account,
            mute_word,
            unmute_word,
            unblock,
            create_api_key,
            revoke_api_key,
        ],
        exception_handlers={NotSignedIn: _signin_page},
    )
]
