"""DELETE of a reply and of a whole message, by the creator only, along the ownership chain."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.actions import assert_error, inbox_items, post_message, post_reply, reply_items
from tests.conftest import Creator
from tests.support.credentials import refused_credentials
from tests.support.strangers import STRANGERS_REACH, OthersMessage

UNKNOWN_ID = "01aaaaaaaaaaaaaaaaaaaaaaaa"


def reply_ids(
    api: httpx.Client, creator: Creator, message_id: str, headers: dict[str, str] | None = None
) -> list[str]:
    return [r["reply_message_id"] for r in reply_items(api, creator, message_id, headers)]


def inbox(
    api: httpx.Client, creator: Creator, headers: dict[str, str] | None = None
) -> dict[str, int]:
    """message id -> reply_count, as the caller (the creator by default) sees the inbox."""
    return {m["id"]: m["reply_count"] for m in inbox_items(api, creator, headers)}


# --- delete reply -------------------------------------------------------------------------


def test_delete_reply_returns_200_with_null_data(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    keep = post_reply(api, creator, message_id, "first")
    gone = post_reply(api, creator, message_id, "second")

    deleted = api.delete(f"/message/{creator.link_id}/{message_id}/{gone}", headers=creator.headers)

    assert deleted.status_code == 200, deleted.text
    body = deleted.json()
    assert set(body) == {"status_code", "message", "data", "metadata"}
    assert body["status_code"] == 200
    assert body["data"] is None
    assert body["metadata"]["method"] == "DELETE"
    assert body["metadata"]["url"] == f"/message/{creator.link_id}/{message_id}/{gone}"
    assert reply_ids(api, creator, message_id) == [keep]


def test_delete_reply_decrements_reply_count(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    first = post_reply(api, creator, message_id, "one")
    second = post_reply(api, creator, message_id, "two")
    assert inbox(api, creator)[message_id] == 2

    url = f"/message/{creator.link_id}/{message_id}"
    assert api.delete(f"{url}/{first}", headers=creator.headers).status_code == 200
    assert inbox(api, creator)[message_id] == 1
    assert api.delete(f"{url}/{second}", headers=creator.headers).status_code == 200
    assert inbox(api, creator)[message_id] == 0


def test_deleting_the_same_reply_twice_is_404_and_counts_once(
    api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    post_reply(api, creator, message_id, "stays")
    gone = post_reply(api, creator, message_id, "goes")
    url = f"/message/{creator.link_id}/{message_id}/{gone}"

    assert api.delete(url, headers=creator.headers).status_code == 200
    assert_error(api.delete(url, headers=creator.headers), 404)

    assert inbox(api, creator)[message_id] == 1


def test_reply_under_another_message_is_404(api: httpx.Client, creator: Creator) -> None:
    asked = post_message(api, creator.link_id, "question one")
    other = post_message(api, creator.link_id, "question two")
    reply_id = post_reply(api, creator, asked, "answer to one")
    post_reply(api, creator, other, "answer to two")

    assert_error(
        api.delete(f"/message/{creator.link_id}/{other}/{reply_id}", headers=creator.headers), 404
    )

    assert inbox(api, creator) == {asked: 1, other: 1}
    assert reply_ids(api, creator, asked) == [reply_id]


def test_unknown_reply_is_404(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    post_reply(api, creator, message_id, "only reply")

    assert_error(
        api.delete(
            f"/message/{creator.link_id}/{message_id}/{UNKNOWN_ID}", headers=creator.headers
        ),
        404,
    )

    assert inbox(api, creator)[message_id] == 1


def test_malformed_reply_id_is_400(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)

    assert_error(
        api.delete(f"/message/{creator.link_id}/{message_id}/not_a_ulid", headers=creator.headers),
        400,
    )


def test_deleting_the_last_reply_hides_the_message_from_the_public(
    api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id)
    reply_id = post_reply(api, creator, message_id, "published")
    assert inbox(api, creator, headers={}) == {message_id: 1}

    deleted = api.delete(
        f"/message/{creator.link_id}/{message_id}/{reply_id}", headers=creator.headers
    )

    assert deleted.status_code == 200, deleted.text
    assert inbox(api, creator, headers={}) == {}
    assert_error(api.get(f"/message/{creator.link_id}/{message_id}"), 404)
    assert inbox(api, creator) == {message_id: 0}


@pytest.mark.parametrize(
    "headers",
    [
        *refused_credentials("no-credential", "unknown-key"),
        pytest.param({"Authorization": "Bearer nonsense"}, id="unknown-bearer"),
    ],
)
def test_delete_reply_without_a_valid_credential_is_401(
    api: httpx.Client, creator: Creator, headers: dict[str, str] | None
) -> None:
    message_id = post_message(api, creator.link_id)
    reply_id = post_reply(api, creator, message_id, "keep me")

    assert_error(
        api.delete(f"/message/{creator.link_id}/{message_id}/{reply_id}", headers=headers), 401
    )

    assert reply_ids(api, creator, message_id) == [reply_id]
    assert inbox(api, creator)[message_id] == 1


def test_delete_reply_with_another_creators_key_is_403(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    owner, stranger = make_creator(), make_creator()
    message_id = post_message(api, owner.link_id)
    reply_id = post_reply(api, owner, message_id, "keep me")

    assert_error(
        api.delete(f"/message/{owner.link_id}/{message_id}/{reply_id}", headers=stranger.headers),
        403,
    )

    assert reply_ids(api, owner, message_id) == [reply_id]
    assert inbox(api, owner)[message_id] == 1


# --- delete message -----------------------------------------------------------------------


def test_delete_message_removes_it_and_its_replies(api: httpx.Client, creator: Creator) -> None:
    doomed = post_message(api, creator.link_id, "delete me")
    kept = post_message(api, creator.link_id, "keep me")
    doomed_reply = post_reply(api, creator, doomed, "reply to doomed")
    kept_reply = post_reply(api, creator, kept, "reply to kept")

    deleted = api.delete(f"/message/{creator.link_id}/{doomed}", headers=creator.headers)

    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["data"] is None
    assert inbox(api, creator) == {kept: 1}
    assert_error(api.get(f"/message/{creator.link_id}/{doomed}", headers=creator.headers), 404)
    assert_error(api.get(f"/message/{creator.link_id}/{doomed}"), 404)
    assert_error(
        api.delete(f"/message/{creator.link_id}/{doomed}/{doomed_reply}", headers=creator.headers),
        404,
    )
    assert reply_ids(api, creator, kept) == [kept_reply]


def test_deleted_message_cannot_be_replied_to_or_liked(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    url = f"/message/{creator.link_id}/{message_id}"
    assert api.delete(url, headers=creator.headers).status_code == 200

    assert_error(api.delete(url, headers=creator.headers), 404)
    assert_error(api.post(url, json={"message_content": "late"}, headers=creator.headers), 404)
    assert_error(api.put(f"{url}/like", headers=creator.headers), 404)
    assert inbox(api, creator) == {}


@pytest.mark.parametrize("headers", refused_credentials("no-credential", "unknown-key"))
def test_delete_message_without_a_valid_credential_is_401(
    api: httpx.Client, creator: Creator, headers: dict[str, str] | None
) -> None:
    message_id = post_message(api, creator.link_id)

    assert_error(api.delete(f"/message/{creator.link_id}/{message_id}", headers=headers), 401)

    assert inbox(api, creator) == {message_id: 0}


@pytest.mark.parametrize(("whose_link", "status"), STRANGERS_REACH)
def test_delete_message_by_a_creator_it_is_not_for_is_refused(
    api: httpx.Client, others_message: OthersMessage, whose_link: str, status: int
) -> None:
    owner, message_id = others_message.owner, others_message.message_id
    reply_id = post_reply(api, owner, message_id, "still here")
    url = f"/message/{others_message.link(whose_link)}/{message_id}"

    assert_error(api.delete(url, headers=others_message.stranger.headers), status)

    assert inbox(api, owner) == {message_id: 1}
    assert reply_ids(api, owner, message_id) == [reply_id]
