"""The whole path in a browser: a creator signs in through the provider's pages, a
stranger sends a message from the public page, it appears in the open dashboard without
a reload, the creator replies, and the public page shows the answer."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import PHONE, Screenshot, Site, Watch


def sign_in(page: Page, site: Site, watch: Watch) -> None:
    """Through the real redirects: our sign-in page, the provider's consent form, back."""
    watch.allow_outside_requests_from(site.provider.url)  # its page links a CDN stylesheet
    user = site.provider.new_user(name="Robin Creator")
    page.goto(f"{site.url}/dashboard")
    page.locator("#signin-google").click()
    page.wait_for_url(f"{site.provider.url}/**")
    page.locator("input[name=sub]").fill(user.sub)
    page.get_by_role("button", name="Authorize", exact=True).click()
    page.wait_for_url(f"{site.url}/dashboard**")


def test_a_message_arrives_live_and_its_answer_goes_public(
    site: Site,
    new_context: Callable[..., BrowserContext],
    watch: Watch,
    screenshot: Screenshot,
) -> None:
    creator = new_context().new_page()
    sign_in(creator, site, watch)
    inbox = creator.locator("#inbox")
    expect(inbox).to_be_visible()
    expect(creator.locator("#unread-count")).to_have_text("0")
    link_id = inbox.get_attribute("data-link-id")
    assert link_id
    creator.evaluate("window.notReloaded = true")

    sender = new_context(viewport=PHONE).new_page()
    sender.goto(f"{site.url}/{link_id}")
    question = "What are you reading <b>these</b> days?"  # shown as text, never as markup
    sender.locator("#message").fill(question)
    sender.locator("#send").click()
    expect(sender.locator("#sent")).to_be_visible()

    message = creator.locator(".message-row", has_text=question)
    expect(message).to_be_visible()
    expect(message.locator(".message-content")).to_have_text(question)
    expect(creator.locator("#unread-count")).to_have_text("1")
    assert creator.evaluate("window.notReloaded") is True, "the dashboard reloaded"
    screenshot(creator, "dashboard")

    answer = "A book about lighthouses."
    message.get_by_role("link").click()
    creator.wait_for_url("**/messages/*")  # loaded, with its in-place script
    expect(creator.locator("article.message .message-content")).to_have_text(question)
    creator.get_by_label("Your answer").fill(answer)
    creator.get_by_role("button", name="Send reply").click()
    replied = creator.locator("article[data-message-id]", has_text=question)
    expect(replied.locator(".reply-content")).to_have_text(answer)
    screenshot(creator, "dashboard-replied")

    sender.reload()
    shown = sender.locator("#answers .answer", has_text=question)
    expect(shown.locator(".question")).to_have_text(question)
    expect(shown.locator(".reply")).to_contain_text(answer)
    screenshot(sender, "public-answers")
