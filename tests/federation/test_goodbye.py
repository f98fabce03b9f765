"""A followable link's clean goodbye, as a real fediverse server sees it: Fedify 2.3.6 on
loopback (``tests/support/fedify/peer.mjs``), on both databases.

Deleting a link, turning its switch off or erasing its account sends one ``Delete`` of
the actor per server (two followers on the peer share its inbox), which Fedify verifies;
afterwards the actor, a Note, the collections, the inbox and WebFinger answer 410 (the
actor and the Note with a Tombstone). Turning the switch on again starts afresh: a new
key, no followers, and a new Follow works. A server that is down during the goodbye gets
it when it is back.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.account.conftest import signed_in
from tests.actions import post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.federation.conftest import AP, followable, wait_for
from tests.federation.test_fedify_peer import PEER_DIR, Peer, install_peer
from tests.server import Server, free_port
from tests.support.db import query
from tests.support.http import loopback_client
from tests.support.processes import stop
from tests.support.servers import own_server

PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
GRACE_SECONDS = 2.0

farewell = own_server(
    "farewell",
    {
        "ANONBOX_FEDERATION_ALLOW_PRIVATE": "true",
        "ANONBOX_FEDERATION_RETRY_SECONDS": "0.2",
        "ANONBOX_ACCOUNT_ERASE_DAYS": f"{GRACE_SECONDS / 86400:.10f}",
    },
    public_url=True,
)


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    install_peer()
    port = free_port()
    log = tmp_path_factory.mktemp("fedify-goodbye") / "peer.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            ["node", "peer.mjs", str(port)], cwd=PEER_DIR, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 30
        while "listening" not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Fedify peer did not start:\n{log.read_text()}")
            time.sleep(0.1)
        running = Peer(port)
        yield running
        running.http.close()
    finally:
        stop(process)


@pytest.fixture
def api(farewell: Server) -> Iterator[httpx.Client]:
    with loopback_client(base_url=farewell.url, timeout=30) as client:
        yield client


@pytest.fixture
def creator(farewell: Server) -> Creator:
    return make_creator_in(farewell.database_url)


def _control(peer: Peer, what: str, **given: Any) -> None:
    answer = peer.http.post(f"/control/{what}", json=given)
    assert answer.status_code == 200, answer.text


def _followed_by_two(server: Server, api: httpx.Client, creator: Creator, peer: Peer) -> str:
    """The link made followable and followed by alice and bob, both on the peer; its actor."""
    followable(api, creator)
    actor_url = f"{server.url}/ap/links/{creator.link_id}"
    _control(peer, "follow", actor=actor_url, **{"as": "alice"})
    _control(peer, "follow", actor=actor_url, **{"as": "bob"})
    wait_for(lambda: _followers(api, actor_url) == 2)
    wait_for(lambda: len(peer.of_type("Accept", actor_url)) == 2)  # each verified our key
    return actor_url


def _followers(api: httpx.Client, actor_url: str) -> int:
    return int(api.get(f"{actor_url}/followers", headers=AP).json()["totalItems"])


def _goodbyes(peer: Peer, actor_url: str) -> list[dict[str, Any]]:
    """The verified ``Delete`` of the actor itself that reached the peer."""
    return [d for d in peer.of_type("Delete", actor_url) if d["object_id"] == actor_url]


def _pending(server: Server, link_id: str) -> int:
    rows = query(
        server.database_url,
        "SELECT COUNT(*) AS n FROM federation_deliveries WHERE link_id = $1 AND status = 'pending'",
        link_id,
    )
    return int(rows[0]["n"])


def _an_answer(api: httpx.Client, creator: Creator, peer: Peer, actor_url: str) -> str:
    """An answer sent to the followers: its Note's id."""
    message_id = post_message(api, creator.link_id, "Will you say goodbye?")
    post_reply(api, creator, message_id, "Of course")
    wait_for(lambda: peer.of_type("Create", actor_url))
    return str(peer.of_type("Create", actor_url)[0]["object_id"])


def _assert_gone(server: Server, api: httpx.Client, actor_url: str, note_url: str | None) -> None:
    """What anyone who asks finds afterwards: 410, never 404; Tombstones where AP says."""
    actor = api.get(actor_url, headers=AP)
    assert actor.status_code == 410, actor.text
    assert actor.headers["content-type"].startswith("application/activity+json")
    assert actor.json()["type"] == "Tombstone"
    assert actor.json()["id"] == actor_url
    assert actor.json()["formerType"] == "Service"
    if note_url is not None:
        note = api.get(note_url, headers=AP)
        assert note.status_code == 410, note.text
        assert note.json()["type"] == "Tombstone"
        assert (note.json()["id"], note.json()["formerType"]) == (note_url, "Note")
    for collection in ("outbox", "followers", "featured"):
        assert api.get(f"{actor_url}/{collection}", headers=AP).status_code == 410
    link_id = actor_url.rsplit("/", 1)[1]
    host = server.url.removeprefix("http://")
    finger = api.get("/.well-known/webfinger", params={"resource": f"acct:{link_id}@{host}"})
    assert finger.status_code == 410, finger.text
    posted = api.post(
        f"{actor_url}/inbox",
        content=b'{"type":"Follow","actor":"http://127.0.0.1:9/users/x"}',
        headers={"Content-Type": "application/activity+json"},
    )
    assert posted.status_code == 410, posted.text
    # The shared inbox is not gone: a peer must not take a 410 there for all our actors.
    shared = api.post(
        "/ap/inbox",
        content=b'{"type":"Follow","actor":"http://127.0.0.1:9/users/x","object":"'
        + actor_url.encode()
        + b'"}',
        headers={"Content-Type": "application/activity+json"},
    )
    assert shared.status_code == 202, shared.text


