"""The processes a run starts: anonbox (in each of its configurations, ``APPS``) or the floor
(``bench/floor.py``) on one database, the ``anonbox`` CLI, plain HTTP requests to them, and
what the webhook and muted-word apps need around their turn (a receiver that never
answers, the words muted and unmuted)."""

# ruff: noqa: S603, S310

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pooler  # bench/pooler.py, beside this module
from layout import BENCH, LOGS, ROOT

if TYPE_CHECKING:
    from scenarios import Fixture

PY = sys.executable

# Rate limits out of reach. The window is one second so the in-memory sliding-window log
# holds about one second of hits, as the real limits bound it (refused hits store nothing:
# at the defaults a log never holds more than its max_requests, 1,200 for a link). A
# 60-second window with a huge count would hold 60 s of every hit, which no real
# configuration does, and would show up as RSS that production never sees.
HUGE_LIMITS = {
    "ANONBOX_LIMIT_SENDER_LINK": "1000000000/1",
    "ANONBOX_LIMIT_SENDER": "1000000000/1",
    "ANONBOX_LIMIT_LINK": "1000000000/1",
    "ANONBOX_LIMIT_SERVICE": "1000000000/1",
    "ANONBOX_LIMIT_CARD": "1000000000/1",  # the pictures (card.png, preview.png) per client
}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def anonbox_env(url: str) -> dict[str, str]:
    env = {**os.environ, **HUGE_LIMITS, "ANONBOX_DATABASE_URL": url}
    env.pop("ANONBOX_REDIS_URL", None)  # the in-process limiter, as a single instance runs
    return env


def run_cli(url: str, *args: str) -> str:
    done = subprocess.run(
        [PY, "-m", "anonbox", *args],
        env=anonbox_env(url),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"anonbox {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


# The apps: anonbox as shipped; anonbox with commits that return before the disk has them
# (to show what durability costs once group commit shares the fsyncs); anonbox with two
# workers (read scaling, PostgreSQL only: SQLite has one writer); anonbox whose writing
# creator has SLOW_WEBHOOKS endpoints at a receiver that never answers; anonbox through
# PgBouncer in transaction mode (PostgreSQL only: what the pooler costs); anonbox with its
# public pages rendered on every request (no page cache, issue 43); and the floor.
APPS: dict[str, dict[str, Any]] = {
    "anonbox": {},
    "anonbox-nocache": {"env": {"ANONBOX_PAGE_CACHE": "false"}},
    "anonbox-normal": {"env": {"ANONBOX_DURABLE_COMMITS": "false"}},
    "anonbox-2w": {"workers": "2"},
    "anonbox-hooked": {"env": {"ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true"}},
    "anonbox-muted": {},  # the same service, its writing creator muting MUTED_WORDS words
    "anonbox-pooled": {"env": {"ANONBOX_DATABASE_POOLER": "transaction"}, "pooled": True},
    "floor": {},
}
# The pooler anonbox-pooled goes through, while a PostgreSQL run lasts (set by run.main).
POOLER: pooler.PgBouncer | None = None
SLOW_WEBHOOKS = 10
MUTED_WORDS = 1_000  # the most a creator may mute (safety.service.MAX_MUTED_WORDS)


class Server:
    def __init__(self, app: str, db: str, url: str, trace: Path | None = None) -> None:
        self.app, self.db, self.url, self.trace = app, db, url, trace
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = LOGS / f"{db}-{app}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        traced = [] if self.trace is None else [str(BENCH / "sqltrace.py"), str(self.trace)]
        if self.app.startswith("anonbox"):
            workers = APPS[self.app].get("workers")
            extra = ["--workers", workers] if workers else []
            serve = ["-m", "anonbox", "serve", "--port", str(self.port), *extra]
            return [PY, *traced, *serve]
        script = [str(BENCH / "floor.py"), "--database-url", self.url, "--port", str(self.port)]
        return [PY, *traced, *script]

    def __enter__(self) -> Server:
        with self.log_path.open("ab") as out:
            env = {**anonbox_env(self.url), **APPS[self.app].get("env", {})}
            if APPS[self.app].get("pooled"):
                assert POOLER is not None
                env["ANONBOX_DATABASE_URL"] = POOLER.url_for(self.url)
                env["ANONBOX_DATABASE_LISTEN_URL"] = self.url
            self.process = subprocess.Popen(
                self.command(),
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.app} exited early; see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=1) as answer:
                    if answer.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        raise RuntimeError(f"{self.app} did not start; see {self.log_path}")

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid


def request(
    method: str, url: str, *, key: str | None = None, body: bytes | None = None
) -> tuple[int, Any]:
    headers = {"X-API-Key": key} if key else {}
    if body is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


class BlackHole:
    """A webhook receiver that accepts every connection and never answers."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
        self._listener.settimeout(0.2)
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._hold, daemon=True)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/hook"

    def _hold(self) -> None:
        while not self._stop.is_set():
            try:
                self._held.append(self._listener.accept()[0])
            except TimeoutError:
                continue

    def __enter__(self) -> BlackHole:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for conn in self._held:
            conn.close()
        self._listener.close()


def add_slow_webhooks(server: Server, fixture: Fixture, url: str) -> None:
    for n in range(SLOW_WEBHOOKS):
        # One webhook per URL per creator: each its own query string, the same receiver.
        status, answer = request(
            "POST",
            f"{server.base}/webhooks",
            key=fixture.write_key,
            body=json.dumps({"url": f"{url}?n={n}"}).encode(),
        )
        if status != 201:
            raise RuntimeError(f"adding a webhook failed: {status} {answer}")


def mute_words(server: Server, fixture: Fixture) -> list[str]:
    """Mute ``MUTED_WORDS`` words for the writing creator; their ids."""
    ids = []
    for n in range(MUTED_WORDS):
        status, answer = request(
            "POST",
            f"{server.base}/muted-words",
            key=fixture.write_key,
            body=json.dumps({"word": f"zqmuted{n}"}).encode(),
        )
        if status != 201:
            raise RuntimeError(f"muting a word failed: {status} {answer}")
        ids.append(answer["data"]["id"])
    return ids


def unmute_words(server: Server, fixture: Fixture, ids: list[str]) -> None:
    for word_id in ids:
        status, answer = request(
            "DELETE", f"{server.base}/muted-words/{word_id}", key=fixture.write_key
        )
        if status != 200:
            raise RuntimeError(f"unmuting a word failed: {status} {answer}")
