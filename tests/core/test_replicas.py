"""Public reads from a real streaming replica (``ANONBOX_DATABASE_REPLICA_URLS``): the send
page, a link's public view, the share cards and receipts reach the replica, as its own
``pg_stat_database`` and the service's ``anonbox_db_replica_queries`` both count; the
creator reads what they just wrote, from the primary, while the replica's replay is
paused; a replica further behind than ``ANONBOX_DATABASE_REPLICA_MAX_LAG_SECONDS`` is
skipped within seconds, and so is one stopped in the middle of a run of reads, which all
go on with no 5xx."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
import pytest

from tests.actions import post_reply
from tests.conftest import Creator, make_creator_in
from tests.server import Server, anonbox_command_on
from tests.support.http import loopback_client
from tests.support.metrics import scrape, value
from tests.support.replica import Cluster, streaming_replica
from tests.support.signin import access_tokens

MAX_LAG_SECONDS = 2
SKIPPED_WITHIN = MAX_LAG_SECONDS + 4  # the bound, a check's interval and time-out, and slack
DATABASE = "anonbox"


def sql(url: str, statement: str) -> Any:
    async def run() -> Any:
        conn = await asyncpg.connect(url)
        try:
            return await conn.fetchval(statement)
        finally:
            await conn.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


@dataclass(frozen=True)
class Replicated:
    cluster: Cluster
    server: Server

    def replica_transactions(self) -> int:
        return int(
            sql(
                self.cluster.replica_url(DATABASE),
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
            )
        )

    def metric(self, name: str) -> float:
        with loopback_client(base_url=self.server.url, timeout=10) as api:
            return value(scrape(api), f"anonbox_db_{name}")


@pytest.fixture(scope="module")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicated]:
    with streaming_replica() as cluster:
        sql(cluster.primary_url(), f"CREATE DATABASE {DATABASE}")
        primary = cluster.primary_url(DATABASE)
        migrated = anonbox_command_on(primary, ["migrate"])
        assert migrated.returncode == 0, migrated.stderr[-4000:]
        env = {
            "ANONBOX_DATABASE_REPLICA_URLS": cluster.replica_url(DATABASE),
            "ANONBOX_DATABASE_REPLICA_MAX_LAG_SECONDS": str(MAX_LAG_SECONDS),
        }
        log = tmp_path_factory.mktemp("replicas") / "server.log"
        server = Server(primary, log, env=env).start(90)
        try:
            yield Replicated(cluster, server)
        finally:
            server.stop()
        assert "Traceback" not in server.log(), f"the server logged a traceback: see {log}"


def until(check: Callable[[], bool], seconds: float) -> float:
    """Seconds until ``check()`` holds; fails past ``seconds``."""
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < seconds, f"not within {seconds} s"
        time.sleep(0.1)
    return time.monotonic() - started


def public_reads(api: httpx.Client, creator: Creator, message_id: str, token: str) -> list[int]:
    """What anyone reads: the send page (with the public answers), the link's public view,
    a message's share card, and a receipt."""
    link = creator.link_id
    return [
        api.get(f"/{link}", headers={"Accept": "text/html"}).status_code,
        api.get(f"/links/{link}/public").status_code,
        api.get(f"/{link}/{message_id}/card.png").status_code,
        api.get(f"/receipts/{token}").status_code,
    ]


def post_with_receipt(api: httpx.Client, link_id: str, text: str) -> tuple[str, str]:
    sent = api.post(
        f"/message/{link_id}", params={"receipt": "true"}, json={"message_content": text}
    )
    assert sent.status_code == 201, sent.text
    data = sent.json()["data"]
    return data["id"], data["receipt"]["token"]


