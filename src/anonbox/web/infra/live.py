"""What the pages' live streams share (``web.pages.events``, ``web.pages.stream``): the
wait on the process's hub, a keep-alive while nothing happens, an end after a while, when
the browser reconnects and is checked again, and a cap on how many are open at once.

A stream reads the database only when woken, so an idle one costs no query, and every
instance's commits reach it through the live fan-out (``outbox.fanout``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, TypeVar

from litestar.connection import ASGIConnection
from litestar.response.sse import ServerSentEventMessage
from litestar.types import ASGIApp, Receive, Scope, Send

from anonbox.outbox.fanout import Hub

T = TypeVar("T")

KEEP_ALIVE_SECONDS = 15.0
# A stream ends after this long; the browser reconnects (Last-Event-ID) and is checked again.
STREAM_SECONDS = 300.0

CONNECTED = ServerSentEventMessage(data=None, comment="connected", retry=2000)
KEEP_ALIVE = ServerSentEventMessage(data=None, comment="keep-alive")


async def wakes(hub: Hub, *keys: str) -> AsyncIterator[bool]:
    """True once at the start (the page may be older than the stream) and whenever one of
    ``keys`` is published; False when a keep-alive is due; done after ``STREAM_SECONDS``."""
    ends = time.monotonic() + STREAM_SECONDS
    with hub.subscription(*keys) as woken:
        woken.set()
        while (left := ends - time.monotonic()) > 0:
            try:
                await asyncio.wait_for(woken.wait(), timeout=min(KEEP_ALIVE_SECONDS, left))
            except TimeoutError:
                yield False
                continue
            woken.clear()  # a publication while the caller looks wakes it again
            yield True


class OpenStreams:
    """The streams open in this process, counted per key (a sign-in session, an overlay's
    address), at most ``most`` per key.

    A stream counts from the moment its request is answered, not from when it starts to
    run: ``take`` looks and counts with no await in between, so parallel requests cannot
    all see room (counted when each stream began, 29 to 50 of 50 opened at once got in
    past a cap of 5). The count is this process's: each instance holds its own streams.

    Its place is given back when its request ends, by ``gives_places_back`` around the
    route: whether the stream ran to its end, the client left after its first bytes, or
    left before the answer started (then the stream never runs, and no ``finally`` of
    its own would ever run: such places came back only when the garbage collector found
    them, and a few hundred quick drops locked a session out).
    """

    def __init__(self, most: int) -> None:
        self.most = most
        self._open: dict[str, int] = {}

    def open(self, key: str) -> int:
        return self._open.get(key, 0)

    def take(
        self, request: ASGIConnection[Any, Any, Any, Any], key: str, events: AsyncGenerator[T, None]
    ) -> AsyncGenerator[T, None] | None:
        """``events``, counted under ``key`` until ``request`` ends; None, and nothing
        counted, when ``most`` streams of ``key`` are open already."""
        taken = request.scope["state"].get(_TAKEN)
        if taken is None:  # a route without the middleware would never give it back
            raise RuntimeError(f"{request.url.path}: a live stream's route needs gives_places_back")
        if self.open(key) >= self.most:
            return None
        self._open[key] = self.open(key) + 1

        def release() -> None:
            left = self._open.pop(key, 1) - 1
            if left:
                self._open[key] = left

        taken.append((release, events))
        return events


_TAKEN = "anonbox.live.taken"  # the scope's state: what the request's streams took


def gives_places_back(app: ASGIApp) -> ASGIApp:
    """Route middleware for a live stream: when the request ends, however it ends (the
    stream done, the client gone before or after the answer started, the server stopping
    and cancelling it), each place its stream took is given back, then the stream is
    closed, which ends its wait on the hub."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        taken: list[tuple[Callable[[], None], AsyncGenerator[Any, None]]] = []
        scope["state"][_TAKEN] = taken
        try:
            await app(scope, receive, send)
        finally:
            for release, _events in taken:
                release()  # first, and without an await: a second cancellation cannot skip it
            for _release, events in taken:
                await events.aclose()

    return middleware
