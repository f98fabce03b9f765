"""An answer's own page on a 360 px phone (issue 41, item 1), as a visitor who followed a
shared link sees it: in English, Japanese and Korean, light and dark, axe clean, no wider
than the screen; from the send page a tap on an answer opens it, and from it one tap
leads to asking one's own question. Screenshots:
``test-artifacts/screenshots/answer-page-<lang>-<theme>.png``."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.actions import answer_path, post_reply
from tests.browser.conftest import Axe, Screenshot, Site

PHONE_360 = {"width": 360, "height": 740}
LONG_WORD = "Supercalifragilisticexpialidocious" * 3
QUESTIONS = {
    "en": ("Which pens do you use for inking, and which paper?", f"Fineliners. {LONG_WORD}"),
    "ja": (
        "インクを入れるときはどのペンと紙を使っていますか？",  # noqa: RUF001 - Japanese
        "ミリペンと画用紙です。毎日描いています。",
    ),
    "ko": ("펜 선을 그릴 때 어떤 펜과 종이를 써요?", "피그마 펜이랑 켄트지를 써요. 매일 그려요."),
}
LOCALES = {"en": "en-GB", "ja": "ja-JP", "ko": "ko-KR"}
NAMES = {"en": "Hanako", "ja": "ゆき", "ko": "민지"}


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_an_answer_page_fits_a_phone_and_passes_axe(
    site: Site,
    new_context: Callable[..., BrowserContext],
    axe: Axe,
    screenshot: Screenshot,
    lang: str,
    theme: str,
) -> None:
    if site.backend != "sqlite" and (lang, theme) != ("en", "light"):
        pytest.skip("layout and contrast do not depend on the database: once on PostgreSQL")
    creator = site.new_creator()
    question, reply = QUESTIONS[lang]
    message_id = site.post_message(creator.link_id, question)
    with site.api() as api:
        named = api.patch(
            "/account/profile", json={"display_name": NAMES[lang]}, headers=creator.headers
        )
        assert named.status_code == 200, named.text
        post_reply(api, creator, message_id, reply)
        path = answer_path(api, creator.link_id, message_id)
    context = new_context(viewport=PHONE_360, color_scheme=theme, locale=LOCALES[lang])
    page = context.new_page()
    response = page.goto(f"{site.url}{path}")
    assert response is not None
    assert response.status == 200
    assert page.locator("html").get_attribute("lang") == lang
    expect(page.locator("#question")).to_have_text(question)
    expect(page.locator("#replies")).to_contain_text(reply)
    expect(page.locator("#creator-name")).to_have_text(NAMES[lang])
    expect(page.locator("#ask-title")).to_contain_text(NAMES[lang])
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert axe(page) == []
    assert context.cookies() == []  # the page set none
    screenshot(page, f"answer-page-{lang}-{theme}")


def test_from_the_send_page_to_an_answer_and_on_to_ones_own_question(
    site: Site, new_context: Callable[..., BrowserContext]
) -> None:
    creator = site.new_creator()
    message_id = site.post_message(creator.link_id, "Tea or coffee?")
    with site.api() as api:
        post_reply(api, creator, message_id, "Tea, always")
        path = answer_path(api, creator.link_id, message_id)
    page = new_context(viewport=PHONE_360).new_page()
    page.goto(f"{site.url}/{creator.link_id}")
    page.get_by_role("link", name="Tea or coffee?").click()
    expect(page).to_have_url(f"{site.url}{path}")
    expect(page.locator("#replies")).to_contain_text("Tea, always")
    page.locator("#ask-link").click()
    expect(page).to_have_url(f"{site.url}/{creator.link_id}")
    expect(page.locator("#message")).to_be_visible()
