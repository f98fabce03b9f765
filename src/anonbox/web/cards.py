"""Share cards: an answered message and its reply drawn as a PNG sized for phone stories.

The font is DejaVu Sans when the system has it (Debian's ``fonts-dejavu-core``: accents,
Greek, Cyrillic and more), else Pillow's built-in scalable font, which has ASCII glyphs only;
either way no font file is shipped. The text is wrapped to the card and shrunk until both
texts fit; at the smallest size a text that still does not fit is cut with an ellipsis
(only hundreds of line breaks get there: 500 characters of words fit at every size).
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 1080, 1920
_MARGIN = 80  # card edge to box
_PADDING = 56  # box edge to text
_GAP = 56  # between the boxes
_TEXT_WIDTH = WIDTH - 2 * (_MARGIN + _PADDING)
_SIZES = range(60, 23, -4)  # font sizes tried, largest first

_BACKGROUND = (61, 43, 214)  # the pages' accent colour
_BOX = (255, 255, 255)
_INK = (27, 27, 31)
_ON_BACKGROUND = (255, 255, 255)
_LABEL = (85, 86, 92)

_BLANK_RUNS = re.compile(r"\n{3,}")
_SYSTEM_FONTS = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/dejavu/DejaVuSans.ttf"),
)

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@dataclass(frozen=True, slots=True)
class _Block:
    label: str
    lines: list[str]
    font: Font
    label_font: Font
    line_height: int

    @property
    def height(self) -> int:
        return 2 * _PADDING + self.line_height * (len(self.lines) + 1)  # +1: the label


@functools.cache
def _font(size: int) -> Font:
    for path in _SYSTEM_FONTS:
        if path.is_file():
            return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)


def _width(font: Font, text: str) -> float:
    return font.getlength(text)


def _wrap(text: str, font: Font, width: int) -> list[str]:
    """Greedy word wrap; a word wider than the line is broken between characters."""
    lines: list[str] = []
    for paragraph in _BLANK_RUNS.sub("\n\n", text.replace("\t", "    ").strip()).split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if _width(font, candidate) <= width:
                line = candidate
                continue
            if line:
                lines.append(line)
            line = ""
            for char in word:
                if _width(font, line + char) > width and line:
                    lines.append(line)
                    line = ""
                line += char
        lines.append(line)
    return lines


def _fit(texts: list[tuple[str, str]], available: int) -> list[_Block]:
    """Lay the texts out at the largest size at which they fit together."""
    available -= _GAP * (len(texts) - 1)
    for size in _SIZES:
        font, label_font = _font(size), _font(round(size * 0.7))
        line_height = round(size * 1.35)
        blocks = [
            _Block(label, _wrap(text, font, _TEXT_WIDTH), font, label_font, line_height)
            for label, text in texts
        ]
        if sum(block.height for block in blocks) <= available:
            return blocks
    # Still too tall at the smallest size: a block that fits in an even share keeps its
    # height, the others share what is left, cut with an ellipsis.
    share = available // len(blocks)
    fitting = [block for block in blocks if block.height <= share]
    long_share = (available - sum(b.height for b in fitting)) // (len(blocks) - len(fitting))
    cut = []
    for block in blocks:
        room = max(2, (long_share - 2 * _PADDING) // block.line_height - 1)
        if block.height > share and len(block.lines) > room:
            block = _Block(
                block.label,
                [*block.lines[: room - 1], "…"],
                block.font,
                block.label_font,
                block.line_height,
            )
        cut.append(block)
    return cut


def render_card(*, prompt: str, message: str, reply: str, name: str) -> bytes:
    """The PNG of one answered message: the prompt, the message, and the creator's reply."""
    image = Image.new("RGB", (WIDTH, HEIGHT), _BACKGROUND)
    draw = ImageDraw.Draw(image)
    heading = _font(44)
    heading_lines = _wrap(prompt, heading, WIDTH - 2 * _MARGIN)[:3]
    y = 160
    for line in heading_lines:
        draw.text((_MARGIN, y), line, font=heading, fill=_ON_BACKGROUND)
        y += 60
    y += 40
    footer_top = HEIGHT - 160
    blocks = _fit([("Anonymous message", message), (f"{name} replied", reply)], footer_top - y)
    for block in blocks:
        draw.rounded_rectangle(
            (_MARGIN, y, WIDTH - _MARGIN, y + block.height), radius=48, fill=_BOX
        )
        text_y = y + _PADDING
        draw.text((_MARGIN + _PADDING, text_y), block.label, font=block.label_font, fill=_LABEL)
        text_y += block.line_height
        for line in block.lines:
            draw.text((_MARGIN + _PADDING, text_y), line, font=block.font, fill=_INK)
            text_y += block.line_height
        y += block.height + _GAP
    draw.text((_MARGIN, footer_top + 40), "anonbox", font=_font(48), fill=_ON_BACKGROUND)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()
