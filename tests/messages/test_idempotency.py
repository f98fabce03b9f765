"""Idempotency-Key on POST /message/{link_id}: a retried post lands once."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.actions import assert_error, inbox_items
from tests.conftest import Creator, make_creator_in
from tests.safety.conftest import (
    assert_created_message,
    block_sender_of,
    kept_ids,
    new_sender,
    send,
    sent,
)
from tests.server import Server
from tests.support.deployment import SENDER_LINK_LIMIT, client
from tests.support.racing import race, statuses

RACERS = 15  # retries fired at once


def new_key() -> str:
    return str(uuid.uuid4())


def test_the_same_key_and_text_twice_lands_once(api: httpx.Client, creator: Creator) -> None:
    key = new_key()
    first = assert_created_message(send(api, creator.link_id, "only once", key=key), "only once")
    again = assert_created_message(send(api, creator.link_id, "only once", key=key), "only once")
    assert again == first  # same id, same text, same time
    [item] = inbox_items(api, creator)
    assert item["id"] == first["id"]
    assert item["message_content"] == "only once"


def test_the_same_key_with_another_text_is_409(api: httpx.Client, creator: Creator) -> None:
    key = new_key()
    first = assert_created_message(send(api, creator.link_id, "first", key=key), "first")
    reused = send(api, creator.link_id, "something else", key=key)
    assert_error(reused, 409, "idempotency_key_reused")
    assert kept_ids(api, creator) == [first["id"]]
    # The key still answers the post it was first used for.
    assert assert_created_message(send(api, creator.link_id, "first", key=key), "first") == first


def test_posts_without_a_key_or_with_different_keys_each_land(
    api: httpx.Client, creator: Creator
) -> None:
    ids = [
        send(api, creator.link_id, "same text", key=key).json()["data"]["id"]
        for key in (None, None, new_key(), new_key())
    ]
    assert len(set(ids)) == 4
    assert sorted(kept_ids(api, creator)) == sorted(ids)


def test_twenty_concurrent_posts_with_one_key_land_once(
    api: httpx.Client, creator: Creator
) -> None:
    key = new_key()
    start = threading.Barrier(20)

    def post(_: int) -> httpx.Response:
        start.wait()
        return send(api, creator.link_id, "raced", key=key)

    with ThreadPoolExecutor(20) as pool:
        responses = list(pool.map(post, range(20)))
    assert [r.status_code for r in responses] == [201] * 20, [r.text for r in responses]
    assert len({r.json()["data"]["id"] for r in responses}) == 1
    assert kept_ids(api, creator) == [responses[0].json()["data"]["id"]]


def test_a_retried_post_from_a_blocked_sender_gets_the_same_fake_answer(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    blocked = new_sender()
    first = sent(proxied, creator.link_id, "first", blocked)
    block_sender_of(proxied, creator, first)

    key = new_key()
    dropped = assert_created_message(send(proxied, creator.link_id, "hi", blocked, key), "hi")
    retried = assert_created_message(send(proxied, creator.link_id, "hi", blocked, key), "hi")
    assert retried == dropped
    reused = send(proxied, creator.link_id, "changed", blocked, key)
    assert reused.status_code == 409, reused.text
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    assert kept_ids(proxied, creator) == [first]


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("", id="empty"),
        pytest.param("k" * 201, id="201-characters"),
        pytest.param("k" * 20_000, id="20-thousand-characters"),  # 64 KiB heads are 431
        pytest.param("with space", id="space"),
        pytest.param("with\ttab", id="tab"),
        pytest.param("clé".encode(), id="non-ascii"),
    ],
)
def test_a_malformed_key_is_400_and_nothing_lands(
    api: httpx.Client, creator: Creator, key: str | bytes
) -> None:
    response = api.post(
        f"/message/{creator.link_id}",
        json={"message_content": "hi"},
        headers={"Idempotency-Key": key},
    )
    body = assert_error(response, 400, "validation_failed")
    assert [f["field"] for f in body["error"]["fields"]] == ["idempotency_key"]
    assert kept_ids(api, creator) == []


def test_a_key_of_200_printable_characters_is_accepted(api: httpx.Client, creator: Creator) -> None:
    key = "".join(chr(c) for c in range(0x21, 0x7F)) * 3  # every printable ASCII character
    key = key[:200]
    for _ in range(2):
        sent_once = send(api, creator.link_id, "hi", key=key)
        assert sent_once.status_code == 201, sent_once.text
    assert len(kept_ids(api, creator)) == 1


def raw_post(server: Server, link_id: str, key: bytes) -> tuple[int, bytes, bytes]:
    """POST with an Idempotency-Key that an HTTP client refuses to send; returns the
    status, the content type and the body."""
    body = b'{"message_content": "raw"}'
    request = (
        (
            f"POST /message/{link_id} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\nIdempotency-Key: "
        ).encode()
        + key
        + b"\r\n\r\n"
        + body
    )
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, payload = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    headers = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
    return status, headers.get(b"content-type", b"").strip(), payload


@pytest.mark.parametrize("key", [b"ctl\x01key", b"del\x7fkey", b"nul\x00key"])
def test_a_key_with_control_characters_is_400_and_nothing_lands(
    api: httpx.Client, server: Server, creator: Creator, key: bytes
) -> None:
    """Refused before it reaches anonbox: uvicorn answers these itself, in plain text."""
    status, content_type, payload = raw_post(server, creator.link_id, key)
    assert status == 400, payload
    if content_type.startswith(b"application/json"):
        assert b'"validation_failed"' in payload
    assert kept_ids(api, creator) == []
    assert api.get("/readyz").status_code == 200


@pytest.mark.parametrize("round_", range(3))
def test_retries_with_one_key_through_two_instances_at_once_land_once(
    redis_pair: tuple[Server, Server], round_: int
) -> None:
    """A client retrying through a load balancer: the key's record is one row in the
    shared database (unique on link and key, ``ON CONFLICT DO NOTHING``), so one post is
    accepted whichever instance each retry reaches. The pair allows a sender
    SENDER_LINK_LIMIT posts a minute to a link (counted in the shared Redis): that many
    retries race to write, every other is a 429 or, once the first is committed, its
    answer again."""
    creator = make_creator_in(redis_pair[0].database_url)
    key = new_key()
    clients = [client(server) for server in redis_pair]
    try:
        answers = race(RACERS, lambda i: send(clients[i % 2], creator.link_id, "retried", key=key))
        counted = statuses(answers)
        assert set(counted) <= {201, 429}, [a.text for a in answers]
        assert counted[201] >= SENDER_LINK_LIMIT, [a.text for a in answers]
        for limited in (a for a in answers if a.status_code == 429):
            assert_error(limited, 429, "rate_limited")
        accepted = {a.json()["data"]["id"] for a in answers if a.status_code == 201}
        assert len(accepted) == 1, answers
        for api in clients:
            assert kept_ids(api, creator) == list(accepted)
    finally:
        for opened in clients:
            opened.close()
