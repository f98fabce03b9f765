"""Previews in the link's language (issue 41, item 2): what a chat or a feed shows of a
shared send page or answer page (og:title, og:description, og:locale, the image and its
alt text) speaks the language of the link (its setting, else its creator's), whatever
language the visitor's browser asks for; the page around it stays the visitor's. Over
HTTP as a link-preview crawler gets the pages, on SQLite and PostgreSQL."""

from __future__ import annotations

import html
import re

import httpx
import pytest
import regex

from tests.actions import data_of, post_message, post_reply
from tests.conftest import Creator
from tests.server import Server
from tests.support.signin import signed_in

# Per language: the creator's name and prompt, then what the preview must read.
NAMES = {"ja": "ゆき", "ko": "민지", "en": "Sam", "id": "Putri", "es": "Lucía"}
PROMPTS = {
    "ja": "なんでも聞いてね",
    "ko": "무엇이든 물어보세요",
    "en": "Ask me anything",
    "id": "Tanya apa saja",
    "es": "Pregúntame lo que quieras",
}
SEND_TITLES = {
    "ja": "ゆきさんに匿名でメッセージを送る",
    "ko": "민지님에게 익명 메시지 보내기",
    "en": "Send Sam an anonymous message",
    "id": "Kirim pesan anonim ke Putri",
    "es": "Envía un mensaje anónimo a Lucía",
}
SEND_ALTS = {
    "ja": "ゆきさん：「なんでも聞いてね」",  # noqa: RUF001 - Japanese colons
    "ko": "민지님: “무엇이든 물어보세요”",
    "en": "Sam asks: Ask me anything",
    "id": "Putri bertanya: Tanya apa saja",
    "es": "Lucía pregunta: Pregúntame lo que quieras",
}
QUESTION, ANSWER = "🍜 or 🍣?", "🍜, always"
ANSWER_TITLES = {
    "ja": "ゆきさんが匿名メッセージに返信しました",
    "ko": "민지님이 익명 메시지에 답장했어요",
    "en": "Sam replied to an anonymous message",
    "id": "Putri membalas pesan anonim",
    "es": "Lucía respondió a un mensaje anónimo",
}
ANSWER_DESCRIPTIONS = {
    "ja": "「🍜 or 🍣?」への返信：🍜, always",  # noqa: RUF001 - Japanese colons
    "ko": "“🍜 or 🍣?”에 대한 답장: 🍜, always",
    "en": "“🍜 or 🍣?” — 🍜, always",
    "id": "“🍜 or 🍣?” — 🍜, always",
    "es": "«🍜 or 🍣?» — 🍜, always",
}
ANSWER_ALTS = {
    "ja": "匿名メッセージ：「🍜 or 🍣?」。ゆきさんの返信：「🍜, always」",  # noqa: RUF001 - Japanese colons
    "ko": "익명 메시지: “🍜 or 🍣?”. 민지님의 답장: “🍜, always”",
    "en": "Anonymous message: “🍜 or 🍣?”. Sam replied: “🍜, always”",
    "id": "Pesan anonim: “🍜 or 🍣?”. Balasan Putri: “🍜, always”",
    "es": "Mensaje anónimo: «🍜 or 🍣?». Respuesta de Lucía: «🍜, always»",
}
OG_LOCALES = {"ja": "ja_JP", "ko": "ko_KR", "en": "en_US", "id": "id_ID", "es": "es_ES"}
LANGUAGES = sorted(NAMES)


def meta(page: str, key: str) -> str:
    """The content of the one meta tag whose ``property`` or ``name`` is ``key``."""
    found = re.findall(rf'<meta (?:property|name)="{re.escape(key)}" content="([^"]*)">', page)
    assert len(found) == 1, (key, found)
    return html.unescape(found[0])


def lang_of(page: str) -> str:
    found = re.search(r'<html lang="([^"]+)"', page)
    assert found
    return found.group(1)


def another_language(language: str) -> str:
    """A visitor's browser that asks for something else than the link speaks."""
    return "ko" if language == "ja" else "ja"


def visited(api: httpx.Client, path: str, language: str) -> str:
    page = api.get(path, headers={"Accept": "text/html", "Accept-Language": language})
    assert page.status_code == 200, page.text
    assert lang_of(page.text) == language  # the page around the previews: the visitor's
    return page.text


def furnish(api: httpx.Client, creator: Creator, language: str) -> None:
    named = api.patch(
        "/account/profile", json={"display_name": NAMES[language]}, headers=creator.headers
    )
    assert named.status_code == 200, named.text
    data_of(
        api.patch(
            f"/links/{creator.link_id}", json={"prompt": PROMPTS[language]}, headers=creator.headers
        )
    )


def speak(api: httpx.Client, creator: Creator, language: str) -> None:
    """The creator sets the link's language, as the API lets them."""
    changed = data_of(
        api.patch(f"/links/{creator.link_id}", json={"language": language}, headers=creator.headers)
    )
    assert changed["language"] == language


def published_answer(api: httpx.Client, creator: Creator) -> str:
    """A question answered, and the path of its answer page as the send page links it."""
    message_id = post_message(api, creator.link_id, QUESTION)
    post_reply(api, creator, message_id, ANSWER)
    page = api.get(f"/{creator.link_id}", headers={"Accept": "text/html"}).text
    found = re.findall(rf'href="(/{creator.link_id}/a/[A-Za-z0-9_-]+)"', page)
    assert found, page
    return found[0]


