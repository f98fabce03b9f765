"""A pause with an end, and dates hidden on the public page: set through the API, seen
by senders, and a timed pause that resumes by itself. On SQLite and PostgreSQL."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from anonbox.core.clock import now_us
from tests.actions import assert_error, post_message
from tests.conftest import Creator
from tests.links.test_links import change, shown, utc_instant
from tests.server import Server
from tests.support.db import execute


def move_pause_end(database_url: str, link_id: str, to: int) -> None:
    """What time does to a timed pause, done at once."""
    execute(database_url, "UPDATE links SET paused_until = $2 WHERE id = $1", link_id, to)


def post(api: httpx.Client, link_id: str) -> httpx.Response:
    return api.post(f"/message/{link_id}", json={"message_content": "are you there?"})


def test_a_timed_pause_refuses_messages_until_its_end_then_resumes_by_itself(
    api: httpx.Client, creator: Creator, server: Server
) -> None:
    before = datetime.now(UTC)
    paused = change(api, creator, creator.link_id, {"pause_for_hours": 24})
    assert paused.status_code == 200, paused.text
    data = paused.json()["data"]
    assert data["paused"] is True
    end = utc_instant(data["paused_until"])
    assert before + timedelta(hours=24) - timedelta(seconds=5) <= end
    assert end <= datetime.now(UTC) + timedelta(hours=24)
    assert shown(api, creator, creator.link_id) == data
    assert api.get(f"/links/{creator.link_id}/public").json()["data"]["paused"] is True
    assert_error(post(api, creator.link_id), 409, "link_paused")

    move_pause_end(server.database_url, creator.link_id, now_us() - 1)
    deadline = time.monotonic() + 15
    while shown(api, creator, creator.link_id)["paused"]:
        assert time.monotonic() < deadline, "the pause did not end"
        time.sleep(0.5)
    assert shown(api, creator, creator.link_id)["paused_until"] is None
    post_message(api, creator.link_id, "welcome back")


def test_resuming_or_an_open_pause_ends_a_timed_one(api: httpx.Client, creator: Creator) -> None:
    change(api, creator, creator.link_id, {"pause_for_hours": 1})
    resumed = change(api, creator, creator.link_id, {"paused": False}).json()["data"]
    assert (resumed["paused"], resumed["paused_until"]) == (False, None)
    change(api, creator, creator.link_id, {"pause_for_hours": 168})
    open_ended = change(api, creator, creator.link_id, {"paused": True}).json()["data"]
    assert (open_ended["paused"], open_ended["paused_until"]) == (True, None)
    renamed = change(api, creator, creator.link_id, {"prompt": "still paused?"}).json()["data"]
    assert (renamed["paused"], renamed["paused_until"]) == (True, None)


@pytest.mark.parametrize(
    "body",
    [
        {"pause_for_hours": 0},
        {"pause_for_hours": 8761},
        {"pause_for_hours": 1.5},
        {"pause_for_hours": 24, "paused": True},
        {"hide_dates": "yes"},
        {"muted": "hide"},
        {"muted": None},
        {"muted": True},
    ],
)
def test_bad_settings_are_refused_and_change_nothing(
    api: httpx.Client, creator: Creator, body: dict[str, object]
) -> None:
    before = shown(api, creator, creator.link_id)
    assert_error(change(api, creator, creator.link_id, body), 400, "validation_failed")
    assert shown(api, creator, creator.link_id) == before


def test_hidden_dates_leave_the_public_page_without_dates(
    api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id, "when was this?")
    answered = api.post(
        f"/message/{creator.link_id}/{message_id}",
        json={"message_content": "a while ago"},
        headers=creator.headers,
    )
    assert answered.status_code == 201, answered.text
    page = api.get(f"/{creator.link_id}")
    assert "<time" in page.text

    hidden = change(api, creator, creator.link_id, {"hide_dates": True}).json()["data"]
    assert hidden["hide_dates"] is True
    assert api.get(f"/links/{creator.link_id}/public").json()["data"]["hide_dates"] is True
    page = api.get(f"/{creator.link_id}")
    assert page.status_code == 200
    assert "a while ago" in page.text
    assert "<time" not in page.text
