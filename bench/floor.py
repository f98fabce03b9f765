"""The floor: a minimal Starlette app that runs the same SQL as anonbox, through the same raw
drivers with the same durability, served by the same uvicorn settings. What anonbox costs on
top of this is what its framework, validation, envelope and safety code cost.

It answers the paths the benchmark uses, with the same methods and status codes, and reads
and writes the same database as anonbox (the same rows: ``bench/run.py`` seeds it once).

Durability, as anonbox (``anonbox.core.database``):

- SQLite: one aiosqlite connection, autocommit (``isolation_level=None``), with
  ``journal_mode=WAL``, ``synchronous=FULL``, ``foreign_keys=ON``, ``busy_timeout=5000``:
  every write statement is its own transaction and is on disk before the answer.
- PostgreSQL: an asyncpg pool (``min_size=0, max_size=20``, ``command_timeout=30``), the
  server's own settings (``synchronous_commit=on``, ``fsync=on``): every write statement
  commits before the answer.

One statement is one driver call (one aiosqlite round trip to its thread; on PostgreSQL
``Pool.fetch``/``fetchrow``, which takes a pooled connection per statement, as anonbox's
``PostgresDatabase`` does). SQL is written once with ``$n`` placeholders and becomes ``?n``
for SQLite, as in anonbox.

Where anonbox does more than this, on purpose, the floor stays the plain way of doing it:
anonbox commits concurrent posts together (``anonbox.core.groupcommit``: the same INSERT,
for many rows in one statement, so one fsync serves them all, each 201 sent after that
commit) and sends SQLite SELECTs to a second, read-only connection. The floor commits
every post on its own, on one connection: the durable baseline a raw driver gives.

The statements, per endpoint (copied from anonbox's repositories, in anonbox's order):

``POST /message/{link_id}`` (anonymous write; 201) — ``messages.service.create_message``
    1. ``SELECT user_id, paused FROM links WHERE id = $1``               (posting_target)
    2. ``SELECT id, sender_epoch, sender_hash FROM blocks
          WHERE user_id = $1 OR user_id IS NULL``                         (safety.blocks.is_blocked)
    3. ``SELECT normalized FROM muted_words WHERE user_id = $1``          (safety.mutes.muted_of)
    4. ``INSERT INTO messages (id, link_id, content, created_at, sender_epoch, sender_hash)
          SELECT $1, id, $3, $4, $5, $6 FROM links WHERE id = $2``        (insert_message)
    The row is the same as anonbox's: a ULID from ``anonbox.core.ids.new_ulid``, created_at
    in microseconds, the sender's epoch and an HMAC-SHA256 of the peer address. Not run,
    because anonbox does not run them either once warm: the sender-key lookup (``SELECT salt
    FROM sender_epochs``, cached per process after the first post of a key period) and the
    idempotency statements (only with an ``Idempotency-Key`` header, which the benchmark
    does not send). Not done: NFC normalisation and the rate limiter (in memory, no SQL).

``PUT /message/{link_id}/{message_id}/like`` (creator; 200) — ``toggle_like``
    1. ``SELECT k.id, k.user_id, k.key_hash, k.last_used_at, u.is_admin FROM api_keys k
          JOIN users u ON u.id = k.user_id
          WHERE k.key_hash = $1 AND k.revoked_at IS NULL``                (auth: active_api_key)
       and, at most once a minute, ``UPDATE api_keys SET last_used_at = $1 WHERE id = $2``
    2. ``SELECT user_id FROM links WHERE id = $1``                       (links: link_owner)
    3. ``UPDATE messages SET like_by_creator = NOT like_by_creator
          WHERE id = $1 AND link_id = $2 RETURNING like_by_creator``      (toggle_like)

``GET /message/{link_id}?limit=&cursor=`` (the creator's inbox; 200) — ``inbox``
    1. and 2. as for the like (the credential, then the link's owner)
    3. ``SELECT m.id, m.content, m.like_by_creator, m.created_at, m.reply_count FROM messages m
          JOIN (SELECT id FROM messages WHERE link_id = $1 [AND id < $3]
          ORDER BY id DESC LIMIT $2) page ON page.id = m.id ORDER BY m.id DESC``
                                                                        (inbox_page, limit + 1)

Answers are plain JSON (``{"data": ...}``) from Starlette's ``JSONResponse``; there is no
envelope metadata, no OpenAPI, no error mapping beyond 400/401/403/404/409.

Run: ``python bench/floor.py --database-url sqlite:///path --port 8001``.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import aiosqlite
import asyncpg
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from anonbox.core.ids import new_ulid

POSTING_TARGET = "SELECT user_id, paused FROM links WHERE id = $1"
BLOCKS = "SELECT id, sender_epoch, sender_hash FROM blocks WHERE user_id = $1 OR user_id IS NULL"
MUTED = "SELECT normalized FROM muted_words WHERE user_id = $1"
INSERT_MESSAGE = (
    "INSERT INTO messages (id, link_id, content, created_at, sender_epoch, sender_hash)"
    " SELECT $1, id, $3, $4, $5, $6 FROM links WHERE id = $2"
)
API_KEY = (
    "SELECT k.id, k.user_id, k.key_hash, k.last_used_at, u.is_admin"
    " FROM api_keys k JOIN users u ON u.id = k.user_id"
    " WHERE k.key_hash = $1 AND k.revoked_at IS NULL"
)
TOUCH_KEY = "UPDATE api_keys SET last_used_at = $1 WHERE id = $2"
LINK_OWNER = "SELECT user_id FROM links WHERE id = $1"
TOGGLE_LIKE = (
    "UPDATE messages SET like_by_creator = NOT like_by_creator"
    " WHERE id = $1 AND link_id = $2 RETURNING like_by_creator"
)
INBOX = (
    "SELECT m.id, m.content, m.like_by_creator, m.created_at, m.reply_count FROM messages m"
    " JOIN (SELECT id FROM messages WHERE link_id = $1{before}"
    " ORDER BY id DESC LIMIT $2) page ON page.id = m.id ORDER BY m.id DESC"
)
INBOX_FIRST = INBOX.format(before="")
INBOX_AFTER = INBOX.format(before=" AND id < $3")

_SENDER_KEY = hashlib.sha256(b"floor sender key").digest()
_US_PER_DAY = 86_400_000_000
_PLACEHOLDER = re.compile(r"\$(\d+)")


class SQLite:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn
        self._sql: dict[str, str] = {}

    @classmethod
    async def open(cls, path: str) -> SQLite:
        conn = await aiosqlite.connect(path, isolation_level=None)
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

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return list(await self.conn.execute_fetchall(self._q(sql), args))

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        rows = await self.conn.execute_fetchall(self._q(sql), args)
        return rows[0] if rows else None

    async def execute(self, sql: str, *args: Any) -> None:
        await self.conn.execute_fetchall(self._q(sql), args)

    async def close(self) -> None:
        await self.conn.close()


class Postgres:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @classmethod
    async def open(cls, dsn: str) -> Postgres:
        return cls(await asyncpg.create_pool(dsn, min_size=0, max_size=20, command_timeout=30))

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return list(await self.pool.fetch(sql, *args))

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return await self.pool.fetchrow(sql, *args)

    async def execute(self, sql: str, *args: Any) -> None:
        await self.pool.execute(sql, *args)

    async def close(self) -> None:
        await self.pool.close()


DB: Any = None  # SQLite or Postgres, opened by the lifespan


def _iso(us: int) -> str:
    return datetime.fromtimestamp(us / 1_000_000, tz=UTC).isoformat(timespec="milliseconds")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"message": message}, status_code=status)


async def create_message(request: Request) -> JSONResponse:
    link_id = request.path_params["link_id"]
    try:
        body = await request.json()
        text = body["message_content"]
    except (ValueError, KeyError, TypeError):
        return _error(400, "invalid body")
    if not isinstance(text, str) or not 1 <= len(text) <= 500:
        return _error(400, "message_content must be 1 to 500 characters")
    target = await DB.fetchrow(POSTING_TARGET, link_id)
    if target is None:
        return _error(404, "No link with this id")
    if target[1]:
        return _error(409, "paused")
    owner = target[0]
    await DB.fetch(BLOCKS, owner)
    await DB.fetch(MUTED, owner)
    now = time.time_ns() // 1000
    message_id = new_ulid(now)
    host = request.client.host if request.client else ""
    sender_hash = hmac.new(_SENDER_KEY, host.encode(), hashlib.sha256).hexdigest()
    await DB.execute(
        INSERT_MESSAGE, message_id, link_id, text, now, now // _US_PER_DAY, sender_hash
    )
    return JSONResponse(
        {"data": {"id": message_id, "message_content": text, "created_at": _iso(now)}},
        status_code=201,
    )


async def _refused(request: Request, link_id: str) -> JSONResponse | None:
    """The api-key lookup (anonbox's authenticate) and the link's owner (owned_link)."""
    key = request.headers.get("x-api-key")
    if not key:
        return _error(401, "no credential")
    presented = hashlib.sha256(key.strip().encode()).hexdigest()
    row = await DB.fetchrow(API_KEY, presented)
    if row is None or not hmac.compare_digest(row[2], presented):
        return _error(401, "bad credential")
    now = time.time_ns() // 1000
    if row[3] is None or now - row[3] > 60_000_000:
        await DB.execute(TOUCH_KEY, now, row[0])
    owner = await DB.fetchrow(LINK_OWNER, link_id)
    if owner is None:
        return _error(404, "No link with this id")
    if owner[0] != row[1]:
        return _error(403, "not yours")
    return None


async def toggle_like(request: Request) -> JSONResponse:
    link_id = request.path_params["link_id"]
    message_id = request.path_params["message_id"]
    if (refusal := await _refused(request, link_id)) is not None:
        return refusal
    row = await DB.fetchrow(TOGGLE_LIKE, message_id, link_id)
    if row is None:
        return _error(404, "No message with this id under this link")
    return JSONResponse({"data": {"message_id": message_id, "like_by_creator": bool(row[0])}})


async def inbox(request: Request) -> JSONResponse:
    link_id = request.path_params["link_id"]
    try:
        limit = int(request.query_params.get("limit", "20"))
    except ValueError:
        return _error(400, "bad limit")
    if not 1 <= limit <= 100:
        return _error(400, "bad limit")
    cursor = request.query_params.get("cursor")
    if (refusal := await _refused(request, link_id)) is not None:
        return refusal
    if cursor is None:
        rows = await DB.fetch(INBOX_FIRST, link_id, limit + 1)
    else:
        rows = await DB.fetch(INBOX_AFTER, link_id, limit + 1, cursor)
    items = [
        {
            "id": r[0],
            "message_content": r[1],
            "like_by_creator": bool(r[2]),
            "created_at": _iso(r[3]),
            "reply_count": r[4],
        }
        for r in rows[:limit]
    ]
    next_cursor = rows[limit - 1][0] if len(rows) > limit else None
    return JSONResponse({"data": {"items": items, "next_cursor": next_cursor}})


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"data": {"status": "ok"}})


def create_app(database_url: str) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        global DB
        if database_url.startswith("sqlite:///"):
            DB = await SQLite.open(database_url.removeprefix("sqlite:///"))
        else:
            DB = await Postgres.open(database_url)
        try:
            yield
        finally:
            await DB.close()

    return Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/message/{link_id}", create_message, methods=["POST"]),
            Route("/message/{link_id}", inbox, methods=["GET"]),
            Route("/message/{link_id}/{message_id}/like", toggle_like, methods=["PUT"]),
        ],
        lifespan=lifespan,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args()
    # anonbox's `serve`: one process, httptools (anonbox uses a subclass that bounds the
    # request head), the default event loop (uvloop when installed), no access log,
    # no proxy headers, no server header.
    uvicorn.run(
        create_app(args.database_url),
        host=args.host,
        port=args.port,
        http="httptools",
        proxy_headers=False,
        access_log=False,
        server_header=False,
        log_level="info",
    )


if __name__ == "__main__":
    main()
