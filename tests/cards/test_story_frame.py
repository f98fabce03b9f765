# ruff: noqa: RUF001 (the samples are text in many scripts)
"""Story cards leave the story's own header and reply bar alone, in every theme, whatever
the texts: the top 250 and the bottom 340 rows of a 1080 by 1920 card are only its
background (the theme's gradient and faint rings), everything else is drawn between; the
longest texts the site allows are drawn whole (shrunk and wrapped, never cut). The
landscape preview is 1200 by 630, drawn with the same fonts and theme (issue 41, items 2
and 3)."""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from PIL import Image, ImageChops

from anonbox.account.avatar import AvatarRef, generated_key, picture
from anonbox.links.schemas import CARD_THEMES
from anonbox.web.cards import fit as card_fit
from anonbox.web.cards.draw import HEIGHT, WIDTH, CardLabels, render_card, render_link_card
from anonbox.web.cards.fonts import FontSet, installed
from anonbox.web.cards.preview import render_preview
from anonbox.web.cards.text import Line
from anonbox.web.cards.themes import THEMES, Theme, background
from tests.cards.test_scripts import SAMPLES, compare, ink, notdef

TOP, BOTTOM = 250, HEIGHT - 340  # the story's header above, its reply bar below

# The longest texts each field takes: a prompt of 300 characters, a message and a reply of
# 500, a name of 80, in the scripts most creators write.
LONGEST = {
    "ja": {
        "prompt": ("なんでも気軽に質問してください。答えられるものには全部答えます！" * 10)[:300],
        "message": ("最近読んだ本の中で、一番おもしろかったのは何ですか？理由も教えて。" * 16)[
            :500
        ],
        "reply": ("『羅生門』です。短いのに、読むたびに新しい発見があります。ぜひ。" * 16)[:500],
        "name": ("さくら・やまもと" * 10)[:80],
    },
    "ko": {
        "prompt": ("무엇이든 편하게 물어보세요. 대답할 수 있는 건 다 대답해요! " * 10)[:300],
        "message": ("요즘 가장 즐겨 듣는 노래가 뭐예요? 추천해 주세요! 이유도요. " * 16)[:500],
        "reply": ("요즘은 아이유의 노래를 자주 들어요. 가사가 정말 아름다워요. " * 16)[:500],
        "name": ("김민지 Minji " * 10)[:80],
    },
    "en": {
        "prompt": ("Ask me anything at all, I answer everything I can, honestly. " * 6)[:300],
        "message": ("What is the one book you keep coming back to, and why that one? " * 9)[:500],
        "reply": ("Incomprehensibilities of characteristically extraordinary words. " * 9)[:500],
        "name": ("Alexandra Konstantinopoulou-Featherstonehaugh " * 2)[:80],
    },
    "ar": {
        "prompt": ("اسألني أي شيء تريد معرفته، سأجيب عن كل الأسئلة بصدق. " * 7)[:300],
        "message": ("ما هو الكتاب الذي غيّر طريقة تفكيرك؟ ولماذا هذا الكتاب بالذات؟ " * 9)[:500],
        "reply": ("كتاب «الأيام» لطه حسين، قرأته في عام 2019 وما زلت أعود إليه. " * 9)[:500],
        "name": ("ليلى عبد الرحمن " * 6)[:80],
    },
    # A text of short lines: 250 line breaks in each (they are what gives way first).
    "line breaks": {"prompt": "Ask", "message": "a\n" * 250, "reply": "b\n" * 250, "name": "X"},
    # Emoji under the per-text cap (``text.EMOJI_PER_TEXT``), among words.
    "emoji": {
        "prompt": "絵文字 🎉✨ " * 30,
        "message": ("家族 👨‍👩‍👧‍👦 いいね 👍🏽 旗 🇯🇵 " * 40)[:500],
        "reply": ("❤️ ありがとう 🏳️‍🌈 " * 40)[:500],
        "name": "Ana 🌻",
    },
}
AVATAR = picture(AvatarRef("generated", generated_key("01JSAKURA")))


@pytest.fixture(scope="module")
def fonts() -> FontSet:
    fonts = installed()
    if fonts.missing:
        message = f"the Noto fonts are not installed (make install, as root): {fonts.missing}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return fonts


