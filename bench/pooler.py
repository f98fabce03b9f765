"""PgBouncer in transaction mode in front of the bench's PostgreSQL, for ``anonbox-pooled``:
what the pooler costs a write and a reply (``python bench/run.py``; ``--no-pooler`` skips).

The same settings as tests/support/pgbouncer.py: Debian's pgbouncer 1.18, trust on
loopback, ``default_pool_size`` server connections per database (20, one process's pool).
"""

# ruff: noqa: S603

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit


def available() -> bool:
    return shutil.which("pgbouncer") is not None or Path("/usr/sbin/pgbouncer").exists()


class PgBouncer:
    def __init__(self, admin_url: str, pool_size: int = 20) -> None:
        parts = urlsplit(admin_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 5432
        self.user = parts.username or "postgres"
        self.pool_size = pool_size
        self.directory = Path(tempfile.mkdtemp(prefix="anonbox-bench-pgbouncer-"))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.listen = int(sock.getsockname()[1])
        self.process: subprocess.Popen[bytes] | None = None

    def url_for(self, direct_url: str) -> str:
        """The same database, through the pooler."""
        return f"postgresql://{self.user}@127.0.0.1:{self.listen}/{direct_url.rsplit('/', 1)[1]}"

    def __enter__(self) -> PgBouncer:
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        (self.directory / "userlist.txt").write_text(f'"{self.user}" ""\n')
        (self.directory / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={self.host} port={self.port} user={self.user}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.listen}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {self.directory}/userlist.txt\n"
            f"pool_mode = transaction\ndefault_pool_size = {self.pool_size}\n"
            "max_client_conn = 2000\n"
            f"logfile = {self.directory}/pgbouncer.log\npidfile = {self.directory}/pgbouncer.pid\n"
        )
        command = [binary, str(self.directory / "pgbouncer.ini")]
        if os.geteuid() == 0:  # it refuses to run as root
            for path in (self.directory, *self.directory.iterdir()):
                shutil.chown(path, "postgres")
            command[1:1] = ["-u", "postgres"]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.listen), timeout=1).close()
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"pgbouncer did not start; see {self.directory}") from None
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)
