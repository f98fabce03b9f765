"""Answer pages (issue 41, item 1): each published answer at ``/{link_id}/a/{answer_id}``,
under an id of its own that tells no time; 404 for anything never published, exactly as
for an id that never existed; 410 once published and removed. Through the real server, on
SQLite and PostgreSQL (the ``api`` fixture)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from PIL import Image

from tests.actions import post_message, post_reply
from tests.conftest import Creator
from tests.server import Server
from tests.support.db import query

HTML = {"Accept": "text/html,application/xhtml+xml"}
ANSWER_ID = re.compile(r"[A-Za-z0-9_-]{12}")


def answer_id_of(api: httpx.Client, link_id: str, message_id: str) -> str:
    """The answer id the public listing gives an answered message."""
    listed = api.get(f"/message/{link_id}", params={"limit": 100})
    assert listed.status_code == 200, listed.text
    [item] = [i for i in listed.json()["data"]["items"] if i["id"] == message_id]
    return str(item["answer_id"])


def answered(
    api: httpx.Client, creator: Creator, question: str = "What boat?", reply: str = "A canoe"
) -> tuple[str, str, str]:
    """A message with one reply: its id, the reply's, and the answer id."""
    message_id = post_message(api, creator.link_id, question)
    reply_id = post_reply(api, creator, message_id, reply)
    return message_id, reply_id, answer_id_of(api, creator.link_id, message_id)


def answer_page(api: httpx.Client, link_id: str, answer_id: str, **headers: str) -> httpx.Response:
    return api.get(f"/{link_id}/a/{answer_id}", headers={**HTML, **headers})


def named(api: httpx.Client, creator: Creator, name: str) -> Creator:
    changed = api.patch("/account/profile", json={"display_name": name}, headers=creator.headers)
    assert changed.status_code == 200, changed.text
    return creator


def test_an_answer_page_shows_the_question_the_answer_the_creator_and_a_way_to_ask(
    api: httpx.Client, creator: Creator
) -> None:
    named(api, creator, "Hanako")
    message_id, _, answer_id = answered(api, creator, "Favourite boat?", "A red canoe")

    page = answer_page(api, creator.link_id, answer_id)

    assert page.status_code == 200, page.text
    body = page.text
    assert re.search(r'<h1 id="question"[^>]*>Favourite boat\?</h1>', body)
    assert re.search(r'<ol class="replies" id="replies".*A red canoe', body, re.S)
    assert '<span class="creator-name" id="creator-name" dir="auto">Hanako</span>' in body
    assert 'id="creator-avatar" src="/avatars/' in body
    assert re.search(rf'<a class="button" id="ask-link" href="/{creator.link_id}">', body)
    # Passing it on: its card and its address, by the answer's id.
    card = f"/{creator.link_id}/a/{answer_id}/card.png"
    assert f'data-share-card="{card}"' in body
    assert re.search(rf'data-share-url="http://[^"/]+/{creator.link_id}/a/{answer_id}"', body)
    assert re.search(rf'property="og:url" content="[^"]*/{creator.link_id}/a/{answer_id}"', body)
    # The message's id carries its send time: the page never shows it.
    assert message_id not in body
    # The same for everyone: no cookie, nothing of the visitor's.
    assert "set-cookie" not in page.headers
    assert 'name="csrf_token"' not in body


def test_the_answer_id_is_random_and_stays_through_later_replies(
    api: httpx.Client, creator: Creator
) -> None:
    message_id, first_reply, answer_id = answered(api, creator)
    assert ANSWER_ID.fullmatch(answer_id), answer_id
    assert answer_id not in message_id
    assert message_id[:10] not in answer_id

    second_reply = post_reply(api, creator, message_id, "And a kayak")
    assert answer_id_of(api, creator.link_id, message_id) == answer_id
    assert "And a kayak" in answer_page(api, creator.link_id, answer_id).text

    # Every reply deleted, then one written again: the same page comes back.
    for reply_id in (first_reply, second_reply):
        gone = api.delete(
            f"/message/{creator.link_id}/{message_id}/{reply_id}", headers=creator.headers
        )
        assert gone.status_code == 200, gone.text
    assert answer_page(api, creator.link_id, answer_id).status_code == 410
    post_reply(api, creator, message_id, "Back again")
    assert answer_id_of(api, creator.link_id, message_id) == answer_id
    again = answer_page(api, creator.link_id, answer_id)
    assert again.status_code == 200
    assert "Back again" in again.text

    # Messages answered one after the other: ids of their own, none the same.
    others = [answered(api, creator, f"q{n}")[2] for n in range(3)]
    assert len({answer_id, *others}) == 4


