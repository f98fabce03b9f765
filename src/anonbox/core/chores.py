"""Background work: how a domain declares it, and the one runner that runs it all.

A package with background work keeps a ``tasks.py`` whose ``TASKS`` is a :class:`Tasks`:
its periodic chores (small idempotent passes over the database that every instance runs
on a timer: purging what has expired, resuming ended pauses, erasing due accounts) and
its delivery channels (``notifications.courier.Delivery``: what the outbox's relay hands
events to and the notification worker attempts). Each is made from the process's
:class:`Needs`. ``wiring.TASKS`` lists every package's ``TASKS``, and the
:class:`Runner` it builds starts them all, keeps when each last ran (and what waits, where
a job can tell) for ``/metrics``, and stops them all when cancelled.

A chore runs now, then ``every`` seconds after its last pass ended. A pass that fails (the
database away a moment) is logged and tried again when next due; the other chores go on.
Each chore keeps a timer of its own, so a long pass (an account of a million messages
being erased) holds back no other chore. A chore is not leased: each pass is idempotent,
or claims its rows, so every instance running them all is safe.

The deliveries are not chores: the notification worker, woken by activity (a commit heard
by the hub) rather than by the clock, claims each piece under a lease
(``notifications.courier``). The runner runs the worker as a :class:`Loop` beside the
chores. The live feed, which listens rather than works, keeps its own task (``wiring``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Never, Protocol, TypeVar

import httpx

from anonbox.core.database import Database
from anonbox.core.mail import Mailer
from anonbox.core.settings import Settings

logger = logging.getLogger("anonbox.chores")

DeliveryT = TypeVar("DeliveryT", covariant=True)
# A share card's PNG for (link, message), drawn by web/ (above every domain), or None.
CardMaker = Callable[[str, str], Awaitable[bytes | None]]


@dataclass(frozen=True)
class Chore:
    name: str  # what it does, as the log says when a pass fails: "<name> failed"
    every: float  # seconds from the end of one pass to the start of the next
    run: Callable[[Database], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class Needs:
    """What background work is made from: the process's objects, built by ``wiring``."""

    db: Database
    settings: Settings
    mailer: Mailer | None  # None: no mail can be sent
    http: httpx.AsyncClient  # for deliveries (webhooks, push, answers posted, federation)
    card: CardMaker


def _none(needs: Needs) -> Sequence[Never]:
    return ()


@dataclass(frozen=True, slots=True)
class Tasks(Generic[DeliveryT]):
    """One package's background work, declared in its ``tasks.py`` as ``TASKS``.

    ``deliveries`` are ``notifications.courier.Delivery``, which core cannot name (they
    build on the outbox and notifications' courier); a package with chores only declares
    ``Tasks[NoDeliveries]``."""

    chores: Callable[[Needs], Sequence[Chore]] = _none
    deliveries: Callable[[Needs], Sequence[DeliveryT]] = _none


NoDeliveries = Never


@dataclass(slots=True)
class Ran:
    """What ``/metrics`` shows of one job."""

    last_run: float | None = None  # Unix time its last pass (or look for work) ended
    backlog: int | None = None  # what waited at that look, where the job can tell


class Loop(Protocol):
    """Background work that paces itself (the notification worker)."""

    async def run(self) -> None:
        """Run until cancelled."""
        ...

    def jobs(self) -> Mapping[str, Ran]:
        """Each of its jobs, by name."""
        ...


class Runner:
    """Starts every chore and loop, keeps how each job went, and stops them all."""

    def __init__(self, db: Database, chores: Sequence[Chore], loops: Sequence[Loop] = ()):
        names = [chore.name for chore in chores]
        if len(set(names)) != len(names):
            raise ValueError(f"two chores have one name: {sorted(names)}")
        self._db = db
        self._chores = list(chores)
        self._loops = list(loops)
        self._ran = {chore.name: Ran() for chore in chores}

    def jobs(self) -> dict[str, Ran]:
        """Every job, by name: the chores', then each loop's."""
        return {**self._ran, **{k: v for loop in self._loops for k, v in loop.jobs().items()}}

    async def run(self) -> None:
        """Run everything until cancelled (which stops every chore, mid-pass too)."""
        async with asyncio.TaskGroup() as group:
            for chore in self._chores:
                group.create_task(self._repeat(chore), name=f"chore:{chore.name}")
            for loop in self._loops:
                group.create_task(loop.run())

    async def _repeat(self, chore: Chore) -> None:
        ran = self._ran[chore.name]
        while True:
            try:
                await chore.run(self._db)
            except Exception:  # the database away a moment: the next pass will do
                logger.warning("%s failed", chore.name, exc_info=True)
            else:
                ran.last_run = time.time()
            await asyncio.sleep(chore.every)


async def run_chores(db: Database, chores: Sequence[Chore]) -> None:
    """Run every chore when due, until cancelled."""
    await Runner(db, chores).run()
