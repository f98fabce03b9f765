"""Contents a message or a reply must keep exactly as sent: the bounds of the 1 to 500
characters both accept, counted in characters (not bytes), and markup that is text, not HTML.
Each is a ``pytest.param`` under a stable id."""

from __future__ import annotations

from typing import Any

import pytest

WITHIN_BOUNDS: list[Any] = [
    pytest.param("x", id="1-char"),
    pytest.param("y" * 500, id="500-chars"),
    pytest.param("\U0001f600" * 500, id="500-emoji"),
    pytest.param("<script>alert('hi')</script> & \"quoted\" <b>", id="html"),
]
