"""Benchmark anonbox against its floor, on SQLite and on PostgreSQL.

    python bench/run.py [--quick] [--db sqlite|postgresql|both]      (or: make bench)
    python bench/run.py --readme      (README table and latest.md again, from latest.json)

For each database: a database migrated by ``anonbox migrate``; two creators made by
``anonbox creator create --json`` (one whose link receives the anonymous writes, one whose
link holds the seeded inbox); 1,000,000 messages seeded into the inbox link by direct
inserts in big batches (same schema, ULIDs from ``anonbox.core.ids.new_ulid``, created_at
in microseconds). The seeded database is kept in ``bench/.data/`` (SQLite: a file;
PostgreSQL: a template database) and copied for the next run, as long as the seed, the
migrations and the credential code are unchanged (``--fresh`` seeds again).

On PostgreSQL, anonbox also writes and replies through PgBouncer in transaction mode
(``anonbox-pooled``, ``bench/pooler.py``; ``--no-pooler`` skips it): what the pooler costs.

Then anonbox (``python -m anonbox serve``, rate limits set out of reach) and the floor
(``bench/floor.py``: Starlette, the same SQL through the same raw driver with the same
durability, the same uvicorn settings) are started one at a time on the same database.
Every scenario runs ``--rounds`` times (at least 2) per app, the apps taking turns (anonbox,
floor; then floor, anonbox; …), so that drift of a shared machine falls on both; the report shows
every run, and the verdicts use the median of the runs. Each run is wrk with 64
connections, a warm-up, then a timed run. The reads run first, on exactly the seeded
rows; then the scenarios that write. The outbox rows the floor writes are marked handed
over once it stops (it has no relay), so that anonbox's relay does not do the floor's
work in anonbox's next run.

First, ``--check-sql`` (on by default) starts both apps under ``bench/sqltrace.py`` and
compares the statements each sends for one request of each scenario.

Writes ``latest.md`` (tables, targets, settings, machine), ``latest.json`` (every run, the
source of the tables) and ``latency.png`` to ``bench/results/`` for a complete run (both
databases, the default sizes and durations), and updates the README's table from them;
any other run writes to ``bench/.data/results/``. Databases, server logs, SQL traces and
wrk's raw output go to ``bench/.data/`` (not committed).
"""

# ruff: noqa: S603, S607, S310, S608, RUF001

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import hashlib
import itertools
import json
import os
import platform
import random
import re
import secrets
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
DATA = BENCH / ".data"
LOGS = DATA / "logs"
RESULTS = BENCH / "results"
README = ROOT / "README.md"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"

# Re-run under the project's virtualenv when started with another interpreter.
if (
    VENV_PYTHON.exists()
    and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve()
    and not os.environ.get("BENCH_NO_REEXEC")
):
    os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), *sys.argv])  # noqa: S606

import asyncpg  # noqa: E402
import floor  # noqa: E402
import pooler  # noqa: E402  (bench/pooler.py, beside this script)
import psutil  # noqa: E402

from anonbox.core.database import connect  # noqa: E402
from anonbox.core.ids import new_ulid  # noqa: E402

