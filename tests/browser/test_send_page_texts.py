"""The send page's small texts (issue 31, item 5) on a 360x740 phone, in Japanese: the
500-character limit explained as it is passed, the offer of a link of one's own after
sending, and a timed pause saying until when."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import BrowserContext, expect

from tests.browser.conftest import Axe, Screenshot, Site

SMALL_PHONE = {"width": 360, "height": 740}


def test_in_japanese_the_limit_is_explained_as_it_is_passed_and_a_sender_is_invited_after_sending(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot, axe: Axe
) -> None:
    creator = site.new_creator()
    page = new_context(viewport=SMALL_PHONE, locale="ja-JP").new_page()
    page.goto(f"{site.url}/{creator.link_id}")
    note = page.locator("#limit-note")
    expect(note).to_be_hidden()  # nothing to say yet
    expect(page.locator("#own-link")).to_be_hidden()

    page.locator("#message").fill("あ" * 500)
    expect(page.locator("#send")).to_be_enabled()
    expect(note).to_be_hidden()
    page.locator("#message").press("End")
    page.locator("#message").press_sequentially("い")

    expect(page.locator("#send")).to_be_disabled()
    expect(note).to_be_visible()
    expect(note).to_have_text(
        "メッセージは500文字までです。いまは501文字あります。短くすると送信できます。"
    )
    expect(note).to_have_attribute("aria-live", "polite")
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    assert axe(page) == []
    screenshot(page, "send-page-over-limit-ja-360")

    page.locator("#message").press("Backspace")  # back to 500: the note goes
    expect(note).to_be_hidden()
    expect(page.locator("#send")).to_be_enabled()
    page.locator("#send").click()

    expect(page.locator("#sent")).to_be_visible()
    offer = page.locator("#own-link")
    expect(offer).to_be_visible()
    expect(offer).to_contain_text("あなたも匿名メッセージを受け取りませんか\uff1f")
    expect(page.locator("#get-own-link")).to_have_text("自分のリンクを作る")
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    assert axe(page) == []
    screenshot(page, "send-page-sent-ja-360")

    page.locator("#get-own-link").click()
    expect(page.locator("#get-link")).to_be_visible()  # the home page: "Get your link"


def test_in_japanese_a_timed_pause_says_until_when(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot, axe: Axe
) -> None:
    creator = site.new_creator()
    with site.api() as api:
        paused = api.patch(
            f"/links/{creator.link_id}", json={"pause_for_hours": 24}, headers=creator.headers
        )
    assert paused.status_code == 200, paused.text
    until = paused.json()["data"]["paused_until"]
    page = new_context(viewport=SMALL_PHONE, locale="ja-JP").new_page()
    page.goto(f"{site.url}/{creator.link_id}")

    notice = page.locator("#paused")
    expect(notice).to_contain_text("までメッセージを受け付けていません")
    expect(notice).to_contain_text("24 時間後")
    expect(notice.locator("time")).to_have_attribute("datetime", until)
    expect(page.locator("#send-form")).to_have_count(0)
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    assert axe(page) == []
    screenshot(page, "send-page-paused-until-ja-360")
