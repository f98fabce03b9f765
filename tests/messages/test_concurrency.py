"""Requests that race on one message agree with each other and with what is listed after.

Each test lets many threads wait at a barrier and then send at once, against the real
server on each database. Concurrent like toggles are in messages/test_like.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from anonbox.core.database import POOL_SIZE, POOL_WAIT_SECONDS, driver_url
from tests.actions import (
    assert_error,
    inbox_ids,
    inbox_item,
    inbox_items,
    post_message,
    post_reply,
    reply_items,
)
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.db import query
from tests.support.http import loopback_client
from tests.support.racing import race, statuses

CONCURRENT = 30


def test_concurrent_replies_to_one_message_are_all_listed_and_counted(
    api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id, "ask me anything")

    def reply(i: int) -> httpx.Response:
        return api.post(
            f"/message/{creator.link_id}/{message_id}",
            json={"message_content": f"answer {i}"},
            headers=creator.headers,
        )

    responses = race(CONCURRENT, reply)

    assert statuses(responses) == {201: CONCURRENT}, [r.text for r in responses]
    answered = {r.json()["data"]["reply_message_id"]: r.json()["data"] for r in responses}
    assert len(answered) == CONCURRENT
    listed = reply_items(api, creator, message_id)
    assert {item["reply_message_id"]: item for item in listed} == answered
    assert [item["reply_message_id"] for item in listed] == sorted(answered, reverse=True)
    assert reply_items(api, creator, message_id, headers={}) == listed  # the public sees them too
    assert inbox_item(api, creator, message_id)["reply_count"] == CONCURRENT


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_deletes_of_one_reply_succeed_exactly_once(
    api: httpx.Client, creator: Creator, round_: int
) -> None:
    message_id = post_message(api, creator.link_id, "ask me anything")
    kept = post_reply(api, creator, message_id, "this one stays")
    doomed = post_reply(api, creator, message_id, "this one goes")
    path = f"/message/{creator.link_id}/{message_id}/{doomed}"

    responses = race(CONCURRENT, lambda _: api.delete(path, headers=creator.headers))

    assert statuses(responses) == {200: 1, 404: CONCURRENT - 1}, [r.text for r in responses]
    for response in responses:
        if response.status_code == 404:
            assert_error(response, 404, "not_found")
        else:
            assert response.json()["data"] is None
    assert [item["reply_message_id"] for item in reply_items(api, creator, message_id)] == [kept]
    assert inbox_item(api, creator, message_id)["reply_count"] == 1


@pytest.mark.parametrize("round_", range(5))
def test_deleting_a_message_while_it_is_being_replied_to_leaves_nothing_behind(
    api: httpx.Client, creator: Creator, round_: int
) -> None:
    message_id = post_message(api, creator.link_id, "about to go")
    other = post_message(api, creator.link_id, "a neighbour that stays")
    path = f"/message/{creator.link_id}/{message_id}"
    deleter = CONCURRENT // 2  # in the middle of the replies

    def act(i: int) -> httpx.Response:
        if i == deleter:
            return api.delete(path, headers=creator.headers)
        return api.post(path, json={"message_content": f"reply {i}"}, headers=creator.headers)

    responses = race(CONCURRENT, act)

    deleted = responses.pop(deleter)
    assert deleted.status_code == 200, deleted.text
    assert set(statuses(responses)) <= {201, 404}, [r.text for r in responses]
    for response in responses:
        if response.status_code == 404:
            assert_error(response, 404, "not_found")
    acknowledged = [r.json()["data"]["reply_message_id"] for r in responses if r.status_code == 201]

    assert inbox_ids(api, creator) == [other]
    assert_error(api.get(path, headers=creator.headers), 404, "not_found")
    assert_error(api.get(path), 404, "not_found")
    for reply_id in acknowledged:  # no reply outlives its message, even one that got a 201
        assert_error(api.delete(f"{path}/{reply_id}", headers=creator.headers), 404)
    assert_error(api.post(path, json={"message_content": "late"}, headers=creator.headers), 404)
    public = api.get(f"/message/{creator.link_id}")
    assert public.status_code == 200, public.text
    assert public.json()["data"]["items"] == []


def keyed_post(api: httpx.Client, link_id: str, key: str, text: str) -> httpx.Response:
    return api.post(
        f"/message/{link_id}", json={"message_content": text}, headers={"Idempotency-Key": key}
    )


def without_metadata(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    return {k: v for k, v in body.items() if k != "metadata"}


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_retries_with_one_key_store_one_message_and_answer_alike(
    api: httpx.Client, creator: Creator, round_: int
) -> None:
    key = str(uuid.uuid4())

    responses = race(CONCURRENT, lambda _: keyed_post(api, creator.link_id, key, "sent once"))

    assert statuses(responses) == {201: CONCURRENT}, [r.text for r in responses]
    answers = [without_metadata(r) for r in responses]
    assert all(answer == answers[0] for answer in answers), answers
    [stored] = inbox_items(api, creator)
    assert stored["id"] == answers[0]["data"]["id"]
    assert stored["message_content"] == "sent once"
    assert stored["created_at"] == answers[0]["data"]["created_at"]


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_posts_that_reuse_a_key_for_other_text_are_409(
    api: httpx.Client, creator: Creator, round_: int
) -> None:
    key = str(uuid.uuid4())
    texts = ["version A", "version B"]

    responses = race(
        CONCURRENT, lambda i: keyed_post(api, creator.link_id, key, texts[i % len(texts)])
    )

    by_text: dict[str, list[httpx.Response]] = {text: [] for text in texts}
    for i, response in enumerate(responses):
        by_text[texts[i % len(texts)]].append(response)
    winners = [text for text in texts if by_text[text][0].status_code == 201]
    assert len(winners) == 1, [r.text for r in responses]
    [winner] = winners
    [loser] = [text for text in texts if text != winner]
    won = by_text[winner]
    assert statuses(won) == {201: len(won)}, [r.text for r in won]
    assert all(without_metadata(r) == without_metadata(won[0]) for r in won)
    for response in by_text[loser]:
        assert_error(response, 409, "idempotency_key_reused")
    [stored] = inbox_items(api, creator)
    assert stored["id"] == won[0].json()["data"]["id"]
    assert stored["message_content"] == winner


# --- a full pool ---------------------------------------------------------------------------


def _waiting_on_locks(database_url: str) -> int:
    (row,) = query(
        database_url,
        "SELECT count(*) AS waiting FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'",
    )
    return int(row["waiting"])


def test_a_request_waits_for_a_pooled_connection_a_bounded_time_then_gets_503(
    database_url_factory: Callable[[str], str], tmp_path: Path
) -> None:
    """PostgreSQL: while every pooled connection is held up (here by a lock on the inbox),
    one more request waits POOL_WAIT_SECONDS for a connection and is answered 503 with
    Retry-After; the held requests finish once the lock goes, and nothing is lost."""
    url = database_url_factory("postgresql")
    dsn = driver_url(url)[1]
    server = Server(url, tmp_path / "server.log").start()
    locked, release = threading.Event(), threading.Event()

    async def hold_the_inbox() -> None:
        conn = await asyncpg.connect(dsn)
        try:
            async with conn.transaction():
                await conn.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
                locked.set()
                await asyncio.get_running_loop().run_in_executor(None, release.wait, 120)
        finally:
            await conn.close()

    holder = threading.Thread(target=asyncio.run, args=(hold_the_inbox(),))
    try:
        creator = make_creator_in(url)
        inbox = f"{server.url}/message/{creator.link_id}"

        def read(timeout: float = 120) -> httpx.Response:
            with loopback_client(timeout=timeout) as client:
                return client.get(inbox, headers=creator.headers)

        assert read().status_code == 200  # the key is proven: the held requests need no lookup
        holder.start()
        assert locked.wait(30)
        with ThreadPoolExecutor(POOL_SIZE) as threads:
            held = [threads.submit(read) for _ in range(POOL_SIZE)]
            deadline = time.monotonic() + 30
            while _waiting_on_locks(url) < POOL_SIZE:
                assert time.monotonic() < deadline, "the pool never filled"
                time.sleep(0.1)
            started = time.monotonic()
            refused = read(timeout=POOL_WAIT_SECONDS + 15)
            waited = time.monotonic() - started
            release.set()
            answers = [future.result(timeout=60) for future in held]
        body = assert_error(refused, 503, "service_unavailable")
        assert int(refused.headers["retry-after"]) > 0, body
        assert POOL_WAIT_SECONDS <= waited < POOL_WAIT_SECONDS + 10
        assert [answer.status_code for answer in answers] == [200] * POOL_SIZE
        assert read().status_code == 200
    finally:
        release.set()
        if holder.is_alive():
            holder.join(30)
        server.stop()
