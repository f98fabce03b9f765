"""POST /message/{link_id}: an anonymous message, its envelope, its bounds and its refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, inbox_ids, inbox_items
from tests.conftest import Creator
from tests.support.texts import WITHIN_BOUNDS

MAX_BODY_BYTES = 16 * 1024
ENVELOPE_KEYS = {"status_code", "message", "data", "metadata"}
METADATA_KEYS = {"method", "url", "execution_time_ms", "ip", "timestamp"}


def inbox_contents(api: httpx.Client, creator: Creator) -> list[str]:
    return [item["message_content"] for item in inbox_items(api, creator)]


def send(api: httpx.Client, link_id: str, content: Any) -> httpx.Response:
    return api.post(f"/message/{link_id}", json={"message_content": content})


def send_raw(
    api: httpx.Client, link_id: str, body: bytes, content_type: str | None = "application/json"
) -> httpx.Response:
    headers = {"Content-Type": content_type} if content_type else {}
    return api.post(f"/message/{link_id}", content=body, headers=headers)


def utc_instant(value: str) -> datetime:
    """Parse an ISO 8601 date-time and insist that it is in UTC."""
    moment = datetime.fromisoformat(value)
    assert moment.utcoffset() == timedelta(0), value
    return moment


def problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item["field"], item["problem"]) for item in body["error"]["fields"]]


# --- success ------------------------------------------------------------------------------


def test_created_message_has_exactly_the_contract_shape(
    api: httpx.Client, creator: Creator
) -> None:
    before = datetime.now(UTC)
    sent = send(api, creator.link_id, "What is your favourite book?")
    after = datetime.now(UTC)

    assert sent.status_code == 201, sent.text
    body = sent.json()
    assert set(body) == ENVELOPE_KEYS
    assert body["status_code"] == 201
    assert isinstance(body["message"], str)
    assert body["message"]
    data = body["data"]
    assert set(data) == {"id", "message_content", "created_at"}
    assert isinstance(data["id"], str)
    assert data["id"]
    assert data["message_content"] == "What is your favourite book?"
    created = utc_instant(data["created_at"])
    assert before - timedelta(seconds=1) <= created <= after + timedelta(seconds=1)

    meta = body["metadata"]
    assert set(meta) == METADATA_KEYS
    assert meta["method"] == "POST"
    assert meta["url"] == f"/message/{creator.link_id}"
    assert isinstance(meta["execution_time_ms"], int | float)
    assert not isinstance(meta["execution_time_ms"], bool)
    assert 0 <= meta["execution_time_ms"] < 30_000
    assert meta["ip"] == "127.0.0.1"
    stamp = utc_instant(meta["timestamp"])
    assert before - timedelta(seconds=1) <= stamp <= after + timedelta(seconds=1)

    assert inbox_ids(api, creator) == [data["id"]]


def test_metadata_url_keeps_the_query_string_as_received(
    api: httpx.Client, creator: Creator
) -> None:
    url = f"/message/{creator.link_id}?ref=story&utm=a%2Fb&flag"
    sent = api.post(url, json={"message_content": "hello"})

    assert sent.status_code == 201, sent.text
    assert sent.json()["metadata"]["url"] == url


def test_json_content_type_with_charset_is_accepted(api: httpx.Client, creator: Creator) -> None:
    sent = send_raw(
        api,
        creator.link_id,
        json.dumps({"message_content": "café"}).encode(),
        "application/json; charset=utf-8",
    )

    assert sent.status_code == 201, sent.text
    assert inbox_contents(api, creator) == ["café"]


def assert_sent_and_kept_as(api: httpx.Client, creator: Creator, content: str, kept: str) -> None:
    """Send ``content``; the answer and the inbox must both show it as ``kept``."""
    sent = send(api, creator.link_id, content)

    assert sent.status_code == 201, sent.text
    assert sent.json()["data"]["message_content"] == kept
    assert inbox_contents(api, creator) == [kept]


@pytest.mark.parametrize(
    "content",
    [*WITHIN_BOUNDS, pytest.param("  padded\nwith lines  ", id="surrounding-whitespace")],
)
def test_content_is_stored_and_returned_exactly_as_sent(
    api: httpx.Client, creator: Creator, content: str
) -> None:
    assert_sent_and_kept_as(api, creator, content, content)


def test_length_is_counted_after_nfc_and_returned_composed(
    api: httpx.Client, creator: Creator
) -> None:
    decomposed = "e\u0301" * 500  # 1000 code points as sent, 500 once composed

    assert_sent_and_kept_as(api, creator, decomposed, "\u00e9" * 500)


def test_nul_character_is_handled_the_same_on_every_backend(
    api: httpx.Client, creator: Creator
) -> None:
    """Either stored verbatim or refused as a validation error: never a 500."""
    sent = send(api, creator.link_id, "before\x00after")

    assert sent.status_code in {201, 400}, sent.text
    if sent.status_code == 201:
        assert inbox_contents(api, creator) == ["before\x00after"]
    else:
        assert_error(sent, 400)
        assert inbox_ids(api, creator) == []


# --- refusals: nothing is stored ----------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        pytest.param("", "too_short", id="empty"),
        pytest.param("z" * 501, "too_long", id="501-chars"),
        pytest.param("\U0001f600" * 501, "too_long", id="501-emoji"),
        pytest.param("e\u0301" * 501, "too_long", id="501-after-nfc"),
        pytest.param("   ", "blank", id="spaces"),
        pytest.param(" \t\n\r\u3000 ", "blank", id="mixed-whitespace"),
    ],
)
def test_out_of_bounds_content_is_refused(
    api: httpx.Client, creator: Creator, content: str, problem: str
) -> None:
    before = inbox_ids(api, creator)

    body = assert_error(send(api, creator.link_id, content), 400)

    assert problems(body) == [("message_content", problem)]
    assert inbox_ids(api, creator) == before


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        pytest.param({"message_content": 42}, "wrong_type", id="number"),
        pytest.param({"message_content": None}, "wrong_type", id="null"),
        pytest.param({"message_content": ["hi"]}, "wrong_type", id="list"),
        pytest.param({"message_content": {"text": "hi"}}, "wrong_type", id="object"),
        pytest.param({}, "missing", id="missing"),
        pytest.param({"content": "hi"}, "missing", id="misnamed"),
    ],
)
def test_wrong_field_is_named_in_the_error(
    api: httpx.Client, creator: Creator, payload: dict[str, Any], problem: str
) -> None:
    before = inbox_ids(api, creator)

    body = assert_error(api.post(f"/message/{creator.link_id}", json=payload), 400)

    assert problems(body) == [("message_content", problem)]
    assert inbox_ids(api, creator) == before


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b'["hi"]', id="list-body"),
        pytest.param(b"null", id="null-body"),
        pytest.param(b'"hi"', id="string-body"),
        pytest.param(b"42", id="number-body"),
    ],
)
def test_body_that_is_not_an_object_is_refused(
    api: httpx.Client, creator: Creator, raw: bytes
) -> None:
    before = inbox_ids(api, creator)

    body = assert_error(send_raw(api, creator.link_id, raw), 400)

    assert body["error"]["fields"], "a validation error names what is at fault"
    assert inbox_ids(api, creator) == before


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b'{"message_content": "hi"', id="unterminated"),
        pytest.param(b"{'message_content': 'hi'}", id="single-quotes"),
        pytest.param(b'{"message_content": "hi",}', id="trailing-comma"),
        pytest.param(b"", id="empty"),
    ],
)
def test_malformed_json_is_refused(api: httpx.Client, creator: Creator, raw: bytes) -> None:
    before = inbox_ids(api, creator)

    assert_error(send_raw(api, creator.link_id, raw), 400)

    assert inbox_ids(api, creator) == before


@pytest.mark.parametrize(
    "content_type",
    [
        pytest.param("text/plain", id="text-plain"),
        pytest.param("application/x-www-form-urlencoded", id="form"),
        pytest.param(None, id="no-content-type"),
    ],
)
def test_body_that_is_not_declared_json_is_refused_with_415(
    api: httpx.Client, creator: Creator, content_type: str | None
) -> None:
    before = inbox_ids(api, creator)
    raw = json.dumps({"message_content": "valid JSON, wrong label"}).encode()

    assert_error(send_raw(api, creator.link_id, raw, content_type), 415)

    assert inbox_ids(api, creator) == before


def test_body_over_16_kib_is_refused_with_413(api: httpx.Client, creator: Creator) -> None:
    before = inbox_ids(api, creator)
    raw = b'{"message_content": "hi"}'
    raw += b" " * (MAX_BODY_BYTES + 1 - len(raw))  # valid JSON, one byte over the limit

    assert_error(send_raw(api, creator.link_id, raw), 413)

    assert inbox_ids(api, creator) == before


def test_body_of_exactly_16_kib_is_accepted(api: httpx.Client, creator: Creator) -> None:
    raw = b'{"message_content": "hi"}'
    raw += b" " * (MAX_BODY_BYTES - len(raw))

    sent = send_raw(api, creator.link_id, raw)

    assert sent.status_code == 201, sent.text
    assert inbox_contents(api, creator) == ["hi"]


def test_streamed_body_over_16_kib_is_refused_with_413(api: httpx.Client, creator: Creator) -> None:
    """Without Content-Length (chunked), the limit still holds."""
    before = inbox_ids(api, creator)

    def chunks() -> Iterator[bytes]:
        yield b'{"message_content": "'
        yield b"a" * (MAX_BODY_BYTES + 1024)
        yield b'"}'

    sent = api.post(
        f"/message/{creator.link_id}",
        content=chunks(),
        headers={"Content-Type": "application/json"},
    )

    assert_error(sent, 413)
    assert inbox_ids(api, creator) == before


def test_unknown_link_is_404(api: httpx.Client, creator: Creator) -> None:
    before = inbox_ids(api, creator)

    assert_error(send(api, "nosuchlink0", "hello?"), 404)

    assert inbox_ids(api, creator) == before


@pytest.mark.parametrize(
    "link_id",
    [
        pytest.param("bad!id", id="punctuation"),
        pytest.param("a" * 65, id="65-chars"),
        pytest.param("caf%C3%A9", id="non-ascii"),
    ],
)
def test_malformed_link_id_is_400(api: httpx.Client, creator: Creator, link_id: str) -> None:
    before = inbox_ids(api, creator)

    body = assert_error(send(api, link_id, "hello"), 400)

    assert [field for field, _ in problems(body)] == ["link_id"]
    assert inbox_ids(api, creator) == before


def test_error_metadata_describes_the_request(api: httpx.Client, creator: Creator) -> None:
    url = f"/message/{creator.link_id}?from=test"
    body = assert_error(api.post(url, json={"message_content": ""}), 400)

    meta = body["metadata"]
    assert set(meta) == METADATA_KEYS
    assert meta["method"] == "POST"
    assert meta["url"] == url
    assert meta["ip"] == "127.0.0.1"
    utc_instant(meta["timestamp"])
