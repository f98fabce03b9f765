"""How stored times are shown: the fast formatting says what ``datetime`` says."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from anonbox.core.clock import isoformat_us


def shown_by_datetime(epoch_us: int) -> str:
    at = datetime.fromtimestamp(epoch_us // 1_000_000, tz=UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_us // 1000 % 1000:03d}Z"


@pytest.mark.parametrize(
    ("epoch_us", "shown"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (86_399_999_999, "1970-01-01T23:59:59.999Z"),
        (86_400_000_000, "1970-01-02T00:00:00.000Z"),
        (951_782_400_000_999, "2000-02-29T00:00:00.000Z"),  # a leap day; µs are dropped
        (1_763_726_400_123_456, "2025-11-21T12:00:00.123Z"),
        (2_147_483_647_999_000, "2038-01-19T03:14:07.999Z"),
    ],
)
def test_known_times(epoch_us: int, shown: str) -> None:
    assert isoformat_us(epoch_us) == shown


def test_it_agrees_with_datetime_across_two_centuries() -> None:
    rng = random.Random(20_261_125)
    for _ in range(20_000):
        epoch_us = rng.randrange(0, 7_258_118_400_000_000)  # until 2200
        assert isoformat_us(epoch_us) == shown_by_datetime(epoch_us), epoch_us
