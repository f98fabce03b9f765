"""Comparing two series of answer times without a timing bound: how often one answers
first (for the safety tests that hold a dropped post to a stored one's time)."""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

import httpx


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


class AnswerTimes:
    """Each kind of post's answer times, as the sender's clock sees them and as each
    answer's own ``execution_time_ms`` tells them (without the network's noise, the
    sharper of the two)."""

    def __init__(self) -> None:
        self._clock: defaultdict[str, list[float]] = defaultdict(list)
        self._told: defaultdict[str, list[float]] = defaultdict(list)

    def created(self, kind: str, post: Callable[[], httpx.Response]) -> httpx.Response:
        """Send ``post``, which must be answered 201, and keep its times under ``kind``."""
        started = time.perf_counter()
        answer = post()
        self._clock[kind].append(time.perf_counter() - started)
        assert answer.status_code == 201, answer.text
        self._told[kind].append(answer.json()["metadata"]["execution_time_ms"] / 1e3)
        return answer

    def assert_alike(self, held: str, stored: str) -> None:
        """``assert_alike`` on both clocks."""
        for seen in (self._clock, self._told):
            assert_alike(seen[held], seen[stored])
