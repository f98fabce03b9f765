"""Hostile requests beyond ``tests/core/test_errors.py``: enormous headers and absurd path
parameters get a 4xx (the envelope whenever the answer is JSON), never a 5xx or a dropped
connection, and the server stays ready."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, inbox_ids, post_message
from tests.conftest import Creator

HUGE = 10_000

Send = Callable[[httpx.Client, Creator, str], httpx.Response]


def answer_of(send: Callable[[], httpx.Response]) -> httpx.Response:
    try:
        return send()
    except httpx.TransportError as exc:  # a dropped connection is a failure, not a skip
        pytest.fail(f"the server dropped the connection: {exc!r}")


def assert_refused(api: httpx.Client, response: httpx.Response) -> None:
    """A 4xx, the error envelope when it is JSON, and the server still ready."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:500])
    if response.headers.get("content-type", "").startswith("application/json"):
        assert_error(response, response.status_code)
    assert api.get("/readyz").status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"X-Padding": "a" * 65536}, id="one-64-KiB-header"),
        pytest.param({f"X-Padding-{n}": "a" * 256 for n in range(256)}, id="256-headers"),
    ],
)
def test_an_enormous_header_is_refused(
    api: httpx.Client, creator: Creator, headers: dict[str, str]
) -> None:
    response = answer_of(
        lambda: api.post(
            f"/message/{creator.link_id}", json={"message_content": "hi"}, headers=headers
        )
    )
    assert_refused(api, response)
    assert inbox_ids(api, creator) == []


def _long() -> str:
    return "a" * HUGE


PATHS: list[Any] = [
    pytest.param(lambda api, c, m: api.get(f"/message/{_long()}"), id="list-link"),
    pytest.param(
        lambda api, c, m: api.post(f"/message/{_long()}", json={"message_content": "x"}),
        id="post-link",
    ),
    pytest.param(
        lambda api, c, m: api.get(f"/message/{c.link_id}/{_long()}", headers=c.headers),
        id="replies-message",
    ),
    pytest.param(
        lambda api, c, m: api.post(
            f"/message/{c.link_id}/{_long()}", json={"message_content": "x"}, headers=c.headers
        ),
        id="reply-message",
    ),
    pytest.param(
        lambda api, c, m: api.put(f"/message/{c.link_id}/{_long()}/like", headers=c.headers),
        id="like-message",
    ),
    pytest.param(
        lambda api, c, m: api.post(f"/message/{c.link_id}/{_long()}/block", headers=c.headers),
        id="block-message",
    ),
    pytest.param(
        lambda api, c, m: api.post(f"/message/{_long()}/{m}/block", headers=c.headers),
        id="block-link",
    ),
    pytest.param(
        lambda api, c, m: api.delete(f"/message/{c.link_id}/{_long()}/sender", headers=c.headers),
        id="delete-sender-message",
    ),
    pytest.param(
        lambda api, c, m: api.delete(f"/message/{_long()}/unanswered", headers=c.headers),
        id="delete-unanswered-link",
    ),
    pytest.param(
        lambda api, c, m: api.delete(f"/message/{c.link_id}/{m}/{_long()}", headers=c.headers),
        id="delete-reply",
    ),
    pytest.param(
        lambda api, c, m: api.delete(f"/message/{c.link_id}/{_long()}", headers=c.headers),
        id="delete-message",
    ),
    pytest.param(
        lambda api, c, m: api.delete(f"/blocks/{_long()}", headers=c.headers), id="unblock"
    ),
    pytest.param(
        lambda api, c, m: api.delete(f"/muted-words/{_long()}", headers=c.headers), id="unmute"
    ),
]


@pytest.mark.parametrize("send", PATHS)
def test_an_absurdly_long_path_parameter_is_refused(
    api: httpx.Client, creator: Creator, send: Send
) -> None:
    message_id = post_message(api, creator.link_id, "still here")
    response = answer_of(lambda: send(api, creator, message_id))
    assert_refused(api, response)
    assert inbox_ids(api, creator) == [message_id]
