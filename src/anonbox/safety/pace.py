"""A dropped or filtered post answers when a post to the inbox would have.

A dropped message is written (``messages.repository.DroppedMessage``), so it pays for a
commit as a stored one does. But a bare id costs less than a message with its event and
its search row: 0.12 to 0.17 ms less a write, on either database, which a blocked sender
could see over a few hundred posts from two addresses (and a filtered message, without
its event, would tell a sender which of their words are muted). So each kind of write
keeps the times of its last ``KEEP`` writes to the inbox and of its last ``KEEP``
others, and any other write, once committed, waits the difference between the two
medians, when the inbox's is the longer.

A difference, not a drawn duration: the write itself is real, so it takes what writes
take now, load included, and only what a held-back write saves is added back. (Drawing
a past write's whole time and waiting for it made every held-back post as slow as the
slower of two writes, and a burst of load left those times stale.)
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import defaultdict, deque
from collections.abc import Awaitable
from typing import TypeVar

Result = TypeVar("Result")

KEEP = 16
# The event loop's timers keep milliseconds (rounded, on uvloop): a longer wait sleeps to
# within this of its end, and turns the loop for the rest.
TIMER_SLACK = 0.0015


class WritePace:
    """The recent times of writes, one series per kind of write for a process: of those
    to the inbox, and of the others before their wait. The "pace" is the inbox's: a
    dropped or filtered post answers no sooner than a stored one would have."""

    def __init__(self, keep: int = KEEP) -> None:
        self._inbox: defaultdict[str, deque[float]] = defaultdict(lambda: deque(maxlen=keep))
        self._held: defaultdict[str, deque[float]] = defaultdict(lambda: deque(maxlen=keep))

    async def write(self, kind: str, write: Awaitable[Result], *, inbox: bool) -> Result:
        """Await ``write``. One that is not to the inbox then waits the difference between
        the two series' medians, if the inbox's is longer. A write that fails answers at
        once: its error is the same whichever it was."""
        started = time.perf_counter()
        result = await write
        took = time.perf_counter() - started
        (self._inbox if inbox else self._held)[kind].append(took)
        if not inbox and self._inbox[kind]:
            gap = statistics.median(self._inbox[kind]) - statistics.median(self._held[kind])
            await _until(started + took + gap)
        return result


async def _until(deadline: float) -> None:
    """Give the loop to the other requests until ``deadline`` (``time.perf_counter``)."""
    left = deadline - time.perf_counter()
    if left > 2 * TIMER_SLACK:
        await asyncio.sleep(left - TIMER_SLACK)
    # The rest is shorter than a timer can wait: turn the loop until it has passed.
    while time.perf_counter() < deadline:  # noqa: ASYNC110 - no event marks a moment
        await asyncio.sleep(0)
