"""Share cards: an answered message and its reply, or a link's invitation, drawn as a PNG
sized for phone stories.

Text in any script is drawn with the Noto fonts (``web.cards.fonts``: which font draws what)
and laid out by ``web.cards.text`` (grapheme clusters, line breaks per script, right-to-left
order). The texts are wrapped to the card and shrunk until they fit; at the smallest size a
text that still does not fit is cut with an ellipsis (only hundreds of line breaks get
there: 500 characters of words fit at every size). What the cards say besides the texts
(``CardLabels``) is a parameter, English by default, so pages can pass their language's.

Given the creator's picture, a card leads with it and their name; a link card also draws
the QR code of its address (``qr_box`` says where), so a story's viewer can scan it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import regex
import segno
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
    by counting lines, sizes by halving the range: each tried size measures every word of
    every text again; only the one chosen is laid out in full)."""
    available -= _GAP * (len(texts) - 1)
    labelled = sum(text.label is not None for text in texts)

    def fits(size: int) -> bool:
        count = labelled + sum(
            len(breaks(glyphs, size, _TEXT_WIDTH)) for text in texts for glyphs in text.glyphs
        )
        return 2 * _PADDING * len(texts) + round(size * 1.35) * count <= available

    low, high = 0, len(sizes)  # sizes[:low] are too large; sizes[high:] fit, or high = len
    while low < high:
        middle = (low + high) // 2
        if fits(sizes[middle]):
            high = middle
        else:
            low = middle + 1
    if high < len(sizes):
        return _blocks(fonts, texts, sizes[high], rtl)
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
    image.save(out, format="PNG", compress_level=1)  # a third of level 6's time, ~10% larger
    return out.getvalue()


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
) -> bytes:
    """The PNG of one answered message: the prompt, the message, and the creator's reply;
    with ``url`` (host and path, no scheme), the link's address above the brand, so that
    someone who sees the card in a story can find where to ask; with ``avatar`` (a square
    picture), the creator's picture and name above the prompt."""
    fonts = fonts or installed()
    image = Image.new("RGB", (WIDTH, HEIGHT), _BACKGROUND)
    top = 160
    if avatar is not None:
        top = _creator(image, fonts, name, avatar, top=112, side=120, largest=48) + 40
    y = _heading(image, fonts, prompt, y=top, size=44, line_height=60, max_lines=3) + 40
    footer_top = HEIGHT - (220 if url else 160)
    texts = [
        _Text(labels.anonymous_message, paragraphs(message, fonts)),
        _Text(labels.replied % {"name": name}, paragraphs(reply, fonts)),
    ]
    _draw_blocks(image, _fit(fonts, texts, footer_top - y, _SIZES, labels.rtl), y)
    if url:
        _address(image, fonts, url, top=HEIGHT - 180, largest=40)
    _brand(image, fonts, labels)
    return _png(image)


def _address(image: Image.Image, fonts: FontSet, url: str, *, top: int, largest: int) -> None:
    """The whole address on one line from ``top``, as small as it takes (never under 20 px)."""
    for size in range(largest, 19, -4):
        lines = layout(url, fonts, size, WIDTH - 2 * _MARGIN, rtl=False)
        if len(lines) == 1 or size <= 20:
            break
    draw_line(
        image, lines[0], left=_MARGIN, right=WIDTH - _MARGIN, baseline=top + size, size=size,
        fill=_ON_BACKGROUND,
    )  # fmt: skip


def _same_words(a: str, b: str) -> bool:
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
) -> bytes:
    """The PNG that invites messages to a link: the invitation, the creator's picture (if
    given) and name, the link's prompt, the QR code of ``qr`` (the link's full address, if
    given) and the address as a person types it (``url``: host and path, no scheme)."""
    fonts = fonts or installed()
    image = Image.new("RGB", (WIDTH, HEIGHT), _BACKGROUND)
    heading_top = 160 if qr or avatar is not None else 200
    y = _heading(
        image, fonts, labels.invitation, y=heading_top, size=80, line_height=104, max_lines=3
    )
    if avatar is not None:
        y = _creator(image, fonts, name, avatar, top=y + 40, side=144, largest=52) + 48
    else:
        y = _heading(image, fonts, name, y=y + 32, size=52, line_height=70, max_lines=2) + 48
    address_top = HEIGHT - 300
    bottom = address_top
    if qr:
        left, top, module, count = qr_box(qr)
        _qr(image, qr, left=left, top=top, module=module, count=count)
        bottom = top - _GAP
    if not _same_words(prompt, labels.invitation):  # the heading says it already
        blocks = _fit(
            fonts,
            [_Text(None, paragraphs(prompt, fonts))],
            bottom - y,
            range(64, 27, -4),
            labels.rtl,
        )
        _draw_blocks(image, blocks, y)
    _address(image, fonts, url, top=address_top + 40, largest=48)
    _brand(image, fonts, labels)
    return _png(image)


