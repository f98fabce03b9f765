"""What keeps a card cheap to draw keeps it right: widths measured without drawing are the
widths drawn, and the one cut (emoji pictures past ``EMOJI_PER_TEXT``) takes nothing from a
text that fits under it. How fast cards draw is ``bench/cards.py``'s to show, not a test's.
"""

from __future__ import annotations

import io

import pytest
import regex
from PIL import Image

from anonbox.web.cards import fonts as card_fonts
from anonbox.web.cards.draw import HEIGHT, WIDTH, render_card
from anonbox.web.cards.text import ELLIPSIS, EMOJI_PER_TEXT, layout, paragraphs

EMOJI = [chr(p) for p in range(0x1F300, 0x1F650) if regex.match(r"\p{Emoji_Presentation}", chr(p))]
FLAGS = [chr(0x1F1E6 + i % 26) + chr(0x1F1E6 + (i * 7) % 26) for i in range(300)]


@pytest.fixture(scope="module")
def fonts() -> card_fonts.FontSet:
    found = card_fonts.installed()
    if found.emoji is None:
        pytest.skip("no colour emoji font here (make install adds it)")
    return found


def test_an_emoji_is_measured_as_wide_as_it_is_drawn(fonts: card_fonts.FontSet) -> None:
    assert fonts.emoji is not None
    for grapheme in ("😀", "🇯🇵", "👩🏽\u200d🚀", "1\ufe0f\u20e3", "🇯🇵🇰🇷"):
        for size in (24, 44, 60):
            picture, _, advance = card_fonts.emoji_image(fonts.emoji, grapheme, size)
            assert card_fonts.emoji_width(fonts.emoji, grapheme, size) == advance
            assert abs(picture.width - advance) <= 1


def test_a_line_measured_for_breaking_is_as_wide_as_drawn(fonts: card_fonts.FontSet) -> None:
    text = "Wave AVAT fi مرحبا بالعالم 漢字とかな สวัสดีครับ שלום 😀🇯🇵 " * 6
    for size in (24, 36, 60):
        lines = layout(text, fonts, size, 832)
        assert len(lines) > 1
        # the greedy breaker filled each line with estimates; drawn, none spills over
        assert all(line.width <= 832 + 2 for line in lines)


def test_emoji_under_the_cap_are_all_kept(fonts: card_fonts.FontSet) -> None:
    text = "".join(EMOJI[:EMOJI_PER_TEXT]) + " and words after them"
    (glyphs,) = paragraphs(text, fonts)
    assert "".join(glyphs.graphemes) == text


@pytest.mark.parametrize("pictures", [EMOJI, FLAGS], ids=["distinct emoji", "flags"])
def test_a_wall_of_emoji_is_cut_after_the_cap(
    fonts: card_fonts.FontSet, pictures: list[str]
) -> None:
    text = "".join((pictures * 3)[:260])
    (glyphs,) = paragraphs(text, fonts)
    assert sum(face.emoji for face in glyphs.faces) == EMOJI_PER_TEXT
    assert glyphs.graphemes[-1] == ELLIPSIS
    assert "".join(glyphs.graphemes[:-1]) == "".join((pictures * 3)[:EMOJI_PER_TEXT])

    png = render_card(prompt=text, message=text, reply=text, name=text[:20])
    image = Image.open(io.BytesIO(png))
    assert image.size == (WIDTH, HEIGHT)
    colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None
    assert len(colours) > 1000  # the pictures are there, in colour


def test_later_paragraphs_go_once_the_cap_is_reached(fonts: card_fonts.FontSet) -> None:
    text = "".join(EMOJI[: EMOJI_PER_TEXT + 1]) + "\nnever drawn"
    kept = paragraphs(text, fonts)
    assert len(kept) == 1
    assert kept[0].graphemes[-1] == ELLIPSIS
