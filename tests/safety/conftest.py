"""Servers configured for the anonymity and abuse tests, and the steps those tests share.

One ``Deployment`` per database backend holds every extra configuration these tests
need, each started once and all of them together (in parallel, since most of a start
is the interpreter's own): a server that trusts 127.0.0.1 as a proxy (so a test can
be any sender it likes with ``X-Forwarded-For``), one more for the privacy test alone
(it stops it to read its files), one with small in-memory rate limits, two with a
Redis that is down (failing open and failing closed) and, when Redis answers, two
sharing one database and one Redis. Tests tell each other apart by their own creators,
links and sender addresses, never by a server of their own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import itertools
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from anonbox.core.clock import now_us
from anonbox.core.database import connect
from anonbox.core.ids import new_link_id
from tests.actions import ERROR_KEYS, inbox_items
from tests.conftest import Creator, make_creator_in
from tests.core.test_ratelimit import REDIS_URL, _redis_reachable, _require_redis
from tests.server import Server, free_port
from tests.support.http import loopback_client

TRUST_LOOPBACK = {"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32"}
# The limited server: 3 posts per sender per link, 5 per sender, 6 per link (each a minute).
SENDER_LINK_LIMIT = 3
SENDER_LIMIT = 5
LINK_LIMIT = 6
LIMITED = {
    **TRUST_LOOPBACK,
    "ANONBOX_LIMIT_SENDER_LINK": f"{SENDER_LINK_LIMIT}/60",
    "ANONBOX_LIMIT_SENDER": f"{SENDER_LIMIT}/60",
    "ANONBOX_LIMIT_LINK": f"{LINK_LIMIT}/60",
}
START_TIMEOUT = 90.0  # several servers start at once, on a machine that may be busy

ULID = re.compile(r"^[0-9a-hjkmnp-tv-z]{26}$")
HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")
MESSAGE_KEYS = {"id", "message_content", "created_at"}


# --- servers ------------------------------------------------------------------------------


@dataclass
class Deployment:
    backend: str
    proxied: Server  # trusts 127.0.0.1/32, generous limits
    private: Server  # the same, for the privacy test, which stops it
    limited: Server  # trusts 127.0.0.1/32, LIMITED in memory
    redis_down_open: Server  # Redis on a port where nothing listens, failing open
    redis_down_closed: Server  # the same, failing closed
    redis_pair: tuple[Server, Server] | None  # one database, one Redis; None when no Redis

    @property
    def servers(self) -> list[Server]:
        return [
            self.proxied,
            self.private,
            self.limited,
            self.redis_down_open,
            self.redis_down_closed,
            *(self.redis_pair or ()),
        ]


def _start_pair(pair: tuple[Server, Server]) -> None:
    # One after the other: the first migrates the shared database (SQLite has no lock
    # for two migrations racing on a fresh file).
    for server in pair:
        server.start(START_TIMEOUT)


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def deployment(
    request: pytest.FixtureRequest,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Deployment]:
    backend = request.param
    logs = tmp_path_factory.mktemp(f"safety-logs-{backend}")

    def server(name: str, env: dict[str, str], url: str | None = None) -> Server:
        return Server(url or database_url_factory(backend), logs / f"{name}.log", env=env)

    dead_redis = {"ANONBOX_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    pair = None
    if _redis_reachable():
        shared = database_url_factory(backend)
        redis = {
            "ANONBOX_REDIS_URL": REDIS_URL,
            "ANONBOX_RATE_LIMIT_FAIL": "closed",
            "ANONBOX_LIMIT_SENDER_LINK": f"{SENDER_LINK_LIMIT}/60",
        }
        pair = (server("redis-a", redis, shared), server("redis-b", redis, shared))
    found = Deployment(
        backend=backend,
        proxied=server("proxied", TRUST_LOOPBACK),
        private=server("private", {**TRUST_LOOPBACK, "ANONBOX_LIMIT_SENDER_LINK": "5/60"}),
        limited=server("limited", LIMITED),
        redis_down_open=server(
            "redis-down-open",
            {**dead_redis, "ANONBOX_RATE_LIMIT_FAIL": "open", "ANONBOX_LIMIT_SENDER_LINK": "1/60"},
        ),
        redis_down_closed=server(
            "redis-down-closed", {**dead_redis, "ANONBOX_RATE_LIMIT_FAIL": "closed"}
        ),
        redis_pair=pair,
    )
    starts: list[Callable[[], object]] = [
        functools.partial(alone.start, START_TIMEOUT)
        for alone in (
            found.proxied,
            found.private,
            found.limited,
            found.redis_down_open,
            found.redis_down_closed,
        )
    ]
    if pair is not None:
        starts.append(functools.partial(_start_pair, pair))
    try:
        with ThreadPoolExecutor(len(starts)) as pool:
            for started in [pool.submit(start) for start in starts]:
                started.result()
        yield found
    finally:
        for running in found.servers:
            running.stop()


@pytest.fixture
def redis_pair(deployment: Deployment) -> tuple[Server, Server]:
    """Two instances sharing one database and one Redis (required in CI)."""
    if deployment.redis_pair is None:
        _require_redis()
        pytest.fail("Redis answers now, but did not when the servers were started")
    return deployment.redis_pair


def client(server: Server, **options: Any) -> httpx.Client:
    return loopback_client(**{"base_url": server.url, "timeout": 30, **options})


@pytest.fixture
def proxied(deployment: Deployment) -> Iterator[httpx.Client]:
    """A client of the server that trusts 127.0.0.1 as a proxy."""
    with client(deployment.proxied) as api:
        yield api


@pytest.fixture
def new_creator(deployment: Deployment) -> Callable[[], Creator]:
    """Make a creator on the proxied server's database."""
    return lambda: make_creator_in(deployment.proxied.database_url)


