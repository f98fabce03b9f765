"""The floor: a minimal Starlette app that runs the same SQL as anonbox, through the same raw
drivers with the same durability, served by the same uvicorn settings. What anonbox costs on
top of this is what its framework, validation, envelope and safety code cost.

It answers the paths the benchmark uses, with the same methods and status codes, and reads
and writes the same database as anonbox (the same rows: ``bench/run.py`` seeds it once).

Durability, as anonbox (``anonbox.core.database``):

- SQLite: one aiosqlite connection, autocommit (``isolation_level=None``), with
  ``journal_mode=WAL``, ``synchronous=FULL``, ``foreign_keys=ON``, ``busy_timeout=5000``:
  every write is its own transaction (``BEGIN IMMEDIATE`` … ``COMMIT`` where anonbox has
  one) and is on disk before the answer.
- PostgreSQL: an asyncpg pool (``min_size=0, max_size=20``, ``timeout=5``,
  ``command_timeout=30``, ``max_inactive_connection_lifetime=10``), the server's own
  settings (``synchronous_commit=on``, ``fsync=on``): every write commits before the answer.

One statement is one driver call (one aiosqlite round trip to its thread; on PostgreSQL
``Pool.fetch``/``fetchrow``, which takes a pooled connection per statement, as anonbox's
``PostgresDatabase`` does, and a transaction holds one connection). SQL is written once
with ``$n`` placeholders and becomes ``?n`` for SQLite, as in anonbox.

Where anonbox does more than this, on purpose, the floor stays the plain way of doing it:
anonbox commits concurrent posts together (``anonbox.core.groupcommit``: the same INSERT,
for many rows in one statement, so one fsync serves them all, each 201 sent after that
commit) and sends SQLite SELECTs to read-only connections beside the writer. The floor runs
the very same INSERT with one row per post, on one connection: the durable baseline a raw
driver gives. What anonbox does after the answer (the relay hands each event to the
channels, the live feed tails the outbox) is not a request's SQL and is not done here.

``bench/run.py --check-sql`` runs both apps under ``bench/sqltrace.py`` and compares, per
scenario, the statements each sends: when anonbox's SQL changes, the check says where
(``bench/results/latest.md``, "Statements per request").

The statements, per endpoint (copied from anonbox's repositories, in anonbox's order):

``POST /message/{link_id}`` (anonymous write; 201) — ``messages.service.create_message``
    1. ``POSTING_TARGET``: the link's owner, paused, muted mode, account being deleted
                                                               (links.repository.posting_target)
    2. ``BLOCKS``: the owner's and the site's blocks              (safety.service.is_blocked)
    3. ``MUTED_VERSIONS``: how many muted words and phrases   (safety.service.muted_of; the
       words themselves only when there are some: none in the benchmark)
    4. ``INSERT_POSTS``, one row (messages.repository.insert_posts): on SQLite
       ``BEGIN IMMEDIATE``, the json_each INSERT, the ``message.created`` event
       (``EVENTS_OF_POSTS``), ``COMMIT``; on PostgreSQL the one statement that writes the
       message, its event and the notification, in autocommit.
    The row is the same as anonbox's: a ULID from ``anonbox.core.ids.new_ulid``, created_at
    in microseconds, the sender's period and two HMAC-SHA256 of the peer address (the
    address, and its /24). Not run, because anonbox does not run them either once warm: the
    sender-key lookup (``SELECT salt FROM sender_epochs``, cached per process after the
    first post of a key period) and the idempotency statements (only with an
    ``Idempotency-Key`` header, which the benchmark does not send). Not done: NFC
    normalisation and the rate limiter (in memory, no SQL).

Every creator request (like, reply, inbox) starts with the credential, as anonbox's
``auth.service.authenticate`` does:
    1. ``API_KEY``: the key, its owner, whether the account is being deleted
       (auth.repository.active_api_key), and at most once a minute per key and process
       ``TOUCH_KEY`` (auth.service._touch_api_key). A key the database accepted is
       remembered for ``CREDENTIAL_TTL_SECONDS`` (anonbox's ``auth.credential_cache``:
       half a second on SQLite; on PostgreSQL up to a minute, kept honest by its listener,
       which the floor has not got), so under load this statement runs twice a second,
       not once a request. A refusal is never remembered.

``PUT /message/{link_id}/{message_id}/like`` (creator; 200) — ``toggle_like``
    2. ``TOGGLE_LIKE``, one statement in autocommit, which flips the like only if the link
       is the key's owner's and in use (messages.repository.toggle_likes with one toggle;
       anonbox puts concurrent toggles in one such statement, as it does posts)

``POST /message/{link_id}/{message_id}`` (the creator's reply; 201) — ``messages.service.reply``
    2. (messages.repository.add_replies with one reply) on SQLite a transaction:
       ``COUNT_OWNED_REPLY`` (the same ownership clause; 404 and rollback when no row),
       ``INSERT_REPLY``, ``RECORD_EVENT`` (``reply.created``); on PostgreSQL
       ``ADD_REPLIES``, the one statement that does all three and the notification.
       anonbox puts concurrent replies in one transaction (SQLite) or one such statement
       (PostgreSQL), as it does posts and likes; the floor commits each on its own

``GET /message/{link_id}?limit=&cursor=`` (the creator's inbox; 200) — ``inbox``
    2. ``LINK_HOLDER``: the link's owner, whether it is being deleted
                                                          (links.repository.link_holder)
    3. ``INBOX_FIRST`` or ``INBOX_AFTER`` (messages.inbox.repository.inbox_page, limit + 1)

Where the like or the reply finds nothing, anonbox asks why (no link, not yours, gone) to
choose its answer; the floor answers 404. The benchmark never takes that path.

Answers are plain JSON (``{"data": ...}``) from Starlette's ``JSONResponse``; there is no
envelope metadata, no OpenAPI, no error mapping beyond 400/401/403/404/409/410.

The public pages (the send page, an answer page, a link's card and preview picture) are
``floor_pages.py``'s, mounted here.

Run: ``python bench/floor.py --database-url sqlite:///path --port 8001``. The statements
are in ``floor_sql.py``, the two databases in ``floor_db.py``; this module is the app.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import ipaddress
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import floor_pages  # the public pages' floor (issue 43), beside this module
import uvicorn
from floor_db import Rollback, open_database
from floor_sql import (
    ADD_REPLIES,
    API_KEY,
    BLOCKS,
    COUNT_OWNED_REPLY,
    EVENTS_OF_POSTS,
    INBOX_AFTER,
    INBOX_FIRST,
    INSERT_POSTS,
    INSERT_REPLY,
    LINK_HOLDER,
    MUTED_VERSIONS,
    MUTED_WORDS,
    NOTIFY_CHANNEL,
    POSTING_TARGET,
    RECORD_EVENT,
    TOGGLE_LIKE,
    TOUCH_KEY,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from anonbox.core.ids import new_ulid

_SENDER_KEY = hashlib.sha256(b"floor sender key").digest()
_US_PER_DAY = 86_400_000_000
_LAST_USED_RESOLUTION_US = 60 * 1_000_000
CREDENTIAL_TTL_SECONDS = 0.5

DB: Any = None  # SQLite or Postgres, opened by the lifespan
_touched_at: dict[str, int] = {}  # as anonbox: a key's use recorded once a minute per process
# Keys the database accepted lately: SHA-256 -> (owner, account being deleted, expires).
_proven: dict[str, tuple[str, bool, float]] = {}


def _iso(us: int) -> str:
    return datetime.fromtimestamp(us / 1_000_000, tz=UTC).isoformat(timespec="milliseconds")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"message": message}, status_code=status)


async def _content(request: Request) -> str | JSONResponse:
    try:
        body = await request.json()
        text = body["message_content"]
    except (ValueError, KeyError, TypeError):
        return _error(400, "invalid body")
    if not isinstance(text, str) or not 1 <= len(text) <= 500 or not text.strip():
        return _error(400, "message_content must be 1 to 500 characters")
    return text


def _sender(request: Request) -> tuple[str, str]:
    """The peer's keyed hash and its /24's (IPv6: /64 and /48), as anonbox keeps them."""
    address = ipaddress.ip_address(request.client.host if request.client else "127.0.0.1")
    if isinstance(address, ipaddress.IPv6Address):
        own, wide = b"6" + address.packed[:8], b"6/48:" + address.packed[:6]
    else:
        own, wide = b"4" + address.packed, b"4/24:" + address.packed[:3]
    return (
        hmac.new(_SENDER_KEY, own, hashlib.sha256).hexdigest(),
        hmac.new(_SENDER_KEY, wide, hashlib.sha256).hexdigest(),
    )


async def create_message(request: Request) -> JSONResponse:
    link_id = request.path_params["link_id"]
    text = await _content(request)
    if isinstance(text, JSONResponse):
        return text
    target = await DB.fetchrow(POSTING_TARGET, link_id)
    if target is None:
        return _error(404, "No link with this id")
    if target[3]:
        return _error(410, "gone")
    if target[1]:
        return _error(409, "paused")
    owner = target[0]
    await DB.fetch(BLOCKS, owner)
    versions = await DB.fetchrow(MUTED_VERSIONS, owner)
    if versions[0]:
        await DB.fetch(MUTED_WORDS, owner)
    now = time.time_ns() // 1000
    message_id = new_ulid(now)
    sender_hash, network_hash = _sender(request)
    row = (message_id, link_id, text, now, now // _US_PER_DAY, sender_hash, network_hash)
    if DB.dialect == "sqlite":
        async with DB.transaction() as tx:
            stored = await tx.fetch(INSERT_POSTS["sqlite"], json.dumps([row]))
            if stored:
                await tx.execute(EVENTS_OF_POSTS, json.dumps([message_id]))
    else:
        stored = await DB.fetch(INSERT_POSTS["postgresql"], *([value] for value in row))
    if not stored:
        return _error(404, "No link with this id")
    return JSONResponse(
        {"data": {"id": message_id, "message_content": text, "created_at": _iso(now)}},
        status_code=201,
    )


async def _creator(request: Request) -> str | JSONResponse:
    """The key's owner (anonbox's authenticate), or the refusal."""
    key = request.headers.get("x-api-key")
    if not key:
        return _error(401, "no credential")
    presented = hashlib.sha256(key.strip().encode()).hexdigest()
    remembered = _proven.get(presented)
    if remembered is not None and remembered[2] > time.monotonic():
        owner, erasing = remembered[0], remembered[1]
    else:
        started = time.monotonic()
        row = await DB.fetchrow(API_KEY, presented)
        if row is None or not hmac.compare_digest(row[2], presented):
            return _error(401, "bad credential")
        owner, erasing = row[1], bool(row[5])
        _proven[presented] = (owner, erasing, started + CREDENTIAL_TTL_SECONDS)
        if row[3] is not None:
            _touched_at[row[0]] = max(_touched_at.get(row[0], 0), row[3])
        now = time.time_ns() // 1000
        if now - _touched_at.get(row[0], 0) > _LAST_USED_RESOLUTION_US:
            _touched_at[row[0]] = now
            await DB.execute(TOUCH_KEY, now, row[0])
    if erasing:
        return _error(403, "account being deleted")
    return owner


async def _refused(request: Request, link_id: str) -> JSONResponse | None:
    """The credential, then the link's owner (anonbox's owned_link, for reads)."""
    owner = await _creator(request)
    if isinstance(owner, JSONResponse):
        return owner
    holder = await DB.fetchrow(LINK_HOLDER, link_id)
    if holder is None:
        return _error(404, "No link with this id")
    if holder[1]:
        return _error(410, "gone")
    if holder[0] != owner:
        return _error(403, "not yours")
    return None


async def toggle_like(request: Request) -> JSONResponse:
    link_id = request.path_params["link_id"]
    message_id = request.path_params["message_id"]
    owner = await _creator(request)
    if isinstance(owner, JSONResponse):
        return owner
    toggle = (message_id, link_id, owner, 1)
    if DB.dialect == "sqlite":
        row = await DB.fetchrow(TOGGLE_LIKE["sqlite"], json.dumps([toggle]))
    else:
        row = await DB.fetchrow(TOGGLE_LIKE["postgresql"], *([value] for value in toggle))
    if row is None:
        return _error(404, "No message with this id under this link")
    return JSONResponse({"data": {"message_id": message_id, "like_by_creator": bool(row[2])}})


async def reply(request: Request) -> JSONResponse:
    link_id = request.path_params["link_id"]
    message_id = request.path_params["message_id"]
    owner = await _creator(request)
    if isinstance(owner, JSONResponse):
        return owner
    text = await _content(request)
    if isinstance(text, JSONResponse):
        return text
    now = time.time_ns() // 1000
    reply_id = new_ulid(now)
    if DB.dialect == "postgresql":
        added = await DB.fetchrow(
            ADD_REPLIES,
            [message_id],
            [link_id],
            [owner],
            [reply_id],
            [text],
            [now],
            "reply.created",
            NOTIFY_CHANNEL,
        )
        if added is None:
            return _error(404, "No message with this id under this link")
    else:
        try:
            async with DB.transaction() as tx:
                if await tx.execute(COUNT_OWNED_REPLY, message_id, link_id, owner) != 1:
                    raise Rollback
                await tx.execute(INSERT_REPLY, reply_id, message_id, text, now)
                await tx.execute(RECORD_EVENT, link_id, "reply.created", message_id, reply_id, now)
        except Rollback:
            return _error(404, "No message with this id under this link")
    return JSONResponse(
        {
            "data": {
                "message_id": message_id,
                "reply_message_id": reply_id,
                "message_content": text,
                "created_at": _iso(now),
            }
        },
        status_code=201,
    )


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
            "follow_up_of": r[5],
            "answer_id": r[6],
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
        DB = floor_pages.DB = await open_database(database_url)
        try:
            yield
        finally:
            await DB.close()

    return Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/message/{link_id}", create_message, methods=["POST"]),
            Route("/message/{link_id}", inbox, methods=["GET"]),
            Route("/message/{link_id}/{message_id}", reply, methods=["POST"]),
            Route("/message/{link_id}/{message_id}/like", toggle_like, methods=["PUT"]),
            *floor_pages.routes(),
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
