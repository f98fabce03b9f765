"""One timed run: wrk with a scenario's Lua script against a started server, with the
server's RSS and CPU (and PostgreSQL's CPU) sampled around it, from the same database
state every time (checkpointed, the floor's outbox rows settled)."""

# ruff: noqa: S603

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import asyncpg
import psutil
from layout import BENCH, LOGS
from scenarios import Config, Fixture, Result, Scenario
from seeding import PG_DATABASE, POSTGRES_ADMIN_URL
from servers import Server

CONNECTIONS = 64
WRK_THREADS = 2
MIB = 1024 * 1024


def process_tree(root: psutil.Process) -> list[psutil.Process]:
    """The server and every process under it: with --workers, the supervisor only starts
    and watches the workers, which do all the work."""
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return [root]


class Sampler:
    """The largest RSS of any one server process, every 0.2 s while a load runs."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.max_rss = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            for proc in process_tree(self.process):
                with contextlib.suppress(psutil.Error):
                    self.max_rss = max(self.max_rss, proc.memory_info().rss)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def cpu_seconds(processes: list[psutil.Process]) -> dict[int, float]:
    seconds: dict[int, float] = {}
    for proc in processes:
        with contextlib.suppress(psutil.Error):
            times = proc.cpu_times()
            seconds[proc.pid] = float(times.user + times.system)
    return seconds


def cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds between two samples; a process that started in between counts whole."""
    return sum(value - before.get(pid, 0.0) for pid, value in after.items())


def postgres_processes() -> list[psutil.Process]:
    return [
        proc
        for proc in psutil.process_iter(["name"])
        if (proc.info["name"] or "").startswith("postgres")
    ]


# PostgreSQL's processes that serve every database: the bench's writes go through them.
PG_SHARED = ("walwriter", "checkpointer", "background writer")


def bench_backends() -> set[int]:
    """The PostgreSQL processes working for the benchmark: the backends connected to its
    database and the shared writers (other databases on this server are not counted,
    except through those shared writers)."""

    async def run() -> set[int]:
        conn = await asyncpg.connect(POSTGRES_ADMIN_URL)
        try:
            rows = await conn.fetch(
                "SELECT pid FROM pg_stat_activity WHERE datname = $1 OR backend_type = ANY($2)",
                PG_DATABASE,
                list(PG_SHARED),
            )
            return {int(r["pid"]) for r in rows}
        finally:
            await conn.close()

    return asyncio.run(run())


def wrk(
    server: Server, scenario: Scenario, fixture: Fixture, seconds: int, tag: str
) -> dict[str, Any]:
    command = [
        "wrk",
        f"-t{WRK_THREADS}",
        f"-c{CONNECTIONS}",
        f"-d{seconds}s",
        "--timeout",
        "5s",
        "--latency",
        "-s",
        str(BENCH / scenario.script),
        server.base,
        "--",
        *fixture.args(scenario.name),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=BENCH)
    raw = LOGS / f"wrk-{server.db}-{server.app}-{scenario.name}-{tag}.txt"
    raw.write_text(" ".join(command) + "\n\n" + done.stdout + done.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}); see {raw}")
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_JSON "):
            return dict(json.loads(line.removeprefix("BENCH_JSON ")))
    raise RuntimeError(f"wrk printed no BENCH_JSON line; see {raw}")


def checkpoint(fixture: Fixture, db: str) -> None:
    """Start every timed run from the same state: the WAL written back to the database."""
    if db == "sqlite":
        conn = sqlite3.connect(fixture.url.removeprefix("sqlite:///"), timeout=30)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    else:

        async def run() -> None:
            conn = await asyncpg.connect(fixture.url)
            await conn.execute("CHECKPOINT")
            await conn.close()

        asyncio.run(run())


def settle_outbox(fixture: Fixture, db: str) -> int:
    """Mark the outbox rows the floor wrote as handed over, once it has stopped.

    The floor writes anonbox's statements, the outbox rows (``events``) included, but has
    no relay to hand them to the channels. Left pending, they would be relayed by the next
    anonbox process during its timed run: anonbox would pay for the floor's posts and
    replies (seen: anonbox's reply at 0.94x and 0.89x the floor when it ran first in a
    phase, 0.70-0.79x when it ran after the floor). How many rows it marked.
    """
    sql = "UPDATE events SET handed_at = $1 WHERE handed_at IS NULL"
    now = time.time_ns() // 1000
    if db == "sqlite":
        conn = sqlite3.connect(fixture.url.removeprefix("sqlite:///"), timeout=30)
        with conn:
            marked = conn.execute(sql.replace("$1", "?"), (now,)).rowcount
        conn.close()
        return int(marked)

    async def run() -> int:
        conn = await asyncpg.connect(fixture.url)
        status = await conn.execute(sql, now)
        await conn.close()
        return int(status.split()[-1])

    return asyncio.run(run())


def measure(
    server: Server,
    scenario: Scenario,
    fixture: Fixture,
    config: Config,
    round_: int,
    started: Callable[[], None] | None = None,
) -> Result:
    """``started`` is called once the database is checkpointed, as the warm-up begins (the
    flood's timed posts: a checkpoint waits for writers, and would wait for them)."""
    checkpoint(fixture, server.db)
    if started is not None:
        started()
    wrk(server, scenario, fixture, config.warmup_s, f"r{round_}-warmup")
    root = psutil.Process(server.pid)
    with Sampler(server.pid) as rss:
        pg_before = cpu_seconds(postgres_processes()) if server.db == "postgresql" else {}
        tree = process_tree(root)
        before, t0 = cpu_seconds(tree), time.monotonic()
        report = wrk(server, scenario, fixture, config.duration_s, f"r{round_}-run")
        after, t1 = cpu_seconds(process_tree(root)), time.monotonic()
        db_cpu = None
        if server.db == "postgresql":
            ours = bench_backends()
            pg_after = {p: s for p, s in cpu_seconds(postgres_processes()).items() if p in ours}
            db_cpu = 100 * cpu_used(pg_before, pg_after) / (t1 - t0)
    return Result(
        scenario=scenario.name,
        db=server.db,
        app=server.app,
        round=round_,
        requests=int(report["requests"]),
        duration_s=report["duration_us"] / 1e6,
        errors={k: int(v) for k, v in report["errors"].items()},
        latency_us=report["latency_us"],
        rss_max_mib=rss.max_rss / MIB,
        cpu_percent=100 * cpu_used(before, after) / (t1 - t0),
        db_cpu_percent=db_cpu,
        processes=len(after),
    )
