"""The inbox under a hostile server: documents that claim to be another actor, documents
that are not served as ActivityPub, and replayed requests. Through HTTP, on both
databases, with the stand-in remote (``standin``) serving the forged documents.

Carol is the stand-in's first actor (``/actor``, its own key). Mallory controls a path on
carol's server (an upload, a profile field: ``Remote.pages``) and her own key.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.actions import assert_error
from tests.conftest import Creator, make_creator_in
from tests.federation.conftest import followable, open_to_follows, wait_for
from tests.federation.standin import Remote, _key, _pem, follow_of, followers, post, serving, signed
from tests.server import Server
from tests.support.db import query

AS = "https://www.w3.org/ns/activitystreams"


@pytest.fixture(scope="module")
def remote() -> Iterator[Remote]:
    with serving() as state:
        yield state


def _serve(remote: Remote, path: str, document: dict[str, Any], media: str) -> None:
    remote.pages[path] = (json.dumps(document).encode(), media)


def _person(remote: Remote, *, key_id: str, owner: str, pem: str, id: str) -> dict:
    return {
        "@context": [AS, "https://w3id.org/security/v1"],
        "id": id,
        "type": "Person",
        "inbox": f"http://127.0.0.2:{remote.port}/inbox",
        "publicKey": {"id": key_id, "owner": owner, "publicKeyPem": pem},
    }


def _cached_keys(server: Server, key_id: str) -> list[dict[str, Any]]:
    return query(
        server.database_url,
        "SELECT key_id, actor_id FROM federation_remote_keys WHERE key_id = $1",
        key_id,
    )


def _queued(server: Server, link_id: str) -> list[dict[str, Any]]:
    return query(
        server.database_url,
        "SELECT payload FROM federation_deliveries WHERE link_id = $1",
        link_id,
    )


def _in_carols_name(remote: Remote, actor_url: str, follow: dict[str, Any]) -> list[dict[str, Any]]:
    carol = remote.actor
    return [
        {"@context": AS, "id": f"{carol}/undo/{uuid.uuid4()}", "type": "Undo", "actor": carol,
         "object": follow},
        follow_of(remote, actor_url),
        {"@context": AS, "id": f"{carol}#delete/{uuid.uuid4()}", "type": "Delete",
         "actor": carol, "object": carol},
    ]  # fmt: skip


def _as(
    server: Server, api: httpx.Client, path: str, activity: dict[str, Any], *,
    key: rsa.RSAPrivateKey, key_id: str,
) -> httpx.Response:  # fmt: skip
    return post(api, path, activity, signed(server, path, activity, key=key, key_id=key_id))


def test_a_document_claiming_to_be_carol_does_not_speak_for_her(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, remote: Remote
) -> None:
    api, creator = fed_api, fed_creator
    actor_url, path = open_to_follows(federating, api, creator)
    carols = follow_of(remote, actor_url)
    followed = _as(federating, api, path, carols, key=remote.key, key_id=remote.key_id)
    assert followed.status_code == 202, followed.text
    assert followers(api, actor_url) == 1
    queued = len(_queued(federating, creator.link_id))

    mallory = _key()
    base = f"http://127.0.0.2:{remote.port}/users"
    # At /users/mallory2: a document whose id and key owner say carol, with mallory's key.
    forged_at = f"{base}/mallory2"
    _serve(
        remote,
        "/users/mallory2",
        _person(remote, key_id=f"{forged_at}#main-key", owner=remote.actor,
                pem=_pem(mallory), id=remote.actor),
        "application/activity+json",
    )  # fmt: skip
    # At /users/mallory3: a document that is itself, but whose key says carol owns it.
    itself = f"{base}/mallory3"
    _serve(
        remote,
        "/users/mallory3",
        _person(remote, key_id=f"{itself}#main-key", owner=remote.actor,
                pem=_pem(mallory), id=itself),
        "application/activity+json",
    )  # fmt: skip
    # At /users/mallory4/main-key: a key document (as GoToSocial serves them) saying carol.
    key_doc = f"{base}/mallory4/main-key"
    _serve(
        remote,
        "/users/mallory4/main-key",
        {"@context": [AS, "https://w3id.org/security/v1"], "id": key_doc,
         "owner": remote.actor, "publicKeyPem": _pem(mallory)},
        "application/activity+json",
    )  # fmt: skip
    for key_id, fetched_path in (
        (f"{forged_at}#main-key", "/users/mallory2"),
        (f"{itself}#main-key", "/users/mallory3"),
        (key_doc, "/users/mallory4/main-key"),
    ):
        for activity in _in_carols_name(remote, actor_url, carols):
            before = remote.fetched.count(fetched_path)
            refused = _as(federating, api, path, activity, key=mallory, key_id=key_id)
            assert_error(refused, 401, "signature_invalid")
            # Read again each time: nothing about the key was kept from the last refusal.
            assert remote.fetched.count(fetched_path) == before + 1
        assert _cached_keys(federating, key_id) == []
    assert followers(api, actor_url) == 1  # carol's follow stays
    assert len(_queued(federating, creator.link_id)) == queued  # no Accept for mallory
    rows = query(
        federating.database_url,
        "SELECT key_id FROM federation_remote_keys WHERE actor_id = $1",
        remote.actor,
    )
    assert [row["key_id"] for row in rows] == [remote.key_id]  # carol: her own key only


def test_only_a_document_served_as_activitypub_is_an_actor(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, remote: Remote
) -> None:
    api, creator = fed_api, fed_creator
    actor_url, path = open_to_follows(federating, api, creator)
    base = f"http://127.0.0.2:{remote.port}/users"
    key = _key()
    for name, media in (
        ("octet", "application/octet-stream"),
        ("html", "text/html; charset=utf-8"),
        ("plain", "application/json"),
        ("ldnoprofile", "application/ld+json"),
    ):
        actor = f"{base}/{name}"
        _serve(
            remote, f"/users/{name}",
            _person(remote, key_id=f"{actor}#main-key", owner=actor, pem=_pem(key), id=actor),
            media,
        )  # fmt: skip
        follow = follow_of(remote, actor_url, actor)
        refused = _as(federating, api, path, follow, key=key, key_id=f"{actor}#main-key")
        assert_error(refused, 401, "signature_invalid")
        assert _cached_keys(federating, f"{actor}#main-key") == []
    assert followers(api, actor_url) == 0

    # What peers serve is taken: ld+json with the ActivityStreams profile, and a key
    # document apart from its actor (GoToSocial's …/main-key) that the actor lists.
    ld = f"{base}/ld"
    _serve(
        remote, "/users/ld",
        _person(remote, key_id=f"{ld}#main-key", owner=ld, pem=_pem(key), id=ld),
        f'application/ld+json; profile="{AS}"',
    )  # fmt: skip
    gts = f"{base}/gts"
    _serve(
        remote, "/users/gts",
        _person(remote, key_id=f"{gts}/main-key", owner=gts, pem=_pem(key), id=gts),
        "application/activity+json",
    )  # fmt: skip
    _serve(
        remote, "/users/gts/main-key",
        _person(remote, key_id=f"{gts}/main-key", owner=gts, pem=_pem(key), id=gts),
        "application/activity+json",
    )  # fmt: skip
    for actor, key_id in ((ld, f"{ld}#main-key"), (gts, f"{gts}/main-key")):
        follow = follow_of(remote, actor_url, actor)
        taken = _as(federating, api, path, follow, key=key, key_id=key_id)
        assert taken.status_code == 202, taken.text
        assert [r["actor_id"] for r in _cached_keys(federating, key_id)] == [actor]
    assert followers(api, actor_url) == 2


def test_a_signed_request_counts_once_however_many_times_it_is_sent(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, remote: Remote
) -> None:
    api, creator = fed_api, fed_creator
    actor_url, path = open_to_follows(federating, api, creator)
    follow = follow_of(remote, actor_url)
    headers = signed(federating, path, follow, key=remote.key, key_id=remote.key_id)
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: post(api, path, follow, headers), range(8)))
    assert sorted(a.status_code for a in answers) == [202] + [401] * 7
    for refused in (a for a in answers if a.status_code == 401):
        assert_error(refused, 401, "signature_invalid")
    assert followers(api, actor_url) == 1
    queued = _queued(federating, creator.link_id)
    assert [json.loads(row["payload"])["type"] for row in queued] == ["Accept"]
    wait_for(lambda: any(follow["id"].encode() in body for _, body in remote.received))
    assert_error(post(api, path, follow, headers), 401, "signature_invalid")  # later, too
    assert len(_queued(federating, creator.link_id)) == 1

    # An Undo replayed after carol follows again does not unfollow her.
    undo = {"@context": AS, "id": f"{remote.actor}/undo/{uuid.uuid4()}", "type": "Undo",
            "actor": remote.actor, "object": follow}  # fmt: skip
    undo_headers = signed(federating, path, undo, key=remote.key, key_id=remote.key_id)
    assert post(api, path, undo, undo_headers).status_code == 202
    assert followers(api, actor_url) == 0
    again = follow_of(remote, actor_url)
    assert (
        _as(federating, api, path, again, key=remote.key, key_id=remote.key_id).status_code == 202
    )
    assert_error(post(api, path, undo, undo_headers), 401, "signature_invalid")
    assert followers(api, actor_url) == 1

    # The same activity to another link's inbox is another request (the signature covers
    # the path): taken there (and ignored, it follows this link).
    second = make_creator_in(federating.database_url)
    followable(api, second)
    other = f"/ap/links/{second.link_id}/inbox"
    elsewhere = signed(federating, other, follow, key=remote.key, key_id=remote.key_id)
    assert post(api, other, follow, elsewhere).status_code == 202


def test_a_body_too_large_or_too_deep_is_refused_before_it_is_read_or_parsed(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, remote: Remote
) -> None:
    api, creator = fed_api, fed_creator
    followable(api, creator)
    path = f"/ap/links/{creator.link_id}/inbox"
    for body, status in (
        (b"[" * 300_000, 413),
        (b"[" * 3000 + b"]" * 3000, 400),
        (b'{"actor": "\xff", "type": "Follow"}', 400),
    ):
        headers = signed(federating, path, body, key=remote.key, key_id=remote.key_id)
        assert_error(api.post(path, content=body, headers=headers), status)
    big_but_taken = json.dumps({"actor": remote.actor, "pad": "x" * 200_000}).encode()
    headers = signed(federating, path, big_but_taken, key=remote.key, key_id=remote.key_id)
    answer = api.post(path, content=big_but_taken, headers=headers)
    assert answer.status_code == 202, answer.text  # under 256 KiB: read, and ignored
