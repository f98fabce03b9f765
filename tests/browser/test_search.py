"""The inbox search on the dashboard, as a creator uses it in Chromium: the box on the
inbox page, the results as message cards, a filter, an action that comes back to the
results, and a query the service refuses."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from playwright.sync_api import BrowserContext, expect

from tests.browser.conftest import DESKTOP, Screenshot, Site, off_the_loop
from tests.support.signin import signin_link_command


def test_a_creator_searches_their_inbox(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    page = new_context(viewport=DESKTOP).new_page()
    page.goto(off_the_loop(signin_link_command, site.server, f"s-{uuid.uuid4().hex[:10]}@x.org"))
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    tower = site.post_message(link_id, "昨日は東京タワーに行きました")
    site.post_message(link_id, "What is your favourite film?")
    hello = site.post_message(link_id, "안녕하세요, 반가워요")
    page.reload()

    # From the inbox's one row of search and filter (its button is "Go").
    page.get_by_label("Search messages and replies").fill("東京タワー")
    page.get_by_role("button", name="Go", exact=True).click()
    results_url = re.compile(rf"/dashboard/links/{link_id}/search\?q=")
    page.wait_for_url(results_url)
    results = page.locator("#results .message-row")
    expect(results).to_have_count(1)
    expect(results.first).to_have_attribute("data-message-id", tower)
    expect(page.get_by_label("Search messages and replies")).to_have_value("東京タワー")

    # A result opens the message's page, where it is answered; Back returns to the results.
    results.first.get_by_role("link").click()
    # Loaded, its deferred in-place script with it: a reply sent before it runs would be
    # the form's own post and redirect, one more page in the history for Back to pass.
    page.wait_for_url(f"**/messages/{tower}")
    page.get_by_label("Your answer").fill("楽しかったね")
    page.get_by_role("button", name="Send reply").click()
    expect(page.locator("article.message .reply-content")).to_have_text("楽しかったね")
    page.go_back()
    expect(page).to_have_url(results_url)
    page.reload()
    expect(results.first).to_contain_text("Answered")
    page.get_by_role("link", name="Answered", exact=True).click()
    expect(results).to_have_count(1)
    page.get_by_role("link", name="Unanswered", exact=True).click()
    expect(page.locator("#search-empty")).to_be_visible()
    page.get_by_role("link", name="All", exact=True).click()
    expect(results).to_have_count(1)
    screenshot(page, "dashboard-search")

    # A match in a reply finds its message; Korean by a part of a word.
    for q, wanted in (("しかった", tower), ("가워", hello)):
        page.get_by_label("Search messages and replies").fill(q)
        page.get_by_role("button", name="Search", exact=True).click()
        expect(results).to_have_count(1)
        expect(results.first).to_have_attribute("data-message-id", wanted)

    page.get_by_label("Search messages and replies").fill("no such text anywhere")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#search-empty")).to_be_visible()

    # Past the box's own limit (typed by hand in the address bar): the page says why.
    page.goto(f"{site.url}/dashboard/links/{link_id}/search?q={'x' * 101}")
    expect(page.locator("#search-problem")).to_contain_text("q must be 1 to 100 characters")
    page.get_by_role("link", name="Back to the inbox").click()
    expect(page.locator("#inbox")).to_be_visible()
