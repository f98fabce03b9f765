"""Blocking the sender of a message without learning who it is, and the silent drop.

A creator blocks "whoever sent this message". That sender's later messages, to any of
the creator's links, get the same 201 as everyone's and are never stored; the block list
shows the message, never anything that identifies the sender. Nothing already sent moves:
that would show which messages share a sender.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, inbox_items, post_message
from tests.conftest import Creator
from tests.safety.conftest import (
    HEX_DIGEST,
    ULID,
    Sender,
    add_link,
    assert_created_message,
    assert_same_answer,
    block_sender_of,
    creator_who_blocked,
    kept_ids,
    new_ipv6_network,
    new_sender,
    send,
    sent,
    utc_instant,
)
from tests.support.admin import make_account
from tests.support.credentials import refused_credentials
from tests.support.deployment import Deployment
from tests.support.strangers import OthersMessage

SOME_ULID = "01jabcdefghjkmnpqrstvwxyz0"


def blocks_of(api: httpx.Client, creator: Creator) -> list[dict[str, Any]]:
    listed = api.get("/blocks", headers=creator.headers)
    assert listed.status_code == 200, listed.text
    assert HEX_DIGEST.search(listed.text) is None, listed.text
    return list(listed.json()["data"]["items"])


def test_blocking_answers_with_the_block_and_lists_it_by_its_message(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    sender = new_sender()
    text = "You will never guess who I am"
    message_id = sent(proxied, creator.link_id, text, sender)

    response = proxied.post(
        f"/message/{creator.link_id}/{message_id}/block", headers=creator.headers
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"status_code", "message", "data", "metadata"}
    block = body["data"]
    assert set(block) == {"id", "message_excerpt", "created_at", "site_wide", "network"}
    assert ULID.match(block["id"])
    assert block["message_excerpt"] == text
    assert block["site_wide"] is False
    assert block["network"] is False
    utc_instant(block["created_at"])
    # Nothing that could identify the sender: no hash, no address.
    for shown in (response.text, proxied.get("/blocks", headers=creator.headers).text):
        assert HEX_DIGEST.search(shown) is None, shown
        assert sender.address not in shown

    assert blocks_of(proxied, creator) == [block]


def test_a_long_message_is_shown_by_its_beginning(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    text = "spam " * 100
    block = block_sender_of(proxied, creator, sent(proxied, creator.link_id, text, new_sender()))
    assert block["message_excerpt"]
    assert text.startswith(block["message_excerpt"])
    assert len(block["message_excerpt"]) < len(text)


def test_a_blocked_sender_is_dropped_on_every_link_of_the_creator_and_no_other(
    deployment: Deployment, proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    second_link = add_link(deployment.proxied.database_url, creator)
    someone_else = new_creator()
    blocked, other = new_sender(), new_sender()
    first = sent(proxied, creator.link_id, "first", blocked)
    block_sender_of(proxied, creator, first)

    for link in (creator, second_link):
        dropped = send(proxied, link.link_id, "let me in", blocked)
        assert_created_message(dropped, "let me in")
        assert dropped.json()["metadata"]["ip"] == blocked.address
    assert kept_ids(proxied, creator) == [first]
    assert kept_ids(proxied, second_link) == []

    # Other senders still arrive; another creator still hears from the blocked sender.
    arrived = [sent(proxied, link.link_id, "hello", other) for link in (creator, second_link)]
    assert kept_ids(proxied, creator) == [arrived[0], first]
    assert kept_ids(proxied, second_link) == [arrived[1]]
    elsewhere = sent(proxied, someone_else.link_id, "let me in", blocked)
    assert kept_ids(proxied, someone_else) == [elsewhere]


def test_a_dropped_message_is_indistinguishable_from_a_stored_one(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    blocked, other = new_sender(), new_sender()
    creator, first = creator_who_blocked(proxied, new_creator, blocked)

    text = "Same words, two fates"
    stored = send(proxied, creator.link_id, text, other)
    dropped = send(proxied, creator.link_id, text, blocked)
    assert_same_answer(stored, text, dropped, text)

    # Nothing of it was kept: not in the inbox, not found by its id.
    dropped_id = dropped.json()["data"]["id"]
    assert kept_ids(proxied, creator) == [stored.json()["data"]["id"], first]
    link = f"/message/{creator.link_id}/{dropped_id}"
    assert_error(proxied.get(link, headers=creator.headers), 404, "not_found")
    assert_error(proxied.put(f"{link}/like", headers=creator.headers), 404, "not_found")
    assert_error(proxied.post(f"{link}/block", headers=creator.headers), 404, "not_found")


def test_unblocking_lets_the_sender_through_again(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    blocked = new_sender()
    first = sent(proxied, creator.link_id, "first", blocked)
    block = block_sender_of(proxied, creator, first)
    sent(proxied, creator.link_id, "dropped", blocked)

    response = proxied.delete(f"/blocks/{block['id']}", headers=creator.headers)
    assert response.status_code == 200, response.text
    assert response.json()["data"] is None
    assert blocks_of(proxied, creator) == []
    again = sent(proxied, creator.link_id, "back again", blocked)
    assert kept_ids(proxied, creator) == [again, first]
    # The block is gone: unblocking it again is a 404.
    gone = proxied.delete(f"/blocks/{block['id']}", headers=creator.headers)
    assert_error(gone, 404, "not_found")


def test_a_block_is_about_the_message_blocked_and_links_no_two_messages(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    """Blocking a second message of an already blocked sender must not answer with the
    first block: that would tell the creator the two came from one person."""
    creator = new_creator()
    sender = new_sender()
    first = sent(proxied, creator.link_id, "first words", sender)
    second = sent(proxied, creator.link_id, "second words", sender)
    block = block_sender_of(proxied, creator, first)
    assert block_sender_of(proxied, creator, first) == block  # one message, one block

    other = block_sender_of(proxied, creator, second)

    assert other["id"] != block["id"]
    assert other["message_excerpt"] == "second words"
    assert "first words" not in str(other)
    assert blocks_of(proxied, creator) == [other, block]


def test_a_sender_blocked_through_two_messages_stays_blocked_until_both_are_lifted(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    sender = new_sender()
    stored = [sent(proxied, creator.link_id, text, sender) for text in ("one", "two")]
    blocks = [block_sender_of(proxied, creator, message_id) for message_id in stored]
    stored = kept_ids(proxied, creator)

    assert proxied.delete(f"/blocks/{blocks[0]['id']}", headers=creator.headers).status_code == 200
    sent(proxied, creator.link_id, "still blocked", sender)
    assert kept_ids(proxied, creator) == stored

    assert proxied.delete(f"/blocks/{blocks[1]['id']}", headers=creator.headers).status_code == 200
    through = sent(proxied, creator.link_id, "through", sender)
    assert kept_ids(proxied, creator) == [through, *stored]


def test_each_creator_sees_only_their_own_blocks(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator, other = new_creator(), new_creator()
    block = block_sender_of(proxied, creator, sent(proxied, creator.link_id, "hi", new_sender()))
    assert blocks_of(proxied, other) == []
    # Another creator cannot unblock it either: to them it does not exist.
    refused = proxied.delete(f"/blocks/{block['id']}", headers=other.headers)
    assert_error(refused, 404, "not_found")
    assert blocks_of(proxied, creator) == [block]


# --- a block moves nothing already sent ----------------------------------------------------


def folder_items(api: httpx.Client, creator: Creator) -> list[dict[str, Any]]:
    listed = api.get(
        f"/message/{creator.link_id}/filtered", params={"limit": 100}, headers=creator.headers
    )
    assert listed.status_code == 200, listed.text
    return list(listed.json()["data"]["items"])


def mute(api: httpx.Client, creator: Creator, word: str) -> None:
    muted = api.post("/muted-words", json={"word": word}, headers=creator.headers)
    assert muted.status_code == 201, muted.text


def waiting_of(api: httpx.Client, creators: list[Creator]) -> list[list[dict[str, Any]]]:
    """Everything each link shows its creator: the inbox and the filtered folder, in order."""
    return [[*inbox_items(api, c), {"folder": True}, *folder_items(api, c)] for c in creators]


def assert_nothing_moved_and_next_is_dropped(
    api: httpx.Client,
    creator: Creator,
    links: list[Creator],
    before: list[list[dict[str, Any]]],
    blocked: list[Sender],
    others: list[Sender],
) -> None:
    """Every link shows exactly what it showed before the block; a new message from each
    ``blocked`` sender is answered 201 and kept nowhere, one from each of ``others``
    arrives."""
    assert waiting_of(api, links) == before
    for n, sender in enumerate(blocked):
        dropped = send(api, creator.link_id, f"after the block {n}", sender)
        assert_created_message(dropped, f"after the block {n}")
    assert waiting_of(api, links) == before
    arrived = [sent(api, creator.link_id, f"not blocked {n}", o) for n, o in enumerate(others)]
    assert kept_ids(api, creator)[: len(arrived)] == arrived[::-1]


def test_blocking_a_sender_moves_none_of_their_waiting_messages(
    deployment: Deployment, proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    """The attack of issue 32: three messages from one sender and one from another; the
    creator blocks the sender of one of them. Had the sender's other waiting messages moved
    to the filtered folder, the creator would know which ones came from that person."""
    creator = new_creator()
    second_link = add_link(deployment.proxied.database_url, creator)
    word = f"zqmuted{uuid.uuid4().hex[:8]}"
    mute(proxied, creator, word)
    sender, other = new_sender(), new_sender()
    one = sent(proxied, creator.link_id, "one", sender)
    sent(proxied, creator.link_id, "someone else", other)
    sent(proxied, creator.link_id, "two", sender)
    sent(proxied, creator.link_id, "three", sender)
    sent(proxied, creator.link_id, f"in the folder, {word}", sender)  # stays in the folder
    sent(proxied, second_link.link_id, "on the other link", sender)
    links = [creator, second_link]
    before = waiting_of(proxied, links)
    assert [len(inbox_items(proxied, c)) for c in links] == [4, 1]

    block = block_sender_of(proxied, creator, one)
    assert block["message_excerpt"] == "one"
    assert_nothing_moved_and_next_is_dropped(
        proxied, creator, links, before, blocked=[sender], others=[other, new_sender()]
    )
    # To the other link too.
    dropped = send(proxied, second_link.link_id, "there too", sender)
    assert_created_message(dropped, "there too")
    assert waiting_of(proxied, [second_link]) == before[1:]


def test_blocking_a_network_moves_none_of_its_waiting_messages(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    sender, other = new_sender(), new_sender()
    one = sent(proxied, creator.link_id, "one", sender)
    sent(proxied, creator.link_id, "someone else", other)
    sent(proxied, creator.link_id, "two", sender)
    sent(proxied, creator.link_id, "next door", neighbour_of(sender, 2))
    v6 = new_ipv6_network()
    v6_one = sent(proxied, creator.link_id, "v6 one", Sender(f"{v6}::1"))
    sent(proxied, creator.link_id, "v6 next door", Sender(f"{v6.rsplit(':', 1)[0]}:ff00::9"))
    before = waiting_of(proxied, [creator])

    assert block_network_of(proxied, creator, one)["network"] is True
    assert block_network_of(proxied, creator, v6_one)["network"] is True
    assert_nothing_moved_and_next_is_dropped(
        proxied,
        creator,
        [creator],
        before,
        blocked=[sender, neighbour_of(sender, 3), Sender(f"{v6.rsplit(':', 1)[0]}:1234::5")],
        others=[other],
    )


def test_a_site_wide_block_moves_none_of_the_senders_waiting_messages(
    deployment: Deployment, proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    admin = make_account(deployment.proxied.database_url, admin=True)
    creator, someone_else = new_creator(), new_creator()
    sender, other = new_sender(), new_sender()
    one = sent(proxied, creator.link_id, "one", sender)
    sent(proxied, creator.link_id, "someone else", other)
    sent(proxied, creator.link_id, "two", sender)
    sent(proxied, someone_else.link_id, "elsewhere", sender)
    before = waiting_of(proxied, [creator, someone_else])

    blocked = proxied.post(f"/admin/messages/{one}/block-sender", headers=admin.headers)
    assert blocked.status_code == 201, blocked.text
    assert_nothing_moved_and_next_is_dropped(
        proxied, creator, [creator, someone_else], before, blocked=[sender], others=[other]
    )
    dropped = send(proxied, someone_else.link_id, "there too", sender)
    assert_created_message(dropped, "there too")
    assert waiting_of(proxied, [someone_else]) == before[1:]


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize("headers", refused_credentials("no-credential", "unknown-key"))
def test_blocks_need_a_credential(
    api: httpx.Client, creator: Creator, headers: dict[str, str]
) -> None:
    message_id = post_message(api, creator.link_id)
    path = f"/message/{creator.link_id}/{message_id}/block"
    assert_error(api.post(path, headers=headers), 401, "unauthorized")
    assert_error(api.get("/blocks", headers=headers), 401, "unauthorized")
    assert_error(api.delete(f"/blocks/{SOME_ULID}", headers=headers), 401, "unauthorized")
    assert api.get("/blocks", headers=creator.headers).json()["data"]["items"] == []


def test_only_the_creator_of_the_link_can_block_its_senders(
    api: httpx.Client, others_message: OthersMessage
) -> None:
    creator, other, message_id = others_message
    path = f"/message/{creator.link_id}/{message_id}/block"
    assert_error(api.post(path, headers=other.headers), 403, "forbidden")
    assert api.get("/blocks", headers=other.headers).json()["data"]["items"] == []
    assert api.get("/blocks", headers=creator.headers).json()["data"]["items"] == []


def test_blocking_a_message_that_is_not_there_is_404(
    api: httpx.Client, others_message: OthersMessage
) -> None:
    _, creator, their_message = others_message
    for path in [
        f"/message/{creator.link_id}/{SOME_ULID}/block",
        f"/message/{creator.link_id}/{their_message}/block",  # exists, under another link
        f"/message/nosuchlink0/{their_message}/block",
    ]:
        assert_error(api.post(path, headers=creator.headers), 404, "not_found")
    assert_error(api.delete(f"/blocks/{SOME_ULID}", headers=creator.headers), 404, "not_found")
    assert api.get("/blocks", headers=creator.headers).json()["data"]["items"] == []


def test_bad_ids_are_400(api: httpx.Client, creator: Creator) -> None:
    path = f"/message/{creator.link_id}/not-a-ulid/block"
    assert_error(api.post(path, headers=creator.headers), 400, "validation_failed")
    assert_error(
        api.delete("/blocks/not-a-ulid", headers=creator.headers), 400, "validation_failed"
    )


# --- blocking a network -------------------------------------------------------------------


def block_network_of(api: httpx.Client, creator: Creator, message_id: str) -> dict[str, Any]:
    response = api.post(
        f"/message/{creator.link_id}/{message_id}/block?network=true", headers=creator.headers
    )
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


def neighbour_of(sender: Sender, host: int) -> Sender:
    """Another address in the sender's IPv4 /24."""
    return Sender(sender.address.rsplit(".", 1)[0] + f".{host}")


