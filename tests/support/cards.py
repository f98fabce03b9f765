"""Reading what a share card drew: the modules of its QR code."""

from __future__ import annotations

import io

from PIL import Image

from anonbox.web.cards.draw import qr_box


def drawn_modules(png: bytes, text: str) -> list[list[bool]]:
    """The modules a card drew where ``qr_box`` says the QR code of ``text`` is: each read
    at its centre, dark or light."""
    left, top, module, count = qr_box(text)
    image = Image.open(io.BytesIO(png)).convert("L")
    return [
        [
            image.getpixel((left + column * module + module // 2, top + row * module + module // 2))
            < 128
            for column in range(count)
        ]
        for row in range(count)
    ]
