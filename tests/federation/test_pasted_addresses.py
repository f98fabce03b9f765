"""Any address of a followable link that a person pastes into a fediverse server's search
finds it (issue 42, item 1): the send page and the actor's address answer an ActivityPub
request with the actor, an answer page with its Note, by the ``Accept`` header's ranking
(q-values, the ld+json profile, the most specific range); a browser still gets the page,
which names the document in ``<link rel="alternate">``. Over HTTP on both databases, as
Mastodon asks (``FetchResourceService``: its exact ``Accept``, then the document again from
its ``id`` when that is not where it was read, or the alternate link of a page).
Fedify's ``lookupObject`` on the same addresses is in ``test_fedify_peer``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.actions import answer_path, post_message, post_reply
from tests.conftest import make_creator_in
from tests.federation.conftest import open_to_follows, wait_for
from tests.federation.standin import Remote, follow_of, post, serving, signed
from tests.server import Server
from tests.support.http import loopback_client

AS = "https://www.w3.org/ns/activitystreams"
MASTODON = f'application/activity+json, application/ld+json; profile="{AS}", text/html;q=0.1'
LD_JSON = f'application/ld+json; profile="{AS}"'
FIREFOX = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
_ALTERNATE = re.compile(r"<link\b[^>]*\brel=\"alternate\"[^>]*>")


@dataclass
class Link:
    site: str
    actor: str  # the actor's id
    send_page: str  # paths on the site
    answer_page: str
    note: str  # the answer's Note's id


@dataclass
class Pasted:
    server: Server
    api: httpx.Client
    followable: Link
    private: Link  # a link whose fediverse switch is off (its actor and note: what they'd be)


@pytest.fixture(scope="module")
def remote() -> Iterator[Remote]:
    with serving() as state:
        yield state


@pytest.fixture(scope="module")
def pasted(federating: Server, remote: Remote) -> Iterator[Pasted]:
    """A followable link with a follower (the stand-in) and an answer sent as a Note, and a
    link that is not followable with an answer of its own."""
    with loopback_client(base_url=federating.url, timeout=30) as api:
        creator = make_creator_in(federating.database_url)
        actor_url, path = open_to_follows(federating, api, creator)
        follow = follow_of(remote, actor_url)
        headers = signed(federating, path, follow, key=remote.key, key_id=remote.key_id)
        assert post(api, path, follow, headers).status_code == 202
        message_id = post_message(api, creator.link_id, "Tea or coffee?")
        reply_id = post_reply(api, creator, message_id, "Genmaicha, always")

        def created() -> list[str]:
            sent = [json.loads(body) for _, body in remote.received if b'"Create"' in body]
            return [c["object"]["id"] for c in sent if c["actor"] == actor_url]

        wait_for(created)  # the follower has it: the answer is a Note
        assert created() == [f"{actor_url}/answers/{reply_id}"]
        followable = Link(
            federating.url,
            actor_url,
            f"/{creator.link_id}",
            answer_path(api, creator.link_id, message_id),
            created()[0],
        )
        other = make_creator_in(federating.database_url)
        other_message = post_message(api, other.link_id, "Cats or dogs?")
        other_reply = post_reply(api, other, other_message, "Both")
        private = Link(
            federating.url,
            f"{federating.url}/ap/links/{other.link_id}",
            f"/{other.link_id}",
            answer_path(api, other.link_id, other_message),
            f"{federating.url}/ap/links/{other.link_id}/answers/{other_reply}",
        )
        yield Pasted(federating, api, followable, private)


def _addresses(link: Link) -> list[tuple[str, str, str]]:
    """Each address a person may paste: (url, the id it stands for, its type)."""
    return [
        (link.site + link.send_page, link.actor, "Service"),
        (link.actor, link.actor, "Service"),
        (link.site + link.answer_page, link.note, "Note"),
    ]


def _varies_by_accept(answer: httpx.Response) -> bool:
    return "accept" in {v.strip().lower() for v in answer.headers.get("vary", "").split(",")}


def _document(answer: httpx.Response, id_: str, type_: str, media_type: str) -> dict[str, Any]:
    assert answer.status_code == 200, (answer.status_code, answer.text[:300])
    assert answer.headers["content-type"] == media_type
    assert _varies_by_accept(answer)
    body = answer.json()
    assert (body["id"], body["type"]) == (id_, type_)
    return dict(body)


def _alternates(html: str) -> list[str]:
    return _ALTERNATE.findall(html)


def _mastodon_fetch(api: httpx.Client, url: str) -> dict[str, Any] | None:
    """What Mastodon's FetchResourceService makes of ``url``: the document, believed only
    when read from its own id (else read once more from there), or a page's alternate."""
    answer = api.get(url, headers={"Accept": MASTODON}, follow_redirects=True)
    if answer.status_code != 200:
        return None
    media_type = answer.headers["content-type"].partition(";")[0]
    if media_type in ("application/activity+json", "application/ld+json"):
        body = answer.json()
        if body["id"] == url:
            return dict(body)
        again = api.get(body["id"], headers={"Accept": MASTODON})  # terminal: no third try
        assert again.status_code == 200
        return dict(again.json()) if again.json()["id"] == body["id"] else None
    for tag in _alternates(answer.text):
        href = re.search(r'href="([^"]+)"', tag)
        assert href is not None
        again = api.get(href.group(1), headers={"Accept": MASTODON})
        return dict(again.json()) if again.json()["id"] == href.group(1) else None
    return None


