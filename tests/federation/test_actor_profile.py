"""A followable link's face and profile as the fediverse reads them (issue 42, item 2).

Its picture is a PNG (Mastodon and Misskey show no SVG), drawn per creator; its actor
says ``published``, ``discoverable`` and ``indexable`` (the creator's opt-in, per link),
``manuallyApprovesFollowers`` and ``endpoints.sharedInbox`` in terms a JSON-LD processor
reads: Fedify's parser (``lookupObject``) is the judge. Every change a follower sees
(name, prompt, picture, discoverable) sends exactly one ``Update`` of the actor, verified
by Fedify, to the follower's shared inbox; a change they do not see sends none. The
shared inbox takes a Follow for any link. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import io
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from PIL import Image

from anonbox.account.avatar import PALETTE
from tests.actions import assert_error, data_of
from tests.conftest import Creator, make_creator_in
from tests.federation.conftest import AP, followable, wait_for
from tests.federation.test_fedify_peer import PEER_DIR, Peer, install_peer
from tests.server import Server, free_port
from tests.support.forms import csrf_of
from tests.support.processes import stop
from tests.support.signin import signed_in


@pytest.fixture(scope="module")
def bob(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """A Fedify server on loopback (``tests/support/fedify/peer.mjs``)."""
    install_peer()
    port = free_port()
    log = tmp_path_factory.mktemp("fedify-profile") / "peer.log"
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


def _looked_up(peer: Peer, url: str) -> dict[str, Any]:
    answer = peer.http.post("/control/profile", json={"url": url})
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    assert found["found"], found
    return found


def _named(api: httpx.Client, creator: Creator, name: str) -> None:
    named = api.patch("/account/profile", json={"display_name": name}, headers=creator.headers)
    assert named.status_code == 200, named.text


def _actor(api: httpx.Client, creator: Creator) -> dict[str, Any]:
    found = api.get(f"/ap/links/{creator.link_id}", headers=AP)
    assert found.status_code == 200, found.text
    return dict(found.json())


def _png(api: httpx.Client, url: str) -> tuple[Image.Image, httpx.Response]:
    response = api.get(url)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    assert "public" in response.headers["cache-control"]
    image = Image.open(io.BytesIO(response.content), formats=("PNG",))
    image.load()
    return image, response


def test_the_default_picture_is_a_png_drawn_per_creator(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator
) -> None:
    api, creator = fed_api, fed_creator
    followable(api, creator)
    # Without a name: the neutral silhouette, as a PNG.
    icon = _actor(api, creator)["icon"]
    assert icon["mediaType"] == "image/png"
    assert icon["url"] == f"{federating.url}/avatars/neutral.png"
    neutral, _ = _png(api, icon["url"])
    assert neutral.size == (256, 256)

    _named(api, creator, "Hanako")
    icon = _actor(api, creator)["icon"]
    assert icon["mediaType"] == "image/png"
    assert icon["url"].startswith(f"{federating.url}/avatars/generated/")
    assert icon["url"].endswith(".png")
    assert creator.user_id not in icon["url"]
    image, response = _png(api, icon["url"])
    assert image.size == (256, 256)
    assert image.mode == "RGBA"
    # As the SVG draws it: one of the six colours in a circle, transparent outside it.
    assert image.getpixel((0, 0))[3] == 0
    assert image.getpixel((128, 4))[:3] in PALETTE
    assert image.tobytes() != neutral.tobytes()
    # The same picture at the SVG's address, drawn the same for every link of the creator.
    svg = api.get(icon["url"].removeprefix(federating.url).replace(".png", ".svg"))
    assert svg.status_code == 200
    assert "#{:02x}{:02x}{:02x}".format(*image.getpixel((128, 4))[:3]) in svg.text
    second = api.post("/links", json={"prompt": "Another"}, headers=creator.headers)
    other = Creator(creator.user_id, data_of(second, 201)["id"], creator.api_key)
    followable(api, other)
    assert _actor(api, other)["icon"]["url"] == icon["url"]
    assert api.get(icon["url"]).content == response.content  # drawn the same again
    # Another creator, with the same name: another picture.
    stranger = make_creator_in(federating.database_url)
    followable(api, stranger)
    _named(api, stranger, "Hanako")
    their = _actor(api, stranger)["icon"]["url"]
    assert their != icon["url"]
    assert _png(api, their)[0].tobytes() != image.tobytes()
    # Kept by browsers and servers: 304 for the same ETag, and nothing sent again.
    kept = api.get(icon["url"], headers={"If-None-Match": response.headers["etag"]})
    assert kept.status_code == 304
    assert kept.content == b""
    assert "immutable" in kept.headers["cache-control"]
    assert api.get("/avatars/generated/nothex.png").status_code == 404
    # An upload is the icon as it is stored, with its own media type.
    uploaded = api.put(
        "/account/avatar",
        content=_picture(),
        headers={**creator.headers, "Content-Type": "image/png"},
    )
    assert uploaded.status_code == 200, uploaded.text
    icon = _actor(api, creator)["icon"]
    assert icon["mediaType"] == "image/webp"
    assert icon["url"] == federating.url + data_of(uploaded)["avatar_url"]
    assert api.get(icon["url"]).headers["content-type"] == "image/webp"
    assert "image" not in _actor(api, creator)  # anonbox has no header picture


def _picture() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 64), (20, 120, 200)).save(out, "PNG")
    return out.getvalue()


def test_fedify_reads_every_property_of_the_profile(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, bob: Peer
) -> None:
    api, creator = fed_api, fed_creator
    followable(api, creator)
    link = data_of(api.get(f"/links/{creator.link_id}", headers=creator.headers))
    assert link["fediverse_discoverable"] is False
    actor_url = f"{federating.url}/ap/links/{creator.link_id}"

    read = _looked_up(bob, actor_url)

    assert read["id"] == actor_url
    assert read["type"] == "https://www.w3.org/ns/activitystreams#Service"
    # Fedify reads false as false, not as absent (null): the terms are in the @context.
    assert read["discoverable"] is False
    assert read["indexable"] is False
    assert read["manually_approves_followers"] is False
    assert read["published"] is not None
    assert read["published"][:19] == link["created_at"][:19]
    assert read["icon_media_type"] == "image/png"
    assert read["icon_url"] == _actor(api, creator)["icon"]["url"]
    assert read["shared_inbox"] == f"{federating.url}/ap/inbox"
    assert read["featured"] == f"{actor_url}/featured"
    featured = api.get(f"{actor_url}/featured", headers=AP)
    assert featured.status_code == 200
    assert featured.json()["totalItems"] == 0

    # The creator opts in, for this link only.
    changed = api.patch(
        f"/links/{creator.link_id}", json={"fediverse_discoverable": True}, headers=creator.headers
    )
    assert changed.status_code == 200, changed.text
    assert data_of(changed)["fediverse_discoverable"] is True
    body = _actor(api, creator)
    assert (body["discoverable"], body["indexable"]) == (True, True)
    second = api.post("/links", json={"prompt": "Another"}, headers=creator.headers)
    other = Creator(creator.user_id, data_of(second, 201)["id"], creator.api_key)
    followable(api, other)
    assert _actor(api, other)["discoverable"] is False
    again = _looked_up(bob, f"{federating.url}/ap/links/{other.link_id}")
    assert (again["discoverable"], again["indexable"]) == (False, False)


def test_discoverable_takes_only_a_boolean(fed_api: httpx.Client, fed_creator: Creator) -> None:
    api, creator = fed_api, fed_creator
    for wrong in ("yes", 1, None, []):
        answer = api.patch(
            f"/links/{creator.link_id}",
            json={"fediverse_discoverable": wrong},
            headers=creator.headers,
        )
        assert_error(answer, 400)
    link = data_of(api.get(f"/links/{creator.link_id}", headers=creator.headers))
    assert link["fediverse_discoverable"] is False


def test_the_settings_page_turns_discoverable_on_and_off(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator
) -> None:
    api, creator = fed_api, fed_creator
    followable(api, creator)
    settings_page = f"/dashboard/links/{creator.link_id}/settings"
    with signed_in(federating, creator.user_id) as browser:
        page = browser.get(settings_page)
        assert page.status_code == 200, page.text
        assert 'id="fediverse_discoverable"' in page.text
        assert "suggest this link" in page.text
        form = {
            "csrf_token": csrf_of(page.text),
            "prompt": "Ask me anything",
            "all_settings": "1",
            "pause": "open",
            "muted": "filter",
            "crosspost": "off",
            "senders": "anyone",
            "fediverse": "on",
            "fediverse_discoverable": "on",
        }
        saved = browser.post(settings_page, data=form, headers={"Accept": "text/html"})
        assert saved.status_code == 303, saved.text
        assert _actor(api, creator)["discoverable"] is True
        shown = browser.get(settings_page).text
        assert (
            'name="fediverse_discoverable" aria-describedby="fediverse_discoverable-hint"'
            " checked" in shown
        )
        del form["fediverse_discoverable"]  # unticked: the browser sends nothing
        form["csrf_token"] = csrf_of(shown)
        saved = browser.post(settings_page, data=form, headers={"Accept": "text/html"})
        assert saved.status_code == 303, saved.text
    assert _actor(api, creator)["discoverable"] is False


def _updates(peer: Peer, actor_url: str) -> list[dict[str, Any]]:
    return peer.of_type("Update", actor_url)


def _posts_to(peer: Peer, actor_url: str) -> list[str]:
    """The paths of the inbox POSTs signed by the actor's key that reached the peer."""
    return [
        knock["path"]
        for knock in peer.received()["knocks"]
        if (knock["key_id"] or "").startswith(f"{actor_url}#")
    ]