# The QR code: error correction M (a crease or a cracked screen), a quiet zone of four
# modules, in a white square of about _QR_SIDE px centred above the address.
_QR_SIDE = 440
_QR_BORDER = 4


def _qr_matrix(text: str) -> tuple[bytearray, ...]:
    return tuple(segno.make(text, error="m", micro=False, boost_error=False).matrix)


def qr_box(text: str) -> tuple[int, int, int, int]:
    """Where a link card draws the QR code of ``text``: the left and top of its first
    module, the module's side in px and the modules per side (quiet zone excluded)."""
    count = len(_qr_matrix(text))
    module = _QR_SIDE // (count + 2 * _QR_BORDER)
    side = module * (count + 2 * _QR_BORDER)
    box_left, box_top = (WIDTH - side) // 2, HEIGHT - 300 - 8 - side
    return box_left + module * _QR_BORDER, box_top + module * _QR_BORDER, module, count


def _qr(image: Image.Image, text: str, *, left: int, top: int, module: int, count: int) -> None:
    draw = ImageDraw.Draw(image)
    quiet = module * _QR_BORDER
    draw.rounded_rectangle(
        (left - quiet, top - quiet, left + module * count + quiet - 1,
         top + module * count + quiet - 1),
        radius=module * 2, fill=_BOX,
    )  # fmt: skip
    for row, cells in enumerate(_qr_matrix(text)):
        for column, dark in enumerate(cells):
            if dark:
                x, y = left + column * module, top + row * module
                draw.rectangle((x, y, x + module - 1, y + module - 1), fill=_INK)


def _round(picture: Image.Image, side: int) -> tuple[Image.Image, Image.Image]:
    """The picture scaled to ``side`` on white (for any transparency), and a smooth
    circular mask of that side."""
    scaled = picture.convert("RGBA").resize((side, side), Image.Resampling.LANCZOS)
    flat = Image.new("RGB", (side, side), _BOX)
    flat.paste(scaled, (0, 0), scaled)
    return flat, _disc(side)


def _disc(side: int) -> Image.Image:
    big = Image.new("L", (side * 4, side * 4), 0)
    ImageDraw.Draw(big).ellipse((0, 0, side * 4 - 1, side * 4 - 1), fill=255)
    return big.resize((side, side), Image.Resampling.LANCZOS)


def _creator(
    image: Image.Image,
    fonts: FontSet,
    name: str,
    picture: Image.Image,
    *,
    top: int,
    side: int,
    largest: int,
) -> int:
    """The creator's picture in a white ring at the left, their name beside it (one or
    two lines, as large as fits up to ``largest``); the y below the row."""
    ring = max(4, side // 24)
    white = Image.new("RGB", (side + 2 * ring, side + 2 * ring), _BOX)
    image.paste(white, (_MARGIN - ring, top - ring), _disc(side + 2 * ring))
    flat, mask = _round(picture, side)
    image.paste(flat, (_MARGIN, top), mask)
    left = _MARGIN + side + 32
    width = WIDTH - _MARGIN - left
    size = largest
    for size in range(largest, 27, -4):
        lines = layout(name, fonts, size, width)
        if len(lines) <= 2:
            break
    if len(lines) > 2:  # still too long at the smallest size: cut, with an ellipsis
        graphemes = regex.findall(r"\X", name)
        low, high = 0, len(graphemes)  # the longest cut that fits lies in [low, high)
        while high - low > 1:
            middle = (low + high) // 2
            fits = len(layout("".join(graphemes[:middle]) + "…", fonts, size, width)) <= 2
            low, high = (middle, high) if fits else (low, middle)
        lines = layout("".join(graphemes[:low]).rstrip() + "…", fonts, size, width)
    lines = lines[:2]
    line_height = round(size * 1.25)
    first_top = top + (side - line_height * len(lines)) // 2
    for index, line in enumerate(lines):
        baseline = first_top + index * line_height + round(size * _BASELINE)
        draw_line(
            image, line, left=left, right=left + round(line.width), baseline=baseline,
            size=size, fill=_ON_BACKGROUND,
        )  # fmt: skip
    return top + side
