"""The public pages rendered once per change, conditional and cacheable (issue 43, items 2
and 3), through real servers on SQLite and PostgreSQL.

A send page and an answer page are the same for every anonymous visitor in one language:
a strong ETag, ``public, max-age=60``, no cookie; a reload with ``If-None-Match`` is a 304
that renders nothing (``anonbox_pages_renders`` does not move), a repeat renders nothing
either (kept bytes). Every change they show moves the link's content version, so a second
instance over the same database shows it on the next request. Every page with a session
or a token stays private.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

import httpx
import pytest
from PIL import Image

from anonbox.web.infra.page_cache import PageCache
from tests.actions import post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.db import execute
from tests.support.http import loopback_client
from tests.support.metrics import scrape, value
from tests.support.servers import own_server
from tests.support.signin import signed_in

HTML = {"Accept": "text/html,application/xhtml+xml", "Accept-Encoding": "gzip"}
START_TIMEOUT = 90.0


def renders(client: httpx.Client) -> float:
    return value(scrape(client), "anonbox_pages_renders")


def answer_id_of(api: httpx.Client, link_id: str, message_id: str) -> str:
    listed = api.get(f"/message/{link_id}", params={"limit": 100})
    [item] = [i for i in listed.json()["data"]["items"] if i["id"] == message_id]
    return str(item["answer_id"])


def assert_public(response: httpx.Response) -> str:
    """A page a shared cache may keep: strong ETag, public, varies right, no cookie."""
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "public, max-age=60"
    etag = response.headers["etag"]
    assert re.fullmatch(r'"[0-9a-f]+(-gz)?"', etag), etag  # strong: no W/
    vary = {v.strip().lower() for v in response.headers["vary"].split(",")}
    assert {"accept", "accept-language", "accept-encoding", "cookie"} <= vary
    assert "set-cookie" not in response.headers
    assert "csrf_token" not in response.text
    return etag


def assert_private(response: httpx.Response, where: str) -> None:
    control = response.headers.get("cache-control", "")
    assert "public" not in control, where
    assert "no-store" in control or "private" in control, (where, control)


# --- one server -----------------------------------------------------------------------------


@pytest.fixture
def answered(api: httpx.Client, creator: Creator) -> tuple[Creator, str]:
    message_id = post_message(api, creator.link_id, "Which lighthouse?")
    post_reply(api, creator, message_id, "The one at Inubōsaki")
    return creator, answer_id_of(api, creator.link_id, message_id)


def test_public_pages_are_conditional_kept_and_304_without_rendering(
    api: httpx.Client, answered: tuple[Creator, str]
) -> None:
    creator, answer_id = answered
    for path in (f"/{creator.link_id}", f"/{creator.link_id}/a/{answer_id}"):
        first = api.get(path, headers=HTML)
        etag = assert_public(first)
        assert "Inubōsaki" in first.text
        before = renders(api)
        again = api.get(path, headers=HTML)  # kept: the same bytes, nothing rendered
        assert again.content == first.content
        assert again.headers["etag"] == etag
        reload = api.get(path, headers={**HTML, "If-None-Match": etag})
        assert reload.status_code == 304
        assert reload.content == b""
        assert reload.headers["etag"] == etag
        assert reload.headers["cache-control"] == "public, max-age=60"
        # A list of tags, one of them ours, and the plain bytes' tag asked for with gzip.
        listed = api.get(path, headers={**HTML, "If-None-Match": f'"other", {etag}'})
        assert listed.status_code == 304
        assert renders(api) == before
        plain = api.get(path, headers={"Accept": "text/html", "Accept-Encoding": "identity"})
        assert plain.headers["etag"] != etag
        assert plain.text == first.text


def test_a_crawler_gets_the_page_a_browser_gets(
    api: httpx.Client, answered: tuple[Creator, str]
) -> None:
    """Link previews are the pages' Open Graph tags: a crawler's fetch is a kept page."""
    creator, answer_id = answered
    for path in (f"/{creator.link_id}", f"/{creator.link_id}/a/{answer_id}"):
        browser = api.get(path, headers=HTML)
        for agent in ("Twitterbot/1.0", "facebookexternalhit/1.1;line-poker/1.0"):
            crawler = api.get(
                path, headers={"User-Agent": agent, "Accept": "*/*", "Accept-Encoding": "gzip"}
            )
            assert assert_public(crawler) == browser.headers["etag"]
            assert 'property="og:title"' in crawler.text


def test_each_language_is_its_own_page_and_tag(
    api: httpx.Client, answered: tuple[Creator, str]
) -> None:
    creator, _ = answered
    english = api.get(f"/{creator.link_id}", headers={**HTML, "Accept-Language": "en"})
    japanese = api.get(f"/{creator.link_id}", headers={**HTML, "Accept-Language": "ja"})
    assert assert_public(english) != assert_public(japanese)
    assert 'lang="ja"' in japanese.text
    stale = api.get(
        f"/{creator.link_id}",
        headers={**HTML, "Accept-Language": "ja", "If-None-Match": english.headers["etag"]},
    )
    assert stale.status_code == 200


def test_the_send_form_works_without_javascript_or_a_cookie(
    server: Server, creator: Creator
) -> None:
    with loopback_client(base_url=server.url, timeout=30) as browser:
        opened = browser.get(f"/{creator.link_id}", headers=HTML)
        assert_public(opened)
        assert f'action="/{creator.link_id}"' in opened.text
        browser.cookies.clear()
        sent = browser.post(
            f"/{creator.link_id}",
            data={"message_content": "no script, no cookie"},
            headers={**HTML, "Origin": server.url, "Sec-Fetch-Site": "same-origin"},
        )
        assert sent.status_code == 303, sent.text
        assert sent.headers["cache-control"] == "private, no-store"
        assert "anonbox_receipt" in sent.headers.get("set-cookie", "")
        # The page it leads to says "sent" and names the receipt: this visitor's alone.
        after = browser.get(sent.headers["location"], headers=HTML)
        assert 'id="sent"' in after.text
        assert_private(after, "the page after a post")
        assert "etag" not in after.headers
        refused = browser.post(
            f"/{creator.link_id}",
            data={"message_content": "from elsewhere"},
            headers={**HTML, "Origin": "https://elsewhere.example"},
        )
        assert refused.status_code == 403


def test_every_page_with_a_session_or_a_token_is_private(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    message_id = post_message(api, creator.link_id, "a question")
    reply_id = post_reply(api, creator, message_id, "an answer")
    # A receipt, as a form post leaves it.
    with loopback_client(base_url=server.url, timeout=30) as stranger:
        posted = stranger.post(
            f"/{creator.link_id}", data={"message_content": "with a receipt"}, headers=HTML
        )
        token = unquote(posted.cookies["anonbox_receipt"]).partition(".")[2]
    link, message = creator.link_id, message_id
    dashboard = [
        "/dashboard",
        "/dashboard/account",
        "/dashboard/account/delete",
        "/dashboard/links",
        f"/dashboard/links/{link}",
        f"/dashboard/links/{link}/settings",
        f"/dashboard/links/{link}/filtered",
        f"/dashboard/links/{link}/search?q=question",
        f"/dashboard/links/{link}/messages/{message}",
        f"/dashboard/links/{link}/messages/{message}/delete",
        f"/dashboard/links/{link}/messages/{message}/replies/{reply_id}/delete",
        f"/dashboard/links/{link}/messages/{message}/block",
        f"/dashboard/links/{link}/delete",
        f"/dashboard/links/{link}/qr.svg",
        "/dashboard/notifications",
        "/dashboard/push",
        "/dashboard/stream",
        "/signin",
        # A signed-in visitor's send page is theirs (on a link for signed-in senders, its
        # form carries their session's token); an answer page is rendered fresh for them.
        f"/{link}",
        f"/{link}/a/{answer_id_of(api, link, message)}",
    ]
    with signed_in(server, creator.user_id) as browser:
        for path in dashboard:
            shown = browser.get(path, headers=HTML)
            # (/signin sends a signed-in browser on to its dashboard.)
            assert shown.status_code in {200, 303}, (path, shown.status_code)
            assert_private(shown, path)
    with loopback_client(base_url=server.url, timeout=30) as anyone:
        for path in (f"/r/{token}", "/signin", f"/{link}?sent=1"):
            shown = anyone.get(path, headers=HTML)
            assert shown.status_code == 200, (path, shown.status_code)
            assert_private(shown, path)


def test_a_signed_in_senders_page_is_private_and_its_form_bound_to_the_session(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    changed = api.patch(
        f"/links/{creator.link_id}", json={"senders": "signed_in"}, headers=creator.headers
    )
    assert changed.status_code == 200, changed.text
    signed_out = api.get(f"/{creator.link_id}", headers=HTML)
    assert_public(signed_out)  # the same "sign in to send" for everyone signed out
    sender = make_creator_in(server.database_url)
    with signed_in(server, sender.user_id) as browser:
        page = browser.get(f"/{creator.link_id}", headers=HTML)
        assert_private(page, "a signed-in sender's page")
        assert "etag" not in page.headers
        token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert token, page.text
        unbound = browser.post(
            f"/{creator.link_id}", data={"message_content": "no token"}, headers=HTML
        )
        assert unbound.status_code == 403
        sent = browser.post(
            f"/{creator.link_id}",
            data={"message_content": "signed in", "csrf_token": token.group(1)},
            headers=HTML,
        )
        assert sent.status_code == 303, sent.text


# A server that keeps nothing: the bench's "cache off" run.
uncached_server = own_server("uncached_server", {"ANONBOX_PAGE_CACHE": "false"})


def test_with_the_cache_off_every_page_is_rendered_yet_still_conditional(
    uncached_server: Server,
) -> None:
    creator = make_creator_in(uncached_server.database_url)
    with loopback_client(base_url=uncached_server.url, timeout=30) as api:
        first = api.get(f"/{creator.link_id}", headers=HTML)
        etag = assert_public(first)
        before = renders(api)
        again = api.get(f"/{creator.link_id}", headers=HTML)
        assert again.text == first.text
        assert renders(api) == before + 1
        reload = api.get(f"/{creator.link_id}", headers={**HTML, "If-None-Match": etag})
        assert reload.status_code == 304
        assert renders(api) == before + 1


def test_the_cache_is_bounded() -> None:
    cache = PageCache(max_bytes=10_000)
    for number in range(100):
        cache.keep(f"page-{number}", bytes(2_000))
    stats = cache.stats()
    assert stats["kept_bytes"] <= 10_000
    assert stats["kept"] == 4  # 2,000 bytes and their gzipped copy each
    assert cache.get("page-0") is None
    assert cache.get("page-99") is not None
    assert stats["evicted"] == 96


# --- two instances over one database ----------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    first: Server
    second: Server


@pytest.fixture(scope="module", params=["postgresql", "sqlite"])
def pair(
    request: pytest.FixtureRequest,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Pair]:
    url = database_url_factory(str(request.param))
    logs = tmp_path_factory.mktemp(f"page-cache-{request.param}")
    servers = [Server(url, logs / f"{name}.log") for name in ("a", "b")]
    try:
        for server in servers:  # one after the other: the first migrates the database
            server.start(START_TIMEOUT)
        yield Pair(*servers)
    finally:
        for server in servers:
            server.stop()


def _send(api: httpx.Client, creator: Creator, question: str, answer: str) -> tuple[str, str]:
    message_id = post_message(api, creator.link_id, question)
    return message_id, post_reply(api, creator, message_id, answer)


def _patch(path: str, **body: object) -> Callable[[httpx.Client, Creator], None]:
    def change(api: httpx.Client, creator: Creator) -> None:
        done = api.patch(path.format(link=creator.link_id), json=body, headers=creator.headers)
        assert done.status_code == 200, done.text

    return change


def _upload_avatar(api: httpx.Client, creator: Creator) -> None:
    picture = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 30, 30)).save(picture, "PNG")
    headers = {**creator.headers, "Content-Type": "image/png"}
    done = api.put("/account/avatar", content=picture.getvalue(), headers=headers)
    assert done.status_code == 200, done.text


# Each change, and what the page on the other instance must show (or stop showing) after.
CHANGES: dict[str, tuple[Callable[[httpx.Client, Creator], None], str, bool]] = {
    "reply": (
        lambda api, c: _send(api, c, "Second question?", "A fresh reply"),
        "A fresh reply",
        True,
    ),
    "pause": (_patch("/links/{link}", paused=True), 'id="paused"', True),
    "profile": (_patch("/account/profile", display_name="Renamed Hanako"), "Renamed Hanako", True),
    # The creator's picture: the uploaded one's address replaces the neutral one's.
    "avatar": (_upload_avatar, '.webp" width="48"', True),
    "bio": (_patch("/account/profile", bio="Lighthouse keeper"), "Lighthouse keeper", True),
    "settings": (_patch("/links/{link}", hide_dates=True), "<time datetime", False),
    "prompt": (_patch("/links/{link}", prompt="A brand new prompt"), "A brand new prompt", True),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_shows_at_once_on_another_instance(pair: Pair, change: str) -> None:
    creator = make_creator_in(pair.first.database_url)
    make, shown, present = CHANGES[change]
    with (
        loopback_client(base_url=pair.first.url, timeout=30) as first,
        loopback_client(base_url=pair.second.url, timeout=30) as second,
    ):
        _send(first, creator, "First question?", "The first reply")
        before = second.get(f"/{creator.link_id}", headers=HTML)
        etag = assert_public(before)
        assert (shown in before.text) is not present
        assert (
            second.get(f"/{creator.link_id}", headers={**HTML, "If-None-Match": etag}).status_code
            == 304
        )
        make(first, creator)
        after = second.get(f"/{creator.link_id}", headers={**HTML, "If-None-Match": etag})
        assert after.status_code == 200, change
        assert (shown in after.text) is present, change
        assert after.headers["etag"] != etag


def test_a_deletion_shows_at_once_on_another_instance(pair: Pair) -> None:
    creator = make_creator_in(pair.first.database_url)
    with (
        loopback_client(base_url=pair.first.url, timeout=30) as first,
        loopback_client(base_url=pair.second.url, timeout=30) as second,
    ):
        message_id, reply_id = _send(first, creator, "Kept?", "Deleted soon")
        answer = f"/{creator.link_id}/a/{answer_id_of(first, creator.link_id, message_id)}"
        pages = [f"/{creator.link_id}", answer]
        tags = [assert_public(second.get(path, headers=HTML)) for path in pages]
        deleted = first.delete(
            f"/message/{creator.link_id}/{message_id}/{reply_id}", headers=creator.headers
        )
        assert deleted.status_code == 200, deleted.text
        send_page = second.get(pages[0], headers={**HTML, "If-None-Match": tags[0]})
        assert send_page.status_code == 200
        assert "Deleted soon" not in send_page.text
        assert second.get(answer, headers={**HTML, "If-None-Match": tags[1]}).status_code == 410
        # A whole message deleted (the creator's, or a moderator's: the same row goes).
        other, _ = _send(first, creator, "Another?", "Whole message goes")
        tag = assert_public(second.get(pages[0], headers=HTML))
        removed = first.delete(f"/message/{creator.link_id}/{other}", headers=creator.headers)
        assert removed.status_code in {200, 204}, removed.text
        without = second.get(pages[0], headers={**HTML, "If-None-Match": tag})
        assert without.status_code == 200
        assert "Whole message goes" not in without.text
        gone = first.delete(f"/links/{creator.link_id}", headers=creator.headers)
        assert gone.status_code in {200, 204}, gone.text
        assert second.get(pages[0], headers=HTML).status_code == 410


def test_a_timed_pause_resumed_by_the_chore_shows_on_another_instance(pair: Pair) -> None:
    """The resume chore's own UPDATE moves the version: its end is set to have passed (with
    a version of its own, so that this write is not what moves it), then the chore, on
    whichever instance runs it, resumes the link, and the second instance shows the form.
    (A timed pause's page is also kept a minute at most: either alone makes this pass;
    with neither, it fails.)"""
    creator = make_creator_in(pair.first.database_url)
    with (
        loopback_client(base_url=pair.first.url, timeout=30) as first,
        loopback_client(base_url=pair.second.url, timeout=30) as second,
    ):
        _patch("/links/{link}", pause_for_hours=1)(first, creator)
        assert 'id="paused"' in second.get(f"/{creator.link_id}", headers=HTML).text
        execute(
            pair.first.database_url,
            "UPDATE links SET paused_until = 1, content_version = content_version + 1000"
            " WHERE id = $1",
            creator.link_id,
        )
        ended = second.get(f"/{creator.link_id}", headers=HTML)
        assert 'id="send-form"' not in ended.text  # still paused until the chore runs
        deadline = time.monotonic() + 30  # the chore looks every 5 s
        while True:
            again = second.get(
                f"/{creator.link_id}", headers={**HTML, "If-None-Match": ended.headers["etag"]}
            )
            if again.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert again.status_code == 200
        assert 'id="send-form"' in again.text
