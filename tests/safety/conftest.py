"""The steps the anonymity and abuse tests share: senders behind the trusted proxy, sending,
and the checks of what a sender sees. Their servers are the safety fleet
(``tests/support/deployment.py``, one per database backend, shared with the tests of
other folders that need it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx

from anonbox.core.clock import now_us
from anonbox.core.database import connect
from anonbox.core.ids import new_link_id
from tests.actions import inbox_items
from tests.conftest import Creator

ULID = re.compile(r"^[0-9a-hjkmnp-tv-z]{26}$")
HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")
MESSAGE_KEYS = {"id", "message_content", "created_at"}


def add_link(database_url: str, creator: Creator) -> Creator:
    """Give ``creator`` one more link; returns the creator as seen through that link."""

    async def run() -> str:
        db = await connect(database_url)
        try:
            link_id = new_link_id()
            await db.execute(
                "INSERT INTO links (id, user_id, prompt, created_at) VALUES ($1, $2, $3, $4)",
                link_id,
                creator.user_id,
                "Another link",
                now_us(),
            )
        finally:
            await db.close()
        return link_id

    return dataclasses.replace(creator, link_id=asyncio.run(run()))


# --- senders ------------------------------------------------------------------------------

_numbers = itertools.count(1)


@dataclass(frozen=True)
class Sender:
    """Someone behind the trusted proxy, known to the server by ``address``."""

    address: str

    @property
    def headers(self) -> dict[str, str]:
        return {"X-Forwarded-For": self.address}


def new_sender() -> Sender:
    """An IPv4 sender no other test uses."""
    n = next(_numbers)
    return Sender(f"10.{(n >> 8) & 255}.{n & 255}.1")  # each its own /24 too


def new_ipv6_network() -> str:
    """The first four groups of an IPv6 /64 no other test uses, e.g. ``2001:db8:5:1``."""
    return f"2001:db8:{next(_numbers):x}:1"


def send(
    api: httpx.Client,
    link_id: str,
    content: str = "hello",
    sender: Sender | None = None,
    key: str | None = None,
) -> httpx.Response:
    """POST an anonymous message, as ``sender`` (through the proxy) when given."""
    headers = dict(sender.headers) if sender else {}
    if key is not None:
        headers["Idempotency-Key"] = key
    return api.post(f"/message/{link_id}", json={"message_content": content}, headers=headers)


def sent(
    api: httpx.Client, link_id: str, content: str = "hello", sender: Sender | None = None
) -> str:
    """Send a message that must be answered 201 as from ``sender``; returns its id."""
    response = send(api, link_id, content, sender)
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["ip"] == (sender.address if sender else "127.0.0.1")
    return str(response.json()["data"]["id"])


def contents(api: httpx.Client, creator: Creator) -> list[str]:
    """The texts in the creator's inbox, newest first."""
    return [item["message_content"] for item in inbox_items(api, creator)]


def block_sender_of(api: httpx.Client, creator: Creator, message_id: str) -> dict[str, Any]:
    """The creator blocks whoever sent ``message_id``; returns the block."""
    response = api.post(f"/message/{creator.link_id}/{message_id}/block", headers=creator.headers)
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


def creator_who_blocked(
    api: httpx.Client, new_creator: Callable[[], Creator], sender: Sender
) -> tuple[Creator, str]:
    """A new creator whose first message came from ``sender``, whom they then blocked;
    returns the creator and that message's id."""
    creator = new_creator()
    first = sent(api, creator.link_id, "first", sender)
    block_sender_of(api, creator, first)
    return creator, first


# --- checks -------------------------------------------------------------------------------


def utc_instant(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    assert moment.utcoffset() == timedelta(0), value
    return moment


def assert_created_message(response: httpx.Response, content: str) -> dict[str, Any]:
    """A 201 with exactly the documented message shape; returns its data."""
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"status_code", "message", "data", "metadata"}
    assert body["status_code"] == 201
    data: dict[str, Any] = body["data"]
    assert set(data) == MESSAGE_KEYS
    assert ULID.match(data["id"]), data
    assert data["message_content"] == content
    utc_instant(data["created_at"])
    return data


def assert_same_answer(
    stored: httpx.Response, stored_text: str, dropped: httpx.Response, dropped_text: str
) -> None:
    """The answers to a stored and to a dropped message agree in everything but the
    values that differ between any two messages (id, times, the text sent)."""
    stored_data = assert_created_message(stored, stored_text)
    dropped_data = assert_created_message(dropped, dropped_text)
    assert stored_data["id"] != dropped_data["id"]
    assert set(stored.headers) == set(dropped.headers)
    assert stored.headers["content-type"] == dropped.headers["content-type"]
    one, two = stored.json(), dropped.json()
    assert one["status_code"] == two["status_code"] == 201
    assert one["message"] == two["message"]
    assert set(one["metadata"]) == set(two["metadata"])
    assert one["metadata"]["method"] == two["metadata"]["method"]
    assert one["metadata"]["url"] == two["metadata"]["url"]


def retry_after(response: httpx.Response) -> int:
    """The Retry-After header: whole seconds, 1 to 60."""
    value = response.headers.get("retry-after", "")
    assert value.isdigit(), dict(response.headers)
    assert 1 <= int(value) <= 60, value
    return int(value)


def kept_ids(api: httpx.Client, creator: Creator) -> list[str]:
    """The ids the creator still has, newest first: in the inbox or in the filtered folder.
    A dropped message is in neither."""
    ids = [item["id"] for item in inbox_items(api, creator)]
    listed = api.get(
        f"/message/{creator.link_id}/filtered", params={"limit": 100}, headers=creator.headers
    )
    assert listed.status_code == 200, listed.text
    ids += [item["id"] for item in listed.json()["data"]["items"]]
    return sorted(ids, reverse=True)
