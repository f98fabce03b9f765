"""The public send page, as a sender sees it: with JavaScript, and with it turned off."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import BrowserContext, expect

from tests.actions import inbox_texts
from tests.browser.conftest import PHONE, Screenshot, Site


def test_a_message_sent_with_javascript_counts_as_typed_and_arrives(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    creator = site.new_creator()
    page = new_context(viewport=PHONE).new_page()
    page.goto(f"{site.url}/{creator.link_id}")
    expect(page.locator("#count")).to_have_text("0")

    text = "Which book changed your mind about something? 📚"
    page.locator("#message").press_sequentially(text)
    # Code points, as the server counts: the emoji is one character, not two.
    expect(page.locator("#count")).to_have_text(str(len(text)))
    expect(page.locator("#send")).to_be_enabled()
    screenshot(page, "send-page")

    page.locator("#send").click()
    expect(page.locator("#status")).to_contain_text("Sent!")
    expect(page.locator("#message")).to_have_value("")
    expect(page.locator("#count")).to_have_text("0")
    assert page.url == f"{site.url}/{creator.link_id}"  # no navigation: sent through the API
    screenshot(page, "send-page-sent")
    assert inbox_texts(site.url, creator) == [text]


def test_a_message_over_500_characters_cannot_be_sent(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    creator = site.new_creator()
    page = new_context(viewport=PHONE).new_page()
    page.goto(f"{site.url}/{creator.link_id}")

    page.locator("#message").fill("é" * 500)  # 500 code points, 1000 bytes: allowed
    expect(page.locator("#count")).to_have_text("500")
    expect(page.locator("#send")).to_be_enabled()

    page.locator("#message").press("End")
    page.locator("#message").press_sequentially("!")
    expect(page.locator("#count")).to_have_text("501")
    expect(page.locator("#counter")).to_have_class("counter over")
    expect(page.locator("#send")).to_be_disabled()
    expect(page.locator("#message")).to_have_attribute("aria-invalid", "true")
    screenshot(page, "send-page-too-long")

    page.locator("#message").press("Backspace")
    expect(page.locator("#send")).to_be_enabled()
    assert inbox_texts(site.url, creator) == []


def test_the_send_page_works_without_javascript(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    creator = site.new_creator()
    page = new_context(viewport=PHONE, java_script_enabled=False).new_page()
    page.goto(f"{site.url}/{creator.link_id}")
    page.locator("#message").fill("Sent by a plain form post, no script at all")
    screenshot(page, "send-page-no-js")

    page.locator("#send").click()  # a real form post, then the page again
    expect(page.locator("#sent")).to_contain_text("Sent!")
    expect(page.locator("#message")).to_have_value("")
    screenshot(page, "send-page-no-js-sent")
    assert inbox_texts(site.url, creator) == ["Sent by a plain form post, no script at all"]

    # Too long without the script's counter: the server says so and keeps the text.
    page.locator("#message").fill("x" * 501)
    page.locator("#send").click()
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#message")).to_have_value("x" * 501)
    assert inbox_texts(site.url, creator) == ["Sent by a plain form post, no script at all"]
