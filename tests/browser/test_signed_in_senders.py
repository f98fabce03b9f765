"""A link for signed-in senders only (issue 33, item 4) on a 360x740 phone, in Japanese and
English: a signed-out visitor is asked to sign in and comes back to the send page, where,
signed in, the form sends (posting itself: the API takes no session cookie)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.actions import inbox_items
from tests.browser.conftest import Axe, Screenshot, Site, off_the_loop
from tests.support.signin import signin_link_command

SMALL_PHONE = {"width": 360, "height": 740}
TEXTS = {
    "ja": ("ja-JP", "ログインしている人からのメッセージだけ", "ログインして送信"),
    "en": ("en-GB", "takes messages only from people signed in to anonbox", "Sign in to send"),
}


@pytest.mark.parametrize("language", ["ja", "en"])
def test_a_signed_out_visitor_is_asked_to_sign_in_and_comes_back_to_send(
    site: Site,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
    axe: Axe,
    language: str,
) -> None:
    locale, says, button = TEXTS[language]
    creator = site.new_creator()
    with site.api() as api:
        changed = api.patch(
            f"/links/{creator.link_id}", json={"senders": "signed_in"}, headers=creator.headers
        )
    assert changed.status_code == 200, changed.text
    page = new_context(viewport=SMALL_PHONE, locale=locale).new_page()
    page.goto(f"{site.url}/{creator.link_id}")

    notice = page.locator("#signin-needed")
    expect(notice).to_contain_text(says)
    expect(page.locator("#signin-to-send")).to_have_text(button)
    expect(page.locator("#send-form")).to_have_count(0)
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    assert axe(page) == []
    screenshot(page, f"send-page-signin-needed-{language}-360")

    page.locator("#signin-to-send").click()
    expect(page).to_have_url(f"{site.url}/signin?next=%2F{creator.link_id}")
    email = f"sender-{uuid.uuid4().hex[:8]}@example.org"
    link = off_the_loop(signin_link_command, site.server, email)
    page.goto(link)  # the mail's link, opened in the same browser
    expect(page).to_have_url(f"{site.url}/{creator.link_id}")

    text = f"signed in, still anonymous ({language})"
    page.locator("#message").fill(text)
    page.locator("#send").click()
    expect(page.locator("#sent")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    with site.api() as api:
        items = off_the_loop(inbox_items, api, creator)
    assert [item["message_content"] for item in items] == [text]
    assert email not in str(items)
