"""The floor's two databases, with anonbox's durability (``bench/floor.py`` says which):
one aiosqlite connection in autocommit, or an asyncpg pool; one statement is one driver
call, and a transaction holds its connection."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite
import asyncpg

_PLACEHOLDER = re.compile(r"\$(\d+)")


class SQLite:
    """One connection; a lock keeps one task's transaction from taking in another task's
    statements (aiosqlite runs them in order on one thread anyway)."""

    dialect = "sqlite"

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn
        self.lock = asyncio.Lock()
        self._sql: dict[str, str] = {}

    @classmethod
    async def open(cls, path: str) -> SQLite:
        conn = await aiosqlite.connect(path, isolation_level=None)
        # Rows read by position (floor.py) or by name (anonbox's repositories, which
        # floor_pages.py calls), as anonbox's own connections give them.
        conn.row_factory = sqlite3.Row
        for pragma in (
            "PRAGMA journal_mode=WAL",
            "PRAGMA synchronous=FULL",
            "PRAGMA foreign_keys=ON",
            "PRAGMA busy_timeout=5000",
        ):
            await conn.execute(pragma)
        return cls(conn)

    def _q(self, sql: str) -> str:
        q = self._sql.get(sql)
        if q is None:
            q = self._sql[sql] = _PLACEHOLDER.sub(r"?\1", sql)
        return q

    async def _fetch(self, sql: str, args: Sequence[Any]) -> list[Any]:
        return list(await self.conn.execute_fetchall(self._q(sql), args))

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        async with self.lock:
            return await self._fetch(sql, args)

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        rows = await self.fetch(sql, *args)
        return rows[0] if rows else None

    async def execute(self, sql: str, *args: Any) -> int:
        async with self.lock:
            cursor = await self.conn.execute(self._q(sql), args)
            count = cursor.rowcount
            await cursor.close()
            return int(count)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[SQLiteTx]:
        async with self.lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield SQLiteTx(self)
            except BaseException:
                await self.conn.execute("ROLLBACK")
                raise
            await self.conn.execute("COMMIT")

    async def close(self) -> None:
        await self.conn.close()


class SQLiteTx:
    """Statements inside a transaction, whose lock the transaction already holds."""

    def __init__(self, db: SQLite) -> None:
        self.db = db

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return await self.db._fetch(sql, args)

    async def execute(self, sql: str, *args: Any) -> int:
        cursor = await self.db.conn.execute(self.db._q(sql), args)
        count = cursor.rowcount
        await cursor.close()
        return int(count)


class Rollback(Exception):
    """Leave a transaction without committing (the answer is already decided)."""


async def _keep_session(conn: asyncpg.Connection) -> None:
    """No reset query on release (asyncpg still rolls back an open transaction)."""


def _pg_count(status: str) -> int:
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


class Postgres:
    dialect = "postgresql"

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @classmethod
    async def open(cls, dsn: str) -> Postgres:
        pool = await asyncpg.create_pool(
            dsn,
            min_size=0,
            max_size=20,
            timeout=5,
            command_timeout=30,
            max_inactive_connection_lifetime=10,
            reset=_keep_session,  # as anonbox: no reset query on every release
        )
        return cls(pool)

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return list(await self.pool.fetch(sql, *args))

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return await self.pool.fetchrow(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        return _pg_count(await self.pool.execute(sql, *args))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[PostgresTx]:
        async with self.pool.acquire() as conn, conn.transaction():
            yield PostgresTx(conn)

    async def close(self) -> None:
        await self.pool.close()


class PostgresTx:
    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return list(await self.conn.fetch(sql, *args))

    async def execute(self, sql: str, *args: Any) -> int:
        return _pg_count(await self.conn.execute(sql, *args))


async def open_database(database_url: str) -> SQLite | Postgres:
    if database_url.startswith("sqlite:///"):
        return await SQLite.open(database_url.removeprefix("sqlite:///"))
    return await Postgres.open(database_url)
