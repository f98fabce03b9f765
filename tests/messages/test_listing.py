"""GET /message/{link_id} and /message/{link_id}/{message_id}: inbox and replies, newest first."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.actions import assert_error, post_message, post_reply
from tests.conftest import Creator
from tests.support.strangers import OthersMessage

UNKNOWN_ID = "01aaaaaaaaaaaaaaaaaaaaaaaa"
# follow_up_of: null but for a follow-up sent through a receipt (tests/receipts);
# answer_id: null until the message has a reply (tests/web/test_answer_pages.py).
INBOX_ITEM_KEYS = {
    "id",
    "message_content",
    "like_by_creator",
    "created_at",
    "reply_count",
    "follow_up_of",
    "answer_id",
}
REPLY_ITEM_KEYS = {"message_id", "reply_message_id", "message_content", "created_at"}
BACK_TO_BACK = 100  # enough that many land in the same millisecond


def get_page(
    api: httpx.Client, path: str, headers: dict[str, str] | None = None, **params: Any
) -> dict[str, Any]:
    listed = api.get(path, params=params, headers=headers)
    assert listed.status_code == 200, listed.text
    body: dict[str, Any] = listed.json()
    assert body["status_code"] == 200
    assert set(body["data"]) == {"items", "next_cursor"}
    return dict(body["data"])


def walk(
    api: httpx.Client, path: str, id_key: str, limit: int, headers: dict[str, str] | None = None
) -> list[list[str]]:
    """Every page of a listing, following next_cursor until it is null."""
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        page = get_page(api, path, headers, **params)
        pages.append([item[id_key] for item in page["items"]])
        cursor = page["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) <= 100, "next_cursor never ended"


def pipelined_posts(
    base_url: str, path: str, contents: list[str], headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """POST each content in turn on one HTTP/1.1 connection, pipelined.

    The server answers pipelined requests one after the other, in order, so each
    request is handled strictly after the previous one — only faster than a client
    waiting for every response could send them (several per millisecond).
    """
    url = urlsplit(base_url)
    assert url.hostname is not None
    assert url.port is not None
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    requests = []
    for number, content in enumerate(contents):
        body = json.dumps({"message_content": content}).encode()
        connection = "close" if number == len(contents) - 1 else "keep-alive"
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\n{extra}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"Connection: {connection}\r\n\r\n"
        )
        requests.append(head.encode() + body)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall(b"".join(requests))
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    responses = []
    while received:
        raw_head, _, rest = received.partition(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        assert lines[0].split()[1] == "201", raw_head
        length = next(
            int(line.split(":", 1)[1])
            for line in lines
            if line.lower().startswith("content-length")
        )
        responses.append(json.loads(rest[:length]))
        received = rest[length:]
    assert len(responses) == len(contents)
    return responses


# --- the inbox ----------------------------------------------------------------------------


def test_creator_sees_every_message_newest_first(api: httpx.Client, creator: Creator) -> None:
    first = post_message(api, creator.link_id, "first")
    second = post_message(api, creator.link_id, "second")
    third = post_message(api, creator.link_id, "third")
    post_reply(api, creator, second)
    assert api.put(f"/message/{creator.link_id}/{third}/like", headers=creator.headers).is_success

    page = get_page(api, f"/message/{creator.link_id}", creator.headers)

    assert page["next_cursor"] is None
    for item in page["items"]:
        assert set(item) == INBOX_ITEM_KEYS
    assert [
        (i["id"], i["message_content"], i["like_by_creator"], i["reply_count"])
        for i in page["items"]
    ] == [
        (third, "third", True, 0),
        (second, "second", False, 1),
        (first, "first", False, 0),
    ]


def test_paging_yields_every_message_once_newest_first(api: httpx.Client, creator: Creator) -> None:
    sent = [post_message(api, creator.link_id, f"message {n}") for n in range(25)]

    pages = walk(api, f"/message/{creator.link_id}", "id", 10, creator.headers)

    assert [len(page) for page in pages] == [10, 10, 5]
    assert [message_id for page in pages for message_id in page] == sent[::-1]


def test_messages_sent_back_to_back_are_listed_newest_first(
    api: httpx.Client, creator: Creator
) -> None:
    """Several messages handled within one millisecond still list in sending order."""
    path = f"/message/{creator.link_id}"
    responses = pipelined_posts(
        str(api.base_url), path, [f"quick {n}" for n in range(BACK_TO_BACK)]
    )
    sent = [r["data"]["id"] for r in responses]

    listed = [item["id"] for item in get_page(api, path, creator.headers, limit=100)["items"]]

    assert sorted(listed) == sorted(sent)
    assert listed == sent[::-1]


def test_last_full_page_has_no_next_cursor(api: httpx.Client, creator: Creator) -> None:
    sent = [post_message(api, creator.link_id, f"m{n}") for n in range(4)]

    page = get_page(api, f"/message/{creator.link_id}", creator.headers, limit=4)

    assert sorted(item["id"] for item in page["items"]) == sorted(sent)
    assert page["next_cursor"] is None


@pytest.mark.parametrize("limit", [1, 100])
def test_limit_bounds_are_accepted(api: httpx.Client, creator: Creator, limit: int) -> None:
    sent = [post_message(api, creator.link_id, f"m{n}") for n in range(2)]

    page = get_page(api, f"/message/{creator.link_id}", creator.headers, limit=limit)

    assert len(page["items"]) == min(limit, len(sent))
    assert (page["next_cursor"] is None) == (limit >= len(sent))


def test_empty_inbox(api: httpx.Client, creator: Creator) -> None:
    page = get_page(api, f"/message/{creator.link_id}", creator.headers)

    assert page == {"items": [], "next_cursor": None}


def test_public_sees_only_answered_messages(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    owner, other = make_creator(), make_creator()
    unanswered = post_message(api, owner.link_id, "private")
    answered = post_message(api, owner.link_id, "public")
    post_reply(api, owner, answered, "answer")
    path = f"/message/{owner.link_id}"

    for viewer in (None, other.headers, {"X-API-Key": ""}):
        page = get_page(api, path, viewer)
        assert [(i["id"], i["reply_count"]) for i in page["items"]] == [(answered, 1)], viewer
        assert page["next_cursor"] is None

    owner_view = get_page(api, path, owner.headers)
    assert {item["id"] for item in owner_view["items"]} == {answered, unanswered}


def test_public_paging_walks_answered_messages_only(api: httpx.Client, creator: Creator) -> None:
    sent = [post_message(api, creator.link_id, f"q{n}") for n in range(7)]
    answered = sent[::2]
    for message_id in answered:
        post_reply(api, creator, message_id)

    pages = walk(api, f"/message/{creator.link_id}", "id", 2)

    assert [message_id for page in pages for message_id in page] == answered[::-1]
    assert [len(page) for page in pages] == [2, 2]


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"X-API-Key": "anb_" + "l" * 40}, id="unknown-key"),
        pytest.param({"X-API-Key": "garbage"}, id="garbage-key"),
        pytest.param({"Authorization": "Bearer anb_" + "l" * 40}, id="unknown-bearer"),
    ],
)
def test_listing_with_an_invalid_credential_is_401(
    api: httpx.Client, creator: Creator, headers: dict[str, str]
) -> None:
    post_reply(api, creator, post_message(api, creator.link_id))

    assert_error(api.get(f"/message/{creator.link_id}", headers=headers), 401)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        pytest.param({"limit": "0"}, "limit", id="limit-0"),
        pytest.param({"limit": "101"}, "limit", id="limit-101"),
        pytest.param({"limit": "-1"}, "limit", id="limit-negative"),
        pytest.param({"limit": "abc"}, "limit", id="limit-abc"),
        pytest.param({"limit": "2.5"}, "limit", id="limit-fraction"),
        pytest.param({"cursor": "garbage"}, "cursor", id="cursor-garbage"),
        pytest.param({"cursor": UNKNOWN_ID + "0"}, "cursor", id="cursor-27-chars"),
    ],
)
def test_bad_query_values_are_400(
    api: httpx.Client, creator: Creator, params: dict[str, str], field: str
) -> None:
    body = assert_error(
        api.get(f"/message/{creator.link_id}", params=params, headers=creator.headers), 400
    )

    assert [f["field"] for f in body["error"]["fields"]] == [field]


def test_listing_unknown_link_is_404(api: httpx.Client) -> None:
    assert_error(api.get("/message/nosuchlink0"), 404)


def test_listing_malformed_link_is_400(api: httpx.Client) -> None:
    assert_error(api.get("/message/bad!id"), 400)


# --- the replies of one message -----------------------------------------------------------


def test_replies_are_listed_newest_first_with_their_shape(
    api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    first = post_reply(api, creator, message_id, "first answer")
    second = post_reply(api, creator, message_id, "second answer")

    page = get_page(api, f"/message/{creator.link_id}/{message_id}", creator.headers)

    assert page["next_cursor"] is None
    for item in page["items"]:
        assert set(item) == REPLY_ITEM_KEYS
        assert item["message_id"] == message_id
    assert [(i["reply_message_id"], i["message_content"]) for i in page["items"]] == [
        (second, "second answer"),
        (first, "first answer"),
    ]


def test_replies_page_through_every_reply_once(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    sent = [post_reply(api, creator, message_id, f"answer {n}") for n in range(25)]

    pages = walk(
        api, f"/message/{creator.link_id}/{message_id}", "reply_message_id", 10, creator.headers
    )

    assert [len(page) for page in pages] == [10, 10, 5]
    assert [reply_id for page in pages for reply_id in page] == sent[::-1]


def test_replies_sent_back_to_back_are_listed_newest_first(
    api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    path = f"/message/{creator.link_id}/{message_id}"
    responses = pipelined_posts(
        str(api.base_url), path, [f"quick {n}" for n in range(BACK_TO_BACK)], creator.headers
    )
    sent = [r["data"]["reply_message_id"] for r in responses]

    listed = [
        item["reply_message_id"]
        for item in get_page(api, path, creator.headers, limit=100)["items"]
    ]

    assert sorted(listed) == sorted(sent)
    assert listed == sent[::-1]


def test_public_reads_the_replies_of_an_answered_message(
    api: httpx.Client, others_message: OthersMessage
) -> None:
    owner, other, message_id = others_message
    reply_id = post_reply(api, owner, message_id, "for everyone")
    path = f"/message/{owner.link_id}/{message_id}"

    for viewer in (None, other.headers):
        page = get_page(api, path, viewer)
        assert [(i["reply_message_id"], i["message_content"]) for i in page["items"]] == [
            (reply_id, "for everyone")
        ]


def test_unanswered_message_is_hidden_from_the_public_only(
    api: httpx.Client, others_message: OthersMessage
) -> None:
    owner, other, message_id = others_message
    path = f"/message/{owner.link_id}/{message_id}"

    assert_error(api.get(path), 404)
    assert_error(api.get(path, headers=other.headers), 404)
    assert get_page(api, path, owner.headers) == {"items": [], "next_cursor": None}


def test_replies_with_an_invalid_credential_is_401(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    post_reply(api, creator, message_id)

    assert_error(
        api.get(f"/message/{creator.link_id}/{message_id}", headers={"X-API-Key": "anb_nope"}), 401
    )


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"limit": "0"}, id="limit-0"),
        pytest.param({"limit": "101"}, id="limit-101"),
        pytest.param({"limit": "abc"}, id="limit-abc"),
        pytest.param({"cursor": "garbage"}, id="cursor-garbage"),
    ],
)
def test_replies_bad_query_values_are_400(
    api: httpx.Client, creator: Creator, params: dict[str, str]
) -> None:
    message_id = post_message(api, creator.link_id)
    post_reply(api, creator, message_id)

    assert_error(
        api.get(f"/message/{creator.link_id}/{message_id}", params=params, headers=creator.headers),
        400,
    )


def test_replies_of_unknown_message_is_404(api: httpx.Client, creator: Creator) -> None:
    assert_error(api.get(f"/message/{creator.link_id}/{UNKNOWN_ID}", headers=creator.headers), 404)


def test_replies_under_unknown_link_is_404(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    post_reply(api, creator, message_id)

    assert_error(api.get(f"/message/nosuchlink0/{message_id}"), 404)
