"""Page route: a link's new messages, live, as server-sent events for ``dashboard.js``.

Live updates poll the database, so every instance and worker sees every commit. Open
streams are capped per sign-in session, and each re-checks its session while it runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from litestar import Request, get
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage
from litestar.types import ControllerRouterHandler

from anonbox.auth.sessions import still_signed_in
from anonbox.core.clock import isoformat_us
from anonbox.core.database import Database
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import RateLimited
from anonbox.core.ids import is_ulid
from anonbox.messages import inbox
from anonbox.web.dependencies import OwnedLink, SignedInBrowser, signed_in_pages
from anonbox.web.session import carry_renewal

POLL_SECONDS = 1.0
KEEP_ALIVE_SECONDS = 15.0
# A stream ends after this long; the browser reconnects (Last-Event-ID) and is checked again.
STREAM_SECONDS = 300.0
# While it lasts, an idle stream stops within this long of its session being signed out.
SESSION_CHECK_SECONDS = 2.0
# Open streams per sign-in session, in this process: a few tabs, not hundreds of them.
MAX_STREAMS_PER_SESSION = 5
_open_streams: dict[str, int] = {}


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
    request: Request[Any, Any, Any],
    browser: SignedInBrowser,
    link: OwnedLink,
    db: DB,
    settings: AppSettings,
    after: str | None = None,
) -> ServerSentEvent:
    """New messages of the link as they are stored, as server-sent events (JSON data)."""
    start = request.headers.get("last-event-id") or after
    if start is None or not is_ulid(start):
        start = await inbox.newest_id(db, link.link_id)
    session_id = browser.principal.credential_id
    if _open_streams.get(session_id, 0) >= MAX_STREAMS_PER_SESSION:
        raise RateLimited(
            f"At most {MAX_STREAMS_PER_SESSION} live inboxes at once; close a tab", retry_after=5
        )
    stream = ServerSentEvent(
        _new_messages(db, link.link_id, start, session_id),
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
    carry_renewal(stream, browser, settings)
    return stream


ROUTES: list[ControllerRouterHandler] = [signed_in_pages(link_events)]
