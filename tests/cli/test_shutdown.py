"""SIGTERM under load is a graceful stop: requests in flight are answered in full, new
connections are refused, the process exits cleanly, and every post that got a 201 is
there after a restart on the same database.

One stop per database: a module fixture runs the scenario once and records what it saw;
each test below checks one property of that record. tests/core/test_durability.py is the
SIGKILL counterpart.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.actions import Poster, whole_inbox
from tests.conftest import Creator, ModuleDatabase, make_creator_in
from tests.server import Server

POSTERS = 6
ACKS_BEFORE_SIGTERM = 60  # acknowledgements seen before the signal: the load is real
EXIT_TIMEOUT = 30.0  # seconds the server may take to stop; only a guard against hangs
HELD_TEXT = "held across the signal"


class HeldPost:
    """A POST whose head goes first with ``Expect: 100-continue``: the server's interim
    100 answer proves the application is already handling it. The body follows later."""

    def __init__(self, port: int, link_id: str, text: str) -> None:
        self.body = json.dumps({"message_content": text}).encode()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=EXIT_TIMEOUT)
        self.sock.sendall(
            (
                f"POST /message/{link_id} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(self.body)}\r\n"
                "Expect: 100-continue\r\nConnection: close\r\n\r\n"
            ).encode()
        )

    def interim(self) -> bytes:
        """The interim answer's head, as received."""
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            received += chunk
        return received

    def finish(self) -> bytes:
        """Send the body; everything the server answers until it closes the connection."""
        self.sock.sendall(self.body)
        answer = b""
        while chunk := self.sock.recv(65536):
            answer += chunk
        self.sock.close()
        return answer


def parsed(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ", 2)[1]), headers, body


def refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return False
    except ConnectionRefusedError:
        return True


@dataclass
class Stop:
    """What one SIGTERM under load looked like from outside."""

    server: Server
    creator: Creator
    held_interim: bytes = b""
    held_answer: bytes | str = b""  # the raw answer, or the error that replaced it
    load_stalled: bool = False
    acknowledged_at_signal: int = 0  # by the posters, when SIGTERM was sent
    exit_status: int | None = None  # None: still running after EXIT_TIMEOUT
    posters: list[Poster] = field(default_factory=list)
    refused_after_exit: bool = False
    listed_after_restart: dict[str, str] = field(default_factory=dict)
    log: str = ""

    @property
    def held(self) -> tuple[int, dict[str, str], bytes]:
        assert isinstance(self.held_answer, bytes), self.held_answer
        return parsed(self.held_answer)

    @property
    def acknowledged(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for poster in self.posters:
            found.update(poster.acknowledged)
        status, _, body = self.held
        if status == 201:
            found[json.loads(body)["data"]["id"]] = HELD_TEXT
        return found


def sigterm_under_load(server: Server, creator: Creator) -> Stop:
    stop = Stop(server, creator)
    held = HeldPost(server.port, creator.link_id, HELD_TEXT)
    stop.held_interim = held.interim()
    progress = threading.Semaphore(0)
    stop.posters = [
        Poster(server.url, creator.link_id, f"poster {n}", progress) for n in range(POSTERS)
    ]
    for poster in stop.posters:
        poster.start()
    stop.load_stalled = not all(progress.acquire(timeout=30) for _ in range(ACKS_BEFORE_SIGTERM))

    stop.acknowledged_at_signal = sum(len(poster.acknowledged) for poster in stop.posters)
    server.terminate()
    try:
        stop.held_answer = held.finish()
    except OSError as exc:
        stop.held_answer = repr(exc)
    stop.exit_status = server.exit_status(EXIT_TIMEOUT)
    if stop.exit_status is None:
        server.kill()  # recorded as a failure; the rest still says what happened
    for poster in stop.posters:
        poster.join(timeout=EXIT_TIMEOUT)
    stop.refused_after_exit = refused(server.port)
    stop.log = server.log()
    return stop


@pytest.fixture(scope="module")
def stop(
    module_database: ModuleDatabase,
    tmp_path_factory: pytest.TempPathFactory,
) -> Stop:
    backend = module_database.backend
    url = module_database.url
    logs = tmp_path_factory.mktemp(f"shutdown-{backend}")
    first = Server(url, logs / "stopped.log").start()
    try:
        result = sigterm_under_load(first, make_creator_in(url))
    finally:
        first.stop()
    second = Server(url, logs / "restarted.log").start()
    try:
        result.listed_after_restart = whole_inbox(second.url, result.creator)
    finally:
        second.stop()
    return result


def posters_summary(stop: Stop) -> list[dict[str, Any]]:
    return [
        {
            "poster": p.label,
            "acknowledged": len(p.acknowledged),
            "ended_by": p.ended_by,
            "unexpected": p.unexpected,
            "alive": p.is_alive(),
        }
        for p in stop.posters
    ]


@pytest.mark.slow
def test_the_load_was_running_when_the_signal_came(stop: Stop) -> None:
    assert not stop.load_stalled, posters_summary(stop)
    assert stop.acknowledged_at_signal >= ACKS_BEFORE_SIGTERM
    assert stop.held_interim.startswith(b"HTTP/1.1 100 "), stop.held_interim


@pytest.mark.slow
def test_the_server_stops_within_a_bounded_wait(stop: Stop) -> None:
    assert stop.exit_status is not None, f"still running {EXIT_TIMEOUT}s after SIGTERM"


@pytest.mark.slow
def test_the_server_exits_with_status_0(stop: Stop) -> None:
    assert stop.exit_status == 0, f"exit status {stop.exit_status}"


@pytest.mark.slow
def test_a_request_in_flight_at_the_signal_is_answered_in_full(stop: Stop) -> None:
    status, headers, body = stop.held
    assert status == 201, stop.held_answer
    assert headers["content-type"].startswith("application/json"), headers
    assert len(body) == int(headers["content-length"]), stop.held_answer
    assert json.loads(body)["data"]["message_content"] == HELD_TEXT


@pytest.mark.slow
def test_every_request_got_a_whole_answer_or_a_connection_error(stop: Stop) -> None:
    summary = posters_summary(stop)
    assert all(p["unexpected"] == [] for p in summary), summary
    assert all(p["ended_by"] is not None and not p["alive"] for p in summary), summary


@pytest.mark.slow
def test_new_connections_are_refused_after_the_exit(stop: Stop) -> None:
    assert stop.refused_after_exit


@pytest.mark.slow
def test_every_acknowledged_post_is_listed_after_a_restart(stop: Stop) -> None:
    acknowledged = stop.acknowledged
    listed = stop.listed_after_restart
    lost = sorted(set(acknowledged) - set(listed))
    assert lost == [], f"{len(lost)} of {len(acknowledged)} acknowledged posts lost: {lost[:5]}"
    assert {i: listed[i] for i in acknowledged} == acknowledged


@pytest.mark.slow
def test_nothing_is_listed_that_was_not_sent(stop: Stop) -> None:
    sent = {HELD_TEXT}.union(*(p.attempted for p in stop.posters))
    texts = list(stop.listed_after_restart.values())
    assert sorted(set(texts) - sent) == []
    assert len(texts) == len(set(texts)), "a post was stored twice"


@pytest.mark.slow
def test_the_server_logged_no_error_while_stopping(stop: Stop) -> None:
    assert "Traceback" not in stop.log, stop.log[-5000:]
    errors = [
        line
        for line in stop.log.splitlines()
        if line.startswith(("ERROR:", "CRITICAL:")) or '"level":"error"' in line
    ]
    assert errors == [], errors
