# ruff: noqa: RUF001 (the samples are text in many scripts, look-alike letters included)
"""Share cards in every script: each drawn card is compared with a reference image committed
under ``tests/cards/reference/`` (looked at by a person when it was made), no glyph is the
font's missing-glyph box, emoji sequences are one picture, right-to-left text runs from
the right, and lines break where the script allows.

``ANONBOX_UPDATE_REFERENCES=1`` redraws the references instead of comparing (then look at
them before committing: ``make test`` never does this). One card per script is copied to
``test-artifacts/cards/`` for reviewers.
"""

from __future__ import annotations

import functools
import io
import itertools
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import regex
import segno
from fontTools.ttLib import TTFont
from PIL import Image, ImageChops, ImageDraw, ImageFont, ImageStat

from anonbox.account.avatar import AvatarRef, generated_key, picture
from anonbox.web.cards import fonts as card_fonts
from anonbox.web.cards.draw import CardLabels, qr_box, render_card, render_link_card
from anonbox.web.cards.fonts import Face, FontSet, installed
from anonbox.web.cards.text import layout, paragraphs
from tests.support.cards import drawn_modules

REFERENCES = Path(__file__).parent / "reference"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "cards"
UPDATE = os.environ.get("ANONBOX_UPDATE_REFERENCES") == "1"
# Mean difference per channel (0-255) over the whole card, and the share of pixels that
# differ visibly: anti-aliasing of another FreeType build stays far below either, a glyph
# drawn from another font or in another place does not.
MEAN_LIMIT = 0.25
CHANGED_LIMIT = 0.0005


@dataclass(frozen=True)
class Sample:
    prompt: str
    message: str
    reply: str
    name: str


SAMPLES = {
    "latin": Sample(
        "Ask me anything, ¿qué quieres saber?",
        "Quelle est ta ville préférée ? Ich würde gern wissen, wo du am liebsten bist.",
        "Lisboa, sem dúvida: the light, the café com leite and the trams. Ţară, łódź, ÆØÅ.",
        "Zoë",
    ),
    "cyrillic": Sample(
        "Спроси меня о чём угодно",
        "Какую книгу ты перечитываешь чаще всего и почему?",
        "«Мастера и Маргариту» — каждый раз нахожу что-то новое. Їжак, ґанок, ђак.",
        "Оксана",
    ),
    "greek": Sample(
        "Ρώτησέ με ό,τι θέλεις",
        "Ποιο είναι το αγαπημένο σου νησί στο Αιγαίο;",
        "Η Νάξος, χωρίς αμφιβολία· ήσυχες παραλίες και υπέροχο φαγητό.",
        "Ελένη",
    ),
    "japanese": Sample(
        "なんでも質問してください",
        "最近読んだ本の中で、一番おもしろかったのは何ですか？「理由」も教えてください。",
        "『羅生門』です。短いのに、読むたびに新しい発見があります。ぜひ読んでみてね。",
        "さくら",
    ),
    "korean": Sample(
        "무엇이든 물어보세요",
        "요즘 가장 즐겨 듣는 노래가 뭐예요? 추천해 주세요!",
        "요즘은 아이유의 노래를 자주 들어요. 가사가 정말 아름다워서 마음이 편해져요.",
        "지민",
    ),
    "chinese": Sample(
        "随便问我什么吧",
        "你最喜欢的城市是哪里？为什么喜欢那里？",
        "我最喜欢成都，因为那里的火锅和茶馆都让人感到非常放松。欢迎你来玩！",
        "小明",
    ),
    "thai": Sample(
        "ถามอะไรก็ได้",
        "อาหารไทยที่คุณชอบที่สุดคืออะไร และทำไมถึงชอบ",
        "ต้มยำกุ้งค่ะ รสชาติเปรี้ยวเผ็ดกำลังดี กินกับข้าวสวยร้อนๆ อร่อยที่สุดเลย",
        "สมชาย",
    ),
    "arabic": Sample(
        "اسألني أي شيء",
        "ما هو الكتاب الذي غيّر طريقة تفكيرك؟",
        "كتاب «الأيام» لطه حسين، قرأته في عام 2019 وما زلت أعود إليه.",
        "ليلى",
    ),
    "hebrew": Sample(
        "שאלו אותי כל דבר",
        "מה הספר האהוב עליך, ולמה?",
        "הנסיך הקטן. קראתי אותו 3 פעמים, וכל פעם הוא מרגש אותי מחדש.",
        "נועה",
    ),
    "emoji": Sample(
        "Emoji 🎉✨",
        "Family 👨‍👩‍👧‍👦 skin tones 👍🏻👍🏽👍🏿 👋🏾 flags 🇯🇵🇰🇷🇮🇩🇪🇸 keycaps 1️⃣#️⃣",
        "❤️ 🏳️‍🌈 🧑🏻‍💻 👩🏽‍🚀 🐈‍⬛ ☕ done!",
        "Ana 🌻",
    ),
}
LINK_SAMPLE = {
    "name": "さくら",
    "prompt": "匿名でメッセージを送ってね 💌",
    "url": "anonbox.example/a1b2c3d4",
}


