"""Languages and times in a browser: a creator whose browser speaks Korean gets a Korean
dashboard; a message that arrives live reads "just now" in Korean, with the exact time
on hover, and a few minutes later (the page's clock moved on) reads "5 minutes ago" in
Korean without a reload. A visitor switches the send page's language in the footer."""

from __future__ import annotations

import re
from collections.abc import Callable

from playwright.sync_api import BrowserContext, expect

from tests.browser.conftest import PHONE, Screenshot, Site, Watch
from tests.browser.test_full_path import sign_in


def test_live_messages_say_when_in_the_creators_language_and_keep_it_current(
    site: Site,
    new_context: Callable[..., BrowserContext],
    watch: Watch,
    screenshot: Screenshot,
) -> None:
    creator = new_context(locale="ko-KR").new_page()
    creator.clock.install()  # the page's own clock, moved on below
    sign_in(creator, site, watch)
    expect(creator.locator("html")).to_have_attribute("lang", "ko")
    expect(creator.locator("#inbox-title")).to_have_text("받은 메시지함")
    link_id = creator.locator("#inbox").get_attribute("data-link-id")
    assert link_id

    sender = new_context(viewport=PHONE).new_page()
    sender.goto(f"{site.url}/{link_id}")
    sender.locator("#message").fill("지금 뭐 읽어요?")
    sender.locator("#send").click()
    expect(sender.locator("#sent")).to_be_visible()

    arrived = creator.locator(".message-row", has_text="지금 뭐 읽어요?")
    when = arrived.locator("time")
    expect(when).to_have_text("방금 전")
    expect(when).to_have_attribute(
        "title", re.compile(r"\d+월 \d+일 \(.\) 오[전후] \d+:\d\d")
    )  # no seconds
    screenshot(creator, "dashboard-ko")

    creator.clock.fast_forward("05:00")

    expect(when).to_have_text("5분 전")


def test_a_visitor_switches_the_language_and_it_stays(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    creator = site.new_creator()
    visitor = new_context(locale="es-ES", viewport=PHONE).new_page()
    visitor.goto(f"{site.url}/{creator.link_id}")
    expect(visitor.locator("label[for=message]")).to_have_text("Tu mensaje anónimo")

    visitor.get_by_role("link", name="日本語").click()

    expect(visitor.locator("html")).to_have_attribute("lang", "ja")
    expect(visitor.locator("label[for=message]")).to_have_text("匿名メッセージ")
    assert visitor.url.endswith(f"/{creator.link_id}")
    visitor.goto(f"{site.url}/")
    expect(visitor.locator("#nav-signin")).to_have_text("ログイン")
    screenshot(visitor, "home-ja")
