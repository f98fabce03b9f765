"""Bulk clean-up of a link: every message from one sender, or every unanswered message."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.actions import assert_error, inbox_ids, post_message, post_reply, reply_items
from tests.conftest import Creator
from tests.safety.conftest import Deployment, add_link, new_sender, sent

SOME_ULID = "01jabcdefghjkmnpqrstvwxyz0"


def deleted(response: httpx.Response) -> int:
    """The count in a clean-up's answer, whose data is exactly ``{"deleted": n}``."""
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert set(data) == {"deleted"}
    assert isinstance(data["deleted"], int)
    return int(data["deleted"])


# --- every message from one sender ---------------------------------------------------------


def test_deleting_a_senders_messages_removes_theirs_to_this_link_only(
    deployment: Deployment, proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    second_link = add_link(deployment.proxied.database_url, creator)
    someone_else = new_creator()
    noisy, quiet = new_sender(), new_sender()

    noisy_ids = [sent(proxied, creator.link_id, f"spam {n}", noisy) for n in range(3)]
    post_reply(proxied, creator, noisy_ids[1])  # answered or not, it goes
    quiet_ids = [sent(proxied, creator.link_id, f"fine {n}", quiet) for n in range(2)]
    on_second_link = sent(proxied, second_link.link_id, "spam elsewhere", noisy)
    to_someone_else = sent(proxied, someone_else.link_id, "spam elsewhere", noisy)

    path = f"/message/{creator.link_id}/{noisy_ids[0]}/sender"
    assert deleted(proxied.delete(path, headers=creator.headers)) == 3
    assert inbox_ids(proxied, creator) == quiet_ids[::-1]
    assert inbox_ids(proxied, second_link) == [on_second_link]
    assert inbox_ids(proxied, someone_else) == [to_someone_else]

    # The message it started from is gone, so asking again is a 404.
    assert_error(proxied.delete(path, headers=creator.headers), 404, "not_found")
    last = f"/message/{creator.link_id}/{quiet_ids[0]}/sender"
    assert deleted(proxied.delete(last, headers=creator.headers)) == 2
    assert inbox_ids(proxied, creator) == []


def test_deleting_from_a_sender_with_one_message_deletes_one(
    api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    path = f"/message/{creator.link_id}/{message_id}/sender"
    assert deleted(api.delete(path, headers=creator.headers)) == 1
    assert inbox_ids(api, creator) == []


@pytest.mark.parametrize("suffix", ["sender", "unanswered"])
@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-credential"),
        pytest.param({"X-API-Key": "anb_" + "x" * 40}, id="unknown-key"),
    ],
)
def test_clean_up_needs_a_credential(
    api: httpx.Client, creator: Creator, headers: dict[str, str], suffix: str
) -> None:
    message_id = post_message(api, creator.link_id)
    path = f"/message/{creator.link_id}/{message_id}/sender"
    if suffix == "unanswered":
        path = f"/message/{creator.link_id}/unanswered"
    assert_error(api.delete(path, headers=headers), 401, "unauthorized")
    assert inbox_ids(api, creator) == [message_id]


@pytest.mark.parametrize("suffix", ["sender", "unanswered"])
def test_clean_up_is_for_the_creator_of_the_link_only(
    api: httpx.Client, make_creator: Callable[[], Creator], suffix: str
) -> None:
    creator, other = make_creator(), make_creator()
    message_id = post_message(api, creator.link_id)
    path = f"/message/{creator.link_id}/{message_id}/sender"
    if suffix == "unanswered":
        path = f"/message/{creator.link_id}/unanswered"
    assert_error(api.delete(path, headers=other.headers), 403, "forbidden")
    assert inbox_ids(api, creator) == [message_id]


def test_deleting_from_the_sender_of_a_message_that_is_not_there_is_404(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    creator, other = make_creator(), make_creator()
    mine = post_message(api, creator.link_id)
    theirs = post_message(api, other.link_id)
    for path in [
        f"/message/{creator.link_id}/{SOME_ULID}/sender",
        f"/message/{creator.link_id}/{theirs}/sender",  # exists, under another link
        f"/message/nosuchlink0/{mine}/sender",
    ]:
        assert_error(api.delete(path, headers=creator.headers), 404, "not_found")
    bad = api.delete(f"/message/{creator.link_id}/not-a-ulid/sender", headers=creator.headers)
    assert_error(bad, 400, "validation_failed")
    assert inbox_ids(api, creator) == [mine]
    assert inbox_ids(api, other) == [theirs]


# --- every unanswered message --------------------------------------------------------------


def test_deleting_unanswered_messages_keeps_the_answered_ones(
    deployment: Deployment, proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    second_link = add_link(deployment.proxied.database_url, creator)
    ids = [sent(proxied, creator.link_id, f"question {n}", new_sender()) for n in range(5)]
    answered = [ids[1], ids[3]]
    replies = {message_id: post_reply(proxied, creator, message_id) for message_id in answered}
    elsewhere = sent(proxied, second_link.link_id, "unanswered elsewhere", new_sender())

    path = f"/message/{creator.link_id}/unanswered"
    assert deleted(proxied.delete(path, headers=creator.headers)) == 3
    assert inbox_ids(proxied, creator) == answered[::-1]
    for message_id, reply_id in replies.items():
        assert [r["reply_message_id"] for r in reply_items(proxied, creator, message_id)] == [
            reply_id
        ]
    assert inbox_ids(proxied, second_link) == [elsewhere]
    assert deleted(proxied.delete(path, headers=creator.headers)) == 0
    assert inbox_ids(proxied, creator) == answered[::-1]


def test_a_message_whose_reply_was_deleted_is_unanswered_again(
    api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    reply_id = post_reply(api, creator, message_id)
    removed = api.delete(
        f"/message/{creator.link_id}/{message_id}/{reply_id}", headers=creator.headers
    )
    assert removed.status_code == 200, removed.text
    path = f"/message/{creator.link_id}/unanswered"
    assert deleted(api.delete(path, headers=creator.headers)) == 1
    assert inbox_ids(api, creator) == []


def test_deleting_unanswered_messages_of_an_unknown_link_is_404(
    api: httpx.Client, creator: Creator
) -> None:
    response = api.delete("/message/nosuchlink0/unanswered", headers=creator.headers)
    assert_error(response, 404, "not_found")