PY = sys.executable
CONNECTIONS = 64
WRK_THREADS = 2
MIB = 1024 * 1024
RSS_TARGET_MIB = 150
# The targets of the issue for every scenario the floor also runs: anonbox's req/s at least
# this share of the floor's, and its p99 at most this multiple of the floor's.
RPS_RATIO_MIN = 0.8
P99_RATIO_MAX = 1.5
POSTGRES_ADMIN_URL = os.environ.get(
    "BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
# Named after this checkout: several checkouts on one machine (one PostgreSQL server) must
# not drop each other's database in the middle of a run.
_CHECKOUT = hashlib.sha256(str(ROOT).encode()).hexdigest()[:6]
PG_DATABASE = f"anonbox_bench_{_CHECKOUT}"
PG_SEED_PREFIX = f"anonbox_bench_{_CHECKOUT}_seed_"
# Bump when what seeding writes changes, so that no older cached database is reused.
SEED_FORMAT = 2
REPLY_TARGETS = 1_000  # the newest seeded messages, which the reply scenario answers

# Rate limits out of reach. The window is one second so the in-memory sliding-window log
# holds about one second of hits, as the real limits bound it (refused hits store nothing:
# at the defaults a log never holds more than its max_requests, 1,200 for a link). A
# 60-second window with a huge count would hold 60 s of every hit, which no real
# configuration does, and would show up as RSS that production never sees.
HUGE_LIMITS = {
    "ANONBOX_LIMIT_SENDER_LINK": "1000000000/1",
    "ANONBOX_LIMIT_SENDER": "1000000000/1",
    "ANONBOX_LIMIT_LINK": "1000000000/1",
    "ANONBOX_LIMIT_SERVICE": "1000000000/1",
}

BODY = b'{"message_content": "What are you reading these days? Anything you would recommend?"}'
REPLY_BODY = b'{"message_content": "Thanks for asking! Lately a lot of short stories."}'
# Search queries on the seeded inbox (seeded_rows): a word in about two messages of three,
# found among the newest; and the number of one message, old enough that only the index
# finds it (with --quick, #42424 alone; at 1,000,000 also #424240 to #424249).
SEARCH_COMMON = "recommend"
SEARCH_RARE = "#42424"


# --- configuration ------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    warmup_s: int
    duration_s: int
    messages: int
    depth: int
    recent_elsewhere: int
    dbs: tuple[str, ...]
    rounds: int
    out: Path
    complete: bool  # both databases, default sizes and durations: the committed results
    only: frozenset[str] = frozenset()
    fresh: bool = False
    check_sql: bool = True
    command: str = ""


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    script: str


# In the issue's order; the first six are also run by the floor.
SCENARIOS = [
    Scenario("write", "POST /message/{link_id} (anonymous write)", "post.lua"),
    Scenario("reply", "POST /message/{link_id}/{message_id} (the creator's reply)", "reply.lua"),
    Scenario("like", "PUT …/like on one hot message (creator)", "like.lua"),
    Scenario("inbox_first", "GET inbox, first page (creator)", "inbox.lua"),
    Scenario("inbox_deep", "GET inbox, a page deep in it (creator)", "inbox.lua"),
    Scenario("mixed", "90% posts, 10% creator first-page reads", "mixed.lua"),
    Scenario("search", "GET …/search, a word in most messages (creator)", "search.lua"),
    Scenario("search_rare", "GET …/search, a text in a few old messages", "search.lua"),
]
SCENARIO = {s.name: s for s in SCENARIOS}
FLOOR_SCENARIOS = ("write", "reply", "like", "inbox_first", "inbox_deep", "mixed")
# The requests whose SQL --check-sql compares (mixed is write and inbox_first together).
SQL_SCENARIOS = ("write", "reply", "like", "inbox_first", "inbox_deep")


@dataclass
class Fixture:
    """What the seeded database holds, for the scripts' arguments."""

    url: str
    inbox_link: str
    inbox_key: str
    write_link: str
    write_key: str
    hot_message: str
    deep_cursor: str
    reply_targets: list[str]
    seeded: int
    seed_seconds: float
    seeded_at: str
    cached: bool = False

    @property
    def targets_file(self) -> Path:
        return DATA / f"reply-targets-{'sqlite' if self.url.startswith('sqlite') else 'pg'}.txt"

    def args(self, scenario: str) -> list[str]:
        return {
            "write": [self.write_link],
            "reply": [self.inbox_link, self.inbox_key, str(self.targets_file)],
            "like": [self.inbox_link, self.hot_message, self.inbox_key],
            "inbox_first": [self.inbox_link, self.inbox_key],
            "inbox_deep": [self.inbox_link, self.inbox_key, self.deep_cursor],
            "mixed": [self.inbox_link, self.inbox_key],
            "search": [self.inbox_link, self.inbox_key, quote(SEARCH_COMMON)],
            "search_rare": [self.inbox_link, self.inbox_key, quote(SEARCH_RARE)],
        }[scenario]


@dataclass
class Result:
    scenario: str
    db: str
    app: str
    round: int
    requests: int
    duration_s: float
    errors: dict[str, int]
    latency_us: dict[str, Any]
    rss_max_mib: float
    cpu_percent: float
    db_cpu_percent: float | None
    processes: int = 1  # server processes whose CPU is counted (a supervisor and workers)

    @property
    def rps(self) -> float:
        return self.requests / self.duration_s

    def pct_ms(self, q: str) -> float:
        return float(self.latency_us["percentiles"][q]) / 1000

    @property
    def socket_errors(self) -> int:
        """wrk's connect, read, write and timeout errors."""
        return sum(v for k, v in self.errors.items() if k != "status")

    @property
    def http_errors(self) -> int:
        """Answers with a status of 400 or more (wrk's "Non-2xx or 3xx responses")."""
        return self.errors.get("status", 0)


# --- processes ----------------------------------------------------------------------------


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def anonbox_env(url: str) -> dict[str, str]:
    env = {**os.environ, **HUGE_LIMITS, "ANONBOX_DATABASE_URL": url}
    env.pop("ANONBOX_REDIS_URL", None)  # the in-process limiter, as a single instance runs
    return env


def run_cli(url: str, *args: str) -> str:
    done = subprocess.run(
        [PY, "-m", "anonbox", *args],
        env=anonbox_env(url),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"anonbox {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


# The apps: anonbox as shipped; anonbox with commits that return before the disk has them
# (to show what durability costs once group commit shares the fsyncs); anonbox with two
# workers (read scaling, PostgreSQL only: SQLite has one writer); anonbox whose writing
# creator has SLOW_WEBHOOKS endpoints at a receiver that never answers; anonbox through
# PgBouncer in transaction mode (PostgreSQL only: what the pooler costs); and the floor.
APPS: dict[str, dict[str, Any]] = {
    "anonbox": {},
    "anonbox-normal": {"env": {"ANONBOX_DURABLE_COMMITS": "false"}},
    "anonbox-2w": {"workers": "2"},
    "anonbox-hooked": {"env": {"ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true"}},
    "anonbox-muted": {},  # the same service, its writing creator muting MUTED_WORDS words
    "anonbox-pooled": {"env": {"ANONBOX_DATABASE_POOLER": "transaction"}, "pooled": True},
    "floor": {},
}
# The pooler anonbox-pooled goes through, while a PostgreSQL run lasts (bench_database).
POOLER: pooler.PgBouncer | None = None
SLOW_WEBHOOKS = 10
MUTED_WORDS = 1_000  # the most a creator may mute (safety.service.MAX_MUTED_WORDS)


class Server:
    def __init__(self, app: str, db: str, url: str, trace: Path | None = None) -> None:
        self.app, self.db, self.url, self.trace = app, db, url, trace
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = LOGS / f"{db}-{app}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        traced = [] if self.trace is None else [str(BENCH / "sqltrace.py"), str(self.trace)]
        if self.app.startswith("anonbox"):
            workers = APPS[self.app].get("workers")
            extra = ["--workers", workers] if workers else []
            serve = ["-m", "anonbox", "serve", "--port", str(self.port), *extra]
            return [PY, *traced, *serve]
        script = [str(BENCH / "floor.py"), "--database-url", self.url, "--port", str(self.port)]
        return [PY, *traced, *script]

    def __enter__(self) -> Server:
        with self.log_path.open("ab") as out:
            env = {**anonbox_env(self.url), **APPS[self.app].get("env", {})}
            if APPS[self.app].get("pooled"):
                assert POOLER is not None
                env["ANONBOX_DATABASE_URL"] = POOLER.url_for(self.url)
                env["ANONBOX_DATABASE_LISTEN_URL"] = self.url
            self.process = subprocess.Popen(
                self.command(),
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.app} exited early; see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=1) as answer:
                    if answer.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        raise RuntimeError(f"{self.app} did not start; see {self.log_path}")

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid


def request(
    method: str, url: str, *, key: str | None = None, body: bytes | None = None
) -> tuple[int, Any]:
    headers = {"X-API-Key": key} if key else {}
    if body is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


def probe(server: Server, fixture: Fixture, scenario: str) -> dict[str, Any]:
    """One request of the scenario by hand: it must succeed before wrk measures it."""
    base, link, key = server.base, fixture.inbox_link, fixture.inbox_key
    target = fixture.reply_targets[0]
    calls: list[tuple[str, str, str | None, bytes | None, int]] = {
        "write": [("POST", f"/message/{fixture.write_link}", None, BODY, 201)],
        "reply": [("POST", f"/message/{link}/{target}", key, REPLY_BODY, 201)],
        "like": [("PUT", f"/message/{link}/{fixture.hot_message}/like", key, None, 200)],
        "inbox_first": [("GET", f"/message/{link}?limit=20", key, None, 200)],
        "inbox_deep": [
            ("GET", f"/message/{link}?limit=20&cursor={fixture.deep_cursor}", key, None, 200)
        ],
        "mixed": [
            ("POST", f"/message/{link}", None, BODY, 201),
            ("GET", f"/message/{link}?limit=20", key, None, 200),
        ],
        "search": [("GET", f"/message/{link}/search?q={quote(SEARCH_COMMON)}", key, None, 200)],
        "search_rare": [("GET", f"/message/{link}/search?q={quote(SEARCH_RARE)}", key, None, 200)],
    }[scenario]
    last: dict[str, Any] = {}
    for method, path, credential, body, expected in calls:
        status, answer = request(method, base + path, key=credential, body=body)
        if status != expected:
            hint = " (a cached seed with stale credentials? try --fresh)" if status == 401 else ""
            raise RuntimeError(f"{server.app} {method} {path}: {status} {answer!r:.300}{hint}")
        last = answer["data"]
    if scenario in {"inbox_first", "inbox_deep", "search"} and len(last["items"]) != 20:
        raise RuntimeError(f"{server.app} {scenario}: {len(last['items'])} items, not 20")
    if scenario == "search_rare" and not last["items"]:
        raise RuntimeError(f"{server.app} {scenario}: nothing found")
    if scenario == "reply" and last["message_id"] != target:
        raise RuntimeError(f"{server.app} reply: {last!r}")
    return last


# --- sampling -----------------------------------------------------------------------------


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
    server: Server, scenario: Scenario, fixture: Fixture, config: Config, round_: int
) -> Result:
    checkpoint(fixture, server.db)
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


# --- databases, seeding and the seed cache ------------------------------------------------


def ensure_postgres() -> None:
    def ready() -> bool:
        return (
            subprocess.run(
                ["pg_isready", "-h", "127.0.0.1", "-p", "5432", "-q"], check=False
            ).returncode
            == 0
        )

    if ready():
        return
    versions = sorted(os.listdir("/etc/postgresql")) if os.path.isdir("/etc/postgresql") else []
    if not versions:
        raise RuntimeError("PostgreSQL does not answer on 127.0.0.1:5432 and is not installed")
    log(f"starting PostgreSQL {versions[-1]}")
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", "start"], check=False
    )
    for _ in range(60):
        if ready():
            return
        time.sleep(0.5)
    raise RuntimeError("PostgreSQL did not come up on 127.0.0.1:5432")


def pg_url(database: str) -> str:
    return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{database}"


async def pg_admin(*statements: str) -> list[Any]:
    conn = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        answers = []
        for sql in statements:
            answers.append(await conn.fetch(sql))
        return answers
    finally:
        await conn.close()


MESSAGE_COLUMNS = [
    "id",
    "link_id",
    "content",
    "like_by_creator",
    "reply_count",
    "created_at",
    "sender_epoch",
    "sender_hash",
]
_US_PER_DAY = 86_400_000_000
BATCH = 50_000
WORDS = "what are you reading these days anything you would recommend to me".split()  # noqa: SIM905


