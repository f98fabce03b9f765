"""The chores runner (core/chores.py), without a server: each chore runs at once and again
only when due; one that fails is logged and tried again, and the others go on; a long
pass holds back no other chore; cancelling the runner stops them all, mid-pass too."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import cast

import pytest

from anonbox.core.chores import Chore, Runner, run_chores
from anonbox.core.database import Database

DB = cast(Database, object())  # the runner only hands it to the chores
TIMEOUT = 2.0


class Tally:
    """Passes run, by chore; ``enough`` is set once ``wanted`` holds of them."""

    def __init__(self, wanted: Callable[[Counter[str]], bool]) -> None:
        self.runs: Counter[str] = Counter()
        self._wanted = wanted
        self.enough = asyncio.Event()

    def ran(self, name: str) -> None:
        self.runs[name] += 1
        if self._wanted(self.runs):
            self.enough.set()


def run_until(tally: Tally, chores: Sequence[Chore]) -> None:
    """Run the chores until the tally has enough, or ``TIMEOUT`` seconds, then cancel the
    runner, which must end as a cancelled task does."""

    async def run() -> None:
        runner = asyncio.create_task(run_chores(DB, chores))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(tally.enough.wait(), TIMEOUT)
        runner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await runner

    asyncio.run(run())


def test_a_failing_chore_is_logged_and_stops_no_chore(caplog: pytest.LogCaptureFixture) -> None:
    tally = Tally(lambda runs: min(runs["failing"], runs["steady"]) >= 3)

    async def failing(db: Database) -> None:
        tally.ran("failing")
        raise RuntimeError("the database is away")

    async def steady(db: Database) -> None:
        assert db is DB
        tally.ran("steady")

    chores = [Chore("failing chore", 0.05, failing), Chore("steady chore", 0.05, steady)]
    with caplog.at_level(logging.WARNING, logger="anonbox.chores"):
        run_until(tally, chores)

    assert tally.runs["failing"] >= 3, tally.runs  # tried again after each failure
    assert tally.runs["steady"] >= 3, tally.runs
    failures = [r for r in caplog.records if r.getMessage() == "failing chore failed"]
    assert len(failures) >= 3
    assert all(r.exc_info and r.exc_info[0] is RuntimeError for r in failures)


def test_each_chore_runs_at_once_then_only_when_due() -> None:
    tally = Tally(lambda runs: runs["often"] >= 3)

    async def hourly(db: Database) -> None:
        tally.ran("hourly")

    async def often(db: Database) -> None:
        tally.ran("often")

    run_until(tally, [Chore("hourly", 3600, hourly), Chore("often", 0.05, often)])

    assert tally.runs["often"] >= 3, tally.runs
    assert tally.runs["hourly"] == 1, tally.runs  # at start, and not again before its hour


def test_a_long_pass_holds_back_no_other_chore_and_is_cancelled_with_the_runner() -> None:
    tally = Tally(lambda runs: runs["often"] >= 2)
    stopped: list[str] = []

    async def long(db: Database) -> None:
        tally.ran("long")
        try:
            await asyncio.sleep(3600)
        finally:
            stopped.append("long")

    async def often(db: Database) -> None:
        tally.ran("often")

    run_until(tally, [Chore("long", 0.05, long), Chore("often", 0.05, often)])

    assert tally.runs["often"] >= 2, tally.runs
    assert tally.runs["long"] == 1, tally.runs
    assert stopped == ["long"]  # the pass under way was cancelled, not left running


def test_the_runner_keeps_each_chores_last_good_pass_for_the_metrics() -> None:
    tally = Tally(lambda runs: min(runs["good"], runs["failing"]) >= 2)

    async def good(db: Database) -> None:
        tally.ran("good")

    async def failing(db: Database) -> None:
        tally.ran("failing")
        raise RuntimeError("the database is away")

    runner = Runner(DB, [Chore("good", 0.05, good), Chore("failing", 0.05, failing)])

    async def run() -> None:
        task = asyncio.create_task(runner.run())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(tally.enough.wait(), TIMEOUT)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    before = time.time()
    asyncio.run(run())
    jobs = runner.jobs()
    assert set(jobs) == {"good", "failing"}
    good_run = jobs["good"].last_run
    assert good_run is not None
    assert good_run >= before
    assert jobs["failing"].last_run is None  # a pass that failed is not a run


def test_two_chores_of_one_name_are_refused() -> None:
    async def noop(db: Database) -> None:
        return None

    with pytest.raises(ValueError, match="one name"):
        Runner(DB, [Chore("purging", 1, noop), Chore("purging", 2, noop)])