def test_deleting_a_link_sends_one_verified_delete_per_server_then_answers_410(
    farewell: Server, api: httpx.Client, creator: Creator, peer: Peer
) -> None:
    refused = peer.received()["refused"]
    actor_url = _followed_by_two(farewell, api, creator, peer)
    note_url = _an_answer(api, creator, peer, actor_url)

    deleted = api.delete(f"/links/{creator.link_id}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    wait_for(lambda: _goodbyes(peer, actor_url))
    # Its goodbye over, nothing of the actor is kept but the link's tombstone.
    wait_for(
        lambda: (
            not query(
                farewell.database_url,
                "SELECT 1 AS one FROM federation_actors WHERE link_id = $1",
                creator.link_id,
            )
        )
    )
    [goodbye] = _goodbyes(peer, actor_url)  # one, to the shared inbox, for both followers
    assert goodbye["recipient"] is None
    assert PUBLIC in goodbye["activity_to"]
    assert f"{actor_url}/followers" in goodbye["activity_to"]
    assert peer.received()["refused"] == refused  # Fedify verified it
    for table in ("federation_followers", "federation_deliveries"):
        assert not query(
            farewell.database_url,
            f"SELECT 1 AS one FROM {table} WHERE link_id = $1",  # noqa: S608
            creator.link_id,
        )
    _assert_gone(farewell, api, actor_url, note_url)
    # A person who opens the address is shown the link's page, which says it is gone.
    opened = api.get(actor_url, headers={"Accept": "text/html"})
    assert opened.status_code == 302
    page = api.get(opened.headers["location"], headers={"Accept": "text/html"})
    assert page.status_code == 410


def test_switching_off_says_goodbye_and_on_again_starts_afresh(
    farewell: Server, api: httpx.Client, creator: Creator, peer: Peer
) -> None:
    refused = peer.received()["refused"]
    actor_url = _followed_by_two(farewell, api, creator, peer)
    old_key = api.get(actor_url, headers=AP).json()["publicKey"]["publicKeyPem"]
    note_url = _an_answer(api, creator, peer, actor_url)

    off = api.patch(f"/links/{creator.link_id}", json={"fediverse": False}, headers=creator.headers)
    assert off.status_code == 200, off.text
    wait_for(lambda: _goodbyes(peer, actor_url))
    wait_for(lambda: _pending(farewell, creator.link_id) == 0)
    assert len(_goodbyes(peer, actor_url)) == 1
    assert peer.received()["refused"] == refused
    _assert_gone(farewell, api, actor_url, note_url)
    opened = api.get(actor_url, headers={"Accept": "text/html"})
    assert opened.status_code == 302
    page = api.get(opened.headers["location"], headers={"Accept": "text/html"})
    assert page.status_code == 200  # the link is still there

    # On again: the actor answers, with a new key and no followers; a new Follow works.
    followable(api, creator)
    again = api.get(actor_url, headers=AP)
    assert again.status_code == 200, again.text
    assert again.json()["type"] == "Service"
    assert again.json()["publicKey"]["publicKeyPem"] != old_key
    assert _followers(api, actor_url) == 0
    host = farewell.url.removeprefix("http://")
    finger = api.get(
        "/.well-known/webfinger", params={"resource": f"acct:{creator.link_id}@{host}"}
    )
    assert finger.status_code == 200
    accepts = len(peer.of_type("Accept", actor_url))
    _control(peer, "follow", actor=actor_url, **{"as": "alice"})
    wait_for(lambda: len(peer.of_type("Accept", actor_url)) > accepts)  # signed with the new key
    assert _followers(api, actor_url) == 1
    assert peer.received()["refused"] == refused
    assert len(_goodbyes(peer, actor_url)) == 1  # nothing of the old actor came late


def test_erasing_the_account_says_goodbye(
    farewell: Server, api: httpx.Client, creator: Creator, peer: Peer
) -> None:
    refused = peer.received()["refused"]
    actor_url = _followed_by_two(farewell, api, creator, peer)
    note_url = _an_answer(api, creator, peer, actor_url)

    session = signed_in(farewell.database_url, creator.user_id)
    asked = api.post("/account/deletion", headers=session)
    assert asked.status_code == 201, asked.text
    wait_for(lambda: _goodbyes(peer, actor_url), seconds=60)
    assert not query(
        farewell.database_url, "SELECT 1 AS one FROM users WHERE id = $1", creator.user_id
    )
    wait_for(
        lambda: (
            not query(
                farewell.database_url,
                "SELECT 1 AS one FROM federation_actors WHERE link_id = $1",
                creator.link_id,
            )
        )
    )
    assert len(_goodbyes(peer, actor_url)) == 1
    assert peer.received()["refused"] == refused
    # Nothing names the erased account: its goodbye went out as the link's own.
    assert not query(
        farewell.database_url,
        "SELECT 1 AS one FROM federation_deliveries WHERE user_id = $1 OR link_id = $2",
        creator.user_id,
        creator.link_id,
    )
    _assert_gone(farewell, api, actor_url, note_url)


def test_a_server_down_during_the_goodbye_gets_it_when_it_is_back(
    farewell: Server, api: httpx.Client, creator: Creator, peer: Peer
) -> None:
    actor_url = _followed_by_two(farewell, api, creator, peer)
    _control(peer, "outage", down=True)
    try:
        deleted = api.delete(f"/links/{creator.link_id}", headers=creator.headers)
        assert deleted.status_code == 200, deleted.text

        def tried_twice() -> bool:
            rows = query(
                farewell.database_url,
                "SELECT attempts FROM federation_deliveries WHERE link_id = $1"
                " AND status = 'pending' AND payload LIKE '%goodbye-%'",
                creator.link_id,
            )
            return len(rows) == 1 and rows[0]["attempts"] >= 2

        wait_for(tried_twice)
        assert _goodbyes(peer, actor_url) == []
        # Meanwhile the actor is gone for anyone who asks, its key kept for the goodbye.
        assert api.get(actor_url, headers=AP).status_code == 410
    finally:
        _control(peer, "outage", down=False)
    wait_for(lambda: _goodbyes(peer, actor_url), seconds=30)
    wait_for(lambda: _pending(farewell, creator.link_id) == 0)
    assert len(_goodbyes(peer, actor_url)) == 1


def test_while_an_account_waits_for_erasure_its_actor_is_missing_not_gone(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, peer: Peer
) -> None:
    """In the grace period (30 days here) the deletion may be cancelled: 404, no goodbye,
    and after the cancellation the actor answers with its followers (a 410 would have made
    their servers delete it for good)."""
    api, creator = fed_api, fed_creator
    actor_url = _followed_by_two(federating, api, creator, peer)
    session = signed_in(federating.database_url, creator.user_id)
    assert api.post("/account/deletion", headers=session).status_code == 201
    assert api.get(actor_url, headers=AP).status_code == 404
    host = federating.url.removeprefix("http://")
    finger = api.get(
        "/.well-known/webfinger", params={"resource": f"acct:{creator.link_id}@{host}"}
    )
    assert finger.status_code == 404

    again = signed_in(federating.database_url, creator.user_id)  # a sign-in, as after it
    assert api.delete("/account/deletion", headers=again).status_code == 200
    assert api.get(actor_url, headers=AP).status_code == 200
    assert _followers(api, actor_url) == 2
    assert _goodbyes(peer, actor_url) == []


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_site_wide_shutdown_sends_nothing_and_the_goodbyes_go_when_it_is_back(
    backend: str,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
    peer: Peer,
) -> None:
    """``ANONBOX_FEDERATION_OFF=true`` (docs/fediverse.md): the addresses answer 404, a
    link deleted meanwhile keeps its actor and followers, and its goodbye is sent once
    federation is on again."""
    log = tmp_path_factory.mktemp("shutdown") / f"{backend}.log"
    site = Server(
        database_url_factory(backend),
        log,
        env={"ANONBOX_FEDERATION_ALLOW_PRIVATE": "true", "ANONBOX_FEDERATION_RETRY_SECONDS": "0.2"},
    )
    site.extra_env["ANONBOX_PUBLIC_URL"] = site.url
    site.start(60)
    try:
        creator = make_creator_in(site.database_url)
        with loopback_client(base_url=site.url, timeout=30) as api:
            actor_url = _followed_by_two(site, api, creator, peer)
        site.stop()
        site.extra_env["ANONBOX_FEDERATION_OFF"] = "true"
        site.start(60)
        with loopback_client(base_url=site.url, timeout=30) as api:
            assert api.get(actor_url, headers=AP).status_code == 404
            deleted = api.delete(f"/links/{creator.link_id}", headers=creator.headers)
            assert deleted.status_code == 200, deleted.text
            time.sleep(3 * 2.0)  # the goodbyes' chore has run (every 2 s) and sent nothing
            kept = query(
                site.database_url,
                "SELECT gone_at FROM federation_actors WHERE link_id = $1",
                creator.link_id,
            )
            assert kept == [{"gone_at": None}]
            assert _pending(site, creator.link_id) == 0
        site.stop()
        del site.extra_env["ANONBOX_FEDERATION_OFF"]
        site.start(60)
        wait_for(lambda: _goodbyes(peer, actor_url), seconds=30)
        with loopback_client(base_url=site.url, timeout=30) as api:
            _assert_gone(site, api, actor_url, None)
        wait_for(lambda: _pending(site, creator.link_id) == 0)
        assert len(_goodbyes(peer, actor_url)) == 1
    finally:
        site.stop()