def seeded_rows(link_id: str, count: int, start: int, end: int) -> Iterator[list[tuple[Any, ...]]]:
    """``count`` messages evenly from ``start`` to ``end`` (µs), oldest first, in batches;
    ids ascending.

    Like real ones: a ULID from the creation time, a sender hash (one of 20,000 senders)
    under the day's key period, text of 30 to 120 characters.
    """
    rng = random.Random(5)
    senders = [secrets.token_hex(32) for _ in range(20_000)]
    step = (end - start) // count
    batch: list[tuple[Any, ...]] = []
    for i in range(count):
        created = start + i * step
        text = f"#{i} " + " ".join(rng.choices(WORDS, k=rng.randint(5, 20)))
        batch.append(
            (
                new_ulid(created),
                link_id,
                text,
                False,
                0,
                created,
                created // _US_PER_DAY,
                rng.choice(senders),
            )
        )
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def seed(
    db: str, url: str, link_id: str, count: int, depth: int, elsewhere: tuple[str, int] | None
) -> tuple[str, str, list[str]]:
    """Insert ``count`` messages into ``link_id`` over 30 days up to 10 minutes ago; return
    (newest id, the deep cursor, the newest REPLY_TARGETS ids). With ``elsewhere`` (another
    link, n), then n messages to that link in the 10 minutes after the inbox's newest:
    traffic the rest of the service received since.

    The deep cursor is the id of the ``depth``-th newest seeded message, so the page after
    it starts ``depth`` messages down.
    """
    now = time.time_ns() // 1000
    inbox_end = now - 10 * 60_000_000
    inbox_start = inbox_end - 30 * _US_PER_DAY
    batches: Iterator[list[tuple[Any, ...]]] = seeded_rows(link_id, count, inbox_start, inbox_end)
    if elsewhere is not None and elsewhere[1] > 0:
        # Only the inbox's rows are counted by remember(); these come after them.
        others = seeded_rows(elsewhere[0], elsewhere[1], inbox_end + 1, now - 60_000_000)
        batches = itertools.chain(batches, others)
    kept: dict[int, str] = {}
    targets = range(max(0, count - REPLY_TARGETS), count)
    wanted = {count - 1, count - depth, *targets}
    position = 0

    def remember(batch: list[tuple[Any, ...]]) -> None:
        nonlocal position
        for row in batch:
            if position in wanted:
                kept[position] = row[0]
            position += 1

    placeholders = ", ".join("?" for _ in MESSAGE_COLUMNS)
    if db == "sqlite":
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("PRAGMA synchronous=OFF")  # seeding only: the servers use FULL
        conn.execute("BEGIN")
        for batch in batches:
            rows = [(*r[:3], int(r[3]), *r[4:]) for r in batch]
            conn.executemany(
                f"INSERT INTO messages ({', '.join(MESSAGE_COLUMNS)}) VALUES ({placeholders})",
                rows,
            )
            remember(batch)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    else:

        async def run() -> None:
            conn = await asyncpg.connect(url)
            try:
                for batch in batches:
                    await conn.copy_records_to_table(
                        "messages", records=batch, columns=MESSAGE_COLUMNS
                    )
                    remember(batch)
                # What autovacuum would do soon after a bulk load; then a clean start.
                await conn.execute("VACUUM (ANALYZE) messages")
                await conn.execute("CHECKPOINT")
            finally:
                await conn.close()

        asyncio.run(run())
    newest_first = [kept[p] for p in reversed(targets)]
    return kept[count - 1], kept[count - depth], newest_first


