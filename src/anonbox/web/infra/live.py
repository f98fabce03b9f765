"""What the pages' live streams share (``web.pages.events``, ``web.pages.stream``): the
wait on the process's hub, a keep-alive while nothing happens, an end after a while, when
the browser reconnects and is checked again, and a cap on how many are open at once.

A stream reads the database only when woken, so an idle one costs no query, and every
instance's commits reach it through the live fan-out (``notifications.outbox.fanout``).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator
from typing import TypeVar

from litestar.response.sse import ServerSentEventMessage

from anonbox.notifications.outbox.fanout import Hub

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
    """

    def __init__(self, most: int) -> None:
        self.most = most
        self._open: dict[str, int] = {}

    def open(self, key: str) -> int:
        return self._open.get(key, 0)

    def take(self, key: str, events: AsyncIterator[T]) -> AsyncIterator[T] | None:
        """``events``, counted under ``key`` until they end; None, and nothing counted,
        when ``most`` streams of ``key`` are open already."""
        if self.open(key) >= self.most:
            return None
        self._open[key] = self.open(key) + 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                left = self._open.pop(key, 1) - 1
                if left:
                    self._open[key] = left

        async def counted() -> AsyncIterator[T]:
            try:
                async for event in events:
                    yield event
            finally:
                release()

        stream = counted()
        # A stream never started (the client left before its answer was sent) never runs
        # its ``finally``: it is given back when the stream is collected.
        weakref.finalize(stream, release)
        return stream
