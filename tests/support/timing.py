"""Comparing two series of answer times without a timing bound: how often one answers
first (for the safety tests that hold a dropped post to a stored one's time)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def chance_first(faster: Sequence[float], slower: Sequence[float]) -> float:
    """How often a time of ``faster`` is below one of ``slower``, over every pair (ties
    count half): 0.5 when the two are alike, whatever the load does to both."""
    below = sum((a < b) + 0.5 * (a == b) for a in faster for b in slower)
    return below / (len(faster) * len(slower))


def assert_alike(held: Sequence[float], stored: Sequence[float], *, within: float = 0.2) -> None:
    """A held-back post answers first in 0.5 ± ``within`` of pairs with a stored one."""
    chance = chance_first(held, stored)
    assert abs(chance - 0.5) <= within, (
        f"held back first in {chance:.2f} of pairs; medians"
        f" {statistics.median(stored) * 1e3:.2f} ms stored,"
        f" {statistics.median(held) * 1e3:.2f} held back"
    )