def query_plans(db: str, fixture: Fixture) -> dict[str, str]:
    """How each database runs the inbox query, first page and deep page, with what it cost."""
    # The statement anonbox and the floor both run (bench/floor.py), a page of 21.
    pages = {"first": (floor.INBOX_FIRST, ()), "deep": (floor.INBOX_AFTER, (fixture.deep_cursor,))}
    plans: dict[str, str] = {}
    if db == "sqlite":
        conn = sqlite3.connect(fixture.url.removeprefix("sqlite:///"))
        for page, (sql, extra) in pages.items():
            sql = re.sub(r"\$(\d)", r"?\1", sql)
            args = (fixture.inbox_link, 21, *extra)
            plan = "; ".join(str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql, args))
            started = time.perf_counter()
            conn.execute(sql, args).fetchall()
            plans[page] = f"{plan} ({(time.perf_counter() - started) * 1000:.2f} ms)"
        conn.close()
        return plans

    async def run() -> None:
        conn = await asyncpg.connect(fixture.url)
        try:
            for page, (sql, extra) in pages.items():
                # asyncpg prepares statements, so a generic plan may be used after 5 runs.
                for mode in ("custom", "generic"):
                    await conn.execute(f"SET plan_cache_mode = force_{mode}_plan")
                    stmt = await conn.prepare("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql)
                    lines = [r[0].strip() for r in await stmt.fetch(fixture.inbox_link, 21, *extra)]
                    keep = [x for x in lines if not x.startswith(("Planning", "Limit"))]
                    plans[f"{page}, {mode} plan"] = " / ".join(keep)
        finally:
            await conn.close()

    asyncio.run(run())
    return plans


def seed_key(db: str, config: Config) -> str:
    """What a cached seeded database depends on: the seed, the schema, the credentials."""
    digest = hashlib.sha256(
        f"{SEED_FORMAT} {db} {config.messages} {config.depth} {config.recent_elsewhere}".encode()
    )
    sources = ROOT / "src" / "anonbox"
    for path in [
        *sorted((sources / "migrations" / "versions").glob("*.py")),
        sources / "auth" / "credentials.py",
    ]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def seed_database(db: str, url: str, config: Config) -> Fixture:
    """Migrate the empty database at ``url``, make the creators, seed the inbox."""
    log(f"{db}: migrating a fresh database")
    run_cli(url, "migrate")

    def creator(email: str) -> dict[str, str]:
        return dict(json.loads(run_cli(url, "creator", "create", "--email", email, "--json")))

    inbox = creator("inbox@bench.example")
    writer = creator("writes@bench.example")
    elsewhere = None
    if config.recent_elsewhere:
        elsewhere = (creator("elsewhere@bench.example")["link_id"], config.recent_elsewhere)
    log(
        f"{db}: seeding {config.messages:,} messages into link {inbox['link_id']}"
        + (f", then {config.recent_elsewhere:,} newer ones elsewhere" if elsewhere else "")
    )
    started = time.monotonic()
    hot, cursor, targets = seed(db, url, inbox["link_id"], config.messages, config.depth, elsewhere)
    seconds = time.monotonic() - started
    log(f"{db}: seeded in {seconds:.1f} s")
    return Fixture(
        url=url,
        inbox_link=inbox["link_id"],
        inbox_key=inbox["api_key"],
        write_link=writer["link_id"],
        write_key=writer["api_key"],
        hot_message=hot,
        deep_cursor=cursor,
        reply_targets=targets,
        seeded=config.messages,
        seed_seconds=seconds,
        seeded_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def prepare(db: str, config: Config) -> Fixture:
    """The database for this run: a copy of the cached seeded one when there is one (and
    not --fresh), else seeded now and cached."""
    # One cached database per size (the quick one and the full one), the latest key each.
    size = f"{config.messages}"
    key = f"{size}_{seed_key(db, config)}"
    saved = DATA / f"seed-{db}-{key}.json"
    if db == "sqlite":
        path = DATA / "bench.db"
        cache = DATA / f"seed-sqlite-{key}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        url = f"sqlite:///{path}"
        if not config.fresh and cache.exists() and saved.exists():
            log(f"{db}: copying the seeded database {cache.name}")
            shutil.copyfile(cache, path)
            fixture = Fixture(**{**json.loads(saved.read_text()), "url": url, "cached": True})
        else:
            for old in DATA.glob(f"seed-sqlite-{size}_*"):
                old.unlink()
            fixture = seed_database(db, url, config)
            shutil.copyfile(path, cache)  # seed() left no WAL behind (TRUNCATE checkpoint)
            saved.write_text(json.dumps({k: v for k, v in asdict(fixture).items() if k != "url"}))
    else:
        ensure_postgres()
        template = PG_SEED_PREFIX + key
        url = pg_url(PG_DATABASE)
        [found] = asyncio.run(
            pg_admin(
                f"SELECT datname FROM pg_database WHERE datname LIKE '{PG_SEED_PREFIX}{size}\\_%'"
            )
        )
        cached = {r["datname"] for r in found}
        reuse = not config.fresh and template in cached and saved.exists()
        if not reuse:
            asyncio.run(
                pg_admin(
                    *(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)" for name in sorted(cached)),
                    f"CREATE DATABASE {template}",
                )
            )
            for old in DATA.glob(f"seed-postgresql-{size}_*.json"):
                old.unlink()
            fixture = seed_database(db, pg_url(template), config)
            saved.write_text(json.dumps({k: v for k, v in asdict(fixture).items() if k != "url"}))
        else:
            log(f"{db}: copying the seeded database {template}")
        asyncio.run(
            pg_admin(
                f"DROP DATABASE IF EXISTS {PG_DATABASE} WITH (FORCE)",
                # FILE_COPY: a copy of the files, not a replay of every page through the WAL.
                f"CREATE DATABASE {PG_DATABASE} TEMPLATE {template} STRATEGY FILE_COPY",
            )
        )
        fixture = Fixture(**{**json.loads(saved.read_text()), "url": url, "cached": reuse})
    fixture.targets_file.write_text("\n".join(fixture.reply_targets) + "\n")
    # For trying things by hand against the same data (bench/.data is not committed).
    (DATA / f"fixture-{db}.json").write_text(json.dumps(asdict(fixture), indent=2))
    return fixture


# --- the run ------------------------------------------------------------------------------


# Reads first, by every app, on exactly the seeded rows; then the scenarios that add rows.
# Otherwise a later app would read a table an earlier app's writes have changed (which
# link holds the newest rows decides how PostgreSQL runs the first page; see --help).
# Within a phase the apps take turns, round after round.
Phase = list[tuple[str, tuple[str, ...]]]


def phases(db: str, pooled: bool = False) -> list[Phase]:
    reads: Phase = [
        ("anonbox", ("like", "inbox_first", "inbox_deep")),
        ("floor", ("like", "inbox_first", "inbox_deep")),
    ]
    if db == "postgresql":  # SQLite has one writer: a second worker scales nothing there
        reads.append(("anonbox-2w", ("inbox_first",)))
    return [
        reads,
        # anonbox only: the floor has no search (its SQL would be anonbox's two steps again).
        [("anonbox", ("search", "search_rare"))],
        [
            ("anonbox", ("write", "reply", "mixed")),
            ("floor", ("write", "reply", "mixed")),
            ("anonbox-normal", ("write",)),
            # Each post checked against a full list of muted words (none of them in it),
            # muted for its turn only: no other app's write carries them.
            ("anonbox-muted", ("write",)),
            *([("anonbox-pooled", ("write", "reply"))] if db == "postgresql" and pooled else []),
        ],
        # Last: its endpoints stay, and every later write would carry deliveries.
        [("anonbox-hooked", ("write",))],
    ]


class BlackHole:
    """A webhook receiver that accepts every connection and never answers."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
        self._listener.settimeout(0.2)
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._hold, daemon=True)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/hook"

    def _hold(self) -> None:
        while not self._stop.is_set():
            try:
                self._held.append(self._listener.accept()[0])
            except TimeoutError:
                continue

    def __enter__(self) -> BlackHole:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for conn in self._held:
            conn.close()
        self._listener.close()


def add_slow_webhooks(server: Server, fixture: Fixture, url: str) -> None:
    for n in range(SLOW_WEBHOOKS):
        # One webhook per URL per creator: each its own query string, the same receiver.
        status, answer = request(
            "POST",
            f"{server.base}/webhooks",
            key=fixture.write_key,
            body=json.dumps({"url": f"{url}?n={n}"}).encode(),
        )
        if status != 201:
            raise RuntimeError(f"adding a webhook failed: {status} {answer}")


def mute_words(server: Server, fixture: Fixture) -> list[str]:
    """Mute ``MUTED_WORDS`` words for the writing creator; their ids."""
    ids = []
    for n in range(MUTED_WORDS):
        status, answer = request(
            "POST",
            f"{server.base}/muted-words",
            key=fixture.write_key,
            body=json.dumps({"word": f"zqmuted{n}"}).encode(),
        )
        if status != 201:
            raise RuntimeError(f"muting a word failed: {status} {answer}")
        ids.append(answer["data"]["id"])
    return ids


def unmute_words(server: Server, fixture: Fixture, ids: list[str]) -> None:
    for word_id in ids:
        status, answer = request(
            "DELETE", f"{server.base}/muted-words/{word_id}", key=fixture.write_key
        )
        if status != 200:
            raise RuntimeError(f"unmuting a word failed: {status} {answer}")


def bench_database(db: str, config: Config) -> tuple[list[Result], dict[str, Any]]:
    started = time.monotonic()
    fixture = prepare(db, config)
    prepared = time.monotonic() - started
    results: list[Result] = []
    notes: dict[str, Any] = {
        "plans": {f"before the runs: {k}": v for k, v in query_plans(db, fixture).items()},
        "seed": {
            "messages": fixture.seeded,
            "seconds": round(fixture.seed_seconds, 1),
            "seeded_at": fixture.seeded_at,
            "cached": fixture.cached,
            "prepare_seconds": round(prepared, 1),
        },
        "rss_start_mib": {},
        "rss_max_mib": {},
        "floor_events_settled": 0,
    }
    if config.check_sql and (not config.only or config.only & set(SQL_SCENARIOS)):
        # First: a floor that fails a request fails here, not after minutes of runs; and
        # before anonbox-hooked gives the writing creator webhooks, whose deliveries
        # anonbox's relay would write beside the traced requests.
        notes["sql"] = check_sql(db, fixture, config)
        settle_outbox(fixture, db)  # the floor's traced requests
    deep_first_ids: dict[str, str] = {}
    with BlackHole() as hole:
        hooked = False
        for phase in phases(db, pooled=POOLER is not None):
            groups = [
                (app, [SCENARIO[s] for s in names if not config.only or s in config.only])
                for app, names in phase
            ]
            groups = [(app, scenarios) for app, scenarios in groups if scenarios]
            for round_ in range(1, config.rounds + 1):
                # ABBA: every other round the other app goes first, so neither always
                # meets a cold cache or the first minutes of a load on the machine.
                for app, scenarios in groups if round_ % 2 else groups[::-1]:
                    with Server(app, db, fixture.url) as server:
                        if app == "anonbox-hooked" and not hooked:
                            add_slow_webhooks(server, fixture, hole.url)
                            hooked = True
                        muted = mute_words(server, fixture) if app == "anonbox-muted" else []
                        start_rss = psutil.Process(server.pid).memory_info().rss / MIB
                        notes["rss_start_mib"].setdefault(app, start_rss)
                        log(
                            f"{db}: {app} up on {server.base} (pid {server.pid}),"
                            f" RSS {start_rss:.0f} MiB, round {round_}"
                        )
                        for scenario in scenarios:
                            answer = probe(server, fixture, scenario.name)
                            if scenario.name == "inbox_deep":
                                deep_first_ids[app] = answer["items"][0]["id"]
                            result = measure(server, scenario, fixture, config, round_)
                            results.append(result)
                            rss = notes["rss_max_mib"]
                            rss[app] = max(rss.get(app, 0.0), result.rss_max_mib)
                            log(
                                f"{db}: {app:14} {scenario.name:11} {result.rps:8.0f} req/s"
                                f"  p50 {result.pct_ms('50'):7.2f} ms"
                                f"  p99 {result.pct_ms('99'):7.2f} ms"
                                f"  errors {result.socket_errors}+{result.http_errors}"
                                f"  CPU {result.cpu_percent:.0f}%"
                                f"  RSS max {result.rss_max_mib:.0f} MiB"
                            )
                        unmute_words(server, fixture, muted)
                    if app == "floor":
                        settled = settle_outbox(fixture, db)
                        notes["floor_events_settled"] += settled
                        log(f"{db}: the floor's {settled:,} outbox rows marked handed over")
    notes["plans"].update({f"after the runs: {k}": v for k, v in query_plans(db, fixture).items()})
    if len(set(deep_first_ids.values())) > 1:
        raise RuntimeError(f"the apps disagree on the deep page: {deep_first_ids}")
    notes["seconds"] = round(time.monotonic() - started, 1)
    return results, notes


# --- the statements each app sends --------------------------------------------------------

_LITERAL = re.compile(r"'(?:[^']|'')*'")
_PARAM = re.compile(r"[$?]\d+")
_NUMBER = re.compile(r"\b\d+\b")


# What anonbox runs on its own timers, whatever the requests (on SQLite, the outbox tail
# that hands events to the channels and the live streams): not a request's SQL.
BACKGROUND = (
    "SELECT seq, link_id FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
    "SELECT id FROM sessions WHERE revoked_at >= ?",
)


def normalised(db: str, statements: list[str]) -> list[str]:
    """Statements with their values replaced by ``?``: SQLite's trace shows the values it
    bound. SQLite's own work inside a statement (its triggers' statements, which it shows as
    comments, FTS5's reads of its tables, and the statement shown again at each trigger it
    starts) is left out: it is the same for whoever sent the statement; so are the
    ``BACKGROUND`` statements."""
    out: list[str] = []
    for statement in statements:
        if db == "sqlite" and (statement.startswith(("--", "PRAGMA")) or "'main'." in statement):
            continue
        text = _NUMBER.sub("?", _PARAM.sub("?", _LITERAL.sub("?", statement))).rstrip("; ")
        if text in BACKGROUND:
            continue
        if db == "sqlite" and out and out[-1] == text:
            continue
        out.append(text)
    return out


def traced_statements(trace: Path, since: int, until: int) -> list[str]:
    lines = []
    with trace.open() as read:
        for line in read:
            stamp, _, statement = line.rstrip("\n").partition(" ")
            if since <= int(stamp) <= until:
                lines.append(statement)
    return lines


def check_sql(db: str, fixture: Fixture, config: Config) -> dict[str, dict[str, list[str]]]:
    """What each app sends to the database for one request of each scenario: the same
    request three times once warm, the sequence seen most often (anything running beside
    the request, like anonbox's outbox relay, could fall in the window once)."""
    names = [s for s in SQL_SCENARIOS if not config.only or s in config.only]
    found: dict[str, dict[str, list[str]]] = {name: {} for name in names}
    for app in ("anonbox", "floor"):
        trace = LOGS / f"sql-{db}-{app}.log"
        trace.unlink(missing_ok=True)
        with Server(app, db, fixture.url, trace=trace) as server:
            for name in names:
                for _ in range(2):  # caches warm, the key's last use recorded
                    probe(server, fixture, name)
                seen: Counter[tuple[str, ...]] = Counter()
                for _ in range(3):
                    time.sleep(0.2)
                    since = time.monotonic_ns()
                    probe(server, fixture, name)
                    until = time.monotonic_ns()
                    seen[tuple(normalised(db, traced_statements(trace, since, until)))] += 1
                found[name][app] = list(seen.most_common(1)[0][0])
    for name, apps in found.items():
        same = apps["anonbox"] == apps["floor"]
        log(
            f"{db}: SQL of {name}: anonbox {len(apps['anonbox'])} statements,"
            f" floor {len(apps['floor'])}: {'the same' if same else 'DIFFERENT'}"
        )
    return found


# --- settings -----------------------------------------------------------------------------

SQLITE_PRAGMAS = (
    "journal_mode",
    "synchronous",
    "page_size",
    "cache_size",
    "mmap_size",
    "wal_autocheckpoint",
    "busy_timeout",
    "foreign_keys",
    "temp_store",
    "journal_size_limit",
    "locking_mode",
)
SYNCHRONOUS = {"0": "OFF (0)", "1": "NORMAL (1)", "2": "FULL (2)", "3": "EXTRA (3)"}
PG_SETTINGS = (
    "server_version",
    "fsync",
    "synchronous_commit",
    "wal_sync_method",
    "full_page_writes",
    "wal_level",
    "wal_buffers",
    "wal_writer_delay",
    "commit_delay",
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "maintenance_work_mem",
    "max_connections",
    "checkpoint_timeout",
    "max_wal_size",
    "min_wal_size",
    "checkpoint_completion_target",
    "random_page_cost",
    "effective_io_concurrency",
    "jit",
    "autovacuum",
)


def database_settings(db: str, url: str) -> dict[str, Any]:
    """The settings as each app's own connections see them: anonbox's through its
    ``connect()`` (durable, and as ``anonbox-normal``), the floor's through its own."""

    async def read() -> dict[str, Any]:
        anonbox = await connect(url)
        normal = await connect(url, durable=False)
        floor_db = await floor.open_database(url)
        try:
            if db == "sqlite":
                rows = []
                for name in SQLITE_PRAGMAS:
                    values = []
                    for conn in (anonbox, normal, floor_db):
                        found = await conn.fetch(f"PRAGMA {name}")
                        value = str(found[0][0]) if found else ""
                        values.append(
                            SYNCHRONOUS.get(value, value) if name == "synchronous" else value
                        )
                    rows.append([name, *values])
                rows.append(["connections", "1 writer + 2 read-only", "same", "1"])
                return {"columns": ["PRAGMA", "anonbox", "anonbox-normal", "floor"], "rows": rows}
            server = []
            for name in PG_SETTINGS:
                row = await anonbox.fetchrow(f"SHOW {name}")
                server.append([name, str(row[0]) if row else ""])
            session = []
            for conn in (anonbox, normal, floor_db):
                row = await conn.fetchrow("SHOW synchronous_commit")
                session.append(str(row[0]) if row else "")
            data_dir = (await anonbox.fetchrow("SHOW data_directory") or ["?"])[0]
            server.append(["data directory's file system", mount_of(Path(str(data_dir)))])
            return {
                "columns": ["setting", "value"],
                "rows": server,
                "session": [
                    ["synchronous_commit in the app's sessions", *session],
                    ["pool size (max)", str(anonbox.stats()["connections_max"]), "same", "20"],
                ],
            }
        finally:
            for conn in (anonbox, normal, floor_db):
                await conn.close()

    return asyncio.run(read())


def mount_of(path: Path) -> str:
    best, kind = "", "?"
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                _, point, fstype, *_ = line.split()
                if str(path).startswith(point) and len(point) > len(best):
                    best, kind = point, fstype
    except OSError:
        pass
    return kind


def machine() -> list[str]:
    cpu = "?"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    ram = psutil.virtual_memory().total / 1024**3
    distro = "?"
    if os.path.exists("/etc/os-release"):
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                distro = line.split("=", 1)[1].strip('"')
    wrk_version = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout
    packages = ", ".join(
        f"{name} {metadata.version(name)}"
        for name in (
            "litestar",
            "msgspec",
            "uvicorn",
            "uvloop",
            "httptools",
            "aiosqlite",
            "asyncpg",
            "starlette",
        )
    )
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    ).stdout.strip()
    load = os.getloadavg()
    return [
        f"- date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; anonbox at `{commit or '?'}`",
        f"- CPU: {cpu}, {os.cpu_count()} cores; RAM {ram:.1f} GiB"
        + ("; no swap" if psutil.swap_memory().total == 0 else ""),
        f"- OS: {distro}, kernel {platform.release()}; {platform.python_implementation()} "
        f"{platform.python_version()}",
        f"- SQLite {sqlite3.sqlite_version} (file on {mount_of(DATA)}); PostgreSQL on the "
        "same machine (its settings below)",
        f"- load: {wrk_version.split(' [')[0].strip() or 'wrk'}, {WRK_THREADS} threads, "
        f"{CONNECTIONS} connections, loopback, on the same cores as the server and database",
        f"- load average at the end: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} (1, 5, 15 min)",
        f"- {packages}",
    ]


# --- reporting ----------------------------------------------------------------------------

DB_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def runs(results: list[Result], scenario: str, db: str, app: str) -> list[Result]:
    return sorted(
        (r for r in results if (r.scenario, r.db, r.app) == (scenario, db, app)),
        key=lambda r: r.round,
    )


def median(values: list[float]) -> float:
    return float(statistics.median(values))


@dataclass(frozen=True)
class Summary:
    """Several runs of one scenario by one app: the median is what verdicts use."""

    runs: list[Result]

    @property
    def rps(self) -> float:
        return median([r.rps for r in self.runs])

    def pct_ms(self, q: str) -> float:
        return median([r.pct_ms(q) for r in self.runs])

    @property
    def errors(self) -> int:
        return sum(r.socket_errors + r.http_errors for r in self.runs)


def summary(results: list[Result], scenario: str, db: str, app: str) -> Summary | None:
    found = runs(results, scenario, db, app)
    return Summary(found) if found else None


def each(values: list[float], spec: str) -> str:
    return " / ".join(format(v, spec) for v in values)


@dataclass(frozen=True)
class Against:
    """anonbox against the floor on one scenario: ratios of the medians, and per round."""

    anonbox: Summary
    floor: Summary

    @property
    def rps(self) -> float:
        return self.anonbox.rps / self.floor.rps

    @property
    def p99(self) -> float:
        return self.anonbox.pct_ms("99") / self.floor.pct_ms("99")

    def rounds(self) -> list[tuple[float, float]]:
        return [
            (a.rps / f.rps, a.pct_ms("99") / f.pct_ms("99"))
            for a, f in zip(self.anonbox.runs, self.floor.runs, strict=False)
        ]

    @property
    def met(self) -> bool:
        return (
            self.rps >= RPS_RATIO_MIN
            and self.p99 <= P99_RATIO_MAX
            and self.anonbox.errors == 0
            and self.floor.errors == 0
        )


def against(results: list[Result], scenario: str, db: str) -> Against | None:
    a, f = summary(results, scenario, db, "anonbox"), summary(results, scenario, db, "floor")
    return Against(a, f) if a and f else None


def table(results: list[Result], dbs: list[str]) -> list[str]:
    lines = [
        "| scenario | db | app | req/s, each run | p50 ms | p99 ms, each run | socket errors "
        "| HTTP ≥ 400 | server CPU | PostgreSQL CPU | req/s ÷ floor | p99 ÷ floor |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    apps = list(APPS)
    for db in dbs:
        for scenario in SCENARIOS:
            for app in sorted(apps, key=lambda a: (a != "anonbox", a != "floor", a)):
                found = runs(results, scenario.name, db, app)
                if not found:
                    continue
                s = Summary(found)
                ratio = p99_ratio = ""
                vs = against(results, scenario.name, db) if app == "anonbox" else None
                if vs:
                    ratio = f"**{vs.rps:.2f}**"
                    p99_ratio = f"**{vs.p99:.2f}**"
                cpu = f"{median([r.cpu_percent for r in found]):.0f}%"
                if max(r.processes for r in found) > 1:
                    cpu += f" ({max(r.processes for r in found)} processes)"
                pg = [r.db_cpu_percent for r in found if r.db_cpu_percent is not None]
                lines.append(
                    f"| {scenario.name} | {DB_NAMES[db]} | {app} | "
                    f"{each([r.rps for r in found], ',.0f')} | {s.pct_ms('50'):.2f} | "
                    f"{each([r.pct_ms('99') for r in found], '.1f')} | "
                    f"{sum(r.socket_errors for r in found):,} | "
                    f"{sum(r.http_errors for r in found):,} | {cpu} | "
                    f"{f'{median(pg):.0f}%' if pg else ''} | {ratio} | {p99_ratio} |"
                )
    return lines


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def floor_targets(
    results: list[Result], dbs: list[str], sql: dict[str, dict[str, Any]]
) -> list[str]:
    lines = [
        f"| scenario | db | req/s ÷ floor (≥ {RPS_RATIO_MIN}) | p99 ÷ floor (≤ {P99_RATIO_MAX}) "
        "| errors, anonbox / floor | same SQL | verdict |",
        "|---|---|--:|--:|--:|---|---|",
    ]
    for db in dbs:
        for name in FLOOR_SCENARIOS:
            vs = against(results, name, db)
            if vs is None:
                continue
            rounds = vs.rounds()
            statements = sql.get(db, {}).get(name)
            if name == "mixed":
                same = "(write, inbox_first)"
            elif statements is None:
                same = "not checked"
            else:
                same = "yes" if statements["anonbox"] == statements["floor"] else "**no**"
            per_round_rps = each([r for r, _ in rounds], ".2f")
            per_round_p99 = each([p for _, p in rounds], ".2f")
            lines.append(
                f"| {name} | {DB_NAMES[db]} | **{vs.rps:.2f}** ({per_round_rps}) "
                f"| **{vs.p99:.2f}** ({per_round_p99}) "
                f"| {vs.anonbox.errors:,} / {vs.floor.errors:,} | {same} | {verdict(vs.met)} |"
            )
    return lines


def other_targets(results: list[Result], notes: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["| target | db | measured (medians) | verdict |", "|---|---|--:|---|"]
    for db, note in notes.items():
        name = DB_NAMES[db]
        write = summary(results, "write", db, "anonbox")
        normal = summary(results, "write", db, "anonbox-normal")
        if write and normal:
            ratio = write.rps / normal.rps
            lines.append(
                f"| durable write ≥ 0.8 × the same with commits not on disk (req/s) | {name} | "
                f"{ratio:.2f} × ({write.rps:,.0f} / {normal.rps:,.0f}) | {verdict(ratio >= 0.8)} |"
            )
        for scenario in ("write", "reply"):
            direct = summary(results, scenario, db, "anonbox")
            pooled = summary(results, scenario, db, "anonbox-pooled")
            if direct and pooled:
                lines.append(
                    f"| {scenario} through PgBouncer (transaction mode) ÷ straight to the"
                    f" database: req/s, and p99 | {name} | {pooled.rps / direct.rps:.2f} ×"
                    f" ({pooled.rps:,.0f} / {direct.rps:,.0f}); p99"
                    f" {pooled.pct_ms('99'):.2f} / {direct.pct_ms('99'):.2f} ms |"
                    " the pooler's cost (no target) |"
                )
        hooked = summary(results, "write", db, "anonbox-hooked")
        if write and hooked:
            ratio = hooked.rps / write.rps
            lines.append(
                f"| write with {SLOW_WEBHOOKS} webhooks that never answer ≥ 0.9 × write"
                f" (req/s) | {name} | {ratio:.2f} × ({hooked.rps:,.0f} / {write.rps:,.0f}) |"
                f" {verdict(ratio >= 0.9)} |"
            )
        muted = summary(results, "write", db, "anonbox-muted")
        if write and muted:
            ratio = muted.rps / write.rps
            lines.append(
                # The run-to-run noise of the write here is about a tenth (per-round figures).
                f"| write with {MUTED_WORDS:,} muted words ≥ 0.9 × write with none (req/s)"
                f" | {name} | {ratio:.2f} × ({muted.rps:,.0f} / {write.rps:,.0f}) |"
                f" {verdict(ratio >= 0.9)} |"
            )
        first = summary(results, "inbox_first", db, "anonbox")
        two = summary(results, "inbox_first", db, "anonbox-2w")
        if first and two:
            lines.append(
                # Within a tenth of one worker is within this machine's run-to-run noise.
                f"| --workers 2 scales reads (≥ 1.1 × one worker) | {name} | "
                f"{two.rps / first.rps:.2f} × ({two.rps:,.0f} / {first.rps:,.0f} req/s) | "
                f"{verdict(two.rps >= 1.1 * first.rps)} |"
            )
        deep = summary(results, "inbox_deep", db, "anonbox")
        if first and deep:
            ratio = deep.pct_ms("99") / first.pct_ms("99")
            lines.append(
                f"| deep inbox page p99 ≤ 1.5 × first page p99 | {name} | "
                f"{ratio:.2f} × ({deep.pct_ms('99'):.2f} / {first.pct_ms('99'):.2f} ms) | "
                f"{verdict(ratio <= 1.5)} |"
            )
        rss = note.get("rss_max_mib", {}).get("anonbox")
        if rss is not None:
            lines.append(
                f"| one worker's RSS < {RSS_TARGET_MIB} MiB through the runs | {name} | "
                f"{rss:.0f} MiB (at start {note['rss_start_mib']['anonbox']:.0f}) | "
                f"{verdict(rss < RSS_TARGET_MIB)} |"
            )
    return lines


def settings_section(settings: dict[str, dict[str, Any]]) -> list[str]:
    md: list[str] = []
    for db, found in settings.items():
        md += [f"{DB_NAMES[db]}, as each app's connections report them:", ""]
        columns = found["columns"]
        md += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        md += ["| " + " | ".join(row) + " |" for row in found["rows"]]
        if found.get("session"):
            md += ["", "| in the apps | anonbox | anonbox-normal | floor |", "|---|---|---|---|"]
            md += ["| " + " | ".join(row) + " |" for row in found["session"]]
        md.append("")
    return md


def sql_section(notes: dict[str, dict[str, Any]]) -> list[str]:
    md = [
        "| scenario | db | statements, anonbox | statements, floor | the same |",
        "|---|---|--:|--:|---|",
    ]
    details: list[str] = []
    for db, note in notes.items():
        for name, apps in note.get("sql", {}).items():
            a, f = apps["anonbox"], apps["floor"]
            md.append(
                f"| {name} | {DB_NAMES[db]} | {len(a)} | {len(f)} | "
                f"{'yes' if a == f else '**no**'} |"
            )
            if a != f:
                diff = difflib.unified_diff(a, f, "anonbox", "floor", lineterm="", n=1)
                details += [f"{DB_NAMES[db]}, {name}:", "", "```diff", *diff, "```", ""]
            elif name == "reply":  # one example in full, for the reader
                details += [
                    f"{DB_NAMES[db]}, {name} (both apps):",
                    "",
                    "```sql",
                    *a,
                    "```",
                    "",
                ]
    return [*md, "", *details]


def seed_line(db: str, note: dict[str, Any]) -> str:
    seed = note["seed"]
    when = (
        f"earlier ({seed['seeded_at']}; this run used a copy of the cached database)"
        if seed["cached"]
        else "for this run"
    )
    return (
        f"{DB_NAMES[db]}: {seed['messages']:,} messages seeded {when} in {seed['seconds']:.0f} s;"
        f" the database ready in {seed['prepare_seconds']:.0f} s, all of its runs"
        f" {note['seconds'] / 60:.1f} min"
    )


def render(payload: dict[str, Any], chart_name: str) -> str:
    results = [Result(**r) for r in payload["results"]]
    notes: dict[str, dict[str, Any]] = payload["notes"]
    config = payload["config"]
    dbs = list(notes)
    sql = {db: note.get("sql", {}) for db, note in notes.items()}
    seeds = "; ".join(seed_line(db, note) for db, note in notes.items())
    md = [
        "# Benchmark results",
        "",
        f"Written by `{payload['command']}` (`make bench`), in {payload['seconds'] / 60:.1f} min."
        + (
            " **Quick run: short runs on a small inbox, for checking the bench, not for "
            "its numbers.**"
            if payload["quick"]
            else ""
        ),
        "",
        "## Machine",
        "",
        *payload["machine"],
        "",
        "## Method",
        "",
        f"- Each scenario: wrk warm-up {config['warmup_s']} s, then a timed run of "
        f"{config['duration_s']} s, {CONNECTIONS} connections; **{config['rounds']} runs per "
        "scenario and app**, the apps taking turns (anonbox, floor; floor, anonbox; …), each "
        "turn a fresh server process. One server at a time, one worker (uvicorn, httptools, "
        "uvloop, no access log) unless the app says otherwise.",
        "- **Verdicts use the median of the runs** of each app (with two runs, their mean): "
        "req/s ÷ floor is the median req/s of anonbox over the floor's, p99 ÷ floor the same "
        "for p99. In brackets, the same ratio for each round (anonbox's run n against the "
        "floor's run n): a verdict whose rounds disagree is inside this machine's noise. A "
        "scenario with any error, in any run of either app, is missed.",
        "- **floor** = bench/floor.py: Starlette running the same SQL statements as anonbox "
        "through the same driver with the same durability; see Settings, and Statements per "
        "request for the check that the SQL is the same.",
        f"- Inbox link seeded with {config['messages']:,} messages; the deep page starts "
        f"{config['depth']:,} messages down (cursor paging). The write scenario posts to "
        "another creator's link; reply answers the 1,000 newest seeded messages in turn; "
        "like, inbox and mixed use the seeded link. Order: the SQL check; the reads (like, "
        "inbox_first, inbox_deep; anonbox, floor, and on PostgreSQL anonbox-2w) on exactly "
        "the seeded rows; search (anonbox only); then write, reply, mixed (anonbox, floor) "
        "and write (anonbox-normal, and anonbox-muted: the writing creator mutes 1,000 words "
        "before its turn and unmutes them after), and on PostgreSQL write and reply through "
        "PgBouncer in transaction mode (anonbox-pooled, default_pool_size 20); last write "
        "(anonbox-hooked). The outbox rows the floor "
        "writes are marked handed over when it stops (it has no relay), so anonbox's relay "
        "never does the floor's work."
        + (
            f" Also {config['recent_elsewhere']:,} messages to a third link, newer than the "
            "whole inbox."
            if config["recent_elsewhere"]
            else ""
        ),
        f"- {seeds}.",
        "- Rate limits set out of reach (`ANONBOX_LIMIT_*=1000000000/1`).",
        "- errors: wrk's socket errors (connect, read, write, timeout) and answers with a "
        "status ≥ 400 (wrk counts no others), summed over the runs.",
        "- server CPU: CPU time of the server's processes over the timed run / wall time "
        "(100% = one core), median of the runs; with `--workers` the supervisor, every "
        "worker and multiprocessing's resource tracker. PostgreSQL CPU: the backends "
        "connected to the bench database and the WAL writer, checkpointer and background "
        "writer (shared with any other database on the server).",
        "",
        "## Targets: anonbox against the floor",
        "",
        *floor_targets(results, dbs, sql),
        "",
        "## Other targets",
        "",
        *other_targets(results, notes),
        "",
        "## Results",
        "",
        *table(results, dbs),
        "",
        "## Settings",
        "",
        *settings_section(payload["settings"]),
        "## Statements per request",
        "",
        "Traced in the drivers (`bench/sqltrace.py`) for one request of each scenario, "
        "values replaced by `?`. The write differs from anonbox's only in that anonbox puts "
        "many concurrent posts in one such statement (group commit), the floor one.",
        "",
        *sql_section(notes),
        "## Query plans: the inbox query, first and deep page",
        "",
    ]
    for db, note in notes.items():
        for name, plan in note["plans"].items():
            md.append(f"- {DB_NAMES[db]}, {name}: `{plan}`")
    md += [
        "",
        "## Latency distribution",
        "",
        f"![latency percentiles, anonbox against the floor]({chart_name})",
        "",
    ]
    return "\n".join(md)


README_START = "<!-- bench-table:start (written by bench/run.py from bench/results/latest.json) -->"
README_END = "<!-- bench-table:end -->"


def readme_block(payload: dict[str, Any]) -> list[str]:
    """The README's table: each scenario's ratios to the floor, and the other targets."""
    results = [Result(**r) for r in payload["results"]]
    notes: dict[str, dict[str, Any]] = payload["notes"]
    dbs = [db for db in ("sqlite", "postgresql") if db in notes]
    date = payload["machine"][0].removeprefix("- date: ")
    head = " | ".join(f"{DB_NAMES[db]} req/s ÷ floor | {DB_NAMES[db]} p99 ÷ floor" for db in dbs)
    lines = [
        f"From [`bench/results/latest.md`](bench/results/latest.md) ({date}; "
        f"{payload['config']['rounds']} runs of {payload['config']['duration_s']} s per scenario "
        "and app, medians; target: req/s ≥ 0.8 × and p99 ≤ 1.5 × the floor's, no errors):",
        "",
        f"| scenario | {head} |",
        "|---|" + "--:|--:|" * len(dbs),
    ]
    for name in FLOOR_SCENARIOS:
        cells = []
        for db in dbs:
            vs = against(results, name, db)
            if vs is None:
                cells += ["", ""]
                continue
            errors = vs.anonbox.errors + vs.floor.errors
            rps_missed = vs.rps < RPS_RATIO_MIN or errors
            cells += [
                f"{vs.rps:.2f}"
                + (" **missed**" if rps_missed else "")
                + (f" ({errors:,} errors)" if errors else ""),
                f"{vs.p99:.2f}" + (" **missed**" if vs.p99 > P99_RATIO_MAX else ""),
            ]
        lines.append(f"| {SCENARIO[name].title} | " + " | ".join(cells) + " |")
    others = other_targets(results, notes)
    lines += ["", *others]
    return lines


def update_readme(payload: dict[str, Any]) -> None:
    text = README.read_text()
    if README_START not in text or README_END not in text:
        raise RuntimeError(f"README.md has no {README_START!r} … {README_END!r} block")
    before, rest = text.split(README_START, 1)
    _, after = rest.split(README_END, 1)
    block = "\n".join(readme_block(payload))
    README.write_text(f"{before}{README_START}\n{block}\n{README_END}{after}")


def nines(q: float) -> float:
    return 1 / (1 - q / 100)


def chart(results: list[Result], dbs: list[str], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    rows = [s for s in SCENARIOS if any(r.scenario == s.name for r in results)]
    fig, axes = plt.subplots(
        len(rows), len(dbs), figsize=(7.5 * len(dbs), 3.4 * len(rows)), squeeze=False
    )
    ticks = [0, 50, 90, 99, 99.9, 99.99]
    style = {
        "anonbox": {"color": "#1f5fbf", "lw": 2.2},
        "floor": {"color": "#d2691e", "lw": 1.8, "ls": "--"},
    }
    for i, scenario in enumerate(rows):
        for j, db in enumerate(dbs):
            ax = axes[i][j]
            for app in ("anonbox", "floor"):
                found = runs(results, scenario.name, db, app)
                for n, r in enumerate(found):
                    points = sorted(
                        (float(q), v / 1000)
                        for q, v in r.latency_us["percentiles"].items()
                        if float(q) < 100
                    )
                    ax.plot(
                        [nines(q) for q, _ in points],
                        [v for _, v in points],
                        marker="o",
                        ms=3,
                        alpha=1.0 if n == 0 else 0.45,
                        label=f"{app} run {r.round}: {r.rps:,.0f} req/s, "
                        f"p99 {r.pct_ms('99'):.1f} ms",
                        **style[app],
                    )
            vs = against(results, scenario.name, db)
            ratio = f" — anonbox/floor {vs.rps:.2f}×" if vs else ""
            ax.set_title(f"{DB_NAMES[db]}: {scenario.title}{ratio}", fontsize=10)
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(FixedLocator([nines(t) for t in ticks]))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(
                FuncFormatter(lambda x, _: f"p{100 - 100 / x:g}" if x > 1 else "p0")
            )
            ax.set_xlim(1, nines(99.99) * 1.2)
            ax.set_ylim(bottom=0)
            ax.set_ylabel("latency (ms)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(
        f"Latency percentiles, {CONNECTIONS} connections\nanonbox (solid) against its floor "
        "(dashed), every run",
        fontsize=12,
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / len(rows) / 3.4))
    path = out / "latency.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def write_outputs(payload: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    results = [Result(**r) for r in payload["results"]]
    png = chart(results, list(payload["notes"]), out)
    (out / "latest.json").write_text(json.dumps(payload, indent=1) + "\n")
    report = out / "latest.md"
    report.write_text(render(payload, png.name))
    return report


# --- main ---------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="short runs (1 s warm-up, 3 s) on a smaller inbox (100,000): every scenario, "
        "for checking the bench; results to bench/.data/results/",
    )
    parser.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--messages", type=int, help="messages in the inbox link")
    parser.add_argument("--depth", type=int, help="how deep the deep page starts")
    parser.add_argument(
        "--recent-elsewhere",
        type=int,
        default=0,
        metavar="N",
        help="also seed N messages to another link, newer than the whole inbox "
        "(traffic the rest of the service received since; default 0). With a link that "
        "holds most rows, PostgreSQL walks pk_messages backwards for the first page and "
        "skips those N rows",
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="S1,S2",
        help="run only these scenarios (" + ", ".join(s.name for s in SCENARIOS) + ")",
    )
    parser.add_argument("--warmup", type=int, help="seconds of warm-up per scenario")
    parser.add_argument("--duration", type=int, help="seconds of timed run per scenario")
    parser.add_argument(
        "--rounds", type=int, default=2, help="runs of every scenario per app (at least 2)"
    )
    parser.add_argument("--fresh", action="store_true", help="seed again, ignoring the cache")
    parser.add_argument(
        "--no-check-sql",
        action="store_true",
        help="skip comparing the statements anonbox and the floor send",
    )
    parser.add_argument(
        "--no-pooler",
        action="store_true",
        help="on PostgreSQL, skip anonbox-pooled (write and reply through PgBouncer in "
        "transaction mode, to show what the pooler costs)",
    )
    parser.add_argument("--out", type=Path, help="where to write the results")
    parser.add_argument(
        "--readme",
        action="store_true",
        help="run nothing: write latest.md, latency.png and the README's table again from "
        "bench/results/latest.json",
    )
    args = parser.parse_args()
    if args.readme:
        payload = json.loads((RESULTS / "latest.json").read_text())
        report = write_outputs(payload, RESULTS)
        update_readme(payload)
        print(f"wrote {report.relative_to(ROOT)} and the README's table")
        return 0
    only = frozenset(name for name in args.only.split(",") if name)
    if unknown := only - set(SCENARIO):
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    if args.rounds < 2:
        parser.error("--rounds must be at least 2: one run cannot show its own noise")
    complete = not (
        args.quick
        or args.db != "both"
        or only
        or args.messages
        or args.depth
        or args.warmup
        or args.duration
        or args.recent_elsewhere
    )
    config = Config(
        warmup_s=args.warmup or (1 if args.quick else 2),
        duration_s=args.duration or (3 if args.quick else 10),
        messages=args.messages or (100_000 if args.quick else 1_000_000),
        depth=args.depth or (10_000 if args.quick else 100_000),
        recent_elsewhere=args.recent_elsewhere,
        dbs=("sqlite", "postgresql") if args.db == "both" else (args.db,),
        rounds=args.rounds,
        out=args.out or (RESULTS if complete else DATA / "results"),
        complete=complete,
        only=only,
        fresh=args.fresh,
        check_sql=not args.no_check_sql,
        command="python bench/run.py " + " ".join(sys.argv[1:]),
    )
    if config.depth >= config.messages:
        parser.error("--depth must be smaller than --messages")
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk (or make bench)", file=sys.stderr)
        return 2
    LOGS.mkdir(parents=True, exist_ok=True)
    (DATA / ".gitignore").write_text("*\n")
    started = time.monotonic()
    results: list[Result] = []
    notes: dict[str, dict[str, Any]] = {}
    settings: dict[str, dict[str, Any]] = {}
    global POOLER  # one pooler for the PostgreSQL runs, set here only
    for db in config.dbs:
        if db == "postgresql" and not args.no_pooler:
            if not pooler.available():
                print("pgbouncer is not installed: apt-get install -y pgbouncer (or make bench)")
                return 2
            POOLER = pooler.PgBouncer(POSTGRES_ADMIN_URL).__enter__()
        try:
            db_results, notes[db] = bench_database(db, config)
        finally:
            if POOLER is not None:
                POOLER.__exit__()
                POOLER = None
        results += db_results
        settings[db] = database_settings(db, fixture_url(db))
    payload = {
        "command": config.command.strip(),
        "quick": args.quick,
        "config": {
            "warmup_s": config.warmup_s,
            "duration_s": config.duration_s,
            "messages": config.messages,
            "depth": config.depth,
            "recent_elsewhere": config.recent_elsewhere,
            "rounds": config.rounds,
            "only": sorted(config.only),
        },
        "machine": machine(),
        "settings": settings,
        "notes": notes,
        "results": [asdict(r) for r in results],
        "seconds": round(time.monotonic() - started, 1),
    }
    report = write_outputs(payload, config.out)
    dbs = list(config.dbs)
    print()
    print("\n".join(floor_targets(results, dbs, {db: n.get("sql", {}) for db, n in notes.items()})))
    print()
    print("\n".join(other_targets(results, notes)))
    print()
    print("\n".join(table(results, dbs)))
    print()
    print("\n".join(sql_section(notes)).split("\n\n")[0])
    # --out may name a directory outside the checkout: say where, without failing after the runs.
    where = report.parent
    if where.is_relative_to(ROOT):
        where = where.relative_to(ROOT)
    print(
        f"wrote {where}/latest.md, latest.json and latency.png in {payload['seconds'] / 60:.1f} min"
    )
    if config.complete:
        update_readme(payload)
        print("updated the README's table")
    return 0


def fixture_url(db: str) -> str:
    return f"sqlite:///{DATA / 'bench.db'}" if db == "sqlite" else pg_url(PG_DATABASE)


if __name__ == "__main__":
    sys.exit(main())