def _same_but_for_the_address(response: httpx.Response, asked: str, baseline: str) -> None:
    """A 404 page as for an id that never was: the same bytes, but for the requested id
    (the page's language links name its own address)."""
    assert response.status_code == 404
    assert response.text.replace(asked, "ID") == baseline


def test_anything_never_published_answers_404_exactly_as_an_id_that_never_was(
    api: httpx.Client, make_creator: Callable[[], Creator], server: Server
) -> None:
    creator, other = make_creator(), make_creator()
    never = "Zz9_never-00"
    baseline_page = answer_page(api, creator.link_id, never)
    assert baseline_page.status_code == 404
    assert "There is no answer here" in baseline_page.text
    baseline = baseline_page.text.replace(never, "ID")

    unanswered = post_message(api, creator.link_id, "still waiting")
    # Filtered: a muted word keeps it out of the inbox; it cannot be answered.
    assert (
        api.post("/muted-words", json={"word": "pineapple"}, headers=creator.headers).status_code
        == 201
    )
    filtered = post_message(api, creator.link_id, "pineapple pizza?")
    refused = api.post(
        f"/message/{creator.link_id}/{filtered}",
        json={"message_content": "no"},
        headers=creator.headers,
    )
    assert refused.status_code == 404
    # Dropped: its sender was blocked (through an earlier message of theirs).
    blocked_by = post_message(api, creator.link_id, "first of a pest")
    assert (
        api.post(
            f"/message/{creator.link_id}/{blocked_by}/block", headers=creator.headers
        ).status_code
        == 201
    )
    dropped = post_message(api, creator.link_id, "second of a pest")
    # Another link's published answer.
    _, _, others_answer = answered(api, other)

    rows = query(
        server.database_url,
        "SELECT message_id FROM answers WHERE link_id = $1",
        creator.link_id,
    )
    assert rows == []  # nothing of these was ever published

    for asked in (
        others_answer,
        unanswered,
        filtered,
        dropped,
        blocked_by,
        unanswered[:12],
        "short",
        "x" * 13,
    ):
        _same_but_for_the_address(answer_page(api, creator.link_id, asked), asked, baseline)
    # Through the API's clients too: the envelope of any unknown address.
    as_json = api.get(f"/{creator.link_id}/a/{others_answer}")
    assert as_json.status_code == 404
    assert as_json.json()["error"]["code"] == "not_found"
    # And the other link's page still shows it, under its own link only.
    assert answer_page(api, other.link_id, others_answer).status_code == 200


