"""A link's language and card theme in its settings page (issue 41, item 2), as a creator
uses them on a 360 px phone: a language select and a theme choice, saved with the other
settings, and the link's previews then speak that language to every visitor. Screenshots
in English, Japanese and Korean, light and dark:
``test-artifacts/screenshots/link-looks-<lang>-<theme>.png``; axe clean, nothing wider than
the screen. Layout on SQLite only (HTML and CSS); the settings' rules are tested over HTTP
on both databases (tests/links/test_link_language.py, tests/web/test_previews.py)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from anonbox.links.schemas import CARD_THEMES
from tests.browser.conftest import Axe, Screenshot, off_the_loop, own_server
from tests.server import Server
from tests.support.admin import Admin, make_account
from tests.support.db import execute
from tests.support.http import loopback_client
from tests.support.signin import signin_link_command

PHONE_360 = {"width": 360, "height": 740}
LOCALES = {"en": "en-GB", "ja": "ja-JP", "ko": "ko-KR"}
WIDTH = "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"

link_looks = own_server("link_looks", {}, backends=("sqlite",))


@pytest.fixture(scope="module")
def account(link_looks: Server) -> Admin:
    return off_the_loop(lambda: make_account(link_looks.database_url, admin=False))


def opened_settings(
    server: Server, account: Admin, new_context: Callable[..., BrowserContext], **options: str
) -> Page:
    page = new_context(viewport=PHONE_360, **options).new_page()
    page.goto(off_the_loop(signin_link_command, server, account.email))
    page.wait_for_url(f"{server.url}/dashboard")
    page.goto(f"{server.url}/dashboard/links/{account.creator.link_id}/settings")
    return page


def preview_tag(server: Server, link_id: str, key: str) -> str:
    """What a crawler asking in English reads in a preview tag of the send page."""
    with loopback_client(base_url=server.url, timeout=30) as api:
        page = api.get(f"/{link_id}", headers={"Accept": "text/html", "Accept-Language": "en"})
    found = re.search(rf'<meta property="{re.escape(key)}" content="([^"]*)">', page.text)
    assert found, key
    return html.unescape(found.group(1))


@pytest.mark.parametrize("lang", sorted(LOCALES))
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_language_and_theme_fit_a_phone(
    link_looks: Server,
    account: Admin,
    new_context: Callable[..., BrowserContext],
    screenshot: Screenshot,
    axe: Axe,
    lang: str,
    scheme: str,
) -> None:
    off_the_loop(
        execute,
        link_looks.database_url,
        "UPDATE users SET language = $1 WHERE email = $2",
        lang,
        account.email,
    )
    page = opened_settings(
        link_looks, account, new_context, locale=LOCALES[lang], color_scheme=scheme
    )
    expect(page.locator("html")).to_have_attribute("lang", lang)
    page.locator("#link-language").scroll_into_view_if_needed()
    screenshot(page, f"link-looks-{lang}-{scheme}", full_page=False)
    screenshot(page, f"link-looks-full-{lang}-{scheme}")
    assert page.evaluate(WIDTH) <= 360
    # Every theme, one chosen; each language named in its own words.
    radios = page.locator("#card-theme input[type=radio]")
    assert radios.evaluate_all("all => all.map(radio => radio.value)") == list(CARD_THEMES)
    expect(page.locator("#card-theme input:checked")).to_have_count(1)
    expect(page.locator("#link-language option[lang=ko]")).to_have_text("한국어")
    assert axe(page) == []


def test_a_language_and_theme_chosen_in_the_settings_reach_the_previews(
    link_looks: Server,
    account: Admin,
    new_context: Callable[..., BrowserContext],
) -> None:
    link_id = account.creator.link_id
    off_the_loop(
        execute,
        link_looks.database_url,
        "UPDATE users SET language = 'en' WHERE email = $1",
        account.email,
    )
    page = opened_settings(link_looks, account, new_context, locale="en-GB")
    language = "Language of the link’s previews and cards"  # noqa: RUF001 - as typeset
    page.get_by_label(language).select_option("한국어")
    page.get_by_label("Night (dark)").check()
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_text("Settings saved.")).to_be_visible()

    page.reload()
    expect(page.locator("#link-language")).to_have_value("ko")
    expect(page.get_by_label("Night (dark)")).to_be_checked()
    assert off_the_loop(preview_tag, link_looks, link_id, "og:locale") == "ko_KR"
    assert off_the_loop(preview_tag, link_looks, link_id, "og:title").endswith("익명 메시지 보내기")
