"""What the numbers were measured on: the database settings as each app's connections see
them, and the machine, its software and its load."""

# ruff: noqa: S607

from __future__ import annotations

import asyncio
import os
import platform
import sqlite3
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil
from floor_db import open_database  # the floor's own connections
from layout import DATA, ROOT
from load import CONNECTIONS, WRK_THREADS

from anonbox.core.database import connect

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
        floor_db = await open_database(url)
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
