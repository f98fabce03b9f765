"""A blocked sender, or anyone testing a creator's muted words, must not be able to tell a
dropped message from a stored one: not by the answer to the post, not by how long it
takes, and not by anything asked later about its id (a report, the public view, the share
card). Each test runs on SQLite and on PostgreSQL, through the trusted proxy so that
every sender has an address of its own."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import httpx
import pytest

from tests.conftest import Creator
from tests.moderation.conftest import make_admin_in
from tests.safety.conftest import (
    Sender,
    assert_same_answer,
    block_sender_of,
    new_sender,
    send,
    sent,
)
from tests.support.deployment import Deployment
from tests.support.timing import AnswerTimes

MUTED = "pineapple"
POSTS_EACH = 150
BURST_POSTS, BURST_WORKERS = 100, 16


@pytest.fixture
def admin_headers(deployment: Deployment) -> dict[str, str]:
    return make_admin_in(deployment.proxied.database_url).headers


def dropping(api: httpx.Client, creator: Creator, how: str) -> tuple[Sender, str]:
    """A sender and a text whose messages ``creator`` drops: by a block, or a muted word."""
    sender = new_sender()
    if how == "blocked":
        block_sender_of(api, creator, sent(api, creator.link_id, "before the block", sender))
        return sender, "just asking"
    # A muted word drops only on a link set to drop (the default keeps it in the folder).
    drop = api.patch(f"/links/{creator.link_id}", json={"muted": "drop"}, headers=creator.headers)
    assert drop.status_code == 200, drop.text
    answer = api.post("/muted-words", json={"word": MUTED}, headers=creator.headers)
    assert answer.status_code == 201, answer.text
    return sender, f"do you like {MUTED}?"


def shape(response: httpx.Response, message_id: str) -> tuple[Any, ...]:
    """What an answer says, without what differs between any two ids and moments."""
    kind = response.headers.get("content-type", "").split(";")[0]
    if kind != "application/json":
        return response.status_code, kind
    body = response.json()
    data = body.get("data")
    return (
        response.status_code,
        kind,
        tuple(sorted(body)),
        body["message"].replace(message_id, "ID"),
        tuple(sorted(data)) if isinstance(data, dict) else data,
        data.get("status") if isinstance(data, dict) else None,
        (body.get("error") or {}).get("code"),
    )


def follow_ups(api: httpx.Client, link_id: str, message_id: str) -> list[tuple[Any, ...]]:
    """Everything a sender can ask about a message they sent, without a credential."""
    about = f"/message/{link_id}/{message_id}"
    answers = [
        api.post(f"{about}/report", json={"reason": "this is abuse"}),
        api.get(about),
        api.get(f"/{link_id}/{message_id}/card.png"),
        api.get(f"/{link_id}/{message_id}/card.png", headers={"Accept": "text/html"}),
        api.post(f"{about}/report", json={"reason": "again"}),
    ]
    return [shape(answer, message_id) for answer in answers]


@pytest.mark.parametrize("how", ["blocked", "muted"])
def test_every_later_request_about_a_dropped_id_answers_as_for_an_unpublished_one(
    proxied: httpx.Client, new_creator: Callable[[], Creator], how: str
) -> None:
    creator = new_creator()
    sender, text = dropping(proxied, creator, how)
    stored = send(proxied, creator.link_id, text if how == "blocked" else "hello", new_sender())
    dropped = send(proxied, creator.link_id, text, sender)
    assert_same_answer(stored, stored.json()["data"]["message_content"], dropped, text)
    stored_id, dropped_id = stored.json()["data"]["id"], dropped.json()["data"]["id"]
    assert dropped_id not in str(
        proxied.get(f"/message/{creator.link_id}", headers=creator.headers).json()
    )

    assert follow_ups(proxied, creator.link_id, dropped_id) == follow_ups(
        proxied, creator.link_id, stored_id
    )


def test_a_report_on_a_dropped_message_reaches_no_one(
    proxied: httpx.Client, new_creator: Callable[[], Creator], admin_headers: dict[str, str]
) -> None:
    creator = new_creator()
    sender, text = dropping(proxied, creator, "blocked")
    dropped_id = sent(proxied, creator.link_id, text, sender)

    reported = proxied.post(
        f"/message/{creator.link_id}/{dropped_id}/report", json={"reason": "look at this"}
    )

    assert reported.status_code == 201
    queue = proxied.get("/admin/reports", headers=admin_headers).json()["data"]["items"]
    assert dropped_id not in str(queue)


@pytest.mark.parametrize(
    ("how", "keyed"),
    [("blocked", False), ("muted", False), ("filtered", False), ("blocked", True)],
)
def test_dropped_and_filtered_posts_take_as_long_as_stored_ones(
    proxied: httpx.Client, new_creator: Callable[[], Creator], how: str, keyed: bool
) -> None:
    """Posts held back from the inbox (dropped for a block or a muted word, or kept in the
    filtered folder) against posts to it, interleaved so that the machine's drift hits
    both, after a burst of concurrent posts elsewhere: a held-back post must take what a
    post to the inbox takes now, not what posts took under that load. A difference of a
    tenth of a millisecond shows here: without ``safety.pace``'s wait, a held-back post
    answered first in 0.68-0.90 of pairs, every case failing; with it, 0.45-0.54."""
    busy = new_creator()
    with ThreadPoolExecutor(BURST_WORKERS) as pool:
        burst = list(
            pool.map(
                lambda n: send(proxied, busy.link_id, f"busy {n}", new_sender()).status_code,
                range(BURST_POSTS),
            )
        )
    assert set(burst) == {201}
    creator = new_creator()
    if how == "filtered":  # a muted word on a link that keeps such messages (the default)
        answer = proxied.post("/muted-words", json={"word": MUTED}, headers=creator.headers)
        assert answer.status_code == 201, answer.text
        sender, text = new_sender(), f"do you like {MUTED}?"
    else:
        sender, text = dropping(proxied, creator, how)
    other = new_sender()
    kept = text if how == "blocked" else "an ordinary question"
    times = AnswerTimes()
    last: dict[str, str] = {}
    for n in range(POSTS_EACH):
        for kind, who, words in (("stored", other, kept), ("held back", sender, text)):
            key = f"{kind[0]}{n}" if keyed else None
            answer = times.created(kind, partial(send, proxied, creator.link_id, words, who, key))
            last[kind] = answer.json()["data"]["id"]
    inbox = str(proxied.get(f"/message/{creator.link_id}", headers=creator.headers).json())
    assert last["stored"] in inbox
    assert last["held back"] not in inbox

    times.assert_alike("held back", "stored")