def test_an_answer_removed_after_it_was_published_answers_410(
    api: httpx.Client, creator: Creator, server: Server
) -> None:
    message_id, reply_id, answer_id = answered(api, creator)
    other_message, _, other_answer = answered(api, creator, "Another?")

    deleted = api.delete(f"/message/{creator.link_id}/{message_id}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    gone = answer_page(api, creator.link_id, answer_id)
    assert gone.status_code == 410
    assert "This answer was removed." in gone.text
    assert "What boat?" not in gone.text
    assert "A canoe" not in gone.text
    as_json = api.get(f"/{creator.link_id}/a/{answer_id}")
    assert (as_json.status_code, as_json.json()["error"]["code"]) == (404, "gone")
    # The row is kept as a tombstone, holding nothing of the message.
    [row] = query(server.database_url, "SELECT message_id FROM answers WHERE id = $1", answer_id)
    assert row == {"message_id": None}

    # Its card goes too.
    card = api.get(f"/{creator.link_id}/a/{answer_id}/card.png", headers=HTML)
    assert card.status_code == 410

    # Its last reply deleted: gone as well, while the message waits in the inbox.
    [reply] = api.get(f"/message/{creator.link_id}/{other_message}").json()["data"]["items"]
    api.delete(
        f"/message/{creator.link_id}/{other_message}/{reply['reply_message_id']}",
        headers=creator.headers,
    )
    assert answer_page(api, creator.link_id, other_answer).status_code == 410

    # The link deleted: the page says the link is no longer available.
    assert api.delete(f"/links/{creator.link_id}", headers=creator.headers).status_code in {
        200,
        204,
    }
    link_gone = answer_page(api, creator.link_id, other_answer)
    assert link_gone.status_code == 410
    assert "This link is no longer available." in link_gone.text
    assert reply_id  # (the first reply went with its message)


@pytest.mark.parametrize("hide_dates", [False, True])
def test_hide_dates_leaves_no_time_on_the_answer_page(
    api: httpx.Client, creator: Creator, hide_dates: bool
) -> None:
    patched = api.patch(
        f"/links/{creator.link_id}", json={"hide_dates": hide_dates}, headers=creator.headers
    )
    assert patched.status_code == 200, patched.text
    _, _, answer_id = answered(api, creator)
    body = answer_page(api, creator.link_id, answer_id).text
    assert ("<time" in body) is not hide_dates
    assert ("datetime=" in body) is not hide_dates


def test_the_send_page_links_each_answer_to_its_page_by_its_answer_id(
    api: httpx.Client, creator: Creator
) -> None:
    message_id, _, answer_id = answered(api, creator, "Linked?")
    body = api.get(f"/{creator.link_id}", headers=HTML).text
    path = f"/{creator.link_id}/a/{answer_id}"
    assert f'id="answer-{answer_id}"' in body
    assert re.search(rf'<a class="answer-link" href="{path}" dir="auto">Linked\?</a>', body)
    assert f'data-share-card="{path}/card.png"' in body
    assert re.search(rf'data-share-url="[^"]*{path}"', body)
    assert message_id not in body  # its send time, which "hide dates" hides


def test_the_api_listing_gives_answered_messages_their_answer_id(
    api: httpx.Client, creator: Creator
) -> None:
    _, _, answer_id = answered(api, creator)
    waiting = post_message(api, creator.link_id, "not yet")
    mine = {
        i["id"]: i["answer_id"]
        for i in api.get(f"/message/{creator.link_id}", headers=creator.headers).json()["data"][
            "items"
        ]
    }
    assert mine[waiting] is None
    assert answer_id in mine.values()


def _png(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    return Image.open(io.BytesIO(response.content))


def test_the_answer_card_by_answer_id_is_the_message_card(
    api: httpx.Client, creator: Creator
) -> None:
    message_id, _, answer_id = answered(api, creator)
    by_answer = api.get(f"/{creator.link_id}/a/{answer_id}/card.png")
    with _png(by_answer) as card:
        assert card.size == (1080, 1920)
    by_message = api.get(f"/{creator.link_id}/{message_id}/card.png")
    assert by_answer.content == by_message.content
    assert by_answer.headers["etag"] == by_message.headers["etag"]
    assert by_answer.headers["cache-control"] == "public, max-age=300"
    again = api.get(
        f"/{creator.link_id}/a/{answer_id}/card.png",
        headers={"If-None-Match": by_answer.headers["etag"]},
    )
    assert (again.status_code, again.content) == (304, b"")
    assert api.get(f"/{creator.link_id}/a/Zz9_never-00/card.png", headers=HTML).status_code == 404


def test_the_senders_receipt_links_the_answer_page_once_answered(
    api: httpx.Client, creator: Creator
) -> None:
    sent = api.post(
        f"/message/{creator.link_id}", params={"receipt": "true"}, json={"message_content": "Hi?"}
    )
    assert sent.status_code == 201, sent.text
    message_id, token = sent.json()["data"]["id"], sent.json()["data"]["receipt"]["token"]
    waiting = api.get(f"/r/{token}", headers=HTML).text
    assert "/a/" not in waiting
    assert "answer_id" not in api.get(f"/receipts/{token}").json()["data"]["message"]

    post_reply(api, creator, message_id, "Hello!")
    answer_id = answer_id_of(api, creator.link_id, message_id)
    page = api.get(f"/r/{token}", headers=HTML).text
    link = f'id="original-answer-page" href="/{creator.link_id}/a/{answer_id}"'
    assert link in page
    assert api.get(f"/receipts/{token}").json()["data"]["message"]["answer_id"] == answer_id


def test_replies_at_once_to_one_message_publish_one_answer(
    api: httpx.Client, creator: Creator, server: Server
) -> None:
    message_id = post_message(api, creator.link_id, "All at once?")
    with ThreadPoolExecutor(8) as pool:  # replies that arrive together share a commit
        written = list(
            pool.map(lambda n: post_reply(api, creator, message_id, f"yes {n}"), range(8))
        )
    assert len(set(written)) == 8
    rows = query(server.database_url, "SELECT id FROM answers WHERE message_id = $1", message_id)
    assert [row["id"] for row in rows] == [answer_id_of(api, creator.link_id, message_id)]
    page = answer_page(api, creator.link_id, rows[0]["id"]).text
    assert all(f"yes {n}" in page for n in range(8))
