"""Clients that hold connections open without finishing a request: a request head must
arrive whole within ANONBOX_HEAD_TIMEOUT_SECONDS (1 s here), however it trickles in."""

from __future__ import annotations

import socket
import time

import pytest

from tests.server import Server
from tests.support.http import loopback_client
from tests.support.servers import own_server

HEAD_TIMEOUT = 1.0


strict = own_server(
    "strict", {"ANONBOX_HEAD_TIMEOUT_SECONDS": str(HEAD_TIMEOUT)}, backends=("sqlite",)
)


def closed_after(sock: socket.socket, trickle: bytes, limit: float) -> float | None:
    """Send ``trickle`` a byte every 0.2 s; seconds until the server closed, or None."""
    started = time.monotonic()
    sock.settimeout(0.2)
    for byte in trickle:
        try:
            sock.sendall(bytes([byte]))
            if sock.recv(1024) == b"":
                return time.monotonic() - started
        except TimeoutError:
            pass
        except (BrokenPipeError, ConnectionResetError):
            return time.monotonic() - started
        if time.monotonic() - started > limit:
            return None
    return None


@pytest.mark.parametrize(
    "trickle",
    [
        pytest.param(b"", id="nothing-at-all"),
        pytest.param(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200, id="slowloris"),
    ],
)
def test_a_request_head_that_does_not_arrive_in_time_closes_the_connection(
    strict: Server, trickle: bytes
) -> None:
    with socket.create_connection(("127.0.0.1", strict.port)) as sock:
        if trickle:
            waited = closed_after(sock, trickle, limit=HEAD_TIMEOUT + 4)
        else:
            sock.settimeout(HEAD_TIMEOUT + 4)
            started = time.monotonic()
            assert sock.recv(1024) == b""
            waited = time.monotonic() - started
    assert waited is not None, "the connection was still open"
    assert waited >= HEAD_TIMEOUT * 0.9  # not closed before its time


def test_a_kept_alive_connection_serves_requests_past_the_head_timeout(strict: Server) -> None:
    """The limit is on a head, not on a connection's life."""
    with loopback_client(base_url=strict.url) as client:
        for _ in range(3):
            assert client.get("/healthz").status_code == 200
            time.sleep(HEAD_TIMEOUT / 2)
        assert client.get("/healthz").status_code == 200


MAX_CONNECTIONS = 4


capped = own_server(
    "capped",
    {"ANONBOX_MAX_CONNECTIONS": str(MAX_CONNECTIONS), "ANONBOX_HEAD_TIMEOUT_SECONDS": "30"},
    backends=("sqlite",),
)


def test_connections_past_the_cap_get_a_503_envelope_until_some_close(capped: Server) -> None:
    """Idle connections that never send a request hold their places, up to the cap; one
    more is answered at once in the error envelope, and is served again once they go."""
    held = [socket.create_connection(("127.0.0.1", capped.port)) for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.2)  # the server has accepted them all
        with loopback_client(base_url=capped.url, timeout=10) as client:
            refused = client.get("/healthz")
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "1"
        body = refused.json()
        assert body["error"]["code"] == "service_unavailable"
        assert body["metadata"]["url"] == "/healthz"
        assert body["metadata"]["method"] == "GET"
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.2)
    with loopback_client(base_url=capped.url, timeout=10) as client:
        assert client.get("/healthz").status_code == 200
