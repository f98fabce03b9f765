"""No plaintext address anywhere: what a sender's IP leaves behind is nothing.

Senders with distinctive addresses (one IPv4, one IPv6) go through every flow that
touches them, behind a trusted proxy so the server really sees those addresses (each
envelope's ``metadata.ip`` proves it). Then the server is stopped and its database
(every byte of the SQLite files, or every row of every PostgreSQL table as text) and
its log are searched for the addresses in every form they could be written in.
"""

from __future__ import annotations

import ipaddress
import uuid
from pathlib import Path
from typing import Any

import httpx

from anonbox.core.database import driver_url
from tests.actions import inbox_ids
from tests.conftest import Creator, make_creator_in
from tests.safety.conftest import Sender
from tests.support.db import query
from tests.support.deployment import Deployment, client

IPV4 = "203.0.113.77"
IPV6 = "2001:db8:77::1234"


def text_forms(address: str) -> set[str]:
    """How an address (and, for IPv6, the /64 that stands for its sender) reads as text."""
    ip = ipaddress.ip_address(address)
    forms = {str(ip), ip.exploded, ip.packed.hex()}
    if isinstance(ip, ipaddress.IPv4Address):
        forms |= {str(int(ip)), f"::ffff:{ip}"}
    else:
        unpadded = ":".join(f"{int(group, 16):x}" for group in ip.exploded.split(":"))
        network = ipaddress.ip_network(f"{ip}/64", strict=False)
        forms |= {unpadded, str(network), ip.packed[:8].hex()}
        forms |= {ip.exploded[:19], unpadded.rsplit(":", 4)[0] + ":"}  # the /64 alone
    return {form.lower() for form in forms}


def binary_forms(address: str) -> set[bytes]:
    """How an address (and, for IPv6, its /64) is written as bytes."""
    packed = ipaddress.ip_address(address).packed
    return {packed, packed[:8]} if len(packed) == 16 else {packed}


def found_in(haystack: bytes, address: str) -> list[str]:
    """The forms of ``address`` that occur in ``haystack``."""
    lowered = haystack.lower()
    return [form for form in text_forms(address) if form.encode() in lowered] + [
        form.hex() for form in binary_forms(address) if form in haystack
    ]


def use_everything_as(api: httpx.Client, creator: Creator, other: Creator, sender: Sender) -> str:
    """Every flow a sender (and the creator, behind the same proxy) can go through.

    Returns a text that stays stored (as the block's excerpt), so that the search can be
    shown to see what is stored.
    """
    seen: list[httpx.Response] = []

    def call(
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        response = api.request(
            method, path, json=json, content=content, headers={**sender.headers, **(headers or {})}
        )
        seen.append(response)
        return response

    link = f"/message/{creator.link_id}"
    owner = creator.headers
    canary = f"privacy canary {uuid.uuid4().hex}"

    first = call("POST", link, json={"message_content": "first"}).json()["data"]["id"]
    key = {"Idempotency-Key": uuid.uuid4().hex}
    keyed = call("POST", link, json={"message_content": canary}, headers=key)
    retried = call("POST", link, json={"message_content": canary}, headers=key)
    assert keyed.json()["data"]["id"] == retried.json()["data"]["id"]
    second = keyed.json()["data"]["id"]
    call("GET", "/readyz")
    call("GET", link)  # the public view
    call("GET", link, headers=owner)
    call("POST", f"{link}/{first}", json={"message_content": "a reply"}, headers=owner)
    call("GET", f"{link}/{first}")
    call("PUT", f"{link}/{first}/like", headers=owner)
    call("POST", "/muted-words", json={"word": "muted"}, headers=owner)
    call("POST", link, json={"message_content": "this is muted"})  # dropped
    call("POST", f"{link}/{second}/block", headers=owner)  # keeps the canary as its excerpt
    call("GET", "/blocks", headers=owner)
    call("POST", link, json={"message_content": "from a blocked sender"})  # dropped
    call("DELETE", f"{link}/unanswered", headers=owner)
    call("DELETE", f"{link}/{first}", headers=owner)  # answered, so still there
    # Refusals: validation, not found, wrong method, wrong media type, no credential.
    call("POST", link, json={"message_content": "   "})
    call("GET", "/no-such-route")
    call("PATCH", link)
    call("POST", link, content=b"message_content=x", headers={"content-type": "text/plain"})
    call("GET", "/blocks")
    # And a rate limit (this server allows 5 posts per sender per link).
    for _ in range(6):
        limited = call("POST", f"/message/{other.link_id}", json={"message_content": "again"})
    assert limited.status_code == 429, limited.text

    statuses = {response.status_code for response in seen}
    assert statuses >= {200, 201, 400, 401, 404, 405, 415, 429}, statuses
    assert all(response.status_code < 500 for response in seen)
    # The address really reached the server, in every one of those requests.
    assert [r.json()["metadata"]["ip"] for r in seen] == [sender.address] * len(seen)
    assert inbox_ids(api, creator) == []
    return canary


def sqlite_files(database_url: str) -> dict[str, bytes]:
    """Every file of a SQLite database (main, write-ahead log, shared memory, journal)."""
    path = Path(driver_url(database_url)[1])
    files = [path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))]
    return {str(f): f.read_bytes() for f in files if f.exists()}


def postgres_rows(database_url: str) -> dict[str, bytes]:
    """Every row of every table of the public schema, as text, by table."""
    tables = query(
        database_url,
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    )
    assert {"messages", "blocks", "sender_epochs"} <= {t["table_name"] for t in tables}
    dumped = {}
    for table in tables:
        name = table["table_name"]
        rows = query(database_url, f'SELECT t::text AS row FROM "{name}" t')  # noqa: S608
        dumped[name] = "\n".join(r["row"] for r in rows).encode()
    return dumped


def test_no_address_is_written_to_the_database_or_the_log(deployment: Deployment) -> None:
    server = deployment.private
    canaries = []
    with client(server) as api:
        for address in (IPV4, IPV6):
            creator = make_creator_in(server.database_url)
            other = make_creator_in(server.database_url)
            canaries.append(use_everything_as(api, creator, other, Sender(address)))
    server.stop()  # nothing pending: every write is in the files, the log is complete

    if deployment.backend == "sqlite":
        stored = sqlite_files(server.database_url)
    else:
        stored = postgres_rows(server.database_url)
    everything = b"\n".join(stored.values())
    # The search does see what was stored...
    for canary in canaries:
        assert canary.encode() in everything
    # ...and no address, in any form, anywhere.
    log = server.log_path.read_bytes()
    assert b"Uvicorn running" in log  # the log captured the server's output
    for address in (IPV4, IPV6):
        for where, content in [*stored.items(), ("the server log", log)]:
            assert found_in(content, address) == [], f"{address} found in {where}"
