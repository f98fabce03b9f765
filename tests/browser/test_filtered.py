"""The filtered folder as a creator uses it in Chromium: mute a word, see a message that
holds it under "Filtered (N)" and not in the inbox, restore it, and empty the folder
behind a confirmation page that by itself changes nothing; the link's setting chooses
the folder or silence."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from playwright.sync_api import BrowserContext, expect

from tests.browser.conftest import (
    DESKTOP,
    Site,
    as_a_stranger,
    confirm_after_a_cancel,
    signs_in_new,
)
from tests.browser.test_links_page import save_settings


def test_the_folder_is_seen_restored_from_and_emptied_with_a_confirmation(
    site: Site, new_context: Callable[..., BrowserContext]
) -> None:
    page = new_context(viewport=DESKTOP).new_page()
    signs_in_new(page, site.server, "filtered")
    link_id = page.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    expect(page.locator("#filtered-link")).to_have_text("Filtered (0)")
    page.get_by_role("link", name="Link settings").click()
    expect(page.get_by_label("Messages with a muted word")).to_have_value("filter")

    word = f"zqmute{uuid.uuid4().hex[:8]}"
    page.goto(f"{site.url}/dashboard/account")
    page.get_by_label("Word to mute").fill(word)
    page.get_by_role("button", name="Mute word").click()
    expect(page.locator("#muted-words")).to_contain_text(word)

    plain = site.post_message(link_id, "a plain question")
    first = site.post_message(link_id, f"first {word}")
    second = site.post_message(link_id, f"second {word}")
    page.goto(f"{site.url}/dashboard/links/{link_id}")
    expect(page.locator("#messages .message-row")).to_have_count(1)
    expect(page.locator(f"#m-{plain}")).to_be_visible()
    expect(page.locator("#filtered-link")).to_have_text("Filtered (2)")

    page.locator("#filtered-link").click()
    expect(page.locator("#filtered-title")).to_have_text("Filtered (2)")
    expect(page.locator("#filtered-messages article")).to_have_count(2)
    expect(page.locator(f"#f-{first}")).to_contain_text(f"first {word}")

    page.locator(f"#f-{first}").get_by_role("button", name="Restore to the inbox").click()
    expect(page.locator("#filtered-messages article")).to_have_count(1)
    expect(page.locator(f"#f-{second}")).to_be_visible()
    page.get_by_role("link", name="Back to the inbox").click()
    expect(page.locator("#messages .message-row")).to_have_count(2)
    expect(page.locator(f"#m-{first}")).to_be_visible()
    expect(page.locator("#filtered-link")).to_have_text("Filtered (1)")

    page.locator("#filtered-link").click()
    folder = "#filtered-messages article"
    confirm_after_a_cancel(page, "Empty the folder…", "Empty the filtered folder?", folder, 1)
    expect(page.locator("#filtered-empty")).to_be_visible()
    expect(page.locator("#filtered-title")).to_have_text("Filtered (0)")

    # Set to drop: a message with the word goes nowhere.
    page.get_by_role("link", name="Back to the inbox").click()
    page.get_by_role("link", name="Link settings").click()
    page.get_by_label("Messages with a muted word").select_option("drop")
    save_settings(page)
    expect(page.get_by_label("Messages with a muted word")).to_have_value("drop")
    site.post_message(link_id, f"third {word}")
    page.get_by_role("link", name="Back to the inbox").click()
    expect(page.locator("#filtered-link")).to_have_text("Filtered (0)")
    expect(page.locator("#messages .message-row")).to_have_count(2)


def test_a_stranger_cannot_open_or_empty_someone_elses_folder(
    site: Site, new_context: Callable[..., BrowserContext]
) -> None:
    victim = site.new_creator()
    folder = f"/dashboard/links/{victim.link_id}/filtered"
    page, token = as_a_stranger(site, new_context, (folder, f"{folder}/empty"))
    done = page.request.post(
        f"{site.url}/dashboard/links/{victim.link_id}/filtered/empty", form={"csrf_token": token}
    )
    assert done.status == 403


def test_an_open_inbox_drops_a_message_a_word_muted_in_another_tab_moves(
    site: Site, new_context: Callable[..., BrowserContext]
) -> None:
    context = new_context(viewport=DESKTOP)
    inbox = context.new_page()
    signs_in_new(inbox, site.server, "live")
    link_id = inbox.locator("#inbox").get_attribute("data-link-id")
    assert link_id
    word = f"zqmute{uuid.uuid4().hex[:8]}"
    kept = site.post_message(link_id, "nothing muted here")
    doomed = site.post_message(link_id, f"this has {word}")
    inbox.goto(f"{site.url}/dashboard/links/{link_id}")
    expect(inbox.locator("#messages .message-row")).to_have_count(2)
    expect(inbox.locator("#filtered-link")).to_have_text("Filtered (0)")
    new_one = site.post_message(link_id, f"and {word} again, arriving live")
    expect(inbox.locator(f"#m-{new_one}")).to_be_visible()
    expect(inbox.locator("#unread-count")).to_have_text("3")

    settings = context.new_page()
    settings.goto(f"{site.url}/dashboard/account")
    settings.get_by_label("Word to mute").fill(word)
    settings.get_by_role("button", name="Mute word").click()
    expect(settings.locator("#muted-words")).to_contain_text(word)

    # Without a reload: both cards go, the folder's count and the unread count follow.
    expect(inbox.locator("#messages .message-row")).to_have_count(1)
    expect(inbox.locator(f"#m-{kept}")).to_be_visible()
    expect(inbox.locator(f"#m-{doomed}")).to_have_count(0)
    expect(inbox.locator("#filtered-link")).to_have_text("Filtered (2)")
    expect(inbox.locator("#unread-count")).to_have_text("1")
