"""How long asking for a sign-in mail takes, in the four cases a stranger could tell apart.

    python bench/signin_timing.py [--db sqlite|postgresql|both] [--rounds 50] [--warmup 10]

Starts ``anonbox serve`` (on a fresh SQLite file or PostgreSQL database, with a local
SMTP server that accepts everything) with the per-network sign-in limit set out of reach
and the per-address limit left as shipped (one mail per address per five minutes: what
makes a repeated ask skip the mail). Then, on loopback, over one kept-alive connection,
each round asks for a link for: an address with an account asked for the first time, the
same again (repeated), an address without an account the first time, and that again.
After each ask it waits until the mail of a first ask has arrived, and 0.1 s more, so the
sending of one round's mail does not fall in the next ask. Prints the median and quartiles
of each case's answer time (the client's, from sending the form to reading the page),
after ``--warmup`` rounds that are not counted. A benchmark, not a test: it asserts
nothing about time.
"""

# ruff: noqa: S603

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import asyncpg
import httpx
from aiosmtpd.controller import Controller

ROOT = Path(__file__).resolve().parent.parent
POSTGRES = os.environ.get(
    "ANONBOX_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
CASES = ("first, known", "repeated, known", "first, unknown", "repeated, unknown")


class Sink:
    """Accepts every mail; remembers to whom."""

    def __init__(self) -> None:
        self.to: list[str] = []
        self.arrived = threading.Condition()

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        with self.arrived:
            self.to.extend(getattr(envelope, "rcpt_tos", []))
            self.arrived.notify_all()
        return "250 OK"

    def wait_for(self, address: str, timeout: float = 30.0) -> None:
        with self.arrived:
            if not self.arrived.wait_for(lambda: address in self.to, timeout):
                raise RuntimeError(f"no mail to {address} in {timeout}s")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _admin(sql: str) -> None:
    conn = await asyncpg.connect(POSTGRES)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def database(kind: str, directory: Path) -> tuple[str, str | None]:
    if kind == "sqlite":
        return f"sqlite:///{directory / 'anonbox.db'}", None
    name = f"anonbox_bench_signin_{uuid.uuid4().hex[:8]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    return f"{POSTGRES.rsplit('/', 1)[0]}/{name}", name


def make_accounts(url: str, addresses: list[str]) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from anonbox.auth.service import create_creator
    from anonbox.core.database import connect

    async def run() -> None:
        db = await connect(url)
        try:
            for address in addresses:
                await create_creator(db, email=address)
        finally:
            await db.close()

    asyncio.run(run())


def run(kind: str, rounds: int, warmup: int) -> dict[str, list[float]]:
    sink = Sink()
    smtp_port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=smtp_port)
    controller.start()
    with tempfile.TemporaryDirectory() as tmp:
        url, pg_name = database(kind, Path(tmp))
        port = free_port()
        env = {
            **os.environ,
            "ANONBOX_DATABASE_URL": url,
            "ANONBOX_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}",
            "ANONBOX_LIMIT_SIGNIN_NETWORK": "1000000/60",
            "ANONBOX_LOG_LEVEL": "WARNING",
        }
        log = (Path(tmp) / "server.log").open("w")
        server = subprocess.Popen(
            [sys.executable, "-m", "anonbox", "serve", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError((Path(tmp) / "server.log").read_text())
                time.sleep(0.1)
            total = rounds + warmup
            known = [f"known-{uuid.uuid4().hex[:10]}@example.org" for _ in range(total)]
            make_accounts(url, known)
            unknown = [f"new-{uuid.uuid4().hex[:10]}@example.org" for _ in range(total)]
            times: dict[str, list[float]] = {case: [] for case in CASES}
            with httpx.Client(base_url=base, timeout=30) as browser:
                page = browser.get("/signin").text
                csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
                assert csrf, page
                for n in range(total):
                    for case, address in zip(
                        CASES, (known[n], known[n], unknown[n], unknown[n]), strict=True
                    ):
                        started = time.perf_counter()
                        answer = browser.post(
                            "/signin/email", data={"csrf_token": csrf.group(1), "email": address}
                        )
                        took = time.perf_counter() - started
                        assert answer.status_code == 200, answer.text
                        if case.startswith("first"):
                            sink.wait_for(address)
                        time.sleep(0.1)
                        if n >= warmup:
                            times[case].append(took * 1000)
            return times
        finally:
            server.terminate()
            server.wait(timeout=20)
            log.close()
            controller.stop()
            if pg_name is not None:
                asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)'))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    for kind in ("sqlite", "postgresql") if args.db == "both" else (args.db,):
        times = run(kind, args.rounds, args.warmup)
        print(f"{kind}: {args.rounds} asks per case, after {args.warmup} rounds of warm-up")
        for case in CASES:
            q1, _, q3 = statistics.quantiles(times[case], n=4)
            median = statistics.median(times[case])
            print(f"  {case:<18} median {median:6.2f} ms   (quartiles {q1:.2f}-{q3:.2f} ms)")


if __name__ == "__main__":
    main()
