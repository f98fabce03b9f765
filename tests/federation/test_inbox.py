"""What a followable link's inbox refuses, and what discovery shows, through HTTP.

The remote actor here is a stand-in: a small HTTP server on 127.0.0.2 that serves an
actor document with its public key (as Mastodon does) and takes what anonbox sends to
its inbox. Requests are signed in this file with ``cryptography``, independently of
anonbox's own signing, and anonbox's Accept is checked against the actor's published key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.actions import assert_error, post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.federation.conftest import AP, followable, open_to_follows, wait_for
from tests.federation.standin import (
    Remote,
    _key,
    follow_of,
    followers,
    post,
    serving,
    signed,
)
from tests.server import Server
from tests.support.admin import make_account
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.signin import signed_in_browser


@pytest.fixture(scope="module")
def remote() -> Iterator[Remote]:
    with serving() as state:
        yield state


def test_refuses_unsigned_wrongly_signed_and_stale_follows_and_sends_nothing(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, remote: Remote
) -> None:
    api = fed_api
    actor_url, path = open_to_follows(federating, api, fed_creator)
    follow = follow_of(remote, actor_url)
    before = len(remote.received)
    plain = {"Content-Type": "application/activity+json"}
    assert_error(post(api, path, follow, plain), 401, "signature_invalid")
    other = _key()  # a key that is not the actor's
    wrong = signed(federating, path, follow, key=other, key_id=remote.key_id)
    assert_error(post(api, path, follow, wrong), 401, "signature_invalid")
    stale_at = datetime.now(UTC) - timedelta(hours=2)
    stale = signed(federating, path, follow, key=remote.key, key_id=remote.key_id, date=stale_at)
    assert_error(post(api, path, follow, stale), 401, "signature_invalid")
    tampered = signed(
        federating, path, follow, key=remote.key, key_id=remote.key_id, digest_of=b"{}"
    )
    assert_error(post(api, path, follow, tampered), 401, "signature_invalid")
    time.sleep(1.5)  # the courier would have sent an Accept by now
    assert len(remote.received) == before
    assert followers(api, actor_url) == 0


def test_a_signed_follow_gets_a_signed_accept_and_a_rotated_key_is_read_again(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, remote: Remote
) -> None:
    api = fed_api
    actor_url, path = open_to_follows(federating, api, fed_creator)
    follow = follow_of(remote, actor_url)
    headers = signed(federating, path, follow, key=remote.key, key_id=remote.key_id)
    answer = post(api, path, follow, headers)
    assert answer.status_code == 202, answer.text
    wait_for(lambda: any(actor_url.encode() in body for _, body in remote.received))
    got, body = next((h, b) for h, b in remote.received if actor_url.encode() in b)
    accept = json.loads(body)
    assert accept["type"] == "Accept"
    assert accept["object"]["id"] == follow["id"]
    # Its signature is the link's published key's, over what draft-cavage names.
    published = api.get(actor_url, headers=AP).json()["publicKey"]
    params = dict(part.split("=", 1) for part in got["signature"].split(","))
    assert params["keyId"].strip('"') == published["id"]
    assert params["headers"].strip('"') == "(request-target) host date digest"
    text = (
        f"(request-target): post /inbox\nhost: {got['host']}\ndate: {got['date']}\n"
        f"digest: {got['digest']}"
    )
    key = serialization.load_pem_public_key(published["publicKeyPem"].encode())
    assert isinstance(key, rsa.RSAPublicKey)
    key.verify(  # raises if it does not verify
        base64.b64decode(params["signature"].strip('"')),
        text.encode(),
        padding.PKCS1v15(),
        hashes.SHA256(),
    )
    assert got["digest"] == "SHA-256=" + base64.b64encode(hashlib.sha256(body).digest()).decode()
    assert followers(api, actor_url) == 1

    # The remote rotates its key: the cached one fails, the new one is read and verifies.
    remote.key = _key()
    undo = {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": f"{remote.actor}/undo/{uuid.uuid4()}",
        "type": "Undo",
        "actor": remote.actor,
        "object": follow,
    }
    rotated = signed(federating, path, undo, key=remote.key, key_id=remote.key_id)
    answer = post(api, path, undo, rotated)
    assert answer.status_code == 202, answer.text
    assert followers(api, actor_url) == 0


BLOCKED_DOMAINS = "/admin/federation/blocked-domains"


def test_a_blocked_server_is_refused(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, remote: Remote
) -> None:
    api = fed_api
    admin = make_account(federating.database_url, admin=True)

    def block(domain: str, headers: dict[str, str]) -> httpx.Response:
        return api.post(BLOCKED_DOMAINS, json={"domain": domain}, headers=headers)

    assert_error(block("127.0.0.2", fed_creator.headers), 403)
    assert_error(block("not a host", admin.headers), 400)
    blocked = block("127.0.0.2", admin.headers)
    assert blocked.status_code == 201, blocked.text
    try:
        assert_error(block("127.0.0.2", admin.headers), 409)
        listed = api.get(BLOCKED_DOMAINS, headers=admin.headers)
        assert [d["domain"] for d in listed.json()["data"]["items"]] == ["127.0.0.2"]
        actor_url, path = open_to_follows(federating, api, fed_creator)
        follow = follow_of(remote, actor_url)
        before = len(remote.received)
        headers = signed(federating, path, follow, key=remote.key, key_id=remote.key_id)
        assert_error(post(api, path, follow, headers), 403)
        time.sleep(1.0)
        assert len(remote.received) == before
        assert followers(api, actor_url) == 0
    finally:
        removed = api.delete(f"{BLOCKED_DOMAINS}/127.0.0.2", headers=admin.headers)
        assert removed.status_code == 200, removed.text


def test_discovery_finds_followable_links_only_and_never_the_e_mail(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator
) -> None:
    api = fed_api
    host = federating.url.removeprefix("http://")
    resource = f"acct:{fed_creator.link_id}@{host}"
    actor_url = f"{federating.url}/ap/links/{fed_creator.link_id}"
    # Not followable yet: nothing to find.
    assert_error(api.get("/.well-known/webfinger", params={"resource": resource}), 404)
    assert_error(api.get(actor_url, headers=AP), 404)
    assert_error(api.get("/.well-known/webfinger", params={"resource": "acct:nobody@x"}), 404)
    followable(api, fed_creator)
    found = api.get("/.well-known/webfinger", params={"resource": resource})
    assert found.status_code == 200
    assert found.json()["subject"] == resource
    actor = api.get(actor_url, headers=AP)
    body = actor.json()
    assert body["type"] in ("Person", "Service")
    for part in ("inbox", "outbox", "followers"):
        assert body[part] == f"{actor_url}/{part}"
    assert body["publicKey"]["publicKeyPem"].startswith("-----BEGIN PUBLIC KEY-----")
    assert "@example.com" not in actor.text
    assert "private" not in actor.text.lower()
    assert fed_creator.user_id not in actor.text
    # Turned off again: gone from discovery.
    off = api.patch(
        f"/links/{fed_creator.link_id}", json={"fediverse": False}, headers=fed_creator.headers
    )
    assert off.status_code == 200
    assert off.json()["data"]["fediverse"] is False
    # Its actor said goodbye: gone (410), not missing (test_goodbye.py).
    assert_error(api.get("/.well-known/webfinger", params={"resource": resource}), 410, "gone")
    assert api.get(actor_url, headers=AP).status_code == 410
    index = api.get("/.well-known/nodeinfo").json()
    document = api.get(index["links"][0]["href"].removeprefix(federating.url)).json()
    assert document["software"]["name"] == "anonbox"
    assert document["protocols"] == ["activitypub"]


def test_without_a_public_address_links_cannot_be_made_followable(
    api: httpx.Client, creator: Creator
) -> None:
    refused = api.patch(
        f"/links/{creator.link_id}", json={"fediverse": True}, headers=creator.headers
    )
    assert_error(refused, 409, "federation_unavailable")
    assert (
        api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]["fediverse"]
        is False
    )
    assert_error(api.get("/.well-known/nodeinfo"), 404)


def test_the_settings_form_turns_following_on_and_off_without_javascript(
    federating: Server,
) -> None:
    account = make_account(federating.database_url, admin=False)
    link_id = account.creator.link_id
    page_path = f"/dashboard/links/{link_id}/settings"
    browser = signed_in_browser(federating, account.email)
    try:
        page = browser.get(page_path)
        assert page.status_code == 200
        host = federating.url.removeprefix("http://")
        assert 'name="fediverse"' in page.text
        assert f"@{link_id}@{host}" in page.text
        form = {
            "csrf_token": csrf_of(page.text),
            "prompt": "Ask me anything",
            "all_settings": "1",
            "pause": "open",
            "muted": "filter",
        }
        saved = browser.post(page_path, data={**form, "fediverse": "on"})
        assert saved.status_code == 303, saved.text
        actor = browser.get(f"/ap/links/{link_id}", headers=AP)
        assert actor.status_code == 200
        assert actor.json()["summary"] == "<p>Ask me anything</p>"
        page = browser.get(page_path)
        assert (
            'id="fediverse" name="fediverse" aria-describedby="fediverse-hint" checked' in page.text
        )
        saved = browser.post(page_path, data=form)  # unticked
        assert saved.status_code == 303
        assert browser.get(f"/ap/links/{link_id}", headers=AP).status_code == 410  # goodbye
    finally:
        browser.close()


def test_an_answer_goes_once_to_a_servers_shared_inbox(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, remote: Remote
) -> None:
    api, creator = fed_api, fed_creator
    actor_url, path = open_to_follows(federating, api, creator)
    remote.shared = True
    try:
        # Actors this anonbox has not read yet: a reading is kept (federation.keys), and
        # the module's other tests read remote.actor before it named a shared inbox.
        for follower in (remote.actor + "-shared", remote.actor + "-shared2"):
            follow = follow_of(remote, actor_url, follower)
            headers = signed(
                federating, path, follow, key=remote.key, key_id=f"{follower}#main-key"
            )
            assert post(api, path, follow, headers).status_code == 202
        assert followers(api, actor_url) == 2
        message_id = post_message(api, creator.link_id, "Shared?")
        post_reply(api, creator, message_id, "Once per server")

        def creates() -> list[dict[str, str]]:
            # The remote outlives this test (module-scoped): only this link's Creates.
            mine = actor_url.encode()
            return [
                h
                for h, b in remote.received
                if b"Once per server" in b and b'"Create"' in b and mine in b
            ]

        wait_for(creates)
        time.sleep(1.0)  # a second delivery, if there were one, would be here by now
        assert [h["x-path"] for h in creates()] == ["/shared"]
    finally:
        remote.shared = False


@pytest.fixture(scope="module")
def tight_inbox(
    database_url_factory: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A federating anonbox whose inboxes take 5 requests a minute from one client."""
    log = tmp_path_factory.mktemp("federation-logs") / "tight-inbox.log"
    running = Server(
        database_url_factory("sqlite"),
        log,
        env={
            "ANONBOX_FEDERATION_ALLOW_PRIVATE": "true",
            "ANONBOX_FEDERATION_RETRY_SECONDS": "0.2",
            "ANONBOX_LIMIT_FEDERATION_INBOX": "5/60",
        },
    )
    running.extra_env["ANONBOX_PUBLIC_URL"] = running.url
    running.start(60)
    yield running
    running.stop()


