"""An export is streamed, not built: 100,000 messages go out through HTTP while the
server's resident memory grows by a small fraction of the document's size.

Built in memory, the document alone (about 20 MB here) would be held as bytes, on top of
the rows and objects it was made from; streamed, the server holds a page of 1,000 rows
and a 64 KiB buffer at a time. The server's RSS is sampled every 5 ms while the client
reads, and compared with its RSS after a small export has loaded every code path.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import psutil
import pytest

from tests.account.conftest import insert_messages, start_server
from tests.conftest import ModuleDatabase, make_creator_in
from tests.server import Server
from tests.support.http import loopback_client

MESSAGES = 100_000
MB = 1024 * 1024
# Well under the document itself, let alone a document built from rows in memory.
GROWTH_BOUND = 10 * MB


@pytest.fixture(scope="module")
def big(
    module_database: ModuleDatabase,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    running = start_server(
        module_database.url,
        tmp_path_factory.mktemp("export-memory"),
        module_database.backend,
    )
    yield running
    running.stop()


class Sampler(threading.Thread):
    """The highest resident set size of a process while it runs."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.peak = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            self.done.wait(0.005)


@pytest.mark.slow
def test_an_export_of_100000_messages_keeps_the_servers_memory_flat(big: Server) -> None:
    creator = make_creator_in(big.database_url)
    texts = (f"message {i:06d}: what are you reading these days, and why?" for i in range(MESSAGES))
    assert insert_messages(big.database_url, creator.link_id, texts) == MESSAGES
    assert big.process is not None
    with loopback_client(base_url=big.url, timeout=300, headers=creator.headers) as api:
        small = make_creator_in(big.database_url)
        for _ in range(3):  # every code path loaded, every pool and buffer warm
            assert api.get("/account/export", headers=small.headers).status_code == 200
        baseline = psutil.Process(big.process.pid).memory_info().rss
        sampler = Sampler(big.process.pid)
        sampler.start()
        body = bytearray()
        with api.stream("GET", "/account/export") as answer:
            assert answer.status_code == 200
            for chunk in answer.iter_bytes():
                body += chunk
        sampler.done.set()
        sampler.join()

    document = json.loads(body)
    messages = document["data"]["messages"]
    assert len(messages) == MESSAGES
    assert messages[0]["message_content"].startswith("message 000000:")
    assert messages[-1]["message_content"].startswith(f"message {MESSAGES - 1:06d}:")
    growth = sampler.peak - baseline
    print(  # the numbers the report quotes (pytest -s)
        f"\nexport of {MESSAGES} messages: document {len(body) / MB:.1f} MB, server RSS "
        f"{baseline / MB:.1f} MB before, peak {sampler.peak / MB:.1f} MB (+{growth / MB:.1f} MB)"
    )
    assert growth < GROWTH_BOUND, f"RSS grew by {growth / MB:.1f} MB"
