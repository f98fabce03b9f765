"""The places of the live streams are given back when the client leaves (issue 39, item 7).

A session may hold five live inboxes at once, an overlay's address five overlays. A
client that opens a stream and drops the connection, before the answer has started or
after its first bytes, gives its place back as its request ends: after a thousand such
drops, a new stream of the same session opens at once, and a sixth open one is still
refused. Before, a place taken by a stream that never started came back only when the
garbage collector found it, and a few hundred quick drops locked a session out.

Each request is waited for, not timed: the server counts a request in its metrics once
it has finished with it, so the test reads /metrics until every dropped request is
counted, and then asks at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
import time
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import Creator
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.metrics import scrape
from tests.support.signin import session_token

DROPS = 1_000
AT_ONCE = 5  # the cap: a batch that all find room when every earlier place is back
# How a client drops its stream: as soon as its request is written (the server may not
# have started the answer, or even read the request), once the answer's head has come,
# and once the first bytes of its body have.
HOW = ("at once", "after the head", "after the first bytes")


def _request(path: str, cookie: str | None) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Accept: text/event-stream"]
    if cookie:
        lines.append(f"Cookie: anonbox_session={cookie}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _drop(host: str, port: int, request: bytes, how: str) -> int | None:
    """One stream asked for and dropped; its status, when the client waited for one."""
    reader, writer = await asyncio.open_connection(host, port)
    status = None
    try:
        writer.write(request)
        await writer.drain()
        if how != "at once":
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            if how == "after the first bytes":
                await reader.readexactly(1)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    return status


def _finished(client: httpx.Client, route: str) -> int:
    """Requests of ``route`` the server has finished with (any status)."""
    return int(
        sum(
            count
            for (name, labels), count in scrape(client).items()
            if name == "anonbox_http_requests_total" and ("route", route) in labels
        )
    )


async def _wait_finished(client: httpx.Client, route: str, expected: int) -> None:
    """Until the server has finished with ``expected`` requests of ``route``."""
    async with asyncio.timeout(60):
        # The server is another process: nothing of it to wait on but what it answers.
        while await asyncio.to_thread(_finished, client, route) < expected:  # noqa: ASYNC110
            await asyncio.sleep(0.02)


async def _drop_many(server: Server, path: str, route: str, cookie: str | None) -> list[int]:
    """``DROPS`` streams asked for and dropped, ``AT_ONCE`` in parallel, each batch waited
    for; the statuses the clients saw."""
    address = urlsplit(server.url)
    host, port = address.hostname or "127.0.0.1", address.port or 80
    request = _request(path, cookie)
    seen: list[int] = []
    with loopback_client(base_url=server.url, timeout=30) as metrics:
        finished = await asyncio.to_thread(_finished, metrics, route)
        for batch in range(DROPS // AT_ONCE):
            statuses = await asyncio.gather(
                *(
                    _drop(host, port, request, HOW[(batch * AT_ONCE + n) % len(HOW)])
                    for n in range(AT_ONCE)
                )
            )
            seen += [status for status in statuses if status is not None]
            finished += AT_ONCE
            await _wait_finished(metrics, route, finished)
    return seen


def _still_capped(client: httpx.Client, path: str) -> None:
    """A new stream opens (200, its first line read) with no wait, and so do four more; a
    sixth, while they are open, is refused."""
    with contextlib.ExitStack() as open_streams:
        readers = []  # kept: a reader let go closes its connection, and gives its place back
        for n in range(AT_ONCE):
            stream = open_streams.enter_context(client.stream("GET", path))
            assert stream.status_code == 200, (n, stream.read())
            readers.append(stream.iter_lines())
            assert next(readers[-1]) == ": connected"
        refused = client.get(path)
        assert refused.status_code == 429, refused.text
        assert "At most 5" in refused.text


def _route_of(client: httpx.Client, prefix: str) -> str:
    """The route template the metrics count a stream's requests under, once the server
    has finished with the first one."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        routes = {
            dict(labels).get("route", "")
            for name, labels in scrape(client)
            if name == "anonbox_http_requests_total"
        }
        found = [r for r in routes if r.startswith(prefix) and r.endswith("/events")]
        if found:
            [route] = found
            return route
        time.sleep(0.02)
    raise AssertionError(f"no request of {prefix}…/events was ever counted")


@pytest.mark.parametrize("what", ["live inbox", "overlay"])
def test_a_thousand_dropped_streams_give_their_places_back(
    what: str, server: Server, creator: Creator
) -> None:
    cookie = session_token(server, creator.user_id)
    with loopback_client(
        base_url=server.url,
        timeout=30,
        cookies={"anonbox_session": cookie},
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=0),
    ) as browser:
        if what == "live inbox":
            path, prefix, cookie_sent = (
                f"/dashboard/links/{creator.link_id}/events",
                "/dashboard/links/",
                cookie,
            )
        else:
            page = browser.get("/dashboard/stream")
            csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
            assert csrf, page.text
            on = browser.post("/dashboard/stream/address", data={"csrf_token": csrf.group(1)})
            assert on.status_code == 303, on.text
            shown = re.search(
                r'id="overlay-url" type="text" value="([^"]+)"',
                browser.get("/dashboard/stream").text,
            )
            assert shown
            path = urlsplit(html.unescape(shown.group(1))).path + "/events"
            prefix, cookie_sent = "/stream/", None  # OBS sends no cookie
        with browser.stream("GET", path) as first:  # the route, counted once in the metrics
            assert first.status_code == 200
        route = _route_of(browser, prefix)

        seen = asyncio.run(_drop_many(server, path, route, cookie_sent))

        # Every client that waited for an answer got a stream: each batch found the
        # places of the earlier ones given back.
        assert len(seen) == DROPS - len(range(0, DROPS, len(HOW)))
        assert set(seen) == {200}
        _still_capped(browser, path)