def test_a_flood_at_an_inbox_is_cut_off_before_any_signature_is_read(
    tight_inbox: Server, remote: Remote
) -> None:
    """A peer that floods an inbox with signatures under keys anonbox does not know would
    have it fetch a key and check a signature for each: past the limit, 429 with
    Retry-After before anything is read, even for a good signature, and nothing is sent."""
    creator = make_creator_in(tight_inbox.database_url)
    path = f"/ap/links/{creator.link_id}/inbox"
    actor_url = f"{tight_inbox.url}{path.removesuffix('/inbox')}"
    with loopback_client(base_url=tight_inbox.url, timeout=30) as api:
        followable(api, creator)
        follow = follow_of(remote, actor_url)
        unknown = [
            signed(
                tight_inbox, path, follow, key=remote.key, key_id=f"{remote.actor}/{n}#no-such-key"
            )
            for n in range(12)
        ]
        before = len(remote.received)
        with ThreadPoolExecutor(max_workers=12) as pool:
            answers = list(pool.map(lambda headers: post(api, path, follow, headers), unknown))
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [401] * 5 + [429] * 7, statuses
        for refused in (a for a in answers if a.status_code == 429):
            assert_error(refused, 429, "rate_limited")
            assert int(refused.headers["Retry-After"]) > 0
        good = signed(tight_inbox, path, follow, key=remote.key, key_id=remote.key_id)
        assert_error(post(api, path, follow, good), 429, "rate_limited")
        time.sleep(1.5)  # the courier would have sent an Accept by now
        assert len(remote.received) == before
        assert followers(api, actor_url) == 0
