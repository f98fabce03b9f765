"""Bulk clean-up of a link: every unanswered message. (Not every message from one sender:
withdrawn, its answer would link messages to one sender.)"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.actions import assert_error, inbox_ids, post_message, post_reply, reply_items
from tests.conftest import Creator
from tests.safety.conftest import add_link, new_sender, sent
from tests.support.credentials import refused_credentials
from tests.support.deployment import Deployment
from tests.support.strangers import OthersMessage


def deleted(response: httpx.Response) -> int:
    """The count in a clean-up's answer, whose data is exactly ``{"deleted": n}``."""
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert set(data) == {"deleted"}
    assert isinstance(data["deleted"], int)
    return int(data["deleted"])


# --- no "every message from one sender" -----------------------------------------------------


def test_deleting_every_message_from_one_sender_is_withdrawn(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    """Its answer would tell which messages share a sender (docs/decisions.md, issue 32):
    the endpoint is gone, from the server and from its OpenAPI, and deletes nothing."""
    creator = new_creator()
    noisy, quiet = new_sender(), new_sender()
    noisy_ids = [sent(proxied, creator.link_id, f"spam {n}", noisy) for n in range(3)]
    quiet_id = sent(proxied, creator.link_id, "fine", quiet)
    before = inbox_ids(proxied, creator)
    assert before == [quiet_id, *noisy_ids[::-1]]

    path = f"/message/{creator.link_id}/{noisy_ids[0]}/sender"
    gone = assert_error(proxied.delete(path, headers=creator.headers), 404, "not_found")
    assert "withdrawn" in gone["message"]
    for method in ("POST", "GET", "PUT"):
        assert_error(proxied.request(method, path, headers=creator.headers), 405)
    assert inbox_ids(proxied, creator) == before

    paths = proxied.get("/openapi.json").json()["paths"]
    assert not [name for name in paths if name.endswith("/sender")], sorted(paths)


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


@pytest.mark.parametrize("headers", refused_credentials("no-credential", "unknown-key"))
def test_clean_up_needs_a_credential(
    api: httpx.Client, creator: Creator, headers: dict[str, str]
) -> None:
    message_id = post_message(api, creator.link_id)
    path = f"/message/{creator.link_id}/unanswered"
    assert_error(api.delete(path, headers=headers), 401, "unauthorized")
    assert inbox_ids(api, creator) == [message_id]


def test_clean_up_is_for_the_creator_of_the_link_only(
    api: httpx.Client, others_message: OthersMessage
) -> None:
    creator, other, message_id = others_message
    path = f"/message/{creator.link_id}/unanswered"
    assert_error(api.delete(path, headers=other.headers), 403, "forbidden")
    assert inbox_ids(api, creator) == [message_id]


def test_deleting_unanswered_messages_of_an_unknown_link_is_404(
    api: httpx.Client, creator: Creator
) -> None:
    response = api.delete("/message/nosuchlink0/unanswered", headers=creator.headers)
    assert_error(response, 404, "not_found")