def test_blocking_a_network_drops_every_address_of_the_ipv4_slash_24(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    rotating = new_sender()
    first = sent(proxied, creator.link_id, "first", rotating)

    # A sender block does not reach the neighbours; a network block does.
    block_sender_of(proxied, creator, first)
    neighbour = sent(proxied, creator.link_id, "from next door", neighbour_of(rotating, 2))
    assert kept_ids(proxied, creator) == [neighbour, first]
    block = block_network_of(proxied, creator, first)
    assert block["network"] is True
    assert block["message_excerpt"] == "first"

    for host in (3, 77, 254):
        dropped = send(proxied, creator.link_id, "rotated", neighbour_of(rotating, host))
        assert_created_message(dropped, "rotated")
    outside = sent(proxied, creator.link_id, "another network", new_sender())
    assert kept_ids(proxied, creator) == [outside, neighbour, first]

    # Each block is listed by its message; lifting the network block lets the network in.
    listed = blocks_of(proxied, creator)
    assert [(b["message_excerpt"], b["network"]) for b in listed] == [
        ("first", True),
        ("first", False),
    ]
    deleted = proxied.delete(f"/blocks/{block['id']}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    back = sent(proxied, creator.link_id, "back again", neighbour_of(rotating, 9))
    assert kept_ids(proxied, creator)[0] == back


def test_blocking_a_network_drops_every_slash_64_of_the_ipv6_slash_48(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    prefix = new_ipv6_network()  # 2001:db8:N:1 -- its /48 is 2001:db8:N
    slash_48 = prefix.rsplit(":", 1)[0]
    first = sent(proxied, creator.link_id, "first", Sender(f"{prefix}::1"))
    block_network_of(proxied, creator, first)
    for subnet in ("ff00", "1234", "0002"):  # other /56s and /64s of the same /48
        dropped = send(proxied, creator.link_id, "rotated", Sender(f"{slash_48}:{subnet}::9"))
        assert_created_message(dropped, "rotated")
    elsewhere = sent(proxied, creator.link_id, "another /48", Sender(f"{new_ipv6_network()}::1"))
    assert kept_ids(proxied, creator) == [elsewhere, first]


def test_a_network_block_is_the_creators_own(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator, someone_else = new_creator(), new_creator()
    rotating = new_sender()
    first = sent(proxied, creator.link_id, "first", rotating)
    block_network_of(proxied, creator, first)
    # Blocking the same message's network twice is one block.
    block_network_of(proxied, creator, first)
    assert len(blocks_of(proxied, creator)) == 1
    heard = sent(proxied, someone_else.link_id, "hi", neighbour_of(rotating, 5))
    assert kept_ids(proxied, someone_else) == [heard]
