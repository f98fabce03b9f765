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

    Integer arithmetic, a cached date and ready-made digits: an inbox page shows 20 of
    these. Making a ``datetime`` for each was a sixth of the page's CPU (py-spy, SQLite,
    1M messages); formatting the four numbers was still 23 µs a page, 8 µs with the digits
    looked up (about 3% of a PostgreSQL inbox request).
    """
    seconds, ms = divmod(epoch_us // 1000, 1000)
    days, seconds = divmod(seconds, 86_400)
    minute, second = divmod(seconds, 60)
    return f"{_day(days)}T{_HOUR_MINUTE[minute]}:{_TWO_DIGITS[second]}.{_MILLIS[ms]}Z"


_HOUR_MINUTE = tuple(f"{h:02d}:{m:02d}" for h in range(24) for m in range(60))
_TWO_DIGITS = tuple(f"{n:02d}" for n in range(60))
_MILLIS = tuple(f"{n:03d}" for n in range(1000))


@lru_cache(maxsize=4096)
def _day(days: int) -> str:
    return (_EPOCH + timedelta(days=days)).isoformat()
