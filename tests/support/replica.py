"""A real streaming replica, made by a test: a primary PostgreSQL cluster of the test's
own (``initdb`` in a temporary directory, on a free port, so that the machine's server
and its ``pg_hba.conf`` stay as they are), a copy of it taken with ``pg_basebackup -R``,
and a second postmaster on the copy, replaying the primary's WAL as it streams in."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.server import free_port
from tests.support.services import missing


def postgres_bin() -> Path:
    """The newest installed PostgreSQL's programs (Debian keeps them per version)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_basebackup"),
        key=lambda path: int(Path(path).parent.parent.name),
    )
    if not found:
        missing("PostgreSQL's server programs are not installed (apt-get install postgresql)")
    return Path(found[-1]).parent


def _as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, run it as its own user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _run(command: list[str]) -> None:
    done = subprocess.run(_as_postgres(command), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")


@dataclass
class Cluster:
    """A primary and its streaming replica, each a postmaster of its own."""

    bin: Path
    base: Path
    primary_port: int
    replica_port: int

    def url(self, port: int, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{port}/{database}"

    def primary_url(self, database: str = "postgres") -> str:
        return self.url(self.primary_port, database)

    def replica_url(self, database: str = "postgres") -> str:
        return self.url(self.replica_port, database)

    def _start(self, name: str, port: int) -> None:
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -k {self.base}"
            " -c shared_buffers=16MB -c fsync=off -c max_connections=200"
        )
        _run(
            [str(self.bin / "pg_ctl"), "-D", str(self.base / name), "-o", options,
             "-l", str(self.base / f"{name}.log"), "-w", "-t", "60", "start"]
        )  # fmt: skip

    def stop_replica(self) -> None:
        """As an operator (or a crash of its machine) stops it: fast, its clients cut off."""
        _run([str(self.bin / "pg_ctl"), "-D", str(self.base / "replica"), "-m", "fast", "stop"])

    def start_replica(self) -> None:
        self._start("replica", self.replica_port)

    def replica_sql(self, statement: str) -> None:
        _run([str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.replica_port),
              "-U", "postgres", "-d", "postgres", "-c", statement])  # fmt: skip


@contextmanager
def streaming_replica() -> Iterator[Cluster]:
    binaries = postgres_bin()
    base = Path(tempfile.mkdtemp(prefix="anonbox-replica-"))
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
    cluster = Cluster(binaries, base, free_port(), free_port())
    started: list[str] = []
    try:
        _run([str(binaries / "initdb"), "-D", str(base / "primary"), "-A", "trust",
              "-U", "postgres", "--no-sync"])  # fmt: skip
        cluster._start("primary", cluster.primary_port)
        started.append("primary")
        _run([str(binaries / "pg_basebackup"), "-h", "127.0.0.1",
              "-p", str(cluster.primary_port), "-U", "postgres", "-D", str(base / "replica"),
              "-R", "-X", "stream", "--no-sync"])  # fmt: skip
        cluster.start_replica()
        started.append("replica")
        yield cluster
    finally:
        for name in reversed(started):
            subprocess.run(
                _as_postgres(
                    [str(binaries / "pg_ctl"), "-D", str(base / name), "-m", "immediate", "stop"]
                ),
                capture_output=True,
                check=False,
            )
        shutil.rmtree(base, ignore_errors=True)
