"""The safety fleet: one ``Deployment`` per database backend, shared by every test that
takes ``deployment`` (or ``proxied``, ``new_creator``, ``redis_pair``), whatever folder it
sits in. A plugin of the root conftest, so that pytest holds one definition of the
session-wide fleet: a conftest of each folder that imported it would start a fleet of its
own.

It holds every extra configuration those tests need, each started once and all of them
together (in parallel, since most of a start is the interpreter's own): a server that
trusts 127.0.0.1 as a proxy (so a test can be any sender it likes with
``X-Forwarded-For``), one more for the privacy test alone (it stops it to read its files),
one with small in-memory rate limits, two with a Redis that is down (failing open and
failing closed) and, when Redis answers, two sharing one database and one Redis. Tests tell
each other apart by their own creators, links and sender addresses, never by a server of
their own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.conftest import Creator, make_creator_in
from tests.server import Server, free_port
from tests.support.http import loopback_client
from tests.support.services import REDIS_URL, redis_reachable, require_redis

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
    if redis_reachable():
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
        require_redis()
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
