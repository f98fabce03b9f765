"""The inbox on a 360x740 phone (issue 41, "an inbox that fits a phone"): the first
message's top within 200 px of the page's top, in English, Japanese and Korean, light and
dark, for a creator with two links whose prompts are long; no page wider than the screen;
axe clean on the inbox and on the link's settings page; without JavaScript the filters and
the search still work as plain GETs; a message is read when it is opened, not when the list
is shown. Screenshots: ``test-artifacts/screenshots/inbox-phone-<lang>-<theme>.png`` and
``link-settings-phone-…``. Layout on SQLite only (it depends on HTML and CSS, not on the
database); reading is also tested over HTTP on both (tests/web/test_inbox_reading.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import Axe, Screenshot, off_the_loop, own_server
from tests.browser.furnished import post_from
from tests.conftest import Creator
from tests.server import Server
from tests.support.admin import Admin, make_account
from tests.support.db import execute
from tests.support.http import loopback_client
from tests.support.signin import signin_link_command

PHONE_360 = {"width": 360, "height": 740}
# A prompt as long as creators write them (the heading once wrapped it over four lines).
LONG_PROMPT = (
    "Ask me anything about drawing, inking, scanning, colours, the pens and the paper I use "
    "every day, and the comics I am making this winter — or just say hello!"
)
SECOND_PROMPT = (
    "絵のこと、ペンのこと、毎日の作業のこと、なんでも匿名で聞いてください。"
    "冬のあいだに描いている漫画のことも\uff01"
)
LOCALES = {"en": "en-GB", "ja": "ja-JP", "ko": "ko-KR"}

inbox_phone = own_server("inbox_phone", {}, backends=("sqlite",))


@dataclass(frozen=True)
class World:
    server: Server
    creator: Creator
    email: str
    second: str  # the creator's second link

    def speak(self, lang: str) -> None:
        off_the_loop(
            execute,
            self.server.database_url,
            "UPDATE users SET language = $1 WHERE email = $2",
            lang,
            self.email,
        )

    def new_account(self) -> Admin:
        """Another creator on this server, with nothing read and nothing sent yet."""
        return off_the_loop(lambda: make_account(self.server.database_url, admin=False))

    def sign_in(self, page: Page) -> None:
        page.goto(off_the_loop(signin_link_command, self.server, self.email))
        page.wait_for_url(f"{self.server.url}/dashboard")

    @property
    def inbox(self) -> str:
        return f"{self.server.url}/dashboard/links/{self.creator.link_id}"


@pytest.fixture(scope="module")
def world(inbox_phone: Server) -> World:
    account = off_the_loop(lambda: make_account(inbox_phone.database_url, admin=False))
    creator = account.creator
    with loopback_client(base_url=inbox_phone.url, timeout=30) as api:
        changed = api.patch(
            f"/links/{creator.link_id}", json={"prompt": LONG_PROMPT}, headers=creator.headers
        )
        assert changed.status_code == 200, changed.text
        second = api.post("/links", json={"prompt": SECOND_PROMPT}, headers=creator.headers)
        assert second.status_code == 201, second.text
        texts = [
            "What pens do you use for inking, and which paper takes the ink best?",
            "好きな漫画家は誰ですか\uff1f",
            "요즘 가장 즐겨 그리는 건 뭐예요?",
            "Do you scan or photograph your pages?",
            "How long does a page take you from the first sketch to the last colour?",
            "Any tips for a beginner?",
        ]
        for n, text in enumerate(texts):
            assert post_from(api, creator.link_id, text, n).status_code == 201
        post_from(api, second.json()["data"]["id"], "hello", 9)
    return World(inbox_phone, creator, account.email, second.json()["data"]["id"])


# Where the first message starts, how wide the page is, and what sits above the list.
MEASURE = """() => {
  const first = document.querySelector('#messages .message-row');
  const top = first ? first.getBoundingClientRect().top + window.scrollY : null;
  return {top, width: document.documentElement.scrollWidth};
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_first_message_is_within_200_px_of_the_top_on_a_360_px_phone(
    lang: str,
    theme: str,
    world: World,
    new_context: Callable[..., BrowserContext],
    axe: Axe,
    screenshot: Screenshot,
) -> None:
    options: dict[str, Any] = {
        "color_scheme": theme,
        "locale": LOCALES[lang],
        "viewport": PHONE_360,
    }
    world.speak(lang)
    page = new_context(**options).new_page()
    world.sign_in(page)
    page.goto(world.inbox)
    measured = page.evaluate(MEASURE)
    screenshot(page, f"inbox-phone-{lang}-{theme}", full_page=False)
    screenshot(page, f"inbox-phone-full-{lang}-{theme}")
    assert measured["top"] is not None
    print(f"inbox-phone-{lang}-{theme}: the first message starts {measured['top']} px down")
    assert measured["top"] <= 200, f"the first message starts {measured['top']} px down"
    assert measured["width"] <= 360
    assert axe(page) == []

    page.goto(f"{world.inbox}/settings")
    screenshot(page, f"link-settings-phone-{lang}-{theme}")
    assert page.evaluate(MEASURE)["width"] <= 360
    assert axe(page) == []


def test_a_message_is_read_when_it_is_opened_not_when_the_list_shows_it(
    world: World, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    account = world.new_account()
    with loopback_client(base_url=world.server.url, timeout=30) as api:
        for n in range(5):
            post_from(api, account.creator.link_id, f"Question number {n + 1}?", n)
    page = new_context(viewport=PHONE_360).new_page()
    page.goto(off_the_loop(signin_link_command, world.server, account.email))
    page.wait_for_url(f"{world.server.url}/dashboard")
    unread_rows = page.locator("#messages .message-row.unread")
    expect(page.locator("#unread-count")).to_have_text("5")
    expect(unread_rows).to_have_count(5)
    page.reload()  # shown twice, read never
    expect(page.locator("#unread-count")).to_have_text("5")
    expect(unread_rows).to_have_count(5)
    assert page.title() == "(5) Inbox · anonbox"

    page.locator("#messages .message-row").nth(2).get_by_role("link").click()
    page.wait_for_url("**/messages/*")
    page.locator("#back-to-inbox").click()
    expect(page.locator("#unread-count")).to_have_text("4")
    expect(unread_rows).to_have_count(4)
    expect(page.locator("#messages .message-row").nth(2)).not_to_have_class("message-row unread")
    screenshot(page, "inbox-phone-read-one", full_page=False)

    page.get_by_role("button", name="Mark all as read").click()
    expect(page.locator("#done")).to_have_text("All marked as read.")
    expect(page.locator("#unread-count")).to_have_text("0")
    expect(unread_rows).to_have_count(0)
    expect(page.locator("#mark-all-read")).to_be_hidden()
    assert page.title() == "Inbox · anonbox"

    # One arrives while the page is open: shown live, unread, and "Mark all as read"
    # (back again) reads it too, since the page showed it.
    with loopback_client(base_url=world.server.url, timeout=30) as api:
        post_from(api, account.creator.link_id, "Arrived while you were looking?", 7)
    expect(unread_rows).to_have_count(1)
    expect(page.locator("#unread-count")).to_have_text("1")
    page.get_by_role("button", name="Mark all as read").click()
    expect(page.locator("#done")).to_have_text("All marked as read.")
    expect(page.locator("#unread-count")).to_have_text("0")
    expect(unread_rows).to_have_count(0)


def test_without_javascript_the_filter_and_the_search_are_plain_gets(
    world: World, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    world.speak("en")
    page = new_context(viewport=PHONE_360, java_script_enabled=False).new_page()
    world.sign_in(page)
    page.goto(world.inbox)
    rows = page.locator("#messages .message-row")
    expect(rows).to_have_count(6)

    page.get_by_label("Show").select_option("answered")
    page.get_by_role("button", name="Go").click()
    page.wait_for_url(f"{world.inbox}?q=&filter=answered")
    expect(rows).to_have_count(0)
    expect(page.locator("#inbox-empty")).to_be_visible()
    expect(page.get_by_label("Show")).to_have_value("answered")

    page.get_by_label("Show").select_option("all")
    page.get_by_label("Search messages and replies").fill("pens")
    page.get_by_role("button", name="Go").click()
    page.wait_for_url(f"{world.inbox}/search?q=pens")
    expect(page.locator("#results .message-row")).to_have_count(1)
    expect(page.locator("#results .message-row")).to_contain_text("What pens do you use")
    screenshot(page, "inbox-phone-nojs-search", full_page=False)


def test_the_settings_page_saves_and_says_so_on_a_phone(
    world: World, new_context: Callable[..., BrowserContext]
) -> None:
    account = world.new_account()
    page = new_context(viewport=PHONE_360).new_page()
    page.goto(off_the_loop(signin_link_command, world.server, account.email))
    page.wait_for_url(f"{world.server.url}/dashboard")
    page.get_by_role("link", name="Link settings").click()
    page.wait_for_url(f"**/dashboard/links/{account.creator.link_id}/settings")
    page.get_by_label("Prompt", exact=True).fill("Ask me about the sea")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#toast")).to_contain_text("Settings saved.")  # sent in place
    expect(page.get_by_label("Prompt", exact=True)).to_have_value("Ask me about the sea")
    page.get_by_role("link", name="Back to the inbox").click()
    expect(page.locator(".inbox-prompt")).to_have_text("Ask me about the sea")
