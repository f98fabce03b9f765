"""The looks a link's cards can take (``links.schemas.CARD_THEMES``, chosen per link), and
the background each draws: a vertical gradient between two colours with a soft pattern of
large, faint rings. Everything else on a card is drawn over this background, so a test can
compare a card's bands with ``background(theme)`` pixel for pixel.

The swatches in the link's settings show the same colours (``templates/card_themes.html``
reads ``swatch`` from here).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from PIL import Image, ImageDraw

Rgb = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Theme:
    name: str
    top: Rgb  # the background's colour at the top of the card
    bottom: Rgb  # ... and at the bottom
    on_background: Rgb  # text drawn on the background (the prompt, the name, the address)
    box: Rgb  # the boxes the message and the reply sit in
    ink: Rgb  # text in a box
    label: Rgb  # a box's label ("Anonymous message")
    ring: Rgb  # the pattern's rings, blended faintly into the background
    outline: Rgb | None = None  # a box's border, where the box is close to the background

    @property
    def swatch(self) -> str:
        """The CSS of the theme's background, for a swatch in the link's settings."""
        return f"linear-gradient(180deg, {_hex(self.top)}, {_hex(self.bottom)})"

    @property
    def swatch_ink(self) -> str:
        return _hex(self.on_background)


def _hex(colour: Rgb) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


_WHITE: Rgb = (255, 255, 255)
_INK: Rgb = (27, 27, 31)
_LABEL: Rgb = (85, 86, 92)

THEMES: dict[str, Theme] = {
    theme.name: theme
    for theme in (
        # The pages' accent colour, as the one card of before issue 41.
        Theme("violet", (61, 43, 214), (109, 40, 217), _WHITE, _WHITE, _INK, _LABEL, _WHITE),
        Theme("peach", (255, 214, 186), (250, 150, 138), (74, 24, 28), _WHITE, _INK, _LABEL,
              _WHITE),
        Theme("ocean", (12, 74, 128), (8, 138, 168), _WHITE, _WHITE, _INK, _LABEL, _WHITE),
        Theme("mint", (204, 245, 224), (126, 212, 178), (10, 62, 46), _WHITE, _INK, _LABEL,
              _WHITE),
        Theme("night", (14, 16, 26), (40, 32, 72), (236, 236, 244), (36, 38, 54),
              (238, 238, 244), (164, 166, 182), (150, 140, 255)),
        Theme("paper", (251, 248, 241), (238, 231, 216), (34, 32, 30), _WHITE, _INK, _LABEL,
              (150, 130, 100), outline=(214, 204, 184)),
    )
}  # fmt: skip
DEFAULT = THEMES["violet"]


def theme(name: str | None) -> Theme:
    """The theme of this name, the default for an unknown one (a link's stored value is
    checked when it is written; this only keeps a card drawable)."""
    return THEMES.get(name or "", DEFAULT)


# Rings: (centre x, centre y, radius), as shares of the card's width and height, so that
# the story card and the landscape preview carry the same pattern.
_RINGS = ((0.92, 0.06, 0.34), (0.06, 0.52, 0.26), (0.88, 0.97, 0.40))
_RING_WIDTH = 0.035  # of the card's width
_RING_ALPHA = 0.07


@functools.cache
def _background(name: str, width: int, height: int) -> Image.Image:
    look = THEMES[name]
    mask = Image.linear_gradient("L").resize((width, height), Image.Resampling.BILINEAR)
    image = Image.composite(
        Image.new("RGB", (width, height), look.bottom),
        Image.new("RGB", (width, height), look.top),
        mask,
    )
    rings = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(rings)
    line = max(2, round(width * _RING_WIDTH))
    for x, y, radius in _RINGS:
        r = radius * width
        cx, cy = x * width, y * height
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=255, width=line)
    faint = rings.point(lambda value: round(value * _RING_ALPHA))
    return Image.composite(Image.new("RGB", (width, height), look.ring), image, faint)


def background(look: Theme, size: tuple[int, int]) -> Image.Image:
    """A new copy of the theme's background at this size (drawn once per size)."""
    return _background(look.name, *size).copy()