@pytest.fixture(scope="module")
def fonts() -> FontSet:
    fonts = installed()
    if fonts.missing:
        message = f"the Noto fonts are not installed (make install, as root): {fonts.missing}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return fonts


def compare(name: str, png: bytes, size: tuple[int, int] = (1080, 1920)) -> None:
    """The card against its reference, or the reference redrawn; a copy for reviewers."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"{name}.png").write_bytes(png)
    reference = REFERENCES / f"{name}.png"
    if UPDATE:
        REFERENCES.mkdir(exist_ok=True)
        Image.open(io.BytesIO(png)).save(reference, optimize=True)
        return
    assert reference.is_file(), f"no reference {reference}: ANONBOX_UPDATE_REFERENCES=1"
    drawn = Image.open(io.BytesIO(png)).convert("RGB")
    expected = Image.open(reference).convert("RGB")
    assert drawn.size == expected.size == size
    difference = ImageChops.difference(drawn, expected)
    mean = sum(ImageStat.Stat(difference).mean) / 3
    visible = difference.convert("L").point(lambda value: 255 if value > 48 else 0)
    changed = ImageStat.Stat(visible).mean[0] / 255
    if mean >= MEAN_LIMIT or changed >= CHANGED_LIMIT:
        difference.save(ARTIFACTS / f"{name}-difference.png")
    assert mean < MEAN_LIMIT, f"{name}: mean difference {mean:.3f}"
    assert changed < CHANGED_LIMIT, f"{name}: {changed:.4%} of the pixels differ"


@pytest.mark.parametrize("script", list(SAMPLES))
def test_a_card_in_each_script_looks_like_its_reference(fonts: FontSet, script: str) -> None:
    sample = SAMPLES[script]
    png = render_card(
        prompt=sample.prompt, message=sample.message, reply=sample.reply, name=sample.name
    )
    compare(script, png)


def test_the_link_card_looks_like_its_reference(fonts: FontSet) -> None:
    compare("link", render_link_card(**LINK_SAMPLE))


# --- no missing glyphs ---------------------------------------------------------------------


@functools.cache
def _cmap(face: Face) -> set[int]:
    assert face.path is not None
    with TTFont(str(face.path), fontNumber=face.index, lazy=True) as font:
        return set(font.getBestCmap())


@functools.cache
def notdef(face: Face) -> bytes:
    """How the face draws a character it has no glyph for (U+10FFFD, private use)."""
    return ink(face, "\U0010fffd")


@functools.cache
def _font(face: Face) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(face.path), 60, index=face.index)


def ink(face: Face, grapheme: str) -> bytes:
    font = _font(face)
    image = Image.new("L", (240, 120), 0)
    ImageDraw.Draw(image).text((10, 90), grapheme, font=font, fill=255, anchor="ls")
    return image.tobytes()


INVISIBLE = {0x200C, 0x200D, 0xFE0E, 0xFE0F}


def _texts() -> Iterator[tuple[str, str]]:
    for script, sample in SAMPLES.items():
        for text in (sample.prompt, sample.message, sample.reply, sample.name):
            yield script, text


def test_every_character_is_drawn_by_a_font_that_has_it(fonts: FontSet) -> None:
    """Checked against each font's own character map, read here with fontTools, and
    against the font's drawing of a character it lacks (the box)."""
    for script, text in _texts():
        for glyphs in paragraphs(text, fonts):
            for grapheme, face in zip(glyphs.graphemes, glyphs.faces, strict=True):
                cmap = _cmap(face)
                lacking = [f"U+{ord(c):04X}" for c in grapheme if ord(c) not in INVISIBLE | cmap]
                assert not lacking, f"{script}: {grapheme!r} drawn with {face.name} lacks {lacking}"
                if face.emoji or grapheme.isspace():
                    continue
                box = notdef(face)
                assert ink(face, grapheme) != box, f"{script}: {grapheme!r} is a box"


