"""The account page, as a creator uses it: download everything, delete the account (with a
confirmation), sign in again to find only the deletion and a way to cancel it, cancel,
and find the inbox and the share link working again."""

from __future__ import annotations

import json
from collections.abc import Callable

from playwright.sync_api import BrowserContext, expect

from tests.browser.conftest import DESKTOP, Screenshot, Site, off_the_loop, signs_in_new
from tests.support.signin import signin_link_command


def test_a_creator_downloads_their_data_deletes_the_account_and_cancels(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    page = new_context(viewport=DESKTOP, accept_downloads=True).new_page()
    email = signs_in_new(page, site.server, "leaving")
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    with site.api() as api:
        sent = api.post(f"/message/{link_id}", json={"message_content": "before I leave"})
        assert sent.status_code == 201, sent.text

    page.get_by_role("link", name="Settings", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("link", name="Download my data").click()
    assert download.value.suggested_filename.startswith("anonbox-export-")
    document = json.loads(download.value.path().read_text(encoding="utf-8"))
    assert document["data"]["profile"]["email"] == email
    assert [m["message_content"] for m in document["data"]["messages"]] == ["before I leave"]

    page.get_by_role("link", name="Delete my account…").click()
    expect(page.locator("#confirm-deletion")).to_contain_text("Are you sure?")
    screenshot(page, "dashboard-delete-account")
    page.get_by_role("button", name="Delete my account").click()  # unticked: the browser refuses
    expect(page.locator("#confirm-deletion")).to_be_visible()
    page.get_by_label("Yes, delete my account").check()
    page.get_by_role("button", name="Delete my account").click()
    expect(page.locator("#deletion-scheduled")).to_contain_text("Your account will be erased on")

    with site.api() as api:
        gone = api.post(f"/message/{link_id}", json={"message_content": "are you there?"})
        # The API says 404 `link_gone` (the contract's checks want a 404 after a delete);
        # the pages say 410.
        assert gone.status_code == 404, gone.text
        assert gone.json()["error"]["code"] == "link_gone", gone.text
        assert gone.json()["message"] == "This link is no longer available"
    page.goto(f"{site.url}/dashboard")
    expect(page.get_by_role("heading", name="Sign in", exact=True)).to_be_visible()  # signed out

    page.goto(off_the_loop(signin_link_command, site.server, email))
    expect(page).to_have_url(f"{site.url}/dashboard/deletion")
    expect(page.locator("#deletion-pending")).to_contain_text("Your account will be erased on")
    screenshot(page, "dashboard-deletion-pending")
    page.goto(f"{site.url}/dashboard/account")  # nothing else opens
    expect(page).to_have_url(f"{site.url}/dashboard/deletion")

    page.get_by_role("button", name="Cancel deletion").click()
    expect(page).to_have_url(f"{site.url}/dashboard")
    expect(page.locator("#inbox")).to_contain_text("before I leave")
    with site.api() as api:
        back = api.post(f"/message/{link_id}", json={"message_content": "welcome back"})
        assert back.status_code == 201, back.text