def test_each_change_a_follower_sees_sends_one_update_to_their_shared_inbox(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, bob: Peer
) -> None:
    api, creator = fed_api, fed_creator
    followable(api, creator)
    actor_url = f"{federating.url}/ap/links/{creator.link_id}"
    bob.control("follow", actor_url)
    wait_for(lambda: bob.of_type("Accept", actor_url))
    assert _updates(bob, actor_url) == []  # being followed changes nothing they see

    def changed(change: Any, seen: Any) -> dict[str, Any]:
        before = len(_updates(bob, actor_url))
        change()
        wait_for(lambda: len(_updates(bob, actor_url)) > before)
        update = _updates(bob, actor_url)[before]
        assert update["object_id"] == actor_url
        assert seen(update), update
        return update

    def patch(body: dict[str, Any]) -> None:
        done = api.patch(f"/links/{creator.link_id}", json=body, headers=creator.headers)
        assert done.status_code == 200, done.text

    changed(lambda: _named(api, creator, "Hanako"), lambda u: u["name"] == "Hanako")
    generated = changed(
        lambda: patch({"prompt": "Ask me about tea"}),
        lambda u: "Ask me about tea" in (u["summary"] or ""),
    )["icon_url"]
    assert generated.endswith(".png")
    upload = api.put(
        "/account/avatar",
        content=_picture(),
        headers={**creator.headers, "Content-Type": "image/png"},
    )
    assert upload.status_code == 200, upload.text
    uploaded = federating.url + data_of(upload)["avatar_url"]
    wait_for(lambda: len(_updates(bob, actor_url)) > 2)
    assert _updates(bob, actor_url)[2]["icon_url"] == uploaded
    changed(
        lambda: api.delete("/account/avatar", headers=creator.headers),
        lambda u: u["icon_url"] == generated,
    )
    changed(lambda: patch({"fediverse_discoverable": True}), lambda u: u["discoverable"] is True)

    # What no follower sees sends nothing: the dates, the card's look, the same prompt.
    patch({"hide_dates": True, "card_theme": "mint", "prompt": "Ask me about tea"})
    time.sleep(5)  # over two sweeps (every 2 s): an Update would have been sent by now
    assert len(_updates(bob, actor_url)) == 5

    # Each was sent once, to the shared inbox, and verified by Fedify.
    posts = _posts_to(bob, actor_url)
    assert posts.count("/inbox") == 5, posts  # the five Updates
    assert bob.received()["refused"] == 0


