"""Benchmark anonbox against its floor, on SQLite and on PostgreSQL.

    python bench/run.py [--quick] [--db sqlite|postgresql|both]      (or: make bench)

For each database: a fresh database, migrated by ``anonbox migrate``; two creators made by
``anonbox creator create --json`` (one whose link receives the anonymous writes, one whose
link holds the seeded inbox); 1,000,000 messages seeded into the inbox link by direct
inserts in big batches (same schema, ULIDs from ``anonbox.core.ids.new_ulid``, created_at
in microseconds). Then anonbox (``python -m anonbox serve``, rate limits set out of reach)
and the floor (``bench/floor.py``: Starlette, the same SQL through the same raw driver with
the same durability, the same uvicorn settings) are started one at a time on the same
database: both run the read scenarios on the seeded rows, then both run the scenarios that
write. Each scenario is wrk with 64 connections, a warm-up, then a timed run. The anonbox
worker's RSS is sampled throughout. ``--recent-elsewhere N`` adds N messages to another
link, newer than the whole inbox (see --help).

Prints a table and writes ``bench/results/latest.md`` (table, targets, machine) and
``bench/results/latency.png`` (latency percentiles, anonbox against the floor).
Databases, server logs and wrk's raw output go to ``bench/.data/`` (not committed).
"""

from __future__ import annotations

import argparse
import asyncio
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
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
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
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"

# Re-run under the project's virtualenv when started with another interpreter.
if (
    VENV_PYTHON.exists()
    and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve()
    and not os.environ.get("BENCH_NO_REEXEC")
):
    os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), *sys.argv])

import asyncpg  # noqa: E402
import psutil  # noqa: E402
from floor import INBOX_AFTER, INBOX_FIRST  # noqa: E402

from anonbox.core.ids import new_ulid  # noqa: E402

