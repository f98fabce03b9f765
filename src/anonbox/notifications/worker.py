"""The one background loop of a process's notifications.

In turn: the relay hands the outbox's new events to the channels, each channel's
dispatcher claims and starts what is due, and now and then what is done is purged. The
loop runs twice a second, and sooner when the hub hears of a commit (on PostgreSQL the
writes ``pg_notify`` as they commit), but no more often than ``MIN_GAP_SECONDS``, so a
burst of posts is handed over in a few batches rather than a round per post. A step
that fails (the database away a moment) is logged and tried again on the next round;
the others go on.

The channels are not listed here: each package declares its own in its ``tasks.py``
(``core.chores.Tasks``), ``wiring`` collects them, and the process's one runner
(``core.chores.Runner``) runs this loop beside the chores.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from anonbox.core.chores import Ran
from anonbox.core.database import Database
from anonbox.notifications.courier import Delivery, Dispatcher
from anonbox.outbox.relay import BATCH, Relay

logger = logging.getLogger("anonbox.notifications")

POLL_SECONDS = 0.5
MIN_GAP_SECONDS = 0.05
PURGE_SECONDS = 60.0
ATTEMPT_TIMEOUT_SECONDS = 10.0  # a webhook receiver's or push service's answer
RELAY_JOB = "the outbox relay"


class NotificationWorker:
    def __init__(
        self,
        relay: Relay,
        dispatchers: Sequence[Dispatcher[Any]],
        *,
        purges: Sequence[Callable[[], Awaitable[None]]] = (),
        woken: asyncio.Event | None = None,
    ) -> None:
        self._relay = relay
        self._dispatchers = list(dispatchers)
        self._purges = [relay.purge, *purges]
        self._woken = woken or asyncio.Event()

    @classmethod
    def of(
        cls, db: Database, deliveries: Sequence[Delivery], woken: asyncio.Event
    ) -> NotificationWorker:
        """The worker of these delivery channels (every package's, ``core.chores.Tasks``):
        the relay hands events to their channels, a dispatcher runs each courier."""
        relay = Relay(db, channels=[d.channel for d in deliveries if d.channel is not None])
        dispatchers: list[Dispatcher[Any]] = [
            Dispatcher(d.courier) for d in deliveries if d.courier is not None
        ]
        names = [d.courier.name for d in dispatchers]
        if len(set(names)) != len(names):
            raise ValueError(f"two couriers have one name: {sorted(names)}")
        purges = [d.purge for d in deliveries if d.purge is not None]
        return cls(relay, dispatchers, purges=purges, woken=woken)

    def jobs(self) -> Mapping[str, Ran]:
        """For /metrics: the relay's last look, and each courier's (``core.chores.Loop``)."""
        return {
            RELAY_JOB: self._relay.ran,
            **{f"{d.courier.title} deliveries": d.ran for d in self._dispatchers},
        }

    def stats(self) -> Sequence[tuple[str, str, Callable[[], Mapping[str, int]]]]:
        """For /metrics: the relay's, and each channel's deliveries (name, title, stats)."""
        return [
            ("outbox", "The outbox relay", self._relay.stats),
            *(
                (d.courier.name, f"{d.courier.title} deliveries", d.stats)
                for d in self._dispatchers
            ),
        ]

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        last_purge = 0.0
        try:
            while True:
                await self._step("the relay", self._hand_over)
                for dispatcher in self._dispatchers:
                    await self._step(dispatcher.courier.name, dispatcher.step)
                if loop.time() - last_purge > PURGE_SECONDS:
                    for purge in self._purges:
                        await self._step("purging", purge)
                    last_purge = loop.time()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._woken.wait(), POLL_SECONDS)
                self._woken.clear()
                await asyncio.sleep(MIN_GAP_SECONDS)
        finally:
            for dispatcher in self._dispatchers:
                await dispatcher.close()

    async def _hand_over(self) -> None:
        while await self._relay.hand_over() == BATCH:
            pass

    @staticmethod
    async def _step(what: str, step: Callable[[], Awaitable[None]]) -> None:
        try:
            await step()
        except Exception:  # the database is away a moment: try again next round
            logger.warning("notifications: %s failed", what, exc_info=True)
