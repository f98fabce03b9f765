"""Wall-clock time as stored (integer microseconds since the Unix epoch, UTC) and as shown."""

from __future__ import annotations

import time
from datetime import date, timedelta
from functools import lru_cache

_EPOCH = date(1970, 1, 1)


def now_us() -> int:
    return time.time_ns() // 1000


def isoformat_us(epoch_us: int) -> str:
    """ISO 8601 in UTC with millisecond precision, e.g. ``2026-11-21T12:00:00.000Z``.

    Integer arithmetic and a cached date: an inbox page shows 20 of these, and making a
    ``datetime`` for each was a sixth of the page's CPU (py-spy, SQLite, 1M messages).
    """
    seconds, ms = divmod(epoch_us // 1000, 1000)
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3_600)
    minutes, seconds = divmod(seconds, 60)
    return f"{_day(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}.{ms:03d}Z"


@lru_cache(maxsize=4096)
def _day(days: int) -> str:
    return (_EPOCH + timedelta(days=days)).isoformat()
