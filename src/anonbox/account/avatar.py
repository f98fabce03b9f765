"""The creator's picture: an uploaded image made safe to serve, or one generated for them.

An upload is decoded only if it is what it says by its content (PNG, JPEG or WebP: the
name and the declared type count for nothing), at most ``MAX_BYTES`` and at most
``MAX_PIXELS`` declared pixels (read from the header, before anything is decoded: a small
file declaring a huge picture, a decompression bomb, is refused without being drawn). It
is turned upright (EXIF orientation), converted to sRGB, cropped square from its centre,
scaled to ``SIDE`` and written afresh as WebP, so nothing of the original file but its
pixels is kept: no EXIF (no GPS position), no ICC profile, no XMP, no text chunks.

A creator without an upload gets a generated picture: a symmetric pattern of squares on
one of six colours, drawn from a digest of their account id (never from the e-mail address,
and the id itself cannot be read back from it); one who has not chosen a name yet gets
the same neutral silhouette as everyone else, so a picture never sets apart an account
that shows only "The creator". Each picture has a public address (``AvatarRef.url``).
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
import warnings
from dataclasses import dataclass
from typing import Literal

from PIL import Image, ImageCms, ImageDraw, ImageOps

from anonbox.core.errors import FieldProblem, ValidationFailed

MAX_BYTES = 2 * 1024 * 1024
SIDE = 256  # the stored picture is SIDE x SIDE
# Declared pixels at most: 4096 x 4096 decodes to 64 MiB as RGBA. A JPEG is decoded at a
# reduced scale (``draft``), so its limit is four times larger for the same memory.
MAX_PIXELS = 4096 * 4096
MAX_JPEG_PIXELS = 4 * MAX_PIXELS
FORMATS = ("PNG", "JPEG", "WEBP")
MEDIA_TYPES = ("image/png", "image/jpeg", "image/webp")
_WEBP_QUALITY = 86

# Six colours (white on each is at least 4.5:1; none is the cards' own background, the
# pages' accent) and the neutral grey.
PALETTE = (
    (176, 42, 42),
    (163, 32, 107),
    (30, 107, 51),
    (138, 75, 0),
    (11, 95, 134),
    (92, 61, 153),
)
NEUTRAL = (106, 107, 117)
_WHITE = (255, 255, 255)
_GRID = 5  # the generated pattern is 5 x 5 squares, mirrored left to right


class UnusableAvatar(ValidationFailed):
    """An upload that cannot be a picture: the field is ``avatar``, the problem says why."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message, [FieldProblem("avatar", problem)])


def reencode(data: bytes) -> bytes:
    """The upload as a SIDE x SIDE WebP with nothing but its pixels, or UnusableAvatar."""
    if len(data) > MAX_BYTES:
        raise UnusableAvatar("A picture can be at most 2 MB", "too_large")
    if not data:
        raise UnusableAvatar("Send a PNG, JPEG or WebP picture", "missing")
    try:
        with warnings.catch_warnings():
            # Pillow only warns between MAX_IMAGE_PIXELS and twice that: refuse it too.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=FORMATS)  # reads the header only
            limit = MAX_JPEG_PIXELS if image.format == "JPEG" else MAX_PIXELS
            if image.width * image.height > limit:
                raise UnusableAvatar(
                    f"The picture is too large: at most {MAX_PIXELS // 1_000_000} megapixels",
                    "too_many_pixels",
                )
            if image.format == "JPEG":
                image.draft("RGB", (SIDE, SIDE))  # decode at 1/2 to 1/8 scale if it can
            image.load()
            return _clean(image)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise UnusableAvatar(
            f"The picture is too large: at most {MAX_PIXELS // 1_000_000} megapixels",
            "too_many_pixels",
        ) from exc
    except UnusableAvatar:
        raise
    except (OSError, ValueError, SyntaxError, EOFError) as exc:  # not one, or damaged
        raise UnusableAvatar("Send a PNG, JPEG or WebP picture", "unsupported_format") from exc


