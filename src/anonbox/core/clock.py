"""Wall-clock time as stored (integer microseconds since the Unix epoch, UTC) and as shown."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now_us() -> int:
    return time.time_ns() // 1000


def isoformat_us(epoch_us: int) -> str:
    """ISO 8601 in UTC with millisecond precision, e.g. ``2026-11-21T12:00:00.000Z``."""
    moment = datetime.fromtimestamp(epoch_us / 1_000_000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
