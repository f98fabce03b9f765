"""The landscape previews through the real server (issue 41, item 2): a link's
(``/{link_id}/preview.png``) and a published answer's
(``/{link_id}/a/{answer_id}/preview.png``), 1200 by 630, in the link's theme and language,
cached like the story cards (ETag, 304, ``Cache-Control: public, max-age=300``); an answer
never published is 404, one removed since 410 (as its page)."""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from PIL import Image

from anonbox.account.avatar import AvatarRef, picture
from anonbox.core.i18n import gettext, use_locale
from anonbox.web.cards.draw import CardLabels
from anonbox.web.cards.preview import render_preview
from anonbox.web.cards.themes import THEMES
from tests.actions import answer_path, assert_error, post_message, post_reply
from tests.conftest import Creator
from tests.server import Server

HTML = {"Accept": "text/html,application/xhtml+xml"}
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "cards"


def _png(response: httpx.Response) -> Image.Image:
    assert response.status_code == 200, response.text[:300]
    assert response.headers["content-type"] == "image/png"
    assert response.headers["cache-control"] == "public, max-age=300"
    image = Image.open(io.BytesIO(response.content))
    assert (image.format, image.size) == ("PNG", (1200, 630))
    return image


def _patched(api: httpx.Client, creator: Creator, **fields: str) -> None:
    changed = api.patch(f"/links/{creator.link_id}", json=fields, headers=creator.headers)
    assert changed.status_code == 200, changed.text


def test_a_links_preview_is_landscape_in_its_theme_and_language(
    api: httpx.Client, creator: Creator, server: Server
) -> None:
    path = f"/{creator.link_id}/preview.png"
    first = api.get(path)
    _png(first)
    again = api.get(path, headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    # Another theme: another picture, with the theme's background at its corner.
    _patched(api, creator, card_theme="night")
    night = api.get(path, headers={"If-None-Match": first.headers["etag"]})
    image = _png(night).convert("RGB")
    corner = image.getpixel((2, 2))
    assert isinstance(corner, tuple)
    assert max(abs(a - b) for a, b in zip(corner, THEMES["night"].top, strict=True)) <= 20
    # In Japanese: exactly the preview drawn with the Japanese words, whoever asks.
    _patched(api, creator, language="ja", prompt="匿名で質問してね 💌")
    with use_locale("ja"):
        labels = CardLabels(
            anonymous_message=gettext("Anonymous message"),
            replied=gettext("%(name)s replied"),
            invitation=gettext("Send me anonymous messages"),
        )
        name = gettext("The creator")  # no name chosen: the neutral one, in Japanese
    assert labels.invitation != "Send me anonymous messages"
    japanese = api.get(path, headers={"Accept-Language": "ko"})
    _png(japanese)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "preview-link-ja.png").write_bytes(japanese.content)
    assert japanese.content == render_preview(
        name=name,
        prompt="匿名で質問してね 💌",
        url=f"{urlsplit(server.url).netloc}/{creator.link_id}",
        avatar=picture(AvatarRef("neutral")),
        labels=labels,
        look=THEMES["night"],
    )


def test_an_answers_preview_shows_the_question_and_the_answer(
    api: httpx.Client, creator: Creator, server: Server
) -> None:
    message_id = post_message(api, creator.link_id, "Which boat would you take?")
    post_reply(api, creator, message_id, "A red canoe, every time")
    page = answer_path(api, creator.link_id, message_id)
    response = api.get(f"{page}/preview.png")
    _png(response)
    public = api.get(f"/links/{creator.link_id}/public").json()["data"]
    assert response.content == render_preview(
        name=public["creator_name"].strip() or "The creator",
        message="Which boat would you take?",
        reply="A red canoe, every time",
        url=f"{urlsplit(server.url).netloc}/{creator.link_id}",
        avatar=picture(AvatarRef("neutral")),
    )
    cached = api.get(f"{page}/preview.png", headers={"If-None-Match": response.headers["etag"]})
    assert cached.status_code == 304
    # A newer reply is a new picture.
    post_reply(api, creator, message_id, "Or a kayak")
    newer = api.get(f"{page}/preview.png", headers={"If-None-Match": response.headers["etag"]})
    assert newer.status_code == 200
    assert newer.content != response.content


def test_no_preview_of_an_answer_never_published_and_410_once_removed(
    api: httpx.Client, creator: Creator
) -> None:
    unanswered = post_message(api, creator.link_id, "still waiting")
    assert_error(api.get(f"/{creator.link_id}/a/{unanswered[:12]}/preview.png"), 404, "not_found")
    assert_error(api.get(f"/{creator.link_id}/a/AAAAAAAAAAAA/preview.png"), 404, "not_found")
    assert api.get(f"/{creator.link_id}/a/nope/preview.png", headers=HTML).status_code == 404
    assert_error(api.get("/nolinkhere/preview.png"), 404, "not_found")
    message_id = post_message(api, creator.link_id, "soon gone")
    post_reply(api, creator, message_id, "yes")
    page = answer_path(api, creator.link_id, message_id)
    assert api.get(f"{page}/preview.png").status_code == 200
    deleted = api.delete(f"/message/{creator.link_id}/{message_id}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    assert api.get(f"{page}/preview.png", headers=HTML).status_code == 410
    assert_error(api.get(f"{page}/preview.png"), 404, "gone")