PY = sys.executable
CONNECTIONS = 64
WRK_THREADS = 2
MIB = 1024 * 1024
RSS_TARGET_MIB = 150
POSTGRES_ADMIN_URL = os.environ.get(
    "BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
PG_DATABASE = "anonbox_bench"

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
    only: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    script: str
    expect: tuple[int, ...]  # statuses a single probe must get


SCENARIOS = [
    Scenario("like", "PUT …/like on one hot message (creator)", "like.lua", (200,)),
    Scenario("inbox_first", "GET inbox, first page (creator)", "inbox.lua", (200,)),
    Scenario("inbox_deep", "GET inbox, page 100,000 deep (creator)", "inbox.lua", (200,)),
    Scenario("search", "GET …/search, a word in most messages (creator)", "search.lua", (200,)),
    Scenario("search_rare", "GET …/search, a text in a few old messages", "search.lua", (200,)),
    Scenario("write", "POST /message/{link_id} (anonymous write)", "post.lua", (201,)),
    Scenario("mixed", "90% posts, 10% creator first-page reads", "mixed.lua", (201, 200)),
]


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
    seeded: int
    seed_seconds: float
    plans: dict[str, str] = field(default_factory=dict)

    def args(self, scenario: str) -> list[str]:
        return {
            "like": [self.inbox_link, self.hot_message, self.inbox_key],
            "inbox_first": [self.inbox_link, self.inbox_key],
            "inbox_deep": [self.inbox_link, self.inbox_key, self.deep_cursor],
            "search": [self.inbox_link, self.inbox_key, quote(SEARCH_COMMON)],
            "search_rare": [self.inbox_link, self.inbox_key, quote(SEARCH_RARE)],
            "write": [self.write_link],
            "mixed": [self.inbox_link, self.inbox_key],
        }[scenario]


@dataclass
class Result:
    scenario: str
    db: str
    app: str
    requests: int
    duration_s: float
    errors: dict[str, int]
    latency_us: dict[str, Any]
    rss_max_mib: float
    cpu_percent: float
    db_cpu_percent: float | None

    @property
    def rps(self) -> float:
        return self.requests / self.duration_s

    def pct_ms(self, q: str) -> float:
        return float(self.latency_us["percentiles"][q]) / 1000

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


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


class Server:
    def __init__(self, app: str, db: str, url: str) -> None:
        self.app, self.db, self.url = app, db, url
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = LOGS / f"{db}-{app}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        if self.app.startswith("anonbox"):
            workers = APPS[self.app].get("workers")
            extra = ["--workers", workers] if workers else []
            return [PY, "-m", "anonbox", "serve", "--port", str(self.port), *extra]
        return [PY, str(BENCH / "floor.py"), "--database-url", self.url, "--port", str(self.port)]

    def __enter__(self) -> Server:
        with self.log_path.open("ab") as out:
            self.process = subprocess.Popen(
                self.command(),
                env={**anonbox_env(self.url), **APPS[self.app].get("env", {})},
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
    calls: list[tuple[str, str, str | None, bytes | None, int]] = {
        "like": [("PUT", f"/message/{link}/{fixture.hot_message}/like", key, None, 200)],
        "inbox_first": [("GET", f"/message/{link}?limit=20", key, None, 200)],
        "inbox_deep": [
            ("GET", f"/message/{link}?limit=20&cursor={fixture.deep_cursor}", key, None, 200)
        ],
        "search": [("GET", f"/message/{link}/search?q={quote(SEARCH_COMMON)}", key, None, 200)],
        "search_rare": [("GET", f"/message/{link}/search?q={quote(SEARCH_RARE)}", key, None, 200)],
        "write": [("POST", f"/message/{fixture.write_link}", None, BODY, 201)],
        "mixed": [
            ("POST", f"/message/{link}", None, BODY, 201),
            ("GET", f"/message/{link}?limit=20", key, None, 200),
        ],
    }[scenario]
    last: dict[str, Any] = {}
    for method, path, credential, body, expected in calls:
        status, answer = request(method, base + path, key=credential, body=body)
        if status != expected:
            raise RuntimeError(f"{server.app} {method} {path}: {status} {answer!r:.300}")
        last = answer["data"]
    if scenario in {"inbox_first", "inbox_deep", "search"} and len(last["items"]) != 20:
        raise RuntimeError(f"{server.app} {scenario}: {len(last['items'])} items, not 20")
    if scenario == "search_rare" and not last["items"]:
        raise RuntimeError(f"{server.app} {scenario}: nothing found")
    return last


# --- sampling -----------------------------------------------------------------------------


class Sampler:
    """The server's RSS every 0.2 s while a load runs, and CPU over the timed part."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.max_rss = self.process.memory_info().rss
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                rss = self.process.memory_info().rss
            except psutil.Error:
                return
            self.samples.append((time.time(), rss))
            self.max_rss = max(self.max_rss, rss)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def postgres_cpu_seconds() -> float:
    total = 0.0
    for proc in psutil.process_iter(["name"]):
        if proc.info["name"] and proc.info["name"].startswith("postgres"):
            try:
                total += cpu_seconds(proc)
            except psutil.Error:
                pass
    return total


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


def measure(
    server: Server, scenario: Scenario, fixture: Fixture, config: Config, rss: Sampler
) -> Result:
    checkpoint(fixture, server.db)
    wrk(server, scenario, fixture, config.warmup_s, "warmup")
    proc = rss.process
    cpu0, pg0, t0 = cpu_seconds(proc), postgres_cpu_seconds(), time.monotonic()
    report = wrk(server, scenario, fixture, config.duration_s, "run")
    cpu1, pg1, t1 = cpu_seconds(proc), postgres_cpu_seconds(), time.monotonic()
    wall = t1 - t0
    return Result(
        scenario=scenario.name,
        db=server.db,
        app=server.app,
        requests=int(report["requests"]),
        duration_s=report["duration_us"] / 1e6,
        errors={k: int(v) for k, v in report["errors"].items()},
        latency_us=report["latency_us"],
        rss_max_mib=rss.max_rss / MIB,
        cpu_percent=100 * (cpu1 - cpu0) / wall,
        db_cpu_percent=100 * (pg1 - pg0) / wall if server.db == "postgresql" else None,
    )


# --- databases and seeding ----------------------------------------------------------------


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


def fresh_database(db: str) -> str:
    if db == "sqlite":
        path = DATA / "bench.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return f"sqlite:///{path}"
    ensure_postgres()

    async def run() -> None:
        conn = await asyncpg.connect(POSTGRES_ADMIN_URL)
        try:
            await conn.execute(f"DROP DATABASE IF EXISTS {PG_DATABASE} WITH (FORCE)")
            await conn.execute(f"CREATE DATABASE {PG_DATABASE}")
        finally:
            await conn.close()

    asyncio.run(run())
    return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{PG_DATABASE}"


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


def seeded_rows(link_id: str, count: int, start: int, end: int) -> Iterator[list[tuple[Any, ...]]]:
    """``count`` messages evenly from ``start`` to ``end`` (µs), oldest first, in batches;
    ids ascending.

    Like real ones: a ULID from the creation time, a sender hash (one of 20,000 senders)
    under the day's key period, text of 30 to 120 characters.
    """
    rng = random.Random(5)
    senders = [secrets.token_hex(32) for _ in range(20_000)]
    words = "what are you reading these days anything you would recommend to me".split()
    step = (end - start) // count
    batch: list[tuple[Any, ...]] = []
    for i in range(count):
        created = start + i * step
        text = f"#{i} " + " ".join(rng.choices(words, k=rng.randint(5, 20)))
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
) -> tuple[str, str]:
    """Insert ``count`` messages into ``link_id`` over 30 days up to 10 minutes ago; return
    (newest id, the deep cursor). With ``elsewhere`` (another link, n), then n messages
    to that link in the 10 minutes after the inbox's newest: traffic the rest of the
    service received since.

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
    wanted = {count - 1, count - depth}
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
            rows = [r[:3] + (int(r[3]),) + r[4:] for r in batch]
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
    return kept[count - 1], kept[count - depth]


def query_plans(db: str, fixture: Fixture) -> dict[str, str]:
    """How each database runs the inbox query, first page and deep page, with what it cost."""
    # The statement anonbox and the floor both run (bench/floor.py), a page of 21.
    pages = {"first": (INBOX_FIRST, ()), "deep": (INBOX_AFTER, (fixture.deep_cursor,))}
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


def prepare(db: str, config: Config) -> Fixture:
    url = fresh_database(db)
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
    hot, cursor = seed(db, url, inbox["link_id"], config.messages, config.depth, elsewhere)
    seconds = time.monotonic() - started
    log(f"{db}: seeded in {seconds:.1f} s")
    fixture = Fixture(
        url=url,
        inbox_link=inbox["link_id"],
        inbox_key=inbox["api_key"],
        write_link=writer["link_id"],
        write_key=writer["api_key"],
        hot_message=hot,
        deep_cursor=cursor,
        seeded=config.messages,
        seed_seconds=seconds,
    )
    # For trying things by hand against the same data (bench/.data is not committed).
    saved = {k: v for k, v in vars(fixture).items() if k != "plans"}
    (DATA / f"fixture-{db}.json").write_text(json.dumps(saved, indent=2))
    fixture.plans = {f"after seeding: {k}": v for k, v in query_plans(db, fixture).items()}
    return fixture


# --- the run ------------------------------------------------------------------------------


# Reads first, by both apps, on exactly the seeded rows; then the scenarios that add rows.
# Otherwise the second app would read a table the first app's writes have changed (which
# link holds the newest rows decides how PostgreSQL runs the first page; see --help).
# The apps: anonbox as shipped; anonbox with commits that return before the disk has them
# (to show what durability costs once group commit shares the fsyncs); anonbox with two
# workers (read scaling, PostgreSQL only: SQLite has one writer); and the floor.
APPS: dict[str, dict[str, Any]] = {
    "anonbox": {},
    "anonbox-normal": {"env": {"ANONBOX_DURABLE_COMMITS": "false"}},
    "anonbox-2w": {"workers": "2"},
    # The writes' creator has SLOW_WEBHOOKS endpoints at a receiver that never answers.
    "anonbox-hooked": {"env": {"ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true"}},
    "floor": {},
}
SLOW_WEBHOOKS = 10


def _scenarios(*names: str) -> list[Scenario]:
    return [s for s in SCENARIOS if s.name in names]


PHASES: list[tuple[list[Scenario], tuple[str, ...]]] = [
    (_scenarios("like", "inbox_first", "inbox_deep"), ("anonbox", "floor")),
    # anonbox only: the floor has no search (its SQL would be anonbox's two steps again).
    (_scenarios("search", "search_rare"), ("anonbox",)),
    (_scenarios("write", "mixed"), ("anonbox", "floor")),
    (_scenarios("write"), ("anonbox-normal",)),
]
PHASES_POSTGRESQL = [(_scenarios("inbox_first"), ("anonbox-2w",))]
# Last: its endpoints stay, and every later write would carry deliveries.
PHASES_LAST = [(_scenarios("write"), ("anonbox-hooked",))]


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


def bench_database(db: str, config: Config) -> tuple[list[Result], dict[str, Any]]:
    fixture = prepare(db, config)
    results: list[Result] = []
    notes: dict[str, Any] = {"fixture": fixture}
    deep_first_ids: dict[str, str] = {}
    phases = PHASES + (PHASES_POSTGRESQL if db == "postgresql" else []) + PHASES_LAST
    for scenarios, apps in phases:
        phase = [s for s in scenarios if not config.only or s.name in config.only]
        for app in apps if phase else ():
            with Server(app, db, fixture.url) as server, BlackHole() as hole:
                if app == "anonbox-hooked":
                    add_slow_webhooks(server, fixture, hole.url)
                rss = Sampler(server.pid)
                notes.setdefault(f"{app}_rss_start_mib", rss.max_rss / MIB)
                log(
                    f"{db}: {app} up on {server.base} (pid {server.pid}),"
                    f" RSS {rss.max_rss / MIB:.0f} MiB"
                )
                with rss:
                    for scenario in phase:
                        answer = probe(server, fixture, scenario.name)
                        if scenario.name == "inbox_deep":
                            deep_first_ids[app] = answer["items"][0]["id"]
                        result = measure(server, scenario, fixture, config, rss)
                        results.append(result)
                        log(
                            f"{db}: {app:7} {scenario.name:11} {result.rps:8.0f} req/s"
                            f"  p50 {result.pct_ms('50'):7.2f} ms"
                            f"  p99 {result.pct_ms('99'):7.2f} ms"
                            f"  errors {result.error_count}  CPU {result.cpu_percent:.0f}%"
                            f"  RSS max {result.rss_max_mib:.0f} MiB"
                        )
                key = f"{app}_rss_max_mib"
                notes[key] = max(notes.get(key, 0.0), rss.max_rss / MIB)
    fixture.plans.update({f"after the runs: {k}": v for k, v in query_plans(db, fixture).items()})
    if len(set(deep_first_ids.values())) > 1:
        raise RuntimeError(f"the two apps disagree on the deep page: {deep_first_ids}")
    return results, notes


# --- reporting ----------------------------------------------------------------------------


def find(results: list[Result], scenario: str, db: str, app: str) -> Result | None:
    for r in results:
        if (r.scenario, r.db, r.app) == (scenario, db, app):
            return r
    return None


DB_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def table(results: list[Result]) -> list[str]:
    lines = [
        "| scenario | db | app | req/s | p50 ms | p99 ms | errors | server CPU | "
        "anonbox/floor req/s | anonbox/floor p99 |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        ratio = p99_ratio = ""
        if r.app == "anonbox":
            floor = find(results, r.scenario, r.db, "floor")
            if floor:
                ratio = f"**{r.rps / floor.rps:.2f}**"
                p99_ratio = f"{r.pct_ms('99') / floor.pct_ms('99'):.2f}"
        cpu = f"{r.cpu_percent:.0f}%"
        if r.db_cpu_percent is not None:
            cpu += f" (+pg {r.db_cpu_percent:.0f}%)"
        errors = str(r.error_count)
        if r.error_count:
            errors += " (" + ", ".join(f"{k} {v}" for k, v in r.errors.items() if v) + ")"
        lines.append(
            f"| {r.scenario} | {DB_NAMES[r.db]} | {r.app} | {r.rps:,.0f} | "
            f"{r.pct_ms('50'):.2f} | {r.pct_ms('99'):.2f} | {errors} | {cpu} | "
            f"{ratio} | {p99_ratio} |"
        )
    return lines


def targets(results: list[Result], notes: dict[str, dict[str, Any]]) -> list[str]:
    def verdict(ok: bool) -> str:
        return "met" if ok else "**missed**"

    lines = ["| target | db | measured | verdict |", "|---|---|--:|---|"]
    for db in notes:
        name = DB_NAMES[db]
        a, f = find(results, "write", db, "anonbox"), find(results, "write", db, "floor")
        if a and f:
            ratio = a.rps / f.rps
            lines.append(
                f"| anonymous write ≥ 0.8 × floor (req/s) | {name} | {ratio:.2f} × | "
                f"{verdict(ratio >= 0.8)} |"
            )
        normal = find(results, "write", db, "anonbox-normal")
        if a and normal:
            ratio = a.rps / normal.rps
            lines.append(
                f"| durable write ≥ 0.8 × the same with commits not on disk (req/s) | {name} | "
                f"{ratio:.2f} × ({a.rps:,.0f} / {normal.rps:,.0f}) | {verdict(ratio >= 0.8)} |"
            )
        hooked = find(results, "write", db, "anonbox-hooked")
        if a and hooked:
            ratio = hooked.rps / a.rps
            lines.append(
                f"| write with {SLOW_WEBHOOKS} webhooks that never answer ≥ 0.9 × write"
                f" (req/s) | {name} | {ratio:.2f} × ({hooked.rps:,.0f} / {a.rps:,.0f}) |"
                f" {verdict(ratio >= 0.9)} |"
            )
        first = find(results, "inbox_first", db, "anonbox")
        two = find(results, "inbox_first", db, "anonbox-2w")
        if first and two:
            lines.append(
                # Within a tenth of one worker is within this machine's run-to-run noise.
                f"| --workers 2 scales reads (≥ 1.1 × one worker) | {name} | "
                f"{two.rps / first.rps:.2f} × ({two.rps:,.0f} / {first.rps:,.0f} req/s) | "
                f"{verdict(two.rps >= 1.1 * first.rps)} |"
            )
        deep = find(results, "inbox_deep", db, "anonbox")
        if first and deep:
            ratio = deep.pct_ms("99") / first.pct_ms("99")
            lines.append(
                f"| deep inbox page p99 ≤ 1.5 × first page p99 | {name} | "
                f"{ratio:.2f} × ({deep.pct_ms('99'):.2f} / {first.pct_ms('99'):.2f} ms) | "
                f"{verdict(ratio <= 1.5)} |"
            )
        if "anonbox_rss_max_mib" not in notes[db]:
            continue
        rss = notes[db]["anonbox_rss_max_mib"]
        lines.append(
            f"| one worker's RSS < {RSS_TARGET_MIB} MiB through the runs | {name} | "
            f"{rss:.0f} MiB (at start {notes[db]['anonbox_rss_start_mib']:.0f}) | "
            f"{verdict(rss < RSS_TARGET_MIB)} |"
        )
    return lines


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


def machine(dbs: tuple[str, ...]) -> list[str]:
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
    try:
        commit = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = "?"
    lines = [
        f"- date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; anonbox at `{commit}`",
        f"- CPU: {cpu}, {os.cpu_count()} cores; RAM {ram:.1f} GiB; no swap"
        if psutil.swap_memory().total == 0
        else f"- CPU: {cpu}, {os.cpu_count()} cores; RAM {ram:.1f} GiB",
        f"- OS: {distro}, kernel {platform.release()}; {platform.python_implementation()} "
        f"{platform.python_version()}",
        f"- SQLite {sqlite3.sqlite_version} (file on {mount_of(DATA)})",
    ]
    if "postgresql" in dbs:

        async def pg() -> tuple[str, str]:
            conn = await asyncpg.connect(POSTGRES_ADMIN_URL)
            try:
                version = await conn.fetchval("SHOW server_version")
                settings = []
                for name in ("fsync", "synchronous_commit", "wal_sync_method", "shared_buffers"):
                    settings.append(f"{name}={await conn.fetchval(f'SHOW {name}')}")
                data_dir = await conn.fetchval("SHOW data_directory")
                settings.append(f"data on {mount_of(Path(data_dir))}")
                return version, ", ".join(settings)
            finally:
                await conn.close()

        version, settings = asyncio.run(pg())
        lines.append(f"- PostgreSQL {version} on the same machine ({settings})")
    lines += [
        f"- load: {wrk_version.split(' [')[0].strip() or 'wrk'}, {WRK_THREADS} threads, "
        f"{CONNECTIONS} connections, loopback, on the same 2 cores as the server and database",
        f"- {packages}",
    ]
    return lines


def write_report(
    results: list[Result], notes: dict[str, dict[str, Any]], config: Config, chart: str
) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "latest.md"
    md = [
        "# Benchmark results",
        "",
        f"Written by `python bench/run.py{' --quick' if config.duration_s < 10 else ''}"
        f" --db {'both' if len(config.dbs) == 2 else config.dbs[0]}"
        f"{f' --recent-elsewhere {config.recent_elsewhere}' if config.recent_elsewhere else ''}` "
        "(`make bench`).",
        "",
        "## Machine",
        "",
        *machine(config.dbs),
        "",
        "## Method",
        "",
        f"- Each scenario: wrk warm-up {config.warmup_s} s, then a timed run of "
        f"{config.duration_s} s, {CONNECTIONS} connections. One server at a time, "
        "one worker each (uvicorn, httptools, uvloop, no access log).",
        "- **floor** = bench/floor.py: Starlette running the same SQL statements as anonbox "
        "through the same driver with the same durability (SQLite WAL + synchronous=FULL on "
        "one aiosqlite connection; PostgreSQL asyncpg pool of 20, synchronous_commit=on).",
        f"- Inbox link seeded with {config.messages:,} messages; the deep page starts "
        f"{config.depth:,} messages down (cursor paging). The write scenario posts to another "
        "creator's link; like, inbox and mixed use the seeded link. Order per app: like, "
        "inbox_first, inbox_deep (anonbox, then the floor, on the seeded rows only); then "
        "write, mixed (anonbox, then the floor). Each app is a fresh process per phase."
        + (
            f" Also {config.recent_elsewhere:,} messages to a third link, newer than the "
            "whole inbox."
            if config.recent_elsewhere
            else ""
        ),
        "- Rate limits set out of reach (`ANONBOX_LIMIT_*=1000000000/1`).",
        "- server CPU: the server process's CPU time over the timed run / wall time (100% = "
        "one core); +pg: all PostgreSQL processes.",
        "",
        "## Results",
        "",
        *table(results),
        "",
        "## Targets",
        "",
        *targets(results, notes),
        "",
        "## Query plans: the inbox query, first and deep page",
        "",
    ]
    for db, note in notes.items():
        for name, plan in note["fixture"].plans.items():
            md.append(f"- {DB_NAMES[db]}, {name}: `{plan}`")
    md += [
        "",
        "## Latency distribution",
        "",
        f"![latency percentiles, anonbox against the floor]({chart})",
        "",
    ]
    out.write_text("\n".join(md))
    return out


def nines(q: float) -> float:
    return 1 / (1 - q / 100)


def chart(results: list[Result], dbs: tuple[str, ...]) -> Path:
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
            titles = []
            for app in ("anonbox", "floor"):
                r = find(results, scenario.name, db, app)
                if r is None:
                    continue
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
                    label=f"{app}: {r.rps:,.0f} req/s, p50 {r.pct_ms('50'):.1f} ms, "
                    f"p99 {r.pct_ms('99'):.1f} ms",
                    **style[app],
                )
                titles.append(r)
            ratio = ""
            if len(titles) == 2:
                ratio = f" — anonbox/floor {titles[0].rps / titles[1].rps:.2f}×"
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
            ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(
        f"Latency percentiles, {CONNECTIONS} connections\nanonbox (solid) against its floor "
        "(dashed)",
        fontsize=12,
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / len(rows) / 3.4))
    out = RESULTS / "latency.png"
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


# --- main ---------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs on a smaller inbox")
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
    args = parser.parse_args()
    config = Config(
        warmup_s=args.warmup or (1 if args.quick else 3),
        duration_s=args.duration or (3 if args.quick else 10),
        messages=args.messages or (100_000 if args.quick else 1_000_000),
        depth=args.depth or (10_000 if args.quick else 100_000),
        recent_elsewhere=args.recent_elsewhere,
        dbs=("sqlite", "postgresql") if args.db == "both" else (args.db,),
        only=frozenset(name for name in args.only.split(",") if name),
    )
    if config.depth >= config.messages:
        parser.error("--depth must be smaller than --messages")
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk (or make bench)", file=sys.stderr)
        return 2
    LOGS.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    notes: dict[str, dict[str, Any]] = {}
    for db in config.dbs:
        db_results, notes[db] = bench_database(db, config)
        results += db_results
    order = {s.name: i for i, s in enumerate(SCENARIOS)}
    results.sort(key=lambda r: (config.dbs.index(r.db), r.app != "anonbox", order[r.scenario]))
    png = chart(results, config.dbs)
    report = write_report(results, notes, config, png.name)
    print()
    print("\n".join(table(results)))
    print()
    print("\n".join(targets(results, notes)))
    print(f"\nwrote {report.relative_to(ROOT)} and {png.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