def test_public_reads_reach_the_replica_and_the_creator_reads_their_own_writes(
    replicated: Replicated,
) -> None:
    server, cluster = replicated.server, replicated.cluster
    creator = make_creator_in(server.database_url)
    [session] = access_tokens(server.database_url, creator, 1)
    with loopback_client(base_url=server.url, timeout=30) as api:
        until(lambda: replicated.metric("replicas_usable") == 1, SKIPPED_WITHIN)
        message_id, token = post_with_receipt(api, creator.link_id, "what is new?")
        post_reply(api, creator, message_id, "first answer")
        time.sleep(0.5)  # replayed by now, on an idle machine's loopback
        before = (replicated.replica_transactions(), replicated.metric("replica_queries"))
        for _ in range(5):
            assert public_reads(api, creator, message_id, token) == [200] * 4
        assert replicated.metric("replica_queries") - before[1] >= 20
        # Counted by the replica itself, too, once its backends report (at most 10 s idle).
        until(lambda: replicated.replica_transactions() - before[0] >= 20, 15)

        # The replica stops replaying: what is written now is on the primary alone.
        cluster.replica_sql("SELECT pg_wal_replay_pause()")
        try:
            post_reply(api, creator, message_id, "second answer, written during the pause")
            # The creator's own reads come from the primary: they show it at once.
            with loopback_client(
                base_url=server.url, cookies={"anonbox_session": session}, timeout=30
            ) as browser:
                own = browser.get(f"/{creator.link_id}", headers={"Accept": "text/html"})
            assert own.status_code == 200
            assert "second answer, written during the pause" in own.text
            # And through the API, with the key: the primary too.
            keyed = api.get(
                f"/{creator.link_id}", headers={"Accept": "text/html", **creator.headers}
            )
            assert "second answer, written during the pause" in keyed.text
            # A receipt issued now is not on the replica: the primary answers for it.
            _, fresh_token = post_with_receipt(api, creator.link_id, "and now?")
            assert api.get(f"/receipts/{fresh_token}").status_code == 200
            # Past the bound the replica is skipped, and anyone reads from the primary.
            skipped = until(lambda: replicated.metric("replicas_usable") == 0, SKIPPED_WITHIN)
            print(f"a replica paused was skipped after {skipped:.1f} s")
            served = replicated.metric("replica_queries")
            anyone = api.get(f"/{creator.link_id}", headers={"Accept": "text/html"})
            assert "second answer, written during the pause" in anyone.text
            assert public_reads(api, creator, message_id, fresh_token) == [200] * 4
            assert replicated.metric("replica_queries") == served
        finally:
            cluster.replica_sql("SELECT pg_wal_replay_resume()")
        # Caught up again, it is used again.
        until(lambda: replicated.metric("replicas_usable") == 1, SKIPPED_WITHIN)


def test_a_replica_stopped_mid_run_is_skipped_and_no_read_fails(replicated: Replicated) -> None:
    server, cluster = replicated.server, replicated.cluster
    creator = make_creator_in(server.database_url)
    statuses: list[int] = []
    stop = threading.Event()
    with loopback_client(base_url=server.url, timeout=30) as api:
        message_id, token = post_with_receipt(api, creator.link_id, "still there?")
        post_reply(api, creator, message_id, "yes")
        until(lambda: replicated.metric("replicas_usable") == 1, SKIPPED_WITHIN)

        def read_on() -> None:
            with loopback_client(base_url=server.url, timeout=30) as reader:
                while not stop.is_set():
                    statuses.extend(public_reads(reader, creator, message_id, token))

        readers = [threading.Thread(target=read_on) for _ in range(4)]
        for thread in readers:
            thread.start()
        try:
            time.sleep(1)
            served = replicated.metric("replica_queries")
            assert served > 0
            cluster.stop_replica()
            stopped = time.monotonic()
            skipped = until(lambda: replicated.metric("replicas_usable") == 0, SKIPPED_WITHIN)
            print(f"a stopped replica was skipped after {skipped:.1f} s")
            time.sleep(1)  # reads go on from the primary
            count = len(statuses)
            time.sleep(1)
            assert len(statuses) > count, "the reads stopped"
            assert time.monotonic() - stopped < SKIPPED_WITHIN + 3
        finally:
            stop.set()
            for thread in readers:
                thread.join()
        assert set(statuses) == {200}, sorted(set(statuses))
        # Started again, it is used again.
        cluster.start_replica()
        until(lambda: replicated.metric("replicas_usable") == 1, SKIPPED_WITHIN + 10)
        before = replicated.metric("replica_queries")
        assert public_reads(api, creator, message_id, token) == [200] * 4
        assert replicated.metric("replica_queries") > before
