"""POST /message/{link_id}/{message_id}: the creator's reply, its shape, credentials and bounds."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, inbox_item, post_message, reply_items
from tests.conftest import Creator
from tests.support.credentials import refused_credentials
from tests.support.strangers import STRANGERS_REACH, OthersMessage
from tests.support.texts import WITHIN_BOUNDS

UNKNOWN_MESSAGE_ID = "01aaaaaaaaaaaaaaaaaaaaaaaa"


def reply(
    api: httpx.Client,
    link_id: str,
    message_id: str,
    content: Any,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return api.post(
        f"/message/{link_id}/{message_id}", json={"message_content": content}, headers=headers
    )


def reply_contents(api: httpx.Client, creator: Creator, message_id: str) -> list[str]:
    return [r["message_content"] for r in reply_items(api, creator, message_id)]


def assert_nothing_replied(api: httpx.Client, creator: Creator, message_id: str) -> None:
    assert inbox_item(api, creator, message_id)["reply_count"] == 0
    assert reply_contents(api, creator, message_id) == []


def test_reply_has_exactly_the_contract_shape(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    before = datetime.now(UTC)

    replied = reply(api, creator.link_id, message_id, "Thanks for asking!", creator.headers)

    assert replied.status_code == 201, replied.text
    body = replied.json()
    assert set(body) == {"status_code", "message", "data", "metadata"}
    assert body["status_code"] == 201
    data = body["data"]
    assert set(data) == {"message_id", "reply_message_id", "message_content", "created_at"}
    assert data["message_id"] == message_id
    assert isinstance(data["reply_message_id"], str)
    assert data["reply_message_id"] not in {"", message_id}
    assert data["message_content"] == "Thanks for asking!"
    created = datetime.fromisoformat(data["created_at"])
    assert created.utcoffset() == timedelta(0)
    assert abs(created - before) < timedelta(seconds=5)
    meta = body["metadata"]
    assert meta["method"] == "POST"
    assert meta["url"] == f"/message/{creator.link_id}/{message_id}"

    assert reply_contents(api, creator, message_id) == ["Thanks for asking!"]


def test_bearer_authorization_works_like_x_api_key(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    replied = reply(
        api,
        creator.link_id,
        message_id,
        "via bearer",
        {"Authorization": f"Bearer {creator.api_key}"},
    )

    assert replied.status_code == 201, replied.text
    assert reply_contents(api, creator, message_id) == ["via bearer"]


def test_reply_count_in_inbox_increments(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    other_id = post_message(api, creator.link_id, "another question")
    assert inbox_item(api, creator, message_id)["reply_count"] == 0

    for expected in (1, 2, 3):
        replied = reply(api, creator.link_id, message_id, f"reply {expected}", creator.headers)
        assert replied.status_code == 201, replied.text
        assert inbox_item(api, creator, message_id)["reply_count"] == expected

    assert inbox_item(api, creator, other_id)["reply_count"] == 0


@pytest.mark.parametrize(
    "headers",
    refused_credentials(
        "no-credential", "unknown-key", "garbage-key", "unknown-bearer", "basic-scheme"
    ),
)
def test_reply_without_a_valid_credential_is_401(
    api: httpx.Client, creator: Creator, headers: dict[str, str] | None
) -> None:
    message_id = post_message(api, creator.link_id)

    assert_error(reply(api, creator.link_id, message_id, "sneaky", headers), 401)

    assert_nothing_replied(api, creator, message_id)


@pytest.mark.parametrize(("whose_link", "status"), STRANGERS_REACH)
def test_reply_by_a_creator_the_message_is_not_for_is_refused(
    api: httpx.Client, others_message: OthersMessage, whose_link: str, status: int
) -> None:
    link_id, message_id = others_message.link(whose_link), others_message.message_id
    stranger = others_message.stranger

    assert_error(reply(api, link_id, message_id, "not mine", stranger.headers), status)

    assert_nothing_replied(api, others_message.owner, message_id)


def test_unknown_message_is_404(api: httpx.Client, creator: Creator) -> None:
    assert_error(reply(api, creator.link_id, UNKNOWN_MESSAGE_ID, "hello?", creator.headers), 404)


def test_malformed_message_id_is_400(api: httpx.Client, creator: Creator) -> None:
    body = assert_error(reply(api, creator.link_id, "not-a-ulid", "hello?", creator.headers), 400)

    assert [f["field"] for f in body["error"]["fields"]] == ["message_id"]


def test_unknown_link_is_404(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    assert_error(reply(api, "nosuchlink0", message_id, "hello?", creator.headers), 404)

    assert_nothing_replied(api, creator, message_id)


@pytest.mark.parametrize("content", WITHIN_BOUNDS)
def test_reply_in_bounds_is_stored_exactly(
    api: httpx.Client, creator: Creator, content: str
) -> None:
    message_id = post_message(api, creator.link_id)

    replied = reply(api, creator.link_id, message_id, content, creator.headers)

    assert replied.status_code == 201, replied.text
    assert replied.json()["data"]["message_content"] == content
    assert reply_contents(api, creator, message_id) == [content]


def test_reply_length_is_counted_after_nfc(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    replied = reply(api, creator.link_id, message_id, "e\u0301" * 500, creator.headers)

    assert replied.status_code == 201, replied.text
    assert replied.json()["data"]["message_content"] == "\u00e9" * 500
    assert reply_contents(api, creator, message_id) == ["\u00e9" * 500]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        pytest.param("", "too_short", id="empty"),
        pytest.param("k" * 501, "too_long", id="501-chars"),
        pytest.param("\U0001f389" * 501, "too_long", id="501-emoji"),
        pytest.param(" \n ", "blank", id="whitespace"),
        pytest.param(7, "wrong_type", id="number"),
        pytest.param(None, "wrong_type", id="null"),
    ],
)
def test_reply_out_of_bounds_is_refused(
    api: httpx.Client, creator: Creator, content: Any, problem: str
) -> None:
    message_id = post_message(api, creator.link_id)

    body = assert_error(reply(api, creator.link_id, message_id, content, creator.headers), 400)

    assert [(f["field"], f["problem"]) for f in body["error"]["fields"]] == [
        ("message_content", problem)
    ]
    assert_nothing_replied(api, creator, message_id)


def test_reply_with_nul_character_is_never_a_500(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    replied = reply(api, creator.link_id, message_id, "a\x00b", creator.headers)

    assert replied.status_code in {201, 400}, replied.text
    if replied.status_code == 400:
        assert_nothing_replied(api, creator, message_id)
    else:
        assert reply_contents(api, creator, message_id) == ["a\x00b"]


def test_reply_body_as_text_plain_is_415(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    sent = api.post(
        f"/message/{creator.link_id}/{message_id}",
        content=b'{"message_content": "hi"}',
        headers={**creator.headers, "Content-Type": "text/plain"},
    )

    assert_error(sent, 415)
    assert_nothing_replied(api, creator, message_id)


def test_concurrent_replies_each_land_once_and_get_their_own_answer(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    # Replies that arrive together are written together (one commit per group): each must
    # still be counted on its own message and answered for itself, also when the group
    # holds replies to another link's message, to no message at all, and a stranger's.
    owner, stranger = make_creator(), make_creator()
    busy = post_message(api, owner.link_id, "asked by many")
    quiet = post_message(api, owner.link_id, "asked once")
    theirs = post_message(api, stranger.link_id, "someone else's")
    plan = (
        [(owner, owner.link_id, busy, f"busy {n}") for n in range(9)]
        + [(owner, owner.link_id, quiet, "quiet 0")]
        + [(owner, owner.link_id, theirs, "chain!")] * 3  # another link's message: 404
        + [(owner, owner.link_id, UNKNOWN_MESSAGE_ID, "nobody")] * 3  # 404
        + [(stranger, owner.link_id, busy, "not mine")] * 3  # 403
    )
    start = threading.Barrier(len(plan))

    def one_reply(step: tuple[Creator, str, str, str]) -> httpx.Response:
        who, link_id, message_id, text = step
        start.wait(timeout=30)
        return reply(api, link_id, message_id, text, who.headers)

    with ThreadPoolExecutor(max_workers=len(plan)) as pool:
        responses = list(pool.map(one_reply, plan))

    for (who, _, message_id, text), response in zip(plan, responses, strict=True):
        if who is stranger:
            assert_error(response, 403)
        elif message_id in (busy, quiet):
            assert response.status_code == 201, response.text
            data = response.json()["data"]
            assert (data["message_id"], data["message_content"]) == (message_id, text)
        else:
            assert_error(response, 404)
    assert inbox_item(api, owner, busy)["reply_count"] == 9
    assert sorted(reply_contents(api, owner, busy)) == sorted(f"busy {n}" for n in range(9))
    assert inbox_item(api, owner, quiet)["reply_count"] == 1
    assert reply_contents(api, owner, quiet) == ["quiet 0"]
    assert_nothing_replied(api, stranger, theirs)
