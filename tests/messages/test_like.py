"""PUT /message/{link_id}/{message_id}/like: the creator's like toggles, atomically."""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.actions import assert_error, inbox_item, post_message
from tests.conftest import Creator
from tests.support.credentials import refused_credentials
from tests.support.strangers import STRANGERS_REACH, OthersMessage

UNKNOWN_MESSAGE_ID = "01aaaaaaaaaaaaaaaaaaaaaaaa"
CONCURRENT_TOGGLES = 40


def toggle(
    api: httpx.Client, link_id: str, message_id: str, headers: dict[str, str] | None
) -> httpx.Response:
    return api.put(f"/message/{link_id}/{message_id}/like", headers=headers)


def liked_in_inbox(api: httpx.Client, creator: Creator, message_id: str) -> bool:
    value = inbox_item(api, creator, message_id)["like_by_creator"]
    assert isinstance(value, bool)
    return value


def test_like_starts_false(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    assert liked_in_inbox(api, creator, message_id) is False


def test_toggle_sets_then_clears_the_like(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    first = toggle(api, creator.link_id, message_id, creator.headers)
    assert first.status_code == 200, first.text
    body = first.json()
    assert set(body) == {"status_code", "message", "data", "metadata"}
    assert body["status_code"] == 200
    assert body["data"] == {"message_id": message_id, "like_by_creator": True}
    assert body["metadata"]["method"] == "PUT"
    assert body["metadata"]["url"] == f"/message/{creator.link_id}/{message_id}/like"
    assert liked_in_inbox(api, creator, message_id) is True

    second = toggle(api, creator.link_id, message_id, creator.headers)
    assert second.status_code == 200, second.text
    assert second.json()["data"] == {"message_id": message_id, "like_by_creator": False}
    assert liked_in_inbox(api, creator, message_id) is False


def test_toggle_touches_only_the_named_message(api: httpx.Client, creator: Creator) -> None:
    liked = post_message(api, creator.link_id, "like me")
    untouched = post_message(api, creator.link_id, "leave me")

    assert toggle(api, creator.link_id, liked, creator.headers).status_code == 200

    assert liked_in_inbox(api, creator, liked) is True
    assert liked_in_inbox(api, creator, untouched) is False


def test_bearer_authorization_toggles_too(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    toggled = toggle(
        api, creator.link_id, message_id, {"Authorization": f"Bearer {creator.api_key}"}
    )

    assert toggled.status_code == 200, toggled.text
    assert liked_in_inbox(api, creator, message_id) is True


@pytest.mark.parametrize(
    "headers", refused_credentials("no-credential", "unknown-key", "empty-key")
)
def test_toggle_without_a_valid_credential_is_401(
    api: httpx.Client, creator: Creator, headers: dict[str, str] | None
) -> None:
    message_id = post_message(api, creator.link_id)

    assert_error(toggle(api, creator.link_id, message_id, headers), 401)

    assert liked_in_inbox(api, creator, message_id) is False


@pytest.mark.parametrize(("whose_link", "status"), STRANGERS_REACH)
def test_toggle_by_a_creator_the_message_is_not_for_is_refused(
    api: httpx.Client, others_message: OthersMessage, whose_link: str, status: int
) -> None:
    stranger = others_message.stranger
    message_id = others_message.message_id

    assert_error(toggle(api, others_message.link(whose_link), message_id, stranger.headers), status)

    assert liked_in_inbox(api, others_message.owner, message_id) is False


def test_toggle_unknown_message_is_404(api: httpx.Client, creator: Creator) -> None:
    assert_error(toggle(api, creator.link_id, UNKNOWN_MESSAGE_ID, creator.headers), 404)


def test_toggle_on_unknown_link_is_404(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    assert_error(toggle(api, "nosuchlink0", message_id, creator.headers), 404)

    assert liked_in_inbox(api, creator, message_id) is False


def test_toggle_with_malformed_message_id_is_400(api: httpx.Client, creator: Creator) -> None:
    assert_error(toggle(api, creator.link_id, "NOT-A-ULID", creator.headers), 400)


def test_concurrent_toggles_lose_no_update(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    start = threading.Barrier(CONCURRENT_TOGGLES)

    def one_toggle(_: int) -> httpx.Response:
        start.wait(timeout=30)
        # httpx.Client is thread-safe; its pool opens one connection per concurrent request.
        return toggle(api, creator.link_id, message_id, creator.headers)

    with ThreadPoolExecutor(max_workers=CONCURRENT_TOGGLES) as pool:
        responses = list(pool.map(one_toggle, range(CONCURRENT_TOGGLES)))

    assert [r.status_code for r in responses] == [200] * CONCURRENT_TOGGLES, [
        r.text for r in responses if r.status_code != 200
    ]
    states = [r.json()["data"]["like_by_creator"] for r in responses]
    assert states.count(True) == CONCURRENT_TOGGLES // 2
    assert states.count(False) == CONCURRENT_TOGGLES // 2
    assert liked_in_inbox(api, creator, message_id) is False


def test_concurrent_toggles_of_several_messages_each_get_their_own_answer(
    api: httpx.Client, creator: Creator
) -> None:
    # Toggles that arrive together are written together (one statement per group): each
    # message must still flip once per toggle, and each answer be its own toggle's, also
    # when the group holds messages of another link of the creator, or no message at all.
    other_link = api.post("/links", json={"prompt": "ask me"}, headers=creator.headers)
    assert other_link.status_code == 201, other_link.text
    elsewhere = post_message(api, other_link.json()["data"]["id"])
    odd = post_message(api, creator.link_id, "flipped an odd number of times")
    even = post_message(api, creator.link_id, "flipped an even number of times")
    plan = (
        [(creator.link_id, odd)] * 7
        + [(creator.link_id, even)] * 6
        + [(creator.link_id, elsewhere)] * 3  # under the wrong link: not found
        + [(creator.link_id, UNKNOWN_MESSAGE_ID)] * 3
    )
    start = threading.Barrier(len(plan))

    def one_toggle(target: tuple[str, str]) -> httpx.Response:
        start.wait(timeout=30)
        return toggle(api, *target, creator.headers)

    with ThreadPoolExecutor(max_workers=len(plan)) as pool:
        responses = list(pool.map(one_toggle, plan))

    answers: dict[str, list[bool]] = {odd: [], even: []}
    for (_, message_id), response in zip(plan, responses, strict=True):
        if message_id in answers:
            assert response.status_code == 200, response.text
            assert response.json()["data"]["message_id"] == message_id
            answers[message_id].append(response.json()["data"]["like_by_creator"])
        else:
            assert_error(response, 404)
    # Whatever the order, the toggles of one message alternate: as many set as cleared,
    # give or take the last one.
    assert sorted(answers[odd]) == [False] * 3 + [True] * 4
    assert sorted(answers[even]) == [False] * 3 + [True] * 3
    assert liked_in_inbox(api, creator, odd) is True
    assert liked_in_inbox(api, creator, even) is False
    other = dataclasses.replace(creator, link_id=other_link.json()["data"]["id"])
    assert liked_in_inbox(api, other, elsewhere) is False