def test_the_fonts_of_each_script(fonts: FontSet) -> None:
    """Ideographs take the forms of their language: the same 直 differs in Japanese,
    Korean and Chinese."""

    def faces(text: str) -> set[str]:
        return {face.name for glyphs in paragraphs(text, fonts) for face in glyphs.faces}

    assert faces("直したい、です") == {"cjk-ja"}
    assert faces("直선 도로") == {"cjk-ko"}
    assert faces("直接说吧") == {"cjk-zh"}
    assert faces("שלום") == {"hebrew"}
    assert faces("مرحبا") == {"arabic"}
    assert faces("สวัสดี") == {"thai"}
    assert faces("Привет Γειά hello") == {"latin"}
    assert faces("👍🏽🇯🇵") == {"emoji"}
    assert faces("☕") == {"emoji"}  # emoji presentation by default
    assert "emoji" not in faces("☺\ufe0e")  # text presentation asked for


# --- emoji ---------------------------------------------------------------------------------

SEQUENCES = {
    "family (ZWJ)": "👨‍👩‍👧‍👦",
    "skin tone": "👍🏽",
    "flag": "🇯🇵",
    "keycap": "1️⃣",
    "rainbow flag": "🏳️‍🌈",
    "technologist, light skin": "🧑🏻‍💻",
}


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_an_emoji_sequence_is_one_picture(fonts: FontSet, name: str) -> None:
    """One grapheme, drawn as one emoji as wide as a single one (not its parts side by
    side), in colour, and never split across lines however narrow the line."""
    sequence = SEQUENCES[name]
    (glyphs,) = paragraphs(sequence, fonts)
    assert glyphs.graphemes == (sequence,)
    assert fonts.emoji is not None
    image, _, advance = card_fonts.emoji_image(fonts.emoji, sequence, 60)
    _, _, single = card_fonts.emoji_image(fonts.emoji, "😀", 60)
    assert advance == single
    colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 20  # a picture, not a one-colour glyph
    lines = layout(f"{sequence}{sequence}{sequence}", fonts, 60, 10)
    assert [line.text for line in lines] == [sequence] * 3


# --- right to left -------------------------------------------------------------------------


def _ink_columns(png: bytes) -> list[int]:
    """The x of the message's dark text pixels in the first line of the first box."""
    image = Image.open(io.BytesIO(png)).convert("L")
    width, height = image.size
    pixels = image.load()
    assert pixels is not None
    rows = [y for y in range(height) if any(pixels[x, y] < 60 for x in range(0, width, 2))]
    first_band = [rows[0]]
    for y in rows[1:]:
        if y - first_band[-1] > 8:
            break
        first_band.append(y)
    return sorted(
        {x for y in first_band for x in range(width) if pixels[x, y] < 60}  # type: ignore[operator]
    )


