# ruff: noqa: RUF001 (questions in many scripts)
"""The stream overlay fits the longest question (500 characters, in any script, or 250
short lines) inside OBS's browser source at 1920x1080 and 1280x720, legibly: measured in
Chromium, no text's computed size under 14 px, every box inside the viewport, nothing
scrolled or clipped; a short question stays large. With scripts (the size steps down to
what fits, again when the question changes through the live stream) and without (the
stylesheet's size for the question's length) (issue 41, item 3)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import Screenshot, Site, off_the_loop
from tests.support.signin import signin_link_command

SIZES = {"1080p": {"width": 1920, "height": 1080}, "720p": {"width": 1280, "height": 720}}
QUESTIONS = {
    "japanese": ("最近読んだ本の中で、一番おもしろかったのは何ですか？理由も教えてください。" * 14)[
        :500
    ],
    "korean": ("요즘 가장 즐겨 듣는 노래가 뭐예요? 추천해 주세요! 이유도 알려 주세요. " * 14)[:500],
    "english": (
        "What is the one book you keep coming back to, and why that one? "
        "https://example.org/a/very/long/address/without/any/spaces/in/it/at/all/"
        + "Incomprehensibilities "
        * 20
    )[:500],
    "arabic": ("ما هو الكتاب الذي غيّر طريقة تفكيرك؟ ولماذا هذا الكتاب بالذات؟ " * 10)[:500],
    "emoji": "😀🎉👍🏽🇯🇵❤️" * 50,
    "short lines": "a\n" * 249 + "z",
}
SHORT = "Favourite song this week?"

_MEASURE = """() => {
  const root = document.documentElement;
  const found = {width: innerWidth, height: innerHeight, scrollWidth: root.scrollWidth,
                 scrollHeight: root.scrollHeight, boxes: []};
  for (const element of document.querySelectorAll("main, main *")) {
    if (element.hidden || element.getClientRects().length === 0) continue;
    const box = element.getBoundingClientRect();
    found.boxes.push({name: element.id || element.className || element.tagName,
      size: parseFloat(getComputedStyle(element).fontSize), top: box.top, left: box.left,
      bottom: box.bottom, right: box.right,
      clipped: element.scrollHeight > element.clientHeight + 1
        || element.scrollWidth > element.clientWidth + 1});
  }
  found.text = document.getElementById("question").textContent;
  return found;
}"""


def _assert_fits(page: Page, text: str, where: str) -> float:
    """The question, whole, inside the viewport, at 14 px or more; its size."""
    found: dict[str, Any] = page.evaluate(_MEASURE)
    assert found["text"] == text, where
    assert found["scrollWidth"] <= found["width"], where
    assert found["scrollHeight"] <= found["height"], where
    assert {box["name"] for box in found["boxes"]} >= {"question", "overlay-label"}, where
    for box in found["boxes"]:
        assert box["size"] >= 14, f"{where}: {box['name']} at {box['size']} px"
        assert box["left"] >= 0, f"{where}: {box}"
        assert box["top"] >= 0, f"{where}: {box}"
        assert box["right"] <= found["width"], f"{where}: {box}"
        assert box["bottom"] <= found["height"], f"{where}: {box}"
        assert not box["clipped"], f"{where}: {box}"
    [question] = [box for box in found["boxes"] if box["name"] == "question"]
    return float(question["size"])


def _shown(page: Page, text: str) -> None:
    page.wait_for_function(
        "text => document.getElementById('question').textContent === text", arg=text
    )


def test_the_longest_questions_fit_the_overlay_legibly(
    site: Site, new_context: Callable[..., BrowserContext], screenshot: Screenshot
) -> None:
    creator = new_context(viewport={"width": 1280, "height": 800}).new_page()
    creator.goto(
        off_the_loop(signin_link_command, site.server, f"fit-{uuid.uuid4().hex[:10]}@x.org")
    )
    link_id = creator.locator("#inbox").get_attribute("data-link-id")
    assert link_id

    def show(text: str) -> None:
        message_id = site.post_message(link_id, text)
        creator.goto(f"{site.url}/dashboard/links/{link_id}/messages/{message_id}")
        creator.get_by_role("button", name="Show on stream").click()
        expect(creator.locator("#toast p")).to_have_text("On your stream overlay now.")

    show(SHORT)
    creator.goto(f"{site.url}/dashboard/stream")
    address = creator.locator("#overlay-url").input_value()
    overlays = {}
    for name, viewport in SIZES.items():
        overlays[name] = new_context(viewport=viewport).new_page()  # OBS: no cookies
        overlays[name].goto(address)
        _shown(overlays[name], SHORT)
        # A short question stays large: a screen away, it is read from across the room.
        assert _assert_fits(overlays[name], SHORT, f"short at {name}") >= 40
    still = {
        name: new_context(viewport=viewport, java_script_enabled=False).new_page()
        for name, viewport in SIZES.items()
    }

    for kind, text in QUESTIONS.items():
        show(text)
        for name, page in overlays.items():
            _shown(page, text)  # through the live stream, no reload
            _assert_fits(page, text, f"{kind} at {name}")
            if kind == "japanese":
                screenshot(page, f"stream-overlay-500-ja-{name}-{site.backend}", full_page=False)
        for name, page in still.items():  # without scripts: the stylesheet's sizes alone
            page.goto(address)
            _assert_fits(page, text, f"{kind} at {name} without scripts")
            if kind == "japanese":
                screenshot(page, f"stream-overlay-500-ja-{name}-noscript-{site.backend}",
                           full_page=False)  # fmt: skip
    # Back to a short question: large again (the size is fitted anew, not kept).
    show(SHORT)
    for name, page in overlays.items():
        _shown(page, SHORT)
        assert _assert_fits(page, SHORT, f"short again at {name}") >= 40
