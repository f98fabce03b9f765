"""How long ``anonbox move`` takes to copy a million messages from SQLite to PostgreSQL,
and ``anonbox backup`` to back up either database then.

    PYTHONPATH=src .venv/bin/python bench/move.py [--messages N] [--to postgresql://…]

Makes an SQLite database the way a self-hoster's grows (``anonbox migrate`` and
``anonbox creator create``, then messages, replies and likes inserted straight, in one
transaction: the service's own path would take hours for a million), then times
``anonbox move`` into a new PostgreSQL database on the tests' server
(ANONBOX_TEST_POSTGRES_URL) unless ``--to`` names one, and checks the counts there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg

from anonbox.core.ids import new_ulid

ADMIN = os.environ.get("ANONBOX_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
WORDS = ["thanks", "for", "the", "answer", "yesterday", "what", "is", "your", "favourite"]
WORDS += ["song", "ありがとう", "안녕하세요", "terima", "kasih"]


def anonbox(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANONBOX_DATABASE_URL": url}
    return subprocess.run(  # noqa: S603 - this interpreter, our arguments
        [sys.executable, "-m", "anonbox", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )


def grow(path: Path, messages: int) -> dict[str, int]:
    url = f"sqlite:///{path}"
    anonbox(url, "migrate")
    made = json.loads(
        anonbox(url, "creator", "create", "--email", "bench@example.com", "--json").stdout
    )
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    links = [made["link_id"]] + [f"bench{n:06d}" for n in range(1, 100)]
    now = time.time_ns() // 1000
    conn.executemany(
        "INSERT INTO links (id, user_id, prompt, created_at) VALUES (?, ?, 'Ask me', ?)",
        [(link, made["user_id"], now) for link in links[1:]],
    )
    rng = random.Random(34)
    replies = 0
    batch: list[tuple[object, ...]] = []
    answers: list[tuple[object, ...]] = []
    for n in range(messages):
        at = now - (messages - n) * 1000
        message_id = new_ulid(at)
        answered = n % 10 == 0
        text = " ".join(rng.choices(WORDS, k=rng.randint(3, 30)))
        batch.append((message_id, links[n % len(links)], text, n % 7 == 0, int(answered), at))
        if answered:
            answers.append((new_ulid(at + 1), message_id, "thank you!", at + 1))
        if len(batch) == 10_000:
            conn.executemany(
                "INSERT INTO messages (id, link_id, content, like_by_creator, reply_count,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                batch,
            )
            conn.executemany(
                "INSERT INTO replies (id, message_id, content, created_at) VALUES (?, ?, ?, ?)",
                answers,
            )
            replies += len(answers)
            batch, answers = [], []
    if batch:
        conn.executemany(
            "INSERT INTO messages (id, link_id, content, like_by_creator, reply_count,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?)",
            batch,
        )
        conn.executemany(
            "INSERT INTO replies (id, message_id, content, created_at) VALUES (?, ?, ?, ?)",
            answers,
        )
        replies += len(answers)
    conn.execute("COMMIT")
    conn.close()
    return {"messages": messages, "replies": replies, "links": len(links)}


async def admin(sql: str) -> None:
    conn = await asyncpg.connect(ADMIN)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def count(url: str, table: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval(f"SELECT count(*) FROM {table}"))  # noqa: S608
    finally:
        await conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--to", default=None, help="an empty PostgreSQL database")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="anonbox-move-bench-") as directory:
        path = Path(directory) / "anonbox.db"
        started = time.monotonic()
        grown = grow(path, args.messages)
        made_in = time.monotonic() - started
        size = path.stat().st_size
        print(f"made {grown} in {made_in:.0f} s ({size / 1e6:.0f} MB)", flush=True)
        name = None
        to = args.to
        if to is None:
            name = f"anonbox_move_bench_{uuid.uuid4().hex[:8]}"
            asyncio.run(admin(f'CREATE DATABASE "{name}"'))
            to = f"{ADMIN.rsplit('/', 1)[0]}/{name}"
        try:
            started = time.monotonic()
            moved = subprocess.run(  # noqa: S603 - this interpreter, our arguments
                [sys.executable, "-m", "anonbox", "move", "--to", to],
                env={**os.environ, "ANONBOX_DATABASE_URL": f"sqlite:///{path}"},
                check=False,
            )
            took = time.monotonic() - started
            if moved.returncode != 0:
                sys.exit(f"move failed ({moved.returncode})")
            there = asyncio.run(count(to, "messages"))
            assert there == args.messages, there
            print(
                f"moved {args.messages:,} messages ({grown['replies']:,} replies) in {took:.0f} s"
                f" ({args.messages / took:,.0f} messages a second); {there:,} counted there"
            )
            for source, what in ((f"sqlite:///{path}", "SQLite"), (to, "PostgreSQL")):
                out = Path(directory) / f"{what}.anonbox"
                started = time.monotonic()
                anonbox(source, "backup", "--out", str(out))
                print(f"backed up {what} in {time.monotonic() - started:.0f} s", flush=True)
                out.unlink()
        finally:
            if name is not None:
                asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
