"""A flood from many addresses of one network: an IPv4 /24, or the many IPv6 /64s of one
/56 or /48, is limited as a whole too (looser than one sender), so new addresses cost the
attacker nothing only up to a point. Two posts per sender per link here: a /24 or a /56
may send 8 to a link, a /48 20. Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import httpx

from tests.conftest import make_creator_in
from tests.server import Server
from tests.support.deployment import TRUST_LOOPBACK
from tests.support.http import loopback_client
from tests.support.servers import own_server

strict = own_server("strict", {**TRUST_LOOPBACK, "ANONBOX_LIMIT_SENDER_LINK": "2/60"})


def post_from(api: httpx.Client, link_id: str, address: str) -> int:
    return api.post(
        f"/message/{link_id}",
        json={"message_content": "hello"},
        headers={"X-Forwarded-For": address},
    ).status_code


def test_an_ipv4_slash_24_is_limited_as_a_whole(strict: Server) -> None:
    link_id = make_creator_in(strict.database_url).link_id
    with loopback_client(base_url=strict.url, timeout=30) as api:
        for host in range(1, 5):
            assert [post_from(api, link_id, f"10.77.1.{host}") for _ in range(2)] == [201, 201]
        assert post_from(api, link_id, "10.77.1.5") == 429  # a fresh address, a full /24
        assert post_from(api, link_id, "10.77.2.1") == 201  # the next /24 is another network


def test_the_slash_64s_of_one_slash_56_are_limited_as_a_whole(strict: Server) -> None:
    link_id = make_creator_in(strict.database_url).link_id
    with loopback_client(base_url=strict.url, timeout=30) as api:
        for subnet in range(4):
            address = f"2001:db8:aa:11{subnet:02x}::1"
            assert [post_from(api, link_id, address) for _ in range(2)] == [201, 201]
        assert post_from(api, link_id, "2001:db8:aa:1104::1") == 429
        assert post_from(api, link_id, "2001:db8:aa:2200::1") == 201  # another /56


def test_the_slash_56s_of_one_slash_48_are_limited_as_a_whole(strict: Server) -> None:
    link_id = make_creator_in(strict.database_url).link_id
    with loopback_client(base_url=strict.url, timeout=30) as api:
        for network in range(10):  # ten /56s, two posts each: the /48's 20
            address = f"2001:db8:bb:{network:02x}00::1"
            assert [post_from(api, link_id, address) for _ in range(2)] == [201, 201]
        assert post_from(api, link_id, "2001:db8:bb:ff00::1") == 429
        assert post_from(api, link_id, "2001:db8:cc::1") == 201  # another /48
