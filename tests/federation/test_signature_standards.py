"""Both HTTP signature standards and one read of an actor per Follow, against Fedify 2.3.6
on loopback (``tests/support/fedify/peer.mjs``), on both databases (issue 42, items 5, 6).

Fedify signs what anonbox receives (its ``sendActivity`` with RFC 9421 as the first knock,
and its ``signRequest`` for the requests a test replays or tampers with) and checks what
anonbox sends; a second Fedify peer that takes only RFC 9421 shows double-knocking. The
peer counts how often its actor is read, and records each inbox POST's standard and answer.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.actions import assert_error, post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.federation.conftest import AP, open_to_follows, wait_for
from tests.federation.test_fedify_peer import PEER_DIR, Peer, install_peer
from tests.server import Server, free_port
from tests.support.db import execute, query
from tests.support.processes import stop


def _start(log: Path, *flags: str) -> tuple[subprocess.Popen[bytes], Peer]:
    port = free_port()
    with log.open("w") as out:
        process = subprocess.Popen(
            ["node", "peer.mjs", str(port), *flags],
            cwd=PEER_DIR,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 30
    while "listening" not in log.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            pytest.fail(f"the Fedify peer did not start:\n{log.read_text()}")
        time.sleep(0.1)
    return process, Peer(port)


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """A Fedify server that takes both standards."""
    install_peer()
    process, running = _start(tmp_path_factory.mktemp("fedify") / "peer.log")
    try:
        yield running
    finally:
        running.http.close()
        stop(process)


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """A Fedify server whose inboxes take only RFC 9421 (401 for draft-cavage)."""
    install_peer()
    log = tmp_path_factory.mktemp("fedify-strict") / "peer.log"
    process, running = _start(log, "--only-rfc9421")
    try:
        yield running
    finally:
        running.http.close()
        stop(process)


def _control(peer: Peer, what: str, **given: Any) -> dict[str, Any]:
    answer = peer.http.post(f"/control/{what}", json=given)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _actor_reads(peer: Peer) -> int:
    return int(peer.received()["actor_fetches"])


def _follow_body(peer: Peer, actor_url: str) -> bytes:
    return json.dumps(
        {
            "@context": "https://www.w3.org/ns/activitystreams",
            "id": f"{peer.url}/follows/{uuid.uuid4()}",
            "type": "Follow",
            "actor": f"{peer.url}/users/alice",
            "object": actor_url,
        }
    ).encode()


def _signed_by_fedify(peer: Peer, url: str, body: bytes, spec: str) -> dict[str, str]:
    """The headers Fedify's ``signRequest`` signs a POST of ``body`` to ``url`` with."""
    return dict(_control(peer, "sign", url=url, body=body.decode(), spec=spec)["headers"])


def _followers(api: httpx.Client, actor_url: str) -> int:
    return int(api.get(f"{actor_url}/followers", headers=AP).json()["totalItems"])


def _knocks(peer: Peer, actor_url: str) -> list[tuple[str, int]]:
    """The signature standard and the answer of each POST ``actor_url`` made to the peer."""
    return [
        (knock["standard"], knock["status"])
        for knock in peer.received()["knocks"]
        if (knock["key_id"] or "").startswith(f"{actor_url}#")
    ]


def test_a_follow_signed_only_with_rfc9421_is_accepted_reading_the_actor_once(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, alice: Peer
) -> None:
    api = fed_api
    actor_url, _ = open_to_follows(federating, api, fed_creator)
    reads = _actor_reads(alice)
    sent = len(alice.received()["sent"])
    _control(alice, "follow", actor=actor_url, spec="rfc9421")
    wait_for(lambda: alice.of_type("Accept", actor_url))
    # Fedify's one knock was RFC 9421, and anonbox took it (no second knock, no refusal).
    mine = [s for s in alice.received()["sent"][sent:] if s["url"].endswith("/inbox")]
    assert [(s["standard"], s["status"]) for s in mine] == [("rfc9421", 202)]
    assert _followers(api, actor_url) == 1
    # One read of alice's actor served the key check and where the Accept went.
    assert _actor_reads(alice) - reads == 1
    # The Accept was signed as draft-cavage (the default) and Fedify verified it.
    assert _knocks(alice, actor_url) == [("cavage", 202)]


def test_an_rfc9421_signature_counts_once_and_covers_the_body(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, alice: Peer
) -> None:
    api = fed_api
    actor_url, path = open_to_follows(federating, api, fed_creator)
    inbox = f"{federating.url}{path}"
    body = _follow_body(alice, actor_url)
    headers = _signed_by_fedify(alice, inbox, body, "rfc9421")
    assert "signature-input" in headers
    assert "content-digest" in headers
    assert "digest" not in headers  # RFC 9421 alone, nothing of draft-cavage

    taken = api.post(path, content=body, headers=headers)
    assert taken.status_code == 202, taken.text
    # The same signature again (a replay): refused, and nothing more is done.
    assert_error(api.post(path, content=body, headers=headers), 401, "signature_invalid")
    wait_for(lambda: alice.of_type("Accept", actor_url))
    time.sleep(1.0)  # a second Accept, if there were one, would be here by now
    assert len(alice.of_type("Accept", actor_url)) == 1
    assert _followers(api, actor_url) == 1

    # Another body under a signature made for the first: its Content-Digest is not the
    # body's, and so it is refused before any key is read.
    other = _follow_body(alice, actor_url)
    signed = _signed_by_fedify(alice, inbox, other, "rfc9421")
    tampered = other.replace(b"/follows/", b"/follows/x")
    refused = api.post(path, content=tampered, headers=signed)
    assert_error(refused, 401, "signature_invalid")
    assert "Content-Digest" in refused.json()["message"]
    # With a Content-Digest made for the new body: the signature does not cover it.
    digest = _signed_by_fedify(alice, inbox, tampered, "rfc9421")["content-digest"]
    retold = {**signed, "content-digest": digest}
    assert_error(api.post(path, content=tampered, headers=retold), 401, "signature_invalid")
    assert _followers(api, actor_url) == 1

    # Signed for another inbox (its @target-uri): not this one's.
    elsewhere = _signed_by_fedify(alice, f"{federating.url}/ap/links/x/inbox", other, "rfc9421")
    assert_error(api.post(path, content=other, headers=elsewhere), 401, "signature_invalid")