def assert_send_preview(page: str, server: Server, creator: Creator, language: str) -> None:
    site, link_id = server.url, creator.link_id
    assert meta(page, "og:title") == SEND_TITLES[language]
    assert meta(page, "twitter:title") == SEND_TITLES[language]
    assert meta(page, "og:description") == PROMPTS[language]
    assert meta(page, "twitter:description") == PROMPTS[language]
    assert meta(page, "og:locale") == OG_LOCALES[language]
    assert meta(page, "og:image:alt") == SEND_ALTS[language]
    assert meta(page, "twitter:image:alt") == SEND_ALTS[language]
    assert meta(page, "og:url") == f"{site}/{link_id}"
    # The landscape preview, which a summary_large_image card shows whole.
    assert meta(page, "og:image") == f"{site}/{link_id}/preview.png"
    assert meta(page, "twitter:image") == f"{site}/{link_id}/preview.png"
    assert (meta(page, "og:image:width"), meta(page, "og:image:height")) == ("1200", "630")
    assert meta(page, "twitter:card") == "summary_large_image"


def assert_answer_preview(page: str, server: Server, path: str, language: str) -> None:
    assert meta(page, "og:title") == ANSWER_TITLES[language]
    assert meta(page, "twitter:title") == ANSWER_TITLES[language]
    assert meta(page, "og:description") == ANSWER_DESCRIPTIONS[language]
    assert meta(page, "twitter:description") == ANSWER_DESCRIPTIONS[language]
    assert meta(page, "og:locale") == OG_LOCALES[language]
    assert meta(page, "og:image:alt") == ANSWER_ALTS[language]
    assert meta(page, "twitter:image:alt") == ANSWER_ALTS[language]
    assert meta(page, "og:url") == f"{server.url}{path}"
    assert meta(page, "og:image") == f"{server.url}{path}/preview.png"
    assert meta(page, "twitter:image") == f"{server.url}{path}/preview.png"
    assert (meta(page, "og:image:width"), meta(page, "og:image:height")) == ("1200", "630")
    assert meta(page, "twitter:card") == "summary_large_image"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_previews_speak_the_links_language_to_any_visitor(
    api: httpx.Client, creator: Creator, server: Server, language: str
) -> None:
    furnish(api, creator, language)
    speak(api, creator, language)
    path = published_answer(api, creator)
    visitor = another_language(language)

    assert_send_preview(visited(api, f"/{creator.link_id}", visitor), server, creator, language)
    assert_answer_preview(visited(api, path, visitor), server, path, language)


@pytest.mark.parametrize("language", ["ja", "ko"])
def test_a_link_without_a_language_speaks_its_creators(
    api: httpx.Client, creator: Creator, server: Server, language: str
) -> None:
    """The creator's account takes its language from their browser on their first
    dashboard page; their first link, made without one (on the command line), follows it."""
    furnish(api, creator, language)
    path = published_answer(api, creator)
    before = visited(api, f"/{creator.link_id}", "es")
    assert meta(before, "og:title") == f"Send {NAMES[language]} an anonymous message"
    assert meta(before, "og:locale") == "en_US"  # the account has no language yet

    with signed_in(server, creator.user_id) as browser:
        first = browser.get("/dashboard", headers={"Accept-Language": language})
        assert first.status_code == 200, first.text
    public = data_of(api.get(f"/links/{creator.link_id}/public"))
    assert public["language"] == language
    assert data_of(api.get(f"/links/{creator.link_id}", headers=creator.headers))["language"] == (
        language
    )
    assert_send_preview(visited(api, f"/{creator.link_id}", "es"), server, creator, language)
    assert_answer_preview(visited(api, path, "es"), server, path, language)


def test_the_links_own_language_wins_over_its_creators(
    api: httpx.Client, creator: Creator, server: Server
) -> None:
    furnish(api, creator, "id")
    with signed_in(server, creator.user_id) as browser:
        assert browser.get("/dashboard", headers={"Accept-Language": "ko"}).status_code == 200
    speak(api, creator, "id")
    assert_send_preview(visited(api, f"/{creator.link_id}", "ja"), server, creator, "id")


def test_long_texts_are_shortened_in_the_preview_never_inside_an_emoji(
    api: httpx.Client, creator: Creator
) -> None:
    family = "👨‍👩‍👧‍👦"  # one grapheme of seven code points
    question = "q" * 100 + family * 50  # 150 graphemes, 450 code points
    answer = "a" * 80 + family * 50  # 130 graphemes
    message_id = post_message(api, creator.link_id, question)
    post_reply(api, creator, message_id, answer)
    page = api.get(f"/{creator.link_id}", headers={"Accept": "text/html"}).text
    [path, *_] = re.findall(rf'href="(/{creator.link_id}/a/[A-Za-z0-9_-]+)"', page)
    answer_page = api.get(path, headers={"Accept": "text/html"}).text
    description = meta(answer_page, "og:description")
    alt = meta(answer_page, "og:image:alt")
    assert len(regex.findall(r"\X", alt)) <= 420  # what X keeps of an alt text
    assert description.count("…") == 2  # both cut for a line or two of a card
    assert alt.count("…") == 1  # the question; the answer fits
    assert alt.endswith(family * 50 + "”")
    for text in (description, alt):
        # Cut between families, never inside one: every family is whole.
        assert "\u200d" not in text.replace(family, ""), text