def add_link(database_url: str, creator: Creator) -> Creator:
    """Give ``creator`` one more link; returns the creator as seen through that link."""

    async def run() -> str:
        db = await connect(database_url)
        try:
            link_id = new_link_id()
            await db.execute(
                "INSERT INTO links (id, user_id, prompt, created_at) VALUES ($1, $2, $3, $4)",
                link_id,
                creator.user_id,
                "Another link",
                now_us(),
            )
        finally:
            await db.close()
        return link_id

    return dataclasses.replace(creator, link_id=asyncio.run(run()))


# --- senders ------------------------------------------------------------------------------

_numbers = itertools.count(1)


@dataclass(frozen=True)
class Sender:
    """Someone behind the trusted proxy, known to the server by ``address``."""

    address: str

    @property
    def headers(self) -> dict[str, str]:
        return {"X-Forwarded-For": self.address}


def new_sender() -> Sender:
    """An IPv4 sender no other test uses."""
    n = next(_numbers)
    return Sender(f"10.{(n >> 8) & 255}.{n & 255}.1")  # each its own /24 too


def new_ipv6_network() -> str:
    """The first four groups of an IPv6 /64 no other test uses, e.g. ``2001:db8:5:1``."""
    return f"2001:db8:{next(_numbers):x}:1"


def send(
    api: httpx.Client,
    link_id: str,
    content: str = "hello",
    sender: Sender | None = None,
    key: str | None = None,
) -> httpx.Response:
    """POST an anonymous message, as ``sender`` (through the proxy) when given."""
    headers = dict(sender.headers) if sender else {}
    if key is not None:
        headers["Idempotency-Key"] = key
    return api.post(f"/message/{link_id}", json={"message_content": content}, headers=headers)


def sent(
    api: httpx.Client, link_id: str, content: str = "hello", sender: Sender | None = None
) -> str:
    """Send a message that must be answered 201 as from ``sender``; returns its id."""
    response = send(api, link_id, content, sender)
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["ip"] == (sender.address if sender else "127.0.0.1")
    return str(response.json()["data"]["id"])


def contents(api: httpx.Client, creator: Creator) -> list[str]:
    """The texts in the creator's inbox, newest first."""
    return [item["message_content"] for item in inbox_items(api, creator)]


def block_sender_of(api: httpx.Client, creator: Creator, message_id: str) -> dict[str, Any]:
    """The creator blocks whoever sent ``message_id``; returns the block."""
    response = api.post(f"/message/{creator.link_id}/{message_id}/block", headers=creator.headers)
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


# --- checks -------------------------------------------------------------------------------


def utc_instant(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    assert moment.utcoffset() == timedelta(0), value
    return moment


def assert_created_message(response: httpx.Response, content: str) -> dict[str, Any]:
    """A 201 with exactly the documented message shape; returns its data."""
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"status_code", "message", "data", "metadata"}
    assert body["status_code"] == 201
    data: dict[str, Any] = body["data"]
    assert set(data) == MESSAGE_KEYS
    assert ULID.match(data["id"]), data
    assert data["message_content"] == content
    utc_instant(data["created_at"])
    return data


def assert_same_answer(
    stored: httpx.Response, stored_text: str, dropped: httpx.Response, dropped_text: str
) -> None:
    """The answers to a stored and to a dropped message agree in everything but the
    values that differ between any two messages (id, times, the text sent)."""
    stored_data = assert_created_message(stored, stored_text)
    dropped_data = assert_created_message(dropped, dropped_text)
    assert stored_data["id"] != dropped_data["id"]
    assert set(stored.headers) == set(dropped.headers)
    assert stored.headers["content-type"] == dropped.headers["content-type"]
    one, two = stored.json(), dropped.json()
    assert one["status_code"] == two["status_code"] == 201
    assert one["message"] == two["message"]
    assert set(one["metadata"]) == set(two["metadata"])
    assert one["metadata"]["method"] == two["metadata"]["method"]
    assert one["metadata"]["url"] == two["metadata"]["url"]


def retry_after(response: httpx.Response) -> int:
    """The Retry-After header: whole seconds, 1 to 60."""
    value = response.headers.get("retry-after", "")
    assert value.isdigit(), dict(response.headers)
    assert 1 <= int(value) <= 60, value
    return int(value)


def assert_error_from(response: httpx.Response, status: int, code: str, ip: str) -> dict[str, Any]:
    """``tests.actions.assert_error`` for a caller that is not 127.0.0.1 (a proxied sender)."""
    assert "Traceback" not in response.text, response.text
    assert response.status_code == status, response.text
    assert response.headers["content-type"].split(";")[0].strip() == "application/json"
    body: dict[str, Any] = response.json()
    assert set(body) == ERROR_KEYS
    assert body["status_code"] == status
    assert body["data"] is None
    assert body["message"].strip()
    assert body["error"]["code"] == code, body
    assert body["metadata"]["ip"] == ip
    return body


def kept_ids(api: httpx.Client, creator: Creator) -> list[str]:
    """The ids the creator still has, newest first: in the inbox or in the filtered folder.
    A dropped message is in neither."""
    ids = [item["id"] for item in inbox_items(api, creator)]
    listed = api.get(
        f"/message/{creator.link_id}/filtered", params={"limit": 100}, headers=creator.headers
    )
    assert listed.status_code == 200, listed.text
    ids += [item["id"] for item in listed.json()["data"]["items"]]
    return sorted(ids, reverse=True)
