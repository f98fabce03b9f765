"""Read replicas: the reads anyone may make, answered by a streaming replica.

The primary takes every write, every transaction and every read but those a route marks
public (``Database.public_reads``, injected as ``PublicDB``). Such a read goes to a
replica only while the replica is up and near: every ``CHECK_SECONDS`` a watcher notes the
primary's WAL position, and asks each replica how far it has replayed. A replica is
usable while it has replayed everything the primary had written ``max_lag`` seconds ago;
one that does not answer within ``CHECK_TIMEOUT`` is not, until it answers again. A read a
replica fails (it stopped a moment ago) is answered by the primary, and so is a read of
one row that the replica has not got yet (a receipt or a link made a moment ago): no
reader waits on a lagging replica, and none gets a 5xx from one.

A request that carries a credential (an ``X-API-Key`` or ``Authorization`` header, or a
sign-in session's cookie) reads from the primary throughout: a creator never sees less
than they just wrote, even on their own public page (docs/decisions.md, "Behind a
pooler, beside replicas").
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

from litestar import Request

from anonbox.core.database import Connection, Database, PostgresDatabase, Row, connect, driver_url
from anonbox.core.settings import Settings

logger = logging.getLogger(__name__)
T = TypeVar("T")

CHECK_SECONDS = 1.0
CHECK_TIMEOUT = 2.0
# The cookies of a sign-in (web.infra.session, auth.router), with or without ``__Host-``:
# a request carrying one reads from the primary. Only their presence counts here; the
# rules that check them are elsewhere, and a forged one costs nothing but a primary read.
SIGNED_IN_COOKIES = frozenset({"anonbox_session", "anonbox_session_refresh", "anonbox_refresh"})


def lsn(text: str) -> int:
    """PostgreSQL's ``X/Y`` WAL position as one number."""
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) + int(low, 16)


@dataclass
class Replica:
    url: str
    db: PostgresDatabase
    usable: bool = False
    lag_seconds: float = -1.0  # -1: not known (down, or not checked yet)

    def name(self) -> str:
        return _host_of(self.url)


def _host_of(url: str) -> str:
    tail = driver_url(url)[1].split("@")[-1]
    return tail.split("/")[0].split("?")[0]


