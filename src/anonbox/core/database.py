"""One small async interface over two raw drivers: aiosqlite (embedded) and asyncpg.

Queries are written once, in SQL both databases accept, with ``$1``-style
placeholders (asyncpg's); for SQLite they become ``?1``, which binds the same way.
Driver failures that mean "the database is not there" become ``ServiceUnavailable``.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiosqlite
import asyncpg

from anonbox.core.errors import ServiceUnavailable
from anonbox.core.pooled import pooler_options

Row = Mapping[str, Any]
T = TypeVar("T")


class Connection(Protocol):
    """What a query module may do: run one statement and read what it returns.

    ``dialect`` ("sqlite" or "postgresql") is for repositories alone, which pick their
    statements by it; no service, router or page names it."""

    dialect: str

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]: ...

    async def fetchrow(self, sql: str, *args: Any) -> Row | None: ...

    async def execute(self, sql: str, *args: Any) -> int:
        """Run a statement; return the number of rows it changed."""
        ...


class Database(Connection, Protocol):
    def transaction(self) -> AbstractAsyncContextManager[Connection]:
        """Statements inside commit together when the block exits, or not at all."""
        ...

    async def ping(self) -> None: ...

    async def checkpoint(self) -> bool:
        """Leave nothing already deleted in the database's own log: SQLite copies its WAL
        into the file and truncates it (``secure_delete`` has zeroed what was deleted);
        PostgreSQL's WAL and dead tuples are its own (``docs/decisions.md``). Whether the
        log is empty now."""
        ...

    def stats(self) -> Mapping[str, int]:
        """Gauges for /metrics: connections open, in use and allowed, writes waiting."""
        ...

    def public_reads(self) -> Database:
        """Itself, or with replicas, its view for reads anyone may make (core.replicas)."""
        ...

    async def close(self) -> None: ...


def placeholders(first: int, count: int) -> str:
    """``$first, …`` for ``count`` parameters: a list in SQL both databases read the same."""
    return ", ".join(f"${index}" for index in range(first, first + count))


async def insert_many(
    conn: Connection,
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    chunk: int = 500,
) -> None:
    """Insert ``rows`` with a statement per ``chunk`` of them, not one per row: inside a
    transaction every statement holds SQLite's single writer a little longer."""
    width = len(columns)
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        values = ", ".join(f"({placeholders(1 + i * width, width)})" for i in range(len(part)))
        await conn.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES {values}",  # noqa: S608 - ours
            *(value for row in part for value in row),
        )


# The first key of ``one_at_a_time``'s advisory locks. PostgreSQL keeps locks taken with
# two int4 keys apart from those taken with one bigint (the relay's turn, the migrations'),
# so these cannot meet them whatever the hash of a name.
_ONE_AT_A_TIME_SPACE = 0x63617073  # "caps"


async def one_at_a_time(conn: Connection, key: str) -> None:
    """Let no other transaction that names ``key`` run, on any instance, until this one
    ends: for a rule that counts rows before it adds one (a per-account cap), which two
    parallel requests would otherwise both pass, each counting before the other's insert.

    PostgreSQL: an advisory lock, taken here and held to the transaction's end; the
    statements after it read what the last holder committed (READ COMMITTED reads afresh
    per statement). SQLite: nothing to take, as every transaction here starts with BEGIN
    IMMEDIATE and so is the only writer of the file, on every process, from its first read.
    Call it first in a transaction, on the transaction's connection: outside one it would
    hold nothing past its own statement."""
    if isinstance(conn, SQLiteDatabase | PostgresDatabase):
        raise TypeError("one_at_a_time holds a key for a transaction: call it inside one")
    if conn.dialect == "postgresql":
        await conn.execute(
            "SELECT pg_advisory_xact_lock($1::int4, hashtext($2))", _ONE_AT_A_TIME_SPACE, key
        )


def driver_url(url: str) -> tuple[str, str]:
    """Split a plain URL into (dialect, what the driver takes)."""
    if url.startswith("sqlite:///"):
        return "sqlite", url.removeprefix("sqlite:///")
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql", url
    if url.startswith(("postgresql+asyncpg://", "sqlite+aiosqlite:///")):
        scheme, rest = url.split("://", 1)
        return driver_url(scheme.split("+")[0] + "://" + rest)
    raise ValueError(f"unsupported database URL {url!r}: use sqlite:///path or postgresql://…")


