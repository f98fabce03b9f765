# ruff: noqa: RUF001 - Japanese and Chinese text has its own full-width punctuation
"""What a person wrote in Korean or Japanese is marked with its language on a page in
another one (issue 41, item 6; docs/decisions.md, "Type set for CJK"), over HTTP as a
browser gets the send page: so it breaks lines as its language does and is read aloud in
it. Text in Han alone (Chinese, or Japanese without kana) and Latin text are not marked,
nor is text in the page's own language. On SQLite and PostgreSQL."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from tests.actions import post_message, post_reply
from tests.conftest import Creator

TEXTS = {
    "ko": "요즘 가장 즐겨 듣는 노래가 뭐예요?",
    "ja": "最近ハマっているものは何ですか？",
    "han": "你最喜欢的歌是什么？",
    "latin": "What song do you like best?",
}


def lang_of_question(page: str, text: str) -> str | None:
    """The ``lang`` of the answer whose question is ``text`` on a send page, if any."""
    found = re.search(r'<p class="question"([^>]*)><a[^>]*>' + re.escape(html.escape(text)), page)
    assert found, f"{text!r} is not an answer on the page"
    lang = re.search(r'lang="([^"]+)"', found.group(1))
    return lang.group(1) if lang else None


@pytest.mark.parametrize(
    ("page_language", "expected"),
    [
        ("en", {"ko": "ko", "ja": "ja", "han": None, "latin": None}),
        ("ko", {"ko": None, "ja": "ja", "han": None, "latin": None}),
        ("ja", {"ko": "ko", "ja": None, "han": None, "latin": None}),
    ],
)
def test_korean_and_japanese_answers_carry_their_language(
    api: httpx.Client, creator: Creator, page_language: str, expected: dict[str, str | None]
) -> None:
    for text in TEXTS.values():
        post_reply(api, creator, post_message(api, creator.link_id, text), "🙂")

    page = api.get(f"/{creator.link_id}", headers={"Accept-Language": page_language})

    assert page.status_code == 200, page.text
    assert f'<html lang="{page_language}">' in page.text
    assert {key: lang_of_question(page.text, text) for key, text in TEXTS.items()} == expected
