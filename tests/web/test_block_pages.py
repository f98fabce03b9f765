"""Blocking from a message's page (issue 41): "Block sender…" and "Block their network…"
ask first on a page of their own (the confirmation alone changes nothing); the message the
block was made from then says it is blocked and offers Undo, and no other message of that
sender says anything (DESIGN §6: it would tell which messages share a sender). Over HTTP,
on SQLite and PostgreSQL."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from tests.actions import inbox_items, post_message
from tests.conftest import Creator
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.pages import article
from tests.support.signin import signed_in

KINDS = [("block", "sender", "Block sender…"), ("block-network", "network", "Block their network…")]


def page_of(creator: Creator, message_id: str) -> str:
    return f"/dashboard/links/{creator.link_id}/messages/{message_id}"


def blocks(api: httpx.Client, creator: Creator) -> list[dict[str, object]]:
    answer = api.get("/blocks", headers=creator.headers)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"]["items"])


def blocked_state(page: str) -> list[str]:
    """The kinds of block the page says were made from its message."""
    return re.findall(r'class="notice blocked-state" id="blocked-(\w+)"', page)


@pytest.mark.parametrize(("action", "kind", "opener"), KINDS)
def test_blocking_asks_first_and_the_question_alone_blocks_nothing(
    server: Server, creator: Creator, api: httpx.Client, action: str, kind: str, opener: str
) -> None:
    rude = post_message(api, creator.link_id, "you are rude")
    page = page_of(creator, rude)
    with signed_in(server, creator.user_id) as browser:
        shown = browser.get(page).text
        # The page offers a link to the question, no button that blocks at once.
        assert f'<a href="{page}/{action}"' in shown
        assert f'formaction="{page}/{action}"' not in shown
        asked = browser.get(f"{page}/{action}")

    assert asked.status_code == 200, asked.text
    assert asked.headers["cache-control"] == "no-store"
    text = html.unescape(asked.text)
    title = (
        "Block the sender's whole network?" if kind == "network" else "Block this message's sender?"
    )
    assert f'<h1 id="confirm-title">{title}</h1>' in text
    assert "“you are rude”" in text  # which message it is about
    assert "Messages already here stay" in text
    assert f'<form method="post" action="{page}/{action}"' in asked.text
    assert f'<a href="{page}" class="button secondary" id="cancel">' in asked.text
    assert blocks(api, creator) == []  # asking blocked nothing


@pytest.mark.parametrize(("action", "kind", "opener"), KINDS)
def test_the_blocked_message_alone_says_so_and_undo_takes_the_block_back(
    server: Server, creator: Creator, api: httpx.Client, action: str, kind: str, opener: str
) -> None:
    rude = post_message(api, creator.link_id, "you are rude")
    other = post_message(api, creator.link_id, "same sender, another message")
    source, elsewhere = page_of(creator, rude), page_of(creator, other)
    with signed_in(server, creator.user_id) as browser:
        token = csrf_of(browser.get(f"{source}/{action}").text)
        made = browser.post(f"{source}/{action}", data={"csrf_token": token, "back": source})
        assert made.status_code == 303, made.text
        assert made.headers["location"].startswith(f"{source}?done=")
        after = browser.get(made.headers["location"]).text
        there = browser.get(elsewhere).text

        [block] = blocks(api, creator)
        assert block["network"] is (kind == "network")
        # The message it was made from says so, with Undo; its Block… link is gone.
        assert blocked_state(article(after, rude)) == [kind]
        undo = f'formaction="{source}/blocks/{block["id"]}/delete"'
        assert undo in after
        assert f'<a href="{source}/{action}"' not in after
        # Another message of the same sender says nothing, and still offers to block.
        assert blocked_state(there) == []
        assert "blocked-state" not in there
        assert f'<a href="{elsewhere}/{action}"' in there
        assert str(block["id"]) not in there

        # Its undo works from its own message only: not from another one's page.
        token = csrf_of(there)
        stranger = browser.post(
            f"{elsewhere}/blocks/{block['id']}/delete", data={"csrf_token": token}
        )
        assert stranger.status_code == 404
        assert len(blocks(api, creator)) == 1

        undone = browser.post(
            f"{source}/blocks/{block['id']}/delete", data={"csrf_token": token, "back": source}
        )
        assert undone.status_code == 303, undone.text
        assert undone.headers["location"] == f"{source}?done=unblocked"
        back = browser.get(undone.headers["location"]).text

    assert blocks(api, creator) == []
    assert "Block undone: what they send reaches your inbox again." in back
    assert blocked_state(back) == []
    assert f'<a href="{source}/{action}"' in back
    # And the sender's messages reach the inbox again.
    again = post_message(api, creator.link_id, "after the undo")
    assert inbox_items(api, creator)[0]["id"] == again


def test_a_sender_blocked_both_ways_shows_both_each_with_its_own_undo(
    server: Server, creator: Creator, api: httpx.Client
) -> None:
    rude = post_message(api, creator.link_id, "rude again")
    page = page_of(creator, rude)
    with signed_in(server, creator.user_id) as browser:
        for action in ("block", "block-network"):
            token = csrf_of(browser.get(f"{page}/{action}").text)
            assert browser.post(f"{page}/{action}", data={"csrf_token": token}).status_code == 303
        shown = browser.get(page).text
        by_kind = {bool(b["network"]): b["id"] for b in blocks(api, creator)}
        assert blocked_state(shown) == ["sender", "network"]
        # Undo the network's: the sender's stays, and says so.
        token = csrf_of(shown)
        undone = browser.post(f"{page}/blocks/{by_kind[True]}/delete", data={"csrf_token": token})
        assert undone.status_code == 303
        shown = browser.get(page).text
    assert blocked_state(shown) == ["sender"]
    assert [b["id"] for b in blocks(api, creator)] == [by_kind[False]]


def test_another_creator_cannot_ask_or_undo_a_block_of_yours(
    server: Server, creator: Creator, api: httpx.Client, make_creator: object
) -> None:
    rude = post_message(api, creator.link_id, "mine")
    page = page_of(creator, rude)
    made = api.post(f"/message/{creator.link_id}/{rude}/block", headers=creator.headers)
    assert made.status_code == 201, made.text
    block_id = made.json()["data"]["id"]
    stranger = make_creator()  # type: ignore[operator]
    with signed_in(server, stranger.user_id) as browser:
        token = csrf_of(browser.get("/dashboard/account").text)
        assert browser.get(f"{page}/block").status_code in {403, 404}
        undo = browser.post(f"{page}/blocks/{block_id}/delete", data={"csrf_token": token})
        assert undo.status_code in {403, 404}
    assert [b["id"] for b in blocks(api, creator)] == [block_id]
