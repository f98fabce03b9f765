"""Live fan-out without polling: a dashboard's stream is woken by its process's one
subscription (PostgreSQL LISTEN/NOTIFY, or the outbox tail on SQLite), so a message
posted to one instance reaches a stream on another at once, and idle streams ask the
database nothing. Each test runs on SQLite (two processes sharing one file) and on
PostgreSQL (two instances sharing one database)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.conftest import ModuleDatabase, make_creator_in
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.metrics import scrape, value
from tests.support.signin import access_tokens

STREAMS = 1000
PER_SESSION = 5  # the most streams one sign-in session may hold
OPENING = 50  # streams being opened at once


@pytest.fixture(scope="module")
def pair(
    module_database: ModuleDatabase,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Server, Server]]:
    """Two instances on one database, each allowing enough connections for the streams."""
    url = module_database.url
    logs = tmp_path_factory.mktemp("fanout-logs")
    env = {"ANONBOX_MAX_CONNECTIONS": str(STREAMS + 100)}
    first = Server(url, logs / f"a-{module_database.backend}.log", env=env).start(60)
    second = Server(url, logs / f"b-{module_database.backend}.log", env=env).start(60)
    yield first, second
    second.stop()
    first.stop()


def post(server: Server, link_id: str, text: str) -> None:
    with loopback_client(base_url=server.url, timeout=10) as api:
        answer = api.post(f"/message/{link_id}", json={"message_content": text})
        assert answer.status_code == 201, answer.text


def queries(server: Server) -> float:
    with loopback_client(base_url=server.url, timeout=10) as api:
        return value(scrape(api), "anonbox_db_queries")


def test_a_message_posted_to_one_instance_reaches_a_stream_on_the_other_at_once(
    pair: tuple[Server, Server],
) -> None:
    first, second = pair
    creator = make_creator_in(first.database_url)
    [token] = access_tokens(first.database_url, creator, 1)
    path = f"/dashboard/links/{creator.link_id}/events"
    timeout = httpx.Timeout(10.0, read=5.0)
    with (
        loopback_client(base_url=second.url, cookies={"anonbox_session": token}) as browser,
        browser.stream("GET", path, timeout=timeout) as events,
    ):
        assert events.status_code == 200
        lines = events.iter_lines()
        assert next(lines) == ": connected"
        time.sleep(0.5)  # the stream has had its first look
        posted = time.monotonic()
        post(first, creator.link_id, "from the other instance")
        for line in lines:
            if line.startswith("data: "):
                waited = time.monotonic() - posted
                assert "from the other instance" in line
                break
    assert waited < 1.0, f"arrived after {waited:.2f} s"


async def _hold_streams(base_url: str, path: str, tokens: list[str], ready: asyncio.Event) -> None:
    """Open PER_SESSION streams per token, each until its first comment, then hold them."""
    clients = [
        httpx.AsyncClient(base_url=base_url, cookies={"anonbox_session": token}, timeout=30)
        for token in tokens
    ]
    opened: list[tuple[object, object]] = []
    # Opened OPENING at a time: each opening checks its session, and a thousand at once
    # on a loaded machine wait longer than the pool's 5 s for a connection (a 503). What
    # is measured is the streams once open.
    opening = asyncio.Semaphore(OPENING)

    async def one(client: httpx.AsyncClient) -> None:
        async with opening:
            request = client.build_request("GET", path)
            response = await client.send(request, stream=True)
            assert response.status_code == 200
            lines = response.aiter_lines()
            assert await anext(lines) == ": connected"
        opened.append((response, lines))  # keep both: dropping the iterator closes it

    try:
        await asyncio.gather(*(one(c) for c in clients for _ in range(PER_SESSION)))
        ready.set()
        await asyncio.sleep(3600)  # held until cancelled
    finally:
        for client in clients:
            await client.aclose()


async def _opened(holder: asyncio.Task[None], ready: asyncio.Event) -> None:
    """Until every stream is open; raises what failed if one could not open (waiting on
    ``ready`` alone would wait for ever, and hang the test, when one was refused)."""
    waiting = asyncio.ensure_future(ready.wait())
    done, _ = await asyncio.wait({holder, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if holder in done:
        waiting.cancel()
        holder.result()
        raise AssertionError("the streams ended before they were all open")


def test_a_thousand_idle_streams_ask_the_database_nothing(pair: tuple[Server, Server]) -> None:
    server = pair[1]
    creator = make_creator_in(server.database_url)
    tokens = access_tokens(server.database_url, creator, STREAMS // PER_SESSION)
    path = f"/dashboard/links/{creator.link_id}/events"

    def idle_queries() -> float:
        before = queries(server)
        time.sleep(3)
        return queries(server) - before - 1  # the scrape itself asks nothing; one for slack

    baseline = idle_queries()  # the process's own subscription (and the relay): per process

    loop = asyncio.new_event_loop()
    ready = asyncio.Event()
    holder = loop.create_task(_hold_streams(server.url, path, tokens, ready))
    with ThreadPoolExecutor(1) as pool:
        opening = pool.submit(loop.run_until_complete, _opened(holder, ready))
        try:
            opening.result(timeout=120)
        except BaseException:
            loop.call_soon_threadsafe(holder.cancel)  # so that the pool's thread ends
            raise
        held = pool.submit(loop.run_forever)
        try:
            time.sleep(1)  # every stream has had its first look
            with_streams = idle_queries()
            # Slack of two rounds of the notification worker's own looking (4 reads a round,
            # twice a second, so a 3 s window holds 5 or 6 rounds); per-stream polling
            # would be 1,000 reads a second.
            assert with_streams <= max(baseline, 0) + 8, (baseline, with_streams)
            # The count is alive: one message wakes every stream of its link, each of
            # which asks once or twice (its session, what is new).
            before = queries(server)
            post(server, creator.link_id, "wake up")
            time.sleep(2)
            assert queries(server) - before >= STREAMS
        finally:
            loop.call_soon_threadsafe(holder.cancel)
            loop.call_soon_threadsafe(loop.stop)
            held.result(timeout=60)
    loop.run_until_complete(asyncio.gather(holder, return_exceptions=True))
    loop.close()
