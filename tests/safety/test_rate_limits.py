"""Rate limits on anonymous posts: per sender and link, per sender, per link; in memory,
shared through Redis, and with Redis down (failing open or closed).

The limited server allows 3 posts per sender per link, 5 per sender and 6 per link, each
a minute; senders are told apart by X-Forwarded-For from the trusted proxy.
"""

from __future__ import annotations

import re

import httpx

from tests.actions import assert_error, inbox_items
from tests.conftest import Creator, make_creator_in
from tests.safety.conftest import (
    Sender,
    block_sender_of,
    kept_ids,
    new_sender,
    retry_after,
    send,
    sent,
)
from tests.server import Server
from tests.support.deployment import LINK_LIMIT, SENDER_LIMIT, SENDER_LINK_LIMIT, Deployment, client


def refused(response: httpx.Response, sender: Sender | None = None) -> None:
    """A 429 envelope with Retry-After, as seen by ``sender`` (or by 127.0.0.1)."""
    if sender is None:
        assert_error(response, 429, "rate_limited")
    else:
        assert_error(response, 429, "rate_limited", ip=sender.address)
    retry_after(response)


def limited_creator(deployment: Deployment) -> Creator:
    return make_creator_in(deployment.limited.database_url)


# --- in memory ------------------------------------------------------------------------------


def test_one_sender_gets_3_posts_a_minute_on_one_link(deployment: Deployment) -> None:
    creator = limited_creator(deployment)
    noisy, other = new_sender(), new_sender()
    with client(deployment.limited) as api:
        ids = [sent(api, creator.link_id, f"post {n}", noisy) for n in range(SENDER_LINK_LIMIT)]
        refused(send(api, creator.link_id, "one too many", noisy), noisy)
        # Another sender on the same link is not affected.
        ids.append(sent(api, creator.link_id, "someone else", other))
        # Nothing of the refused post was stored.
        assert sorted(kept_ids(api, creator)) == sorted(ids)


def test_senders_share_the_rate_of_a_link_past_which_a_proof_of_work_is_asked(
    deployment: Deployment,
) -> None:
    creator = limited_creator(deployment)
    with client(deployment.limited) as api:
        for _ in range(LINK_LIMIT):
            sent(api, creator.link_id, "one each", new_sender())
        latecomer = new_sender()
        asked = send(api, creator.link_id, "one each", latecomer)
        body = assert_error(asked, 429, "proof_of_work_required", ip=latecomer.address)
        assert body["error"]["challenge"]["algorithm"] == "SHA-256"  # tests/safety/test_flood.py
        # The link's limit is the link's: the same sender may post elsewhere.
        elsewhere = limited_creator(deployment)
        sent(api, elsewhere.link_id, "fine here", latecomer)
        assert len(kept_ids(api, creator)) == LINK_LIMIT


def test_one_sender_gets_5_posts_a_minute_across_links(deployment: Deployment) -> None:
    first, second = limited_creator(deployment), limited_creator(deployment)
    sender = new_sender()
    with client(deployment.limited) as api:
        for _ in range(SENDER_LINK_LIMIT):
            sent(api, first.link_id, "to the first", sender)
        for _ in range(SENDER_LIMIT - SENDER_LINK_LIMIT):
            sent(api, second.link_id, "to the second", sender)
        # Below the per-link limit on the second link, but over the sender's own.
        refused(send(api, second.link_id, "to the second", sender), sender)
        sent(api, second.link_id, "someone else", new_sender())
        assert len(kept_ids(api, second)) == SENDER_LIMIT - SENDER_LINK_LIMIT + 1


def test_dropped_posts_count_too_so_a_limit_cannot_probe_a_block(
    deployment: Deployment,
) -> None:
    creator = limited_creator(deployment)
    blocked = new_sender()
    with client(deployment.limited) as api:
        first = sent(api, creator.link_id, "first", blocked)
        block_sender_of(api, creator, first)
        for _ in range(SENDER_LINK_LIMIT - 1):
            sent(api, creator.link_id, "dropped", blocked)
        refused(send(api, creator.link_id, "dropped", blocked), blocked)
        assert kept_ids(api, creator) == [first]


# --- Redis ----------------------------------------------------------------------------------


def test_instances_sharing_redis_share_the_limit(redis_pair: tuple[Server, Server]) -> None:
    """Posts split across two instances are counted together (3 per sender per link).

    No proxy is trusted here, so each post also claims another address in
    X-Forwarded-For: the limit keys on the peer all the same.
    """
    one, two = redis_pair
    creator = make_creator_in(one.database_url)  # a new link: its Redis keys are new too
    with client(one) as a, client(two) as b:
        posts = [a, b, a]
        for n, api in enumerate(posts):
            response = send(api, creator.link_id, f"post {n}", Sender(f"198.51.100.{n + 1}"))
            assert response.status_code == 201, response.text
            assert response.json()["metadata"]["ip"] == "127.0.0.1"
        refused(send(b, creator.link_id, "one too many", Sender("198.51.100.50")))
        refused(send(a, creator.link_id, "one too many"))
        assert len(inbox_items(a, creator)) == len(posts)
        assert len(inbox_items(b, creator)) == len(posts)


def test_with_redis_down_failing_open_lets_posts_through(deployment: Deployment) -> None:
    """This server's limit is 1 post per sender per link; with Redis down it lets all in."""
    server = deployment.redis_down_open
    creator = make_creator_in(server.database_url)
    with client(server, timeout=5) as api:
        ids = [sent(api, creator.link_id, f"post {n}") for n in range(3)]
        assert sorted(kept_ids(api, creator)) == sorted(ids)
    assert "Redis unavailable" in server.log()


def test_with_redis_down_failing_closed_refuses_posts_at_once(deployment: Deployment) -> None:
    server = deployment.redis_down_closed
    creator = make_creator_in(server.database_url)
    with client(server, timeout=5) as api:  # a hang would be a timeout, not a 503
        for _ in range(2):
            response = send(api, creator.link_id, "hello")
            assert_error(response, 503, "service_unavailable")
            assert re.fullmatch(r"[1-9][0-9]*", response.headers.get("retry-after", ""))
        # Reading does not need the rate limiter.
        assert kept_ids(api, creator) == []
    assert "Redis unavailable" in server.log()
