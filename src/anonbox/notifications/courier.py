"""The delivery worker every channel shares: find what is due, claim it, attempt it.

A channel says, through its ``Courier``, what work is due, how one piece is claimed (a
conditional update, so that the dispatchers of all instances never take the same piece)
and how it is attempted; the ``Dispatcher`` does the rest the same way for all of them:
each claimed piece is attempted in a task of its own, at most ``CONCURRENT`` at a time
per process, and counted for the metrics by its outcome.

A creator whose receivers are slow or never answer holds up only their own deliveries:
at most ``PER_CREATOR`` of one creator's attempts are in flight in a process, and while
they are, due work is looked for among the other creators only. A claim is a lease
(``LEASE_SECONDS``): an attempt that dies with its process is taken up again after it.

For ``/metrics`` each dispatcher keeps when it last looked for due work and how much it
found (its backlog, counted up to the room it had: at most ``CONCURRENT``).
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from anonbox.core.chores import Ran
from anonbox.core.clock import now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.outbox.relay import Channel

logger = logging.getLogger("anonbox.notifications")

CONCURRENT = 100
PER_CREATOR = 4
LEASE_SECONDS = 60  # longer than any attempt (10 s for HTTP, 15 s for SMTP)
_US = 1_000_000

JobT = TypeVar("JobT")


class Outcome(enum.Enum):
    DELIVERED = "delivered"
    RETRY = "retries"  # not this time; tried again later
    FAILED = "failed"  # given up
    GONE = "gone"  # the destination no longer exists (a push subscription)


def backoff_seconds(first: float, attempts: int, most: float) -> float:
    """The wait after the ``attempts``-th failed attempt: 4 times the last, capped."""
    return float(min(first * 4.0 ** (attempts - 1), most))


class Courier(Protocol[JobT]):
    name: str  # in logs, and in the metrics: ``anonbox_<name>_delivered``…
    title: str

    async def due(self, now: int, limit: int, busy: Sequence[str]) -> Sequence[Row]:
        """Work whose time has come (each row names its creator, ``user_id``), oldest
        first, leaving out the creators in ``busy``."""
        ...

    async def claim(self, row: Row, until: int) -> JobT | None:
        """Take this piece until ``until``; None if another instance has it."""
        ...

    async def attempt(self, job: JobT) -> Outcome:
        """Try once and record the result."""
        ...


@dataclass(frozen=True, slots=True)
class Delivery:
    """A delivery channel, as a package declares it in its ``tasks.py``
    (``core.chores.Tasks``); the notification worker runs them all."""

    # What records its deliveries in the relay's transaction; None when its work is
    # written elsewhere (a sign-in mail, by the ask itself).
    channel: Channel | None
    # What attempts them; None when this process cannot (e-mail without a mailer).
    courier: Courier[Any] | None = None
    purge: Callable[[], Awaitable[None]] | None = None  # drops what is done, now and then


class DeliveryRows:
    """``due`` and ``claim`` for a channel whose work is one row per delivery (webhooks,
    pushes): claimed by moving its ``next_attempt_at`` on, if nobody has meanwhile."""

    def __init__(
        self,
        db: Database,
        due: Callable[[Connection, int, int, Sequence[str]], Awaitable[Sequence[Row]]],
        claim: Callable[..., Awaitable[bool]],
    ) -> None:
        self._db = db
        self._due = due
        self._claim = claim

    async def due(self, now: int, limit: int, busy: Sequence[str]) -> Sequence[Row]:
        return await self._due(self._db, now, limit, busy)

    async def claim(self, row: Row, until: int) -> Row | None:
        claimed = await self._claim(
            self._db, delivery_id=row["id"], seen_at=row["next_attempt_at"], until=until
        )
        return row if claimed else None


class Dispatcher(Generic[JobT]):
    def __init__(
        self,
        courier: Courier[JobT],
        *,
        concurrent: int = CONCURRENT,
        per_creator: int = PER_CREATOR,
    ) -> None:
        self.courier = courier
        self._concurrent = concurrent
        self._per_creator = per_creator
        self._running: set[asyncio.Task[None]] = set()
        self._in_flight: Counter[str] = Counter()
        self._counts: Counter[str] = Counter()
        self.ran = Ran()  # the last look for due work, and what it found (/metrics)

    def stats(self) -> Mapping[str, int]:
        return {
            "attempts": self._counts["attempts"],
            **{outcome.value: self._counts[outcome.value] for outcome in Outcome},
            "in_flight": len(self._running),
        }

    async def step(self) -> None:
        """Claim what is due, as far as there is room, and start attempting it."""
        free = self._concurrent - len(self._running)
        if free <= 0:
            return
        busy = sorted(user for user, n in self._in_flight.items() if n >= self._per_creator)
        now = now_us()
        due = await self.courier.due(now, free, busy)
        self.ran.last_run, self.ran.backlog = time.time(), len(due)
        for row in due:
            user_id = str(row["user_id"])
            if self._in_flight[user_id] >= self._per_creator:
                continue
            job = await self.courier.claim(row, now + LEASE_SECONDS * _US)
            if job is None:
                continue
            self._in_flight[user_id] += 1
            task = asyncio.create_task(self._attempt(user_id, job))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _attempt(self, user_id: str, job: JobT) -> None:
        try:
            outcome = await self.courier.attempt(job)
        except Exception:  # the database is away a moment: the lease runs out, and it is retried
            logger.warning("%s: an attempt failed to finish", self.courier.name, exc_info=True)
            return
        finally:
            self._in_flight[user_id] -= 1
            if self._in_flight[user_id] <= 0:
                del self._in_flight[user_id]
        self._counts["attempts"] += 1
        self._counts[outcome.value] += 1

    async def close(self) -> None:
        """Stop the attempts in flight (their leases run out; another instance retries)."""
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
