"""Nothing sent to the fediverse is lost when the process is killed.

A follower's server (the stand-in, ``standin.py``) is down (503) when a Follow comes: the
Accept waits in ``federation_deliveries``. The anonbox process is then SIGKILLed, the
follower's server comes back, and a new process on the same database and address delivers
the Accept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import make_creator_in
from tests.federation.conftest import open_to_follows, wait_for
from tests.federation.standin import follow_of, post, serving, signed
from tests.server import Server
from tests.support.db import query
from tests.support.http import loopback_client


def _server(url: str, log: Path, port: int | None = None) -> Server:
    made = Server(
        url,
        log,
        env={"ANONBOX_FEDERATION_ALLOW_PRIVATE": "true", "ANONBOX_FEDERATION_RETRY_SECONDS": "0.5"},
    )
    if port is not None:  # the same address as before: actors' ids are under it
        made.port, made.url = port, f"http://127.0.0.1:{port}"
    made.extra_env["ANONBOX_PUBLIC_URL"] = made.url
    return made.start(60)


def _attempts(url: str) -> int:
    rows = query(url, "SELECT attempts FROM federation_deliveries")
    return max((int(row["attempts"]) for row in rows), default=0)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_accept_waiting_for_a_down_server_survives_sigkill(
    backend: str, database_url_factory: Callable[[str], str], tmp_path: Path
) -> None:
    url = database_url_factory(backend)
    first = _server(url, tmp_path / "first.log")
    creator = make_creator_in(url)
    with serving() as remote, loopback_client(base_url=first.url, timeout=30) as api:
        remote.inbox_status = 503
        actor_url, path = open_to_follows(first, api, creator)
        follow = follow_of(remote, actor_url)
        headers = signed(first, path, follow, key=remote.key, key_id=remote.key_id)
        assert post(api, path, follow, headers).status_code == 202
        wait_for(lambda: remote.received)  # tried, refused by the down server
        # ... and that attempt recorded: else the claim's lease (60 s) holds it back first.
        wait_for(lambda: _attempts(url) >= 1)
        first.kill()
        tried = len(remote.received)
        remote.inbox_status = 202
        second = _server(url, tmp_path / "second.log", port=first.port)
        try:
            wait_for(lambda: len(remote.received) > tried, seconds=60)
            accept = json.loads(remote.received[-1][1])
            assert accept["type"] == "Accept"
            assert accept["object"]["id"] == follow["id"]
        finally:
            second.stop()


def test_without_allow_private_no_loopback_peer_is_read_or_sent_to(
    database_url_factory: Callable[[str], str], tmp_path: Path
) -> None:
    url = database_url_factory("sqlite")
    made = Server(url, tmp_path / "strict.log")  # ANONBOX_FEDERATION_ALLOW_PRIVATE unset
    made.extra_env["ANONBOX_PUBLIC_URL"] = made.url
    strict = made.start(60)
    creator = make_creator_in(url)
    try:
        with serving() as remote, loopback_client(base_url=strict.url, timeout=30) as api:
            actor_url, path = open_to_follows(strict, api, creator)
            follow = follow_of(remote, actor_url)
            headers = signed(strict, path, follow, key=remote.key, key_id=remote.key_id)
            refused = post(api, path, follow, headers)
            assert refused.status_code == 401, refused.text
            assert "private or local" in refused.json()["message"]
            assert remote.received == []
    finally:
        strict.stop()
