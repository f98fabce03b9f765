"""Two instances behind a real PgBouncer in transaction mode (Debian's 1.18, started by
the test in front of the machine's PostgreSQL with five server connections): posts,
replies, likes, the inbox, the live fan-out from one instance to the other, the relay
and the webhook couriers' leases all work with no error, while the two instances' forty
pooled connections share the pooler's five. LISTEN goes straight to PostgreSQL
(``ANONBOX_DATABASE_LISTEN_URL``), one connection a process."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import asyncpg
import httpx
import pytest

from anonbox.outbox.fanout import LISTENER_NAME
from tests.conftest import make_creator_in
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.pgbouncer import pgbouncer, show
from tests.support.receiver import receiving
from tests.support.signin import access_tokens

POOL_SIZE = 5
POSTS = 40


@dataclass
class Hooks:
    """A webhook receiver on loopback: what it was sent."""

    port: int = 0
    bodies: list[dict[str, object]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


@pytest.fixture
def hooks() -> Iterator[Hooks]:
    state = Hooks()

    def on_post(path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
        state.bodies.append(json.loads(body))
        return 204, {}

    # Two instances deliver at once; a listen queue of 5 refused some at times.
    with receiving(on_post, backlog=128) as state.port:
        yield state


@dataclass(frozen=True)
class Pooled:
    first: Server
    second: Server
    direct_url: str
    pooler_port: int
    database: str


@pytest.fixture(scope="module")
def pooled(
    database_url_factory: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pooled]:
    direct = database_url_factory("postgresql")
    database = direct.rsplit("/", 1)[1]
    logs = tmp_path_factory.mktemp("pooler")
    with pgbouncer(pool_size=POOL_SIZE) as port:
        through = f"postgresql://postgres@127.0.0.1:{port}/{database}"
        env = {
            "ANONBOX_DATABASE_POOLER": "transaction",
            "ANONBOX_DATABASE_LISTEN_URL": direct,
            "ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true",
            "ANONBOX_WEBHOOK_RETRY_SECONDS": "0.2",
        }
        servers = [Server(through, logs / f"{name}.log", env=env) for name in ("a", "b")]
        try:
            for server in servers:
                server.start(90)
            yield Pooled(*servers, direct_url=direct, pooler_port=port, database=database)
        finally:
            for server in servers:
                server.stop()


def errors_in(server: Server) -> list[str]:
    lines = []
    for line in server.log().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("level") in {"error", "ERROR", "critical", "CRITICAL"}:
            lines.append(line)
    return lines


def server_connections(direct_url: str, database: str) -> dict[str, int]:
    """The database's connections, as PostgreSQL counts them: the listeners, and all."""

    async def run() -> dict[str, int]:
        conn = await asyncpg.connect(direct_url)
        try:
            rows = await conn.fetch(
                "SELECT application_name FROM pg_stat_activity WHERE datname = $1"
                " AND pid <> pg_backend_pid()",
                database,
            )
        finally:
            await conn.close()
        listening = sum(1 for r in rows if r["application_name"] == LISTENER_NAME)
        return {"listening": listening, "all": len(rows)}

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


def server_settings_through(pooler_port: int, database: str) -> list[tuple[str, str]]:
    """``jit`` and ``search_path`` on every server connection of the pooler's pool: one
    open transaction each, so that each holds a server connection of its own."""

    async def run() -> list[tuple[str, str]]:
        url = f"postgresql://postgres@127.0.0.1:{pooler_port}/{database}"
        conns = [await asyncpg.connect(url, statement_cache_size=0) for _ in range(POOL_SIZE)]
        try:
            for conn in conns:
                await conn.execute("BEGIN")
            rows = [
                await conn.fetchrow(
                    "SELECT current_setting('jit') AS jit, current_setting('search_path') AS path"
                )
                for conn in conns
            ]
            return [(row["jit"], row["path"]) for row in rows if row is not None]
        finally:
            for conn in conns:
                await conn.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


