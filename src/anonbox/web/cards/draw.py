"""Share cards: an answered message and its reply, or a link's invitation, drawn as a PNG
sized for phone stories.

Text in any script is drawn with the Noto fonts (``web.cards.fonts``: which font draws what)
and laid out by ``web.cards.text`` (grapheme clusters, line breaks per script, right-to-left
order). The texts are wrapped to the card and shrunk until they fit; at the smallest size a
text that still does not fit is cut with an ellipsis (only hundreds of line breaks get
there: 500 characters of words fit at every size). What the cards say besides the texts
(``CardLabels``) is a parameter, English by default, so pages can pass their language's.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from PIL import Image, ImageDraw

from anonbox.web.cards.fonts import FontSet, installed
from anonbox.web.cards.text import Glyphs, Line, breaks, draw_line, layout, paragraphs, wrap

WIDTH, HEIGHT = 1080, 1920
_MARGIN = 80  # card edge to box
_PADDING = 56  # box edge to text
_GAP = 56  # between the boxes
_TEXT_WIDTH = WIDTH - 2 * (_MARGIN + _PADDING)
_SIZES = range(60, 23, -4)  # font sizes tried, largest first
_BASELINE = 1.02  # a line's baseline below its top, in font sizes

_BACKGROUND = (61, 43, 214)  # the pages' accent colour
_BOX = (255, 255, 255)
_INK = (27, 27, 31)
_ON_BACKGROUND = (255, 255, 255)
_LABEL = (85, 86, 92)


@dataclass(frozen=True, slots=True)
class CardLabels:
    """The words a card draws besides the creator's texts. ``replied`` names the creator
    with ``%(name)s`` (gettext's python-format); ``rtl`` is the labels' language's
    direction (a label is aligned by its language, not by the name in it)."""

    anonymous_message: str = "Anonymous message"
    replied: str = "%(name)s replied"
    invitation: str = "Send me anonymous messages"
    brand: str = "anonbox"
    rtl: bool = False


@dataclass(frozen=True, slots=True)
class _Block:
    label: Line | None
    lines: list[Line]
    size: int
    line_height: int

    @property
    def height(self) -> int:
        labelled = 1 if self.label is not None else 0
        return 2 * _PADDING + self.line_height * (len(self.lines) + labelled)


@dataclass(frozen=True, slots=True)
class _Text:
    label: str | None
    glyphs: list[Glyphs] = field(default_factory=list)


def _label(fonts: FontSet, text: str, size: int, rtl: bool) -> Line:
    return layout(text, fonts, size, _TEXT_WIDTH, rtl=rtl)[0]


def _blocks(fonts: FontSet, texts: list[_Text], size: int, rtl: bool) -> list[_Block]:
    label_size = round(size * 0.7)
    return [
        _Block(
            None if text.label is None else _label(fonts, text.label, label_size, rtl),
            [line for glyphs in text.glyphs for line in wrap(glyphs, size, _TEXT_WIDTH)],
            size,
            round(size * 1.35),
        )
        for text in texts
    ]


def _fit(
    fonts: FontSet, texts: list[_Text], available: int, sizes: range, rtl: bool
) -> list[_Block]:
    """Lay the texts out at the largest size at which they fit together (a size is tried
    by counting lines; only the one chosen is laid out in full)."""
    available -= _GAP * (len(texts) - 1)
    for size in sizes:
        labelled = sum(text.label is not None for text in texts)
        count = labelled + sum(
            len(breaks(glyphs, size, _TEXT_WIDTH)) for text in texts for glyphs in text.glyphs
        )
        if 2 * _PADDING * len(texts) + round(size * 1.35) * count <= available:
            return _blocks(fonts, texts, size, rtl)
    blocks = _blocks(fonts, texts, sizes[-1], rtl)
    # Still too tall at the smallest size: a block that fits in an even share keeps its
    # height, the others share what is left, cut with an ellipsis.
    share = available // len(blocks)
    fitting = [block for block in blocks if block.height <= share]
    long_share = (available - sum(b.height for b in fitting)) // (len(blocks) - len(fitting))
    cut = []
    for block in blocks:
        labelled = 1 if block.label is not None else 0
        room = max(2, (long_share - 2 * _PADDING) // block.line_height - labelled)
        if block.height > share and len(block.lines) > room:
            kept = block.lines[: room - 1]
            ellipsis = layout("…", fonts, block.size, _TEXT_WIDTH, rtl=kept[-1].rtl)
            block = _Block(block.label, [*kept, *ellipsis], block.size, block.line_height)
        cut.append(block)
    return cut


def _draw_blocks(image: Image.Image, blocks: list[_Block], y: int) -> None:
    draw = ImageDraw.Draw(image)
    for block in blocks:
        draw.rounded_rectangle(
            (_MARGIN, y, WIDTH - _MARGIN, y + block.height), radius=48, fill=_BOX
        )
        text_y = y + _PADDING
        left, right = _MARGIN + _PADDING, WIDTH - _MARGIN - _PADDING
        if block.label is not None:
            label_size = round(block.size * 0.7)
            baseline = text_y + round(block.size * _BASELINE)
            draw_line(
                image, block.label, left=left, right=right, baseline=baseline,
                size=label_size, fill=_LABEL,
            )  # fmt: skip
            text_y += block.line_height
        for line in block.lines:
            baseline = text_y + round(block.size * _BASELINE)
            draw_line(
                image, line, left=left, right=right, baseline=baseline, size=block.size,
                fill=_INK,
            )  # fmt: skip
            text_y += block.line_height
        y += block.height + _GAP


def _heading(
    image: Image.Image,
    fonts: FontSet,
    text: str,
    *,
    y: int,
    size: int,
    line_height: int,
    max_lines: int,
) -> int:
    """Draw white text across the card's width, at most ``max_lines``; the y below it."""
    for line in layout(text, fonts, size, WIDTH - 2 * _MARGIN)[:max_lines]:
        draw_line(
            image, line, left=_MARGIN, right=WIDTH - _MARGIN,
            baseline=y + round(size * _BASELINE), size=size, fill=_ON_BACKGROUND,
        )  # fmt: skip
        y += line_height
    return y


def _brand(image: Image.Image, fonts: FontSet, labels: CardLabels) -> None:
    line = layout(labels.brand, fonts, 48, WIDTH - 2 * _MARGIN, rtl=labels.rtl)[0]
    draw_line(
        image, line, left=_MARGIN, right=WIDTH - _MARGIN, baseline=HEIGHT - 120 + 49,
        size=48, fill=_ON_BACKGROUND,
    )  # fmt: skip


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def render_card(
    *,
    prompt: str,
    message: str,
    reply: str,
    name: str,
    labels: CardLabels = CardLabels(),
    fonts: FontSet | None = None,
) -> bytes:
    """The PNG of one answered message: the prompt, the message, and the creator's reply."""
    fonts = fonts or installed()
    image = Image.new("RGB", (WIDTH, HEIGHT), _BACKGROUND)
    y = _heading(image, fonts, prompt, y=160, size=44, line_height=60, max_lines=3) + 40
    footer_top = HEIGHT - 160
    texts = [
        _Text(labels.anonymous_message, paragraphs(message, fonts)),
        _Text(labels.replied % {"name": name}, paragraphs(reply, fonts)),
    ]
    _draw_blocks(image, _fit(fonts, texts, footer_top - y, _SIZES, labels.rtl), y)
    _brand(image, fonts, labels)
    return _png(image)


def render_link_card(
    *,
    name: str,
    prompt: str,
    url: str,
    labels: CardLabels = CardLabels(),
    fonts: FontSet | None = None,
) -> bytes:
    """The PNG that invites messages to a link: the invitation, the creator's name, the
    link's prompt and its address (host and path, no scheme)."""
    fonts = fonts or installed()
    image = Image.new("RGB", (WIDTH, HEIGHT), _BACKGROUND)
    y = _heading(image, fonts, labels.invitation, y=200, size=80, line_height=104, max_lines=3)
    y = _heading(image, fonts, name, y=y + 32, size=52, line_height=70, max_lines=2) + 48
    address_top = HEIGHT - 300
    blocks = _fit(
        fonts,
        [_Text(None, paragraphs(prompt, fonts))],
        address_top - y,
        range(64, 27, -4),
        labels.rtl,
    )
    _draw_blocks(image, blocks, y)
    for size in range(48, 19, -4):  # the whole address on one line, as small as it takes
        lines = layout(url, fonts, size, WIDTH - 2 * _MARGIN, rtl=False)
        if len(lines) == 1 or size <= 20:
            break
    draw_line(
        image, lines[0], left=_MARGIN, right=WIDTH - _MARGIN,
        baseline=address_top + 40 + size, size=size, fill=_ON_BACKGROUND,
    )  # fmt: skip
    _brand(image, fonts, labels)
    return _png(image)
