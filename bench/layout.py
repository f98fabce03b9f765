"""Where the benchmark reads and writes: the checkout, its data directory (databases, server
logs, SQL traces, wrk's raw output; not committed) and the committed results."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
DATA = BENCH / ".data"
LOGS = DATA / "logs"
RESULTS = BENCH / "results"
README = ROOT / "README.md"
