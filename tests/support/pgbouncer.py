"""A real PgBouncer (Debian's package) in transaction mode, in front of the machine's
PostgreSQL, started by a test on a free port and stopped after it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import POSTGRES_ADMIN_URL
from tests.server import free_port
from tests.support.processes import stop
from tests.support.services import missing

PGBOUNCER = "/usr/sbin/pgbouncer"


def require_pgbouncer() -> str:
    """The pgbouncer binary; as root on Debian, installed with apt-get if missing (as the
    Makefile installs wrk and chromium). Under CI=true a missing one fails, never skips."""
    found = shutil.which("pgbouncer") or (PGBOUNCER if Path(PGBOUNCER).exists() else None)
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(
            ["apt-get", "install", "-y", "--no-install-recommends", "pgbouncer"],
            check=False,
            capture_output=True,
        )
        found = PGBOUNCER if Path(PGBOUNCER).exists() else None
    if found is None:
        missing("pgbouncer is not installed (apt-get install pgbouncer)")
    return found


def direct_parts() -> tuple[str, int, str]:
    """Host, port and user of the machine's PostgreSQL, from the tests' admin URL."""
    rest = POSTGRES_ADMIN_URL.split("://", 1)[1]
    user, _, where = rest.rpartition("@")
    host_port = where.split("/", 1)[0]
    host, _, port = host_port.partition(":")
    return host, int(port or 5432), user.split(":")[0] or "postgres"


@contextmanager
def pgbouncer(pool_size: int = 5) -> Iterator[int]:
    """PgBouncer in transaction mode on a free port, ``pool_size`` server connections per
    database; yields the port. Its own options only: every startup parameter a client
    sends must be one PgBouncer knows (no ``ignore_startup_parameters``)."""
    binary = require_pgbouncer()
    host, port, user = direct_parts()
    directory = Path(tempfile.mkdtemp(prefix="anonbox-pgbouncer-"))
    listen = free_port()
    (directory / "userlist.txt").write_text(f'"{user}" ""\n')
    (directory / "pgbouncer.ini").write_text(
        "[databases]\n"
        f"* = host={host} port={port} user={user}\n"
        "[pgbouncer]\n"
        "listen_addr = 127.0.0.1\n"
        f"listen_port = {listen}\n"
        "unix_socket_dir =\n"
        "auth_type = trust\n"
        f"auth_file = {directory}/userlist.txt\n"
        "pool_mode = transaction\n"
        f"default_pool_size = {pool_size}\n"
        "max_client_conn = 2000\n"
        f"admin_users = {user}\n"
        f"logfile = {directory}/pgbouncer.log\n"
        f"pidfile = {directory}/pgbouncer.pid\n"
    )
    command = [binary, str(directory / "pgbouncer.ini")]
    if os.geteuid() == 0:  # PgBouncer refuses to run as root: it takes PostgreSQL's user
        shutil.chown(directory, "postgres")
        for path in directory.iterdir():
            shutil.chown(path, "postgres")
        command[1:1] = ["-u", "postgres"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", listen), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log = directory / "pgbouncer.log"
                    said = log.read_text() if log.exists() else ""
                    raise RuntimeError(f"pgbouncer did not start: {said}") from None
                time.sleep(0.05)
        yield listen
    finally:
        stop(process)
        shutil.rmtree(directory, ignore_errors=True)


def show(port: int, what: str) -> list[dict[str, str]]:
    """``SHOW <what>`` on PgBouncer's admin console (simple queries only: psql)."""
    _, _, user = direct_parts()
    done = subprocess.run(
        [
            "psql",
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-U",
            user,
            "-d",
            "pgbouncer",
            "-A",
            "-F",
            "\t",
            "-P",
            "footer=off",
            "-c",
            f"SHOW {what}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    header, *rows = done.stdout.splitlines()
    names = header.split("\t")
    return [dict(zip(names, row.split("\t"), strict=True)) for row in rows]
