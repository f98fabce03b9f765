"""What a user does through the API, and the checks every test repeats."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import httpx

from tests.conftest import Creator
from tests.support.http import loopback_client

ERROR_KEYS = {"status_code", "message", "data", "error", "metadata"}


def post_message(api: httpx.Client, link_id: str, content: str = "hello") -> str:
    """Send an anonymous message to ``link_id``; returns its id."""
    sent = api.post(f"/message/{link_id}", json={"message_content": content})
    assert sent.status_code == 201, sent.text
    return str(sent.json()["data"]["id"])


def post_reply(api: httpx.Client, creator: Creator, message_id: str, content: str = "hi") -> str:
    """The creator answers one of their messages; returns the reply's id."""
    sent = api.post(
        f"/message/{creator.link_id}/{message_id}",
        json={"message_content": content},
        headers=creator.headers,
    )
    assert sent.status_code == 201, sent.text
    return str(sent.json()["data"]["reply_message_id"])


def first_page(
    api: httpx.Client, path: str, headers: dict[str, str] | None
) -> list[dict[str, Any]]:
    """The items of one listing, up to 100 of them, as the given caller sees them."""
    listed = api.get(path, params={"limit": 100}, headers=headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["data"]["items"])


def every_item(
    api: httpx.Client, path: str, params: dict[str, str | int], headers: dict[str, str]
) -> list[dict[str, Any]]:
    """Every item of a listing, newest first, following next_cursor to the end."""
    items: list[dict[str, Any]] = []
    params = {**params, "limit": 100}
    while True:
        page = api.get(path, params=params, headers=headers)
        assert page.status_code == 200, page.text
        data = page.json()["data"]
        items += data["items"]
        if data["next_cursor"] is None:
            return items
        params["cursor"] = data["next_cursor"]


def inbox_items(
    api: httpx.Client, creator: Creator, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The messages on the creator's link, as the caller (by default the creator) sees them."""
    path = f"/message/{creator.link_id}"
    return first_page(api, path, creator.headers if headers is None else headers)


def inbox_texts(base_url: str, creator: Creator) -> list[str]:
    """The texts in the creator's inbox at ``base_url`` (its first 100, newest first)."""
    with loopback_client(base_url=base_url, timeout=30) as api:
        return [item["message_content"] for item in inbox_items(api, creator)]


def inbox_ids(api: httpx.Client, creator: Creator) -> list[str]:
    return [item["id"] for item in inbox_items(api, creator)]


def inbox_item(api: httpx.Client, creator: Creator, message_id: str) -> dict[str, Any]:
    """The one inbox entry for ``message_id``, as the creator sees it."""
    [item] = [m for m in inbox_items(api, creator) if m["id"] == message_id]
    return dict(item)


def reply_items(
    api: httpx.Client, creator: Creator, message_id: str, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The replies to a message, as the caller (by default the creator) sees them."""
    path = f"/message/{creator.link_id}/{message_id}"
    return first_page(api, path, creator.headers if headers is None else headers)


def data_of(response: httpx.Response, status: int = 200) -> Any:
    """The envelope's ``data`` of a response that must have answered ``status``."""
    assert response.status_code == status, response.text
    return response.json()["data"]


def assert_error(
    response: httpx.Response, status: int, code: str | None = None, *, ip: str = "127.0.0.1"
) -> dict[str, Any]:
    """The response is the documented error envelope for ``status``, answering a caller at
    ``ip`` (a proxied sender's forwarded address, or loopback); returns the body."""
    assert "Traceback" not in response.text, response.text
    assert 'File "' not in response.text, response.text
    assert response.status_code == status, response.text
    assert response.headers["content-type"].split(";")[0].strip() == "application/json"
    body: dict[str, Any] = response.json()
    assert set(body) == ERROR_KEYS
    assert body["status_code"] == status
    assert body["data"] is None
    assert isinstance(body["message"], str)
    assert body["message"].strip()
    assert isinstance(body["error"]["code"], str)
    assert body["error"]["code"]
    if code is not None:
        assert body["error"]["code"] == code, body
    metadata = body["metadata"]
    assert metadata["method"] == response.request.method
    assert metadata["url"] == response.request.url.raw_path.decode("ascii")
    assert isinstance(metadata["execution_time_ms"], int | float)
    assert metadata["ip"] == ip
    assert isinstance(metadata["timestamp"], str)
    assert metadata["timestamp"]
    return body


def whole_inbox(base_url: str, creator: Creator) -> dict[str, str]:
    """Every message in the creator's inbox, following next_cursor to the end."""
    found: dict[str, str] = {}
    cursor: str | None = None
    with loopback_client(base_url=base_url, timeout=30, headers=creator.headers) as client:
        while True:
            params: dict[str, str | int] = {"limit": 100}
            if cursor:
                params["cursor"] = cursor
            page = client.get(f"/message/{creator.link_id}", params=params)
            assert page.status_code == 200, page.text
            data = page.json()["data"]
            for item in data["items"]:
                assert item["id"] not in found, f"{item['id']} listed twice"
                found[item["id"]] = item["message_content"]
            cursor = data["next_cursor"]
            if cursor is None:
                return found


class Poster(threading.Thread):
    """Posts until the server goes away; an answer counts only if it arrived whole."""

    def __init__(self, base_url: str, link_id: str, label: str, progress: threading.Semaphore):
        super().__init__(daemon=True)
        self.base_url = base_url
        self.link_id = link_id
        self.label = label
        self.progress = progress
        self.attempted: list[str] = []
        self.acknowledged: dict[str, str] = {}
        self.unexpected: list[str] = []
        self.ended_by: str | None = None  # the transport error that stopped it

    def run(self) -> None:
        with loopback_client(base_url=self.base_url, timeout=30) as client:
            for i in itertools.count():
                text = f"{self.label} #{i}"
                self.attempted.append(text)
                try:
                    # httpx raises on a body cut short of its Content-Length.
                    response = client.post(
                        f"/message/{self.link_id}", json={"message_content": text}
                    )
                except httpx.TransportError as exc:
                    self.ended_by = type(exc).__name__
                    return
                data = response.json()["data"] if response.status_code == 201 else None
                if data is None or data["message_content"] != text:
                    self.unexpected.append(f"{response.status_code} {response.text[:300]}")
                    return
                self.acknowledged[data["id"]] = text
                self.progress.release()


def answer_path(api: httpx.Client, link_id: str, message_id: str) -> str:
    """The page of an answered message, ``/{link_id}/a/{answer_id}``, by the answer id the
    public listing gives it."""
    listed = api.get(f"/message/{link_id}", params={"limit": 100})
    assert listed.status_code == 200, listed.text
    [item] = [i for i in listed.json()["data"]["items"] if i["id"] == message_id]
    return f"/{link_id}/a/{item['answer_id']}"
