"""Two creators: neither acts on the other's link, and ids never cross between links."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, inbox_items, post_message, post_reply, reply_items
from tests.conftest import Creator


@dataclass(frozen=True)
class World:
    a: Creator
    b: Creator
    a_answered: str  # A's message, replied to and liked
    a_reply: str
    a_unanswered: str
    b_answered: str  # B's message, replied to
    b_reply: str


def snapshot(api: httpx.Client, creator: Creator) -> list[dict[str, Any]]:
    """Everything the creator can see on their link: messages, likes, counts and replies."""
    messages = inbox_items(api, creator)
    for message in messages:
        message["replies"] = reply_items(api, creator, message["id"])
    return messages


@pytest.fixture
def world(api: httpx.Client, make_creator: Callable[[], Creator]) -> World:
    a, b = make_creator(), make_creator()
    a_answered = post_message(api, a.link_id, "to A, answered")
    a_reply = post_reply(api, a, a_answered, "A answers")
    liked = api.put(f"/message/{a.link_id}/{a_answered}/like", headers=a.headers)
    assert liked.status_code == 200, liked.text
    a_unanswered = post_message(api, a.link_id, "to A, unanswered")
    b_answered = post_message(api, b.link_id, "to B, answered")
    b_reply = post_reply(api, b, b_answered, "B answers")
    return World(a, b, a_answered, a_reply, a_unanswered, b_answered, b_reply)


Operation = Callable[[httpx.Client, World, dict[str, str]], httpx.Response]

# Every creator operation, aimed at A's link, with whatever credential the test supplies.
ON_A_LINK: dict[str, Operation] = {
    "reply": lambda api, w, h: api.post(
        f"/message/{w.a.link_id}/{w.a_answered}", json={"message_content": "x"}, headers=h
    ),
    "reply-unanswered": lambda api, w, h: api.post(
        f"/message/{w.a.link_id}/{w.a_unanswered}", json={"message_content": "x"}, headers=h
    ),
    "like": lambda api, w, h: api.put(f"/message/{w.a.link_id}/{w.a_answered}/like", headers=h),
    "like-unanswered": lambda api, w, h: api.put(
        f"/message/{w.a.link_id}/{w.a_unanswered}/like", headers=h
    ),
    "delete-reply": lambda api, w, h: api.delete(
        f"/message/{w.a.link_id}/{w.a_answered}/{w.a_reply}", headers=h
    ),
    "delete-message": lambda api, w, h: api.delete(
        f"/message/{w.a.link_id}/{w.a_answered}", headers=h
    ),
    "delete-unanswered": lambda api, w, h: api.delete(
        f"/message/{w.a.link_id}/{w.a_unanswered}", headers=h
    ),
    # B's own ids under A's link: still A's link, so still not B's to touch.
    "reply-b-message": lambda api, w, h: api.post(
        f"/message/{w.a.link_id}/{w.b_answered}", json={"message_content": "x"}, headers=h
    ),
    "delete-b-reply": lambda api, w, h: api.delete(
        f"/message/{w.a.link_id}/{w.b_answered}/{w.b_reply}", headers=h
    ),
}


@pytest.mark.parametrize("operation", ON_A_LINK.values(), ids=ON_A_LINK.keys())
@pytest.mark.parametrize("scheme", ["x-api-key", "bearer"])
def test_other_creators_key_on_my_link_is_403_and_changes_nothing(
    api: httpx.Client, world: World, operation: Operation, scheme: str
) -> None:
    a_before, b_before = snapshot(api, world.a), snapshot(api, world.b)
    headers = (
        world.b.headers if scheme == "x-api-key" else {"Authorization": f"Bearer {world.b.api_key}"}
    )

    assert_error(operation(api, world, headers), 403)

    assert snapshot(api, world.a) == a_before
    assert snapshot(api, world.b) == b_before


# A's own credential on A's own link, but naming something that belongs to B.
CROSSING_IDS: dict[str, Operation] = {
    "reply": lambda api, w, h: api.post(
        f"/message/{w.a.link_id}/{w.b_answered}", json={"message_content": "x"}, headers=h
    ),
    "like": lambda api, w, h: api.put(f"/message/{w.a.link_id}/{w.b_answered}/like", headers=h),
    "delete-message": lambda api, w, h: api.delete(
        f"/message/{w.a.link_id}/{w.b_answered}", headers=h
    ),
    "delete-reply-under-b-message": lambda api, w, h: api.delete(
        f"/message/{w.a.link_id}/{w.b_answered}/{w.b_reply}", headers=h
    ),
    "delete-b-reply-under-a-message": lambda api, w, h: api.delete(
        f"/message/{w.a.link_id}/{w.a_answered}/{w.b_reply}", headers=h
    ),
    "list-replies": lambda api, w, h: api.get(f"/message/{w.a.link_id}/{w.b_answered}", headers=h),
    "list-replies-public": lambda api, w, _: api.get(f"/message/{w.a.link_id}/{w.b_answered}"),
}


@pytest.mark.parametrize("operation", CROSSING_IDS.values(), ids=CROSSING_IDS.keys())
def test_other_creators_ids_under_my_link_are_404_and_change_nothing(
    api: httpx.Client, world: World, operation: Operation
) -> None:
    a_before, b_before = snapshot(api, world.a), snapshot(api, world.b)

    assert_error(operation(api, world, world.a.headers), 404)

    assert snapshot(api, world.a) == a_before
    assert snapshot(api, world.b) == b_before


def test_other_creators_key_sees_only_my_answered_messages(api: httpx.Client, world: World) -> None:
    listed = api.get(f"/message/{world.a.link_id}", headers=world.b.headers)

    assert listed.status_code == 200, listed.text
    assert [item["id"] for item in listed.json()["data"]["items"]] == [world.a_answered]
    assert_error(
        api.get(f"/message/{world.a.link_id}/{world.a_unanswered}", headers=world.b.headers), 404
    )


def test_each_creator_sees_only_their_own_inbox(api: httpx.Client, world: World) -> None:
    a_ids = [m["id"] for m in snapshot(api, world.a)]
    b_ids = [m["id"] for m in snapshot(api, world.b)]

    assert sorted(a_ids) == sorted([world.a_answered, world.a_unanswered])
    assert b_ids == [world.b_answered]
