"""WAL bytes and anonbox's CPU per request: what one post, reply, like or inbox page costs
the primary (docs/scaling.md).

    python bench/wal.py [--requests 2000] [--concurrency 32]

Starts a PostgreSQL cluster of its own (initdb in a temporary directory, its own port, as
the ``postgres`` user when run as root), so that no other database's traffic lands in the
WAL it reads; migrates it and makes a creator with the CLI; serves anonbox on it
(``anonbox serve``, rate limits out of reach); then for each kind of request sends
``--requests`` of them over ``--concurrency`` connections and reads
``pg_current_wal_lsn()`` before and after. Each kind runs twice: right after a
``CHECKPOINT`` (every page touched first writes a full-page image: the worst case) and
again at once (pages already imaged: the steady state between checkpoints). The server's
CPU per request leaves out what it spends idle (its background work, measured for 3 s
before each run).
"""

# A measuring script: it runs its own processes, with fixed arguments, from async code.
# ruff: noqa: S603, ASYNC220, ASYNC221

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncpg
import httpx

PG_BIN = Path(sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def start_cluster(root: Path, port: int) -> Path:
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    subprocess.run(
        as_postgres([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=on"
    subprocess.run(
        as_postgres(
            [
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(root / "log"),
                "-w",
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    return data


async def lsn(admin: asyncpg.Connection) -> int:
    return int(await admin.fetchval("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"))


async def measure(
    admin: asyncpg.Connection, send: object, requests: int, concurrency: int
) -> dict[str, float]:
    results = {}
    for phase in ("after a checkpoint", "steady"):
        if phase == "after a checkpoint":
            await admin.execute("CHECKPOINT")
        await asyncio.sleep(1.5)  # the group commits and the relay settle
        before = await lsn(admin)
        # The server's own background work (the outbox relay, chores) while idle, to
        # take out of the requests' share.
        idle_from, idle_started = process_cpu(SERVER_PID), time.monotonic()
        await asyncio.sleep(3)
        idle_rate = (process_cpu(SERVER_PID) - idle_from) / (time.monotonic() - idle_started)
        app_before = process_cpu(SERVER_PID)
        started = time.monotonic()
        queue = list(range(requests))

        async def worker(queue: list[int] = queue) -> None:
            while queue:
                i = queue.pop()
                await send(i)  # type: ignore[operator]

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.monotonic() - started
        await asyncio.sleep(1.5)  # the outbox relay's handing-over lands too
        after = await lsn(admin)
        results[phase] = {
            "wal_bytes_per_request": round((after - before) / requests, 1),
            "requests_per_s": round(requests / elapsed),
            "anonbox_cpu_ms_per_request": round(
                (process_cpu(SERVER_PID) - app_before - idle_rate * elapsed) / requests * 1000,
                3,
            ),
        }
    return results


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


DATA = ""
SERVER_PID = 0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    options = parser.parse_args()
    global DATA, SERVER_PID
    root = Path(tempfile.mkdtemp(prefix="anonbox-wal-"))
    port = free_port()
    DATA = str(start_cluster(root, port))
    admin_url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    admin = await asyncpg.connect(admin_url)
    await admin.execute("CREATE DATABASE anonbox")
    url = f"postgresql://postgres@127.0.0.1:{port}/anonbox"
    env = {**os.environ, "ANONBOX_DATABASE_URL": url, "ANONBOX_LOG_LEVEL": "warning"}
    for name in ("SENDER", "SENDER_LINK", "LINK", "CARD", "REPORT"):
        env[f"ANONBOX_LIMIT_{name}"] = "1000000000/1"
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "anonbox",
            "creator",
            "create",
            "--email",
            "wal@example.com",
            "--json",
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=root,
    )
    creator = json.loads(made.stdout.strip().splitlines()[-1])
    app_port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "anonbox", "serve", "--port", str(app_port)],
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    SERVER_PID = server.pid
    try:
        base = f"http://127.0.0.1:{app_port}"
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            for _ in range(200):
                try:
                    if (await client.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            inbox = f"/message/{creator['link_id']}"
            key = {"X-API-Key": creator["api_key"]}
            text = "an anonymous question of ordinary length, about sixty characters"
            ids: list[str] = []

            async def post(i: int) -> None:
                answer = await client.post(inbox, json={"message_content": f"{text} {i}"})
                assert answer.status_code == 201, answer.text
                ids.append(answer.json()["data"]["id"])

            async def reply(i: int) -> None:
                answer = await client.post(
                    f"{inbox}/{ids[i % len(ids)]}",
                    json={"message_content": f"thanks {i}"},
                    headers=key,
                )
                assert answer.status_code == 201, answer.text

            async def like(i: int) -> None:
                # A toggle: every message is liked, then unliked, and so on.
                answer = await client.put(f"{inbox}/{ids[i % len(ids)]}/like", headers=key)
                assert answer.status_code == 200, answer.text

            async def inbox_page(i: int) -> None:
                answer = await client.get(inbox, headers=key)
                assert answer.status_code == 200, answer.text

            async def send_page(i: int) -> None:
                answer = await client.get(f"/{creator['link_id']}")
                assert answer.status_code == 200, answer.status_code

            report = {}
            for name, send in (
                ("post", post),
                ("reply", reply),
                ("like", like),
                ("inbox page", inbox_page),
                ("send page", send_page),
            ):
                report[name] = await measure(admin, send, options.requests, options.concurrency)
                print(name, json.dumps(report[name]), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
        await admin.close()
        subprocess.run(
            as_postgres([str(PG_BIN / "pg_ctl"), "-D", DATA, "-m", "fast", "stop"]),
            check=False,
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
