"""Share cards for phone stories: an answered message and its reply, or a link's
invitation, drawn as a 1080 by 1920 px PNG in the link's theme (``web.cards.themes``).

Stories cover a card's top and bottom with their own header (the poster's name, the
progress bar) and reply bar: the top ``SAFE_TOP`` px and the bottom ``HEIGHT - SAFE_BOTTOM``
px hold only the theme's background, and everything a card says is drawn between them
(docs/decisions.md, issue 41: where the numbers come from). The texts are laid out by
``web.cards.fit``: wrapped and shrunk to the room they have, never cut.

Text in any script is drawn with the Noto fonts (``web.cards.fonts``) and laid out by
``web.cards.text`` (grapheme clusters, line breaks per script, right-to-left order). What
the cards say besides the texts (``CardLabels``) is a parameter, English by default, so
pages pass their language's. Given the creator's picture, a card leads with it and their
name; a link card also draws the QR code of its address (``qr_box`` says where).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import segno
from PIL import Image, ImageDraw

from anonbox.web.cards.fit import Piece, draw_blocks, draw_lines, fit, heading_lines
from anonbox.web.cards.fonts import FontSet, installed
from anonbox.web.cards.text import Line, layout
from anonbox.web.cards.themes import DEFAULT, Theme, background

WIDTH, HEIGHT = 1080, 1920
SAFE_TOP = 250  # above: the story's own header
SAFE_BOTTOM = HEIGHT - 340  # below: its reply bar
_TOP = SAFE_TOP + 40  # the first thing drawn
_BOTTOM = SAFE_BOTTOM - 40  # the last thing drawn ends above
_MARGIN = 80  # card edge to box
_GAP = 40  # between the boxes
_BRAND = 44  # the brand's size
_ADDRESS = 40  # the address's largest size


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


def png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=1)  # a third of level 6's time, ~10% larger
    return out.getvalue()


def _footer(
    image: Image.Image, fonts: FontSet, labels: CardLabels, url: str | None, look: Theme
) -> int:
    """The brand at the bottom of the safe zone and the address above it; the y above."""
    brand = layout(labels.brand, fonts, _BRAND, WIDTH - 2 * _MARGIN, rtl=labels.rtl)[0]
    draw_lines(
        image, [brand], left=_MARGIN, right=WIDTH - _MARGIN, y=_BOTTOM - _BRAND, size=_BRAND,
        fill=look.on_background, leading=1.0,
    )  # fmt: skip
    top = _BOTTOM - _BRAND - 24
    if url:
        top = address(image, fonts, url, bottom=top, width=WIDTH - 2 * _MARGIN, left=_MARGIN,
                      largest=_ADDRESS, look=look) - 16  # fmt: skip
    return top


def address(
    image: Image.Image, fonts: FontSet, url: str, *, bottom: int, width: int, left: int,
    largest: int, look: Theme,
) -> int:  # fmt: skip
    """The whole address on one line ending at ``bottom``, as small as it takes (at 20 px,
    on two lines if it must); the y above it."""
    lines, size = heading_lines(fonts, url, width=width, largest=largest, smallest=20, most=1)
    top = bottom - size * len(lines)
    draw_lines(
        image, lines, left=left, right=left + width, y=top, size=size,
        fill=look.on_background, leading=1.0,
    )  # fmt: skip
    return top


def render_card(
    *,
    prompt: str,
    message: str,
    reply: str,
    name: str,
    url: str | None = None,
    avatar: Image.Image | None = None,
    labels: CardLabels = CardLabels(),
    fonts: FontSet | None = None,
    look: Theme = DEFAULT,
) -> bytes:
    """The PNG of one answered message: the prompt, the message, and the creator's reply;
    with ``url`` (host and path, no scheme), the link's address above the brand, so that
    someone who sees the card in a story can find where to ask; with ``avatar`` (a square
    picture), the creator's picture and name above the prompt."""
    fonts = fonts or installed()
    image = background(look, (WIDTH, HEIGHT))
    bottom = _footer(image, fonts, labels, url, look) - 32
    row = 0  # the creator's picture and name, and the space under them
    if avatar is not None:
        row = creator_height(fonts, name, side=112, largest=48, width=_NAME_WIDTH) + 40
    pieces = [
        Piece(message, labels.anonymous_message),
        Piece(reply, labels.replied % {"name": name}),
    ]
    if prompt.strip():
        pieces.insert(0, Piece(prompt, boxed=False, scale=0.8))
    blocks = fit(
        fonts, pieces, width=WIDTH - 2 * _MARGIN, available=bottom - _TOP - row, largest=68,
        smallest=16, gap=_GAP, rtl=labels.rtl,
    )  # fmt: skip
    used = row + sum(block.height for block in blocks) + _GAP * (len(blocks) - 1)
    y = _TOP + max(0, (bottom - _TOP - used) // 2)  # the whole in the middle of the room
    if avatar is not None:
        y = creator(image, fonts, name, avatar, top=y, side=112, largest=48, left=_MARGIN,
                    right=WIDTH - _MARGIN, look=look) + 40  # fmt: skip
    draw_blocks(image, blocks, left=_MARGIN, right=WIDTH - _MARGIN, y=y, gap=_GAP, look=look)
    return png(image)


def same_words(a: str, b: str) -> bool:
    """Whether two texts say the same, whatever their case and closing punctuation."""
    ending = "!.?\uff01\u3002\uff1f "  # and the full-width ones
    return a.strip().rstrip(ending).casefold() == b.strip().rstrip(ending).casefold()


def render_link_card(
    *,
    name: str,
    prompt: str,
    url: str,
    qr: str | None = None,
    avatar: Image.Image | None = None,
    labels: CardLabels = CardLabels(),
    fonts: FontSet | None = None,
    look: Theme = DEFAULT,
) -> bytes:
    """The PNG that invites messages to a link: the invitation, the creator's picture (if
    given) and name, the link's prompt, the QR code of ``qr`` (the link's full address, if
    given) and the address as a person types it (``url``: host and path, no scheme)."""
    fonts = fonts or installed()
    image = background(look, (WIDTH, HEIGHT))
    width = WIDTH - 2 * _MARGIN
    lines, size = heading_lines(
        fonts, labels.invitation, width=width, largest=76, smallest=40, most=3
    )
    y = draw_lines(image, lines, left=_MARGIN, right=WIDTH - _MARGIN, y=_TOP, size=size,
                   fill=look.on_background, leading=1.25)  # fmt: skip
    if avatar is not None:
        y = creator(image, fonts, name, avatar, top=y + 32, side=128, largest=52, left=_MARGIN,
                    right=WIDTH - _MARGIN, look=look) + 40  # fmt: skip
    else:
        lines, size = heading_lines(fonts, name, width=width, largest=52, smallest=24, most=2)
        y = draw_lines(image, lines, left=_MARGIN, right=WIDTH - _MARGIN, y=y + 24, size=size,
                       fill=look.on_background, leading=1.3) + 32  # fmt: skip
    bottom = _footer(image, fonts, labels, url, look)
    if qr:
        left, top, module, count = qr_box(qr)
        _qr(image, qr, left=left, top=top, module=module, count=count, look=look)
        bottom = top - module * _QR_BORDER
    bottom -= _GAP
    if not same_words(prompt, labels.invitation):  # the heading says it already
        blocks = fit(
            fonts, [Piece(prompt)], width=width, available=bottom - y, largest=60, smallest=16,
            gap=_GAP, rtl=labels.rtl,
        )  # fmt: skip
        draw_blocks(image, blocks, left=_MARGIN, right=WIDTH - _MARGIN, y=y, gap=_GAP, look=look)
    return png(image)


# The QR code: error correction M (a crease or a cracked screen), a quiet zone of four
# modules, in a white square of about _QR_SIDE px centred above the address (where a
# link card's address goes: its place depends on nothing else on the card).
_QR_SIDE = 360
_QR_BORDER = 4
_QR_BOTTOM = _BOTTOM - _BRAND - 24 - _ADDRESS - 16 - 24  # with an address of one line


def _qr_matrix(text: str) -> tuple[bytearray, ...]:
    return tuple(segno.make(text, error="m", micro=False, boost_error=False).matrix)


def qr_box(text: str) -> tuple[int, int, int, int]:
    """Where a link card draws the QR code of ``text``: the left and top of its first
    module, the module's side in px and the modules per side (quiet zone excluded)."""
    count = len(_qr_matrix(text))
    module = _QR_SIDE // (count + 2 * _QR_BORDER)
    side = module * (count + 2 * _QR_BORDER)
    box_left, box_top = (WIDTH - side) // 2, _QR_BOTTOM - side
    return box_left + module * _QR_BORDER, box_top + module * _QR_BORDER, module, count


def _qr(
    image: Image.Image, text: str, *, left: int, top: int, module: int, count: int, look: Theme
) -> None:
    draw = ImageDraw.Draw(image)
    quiet = module * _QR_BORDER
    draw.rounded_rectangle(
        (left - quiet, top - quiet, left + module * count + quiet - 1,
         top + module * count + quiet - 1),
        radius=module * 2, fill=(255, 255, 255),
    )  # fmt: skip
    for row, cells in enumerate(_qr_matrix(text)):
        for column, dark in enumerate(cells):
            if dark:
                x, y = left + column * module, top + row * module
                draw.rectangle((x, y, x + module - 1, y + module - 1), fill=(27, 27, 31))


def _round(picture: Image.Image, side: int) -> tuple[Image.Image, Image.Image]:
    """The picture scaled to ``side`` on white (for any transparency), and a smooth
    circular mask of that side."""
    scaled = picture.convert("RGBA").resize((side, side), Image.Resampling.LANCZOS)
    flat = Image.new("RGB", (side, side), (255, 255, 255))
    flat.paste(scaled, (0, 0), scaled)
    return flat, _disc(side)


def _disc(side: int) -> Image.Image:
    big = Image.new("L", (side * 4, side * 4), 0)
    ImageDraw.Draw(big).ellipse((0, 0, side * 4 - 1, side * 4 - 1), fill=255)
    return big.resize((side, side), Image.Resampling.LANCZOS)


_NAME_WIDTH = WIDTH - 2 * _MARGIN - 112 - 32  # beside the picture, on an answer card


def _name(fonts: FontSet, name: str, *, width: int, largest: int) -> tuple[list[Line], int]:
    lines, size = heading_lines(fonts, name, width=width, largest=largest, smallest=24, most=2)
    if len(lines) > 2:
        lines, size = heading_lines(fonts, name, width=width, largest=22, smallest=16, most=3)
    return lines, size


def creator_height(fonts: FontSet, name: str, *, side: int, largest: int, width: int) -> int:
    """The height ``creator`` draws, without drawing."""
    lines, size = _name(fonts, name, width=width, largest=largest)
    return max(side, round(size * 1.25) * len(lines))


def creator(
    image: Image.Image,
    fonts: FontSet,
    name: str,
    picture: Image.Image,
    *,
    top: int,
    side: int,
    largest: int,
    left: int,
    right: int,
    look: Theme,
) -> int:
    """The creator's picture in a ring at ``left``, their name beside it (two lines at
    most while it fits at 24 px or more, else more, smaller: a name is never cut); the y
    below the row."""
    ring = max(4, side // 24)
    white = Image.new("RGB", (side + 2 * ring, side + 2 * ring), look.box)
    image.paste(white, (left - ring, top - ring), _disc(side + 2 * ring))
    flat, mask = _round(picture, side)
    image.paste(flat, (left, top), mask)
    text_left = left + side + 32
    lines, size = _name(fonts, name, width=right - text_left, largest=largest)
    height = round(size * 1.25) * len(lines)
    y = top + max(0, (side - height) // 2)
    for line in lines:  # beside the picture, whatever the name's direction
        draw_lines(
            image, [line], left=text_left, right=text_left + round(line.width), y=y,
            size=size, fill=look.on_background, leading=1.25,
        )  # fmt: skip
        y += round(size * 1.25)
    return top + max(side, height)
