"""Answers as Mastodon shows them (issue 42, item 3), read by a real Fedify server on
loopback (``tests/support/fedify/peer.mjs``), on both databases: the link's content
warning as ``summary`` with ``sensitive``, ``contentMap`` in the link's language, the
answer page as ``url``, the link's federation visibility in each Note's and activity's
addressing (and followers-only Notes not served to anyone who fetches them), and the
outbox listing every answer, paged, whether or not anyone followed when it was given.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.actions import answer_path, assert_error, data_of, post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.federation import test_fedify_peer
from tests.federation.conftest import AP, followable, wait_for
from tests.federation.test_fedify_peer import Peer
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.servers import own_server
from tests.support.signin import signed_in

peer = test_fedify_peer.peer  # the Fedify server on loopback (a fixture)
PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
PAGE_ITEMS = 20  # what one outbox page holds (federation.notes.service.PAGE_ITEMS)

# As the suite's federating server, with room for one client to ask a link more than a
# page of questions in a minute.
federating = own_server(
    "federating",
    {
        "ANONBOX_FEDERATION_ALLOW_PRIVATE": "true",
        "ANONBOX_FEDERATION_RETRY_SECONDS": "0.2",
        "ANONBOX_LIMIT_SENDER_LINK": "200/60",
        "ANONBOX_LIMIT_SENDER": "400/600",
    },
    public_url=True,
)


@pytest.fixture
def api(federating: Server) -> Any:
    with loopback_client(base_url=federating.url, timeout=30) as client:
        yield client


@pytest.fixture
def creator(federating: Server, api: httpx.Client) -> Creator:
    return make_creator_in(federating.database_url)


def patch(api: httpx.Client, creator: Creator, body: dict[str, Any]) -> dict[str, Any]:
    return dict(data_of(api.patch(f"/links/{creator.link_id}", json=body, headers=creator.headers)))


def control(peer: Peer, what: str, url: str) -> dict[str, Any]:
    answer = peer.http.post(f"/control/{what}", json={"url": url})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def answered(api: httpx.Client, creator: Creator, question: str, answer: str) -> str:
    """Ask and answer; the answer's page (``/{link}/a/{id}``)."""
    message_id = post_message(api, creator.link_id, question)
    post_reply(api, creator, message_id, answer)
    return answer_path(api, creator.link_id, message_id)


def created(peer: Peer, actor: str, answer: str) -> dict[str, Any]:
    """The Create of the Note holding ``answer`` as the peer's inbox received it."""
    found: list[dict[str, Any]] = []

    def arrived() -> bool:
        found[:] = [c for c in peer.of_type("Create", actor) if answer in (c["content"] or "")]
        return bool(found)

    wait_for(arrived)
    return found[0]


def test_a_notes_warning_language_url_and_visibility_as_fedify_reads_them(
    federating: Server, api: httpx.Client, creator: Creator, peer: Peer
) -> None:
    actor = f"{federating.url}/ap/links/{creator.link_id}"
    followers = f"{actor}/followers"
    patch(api, creator, {"language": "ja", "crosspost_cw": "ネタバレ注意"})
    followable(api, creator)
    peer.control("follow", actor)
    wait_for(lambda: peer.of_type("Accept", actor))

    # Public, with the link's warning, in Japanese.
    page = answered(api, creator, "好きなお茶は？", "玄米茶です")  # noqa: RUF001
    note = created(peer, actor, "玄米茶です")
    assert note["summary"] == "ネタバレ注意"
    assert note["sensitive"] is True
    assert note["languages"] == ["ja"]
    assert "匿名の質問：" in note["content"]  # noqa: RUF001 - the label in the link's language
    assert "Anonymous question" not in note["content"]
    assert note["url"] == f"{federating.url}{page}"
    assert (note["to"], note["cc"]) == ([PUBLIC], [followers])
    assert (note["activity_to"], note["activity_cc"]) == ([PUBLIC], [followers])
    fetched = control(peer, "note", note["object_id"])  # anyone may fetch a public Note
    assert fetched["found"] is True
    assert (fetched["summary"], fetched["sensitive"]) == ("ネタバレ注意", True)

    # No warning: no summary, not sensitive. Unlisted: Public only in cc.
    patch(api, creator, {"crosspost_cw": "", "federation_visibility": "unlisted"})
    answered(api, creator, "Coffee?", "Never after noon")
    note = created(peer, actor, "Never after noon")
    assert note["summary"] is None
    assert note["sensitive"] is False
    assert (note["to"], note["cc"]) == ([followers], [PUBLIC])
    assert (note["activity_to"], note["activity_cc"]) == ([followers], [PUBLIC])
    assert control(peer, "note", note["object_id"])["found"] is True

    # Followers only: delivered to them, addressed to them only, fetched by nobody else.
    patch(api, creator, {"federation_visibility": "followers"})
    message_id = post_message(api, creator.link_id, "Secret?")
    reply_id = post_reply(api, creator, message_id, "Only for you")
    note = created(peer, actor, "Only for you")
    assert (note["to"], note["cc"]) == ([followers], [])
    assert (note["activity_to"], note["activity_cc"]) == ([followers], [])
    assert control(peer, "note", note["object_id"]) == {"found": False}
    assert api.get(note["object_id"], headers=AP).status_code == 404
    listed = control(peer, "traverse", f"{actor}/outbox")
    assert (listed["total"], listed["items"]) == (0, [])

    # Its deletion goes to the followers only too.
    gone = api.delete(
        f"/message/{creator.link_id}/{message_id}/{reply_id}", headers=creator.headers
    )
    assert gone.status_code == 200, gone.text
    wait_for(lambda: peer.of_type("Delete", actor))
    [deleted] = peer.of_type("Delete", actor)
    assert (deleted["activity_to"], deleted["activity_cc"]) == ([followers], [])
    assert peer.received()["refused"] == 0


