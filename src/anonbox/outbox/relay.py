"""The relay: hands the outbox's events to the channels, in order, at least once.

Events are written in the transaction of what they tell about
(``outbox.repository``). The relay takes those not yet handed over, oldest first,
and gives them to every channel inside one transaction that also marks them handed: a
channel records its own deliveries there (a row per webhook endpoint, per device…), so
an event is either handed to all channels or to none, and a crash in between hands it
again. On PostgreSQL the relays of all instances take turns through a transaction-level
advisory lock, so one hands over at a time and the order holds; on SQLite the database's
single writer does the same. Handed events are purged after ``KEEP_SECONDS``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Protocol

from anonbox.core.chores import Ran
from anonbox.core.clock import now_us
from anonbox.core.database import Connection, Database
from anonbox.outbox import repository
from anonbox.outbox.schemas import Event

BATCH = 200
KEEP_SECONDS = 600  # handed events stay this long (SQLite's live fan-out tails them)
_RELAY_LOCK = 0x616E6F6E  # "anon": the advisory lock the relays take turns with
_US = 1_000_000


class Channel(Protocol):
    """A way of telling creators: records what it will deliver, in the relay's transaction."""

    name: str

    async def accept(self, conn: Connection, events: Sequence[Event]) -> None: ...


class Relay:
    def __init__(self, db: Database, channels: Sequence[Channel]) -> None:
        self._db = db
        self._channels = list(channels)
        self.handed = 0  # events handed over by this process (metrics)
        self.ran = Ran()  # when it last looked, and how many events it handed then

    def stats(self) -> Mapping[str, int]:
        return {"handed_over": self.handed}

    async def hand_over(self) -> int:
        """Hand over one batch; how many events it held (0: nothing to do, or another
        instance's turn)."""
        handed = await self._hand_over()
        self.ran.last_run, self.ran.backlog = time.time(), handed
        return handed

    async def _hand_over(self) -> int:
        if not await repository.any_pending(self._db):  # a read: no write lock for nothing
            return 0
        async with self._db.transaction() as tx:
            if not await repository.take_turn(tx, _RELAY_LOCK):
                return 0
            rows = await repository.pending(tx, BATCH)
            if not rows:
                return 0
            events = [Event(**dict(row)) for row in rows]
            for channel in self._channels:
                await channel.accept(tx, events)
            await repository.mark_handed(tx, [e.seq for e in events], now_us())
        self.handed += len(events)
        return len(events)

    async def purge(self) -> None:
        await repository.purge_handed(self._db, now_us() - KEEP_SECONDS * _US)
