"""The landscape preview (1200 by 630 px) that a post of a link or an answer shows on X,
LINE, Mastodon and the like (``og:image``): drawn like the story cards (``web.cards.draw``:
the same fonts for every script and emoji, the link's theme), laid out for a band.

A link's preview reads "Send me anonymous messages", the creator and the prompt; an
answer's, the creator, the question and the answer. The texts are fitted like a card's
(``web.cards.fit``): shrunk and wrapped, never cut.
"""

from __future__ import annotations

from PIL import Image

from anonbox.web.cards.draw import CardLabels, address, creator, png, same_words
from anonbox.web.cards.fit import Piece, draw_blocks, draw_lines, fit, heading_lines
from anonbox.web.cards.fonts import FontSet, installed
from anonbox.web.cards.text import layout
from anonbox.web.cards.themes import DEFAULT, Theme, background

PREVIEW_WIDTH, PREVIEW_HEIGHT = 1200, 630
_MARGIN = 56
_SIDE = 72  # the creator's picture
_GAP = 24
_BRAND = 30


def render_preview(
    *,
    name: str,
    prompt: str | None = None,
    message: str | None = None,
    reply: str | None = None,
    url: str | None = None,
    avatar: Image.Image | None = None,
    labels: CardLabels = CardLabels(),  # noqa: B008 - frozen, never changed
    fonts: FontSet | None = None,
    look: Theme = DEFAULT,
) -> bytes:
    """The preview of a link (``prompt``) or of an answer (``message`` and ``reply``):
    the creator (their picture, if given, and name) at the top, the brand and the address
    (``url``: host and path) at the bottom, the texts between."""
    fonts = fonts or installed()
    image = background(look, (PREVIEW_WIDTH, PREVIEW_HEIGHT))
    left, right = _MARGIN, PREVIEW_WIDTH - _MARGIN
    width = right - left
    # The bottom row: the brand, and the address at the right.
    brand = layout(labels.brand, fonts, _BRAND, width // 3, rtl=labels.rtl)[0]
    bottom = PREVIEW_HEIGHT - 40
    draw_lines(
        image, [brand], left=left, right=left + round(brand.width), y=bottom - _BRAND,
        size=_BRAND, fill=look.on_background, leading=1.0,
    )  # fmt: skip
    if url:
        shown = round(brand.width) + 32
        lines, size = heading_lines(
            fonts, url, width=width - shown, largest=_BRAND, smallest=16, most=1
        )
        line = lines[0]
        address(image, fonts, url, bottom=bottom, width=round(line.width) + 1,
                left=right - round(line.width) - 1, largest=size, look=look)  # fmt: skip
    bottom -= _BRAND + 28
    # The top row: the creator; on a link's preview, under the invitation.
    y = 40
    if message is None:
        lines, size = heading_lines(
            fonts, labels.invitation, width=width, largest=52, smallest=30, most=1
        )
        y = draw_lines(image, lines, left=left, right=right, y=y, size=size,
                       fill=look.on_background, leading=1.2) + 12  # fmt: skip
    if avatar is not None:
        y = creator(image, fonts, name, avatar, top=y, side=_SIDE, largest=38, left=left,
                    right=right, look=look) + _GAP  # fmt: skip
    else:
        lines, size = heading_lines(fonts, name, width=width, largest=38, smallest=20, most=1)
        y = draw_lines(image, lines, left=left, right=right, y=y, size=size,
                       fill=look.on_background, leading=1.25) + _GAP  # fmt: skip
    if message is None:
        said = not (prompt or "").strip() or same_words(prompt or "", labels.invitation)
        pieces = [] if said else [Piece(prompt or "")]
    else:
        pieces = [
            Piece(message, labels.anonymous_message),
            Piece(reply or "", labels.replied % {"name": name}),
        ]
    if pieces:
        blocks = fit(
            fonts, pieces, width=width, available=bottom - y, largest=48, smallest=12,
            gap=16, rtl=labels.rtl,
        )  # fmt: skip
        draw_blocks(image, blocks, left=left, right=right, y=y, gap=16, look=look)
    return png(image)
