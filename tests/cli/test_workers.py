"""``anonbox serve --workers 2``: two processes serve one port and one database, the
migration runs once before them, and /metrics adds up what both counted."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.actions import whole_inbox
from tests.conftest import Creator, ModuleDatabase, make_creator_in
from tests.core.test_logs import MIGRATION_LOGGERS, request_line
from tests.core.test_metrics import MESSAGE_ROUTE, requests_counted, scrape, value
from tests.server import Server
from tests.support.http import loopback_client

WORKERS = 2
START_TIMEOUT = 90.0


@pytest.fixture(scope="module")
def workers(
    module_database: ModuleDatabase,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    backend = module_database.backend
    tmp = tmp_path_factory.mktemp(f"workers-{backend}")
    server = Server(
        module_database.url,
        tmp / "server.log",
        env={"TMPDIR": str(tmp)},  # where the metric files' directory is made
        args=("--workers", str(WORKERS)),
    )
    server.start(START_TIMEOUT)
    try:
        # /healthz answered: one worker is up. Wait for the other as the metrics see it.
        deadline = time.monotonic() + START_TIMEOUT
        with loopback_client(base_url=server.url, timeout=30) as api:
            while value(scrape(api), "anonbox_workers") < WORKERS:
                assert time.monotonic() < deadline, "the second worker did not start"
                time.sleep(0.2)
        yield server
    finally:
        server.stop()


def post_on_a_fresh_connection(server: Server, creator: Creator, n: int) -> tuple[str, str]:
    """Send a message over a new connection (either worker may accept it); returns the
    message id and the request id."""
    request_id = f"workers-{uuid.uuid4().hex}"
    with loopback_client(base_url=server.url, timeout=30) as api:
        sent = api.post(
            f"/message/{creator.link_id}",
            json={"message_content": f"message {n}"},
            headers={"X-Request-ID": request_id},
        )
    assert sent.status_code == 201, sent.text
    return str(sent.json()["data"]["id"]), request_id


def test_both_workers_serve_and_their_writes_land(workers: Server) -> None:
    creator = make_creator_in(workers.database_url)
    posted: list[tuple[str, str]] = []
    pids: set[int] = set()
    # Which process accepts a connection is the kernel's choice; concurrent connections
    # make it pick both soon, but an idle machine may let one worker take a whole batch
    # (one full run saw a single worker take 96 posts), so batches go on until both have.
    for batch in range(40):
        with ThreadPoolExecutor(16) as pool:
            posted += pool.map(
                lambda n: post_on_a_fresh_connection(workers, creator, n),
                range(batch * 16, (batch + 1) * 16),
            )
        pids = {request_line(workers, request_id)["pid"] for _, request_id in posted}
        if len(pids) == WORKERS:
            break
    assert len(pids) == WORKERS, f"only {pids} answered {len(posted)} posts"

    assert set(whole_inbox(workers.url, creator)) == {message_id for message_id, _ in posted}
    migrated_by = {
        r["pid"] for r in workers.log_records() if r["logger"].startswith(MIGRATION_LOGGERS)
    }
    assert len(migrated_by) == 1, "the migration ran in more than one process"
    assert not migrated_by & pids, "a worker ran the migration"


def test_metrics_add_up_every_worker(workers: Server) -> None:
    creator = make_creator_in(workers.database_url)
    with loopback_client(base_url=workers.url, timeout=30) as api:
        before = scrape(api)
    with ThreadPoolExecutor(8) as pool:
        posted = list(
            pool.map(lambda n: post_on_a_fresh_connection(workers, creator, n), range(40))
        )
    answered_by = {request_line(workers, request_id)["pid"] for _, request_id in posted}

    # Whichever worker answers a scrape, it reports both workers' counts.
    for _ in range(6):
        with loopback_client(base_url=workers.url, timeout=30) as api:
            after = scrape(api)
        counted = requests_counted(after, MESSAGE_ROUTE, "POST", 201)
        assert counted - requests_counted(before, MESSAGE_ROUTE, "POST", 201) == 40, answered_by
        assert value(after, "anonbox_workers") == WORKERS
        assert value(after, "anonbox_db_connections_max") >= WORKERS


def test_the_metric_files_go_away_with_the_server(
    database_url_factory: Callable[[str], str], tmp_path: Path
) -> None:
    server = Server(
        database_url_factory("sqlite"),
        tmp_path / "server.log",
        env={"TMPDIR": str(tmp_path)},
        args=("--workers", str(WORKERS)),
    ).start(START_TIMEOUT)
    try:
        [directory] = tmp_path.glob("anonbox-metrics-*")
        with loopback_client(base_url=server.url, timeout=30) as api:
            assert api.get("/healthz").status_code == 200
        assert list(directory.glob("*.db"))
    finally:
        server.stop()
    assert not directory.exists()
    assert server.process is not None
    assert server.process.returncode == 0
