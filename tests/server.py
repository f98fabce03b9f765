"""Run the real service in its own process, exactly as a user would with ``anonbox serve``.

Each server is the ``anonbox serve`` command in a process of its own, with its own
environment, port and log file, stopped and killed by signals like any other. The
process is forked from a fork server that has already imported the service's modules
(``multiprocessing``'s ``forkserver``, one per test process): a start then skips the
second or so of imports a fresh interpreter pays, which across the suite's couple of
hundred servers was the largest part of their start-up CPU. ``anonbox serve`` reads its
settings from the environment when it runs, not when it is imported, so a forked server
takes the settings it is given; the one module that reads the environment at import,
``anonbox.core.http_protocol``, is imported by ``serve`` itself and so is never preloaded.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from tests.support.http import loopback_get

# Tests send hundreds of messages from 127.0.0.1; the rate-limit tests set their own.
GENEROUS_LIMITS = {
    "ANONBOX_LIMIT_SIGNIN_NETWORK": "1000000/60",
    "ANONBOX_LIMIT_CARD": "1000000/60",
    "ANONBOX_LIMIT_REPORT": "1000000/60",
    "ANONBOX_LIMIT_SENDER_LINK": "1000000/60",
    "ANONBOX_LIMIT_SENDER": "1000000/60",
    "ANONBOX_LIMIT_LINK": "1000000/60",
}


# Servers start at most this many at a time on the machine, across test processes: a
# start is still about half a second of CPU once forked (the app, its database, its
# first requests), and dozens at once on two cores made each take over a minute when each
# also paid its imports. The start's timeout counts from its turn.
STARTING_AT_ONCE = max(2, os.cpu_count() or 2)
_TURNS = Path(tempfile.gettempdir()) / "anonbox-test-server-starts"


@contextlib.contextmanager
def _turn_to_start() -> Iterator[None]:
    _TURNS.mkdir(exist_ok=True)
    while True:
        for slot in range(STARTING_AT_ONCE):
            with (_TURNS / f"{slot}.lock").open("a") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                try:
                    yield
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
                return
        time.sleep(0.05)


# The fork server imports these once; every server forked from it has them already. The
# second line is what a server imports only as it starts (Litestar's pydantic plugin alone
# took 0.09 CPU-seconds a start). Not ``anonbox.core.http_protocol``: it reads the
# environment as it is imported.
PRELOADED = ["anonbox.cli", "anonbox.main", "anonbox.migrations", "uvicorn", "tests.server"]
PRELOADED += ["litestar.plugins.pydantic", "anyio._backends._asyncio", "uvicorn.lifespan.on"]
PRELOADED += ["uvicorn.loops.uvloop", "uvicorn.protocols.http.httptools_impl"]
PRELOADED += ["uvicorn.protocols.websockets.auto"]
_forks = multiprocessing.get_context("forkserver")
_forks.set_forkserver_preload(PRELOADED)


def _anonbox(args: Sequence[str], env: dict[str, str], stdout: str, stderr: str) -> None:
    """The forked process: the ``anonbox`` command with these arguments and this
    environment, its output appended to the files (the same file for both, for a server)."""
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None  # found again from TMPDIR, not the fork server's
    # Standard input on descriptor 0, as a shell gives it: multiprocessing left it closed,
    # and ``--workers`` hands that descriptor to each worker it starts.
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - lives as long as the process
    for descriptor, path in ((1, stdout), (2, stderr)):
        opened = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(opened, descriptor)
        os.close(opened)
    from anonbox.cli import main

    main(args=list(args), prog_name="anonbox")  # exits with the command's status


def anonbox_command(
    args: Sequence[str], env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``anonbox <args>`` in a process of its own (forked, as servers are), with only
    this environment; what it printed and its status, as ``subprocess.run`` gives them."""
    with tempfile.TemporaryDirectory(prefix="anonbox-command-") as directory:
        stdout, stderr = Path(directory, "stdout"), Path(directory, "stderr")
        process = _forks.Process(target=_anonbox, args=(list(args), env, str(stdout), str(stderr)))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(["anonbox", *args], timeout)
        return subprocess.CompletedProcess(
            ["anonbox", *args],
            process.exitcode,
            stdout.read_text() if stdout.exists() else "",
            stderr.read_text() if stderr.exists() else "",
        )


