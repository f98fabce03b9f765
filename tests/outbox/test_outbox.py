"""The outbox: every stored message, reply and deletion is committed with its event, a
dropped message with none, and the relay hands every event over in order. Each test runs
on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from anonbox.core.database import connect
from tests.actions import post_message, post_reply
from tests.conftest import Creator
from tests.server import Server
from tests.support.http import loopback_client

WRITERS = 8
PER_WRITER = 5


def events_of(database_url: str, link_id: str) -> list[dict[str, Any]]:
    """The link's events as the database holds them, in seq order."""

    async def read() -> list[dict[str, Any]]:
        db = await connect(database_url)
        try:
            rows = await db.fetch(
                "SELECT seq, kind, message_id, reply_id, handed_at FROM events"
                " WHERE link_id = $1 ORDER BY seq",
                link_id,
            )
            return [dict(row) for row in rows]
        finally:
            await db.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, read()).result()


def handed_over(database_url: str, link_id: str, count: int) -> list[dict[str, Any]]:
    """The link's events once ``count`` of them exist and all are handed over."""
    deadline = time.monotonic() + 10
    while True:
        events = events_of(database_url, link_id)
        if len(events) >= count and all(e["handed_at"] is not None for e in events):
            return events
        assert time.monotonic() < deadline, events
        time.sleep(0.2)


def test_every_message_reply_and_deletion_is_committed_with_its_event(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    def write(n: int) -> list[str]:
        with loopback_client(base_url=server.url, timeout=30) as client:
            return [post_message(client, creator.link_id, f"w{n} #{i}") for i in range(PER_WRITER)]

    with ThreadPoolExecutor(WRITERS) as pool:  # concurrent: group-committed batches
        ids = [i for batch in pool.map(write, range(WRITERS)) for i in batch]
    reply_id = post_reply(api, creator, ids[0], "thanks")
    deleted = api.delete(f"/message/{creator.link_id}/{ids[1]}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text

    events = handed_over(server.database_url, creator.link_id, len(ids) + 2)
    created = [e["message_id"] for e in events if e["kind"] == "message.created"]
    assert sorted(created) == sorted(ids)  # exactly one each
    assert created == sorted(created)  # handed over in the order they were stored
    assert [(e["kind"], e["message_id"], e["reply_id"]) for e in events[-2:]] == [
        ("reply.created", ids[0], reply_id),
        ("message.deleted", ids[1], None),
    ]


def test_a_dropped_message_has_no_event(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    muted = api.post("/muted-words", json={"word": "forbidden"}, headers=creator.headers)
    assert muted.status_code == 201, muted.text
    post_message(api, creator.link_id, "a forbidden word")
    kept = post_message(api, creator.link_id, "a kind word")
    events = handed_over(server.database_url, creator.link_id, 1)
    assert [e["message_id"] for e in events] == [kept]