class ReplicatedDatabase:
    """The primary for everything; its replicas for the public reads (``public_reads``)."""

    dialect = "postgresql"

    def __init__(self, primary: Database, replicas: list[Replica], max_lag: float) -> None:
        self.primary = primary
        self.replicas = replicas
        self.max_lag = max_lag
        self._turns = itertools.cycle(range(len(replicas)))
        self._samples: deque[tuple[float, int]] = deque()  # (monotonic time, primary LSN)
        self.replica_queries = 0
        self.replica_fallbacks = 0
        self._watcher: asyncio.Task[None] | None = None
        self._public = _PublicReads(self)

    def start(self) -> None:
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    # The primary's part: everything but the public reads.
    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]:
        return await self.primary.fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        return await self.primary.fetchrow(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        return await self.primary.execute(sql, *args)

    def transaction(self) -> AbstractAsyncContextManager[Connection]:
        return self.primary.transaction()

    async def ping(self) -> None:
        await self.primary.ping()

    async def checkpoint(self) -> bool:
        return await self.primary.checkpoint()

    def public_reads(self) -> Database:
        return self._public

    def stats(self) -> Mapping[str, int]:
        return {
            **self.primary.stats(),
            "replicas": len(self.replicas),
            "replicas_usable": sum(r.usable for r in self.replicas),
            "replica_queries": self.replica_queries,
            "replica_fallbacks": self.replica_fallbacks,
        }

    async def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        for replica in self.replicas:
            await replica.db.close()
        await self.primary.close()

    # Choosing a replica, and leaving one that fails.
    def pick(self) -> Replica | None:
        for _ in self.replicas:
            replica = self.replicas[next(self._turns)]
            if replica.usable:
                return replica
        return None

    async def on_replica(
        self, read: Callable[[Database], Awaitable[T]], missing: Callable[[T], bool]
    ) -> T:
        replica = self.pick()
        if replica is not None:
            try:
                answer = await read(replica.db)
            except Exception as exc:  # whatever a replica fails at, the primary answers
                # Stopped or unreachable since the last check (ServiceUnavailable), or a
                # connection cut in the middle of a statement (asyncpg's InternalClientError).
                if replica.usable:
                    logger.warning(
                        "replica %s failed a read (%s): the primary answers",
                        replica.name(),
                        type(exc).__name__,
                    )
                replica.usable = False
            else:
                self.replica_queries += 1
                if not missing(answer):
                    return answer
            self.replica_fallbacks += 1
        return await read(self.primary)

    # The watcher.
    async def _watch(self) -> None:
        while True:
            with contextlib.suppress(Exception):  # a primary that is down: keep the last word
                await self.check()
            await asyncio.sleep(CHECK_SECONDS)

    async def check(self) -> None:
        """Note the primary's position, then how far each replica has replayed."""
        row = await self.primary.fetchrow("SELECT pg_current_wal_lsn()::text AS at")
        now = time.monotonic()
        assert row is not None
        self._samples.append((now, lsn(row["at"])))
        while len(self._samples) > 1 and self._samples[1][0] < now - self.max_lag:
            self._samples.popleft()  # the oldest kept is at most max_lag old (or the only one)
        await asyncio.gather(*(self._check_replica(r, now) for r in self.replicas))

    async def _check_replica(self, replica: Replica, now: float) -> None:
        try:
            row = await asyncio.wait_for(
                replica.db.fetchrow(
                    "SELECT pg_is_in_recovery() AS standby,"
                    " pg_last_wal_replay_lsn()::text AS replayed"
                ),
                CHECK_TIMEOUT,
            )
        except Exception as exc:  # down, starting, cut off: not usable until it answers
            if replica.usable:
                logger.warning("replica %s is unreachable (%s); skipping it", replica.name(), exc)
            replica.usable, replica.lag_seconds = False, -1.0
            return
        assert row is not None
        if not row["standby"] or row["replayed"] is None:  # the primary itself, promoted
            replica.lag_seconds = 0.0
        else:
            replayed = lsn(row["replayed"])
            caught_up = [at for at, position in self._samples if position <= replayed]
            replica.lag_seconds = now - max(caught_up) if caught_up else now - self._samples[0][0]
            if not caught_up:
                replica.lag_seconds = max(replica.lag_seconds, self.max_lag + CHECK_SECONDS)
        usable = replica.lag_seconds <= self.max_lag
        if usable != replica.usable:
            logger.warning(
                "replica %s is %s (%.1f s behind)",
                replica.name(),
                "back in use" if usable else "too far behind; skipping it",
                replica.lag_seconds,
            )
        replica.usable = usable


class _PublicReads:
    """What a public route reads through: plain reads from a replica, the rest as ever."""

    dialect = "postgresql"

    def __init__(self, routed: ReplicatedDatabase) -> None:
        self._routed = routed

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]:
        if not _reads_only(sql):
            return await self._routed.primary.fetch(sql, *args)
        return await self._routed.on_replica(lambda db: db.fetch(sql, *args), lambda _: False)

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        if not _reads_only(sql):
            return await self._routed.primary.fetchrow(sql, *args)
        # A row the replica has not replayed yet (a receipt just issued) is the primary's.
        return await self._routed.on_replica(
            lambda db: db.fetchrow(sql, *args), lambda row: row is None
        )

    async def execute(self, sql: str, *args: Any) -> int:
        return await self._routed.primary.execute(sql, *args)

    def transaction(self) -> AbstractAsyncContextManager[Connection]:
        return self._routed.primary.transaction()

    async def ping(self) -> None:
        await self._routed.ping()

    async def checkpoint(self) -> bool:
        return await self._routed.checkpoint()

    def public_reads(self) -> Database:
        return self

    def stats(self) -> Mapping[str, int]:
        return self._routed.stats()

    async def close(self) -> None:
        await self._routed.close()


def _reads_only(sql: str) -> bool:
    head = sql.lstrip()[:6].upper()
    return head == "SELECT" and " FOR UPDATE" not in sql.upper()


async def open_database(settings: Settings) -> Database:
    """The service's database as configured: the primary (through the pooler, if one is
    named), and the replicas beside it."""
    primary = await connect(
        settings.database_url,
        durable=settings.durable_commits,
        pooled=settings.database_pooler == "transaction",
    )
    if not settings.database_replica_urls:
        return primary
    replicas = [
        Replica(
            url,
            await PostgresDatabase.open(
                driver_url(url)[1],
                pooled=settings.database_pooler == "transaction",
                connect_seconds=CHECK_TIMEOUT,
            ),
        )
        for url in settings.database_replica_urls
    ]
    routed = ReplicatedDatabase(primary, replicas, settings.database_replica_max_lag_seconds)
    routed.start()
    return routed


def carries_credentials(request: Request[Any, Any, Any]) -> bool:
    if request.headers.get("authorization") or request.headers.get("x-api-key"):
        return True
    return any(name.removeprefix("__Host-") in SIGNED_IN_COOKIES for name in request.cookies)


def reads_for(request: Request[Any, Any, Any], db: Database) -> Database:
    """The database a public route reads through: the replicas' view, but for a request
    that carries a credential (its maker's reads are the primary's)."""
    return db if carries_credentials(request) else db.public_reads()