def test_hebrew_starts_at_the_right(fonts: FontSet) -> None:
    """The first word of a Hebrew line (long) is at the right, flush with the box's text
    edge, the second (short) at its left."""
    png = render_card(prompt="", message="שלוםשלוםשלום אב", reply="כן", name="נועה")
    columns = _ink_columns(png)
    gaps = [(b - a, a) for a, b in itertools.pairwise(columns) if b - a > 12]
    assert len(gaps) == 1, gaps  # the space between the two words
    gap_x = gaps[0][1]
    left, right = columns[0], columns[-1]
    assert right > 1080 - 80 - 56 - 12  # right-aligned
    assert gap_x - left < (right - left) / 4  # the short second word is on the left


def test_mixed_directions_are_in_visual_order(fonts: FontSet) -> None:
    (line,) = layout("שלום world 👋 עולם 123", fonts, 40, 2000)
    assert line.rtl
    # Read from the left: the number, the Hebrew word before it (reversed: drawn right to
    # left), the emoji and the English word between, the first Hebrew word at the right.
    assert line.text == "123 םלוע 👋 world םולש"
    (line,) = layout("hello שלום עולם!", fonts, 40, 2000)
    assert not line.rtl
    assert line.text == "hello םלוע םולש!"


# --- line breaks ---------------------------------------------------------------------------


def test_japanese_breaks_between_characters_but_not_before_closing_punctuation(
    fonts: FontSet,
) -> None:
    text = "あいうえお。かきくけこ「さしすせそ」たちつてと"
    width = 5 * 60 + 2  # five kana a line
    lines = layout(text, fonts, 60, width)
    assert "".join(line.text for line in lines) == text  # nothing lost or added
    assert len(lines) >= 5
    for line in lines:
        assert line.text[0] not in "。、」", [line.text for line in lines]
        assert line.text[-1] != "「", [line.text for line in lines]


def test_words_are_kept_whole_in_scripts_with_spaces(fonts: FontSet) -> None:
    for text in ("hello wonderful world", "Привет чудесный мир", "안녕하세요 반갑습니다 여러분"):
        words = text.split()
        lines = layout(text, fonts, 60, 350)
        assert [line.text for line in lines] == words, text


def test_thai_breaks_between_grapheme_clusters(fonts: FontSet) -> None:
    text = "ต้มยำกุ้งรสชาติเปรี้ยวเผ็ดกำลังดีกินกับข้าวสวย"
    clusters = regex.findall(r"\X", text)
    boundaries = set(itertools.accumulate(len(cluster) for cluster in clusters))
    for width in range(120, 600, 9):
        lines = layout(text, fonts, 60, width)
        assert len(lines) > 1
        assert "".join(line.text for line in lines) == text
        # Every line ends between two clusters: no vowel sign or tone mark torn off.
        ends = set(itertools.accumulate(len(line.text) for line in lines))
        assert ends <= boundaries, (width, [line.text for line in lines])


# --- labels and missing fonts --------------------------------------------------------------


def test_labels_are_parameters(fonts: FontSet) -> None:
    sample = SAMPLES["latin"]
    english = render_card(
        prompt=sample.prompt, message=sample.message, reply=sample.reply, name="Zoë"
    )
    japanese = render_card(
        prompt=sample.prompt,
        message=sample.message,
        reply=sample.reply,
        name="Zoë",
        labels=CardLabels(anonymous_message="匿名のメッセージ", replied="%(name)sさんの返信"),
    )
    assert english != japanese
    assert render_link_card(name="A", prompt="B", url="x/y") != render_link_card(
        name="A", prompt="B", url="x/y", labels=CardLabels(invitation="匿名で送ってね")
    )


def test_without_noto_a_card_is_still_drawn_and_one_warning_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(card_fonts, "NOTO_DIR", tmp_path)
    monkeypatch.setattr(card_fonts, "NOTO_CJK", tmp_path / "NotoSansCJK-Regular.ttc")
    installed.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="anonbox.web"):
            for _ in range(2):
                png = render_card(prompt="Ask", message="日本語 and 👍", reply="ok", name="A")
                assert Image.open(io.BytesIO(png)).size == (1080, 1920)
        warnings = [r for r in caplog.records if "fonts-noto-cjk" in r.getMessage()]
        assert len(warnings) == 1
        assert {face.name for face in installed().text} <= {"dejavu", "builtin"}
    finally:
        installed.cache_clear()