def test_two_instances_behind_pgbouncer_in_transaction_mode_do_everything_without_error(
    pooled: Pooled, hooks: Hooks
) -> None:
    first, second = pooled.first, pooled.second
    creator = make_creator_in(pooled.direct_url)
    [token] = access_tokens(pooled.direct_url, creator, 1)
    with (
        loopback_client(base_url=first.url, timeout=30) as one,
        loopback_client(base_url=second.url, timeout=30) as two,
        loopback_client(base_url=second.url, cookies={"anonbox_session": token}) as browser,
    ):
        # The relay and the couriers: a webhook, delivered through leases taken on the
        # pooled connections of whichever instance claims them.
        added = one.post("/webhooks", json={"url": hooks.url}, headers=creator.headers)
        assert added.status_code == 201, added.text

        # Live fan-out: a stream open on the second instance hears a post to the first.
        path = f"/dashboard/links/{creator.link_id}/events"
        with browser.stream("GET", path, timeout=httpx.Timeout(10.0, read=5.0)) as events:
            assert events.status_code == 200
            lines = events.iter_lines()
            assert next(lines) == ": connected"
            time.sleep(0.5)
            posted = time.monotonic()
            sent = one.post(f"/message/{creator.link_id}", json={"message_content": "live"})
            assert sent.status_code == 201, sent.text
            for line in lines:
                if line.startswith("data: "):
                    assert "live" in line
                    break
            assert time.monotonic() - posted < 2.0

        # Posts in parallel through both instances: group commits, many transactions at
        # once on five server connections.
        def post(n: int) -> httpx.Response:
            api = (one, two)[n % 2]
            return api.post(f"/message/{creator.link_id}", json={"message_content": f"#{n}"})

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(post, range(POSTS)))
        assert [a.status_code for a in answers] == [201] * POSTS, [
            a.text for a in answers if a.status_code != 201
        ]
        ids = [a.json()["data"]["id"] for a in answers]

        # Replies and likes, each through the instance that did not take the post.
        def answer(n: int) -> tuple[int, int]:
            api = (two, one)[n % 2]
            url = f"/message/{creator.link_id}/{ids[n]}"
            replied = api.post(url, json={"message_content": f"reply {n}"}, headers=creator.headers)
            liked = api.put(f"{url}/like", headers=creator.headers)
            return replied.status_code, liked.status_code

        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(answer, range(10)))
        assert all(r in {200, 201} and lk == 200 for r, lk in statuses), statuses

        # The inbox, read through either instance, holds every post, the replies and likes.
        for api in (one, two):
            seen: dict[str, dict[str, object]] = {}
            cursor = None
            while True:
                params = {"limit": 50} | ({"cursor": cursor} if cursor else {})
                page = api.get(
                    f"/message/{creator.link_id}", params=params, headers=creator.headers
                )
                assert page.status_code == 200, page.text
                data = page.json()["data"]
                seen |= {item["id"]: item for item in data["items"]}
                cursor = data.get("next_cursor")
                if not cursor:
                    break
            assert set(ids) <= set(seen)
            assert all(seen[ids[n]]["like_by_creator"] for n in range(10)), "a like is missing"
            thread = api.get(f"/message/{creator.link_id}/{ids[0]}", headers=creator.headers)
            assert thread.status_code == 200, thread.text
            assert "reply 0" in thread.text

        # Every post and reply reached the webhook, through the relay and the couriers.
        expected = POSTS + 1 + 10
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(hooks.bodies) < expected:
            time.sleep(0.1)
        kinds = [body.get("type") for body in hooks.bodies]
        assert kinds.count("message.created") == POSTS + 1, (len(kinds), Counter(kinds))
        assert kinds.count("reply.created") == 10, kinds

    # Through the pooler: its transactions counted, PostgreSQL never past its five server
    # connections for the two instances plus one LISTEN each, straight to the database.
    [stats] = [
        row for row in show(pooled.pooler_port, "STATS") if row["database"] == pooled.database
    ]
    assert int(stats["total_xact_count"]) > 2 * POSTS
    connections = server_connections(pooled.direct_url, pooled.database)
    assert connections["listening"] == 2, connections
    assert connections["all"] <= POOL_SIZE + 2, connections
    # No session state left behind on the server connections (asyncpg's own JIT toggle
    # around its type introspection once left ``jit`` off on some: core.pooled).
    left = server_settings_through(pooled.pooler_port, pooled.database)
    assert left == [("on", '"$user", public')] * POOL_SIZE, left
    assert errors_in(first) == []
    assert errors_in(second) == []