def test_the_shared_inbox_takes_a_follow_for_any_link_and_refuses_junk(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, bob: Peer
) -> None:
    api, creator = fed_api, fed_creator
    followable(api, creator)
    actor_url = f"{federating.url}/ap/links/{creator.link_id}"
    followers = f"{actor_url}/followers"

    answer = bob.http.post("/control/follow", json={"actor": actor_url, "shared": True})
    assert answer.status_code == 200, answer.text
    wait_for(lambda: bob.of_type("Accept", actor_url))
    assert api.get(followers, headers=AP).json()["totalItems"] == 1
    answer = bob.http.post("/control/unfollow", json={"actor": actor_url, "shared": True})
    assert answer.status_code == 200, answer.text
    wait_for(lambda: api.get(followers, headers=AP).json()["totalItems"] == 0)
    assert bob.received()["refused"] == 0

    junk: list[tuple[bytes, dict[str, str]]] = [
        (b"not json", {}),
        (b"[]", {}),
        (b'{"type": "Follow"}', {}),
        (b'{"type": "Follow", "actor": "https://x.example/a", "object": 7}', {}),
        (
            b'{"type": "Follow", "actor": "https://x.example/a", "object": "'
            + f"{federating.url}/ap/links/nosuchlink".encode()
            + b'"}',
            {},
        ),
        (
            b'{"type": "Follow", "actor": "https://x.example/a", "object": "'
            + actor_url.encode()
            + b'"}',
            {"Signature": 'keyId="https://x.example/a#k",signature="AAAA"'},
        ),
        (b'{"type": "Undo", "actor": "https://x.example/a", "object": {"object": []}}', {}),
        (b"{" * 5000 + b"}" * 5000, {}),
    ]
    statuses = []
    for body, headers in junk:
        sent = api.post(
            "/ap/inbox",
            content=body,
            headers={"Content-Type": "application/activity+json", **headers},
        )
        statuses.append(sent.status_code)
    assert all(status < 500 for status in statuses), statuses
    # Not JSON, no actor: 400; for no link here: nothing done (202) or not found (404);
    # for a link, unsigned or badly signed: 401.
    assert statuses[:3] == [400, 400, 400], statuses
    assert statuses[3] == 202
    assert statuses[4] == 404
    assert statuses[5] == 401
    assert api.get(followers, headers=AP).json()["totalItems"] == 0
