"""Pieces of the fuzz tests that type host names at anonbox (an instance to sign in with,
a webhook's URL): well-formed labels, and whether anonbox's own check would take a text."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12)


def taken_by(check: Callable[..., object], text: str) -> bool:
    """Whether ``check(text, allow_private=False)`` takes ``text``: False when it refuses
    it, or raises on it in any way (the very crash a test may be looking for)."""
    try:
        check(text, allow_private=False)
    except Exception:
        return False
    return True