def test_the_outbox_lists_every_answer_paged_newest_first(
    federating: Server, api: httpx.Client, creator: Creator, peer: Peer
) -> None:
    actor = f"{federating.url}/ap/links/{creator.link_id}"
    outbox = f"{actor}/outbox"
    # Answered before the link was followable, and while nobody followed it.
    answered(api, creator, "Before anything?", "Answer 0")
    followable(api, creator)
    for n in range(1, PAGE_ITEMS + 2):
        answered(api, creator, f"Question {n}", f"Answer {n}")

    listed = control(peer, "traverse", outbox)
    assert listed["type"].endswith("#OrderedCollection")
    assert listed["total"] == PAGE_ITEMS + 2
    notes = [item["note"] for item in listed["items"]]
    said = [re.findall(r"Answer (\d+)<", n["contents"][0]) for n in notes]
    assert said == [[str(n)] for n in range(PAGE_ITEMS + 1, -1, -1)]  # newest first, all
    assert all(item["type"].endswith("#Create") for item in listed["items"])
    assert all((n["to"], n["languages"]) == ([PUBLIC], ["en"]) for n in notes)

    # The pages as a client reads them: bounded, each naming the next.
    first = api.get(outbox, headers=AP).json()
    assert "orderedItems" not in first
    one = api.get(first["first"], headers=AP).json()
    assert one["type"] == "OrderedCollectionPage"
    assert len(one["orderedItems"]) == PAGE_ITEMS
    two = api.get(one["next"], headers=AP).json()
    assert len(two["orderedItems"]) == 2
    assert "next" not in two
    assert api.get(outbox, params={"before": "not-an-id"}, headers=AP).status_code == 400

    # Unlisted answers are listed; followers-only ones are not, nor served.
    patch(api, creator, {"federation_visibility": "unlisted"})
    assert control(peer, "traverse", outbox)["total"] == PAGE_ITEMS + 2
    patch(api, creator, {"federation_visibility": "followers"})
    hidden = control(peer, "traverse", outbox)
    assert (hidden["total"], hidden["items"]) == (0, [])
    assert api.get(notes[0]["id"], headers=AP).status_code == 404


def test_the_visibility_is_a_setting_of_the_api_and_the_settings_page(
    federating: Server, api: httpx.Client, creator: Creator
) -> None:
    assert patch(api, creator, {"fediverse": True})["federation_visibility"] == "public"
    for value in ("unlisted", "followers", "public"):
        changed = patch(api, creator, {"federation_visibility": value})
        assert changed["federation_visibility"] == value
    for wrong in ("private", "Public", "", None, 1):
        refused = api.patch(
            f"/links/{creator.link_id}",
            json={"federation_visibility": wrong},
            headers=creator.headers,
        )
        assert_error(refused, 400, "validation_failed")
    schema = api.get("/openapi.json").json()["components"]["schemas"]["LinkPatch"]
    field = schema["properties"]["federation_visibility"]
    enum = {value for option in field["oneOf"] for value in option.get("enum", [])}
    assert enum == {"public", "unlisted", "followers"}

    settings_page = f"/dashboard/links/{creator.link_id}/settings"
    with signed_in(federating, creator.user_id) as browser:
        page = browser.get(settings_page)
        assert page.status_code == 200, page.text
        assert '<select id="federation_visibility" name="federation_visibility"' in page.text
        form = {
            "csrf_token": csrf_of(page.text),
            "prompt": "Ask me anything",
            "all_settings": "1",
            "pause": "open",
            "muted": "filter",
            "crosspost": "off",
            "senders": "anyone",
            "fediverse": "on",
            "federation_visibility": "followers",
        }
        saved = browser.post(settings_page, data=form, headers={"Accept": "text/html"})
        assert saved.status_code == 303, saved.text
        assert '<option value="followers" selected>' in browser.get(settings_page).text
        refused = browser.post(
            settings_page,
            data={**form, "federation_visibility": "everyone"},
            headers={"Accept": "text/html"},
        )
        assert refused.status_code == 400, refused.text
    kept = patch(api, creator, {"prompt": "Ask me anything"})
    assert kept["federation_visibility"] == "followers"
