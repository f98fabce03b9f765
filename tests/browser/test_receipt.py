"""A sender's answer receipt in Chromium: sent from the send page, its private link copied,
the creator answers, the receipt page shows the answer and takes the one follow-up. Then
the same without JavaScript."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import BrowserContext, expect

from tests.actions import inbox_items, post_reply
from tests.browser.conftest import PHONE, Screenshot, Site
from tests.conftest import Creator


def inbox(site: Site, creator: Creator) -> list[dict[str, Any]]:
    with site.api() as api:
        return inbox_items(api, creator)


def reply(site: Site, creator: Creator, message_id: str, text: str) -> None:
    with site.api() as api:
        post_reply(api, creator, message_id, text)


def test_send_copy_the_receipt_link_read_the_answer_and_follow_up(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    creator = site.new_creator()
    context = new_context(viewport=PHONE)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    page = context.new_page()
    page.goto(f"{site.url}/{creator.link_id}")
    expect(page.locator("#receipt")).to_be_hidden()

    page.locator("#message").fill("Do lighthouses still have keepers?")
    page.locator("#send").click()
    expect(page.locator("#status")).to_contain_text("Sent!")
    expect(page.locator("#receipt")).to_be_visible()
    expect(page.locator("#receipt-warning")).to_contain_text("Keep it to yourself")
    link = page.locator("#receipt-url").input_value()
    assert link.startswith(f"{site.url}/r/")
    screenshot(page, "send-page-receipt")

    page.locator("#copy-receipt").click()
    expect(page.locator("#copy-receipt-status")).to_have_text("Link copied.")
    assert page.evaluate("navigator.clipboard.readText()") == link

    # Before the creator answers.
    receipt = context.new_page()
    receipt.goto(link)
    expect(receipt.locator("#original")).to_contain_text("Do lighthouses still have keepers?")
    expect(receipt.locator("#original-waiting")).to_have_text("Not answered yet.")

    [message] = inbox(site, creator)
    reply(site, creator, message["id"], "A few, on remote rocks.")
    receipt.reload()
    expect(receipt.locator("#original-replies")).to_contain_text("A few, on remote rocks.")
    expect(receipt.locator("#original-waiting")).to_have_count(0)
    screenshot(receipt, "receipt-answered")

    receipt.locator("#follow-up-message").fill("Which rock would you pick?")
    receipt.locator("#send-follow-up").click()
    expect(receipt.locator("#followed")).to_contain_text("Sent!")
    expect(receipt.locator("#follow-up")).to_contain_text("Which rock would you pick?")
    expect(receipt.locator("#follow-up-used")).to_be_visible()
    expect(receipt.locator("#follow-up-form")).to_have_count(0)
    screenshot(receipt, "receipt-followed-up")

    follow_up = next(m for m in inbox(site, creator) if m["id"] != message["id"])
    assert follow_up["message_content"] == "Which rock would you pick?"
    assert follow_up["follow_up_of"] == message["id"]


def test_the_receipt_works_without_javascript(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    creator = site.new_creator()
    page = new_context(viewport=PHONE, java_script_enabled=False).new_page()
    page.goto(f"{site.url}/{creator.link_id}")
    page.locator("#message").fill("Sent by a plain form")
    page.locator("#send").click()
    expect(page.locator("#sent")).to_contain_text("Sent!")
    expect(page.locator("#receipt")).to_be_visible()
    expect(page.locator("#copy-receipt")).to_be_hidden()  # copying needs the script
    link = page.locator("#receipt-url").input_value()
    assert link.startswith(f"{site.url}/r/")

    page.reload()  # shown once: the token is not kept anywhere the page can show again
    expect(page.locator("#receipt")).to_be_hidden()

    page.goto(link)
    expect(page.locator("#original")).to_contain_text("Sent by a plain form")
    page.locator("#follow-up-message").fill("x" * 501)
    page.locator("#send-follow-up").click()
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#follow-up-message")).to_have_value("x" * 501)

    page.locator("#follow-up-message").fill("And a follow-up, also without a script")
    page.locator("#send-follow-up").click()
    expect(page.locator("#followed")).to_contain_text("Sent!")
    screenshot(page, "receipt-no-js")
    texts = [m["message_content"] for m in inbox(site, creator)]
    assert texts == ["And a follow-up, also without a script", "Sent by a plain form"]
