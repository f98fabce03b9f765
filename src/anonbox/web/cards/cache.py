"""Share cards are drawn once per version and kept: drawing one costs ~0.15 s of CPU, so
drawing it afresh for every request let a handful of requests a second fill the machine.

A card's version is its ETag (a digest of everything drawn on it). This process keeps the
newest PNGs up to ``MAX_BYTES``; a request for a kept version costs a lookup, concurrent
requests for one new version share one drawing, and at most ``RENDERERS`` cards are drawn
at once (on threads, so the event loop keeps answering). Kept only in memory: an image of a
deleted message or reply is never served (its version is no longer asked for) and is gone
with eviction or a restart, never written anywhere.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Annotated

from anonbox.core.access import INJECTED, UNCHECKED, Provided

MAX_BYTES = 32 * 1024 * 1024  # about 200 cards
RENDERERS = 2


class CardCache:
    def __init__(self, max_bytes: int = MAX_BYTES, renderers: int = RENDERERS) -> None:
        self._kept: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._max_bytes = max_bytes
        self._drawing: dict[str, asyncio.Future[bytes]] = {}
        self._renderers = asyncio.Semaphore(renderers)
        self._drawn = 0

    def stats(self) -> Mapping[str, int]:
        """For /metrics: cards drawn since start, and what is kept now."""
        return {"drawn": self._drawn, "kept": len(self._kept), "kept_bytes": self._bytes}

    async def png(self, version: str, draw: Callable[[], bytes]) -> bytes:
        """The PNG of this version, drawn with ``draw`` only if no one has it yet."""
        kept = self._kept.get(version)
        if kept is not None:
            self._kept.move_to_end(version)
            return kept
        pending = self._drawing.get(version)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._drawing[version] = future
        try:
            async with self._renderers:
                png = await asyncio.to_thread(draw)
                self._drawn += 1
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it, nobody else need
            raise
        finally:
            del self._drawing[version]
        future.set_result(png)
        self._keep(version, png)
        return png

    def _keep(self, version: str, png: bytes) -> None:
        self._kept[version] = png
        self._bytes += len(png)
        while self._bytes > self._max_bytes and len(self._kept) > 1:
            _, evicted = self._kept.popitem(last=False)
            self._bytes -= len(evicted)


# How the card pages take the process's cache (built at start-up: ``anonbox.wiring``).
CardsDep = Annotated[CardCache, INJECTED, UNCHECKED, Provided("cards")]