def _image(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


def _answer_card(texts: dict[str, str], look: Theme) -> bytes:
    return render_card(
        **texts, url="anonbox.example/a1b2c3d4e5f", avatar=AVATAR, look=look
    )  # fmt: skip


def _link_card(texts: dict[str, str], look: Theme) -> bytes:
    return render_link_card(
        name=texts["name"], prompt=texts["prompt"], url="anonbox.example/a1b2c3d4e5f",
        qr="https://anonbox.example/a1b2c3d4e5f", avatar=AVATAR, look=look,
    )  # fmt: skip


def _drawn_box(card: Image.Image, look: Theme) -> tuple[int, int, int, int]:
    """Where the card differs from its theme's bare background."""
    box = ImageChops.difference(card, background(look, card.size)).getbbox()
    assert box is not None, "nothing drawn on the background"
    return box


def _assert_only_background_in_the_bands(card: Image.Image, look: Theme) -> None:
    # Pixel for pixel the theme's background, drawn by itself ...
    bare = background(look, card.size)
    for top, bottom in ((0, TOP), (BOTTOM, HEIGHT)):
        band = (0, top, WIDTH, bottom)
        difference = ImageChops.difference(card.crop(band), bare.crop(band)).getbbox()
        assert difference is None, f"{look.name}: drawn in rows {top}-{bottom}: {difference}"
    # ... and that background is a gradient with a faint pattern: each pixel within a few
    # levels of its row's colour between the theme's two (text or a logo would stand out).
    for y in (*range(0, TOP, 7), *range(BOTTOM, HEIGHT, 7)):
        share = y / (HEIGHT - 1)
        row = [round(a + (b - a) * share) for a, b in zip(look.top, look.bottom, strict=True)]
        for x in range(0, WIDTH, 5):
            pixel = card.getpixel((x, y))
            assert isinstance(pixel, tuple)
            worst = max(abs(p - r) for p, r in zip(pixel, row, strict=True))
            assert worst <= 20, f"{look.name}: ({x}, {y}) is {pixel}, the gradient {row}"


LANGUAGE_OF_THEME = dict(
    zip(CARD_THEMES, ["ja", "ko", "en", "ar", "emoji", "line breaks"], strict=True)
)


@pytest.mark.parametrize("kind", ["answer", "link"])
@pytest.mark.parametrize("name", CARD_THEMES)
def test_the_story_frame_is_only_background_in_every_theme(
    fonts: FontSet, name: str, kind: str
) -> None:
    """With the longest texts (in a language per theme), a picture and an address, and on
    the link card the QR code: nothing above row 250 or in the last 340 rows; the middle
    has text on it."""
    look = THEMES[name]
    texts = LONGEST[LANGUAGE_OF_THEME[name]]
    card = _image(_answer_card(texts, look) if kind == "answer" else _link_card(texts, look))
    assert card.size == (WIDTH, HEIGHT)
    _assert_only_background_in_the_bands(card, look)
    _, top, _, bottom = _drawn_box(card, look)
    assert top >= TOP
    assert bottom <= BOTTOM
    assert bottom - top > 900  # the middle is used: picture and name down to the address
    middle = card.crop((0, TOP, WIDTH, BOTTOM))
    assert len(middle.getcolors(maxcolors=1 << 16) or range(1 << 16)) > 500  # text, anti-aliased


def test_short_texts_stay_in_the_middle_too(fonts: FontSet) -> None:
    """A short card is centred in the room, not pushed into the bands."""
    sample = SAMPLES["japanese"]
    for look in THEMES.values():
        card = _image(
            render_card(
                prompt=sample.prompt, message=sample.message, reply=sample.reply,
                name=sample.name, avatar=AVATAR, url="anonbox.example/x", look=look,
            )
        )  # fmt: skip
        _assert_only_background_in_the_bands(card, look)
        _, top, _, bottom = _drawn_box(card, look)
        assert top >= TOP
        assert bottom <= BOTTOM


def test_the_themes_look_different(fonts: FontSet) -> None:
    texts = {"prompt": "Ask", "message": "Hello?", "reply": "Hi!", "name": "Zoë"}
    cards = {render_card(**texts, look=look) for look in THEMES.values()}
    assert len(cards) == len(CARD_THEMES) == len(THEMES)

    # Light and dark ones: the night theme is dark, the paper one light.
    def lightness(look: Theme) -> float:
        return sum(look.top) / 3

    assert lightness(THEMES["night"]) < 40 < 200 < lightness(THEMES["paper"])


@contextmanager
def _drawn_lines() -> Iterator[list[Line]]:
    """The lines the card draws (spied on as they are drawn)."""
    drawn: list[Line] = []
    original = card_fit.draw_line

    def spy(image: Image.Image, line: Line, **kwargs: object) -> None:
        drawn.append(line)
        original(image, line, **kwargs)  # type: ignore[arg-type]

    card_fit.draw_line = spy  # type: ignore[assignment]
    try:
        yield drawn
    finally:
        card_fit.draw_line = original


def _characters(text: str) -> Counter[str]:
    return Counter(c for c in text if not c.isspace())


@pytest.mark.parametrize("language", list(LONGEST))
def test_the_longest_texts_are_drawn_whole_inside_the_middle(fonts: FontSet, language: str) -> None:
    """Every character of the prompt, the message and the reply is drawn (shrunk and
    wrapped to fit, not cut: no "…" takes the place of any), and the drawing ends above
    row 1580."""
    texts = LONGEST[language]
    with _drawn_lines() as lines:
        card = _image(_answer_card(texts, THEMES["violet"]))
    drawn = Counter[str]()
    for line in lines:
        for run in line.runs:
            drawn.update(_characters(run.text))
    wanted = _characters(texts["prompt"] + texts["message"] + texts["reply"])
    assert not wanted - drawn, f"not drawn: {wanted - drawn}"
    assert "…" not in drawn or "…" in wanted
    _, top, _, bottom = _drawn_box(card, THEMES["violet"])
    assert top >= TOP
    assert bottom < BOTTOM
    # The link card, with the longest prompt and name, the same.
    with _drawn_lines() as lines:
        card = _image(_link_card(texts, THEMES["violet"]))
    drawn = Counter(c for line in lines for run in line.runs for c in run.text)
    assert not _characters(texts["prompt"]) - drawn
    _, top, _, bottom = _drawn_box(card, THEMES["violet"])
    assert top >= TOP
    assert bottom < BOTTOM


# --- the landscape preview -----------------------------------------------------------------


@pytest.mark.parametrize("language", ["ja", "ko", "en", "ar"])
def test_a_preview_is_landscape_with_every_text_whole(fonts: FontSet, language: str) -> None:
    texts = LONGEST[language]
    with _drawn_lines() as lines:
        png = render_preview(
            name=texts["name"], message=texts["message"], reply=texts["reply"],
            url="anonbox.example/a1b2c3d4e5f", avatar=AVATAR, look=THEMES["ocean"],
        )  # fmt: skip
    preview = _image(png)
    assert preview.size == (1200, 630)
    drawn = Counter(c for line in lines for run in line.runs for c in run.text)
    assert not _characters(texts["message"] + texts["reply"]) - drawn
    left, top, right, bottom = _drawn_box(preview, THEMES["ocean"])
    assert left >= 40
    assert top >= 32
    assert right <= 1200 - 40
    assert bottom <= 630 - 32


PREVIEWS = {
    "preview-link-japanese": {
        "name": "さくら",
        "prompt": "匿名でメッセージを送ってね 💌",
        "labels": CardLabels(invitation="匿名でメッセージを送ってね"),
        "look": "peach",
    },
    "preview-answer-korean": {
        "name": "민지",
        "message": SAMPLES["korean"].message,
        "reply": SAMPLES["korean"].reply,
        "labels": CardLabels(anonymous_message="익명 메시지", replied="%(name)s 님의 답변"),
        "look": "night",
    },
    "preview-answer-arabic": {
        "name": SAMPLES["arabic"].name,
        "message": SAMPLES["arabic"].message,
        "reply": SAMPLES["arabic"].reply,
        "look": "mint",
    },
    "preview-answer-emoji": {
        "name": SAMPLES["emoji"].name,
        "message": SAMPLES["emoji"].message,
        "reply": SAMPLES["emoji"].reply + " Ελένη Оксана สมชาย 小明 נועה",
        "look": "paper",
    },
}


@pytest.mark.parametrize("name", list(PREVIEWS))
def test_a_preview_in_each_script_looks_like_its_reference(fonts: FontSet, name: str) -> None:
    """References looked at by a person: every script in its font, emoji in colour."""
    options = dict(PREVIEWS[name])
    look = THEMES[str(options.pop("look"))]
    png = render_preview(**options, url="anonbox.example/a1b2c3d4", avatar=AVATAR, look=look)  # type: ignore[arg-type]
    compare(name, png, size=(1200, 630))


@pytest.mark.parametrize("script", list(SAMPLES))
def test_a_preview_draws_every_script_in_a_font_that_has_it(fonts: FontSet, script: str) -> None:
    """No box for a missing glyph: each letter the preview draws, drawn alone in its
    font, is not the font's drawing of a character it lacks."""
    sample = SAMPLES[script]
    with _drawn_lines() as lines:
        render_preview(name=sample.name, message=sample.message, reply=sample.reply)
    drawn = [(run.face, c) for line in lines for run in line.runs for c in run.text]
    assert _characters(sample.message + sample.reply) <= Counter(c for _, c in drawn)
    for face, character in drawn:
        if face.emoji or character.isspace() or ord(character) in {0x200C, 0x200D, 0xFE0F}:
            continue
        assert ink(face, character) != notdef(face), f"{script}: {character!r} is a box"
