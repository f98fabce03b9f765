"""Every error, from routing to body parsing, is the JSON envelope with a stable code."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, inbox_ids, inbox_items, post_message, reply_items
from tests.conftest import Creator

MAX_BODY = 16 * 1024
SOME_ULID = "01jabcdefghjkmnpqrstvwxyz0"
JSON = {"content-type": "application/json"}

Send = Callable[[httpx.Client, Creator], httpx.Response]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/nope"),
        ("POST", "/nope"),
        ("GET", "/message"),
        ("GET", "/messages/abc"),
        ("GET", "/message/abc/def/ghi/jkl/mno"),
        ("GET", "/nope?page=2&q=%zz"),
    ],
)
def test_unknown_route_is_404_envelope(api: httpx.Client, method: str, path: str) -> None:
    response = api.request(
        method, path, json={"message_content": "x"} if method == "POST" else None
    )
    body = assert_error(response, 404, "not_found")
    assert body["metadata"]["url"] == path


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PATCH", "/message/{link}", {"GET", "POST"}),
        ("DELETE", "/message/{link}", {"GET", "POST"}),
        ("PATCH", "/message/{link}/{message}", {"GET", "POST", "DELETE"}),
        ("PUT", "/message/{link}/{message}", {"GET", "POST", "DELETE"}),
        ("GET", "/message/{link}/{message}/like", {"PUT"}),
        ("PATCH", "/message/{link}/{message}/like", {"PUT"}),
        ("POST", "/healthz", {"GET"}),
    ],
)
def test_wrong_method_on_known_path_is_405_with_allow(
    api: httpx.Client, creator: Creator, method: str, path: str, allowed: set[str]
) -> None:
    url = path.format(link=creator.link_id, message=post_message(api, creator.link_id))
    response = api.request(method, url, headers=creator.headers)
    assert_error(response, 405, "method_not_allowed")
    allow = {m.strip().upper() for m in response.headers.get("allow", "").split(",")}
    assert allowed <= allow
    assert method not in allow


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"{bad", id="syntax"),
        pytest.param(b'{"message_content": "hel', id="truncated"),
        pytest.param(b'{"message_content": "hello",}', id="trailing-comma"),
        pytest.param(b'{"message_content": "hello"} extra', id="trailing-garbage"),
        pytest.param(b"{'message_content': 'hello'}", id="single-quotes"),
        pytest.param(b'{"message_content": "caf\xe9"}', id="not-utf8"),
    ],
)
def test_malformed_json_is_400_invalid_json(
    api: httpx.Client, creator: Creator, raw: bytes
) -> None:
    response = api.post(f"/message/{creator.link_id}", content=raw, headers=JSON)
    body = assert_error(response, 400, "validation_failed")
    assert {"field": "body", "problem": "invalid_json"} in body["error"]["fields"]
    assert inbox_ids(api, creator) == []


def send_raw_reply(
    api: httpx.Client, creator: Creator, message_id: str, raw: bytes, headers: dict[str, str]
) -> httpx.Response:
    return api.post(
        f"/message/{creator.link_id}/{message_id}",
        content=raw,
        headers={**headers, **creator.headers},
    )


def test_malformed_json_reply_is_400(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    response = send_raw_reply(api, creator, message_id, b"{bad", JSON)
    assert_error(response, 400, "validation_failed")


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"content-type": "text/plain"}, id="text-plain"),
        pytest.param({"content-type": "application/x-www-form-urlencoded"}, id="form"),
        pytest.param({"content-type": "application/xml"}, id="xml"),
        pytest.param({}, id="no-content-type"),
    ],
)
def test_body_that_is_not_json_is_415(
    api: httpx.Client, creator: Creator, headers: dict[str, str]
) -> None:
    raw = b'{"message_content": "hello"}'
    response = api.post(f"/message/{creator.link_id}", content=raw, headers=headers)
    assert_error(response, 415, "unsupported_media_type")
    assert inbox_ids(api, creator) == []


def test_reply_that_is_not_json_is_415(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    form = {"content-type": "application/x-www-form-urlencoded"}
    response = send_raw_reply(api, creator, message_id, b"message_content=hi", form)
    assert_error(response, 415, "unsupported_media_type")
    assert reply_items(api, creator, message_id) == []


def json_body_of_size(size: int) -> bytes:
    """A syntactically valid create-message body of exactly ``size`` bytes."""
    shell = b'{"message_content": ""}'
    raw = b'{"message_content": "' + b"x" * (size - len(shell)) + b'"}'
    assert len(raw) == size
    return raw


def test_body_over_16_kib_is_413(api: httpx.Client, creator: Creator) -> None:
    raw = json_body_of_size(MAX_BODY + 1)
    response = api.post(f"/message/{creator.link_id}", content=raw, headers=JSON)
    assert_error(response, 413, "payload_too_large")
    assert inbox_ids(api, creator) == []


def test_chunked_body_over_16_kib_is_413(api: httpx.Client, creator: Creator) -> None:
    raw = json_body_of_size(4 * MAX_BODY)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit must hold on the stream
        for start in range(0, len(raw), 4096):
            yield raw[start : start + 4096]

    response = api.post(f"/message/{creator.link_id}", content=chunks(), headers=JSON)
    assert "content-length" not in response.request.headers
    assert_error(response, 413, "payload_too_large")
    assert inbox_ids(api, creator) == []


def test_body_of_exactly_16_kib_is_read(api: httpx.Client, creator: Creator) -> None:
    response = api.post(
        f"/message/{creator.link_id}", content=json_body_of_size(MAX_BODY), headers=JSON
    )
    body = assert_error(response, 400, "validation_failed")
    assert body["error"]["fields"] == [{"field": "message_content", "problem": "too_long"}]


HOSTILE: list[Any] = [
    pytest.param(
        lambda api, c: api.post(
            f"/message/{c.link_id}", content=b"[" * 5000 + b"]" * 5000, headers=JSON
        ),
        id="deeply-nested-json",
    ),
    pytest.param(
        lambda api, c: api.post(
            f"/message/{c.link_id}", content=b"[" * 900 + b"]" * 900, headers=JSON
        ),
        id="nested-json-msgspec-decodes",
    ),
    pytest.param(
        lambda api, c: api.post(
            f"/message/{c.link_id}", content=b'{"message_content": "\\ud800"}', headers=JSON
        ),
        id="lone-surrogate",
    ),
    pytest.param(
        lambda api, c: api.post(
            f"/message/{c.link_id}", content=b'{"message_content": 1e999999}', headers=JSON
        ),
        id="huge-number",
    ),
    pytest.param(
        lambda api, c: api.post(f"/message/{c.link_id}", content=b"", headers=JSON),
        id="empty-body",
    ),
    pytest.param(
        lambda api, c: api.post(f"/message/{c.link_id}", content=b"[1, 2]", headers=JSON),
        id="array-body",
    ),
    pytest.param(
        lambda api, c: api.post(f"/message/{c.link_id}", json={"message_content": ["a"]}),
        id="content-is-list",
    ),
    pytest.param(
        lambda api, c: api.post("/message/bad%20link", json={"message_content": "x"}),
        id="bad-link-id",
    ),
    pytest.param(
        lambda api, c: api.post(f"/message/{'a' * 5000}", json={"message_content": "x"}),
        id="very-long-link-id",
    ),
    pytest.param(
        lambda api, c: api.post("/message/%00%ff", json={"message_content": "x"}),
        id="binary-link-id",
    ),
    pytest.param(
        lambda api, c: api.get(f"/message/{c.link_id}", params={"limit": "9" * 40}),
        id="huge-limit",
    ),
    pytest.param(
        lambda api, c: api.get(f"/message/{c.link_id}", params={"limit": "-1"}),
        id="negative-limit",
    ),
    pytest.param(
        lambda api, c: api.get(f"/message/{c.link_id}", params={"cursor": "'; DROP TABLE x;--"}),
        id="injection-cursor",
    ),
    pytest.param(
        lambda api, c: api.put(f"/message/{c.link_id}/not-a-ulid/like", headers=c.headers),
        id="bad-message-id",
    ),
    pytest.param(
        lambda api, c: api.delete(f"/message/{c.link_id}/{SOME_ULID}/x", headers=c.headers),
        id="bad-reply-id",
    ),
    pytest.param(
        lambda api, c: api.get(f"/message/{c.link_id}", headers={"X-API-Key": "anb_" + "x" * 9000}),
        id="huge-api-key",
    ),
    pytest.param(
        lambda api, c: api.get(f"/message/{c.link_id}", headers={"X-API-Key": b"anb_\xff\xfe"}),
        id="non-ascii-api-key",
    ),
    pytest.param(
        lambda api, c: api.put(
            f"/message/{c.link_id}/{SOME_ULID}/like", headers={"Authorization": "Bearer anb_x"}
        ),
        id="unknown-bearer",
    ),
]


@pytest.mark.parametrize("send", HOSTILE)
def test_hostile_request_gets_4xx_envelope_without_trace(
    api: httpx.Client, creator: Creator, send: Send
) -> None:
    response = send(api, creator)
    assert 400 <= response.status_code < 500, response.text
    assert_error(response, response.status_code)
    assert api.get("/readyz").status_code == 200


@pytest.mark.parametrize("text", ["hi\x00there", "\x00"])
def test_nul_character_in_text_is_rejected_or_kept_never_a_500(
    api: httpx.Client, creator: Creator, text: str
) -> None:
    sent = api.post(f"/message/{creator.link_id}", json={"message_content": text})
    assert sent.status_code in {201, 400}, sent.text
    if sent.status_code == 400:
        assert_error(sent, 400, "validation_failed")
        assert inbox_ids(api, creator) == []
    else:
        assert [item["message_content"] for item in inbox_items(api, creator)] == [text]