def test_mastodon_finds_the_actor_or_note_behind_each_address(pasted: Pasted) -> None:
    api = pasted.api
    for url, id_, type_ in _addresses(pasted.followable):
        # Its exact Accept header: the document, in place, with its own id.
        _document(
            api.get(url, headers={"Accept": MASTODON}), id_, type_, "application/activity+json"
        )
        found = _mastodon_fetch(api, url)
        assert found is not None
        assert (found["id"], found["type"]) == (id_, type_)
    note = api.get(pasted.followable.note, headers={"Accept": MASTODON}).json()
    assert note["url"] == pasted.followable.site + pasted.followable.answer_page


def test_ld_json_with_the_activitystreams_profile_is_activitypub_and_another_is_not(
    pasted: Pasted,
) -> None:
    api = pasted.api
    for url, id_, type_ in _addresses(pasted.followable):
        _document(api.get(url, headers={"Accept": LD_JSON}), id_, type_, LD_JSON)
        # Without a profile, ld+json is still ActivityStreams' (as Fedify asks).
        plain = api.get(url, headers={"Accept": "application/ld+json"})
        _document(plain, id_, type_, LD_JSON)
    # Another profile is another format: a page answers with itself.
    other = 'application/ld+json; profile="https://example.com/other", text/html;q=0.1'
    page = api.get(pasted.followable.send_page, headers={"Accept": other})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize(
    ("accept", "activitypub"),
    [
        ("text/html, application/activity+json;q=0.9", False),
        ("application/activity+json;q=0.9, text/html", False),
        ("text/html;q=0.5, application/activity+json", True),
        ("application/activity+json;q=0.5, text/html;q=0.6", False),
        ("text/html;q=0.6, application/activity+json;q=0.7", True),
        # The most specific range decides: html refused, ActivityPub through */*.
        ("text/html;q=0, */*", True),
        ("application/*;q=0.9, text/*;q=0.8", True),
        ("application/activity+json;q=0, */*;q=0.5", False),
        # Equal weights: the page, where a page was pasted.
        ("application/activity+json, text/html", False),
        ("*/*", False),
        ("", False),
        (FIREFOX, False),
    ],
)
def test_q_values_and_specificity_decide_between_the_page_and_activitypub(
    pasted: Pasted, accept: str, activitypub: bool
) -> None:
    for path in (pasted.followable.send_page, pasted.followable.answer_page):
        answer = pasted.api.get(path, headers={"Accept": accept})
        assert answer.status_code == 200
        assert _varies_by_accept(answer)
        got = answer.headers["content-type"].partition(";")[0]
        assert got == ("application/activity+json" if activitypub else "text/html"), accept


def test_a_browser_gets_the_page_naming_its_activitypub_document(pasted: Pasted) -> None:
    api, link = pasted.api, pasted.followable
    for path, id_ in ((link.send_page, link.actor), (link.answer_page, link.note)):
        page = api.get(path, headers={"Accept": FIREFOX})
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        vary = {v.strip().lower() for v in page.headers["vary"].split(",")}
        assert {"accept", "accept-language", "cookie"} <= vary
        [tag] = _alternates(page.text)
        assert 'type="application/activity+json"' in tag
        assert f'href="{id_}"' in tag
    # The actor's address sends a person to the send page (the actor's HTML).
    moved = api.get(link.actor, headers={"Accept": FIREFOX})
    assert moved.status_code == 302
    assert moved.headers["location"] == link.site + link.send_page
    assert _varies_by_accept(moved)
    # No Accept at all (curl, a script): the actor's address is the document, as before.
    bare = api.get(link.actor, headers={"Accept": ""})
    assert bare.json()["id"] == link.actor


