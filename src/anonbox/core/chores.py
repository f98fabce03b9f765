"""Periodic chores: small idempotent passes over the database that every instance runs on
a timer (purging what has expired, resuming ended pauses, erasing due accounts).

Each domain offers its chore as one pass, ``async (db) -> anything``; ``main.py`` names
them with their intervals, and ``run_chores`` is the one loop that runs them: each now,
then ``every`` seconds after its last pass ended. A pass that fails (the database away a
moment) is logged and tried again when next due; the other chores go on. Each chore
keeps a timer of its own, so a long pass (an account of a million messages being erased)
holds back no other chore. Cancelling the runner stops every chore.

The notification worker is not a chore: it is woken by activity (a commit heard by the
hub) rather than by the clock, and paces itself between wakings, so it keeps its own task
(``notifications.worker``). Nor is the live feed, which listens rather than polls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from anonbox.core.database import Database

logger = logging.getLogger("anonbox.chores")


@dataclass(frozen=True)
class Chore:
    name: str  # what it does, as the log says when a pass fails: "<name> failed"
    every: float  # seconds from the end of one pass to the start of the next
    run: Callable[[Database], Awaitable[object]]


async def run_chores(db: Database, chores: Sequence[Chore]) -> None:
    """Run every chore when due, until cancelled."""
    async with asyncio.TaskGroup() as group:
        for chore in chores:
            group.create_task(_repeat(db, chore), name=f"chore:{chore.name}")


async def _repeat(db: Database, chore: Chore) -> None:
    while True:
        try:
            await chore.run(db)
        except Exception:  # the database away a moment: the next pass will do
            logger.warning("%s failed", chore.name, exc_info=True)
        await asyncio.sleep(chore.every)
