"""The admin pages in Chromium, as an admin works them: from the dashboard's Admin link to
the report queue (each report with its message's replies), resolving one, blocking a
sender on every link behind a confirmation, muting a phrase for every link, and reading
what was done in the audit log. A creator who is not an admin finds no way in."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import httpx
from playwright.sync_api import BrowserContext, expect

from tests.actions import inbox_ids, post_reply
from tests.browser.conftest import (
    DESKTOP,
    PHONE,
    Screenshot,
    off_the_loop,
    own_server,
    signs_in_new,
)
from tests.conftest import Creator, make_creator_in
from tests.moderation.conftest import report
from tests.server import Server
from tests.support.admin import make_account
from tests.support.http import loopback_client
from tests.support.signin import signin_link_command

SPAMMER = {"X-Forwarded-For": "203.0.113.45"}
BYSTANDER = {"X-Forwarded-For": "198.51.100.45"}


# A server of its own: a site-wide block here silences no other test's sender.
moderated = own_server("moderated", {"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32"})


def send(api: httpx.Client, sender: dict[str, str], creator: Creator, text: str) -> str:
    sent = api.post(f"/message/{creator.link_id}", json={"message_content": text}, headers=sender)
    assert sent.status_code == 201, sent.text
    return str(sent.json()["data"]["id"])


def test_an_admin_works_the_queue_mutes_a_phrase_and_reads_the_log(
    moderated: Server, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    admin = off_the_loop(lambda: make_account(moderated.database_url, admin=True))
    creator, elsewhere = (off_the_loop(make_creator_in, moderated.database_url) for _ in range(2))
    phrase = f"zq{uuid.uuid4().hex[:8]} spam"
    with loopback_client(base_url=moderated.url, timeout=30) as api:
        rude = send(api, SPAMMER, creator, "rude words here")
        post_reply(api, creator, rude, "please stop")
        rude_report = report(api, creator, rude, "harassment")
        joke = send(api, BYSTANDER, creator, "a borderline joke")
        joke_report = report(api, creator, joke, "not funny")

        page = new_context(viewport=DESKTOP).new_page()
        page.goto(off_the_loop(signin_link_command, moderated, admin.email))
        page.get_by_role("link", name="Admin", exact=True).click()
        expect(page).to_have_url(re.compile(r"/admin$"))
        rude_card = page.locator(f'[data-report-id="{rude_report}"]')
        expect(rude_card).to_contain_text("rude words here")
        expect(rude_card).to_contain_text("please stop")  # its thread
        expect(rude_card).to_contain_text("harassment")
        expect(rude_card.locator("a.report-link")).to_have_attribute("href", f"/{creator.link_id}")
        screenshot(page, "admin-queue")

        joke_card = page.locator(f'[data-report-id="{joke_report}"]')
        joke_card.get_by_role("button", name="Resolve, keep the message").click()
        expect(joke_card).to_have_count(0)
        assert joke in inbox_ids(api, creator)

        confirm = rude_card.get_by_role("button", name="Yes, block the sender everywhere")
        expect(confirm).to_be_hidden()  # asked for first
        rude_card.get_by_text("Block the sender on every link…").click()
        confirm.click()
        expect(page.locator("#queue-empty")).to_be_visible()
        assert rude not in inbox_ids(api, creator)
        dropped = send(api, SPAMMER, elsewhere, "and here too")
        assert dropped not in inbox_ids(api, elsewhere)

        page.get_by_role("link", name="Muted phrases").click()
        page.get_by_label("Phrase to mute on every link").fill(phrase)
        page.get_by_role("button", name="Mute phrase").click()
        expect(page.locator("#muted-phrases")).to_contain_text(phrase)
        muted = send(api, BYSTANDER, elsewhere, f"buy {phrase.upper()} now")
        assert muted not in inbox_ids(api, elsewhere)
        screenshot(page, "admin-phrases")

        page.get_by_role("link", name="Audit log").click()
        rows = page.locator("#audit tbody tr")
        expect(rows.nth(0)).to_contain_text("muted_phrase.add")
        expect(rows.nth(0)).to_contain_text(phrase)
        expect(rows.nth(1)).to_contain_text("report.resolve")
        expect(rows.nth(1)).to_contain_text("block_sender")
        expect(rows.nth(2)).to_contain_text("dismiss")
        expect(rows.nth(0)).to_contain_text("(you)")
        screenshot(page, "admin-audit")

        page.get_by_role("link", name="Muted phrases").click()
        page.get_by_role("button", name=f"Unmute {phrase}").click()
        expect(page.locator("#muted-phrases")).to_contain_text("None.")
        landed = send(api, BYSTANDER, elsewhere, f"buy {phrase} now")
        assert landed in inbox_ids(api, elsewhere)


def test_a_creator_who_is_not_an_admin_finds_no_way_in(
    moderated: Server, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    page = new_context(viewport=PHONE).new_page()
    signs_in_new(page, moderated, "not-admin")
    expect(page.locator("#inbox")).to_be_visible()
    expect(page.get_by_role("link", name="Admin", exact=True)).to_have_count(0)
    for path in ("/admin", "/admin/phrases", "/admin/log"):
        answer = page.goto(f"{moderated.url}{path}")
        assert answer is not None
        assert answer.status == 403
        expect(page.locator("main")).to_contain_text("Only an admin can see this page.")
    screenshot(page, "admin-refused-phone")