def anonbox_command_on(
    database_url: str, args: Sequence[str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``anonbox_command`` with this process's environment and the database at
    ``database_url``: what the tests' set-up commands run with."""
    return anonbox_command(args, {**os.environ, "ANONBOX_DATABASE_URL": database_url}, timeout)


class ServerProcess:
    """A forked server, answering the part of ``subprocess.Popen`` the tests use."""

    def __init__(self, args: Sequence[str], env: dict[str, str], log_path: Path) -> None:
        log = str(log_path)
        self._process = _forks.Process(target=_anonbox, args=(["serve", *args], env, log, log))
        self._process.start()
        self.pid = self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired("anonbox serve", timeout or 0)
        return self._process.exitcode

    def send_signal(self, signum: int) -> None:
        if self._process.exitcode is None:
            os.kill(self._process.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(
        self,
        database_url: str,
        log_path: Path,
        env: dict[str, str] | None = None,
        args: Sequence[str] = (),
        json_logs: bool = True,
    ) -> None:
        self.database_url = database_url
        self.log_path = log_path
        self.extra_env = env or {}
        self.args = tuple(args)  # more `anonbox serve` options, e.g. ("--workers", "2")
        # The tests read a server's log as JSON (``log_records``), which a development
        # server writes only when asked; False leaves the format to the service's defaults.
        self.json_logs = json_logs
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: ServerProcess | None = None

    def start(self, timeout: float = 60.0) -> Server:
        with _turn_to_start():
            return self._start(timeout, attempts_left=3)

    def _start(self, timeout: float, attempts_left: int) -> Server:
        env = {
            **os.environ,
            **GENEROUS_LIMITS,
            **self.extra_env,
            "ANONBOX_DATABASE_URL": self.database_url,
        }
        if self.json_logs:
            env.setdefault("ANONBOX_LOG_FORMAT", "json")
        elif "ANONBOX_LOG_FORMAT" not in self.extra_env:
            env.pop("ANONBOX_LOG_FORMAT", None)  # not even the one this process was given
        logged = self.log_path.stat().st_size if self.log_path.exists() else 0
        self.process = ServerProcess(["--port", str(self.port), *self.args], env, self.log_path)
        # Another process may hold the port (taken between free_port() and the bind): its
        # /healthz answers too. So this start's own log must say it has the port first.
        bound = f"Uvicorn running on {self.url} "
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                if "address already in use" in self._log_since(logged) and attempts_left:
                    self.port = free_port()
                    self.url = f"http://127.0.0.1:{self.port}"
                    return self._start(timeout, attempts_left - 1)
                raise RuntimeError(f"server exited early; see {self.log_path}:\n{self.log()}")
            try:
                if (
                    bound in self._log_since(logged)
                    and loopback_get(f"{self.url}/healthz", timeout=1).status_code == 200
                ):
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.02)
        self.kill()  # not left running for the rest of the session
        raise RuntimeError(f"server did not start in {timeout}s; see {self.log_path}")

    def kill(self) -> None:
        """SIGKILL: no shutdown handlers, no flushing, as a crash looks to the process."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def terminate(self) -> None:
        """SIGTERM, as an orchestrator stops a container; returns at once."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)

    def exit_status(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the process to end: its return code (negative
        for a signal), or None if it is still running."""
        assert self.process is not None
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _log_since(self, offset: int) -> str:
        try:
            return self.log_path.read_bytes()[offset:].decode(errors="replace")
        except FileNotFoundError:  # not opened yet by the new process
            return ""

    def log_records(self) -> list[dict[str, Any]]:
        """The server's log so far, one JSON object per line (ANONBOX_LOG_FORMAT=json)."""
        records = []
        for line in self.log().split("\n")[:-1]:  # the last is empty, or still being written
            record = json.loads(line)
            assert isinstance(record, dict), line
            records.append(record)
        return records
