"""Who a sender is: the socket peer, or what a trusted proxy says in X-Forwarded-For.

Without ``ANONBOX_TRUSTED_PROXIES`` (the shared ``server``), the header changes nothing.
With 127.0.0.1 trusted (``deployment.proxied``), each forwarded address is its own
sender, an IPv6 sender is their whole /64, and a peer that is not a trusted proxy is
still not believed.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.actions import assert_error, post_message
from tests.conftest import Creator, make_creator_in
from tests.safety.conftest import (
    Sender,
    block_sender_of,
    creator_who_blocked,
    kept_ids,
    new_ipv6_network,
    new_sender,
    retry_after,
    send,
    sent,
)
from tests.server import Server
from tests.support.deployment import SENDER_LINK_LIMIT, Deployment, client

SPOOFED = "198.51.100.23"


def from_127_0_0_2(server: Server) -> httpx.Client:
    """A client from another loopback address: a peer that is not the trusted proxy."""
    return client(server, transport=httpx.HTTPTransport(local_address="127.0.0.2"))


# --- no trusted proxies ---------------------------------------------------------------------


def test_without_trusted_proxies_a_forwarded_for_header_changes_nothing(
    api: httpx.Client, creator: Creator
) -> None:
    spoof = {"X-Forwarded-For": SPOOFED}
    created = api.post(f"/message/{creator.link_id}", json={"message_content": "hi"}, headers=spoof)
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["ip"] == "127.0.0.1"
    assert api.get("/readyz", headers=spoof).json()["metadata"]["ip"] == "127.0.0.1"
    refused = api.post(f"/message/{creator.link_id}", json={"message_content": ""}, headers=spoof)
    assert_error(refused, 400, "validation_failed")  # which also checks metadata.ip


def test_without_trusted_proxies_a_blocked_sender_cannot_spoof_a_way_back(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    creator = make_creator()
    first = post_message(api, creator.link_id, "first")
    block_sender_of(api, creator, first)
    for headers in [
        {"X-Forwarded-For": SPOOFED},
        {"X-Forwarded-For": "2001:db8:dead::1"},
        {"X-Real-IP": SPOOFED},
        {"Forwarded": f"for={SPOOFED}"},
    ]:
        dropped = api.post(
            f"/message/{creator.link_id}", json={"message_content": "again"}, headers=headers
        )
        assert dropped.status_code == 201, dropped.text
        assert dropped.json()["metadata"]["ip"] == "127.0.0.1"
    assert kept_ids(api, creator) == [first]


def test_forwarded_for_from_a_peer_that_is_not_a_trusted_proxy_is_ignored(
    deployment: Deployment,
) -> None:
    """127.0.0.2 is not the trusted proxy: its X-Forwarded-For is not believed, so every
    post counts as 127.0.0.2's, whatever address it claims (3 per link on this server)."""
    creator = make_creator_in(deployment.limited.database_url)
    with from_127_0_0_2(deployment.limited) as untrusted:
        for n in range(SENDER_LINK_LIMIT):
            claimed = Sender(f"198.51.100.{n + 1}")
            response = send(untrusted, creator.link_id, "hi", claimed)
            assert response.status_code == 201, response.text
            assert response.json()["metadata"]["ip"] == "127.0.0.2"
        refused = send(untrusted, creator.link_id, "hi", Sender("198.51.100.99"))
    assert_error(refused, 429, "rate_limited", ip="127.0.0.2")
    retry_after(refused)


# --- 127.0.0.1 trusted ----------------------------------------------------------------------


def test_a_trusted_proxy_forwards_the_sender_address(
    deployment: Deployment, proxied: httpx.Client
) -> None:
    creator = make_creator_in(deployment.proxied.database_url)
    for address in ["198.51.100.7", "2001:db8:7::7"]:
        response = send(proxied, creator.link_id, "hi", Sender(address))
        assert response.status_code == 201, response.text
        assert response.json()["metadata"]["ip"] == address
    # The same header from a peer that is not the trusted proxy is not believed.
    with from_127_0_0_2(deployment.proxied) as untrusted:
        response = send(untrusted, creator.link_id, "hi", Sender("198.51.100.7"))
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["ip"] == "127.0.0.2"


@pytest.mark.parametrize(
    ("chain", "client_address"),
    [
        pytest.param(["198.51.100.1, 203.0.113.9"], "203.0.113.9", id="rightmost-untrusted"),
        pytest.param(["203.0.113.10, 127.0.0.1"], "203.0.113.10", id="trusted-hop-skipped"),
        pytest.param(["198.51.100.2", "203.0.113.11"], "203.0.113.11", id="two-headers"),
        pytest.param(["::ffff:203.0.113.12"], "203.0.113.12", id="ipv4-mapped"),
        pytest.param(["198.51.100.3 ,  2001:DB8:0:0::12"], "2001:db8::12", id="ipv6-spaced"),
        pytest.param(["not-an-address"], "127.0.0.1", id="garbage"),
        pytest.param(["999.1.1.1"], "127.0.0.1", id="out-of-range"),
        pytest.param([""], "127.0.0.1", id="empty"),
        pytest.param(["203.0.113.13, garbage"], "127.0.0.1", id="garbled-last-hop"),
        pytest.param(["203.0.113.14, " * 400 + "203.0.113.15"], "203.0.113.15", id="huge-chain"),
    ],
)
def test_the_client_is_the_last_forwarded_address_that_is_not_a_trusted_proxy(
    deployment: Deployment, proxied: httpx.Client, chain: list[str], client_address: str
) -> None:
    """Read from the right; a garbled chain is not believed past the proxy (never a 5xx)."""
    creator = make_creator_in(deployment.proxied.database_url)
    response = proxied.post(
        f"/message/{creator.link_id}",
        json={"message_content": "hi"},
        headers=[("X-Forwarded-For", hop) for hop in chain],
    )
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["ip"] == client_address


def test_different_forwarded_addresses_are_different_senders(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    blocked, other = new_sender(), new_sender()
    creator, first = creator_who_blocked(proxied, new_creator, blocked)
    sent(proxied, creator.link_id, "dropped", blocked)
    kept = sent(proxied, creator.link_id, "kept", other)
    assert kept_ids(proxied, creator) == [kept, first]


def test_ipv6_addresses_in_one_64_are_one_sender(
    proxied: httpx.Client, new_creator: Callable[[], Creator]
) -> None:
    creator = new_creator()
    network = new_ipv6_network()  # e.g. 2001:db8:5:1
    first = sent(proxied, creator.link_id, "first", Sender(f"{network}::1"))
    block_sender_of(proxied, creator, first)
    sent(proxied, creator.link_id, "same /64", Sender(f"{network}:ffff:ffff:ffff:fffe"))
    sent(proxied, creator.link_id, "same /64 again", Sender(f"{network}:1234:5678:9abc:def0"))
    assert kept_ids(proxied, creator) == [first]

    next_64 = network.rsplit(":", 1)[0] + ":2"  # the neighbouring /64
    other = sent(proxied, creator.link_id, "next /64", Sender(f"{next_64}::1"))
    assert kept_ids(proxied, creator) == [other, first]
