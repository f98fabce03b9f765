"""/healthz says the process is up; /readyz says the database answers, and 503 when it does not."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.conftest import make_creator_in
from tests.server import Server
from tests.support.http import loopback_get


@pytest.mark.parametrize(("path", "message"), [("/healthz", "Up"), ("/readyz", "Ready")])
def test_probe_answers_200_in_the_envelope(api: httpx.Client, path: str, message: str) -> None:
    before = datetime.now(UTC)
    response = api.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == "application/json"
    body = response.json()
    assert set(body) == {"status_code", "message", "data", "metadata"}
    assert body["status_code"] == 200
    assert body["message"] == message
    assert body["data"] == {"status": "ok"}
    metadata = body["metadata"]
    assert metadata["method"] == "GET"
    assert metadata["url"] == path
    assert metadata["ip"] == "127.0.0.1"
    assert isinstance(metadata["execution_time_ms"], int | float)
    assert 0 <= metadata["execution_time_ms"] < 5000
    stamp = datetime.fromisoformat(metadata["timestamp"].replace("Z", "+00:00"))
    assert stamp.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= stamp <= datetime.now(UTC) + timedelta(seconds=1)


class TcpProxy:
    """A loopback TCP relay that can be cut and restored, to take a database "off the network"."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def open(self) -> TcpProxy:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def cut(self) -> None:
        """Refuse new connections and break every open one."""
        with self._lock:
            sockets, self._sockets = self._sockets, []
            if self._listener is not None:
                sockets.append(self._listener)
                self._listener = None
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


def poll(
    url: str, until: Callable[[httpx.Response], bool], timeout: float = 20.0
) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        response = loopback_get(url, timeout=15)
        if until(response) or time.monotonic() > deadline:
            return response
        time.sleep(0.2)


@pytest.fixture
def proxied_postgres(
    database_url_factory: Callable[[str], str],
) -> Iterator[tuple[str, TcpProxy]]:
    direct = database_url_factory("postgresql")
    credentials, rest = direct.split("@", 1)
    host_port, database = rest.split("/", 1)
    host, _, port = host_port.partition(":")
    proxy = TcpProxy((host, int(port or 5432))).open()
    yield f"{credentials}@127.0.0.1:{proxy.port}/{database}", proxy
    proxy.cut()


@pytest.mark.slow
def test_database_outage_is_503_with_retry_after_and_recovers(
    proxied_postgres: tuple[str, TcpProxy], tmp_path: Path
) -> None:
    url, proxy = proxied_postgres
    server = Server(url, tmp_path / "server.log").start()
    try:
        creator = make_creator_in(url)
        inbox = f"{server.url}/message/{creator.link_id}"
        assert loopback_get(f"{server.url}/readyz").status_code == 200

        proxy.cut()
        down = poll(f"{server.url}/readyz", lambda r: r.status_code != 200)
        sent = httpx.post(inbox, json={"message_content": "anyone there?"}, timeout=15)
        for response in (down, sent):
            assert response.status_code == 503, response.text
            assert int(response.headers["retry-after"]) > 0
            body = response.json()
            assert body["status_code"] == 503
            assert body["data"] is None
            assert body["error"]["code"] == "service_unavailable"
            assert "Traceback" not in response.text
        assert loopback_get(f"{server.url}/healthz").status_code == 200

        proxy.open()
        up = poll(f"{server.url}/readyz", lambda r: r.status_code == 200)
        assert up.status_code == 200, up.text
        again = httpx.post(inbox, json={"message_content": "back?"}, timeout=15)
        assert again.status_code == 201, again.text
    finally:
        server.stop()