def _clean(image: Image.Image) -> bytes:
    ImageOps.exif_transpose(image, in_place=True)  # no copy of an upright picture
    image = _srgb(image)
    has_alpha = image.mode in {"RGBA", "LA", "PA"} or "transparency" in image.info
    mode = "RGBA" if has_alpha else "RGB"
    if image.mode != mode:
        image = image.convert(mode)
    side = min(image.width, image.height)
    left, top = (image.width - side) // 2, (image.height - side) // 2
    image = image.resize(
        (SIDE, SIDE),
        Image.Resampling.LANCZOS,
        box=(left, top, left + side, top + side),
        reducing_gap=3.0,  # a quick box reduction first: a 16 MP picture in a fraction
    )
    # A new image of the pixels alone: nothing of the source's info (EXIF, ICC, XMP, text)
    # can follow it into the file.
    pixels = Image.frombytes(image.mode, image.size, image.tobytes())
    out = io.BytesIO()
    pixels.save(out, format="WEBP", quality=_WEBP_QUALITY, method=4)
    return out.getvalue()


def _srgb(image: Image.Image) -> Image.Image:
    """The picture's colours in sRGB: a phone's wide-gamut photo would look dull once its
    profile is dropped. A profile that cannot be read is ignored."""
    profile = image.info.get("icc_profile")
    if not profile or image.mode not in {"RGB", "RGBA", "CMYK"}:
        return image
    try:
        source = ImageCms.ImageCmsProfile(io.BytesIO(profile))
        mode = "RGBA" if image.mode == "RGBA" else "RGB"
        converted = ImageCms.profileToProfile(
            image, source, ImageCms.createProfile("sRGB"), outputMode=mode
        )
    except (ImageCms.PyCMSError, OSError, ValueError):
        return image
    return converted if converted is not None else image


# --- addresses -----------------------------------------------------------------------------

_UPLOADED = re.compile(r"([A-Za-z0-9_-]{16,32})\.webp")
_GENERATED = re.compile(r"([0-9a-f]{20})\.(?:svg|png)")
NEUTRAL_URL = "/avatars/neutral.svg"
# The same pictures as PNG, for the fediverse (Mastodon and Misskey show no SVG).
NEUTRAL_PNG_URL = "/avatars/neutral.png"


@dataclass(frozen=True, slots=True)
class AvatarRef:
    """Which picture stands for a creator: ``key`` is the upload's id, the generated
    pattern's digest, or empty for the neutral one."""

    kind: Literal["uploaded", "generated", "neutral"]
    key: str = ""

    @property
    def url(self) -> str:
        if self.kind == "uploaded":
            return f"/avatars/{self.key}.webp"
        if self.kind == "generated":
            return f"/avatars/generated/{self.key}.svg"
        return NEUTRAL_URL

    @property
    def raster_url(self) -> str:
        """The address of the picture as a raster image, for the fediverse: the upload
        itself (WebP), else the generated or neutral picture drawn as PNG."""
        if self.kind == "uploaded":
            return self.url
        if self.kind == "generated":
            return f"/avatars/generated/{self.key}.png"
        return NEUTRAL_PNG_URL

    @property
    def raster_type(self) -> str:
        """The media type of ``raster_url``."""
        return "image/webp" if self.kind == "uploaded" else "image/png"


def generated_key(user_id: str) -> str:
    """The digest a creator's generated picture is drawn from: the same for all their
    links, and nothing of the account id can be read back from it."""
    return hashlib.sha256(f"anonbox avatar\0{user_id}".encode()).hexdigest()[:20]


def avatar_ref(*, user_id: str, uploaded: str | None, named: bool) -> AvatarRef:
    if uploaded:
        return AvatarRef("uploaded", uploaded)
    if named:
        return AvatarRef("generated", generated_key(user_id))
    return AvatarRef("neutral")


def uploaded_id(file: str) -> str | None:
    """The upload's id in an address's last part (``{id}.webp``), if it is one."""
    found = _UPLOADED.fullmatch(file)
    return found.group(1) if found else None


def generated_of(file: str) -> str | None:
    """The generated picture's key in an address's last part (``{key}.svg`` or
    ``{key}.png``), if it is one."""
    found = _GENERATED.fullmatch(file)
    return found.group(1) if found else None


# --- generated pictures --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pattern:
    colour: tuple[int, int, int]
    cells: frozenset[tuple[int, int]]  # (column, row) of the white squares


def pattern(key: str) -> Pattern:
    """The squares and colour of a generated picture: 15 bits choose the left three
    columns (mirrored), a byte the colour; never blank, never full."""
    digest = hashlib.sha256(key.encode()).digest()
    bits = int.from_bytes(digest[1:3], "big")
    cells = set()
    for row in range(_GRID):
        for column in range(3):
            if bits >> (row * 3 + column) & 1:
                cells.update({(column, row), (_GRID - 1 - column, row)})
    if len(cells) < 4 or len(cells) > 20:  # too plain to tell apart: a fixed ring
        cells = {(c, r) for c in range(_GRID) for r in range(_GRID) if c in {1, 3} or r == 2}
    return Pattern(PALETTE[digest[0] % len(PALETTE)], frozenset(cells))


