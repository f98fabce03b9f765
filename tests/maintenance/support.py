"""What the backup and move tests share: the command, a poster, and a database's contents."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from anonbox.core.database import connect, insert_many
from anonbox.core.ids import new_ulid
from tests.support.db import query
from tests.support.http import loopback_client


def anonbox(
    *args: str, database_url: str, cwd: Path, timeout: float = 300, umask: int = -1
) -> subprocess.CompletedProcess[str]:
    """The command as a self-hoster runs it, in a process of its own (under ``umask``, when
    one is given)."""
    env = {**os.environ, "ANONBOX_DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "-m", "anonbox", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        umask=umask,
    )


def anonbox_started(
    *args: str, database_url: str, cwd: Path, umask: int = -1
) -> subprocess.Popen[str]:
    """The command started, not waited for."""
    env = {**os.environ, "ANONBOX_DATABASE_URL": database_url}
    return subprocess.Popen(
        [sys.executable, "-m", "anonbox", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        umask=umask,
    )


def assert_refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    """A non-zero exit with one clear line on stderr that says why."""
    assert done.returncode != 0, done.stdout
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0], lines[0]


class Posting(threading.Thread):
    """Posts to a link until told to stop; keeps, in order, what the server acknowledged."""

    def __init__(self, base_url: str, link_id: str) -> None:
        super().__init__(daemon=True)
        self.base_url = base_url
        self.link_id = link_id
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acknowledged: list[tuple[str, str]] = []  # (id, text), in the order answered
        self.failures: list[str] = []

    def run(self) -> None:
        with loopback_client(base_url=self.base_url, timeout=30) as client:
            n = 0
            while not self.stop.is_set():
                text = f"posted while backing up #{n}"
                sent = client.post(f"/message/{self.link_id}", json={"message_content": text})
                if sent.status_code != 201:
                    self.failures.append(f"{sent.status_code} {sent.text[:200]}")
                    return
                with self.lock:
                    self.acknowledged.append((sent.json()["data"]["id"], text))
                n += 1

    def so_far(self) -> list[tuple[str, str]]:
        with self.lock:
            return list(self.acknowledged)


def fill(url: str, link_id: str, messages: int) -> None:
    """``messages`` old messages on ``link_id``, inserted straight, in one transaction."""

    async def run() -> None:
        db = await connect(url)
        try:
            rows = [
                (new_ulid(1_700_000_000_000_000 + n * 1000), link_id, f"filler {n}", False, 0, n)
                for n in range(messages)
            ]
            columns = ("id", "link_id", "content", "like_by_creator", "reply_count", "created_at")
            async with db.transaction() as tx:
                await insert_many(tx, "messages", columns, rows)
        finally:
            await db.close()

    asyncio.run(run())


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def table_names(url: str) -> set[str]:
    """The tables of the database as its catalog lists them, but for SQLite's own and
    the full-text index's (a virtual table and the tables that hold it)."""
    if url.startswith("sqlite"):
        rows = query(url, "SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        virtual = [r["name"] for r in rows if r["sql"].upper().startswith("CREATE VIRTUAL")]
        return {
            r["name"]
            for r in rows
            if not r["name"].startswith("sqlite_")
            and not any(r["name"].startswith(v) for v in virtual)
        }
    rows = query(
        url,
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
    return {r["table_name"] for r in rows}


def contents(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in a stable order: what "changed nothing" compares."""
    found = {}
    for name in sorted(table_names(url)):
        rows = query(url, f'SELECT * FROM "{name}"')  # noqa: S608 - names from the catalog
        found[name] = sorted((tuple(map(repr, r.values())) for r in rows), key=str)
    return found


def counts(url: str) -> dict[str, int]:
    return {
        name: int(query(url, f'SELECT count(*) AS n FROM "{name}"')[0]["n"])  # noqa: S608
        for name in sorted(table_names(url) - {"alembic_version"})
    }
