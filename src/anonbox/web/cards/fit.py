"""Fitting a card's texts into the room it has: every text drawn whole, never cut.

A card's texts (``Piece``: a text in a box with its label, or a heading on the
background) are laid out together at one size, the largest at which all fit, tried by
halving the range of sizes (a size is tried by counting lines, without laying out). When
none fits, the line breaks inside the texts are the first thing given up (a text of 250
short lines is still every word, on fewer lines), and sizes go on down to ``smallest``;
a text within the site's limits (a 300-character prompt, 500-character message and reply)
fits every card at its smallest size, which the tests check with the longest texts.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageDraw

from anonbox.web.cards.fonts import FontSet
from anonbox.web.cards.text import Glyphs, Line, breaks, draw_line, layout, paragraphs, wrap
from anonbox.web.cards.themes import Theme

BASELINE = 1.02  # a line's baseline below its top, in font sizes
LEADING = 1.35  # a line's height, in font sizes
LABEL_SCALE = 0.7  # a box's label beside its text


@dataclass(frozen=True, slots=True)
class Piece:
    """One text of a card: in a box under ``label`` (``boxed``), or on the background."""

    text: str
    label: str | None = None
    boxed: bool = True
    scale: float = 1.0  # its size, relative to the size the texts are tried at


@dataclass(frozen=True, slots=True)
class Block:
    piece: Piece
    label: list[Line]  # a long name in "… replied" wraps too
    lines: list[Line]
    size: int

    @property
    def line_height(self) -> int:
        return round(self.size * LEADING)

    @property
    def padding(self) -> int:
        return padding(self.size) if self.piece.boxed else 0

    @property
    def height(self) -> int:
        return 2 * self.padding + self.line_height * (len(self.lines) + len(self.label))


def padding(size: int) -> int:
    """A box's edge to its text: generous for large text, less for small."""
    return max(24, min(56, round(size * 0.95)))


def _joined(text: str) -> str:
    """The text on one paragraph: its line breaks (and runs of spaces) as one space."""
    return " ".join(text.split())


def _glyphs(fonts: FontSet, pieces: list[Piece], joined: bool) -> list[list[Glyphs]]:
    return [paragraphs(_joined(p.text) if joined else p.text, fonts) for p in pieces]


def _text_width(piece: Piece, width: int, size: int) -> int:
    return width - 2 * padding(size) if piece.boxed else width


def _size(piece: Piece, size: int) -> int:
    return max(1, round(size * piece.scale))


def _label(fonts: FontSet, piece: Piece, width: int, size: int, rtl: bool) -> list[Line]:
    if piece.label is None:
        return []
    return layout(
        piece.label, fonts, round(size * LABEL_SCALE), _text_width(piece, width, size), rtl=rtl
    )


def _height(
    fonts: FontSet,
    pieces: list[Piece],
    glyphs: list[list[Glyphs]],
    *,
    width: int,
    size: int,
    gap: int,
    rtl: bool,
) -> int:
    total = gap * (len(pieces) - 1)
    for piece, texts in zip(pieces, glyphs, strict=True):
        own = _size(piece, size)
        count = len(_label(fonts, piece, width, own, rtl)) + sum(
            len(breaks(g, own, _text_width(piece, width, own))) for g in texts
        )
        total += (2 * padding(own) if piece.boxed else 0) + round(own * LEADING) * count
    return total


def fit(
    fonts: FontSet,
    pieces: list[Piece],
    *,
    width: int,
    available: int,
    largest: int,
    smallest: int,
    gap: int,
    rtl: bool,
) -> list[Block]:
    """The pieces laid out at the largest size (``largest`` down to ``smallest``, in steps
    of 2 px) at which they fit ``available`` px together, ``gap`` px apart; their line
    breaks given up first if none does. Past the smallest size they are laid out at it,
    taller than asked (never cut: the tests keep every allowed text above that)."""
    sizes = range(largest, smallest - 1, -2)
    glyphs: list[list[Glyphs]] = []
    for joined in (False, True):
        glyphs = _glyphs(fonts, pieces, joined)
        low, high = 0, len(sizes)  # sizes[:low] too large; sizes[high:] fit, or high = len
        while low < high:
            middle = (low + high) // 2
            tried = _height(
                fonts, pieces, glyphs, width=width, size=sizes[middle], gap=gap, rtl=rtl
            )
            if tried <= available:
                high = middle
            else:
                low = middle + 1
        if high < len(sizes):
            return _blocks(fonts, pieces, glyphs, width, sizes[high], rtl)
    return _blocks(fonts, pieces, glyphs, width, sizes[-1], rtl)


def _blocks(
    fonts: FontSet,
    pieces: list[Piece],
    glyphs: list[list[Glyphs]],
    width: int,
    size: int,
    rtl: bool,
) -> list[Block]:
    blocks = []
    for piece, texts in zip(pieces, glyphs, strict=True):
        own = _size(piece, size)
        inner = _text_width(piece, width, own)
        lines = [line for g in texts for line in wrap(g, own, inner)]
        blocks.append(Block(piece, _label(fonts, piece, width, own, rtl), lines, own))
    return blocks


def draw_blocks(
    image: Image.Image, blocks: list[Block], *, left: int, right: int, y: int, gap: int,
    look: Theme,
) -> int:  # fmt: skip
    """Draw the blocks from ``y`` down, between ``left`` and ``right``; the y below the last."""
    draw = ImageDraw.Draw(image)
    for block in blocks:
        if block.piece.boxed:
            draw.rounded_rectangle(
                (left, y, right, y + block.height),
                radius=min(48, block.padding + 8),
                fill=look.box,
                outline=look.outline,
                width=3 if look.outline else 0,
            )
            ink = look.ink
        else:
            ink = look.on_background
        text_y = y + block.padding
        inner_left, inner_right = left + block.padding, right - block.padding
        for line in block.label:
            draw_line(
                image, line, left=inner_left, right=inner_right,
                baseline=text_y + round(block.size * BASELINE),
                size=round(block.size * LABEL_SCALE), fill=look.label,
            )  # fmt: skip
            text_y += block.line_height
        for line in block.lines:
            draw_line(
                image, line, left=inner_left, right=inner_right,
                baseline=text_y + round(block.size * BASELINE), size=block.size, fill=ink,
            )  # fmt: skip
            text_y += block.line_height
        y += block.height + gap
    return y - gap


def heading_lines(
    fonts: FontSet, text: str, *, width: int, largest: int, smallest: int, most: int
) -> tuple[list[Line], int]:
    """A short text (a label, a name) as large as fits in ``most`` lines; at ``smallest``
    in as many lines as it takes (never cut). Its lines and their size."""
    size = largest
    lines: list[Line] = []
    for size in range(largest, smallest - 1, -2):
        lines = layout(text, fonts, size, width)
        if len(lines) <= most:
            break
    return lines, size


def draw_lines(
    image: Image.Image, lines: list[Line], *, left: int, right: int, y: int, size: int,
    fill: tuple[int, int, int], leading: float = LEADING,
) -> int:  # fmt: skip
    """Draw lines on the background from ``y`` down; the y below them."""
    height = round(size * leading)
    for line in lines:
        draw_line(
            image, line, left=left, right=right, baseline=y + round(size * BASELINE), size=size,
            fill=fill,
        )  # fmt: skip
        y += height
    return y