# The longest texts, in the story's frame: tests/cards/test_story_frame.py.


def test_an_answer_card_carries_its_links_address(fonts: FontSet) -> None:
    # Someone who sees the card in a story can find where to ask (issue 31, item 3).
    sample = SAMPLES["japanese"]
    texts = {"prompt": sample.prompt, "message": sample.message, "reply": sample.reply}
    with_address = render_card(**texts, name=sample.name, url="anonbox.example/a1b2c3d4e5f")
    compare("japanese-with-address", with_address)
    assert with_address != render_card(**texts, name=sample.name)
    assert with_address != render_card(**texts, name=sample.name, url="anonbox.example/other")


def test_the_link_card_says_its_invitation_once(fonts: FontSet) -> None:
    # The default prompt is the invitation the card is headed with: drawn once, not twice,
    # whatever its case and closing punctuation (which would show if it were drawn).
    def link_card(prompt: str, labels: CardLabels) -> bytes:
        return render_link_card(name="Zoë", prompt=prompt, url="x/y", labels=labels)

    english = CardLabels(invitation="Send me anonymous messages")
    variants = ("Send me anonymous messages", "Send me anonymous messages!", "SEND ME ANONYMOUS.")
    cards = {link_card(prompt, english) for prompt in variants[:2]}
    cards.add(link_card("SEND ME ANONYMOUS MESSAGES.", english))
    assert len(cards) == 1
    assert link_card(variants[2], english) not in cards  # another prompt is drawn
    japanese = CardLabels(invitation="匿名でメッセージを送ってね")
    plain = link_card("匿名でメッセージを送ってね", japanese)
    assert link_card("匿名でメッセージを送ってね\uff01", japanese) == plain


# --- the creator's picture and the QR code (issue 31, item 3) -------------------------------


def test_the_link_card_draws_the_qr_code_of_its_address(fonts: FontSet) -> None:
    address = "https://anonbox.example/a1b2c3d4e5f"
    png = render_link_card(
        name="さくら",
        prompt=LINK_SAMPLE["prompt"],
        url="anonbox.example/a1b2c3d4e5f",
        qr=address,
        avatar=picture(AvatarRef("generated", generated_key("01JSAKURA"))),
    )
    compare("link-with-qr-and-avatar", png)
    # What a phone's camera reads: the symbol segno makes of the address, module for module,
    # and not the symbol of any other address.
    expected = segno.make(address, error="m", micro=False, boost_error=False).matrix
    assert drawn_modules(png, address) == [[bool(cell) for cell in row] for row in expected]
    other = segno.make(address + "x", error="m", micro=False, boost_error=False).matrix
    assert drawn_modules(png, address) != [[bool(cell) for cell in row] for row in other]
    # The quiet zone beside it is white, four modules wide (its outer corners are rounded).
    left, top, module, count = qr_box(address)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    zone = image.crop((left - 4 * module, top, left, top + count * module))
    assert zone.getcolors() == [(zone.width * zone.height, (255, 255, 255))]


def test_an_answer_card_leads_with_the_creators_picture_and_name(fonts: FontSet) -> None:
    sample = SAMPLES["japanese"]
    texts = {"prompt": sample.prompt, "message": sample.message, "reply": sample.reply}
    url = "anonbox.example/a1b2c3d4e5f"
    generated = picture(AvatarRef("generated", generated_key("01JSAKURA")))
    with_picture = render_card(**texts, name=sample.name, url=url, avatar=generated)
    compare("japanese-with-avatar", with_picture)
    neutral = render_card(**texts, name=sample.name, url=url, avatar=picture(AvatarRef("neutral")))
    assert len({with_picture, neutral, render_card(**texts, name=sample.name, url=url)}) == 3
    assert render_card(**texts, name="Zoë", url=url, avatar=generated) != with_picture
