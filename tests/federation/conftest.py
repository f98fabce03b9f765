"""A federating anonbox for the fediverse tests: its own public address, and peers on
loopback allowed (``ANONBOX_FEDERATION_ALLOW_PRIVATE``), on both databases."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.servers import own_server

federating = own_server(
    "federating",
    {"ANONBOX_FEDERATION_ALLOW_PRIVATE": "true", "ANONBOX_FEDERATION_RETRY_SECONDS": "0.2"},
    public_url=True,
)


@pytest.fixture
def fed_api(federating: Server) -> Iterator[httpx.Client]:
    with loopback_client(base_url=federating.url, timeout=30) as client:
        yield client


def followable(api: httpx.Client, creator: Creator) -> None:
    made = api.patch(f"/links/{creator.link_id}", json={"fediverse": True}, headers=creator.headers)
    assert made.status_code == 200, made.text
    assert made.json()["data"]["fediverse"] is True


def open_to_follows(server: Server, api: httpx.Client, creator: Creator) -> tuple[str, str]:
    """Makes ``creator``'s link followable on ``server``: its actor's URL and its inbox's path."""
    followable(api, creator)
    return f"{server.url}/ap/links/{creator.link_id}", f"/ap/links/{creator.link_id}/inbox"


@pytest.fixture
def fed_creator(federating: Server, fed_api: httpx.Client) -> Creator:
    return make_creator_in(federating.database_url)


def wait_for(check: Callable[[], object], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.1)


AP = {"Accept": "application/activity+json"}
