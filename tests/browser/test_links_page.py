"""The links page and the clean-ups, as a creator uses them in Chromium: make a second
link, delete every unanswered message and everything from one sender, delete a link,
each behind a confirmation page that by itself changes nothing."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import (
    DESKTOP,
    Site,
    as_a_stranger,
    confirm_after_a_cancel,
    signs_in_new,
)
from tests.support.http import loopback_client


def post(site: Site, link_id: str, text: str) -> str:
    with loopback_client(base_url=site.url, timeout=30) as api:
        sent = api.post(f"/message/{link_id}", json={"message_content": text})
        assert sent.status_code == 201, sent.text
        return str(sent.json()["data"]["id"])


def save_settings(page: Page) -> None:
    """Save the link's settings and wait until they are saved: the form is sent in place
    (static/inplace.js), so the page does not navigate; its answer is the page saying so."""
    with page.expect_response(lambda r: "done=saved" in r.url and r.status == 200):
        page.get_by_role("button", name="Save settings").click()


def test_links_are_made_cleaned_up_and_deleted_with_a_confirmation(
    site: Site, new_context: Callable[..., BrowserContext]
) -> None:
    page = new_context(viewport=DESKTOP).new_page()
    signs_in_new(page, site.server, "links")
    page.get_by_role("link", name="Links").click()
    expect(page.locator("#links li.link-row")).to_have_count(1)

    page.get_by_label("Prompt").fill("Ask me about my trip")
    page.get_by_role("button", name="Create link").click()
    expect(page.locator("#inbox")).to_be_visible()
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    page.get_by_role("link", name="Links").click()
    expect(page.locator("#links li.link-row")).to_have_count(2)
    expect(page.locator(f'[data-link-id="{link_id}"]')).to_contain_text("Ask me about my trip")

    # A pause with an end, from the settings page the inbox links to; the send page says so.
    page.goto(f"{site.url}/dashboard/links/{link_id}")
    page.get_by_role("link", name="Link settings").click()
    page.get_by_label("Messages", exact=True).select_option("24")
    save_settings(page)
    expect(page.get_by_label("Messages", exact=True)).to_have_value("keep")
    page.get_by_role("link", name="Back to the inbox").click()
    expect(page.locator("#inbox")).to_contain_text("paused")
    page.get_by_role("link", name="Link settings").click()
    sender = new_context(viewport=DESKTOP).new_page()
    sender.goto(f"{site.url}/{link_id}")
    expect(sender.locator("#paused")).to_be_visible()
    page.get_by_label("Messages", exact=True).select_option("open")
    save_settings(page)
    expect(page.get_by_label("Messages", exact=True)).to_have_value("open")

    kept = post(site, link_id, "answered, so it stays")
    for n in range(3):
        post(site, link_id, f"unanswered {n}")
    page.goto(f"{site.url}/dashboard/links/{link_id}/messages/{kept}")
    page.get_by_label("Your answer").fill("here is my answer")
    page.get_by_role("button", name="Send reply").click()
    expect(page.locator("#share")).to_be_visible()
    page.get_by_role("link", name="← Inbox").click()
    expect(page.locator("#messages .message-row")).to_have_count(4)

    unanswered, title = "Delete all unanswered…", "Delete every unanswered message?"
    confirm_after_a_cancel(page, unanswered, title, "#messages .message-row", 4)
    expect(page.locator("#messages .message-row")).to_have_count(1)
    expect(page.locator(f"#m-{kept}")).to_be_visible()

    page.get_by_role("link", name="Links").click()
    page.locator(f'[data-link-id="{link_id}"]').get_by_role("link", name="Delete link…").click()
    page.locator("#confirm").click()
    expect(page.locator("#links li.link-row")).to_have_count(1)
    with loopback_client(base_url=site.url, timeout=30) as api:
        gone = api.post(f"/message/{link_id}", json={"message_content": "x"})
        assert gone.status_code == 404, gone.text  # the API's `link_gone`; the pages say 410
        assert gone.json()["error"]["code"] == "link_gone", gone.text


def test_a_stranger_cannot_use_the_clean_ups_of_someone_elses_link(
    site: Site, new_context: Callable[..., BrowserContext]
) -> None:
    victim = site.new_creator()
    post(site, victim.link_id, "do not delete me")
    clean_ups = (
        f"/dashboard/links/{victim.link_id}/delete",
        f"/dashboard/links/{victim.link_id}/unanswered/delete",
    )
    page, token = as_a_stranger(site, new_context, clean_ups)  # as the inbox of another's link
    for path in clean_ups:
        done = page.request.post(f"{site.url}{path}", form={"csrf_token": token})
        assert done.status == 403, path
    with loopback_client(base_url=site.url, timeout=30) as api:
        inbox = api.get(f"/message/{victim.link_id}", headers=victim.headers)
        assert [m["message_content"] for m in inbox.json()["data"]["items"]] == ["do not delete me"]