# On a SIDE x SIDE canvas the pattern fills the circle's inscribed square, less a margin.
_CELL = 32
_ORIGIN = (SIDE - _GRID * _CELL) // 2


def _hex(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def generated_svg(key: str) -> str:
    drawn = pattern(key)
    squares = "".join(
        f'<rect x="{_ORIGIN + c * _CELL}" y="{_ORIGIN + r * _CELL}" width="{_CELL}"'
        f' height="{_CELL}"/>'
        for c, r in sorted(drawn.cells)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SIDE} {SIDE}"'
        f' width="{SIDE}" height="{SIDE}">'
        f'<circle cx="128" cy="128" r="128" fill="{_hex(drawn.colour)}"/>'
        f'<g fill="#ffffff" shape-rendering="crispEdges">{squares}</g></svg>'
    )


# The neutral silhouette: a head and shoulders, the shoulders cut by the circle.
_HEAD = (128, 100, 46)  # centre x, centre y, radius
_SHOULDERS = (48, 160, 208, 320)  # the ellipse's box


def neutral_svg() -> str:
    x, y, r = _HEAD
    left, top, right, bottom = _SHOULDERS
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SIDE} {SIDE}"'
        f' width="{SIDE}" height="{SIDE}">'
        '<clipPath id="c"><circle cx="128" cy="128" r="128"/></clipPath>'
        f'<g clip-path="url(#c)"><rect width="{SIDE}" height="{SIDE}" fill="{_hex(NEUTRAL)}"/>'
        f'<circle cx="{x}" cy="{y}" r="{r}" fill="#ffffff"/>'
        f'<ellipse cx="{(left + right) // 2}" cy="{(top + bottom) // 2}"'
        f' rx="{(right - left) // 2}" ry="{(bottom - top) // 2}" fill="#ffffff"/></g></svg>'
    )


def picture(ref: AvatarRef, uploaded: bytes | None = None) -> Image.Image:
    """The picture as a square RGB(A) image for the share cards: the stored upload, or the
    generated one drawn like its SVG."""
    if ref.kind == "uploaded" and uploaded is not None:
        with Image.open(io.BytesIO(uploaded), formats=("WEBP",)) as stored:
            return stored.convert("RGBA")
    return _drawn(ref, 1)


def _drawn(ref: AvatarRef, scale: int) -> Image.Image:
    """The generated or neutral picture, square, ``scale`` times SIDE."""
    side = SIDE * scale
    image = Image.new("RGB", (side, side), NEUTRAL)
    draw = ImageDraw.Draw(image)
    if ref.kind == "generated":
        drawn = pattern(ref.key)
        image.paste(drawn.colour, (0, 0, side, side))
        cell = _CELL * scale
        for c, r in drawn.cells:
            x, y = (_ORIGIN + c * _CELL) * scale, (_ORIGIN + r * _CELL) * scale
            draw.rectangle((x, y, x + cell - 1, y + cell - 1), fill=_WHITE)
    else:
        x, y, r = (v * scale for v in _HEAD)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=_WHITE)
        draw.ellipse(tuple(v * scale for v in _SHOULDERS), fill=_WHITE)
    return image


# The PNGs are drawn this many times larger and scaled down, so the circle's edge is smooth.
_SUPERSAMPLE = 4


def _png(ref: AvatarRef) -> bytes:
    """The generated or neutral picture as its SVG draws it: the square picture inside a
    circle, transparent around it, as a SIDE x SIDE PNG (the same bytes every time)."""
    big = SIDE * _SUPERSAMPLE
    square = _drawn(ref, _SUPERSAMPLE)
    mask = Image.new("L", (big, big), 0)
    ImageDraw.Draw(mask).ellipse((0, 0, big - 1, big - 1), fill=255)
    round_ = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    round_.paste(square, (0, 0), mask)
    out = io.BytesIO()
    round_.resize((SIDE, SIDE), Image.Resampling.LANCZOS).save(out, format="PNG")
    return out.getvalue()


@functools.lru_cache(maxsize=256)  # ~12 KB each; drawing one takes tens of milliseconds
def generated_png(key: str) -> bytes:
    return _png(AvatarRef("generated", key))


@functools.lru_cache(maxsize=1)
def neutral_png() -> bytes:
    return _png(AvatarRef("neutral"))