async def connect(url: str, *, durable: bool = True, pooled: bool = False) -> Database:
    """Open the database; ``durable=False`` (measurement only) lets a commit return before
    it is on disk (SQLite ``synchronous=NORMAL``, PostgreSQL ``synchronous_commit=off``);
    ``pooled``: ``url`` is PgBouncer in transaction mode (``PostgresDatabase.open``)."""
    dialect, target = driver_url(url)
    if dialect == "sqlite":
        return await SQLiteDatabase.open(target, durable=durable)
    return await PostgresDatabase.open(target, durable=durable, pooled=pooled)


# --- SQLite -------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\$(\d+)")


@lru_cache(maxsize=512)
def _sqlite_sql(sql: str) -> str:
    return _PLACEHOLDER.sub(r"?\1", sql)


async def _sqlite_guard(call: Awaitable[T]) -> T:
    try:
        return await call
    except sqlite3.OperationalError as exc:
        # "database is locked" after busy_timeout, disk I/O errors, a vanished file.
        raise ServiceUnavailable("The database is busy or unavailable; try again shortly.") from exc


class _SQLiteConnection:
    dialect = "sqlite"

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]:
        rows = await _sqlite_guard(self._conn.execute_fetchall(_sqlite_sql(sql), args))
        return list(rows)  # type: ignore[arg-type]  # sqlite3.Row is a Mapping at run time

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        rows = await self.fetch(sql, *args)
        return rows[0] if rows else None

    async def execute(self, sql: str, *args: Any) -> int:
        cursor = await _sqlite_guard(self._conn.execute(_sqlite_sql(sql), args))
        count = cursor.rowcount
        await cursor.close()
        return count


# A read the loop's own connection has not finished within about this many SQLite VM
# steps is interrupted and run again on the reader thread, and so is that statement from
# then on. A lookup by key takes 10 to 20 steps; an inbox page of 21 takes 600 to 1,500,
# and counting 60,000 rows 190,000 (25 ms). Pages go to the thread: with 64 requests in
# flight, each turn of the loop ran 64 of them to the end, some 25-35 ms of CPU with no
# pause, and on a shared machine such a burst is where the scheduler cuts in: the inbox's
# p99 was 5-10 times the floor's (docs/decisions.md, "The SQLite inbox tail").
INLINE_READ_STEPS = 200
# SQLite calls the progress handler every this many steps, counted over all the runs of a
# cached statement, so the handler counts its own calls per read: the budget holds to
# within one interval, and a quick read is never cut short by its predecessors' steps.
_STEPS_PER_TICK = 50
# Statements that once ran past the budget go to the reader thread at once after that.
_LONG_STATEMENTS_KEPT = 512


class _InlineReader:
    """Plain SELECTs answered on the event loop's thread, within a budget.

    A lookup by key takes a few microseconds in SQLite, while handing it to a connection's
    thread and back costs two thread switches and a wake-up of the loop: several times the
    query itself, on every read. So reads run here first; one too long for the loop (past
    ``INLINE_READ_STEPS``), or that would wait for a lock (this connection has no busy
    timeout), runs again on the reader thread, which has the time and the busy timeout.
    """

    def __init__(self, conn: sqlite3.Connection, thread: _SQLiteConnection) -> None:
        conn.set_progress_handler(self._tick, _STEPS_PER_TICK)
        self._conn = conn
        self._thread = thread
        self._ticks = 0
        self._long: set[str] = set()  # statements that ran past the budget once

    def _tick(self) -> int:
        self._ticks += 1
        return int(self._ticks * _STEPS_PER_TICK > INLINE_READ_STEPS)  # non-zero: interrupt

    def _inline(self, sql: str, args: Sequence[Any]) -> list[Any]:
        self._ticks = 0  # the budget is per read; ticks left by the last one must not count
        return self._conn.execute(_sqlite_sql(sql), args).fetchall()

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]:
        if sql in self._long:
            return await self._thread.fetch(sql, *args)
        try:
            return self._inline(sql, args)
        except sqlite3.OperationalError:  # interrupted, locked or failing: the thread decides
            if self._ticks * _STEPS_PER_TICK > INLINE_READ_STEPS:  # it was the budget
                if len(self._long) >= _LONG_STATEMENTS_KEPT:
                    self._long.clear()
                self._long.add(sql)
            return await self._thread.fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        rows = await self.fetch(sql, *args)
        return rows[0] if rows else None

    async def ping(self) -> None:
        self._inline("SELECT 1", ())
        await self._thread.fetchrow("SELECT 1")

    def close(self) -> None:
        self._conn.close()