def test_a_rotated_key_is_read_again_once(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, alice: Peer
) -> None:
    api = fed_api
    actor_url, path = open_to_follows(federating, api, fed_creator)
    _control(alice, "follow", actor=actor_url)  # draft-cavage, Fedify's default here
    wait_for(lambda: _followers(api, actor_url) == 1)

    _control(alice, "rotate")
    reads = _actor_reads(alice)
    # Signed with the new key: the kept one fails, the actor is read once, and it verifies.
    _control(alice, "unfollow", actor=actor_url)
    wait_for(lambda: _followers(api, actor_url) == 0)
    assert _actor_reads(alice) - reads == 1

    # A signature no key of alice's makes: read once more, then refused (no loop).
    body = _follow_body(alice, actor_url)
    headers = _signed_by_fedify(alice, f"{federating.url}{path}", body, "rfc9421")
    label, _, value = headers["signature"].partition("=:")
    headers["signature"] = f"{label}=:{'A' * (len(value) - 1)}:"
    reads = _actor_reads(alice)
    assert_error(api.post(path, content=body, headers=headers), 401, "signature_invalid")
    assert _actor_reads(alice) - reads == 1
    assert _followers(api, actor_url) == 0


def test_a_server_that_takes_only_rfc9421_gets_a_second_knock_then_rfc9421_first(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, strict: Peer
) -> None:
    api, creator = fed_api, fed_creator
    actor_url, _ = open_to_follows(federating, api, creator)
    _control(strict, "follow", actor=actor_url, spec="rfc9421")
    # The Accept: draft-cavage first (refused), then RFC 9421 (taken).
    wait_for(lambda: strict.of_type("Accept", actor_url))
    assert _knocks(strict, actor_url) == [("cavage", 401), ("rfc9421", 202)]
    # Reading the follower's actor (its server takes only RFC 9421 for that too): the
    # same two knocks, for the one read.
    fetches = [
        (knock["standard"], knock["status"])
        for knock in strict.received()["fetch_knocks"]
        if (knock["key_id"] or "").startswith(f"{actor_url}#")
    ]
    assert fetches == [("cavage", 401), ("rfc9421", 200)]

    # The next delivery to that server goes as RFC 9421 at once.
    message_id = post_message(api, creator.link_id, "Which standard?")
    post_reply(api, creator, message_id, "The one you take")
    wait_for(lambda: strict.of_type("Create", actor_url))
    assert _knocks(strict, actor_url)[2:] == [("rfc9421", 202)]
    assert strict.received()["refused"] == 0  # every RFC 9421 signature verified


def test_a_reading_is_kept_for_its_max_age_within_an_hour_and_a_day(
    federating: Server, fed_api: httpx.Client, alice: Peer
) -> None:
    """What the actor's Cache-Control says, bounded; an expired reading is read again
    once and then kept (the expiry moved into the past straight in the database, as only
    time would move it)."""
    api = fed_api
    key_id = f"{alice.url}/users/alice#main-key"
    hour, day = 3600, 24 * 3600
    try:
        for cache_control, kept in (
            ("public, max-age=7200", 2 * hour),
            ("max-age=60", hour),
            ("max-age=9999999", day),
            ("no-store", hour),
            (None, day),
        ):
            _control(alice, "cache", value=cache_control)
            execute(
                federating.database_url,
                "DELETE FROM federation_remote_keys WHERE key_id = $1",
                key_id,
            )
            actor_url, _ = open_to_follows(
                federating, api, make_creator_in(federating.database_url)
            )
            reads = _actor_reads(alice)
            _control(alice, "follow", actor=actor_url)
            wait_for(lambda u=actor_url: _followers(api, u) == 1)  # type: ignore[misc]
            assert _actor_reads(alice) - reads == 1
            [row] = query(
                federating.database_url,
                "SELECT fetched_at, expires_at FROM federation_remote_keys WHERE key_id = $1",
                key_id,
            )
            assert row["expires_at"] - row["fetched_at"] == kept * 1_000_000, cache_control
    finally:
        _control(alice, "cache", value=None)

    # Expired: the next request reads the actor once, and the one after reads nothing.
    execute(
        federating.database_url,
        "UPDATE federation_remote_keys SET expires_at = 1 WHERE key_id = $1",
        key_id,
    )
    reads = _actor_reads(alice)
    _control(alice, "unfollow", actor=actor_url)
    wait_for(lambda: _followers(api, actor_url) == 0)
    assert _actor_reads(alice) - reads == 1
    _control(alice, "follow", actor=actor_url)
    wait_for(lambda: _followers(api, actor_url) == 1)
    assert _actor_reads(alice) - reads == 1
