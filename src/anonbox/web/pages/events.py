"""Page route: a link's new messages, live, as server-sent events for ``dashboard.js``;
and the messages that left its inbox (deleted, or moved to the filtered folder by a muted
word added later), so that an open tab drops them. A removal names the
message and whether it went to the folder, nothing else: not why, and nothing about
its sender.

A stream waits on its process's hub (``outbox.fanout``) for its link and its
sign-in session: it reads the database only when woken, so an idle stream costs no
query, and every instance's commits reach it. Open streams are capped per sign-in
session; a stream re-checks its session whenever it is woken, so it ends as soon as the
session is signed out, on whichever instance.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import msgspec
from litestar import Request, get
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage
from litestar.types import ControllerRouterHandler

from anonbox.auth.sessions import still_signed_in
from anonbox.core.clock import isoformat_us
from anonbox.core.database import Database, Row
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import RateLimited
from anonbox.core.ids import is_ulid
from anonbox.messages.inbox import service as inbox
from anonbox.outbox.dependencies import HubDep
from anonbox.outbox.fanout import Hub
from anonbox.outbox.schemas import Kind
from anonbox.web.infra.dependencies import OwnedPageLink, SignedInBrowser, signed_in_pages
from anonbox.web.infra.live import CONNECTED, KEEP_ALIVE, OpenStreams, gives_places_back, wakes
from anonbox.web.infra.session import carry_renewal

# Open streams per sign-in session, in this process: a few tabs, not hundreds of them.
MAX_STREAMS_PER_SESSION = 5
_PAGE = 50  # messages read at a time for a live inbox
_open_streams = OpenStreams(MAX_STREAMS_PER_SESSION)


async def _stream(
    db: Database, hub: Hub, link_id: str, after: str, session_id: str
) -> AsyncGenerator[ServerSentEventMessage, None]:
    yield CONNECTED
    removed_after: int | None = None  # the outbox's seq, learnt on the first look
    async for looked in wakes(hub, f"link:{link_id}", f"session:{session_id}"):
        if not looked:
            yield KEEP_ALIVE
            continue
        # Nothing goes out for a session signed out meanwhile; the browser's reconnect
        # then meets the sign-in page.
        if not await still_signed_in(db, session_id=session_id):
            return
        # Every message stored since the last look, a page at a time: a wake may follow
        # more posts than a page holds (a flood), and none may wait for the next post.
        while True:
            rows = await inbox.since(db, link_id=link_id, after=after, limit=_PAGE)
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
            if len(rows) < _PAGE:
                break
        removed_after, removals = await inbox.removals_since(
            db, link_id=link_id, after=removed_after
        )
        for row in removals:
            yield _removal(row)


def _removal(row: Row) -> ServerSentEventMessage:
    """No ``id``: the browser's Last-Event-ID stays the newest message it was given."""
    data = {"id": row["message_id"], "filtered": row["kind"] == Kind.MESSAGE_FILTERED}
    return ServerSentEventMessage(data=msgspec.json.encode(data).decode(), event="removed")


@get("/dashboard/links/{link_id:str}/events", middleware=[gives_places_back])
async def link_events(
    request: Request[Any, Any, Any],
    browser: SignedInBrowser,
    link: OwnedPageLink,
    db: DB,
    settings: AppSettings,
    hub: HubDep,
    after: str | None = None,
) -> ServerSentEvent:
    """New messages of the link as they are stored (``message``), and those that left its
    inbox (``removed``), as server-sent events (JSON data)."""
    start = request.headers.get("last-event-id") or after
    if start is None or not is_ulid(start):
        start = await inbox.newest_id(db, link.link_id)
    session_id = browser.principal.credential_id
    live = _open_streams.take(
        request, session_id, _stream(db, hub, link.link_id, start, session_id)
    )
    if live is None:
        raise RateLimited(
            f"At most {MAX_STREAMS_PER_SESSION} live inboxes at once; close a tab", retry_after=5
        )
    stream = ServerSentEvent(live, headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
    carry_renewal(stream, browser, settings)
    return stream


ROUTES: list[ControllerRouterHandler] = [signed_in_pages(link_events)]