def _reads_only(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "SELECT"


class SQLiteDatabase:
    """Three connections to one file in WAL mode, shared by the process.

    The writer is used by one task at a time: SQLite has a single writer anyway, and the
    lock keeps one task's transaction from swallowing another task's statements. Plain
    SELECTs never queue behind a commit's fsync: they go to read-only connections beside
    it (WAL lets a reader see every committed transaction while the writer works), first
    the one on the loop's own thread and, when that is not quick, the reader thread.
    """

    dialect = "sqlite"

    def __init__(
        self, writer: aiosqlite.Connection, reader: aiosqlite.Connection, inline: sqlite3.Connection
    ) -> None:
        self._conn = _SQLiteConnection(writer)
        self._raw = writer
        self._raw_reader = reader
        self._reader = _InlineReader(inline, _SQLiteConnection(reader))
        self._lock = asyncio.Lock()
        self._queries = 0  # statements and transactions asked of it (metrics)

    @classmethod
    async def open(cls, path: str, *, durable: bool = True) -> SQLiteDatabase:
        if path == ":memory:":
            raise ValueError("an in-memory SQLite database cannot be shared; give a file path")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        writer = await _sqlite_connect(path, durable=durable)
        reader = await _sqlite_connect(path, durable=durable)
        await reader.execute("PRAGMA query_only=ON")
        inline = sqlite3.connect(path, isolation_level=None)  # this thread's, like the loop
        inline.row_factory = sqlite3.Row
        inline.execute("PRAGMA query_only=ON")
        inline.execute("PRAGMA busy_timeout=0")  # a lock is waited for on the reader thread
        return cls(writer, reader, inline)

    async def _locked(self, op: Callable[[_SQLiteConnection], Awaitable[T]]) -> T:
        async with self._lock:
            return await op(self._conn)

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]:
        self._queries += 1
        if _reads_only(sql):
            return await self._reader.fetch(sql, *args)
        return await self._locked(lambda c: c.fetch(sql, *args))

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        self._queries += 1
        if _reads_only(sql):
            return await self._reader.fetchrow(sql, *args)
        return await self._locked(lambda c: c.fetchrow(sql, *args))

    async def execute(self, sql: str, *args: Any) -> int:
        self._queries += 1
        return await self._locked(lambda c: c.execute(sql, *args))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        self._queries += 1
        async with self._lock:
            await _sqlite_guard(self._raw.execute("BEGIN IMMEDIATE"))
            try:
                yield self._conn
            except BaseException:
                await self._raw.execute("ROLLBACK")
                raise
            await _sqlite_guard(self._raw.execute("COMMIT"))

    async def checkpoint(self) -> bool:
        async with self._lock:
            row = await self._conn.fetchrow("PRAGMA wal_checkpoint(TRUNCATE)")
        return row is not None and row["busy"] == 0  # busy: a reader held an older snapshot

    async def ping(self) -> None:
        await self._conn.fetchrow("SELECT 1")
        await _sqlite_guard(self._reader.ping())

    def public_reads(self) -> Database:
        return self

    def stats(self) -> Mapping[str, int]:
        return {
            "connections": 3,
            "connections_in_use": int(self._lock.locked()),
            "connections_max": 3,
            "queries": self._queries,
        }

    async def close(self) -> None:
        self._reader.close()
        await self._raw_reader.close()
        await self._raw.close()


async def _sqlite_connect(path: str, *, durable: bool) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    await configure_sqlite(conn, durable=durable)
    return conn


async def configure_sqlite(conn: aiosqlite.Connection, *, durable: bool = True) -> None:
    # WAL lets readers run beside the writer; FULL makes every commit durable against
    # power loss, which is what a 201 promises. NORMAL exists only to measure what FULL costs.
    for pragma in (
        "PRAGMA journal_mode=WAL",
        f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}",
        "PRAGMA foreign_keys=ON",
        "PRAGMA busy_timeout=5000",
        # Deleted rows are overwritten with zeros, in their pages and in free pages: an
        # erased account's texts leave no copy in the file (the WAL: ``checkpoint``).
        "PRAGMA secure_delete=ON",
    ):
        await conn.execute(pragma)


