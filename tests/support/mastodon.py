"""A Mastodon client API on loopback: ``mastodon-mock`` (PyPI), a stateful FastAPI
server that implements apps, OAuth (authorization code; it advertises PKCE S256),
accounts, statuses and media, run from a venv of its own.

The tests install it themselves from the package registry, pinned with hashes
(``peers/mastodon-mock.lock``), into a venv under ``~/.cache/anonbox-tests`` named by the
lock's hash, so it is made once per machine and its FastAPI never meets anonbox's
dependencies. Its authorization page is an account picker: a person "signs in" by
POSTing it with a ``username``; accounts are made with its ``/api/v1/_mock/dev_user``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.server import free_port
from tests.support.http import loopback_client

LOCK = Path(__file__).parent / "peers" / "mastodon-mock.lock"
_CACHE = Path(os.environ.get("ANONBOX_TEST_PEERS", Path.home() / ".cache" / "anonbox-tests"))


def installed() -> Path:
    """The venv's ``mastodon_mock`` command, installed from the lock if not yet."""
    digest = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
    venv = _CACHE / f"mastodon-mock-{digest}"
    command = venv / "bin" / "mastodon_mock"
    _CACHE.mkdir(parents=True, exist_ok=True)
    with open(_CACHE / f"mastodon-mock-{digest}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # one installer at a time (xdist workers)
        if not (venv / ".installed").exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            subprocess.run(
                [
                    str(venv / "bin" / "python"),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--require-hashes",
                    "--no-deps",
                    "-r",
                    str(LOCK),
                ],
                check=True,
            )
            (venv / ".installed").touch()
    return command


@dataclass
class MastodonAccount:
    id: str
    username: str
    token: str  # a token of its own, to read what anonbox posted


class Mastodon:
    """One mastodon-mock server."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self._process = subprocess.Popen(
            [
                str(installed()),
                "serve",
                "--in-memory",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--domain",
                f"127.0.0.1:{self.port}",
                "--log-level",
                "warning",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.http = loopback_client(base_url=self.url, timeout=30)
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.http.get("/api/v1/instance").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mastodon-mock did not start: see {log}")
            time.sleep(0.1)

    def stop(self) -> None:
        self.http.close()
        self._process.terminate()
        self._process.wait(10)
        self._log.close()

    def new_account(self) -> MastodonAccount:
        username = f"u{uuid.uuid4().hex[:10]}"
        made = self.http.post("/api/v1/_mock/dev_user", json={"username": username})
        assert made.status_code == 200, made.text
        body = made.json()
        return MastodonAccount(str(body["id"]), username, str(body["access_token"]))

    def authorize(self, authorization_url: str, account: MastodonAccount) -> str:
        """The person at the instance: opens the authorization page and picks their
        account; where the instance sends the browser back (anonbox's callback)."""
        page = self.http.get(authorization_url)
        assert page.status_code == 200, page.text
        query = httpx.URL(authorization_url).params
        answer = self.http.post(
            "/oauth/authorize",
            data={
                "username": account.username,
                "redirect_uri": query["redirect_uri"],
                "client_id": query["client_id"],
                "scope": query.get("scope", "read"),
                "state": query["state"],
            },
        )
        assert answer.status_code == 302, answer.text
        return answer.headers["location"]

    def statuses_of(self, account: MastodonAccount) -> list[dict[str, Any]]:
        found = self.http.get(
            f"/api/v1/accounts/{account.id}/statuses",
            headers={"Authorization": f"Bearer {account.token}"},
        )
        assert found.status_code == 200, found.text
        statuses: list[dict[str, Any]] = found.json()
        return statuses

    def revoke(self, token: str) -> None:
        """The person revokes anonbox's access at their instance."""
        revoked = self.http.post("/oauth/revoke", data={"token": token})
        assert revoked.status_code == 200, revoked.text


def running_mastodon(log: Path) -> Iterator[Mastodon]:
    server = Mastodon(log)
    try:
        yield server
    finally:
        server.stop()