def test_a_link_not_followable_answers_as_before(pasted: Pasted) -> None:
    api, link = pasted.api, pasted.private
    for accept in (MASTODON, LD_JSON, "application/activity+json", FIREFOX):
        for path in (link.send_page, link.answer_page):
            page = api.get(path, headers={"Accept": accept})
            assert page.status_code == 200
            assert page.headers["content-type"].startswith("text/html")
            assert not _alternates(page.text)
            assert link.actor not in page.text
        for address in (link.actor, link.note):
            assert api.get(address, headers={"Accept": accept}).status_code == 404
    assert _mastodon_fetch(api, link.site + link.send_page) is None


# Header values httpx will send: latin-1, no line breaks or NUL.
_junk = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=200,
)
_TYPES = ["text/html", "application/activity+json", "application/ld+json", "*/*", "text/*"]
_ODD_TYPES = ["application/*", "*/html", "/", "a/b/c", ""]
_PARAMS = ["", ";q=0", ";q=1", ";q=0.5", ";q=1.5", ";q=-1", ";q=abc", ";q=", ";q=0.0001"]
_ODD_PARAMS = [f';profile="{AS}"', ';profile="', ";profile=x;q=0.3", ";a=b,c", ';x="a,b"']
_ranges = st.lists(
    st.tuples(
        st.sampled_from([*_TYPES, *_ODD_TYPES]),
        st.sampled_from([*_PARAMS, *_ODD_PARAMS, ";;", "; q = 0.2", ";q=²"]),
    ).map("".join),
    max_size=6,
).map(", ".join)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(accept=st.one_of(_junk, _ranges))
def test_junk_accept_headers_are_never_a_server_error(pasted: Pasted, accept: str) -> None:
    link = pasted.followable
    for url, id_, _type in _addresses(link):
        # Latin-1 bytes as given, without whitespace at the ends (HTTP strips it).
        sent = accept.strip(" \t").encode("latin-1")
        answer = pasted.api.get(url, headers={"Accept": sent})
        assert answer.status_code in (200, 302), (answer.status_code, accept)
        assert _varies_by_accept(answer)
        media_type = answer.headers.get("content-type", "").partition(";")[0]
        if answer.status_code == 200 and media_type != "text/html":
            assert media_type in ("application/activity+json", "application/ld+json")
            assert json.loads(answer.content)["id"] == id_


def test_a_followers_only_answer_page_is_only_a_page(pasted: Pasted) -> None:
    """A followers-only link's Notes are not served (item 3): its answer page does not
    stand for one, though its send page still stands for the actor."""
    api, server = pasted.api, pasted.server
    creator = make_creator_in(server.database_url)
    actor_url, _ = open_to_follows(server, api, creator)
    closed = api.patch(
        f"/links/{creator.link_id}",
        json={"federation_visibility": "followers"},
        headers=creator.headers,
    )
    assert closed.status_code == 200, closed.text
    message_id = post_message(api, creator.link_id, "Secret?")
    post_reply(api, creator, message_id, "Only for you")
    page = api.get(answer_path(api, creator.link_id, message_id), headers={"Accept": MASTODON})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert not _alternates(page.text)
    send = api.get(f"/{creator.link_id}", headers={"Accept": MASTODON})
    assert send.json()["id"] == actor_url


def test_a_link_turned_off_is_only_a_page_again(pasted: Pasted) -> None:
    """Followable, then its switch turned off (its actor said goodbye): its pages answer a
    fediverse server with themselves, naming nothing, and never a 5xx."""
    api, server = pasted.api, pasted.server
    creator = make_creator_in(server.database_url)
    actor_url, _ = open_to_follows(server, api, creator)
    message_id = post_message(api, creator.link_id, "Still there?")
    post_reply(api, creator, message_id, "Yes")
    answer = answer_path(api, creator.link_id, message_id)
    assert api.get(answer, headers={"Accept": MASTODON}).json()["type"] == "Note"
    off = api.patch(f"/links/{creator.link_id}", json={"fediverse": False}, headers=creator.headers)
    assert off.status_code == 200, off.text
    for path in (f"/{creator.link_id}", answer):
        page = api.get(path, headers={"Accept": MASTODON})
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert not _alternates(page.text)
    assert api.get(actor_url, headers={"Accept": MASTODON}).status_code in (404, 410)