# --- PostgreSQL ---------------------------------------------------------------------------

_PG_UNAVAILABLE: tuple[type[BaseException], ...] = (
    OSError,
    asyncio.TimeoutError,
    asyncpg.CannotConnectNowError,
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.AdminShutdownError,
    asyncpg.TooManyConnectionsError,
)


def _pg_count(status: str) -> int:
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


class _PostgresConnection:
    dialect = "postgresql"

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]:
        return await self._conn.fetch(sql, *args)  # type: ignore[no-any-return]

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        return await self._conn.fetchrow(sql, *args)  # type: ignore[no-any-return]

    async def execute(self, sql: str, *args: Any) -> int:
        return _pg_count(await self._conn.execute(sql, *args))


async def _keep_session(conn: asyncpg.Connection) -> None:
    """The pool's reset: nothing, where asyncpg's default costs a round trip per statement.

    asyncpg rolls back an open transaction by itself before this. Its default reset then
    sends ``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`` on every
    release, and anonbox takes a pooled connection per statement: that doubled the round
    trips of a request. Nothing anonbox runs on a pooled connection outlives its
    transaction: locks are transaction-level (``pg_try_advisory_xact_lock``,
    ``pg_advisory_xact_lock``), settings ``SET LOCAL``, no cursors, and the one ``LISTEN``
    has its own connection (notifications.fanout).
    """


POOL_SIZE = 20  # connections per process
POOL_WAIT_SECONDS = 5


class PostgresDatabase:
    """A pool of asyncpg connections; opened lazily so the service starts while the
    database is still coming up, and recovers by itself when it returns."""

    dialect = "postgresql"

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool
        self._queries = 0  # statements and transactions asked of it (metrics)

    @classmethod
    async def open(
        cls, dsn: str, *, durable: bool = True, pooled: bool = False, connect_seconds: float = 5
    ) -> PostgresDatabase:
        """``pooled``: ``dsn`` is PgBouncer in transaction mode (``core.pooled``); the
        rest keeps no session state anyway (``_keep_session``; docs/decisions.md)."""
        pool = await asyncpg.create_pool(
            dsn,
            min_size=0,
            max_size=POOL_SIZE,
            timeout=connect_seconds,
            command_timeout=30,
            # Give idle connections back to the server soon: every worker also holds one
            # LISTEN connection (notifications.fanout), and the server's slots are shared.
            max_inactive_connection_lifetime=10,
            server_settings={} if durable else {"synchronous_commit": "off"},
            **(pooler_options() if pooled else {}),
            reset=_keep_session,
        )
        return cls(pool)

    @asynccontextmanager
    async def _acquire(self) -> AsyncIterator[asyncpg.Connection]:
        try:  # a request waits at most POOL_WAIT_SECONDS for a connection, then gets a 503
            async with self._pool.acquire(timeout=POOL_WAIT_SECONDS) as conn:
                yield conn
        except _PG_UNAVAILABLE as exc:
            raise ServiceUnavailable("The database is unavailable; try again shortly.") from exc

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]:
        self._queries += 1
        async with self._acquire() as conn:
            return await conn.fetch(sql, *args)  # type: ignore[no-any-return]

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        self._queries += 1
        async with self._acquire() as conn:
            return await conn.fetchrow(sql, *args)  # type: ignore[no-any-return]

    async def execute(self, sql: str, *args: Any) -> int:
        self._queries += 1
        async with self._acquire() as conn:
            return _pg_count(await conn.execute(sql, *args))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        self._queries += 1
        async with self._acquire() as conn, conn.transaction():
            yield _PostgresConnection(conn)

    async def checkpoint(self) -> bool:
        """Nothing anonbox can do: dead tuples go at autovacuum, WAL segments at
        checkpoints (``docs/decisions.md``, "What erasure leaves behind")."""
        return True

    async def ping(self) -> None:
        await self.fetchrow("SELECT 1")

    def public_reads(self) -> Database:
        return self

    def stats(self) -> Mapping[str, int]:
        size = self._pool.get_size()
        return {
            "connections": size,
            "connections_in_use": size - self._pool.get_idle_size(),
            "connections_max": self._pool.get_max_size(),
            "queries": self._queries,
        }

    async def close(self) -> None:
        await self._pool.close()
