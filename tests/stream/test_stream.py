"""Stream mode (issue 31, item 8): the creator's secret overlay address, "Show on stream",
and the overlay updating live through the fan-out. Over HTTP as a browser and OBS would
use them; each test runs on SQLite and on PostgreSQL."""

# ruff: noqa: F811 - the fixtures come from tests.web.test_dashboard
from __future__ import annotations

import contextlib
import html
import json
import re
import time
from collections.abc import Callable, Iterator

import httpx

from anonbox.outbox.fanout import TAIL_SECONDS
from tests.actions import post_message
from tests.auth.conftest import (
    backend,  # noqa: F401 - fixture
    http_client,
    provider,  # noqa: F401 - fixture
)
from tests.web.test_dashboard import (  # noqa: F401 - fixtures
    Browser,
    api,
    browser,
    make_browser,
    servers,
)


def overlay_url(browser: Browser) -> str:
    page = browser.client.get("/dashboard/stream")
    assert page.status_code == 200, page.text
    found = re.search(r'id="overlay-url" type="text" value="([^"]+)"', page.text)
    assert found, "stream mode is off"
    return html.unescape(found.group(1))


def turn_on(browser: Browser) -> str:
    assert browser.submit("/dashboard/stream/address").status_code == 303
    return overlay_url(browser)


def show(browser: Browser, message_id: str, link_id: str | None = None) -> httpx.Response:
    link = link_id or browser.link_id
    return browser.submit(f"/dashboard/links/{link}/messages/{message_id}/stream")


@contextlib.contextmanager
def viewer() -> Iterator[httpx.Client]:
    """OBS's browser source: no cookies, nothing but the address."""
    with http_client() as client:
        yield client


def question_on(client: httpx.Client, url: str) -> str | None:
    page = client.get(url)
    assert page.status_code == 200, page.text
    assert page.headers["cache-control"] == "no-store"
    found = re.search(r'<p id="question"[^>]*>(.*?)</p>', page.text, re.S)
    assert found
    return html.unescape(found.group(1)) or None


def test_stream_mode_is_off_until_turned_on_and_the_address_is_secret(browser: Browser) -> None:
    page = browser.client.get("/dashboard/stream")
    assert page.status_code == 200
    assert 'id="overlay-url"' not in page.text

    url = turn_on(browser)

    assert re.fullmatch(r"https?://[^/]+/stream/[0-9a-f]{64}", url), url
    with viewer() as obs:
        assert question_on(obs, url) is None  # nothing on screen yet
        guessed = url[:-1] + ("0" if url[-1] != "0" else "1")
        assert obs.get(guessed).status_code == 404


def test_show_on_stream_puts_the_question_on_the_overlay_and_hide_takes_it_off(
    browser: Browser, api: httpx.Client
) -> None:
    url = turn_on(browser)
    first = post_message(api, browser.link_id, "What's your favourite <b>song</b>?")
    second = post_message(api, browser.link_id, "好きな食べ物は何ですか")

    assert show(browser, first).status_code == 303
    with viewer() as obs:
        assert question_on(obs, url) == "What's your favourite <b>song</b>?"  # as text
        assert show(browser, second).status_code == 303
        assert question_on(obs, url) == "好きな食べ物は何ですか"
        assert browser.submit("/dashboard/stream/hide").status_code == 303
        assert question_on(obs, url) is None


def test_show_on_stream_turns_stream_mode_on(browser: Browser, api: httpx.Client) -> None:
    message_id = post_message(api, browser.link_id, "first question")

    assert show(browser, message_id).status_code == 303

    with viewer() as obs:
        assert question_on(obs, overlay_url(browser)) == "first question"


def test_another_creators_message_cannot_go_on_your_overlay(
    make_browser: Callable[[], Browser], api: httpx.Client
) -> None:
    mine, theirs = make_browser(), make_browser()
    url = turn_on(mine)
    their_message = post_message(api, theirs.link_id, "their secret question")

    assert show(mine, their_message).status_code == 404  # under my link: no such message
    assert show(mine, their_message, link_id=theirs.link_id).status_code in (403, 404)

    with viewer() as obs:
        assert question_on(obs, url) is None


def test_a_new_address_revokes_the_old_one(browser: Browser, api: httpx.Client) -> None:
    old = turn_on(browser)
    assert show(browser, post_message(api, browser.link_id, "still private")).status_code == 303

    new = turn_on(browser)

    assert new != old
    with viewer() as obs:
        gone = obs.get(old)
        assert gone.status_code == 404
        assert "still private" not in gone.text
        assert obs.get(old + "/events").status_code == 404
        assert question_on(obs, new) == "still private"


def test_a_deleted_message_leaves_the_overlay(browser: Browser, api: httpx.Client) -> None:
    url = turn_on(browser)
    message_id = post_message(api, browser.link_id, "soon deleted")
    assert show(browser, message_id).status_code == 303

    deleted = browser.submit(f"/dashboard/links/{browser.link_id}/messages/{message_id}/delete")

    assert deleted.status_code == 303
    with viewer() as obs:
        assert question_on(obs, url) is None


def test_the_overlay_changes_live_when_the_creator_picks_a_question(
    browser: Browser, api: httpx.Client
) -> None:
    url = turn_on(browser)
    message_id = post_message(api, browser.link_id, "live question")
    with viewer() as obs, obs.stream("GET", url + "/events", timeout=10) as events:
        assert events.status_code == 200
        data = (
            json.loads(line.removeprefix("data: "))
            for line in events.iter_lines()
            if line.startswith("data: ")  # not the comments, retry and event lines
        )
        assert next(data) == {"question": None}  # the first look: nothing on screen
        # A wake that changes nothing (hiding an empty overlay), heard before the change:
        # the overlay hears nothing of it. (Once, a late wake sent a second null here.)
        assert browser.submit("/dashboard/stream/hide").status_code == 303
        time.sleep(4 * TAIL_SECONDS)  # SQLite's feed has looked; PostgreSQL's at once

        assert show(browser, message_id).status_code == 303

        # The change arrives in well under a second; if it never does, nothing comes
        # before the 15 s keep-alive, the 10 s read timeout fires and the test fails.
        assert next(data) == {"question": "live question"}


def test_one_address_may_hold_five_open_overlays_not_hundreds(browser: Browser) -> None:
    url = turn_on(browser) + "/events"
    with viewer() as obs, contextlib.ExitStack() as open_streams:
        readers = []
        for _ in range(5):
            stream = open_streams.enter_context(obs.stream("GET", url))
            assert stream.status_code == 200
            readers.append(stream.iter_lines())
            assert next(readers[-1]) == ": connected"
        refused = obs.get(url, timeout=5)
        assert refused.status_code == 429
