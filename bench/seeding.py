"""The database a run measures: PostgreSQL started if it is down, a fresh database migrated
by ``anonbox migrate`` with its two creators, the inbox seeded by direct inserts in big
batches, and the seeded database cached in ``bench/.data/`` (SQLite: a file; PostgreSQL:
a template database) and copied for the next run while the seed, the migrations and the
credential code are unchanged. Also how each database plans the inbox query."""

# ruff: noqa: S603, S607, S608

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import random
import re
import secrets
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from floor_sql import INBOX_AFTER, INBOX_FIRST  # the inbox statements both apps run
from layout import DATA, ROOT
from scenarios import Config, Fixture
from servers import log, run_cli

from anonbox.core.ids import new_ulid

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
    # The statement anonbox and the floor both run (bench/floor_sql.py), a page of 21.
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


def seed_key(db: str, config: Config) -> str:
    """What a cached seeded database depends on: the seed, the schema, the credentials."""
    digest = hashlib.sha256(
        f"{SEED_FORMAT} {db} {config.messages} {config.depth} {config.recent_elsewhere}".encode()
    )
    sources = ROOT / "src" / "anonbox"
    for path in [
        *sorted((sources / "migrations" / "versions").glob("*.py")),
        sources / "identity" / "credentials.py",
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


def fixture_url(db: str) -> str:
    return f"sqlite:///{DATA / 'bench.db'}" if db == "sqlite" else pg_url(PG_DATABASE)
