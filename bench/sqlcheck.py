"""``--check-sql``: the statements anonbox and the floor send for one request of each
scenario, traced in their drivers (``bench/sqltrace.py``) and compared."""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

from layout import LOGS
from scenarios import PAGE_SQL_SCENARIOS, SQL_SCENARIOS, Config, Fixture, probe
from servers import Server, log

_LITERAL = re.compile(r"'(?:[^']|'')*'")
_PARAM = re.compile(r"[$?]\d+")
_NUMBER = re.compile(r"\b\d+\b")


# What anonbox runs on its own timers, whatever the requests (on SQLite, the outbox tail
# that hands events to the channels and the live streams): not a request's SQL.
BACKGROUND = (
    "SELECT seq, link_id FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
    "SELECT id FROM sessions WHERE revoked_at >= ?",
)


def normalised(db: str, statements: list[str]) -> list[str]:
    """Statements with their values replaced by ``?``: SQLite's trace shows the values it
    bound. SQLite's own work inside a statement (its triggers' statements, which it shows as
    comments, FTS5's reads of its tables, and the statement shown again at each trigger it
    starts) is left out: it is the same for whoever sent the statement; so are the
    ``BACKGROUND`` statements."""
    out: list[str] = []
    for statement in statements:
        if db == "sqlite" and (statement.startswith(("--", "PRAGMA")) or "'main'." in statement):
            continue
        text = _NUMBER.sub("?", _PARAM.sub("?", _LITERAL.sub("?", statement))).rstrip("; ")
        if text in BACKGROUND:
            continue
        if db == "sqlite" and out and out[-1] == text:
            continue
        out.append(text)
    return out


def traced_statements(trace: Path, since: int, until: int) -> list[str]:
    lines = []
    with trace.open() as read:
        for line in read:
            stamp, _, statement = line.rstrip("\n").partition(" ")
            if since <= int(stamp) <= until:
                lines.append(statement)
    return lines


def check_sql(db: str, fixture: Fixture, config: Config) -> dict[str, dict[str, list[str]]]:
    """What each app sends to the database for one request of each scenario: the same
    request three times once warm, the sequence seen most often (anything running beside
    the request, like anonbox's outbox relay, could fall in the window once)."""
    api = [s for s in SQL_SCENARIOS if not config.only or s in config.only]
    # The pages (their link made already: pages.setup), by anonbox without its page cache,
    # recorded as anonbox's.
    web = [
        s
        for s in PAGE_SQL_SCENARIOS
        if fixture.pages_link and (not config.only or s in config.only)
    ]
    names = api + web
    found: dict[str, dict[str, list[str]]] = {name: {} for name in names}
    for app, asked in (("anonbox", api), ("anonbox-nocache", web), ("floor", names)):
        if not asked:
            continue
        trace = LOGS / f"sql-{db}-{app}.log"
        trace.unlink(missing_ok=True)
        with Server(app, db, fixture.url, trace=trace) as server:
            for name in asked:
                for _ in range(2):  # caches warm, the key's last use recorded
                    probe(server, fixture, name)
                seen: Counter[tuple[str, ...]] = Counter()
                for _ in range(3):
                    time.sleep(0.2)
                    since = time.monotonic_ns()
                    probe(server, fixture, name)
                    until = time.monotonic_ns()
                    seen[tuple(normalised(db, traced_statements(trace, since, until)))] += 1
                found[name][app.removesuffix("-nocache")] = list(seen.most_common(1)[0][0])
    for name, apps in found.items():
        same = apps["anonbox"] == apps["floor"]
        log(
            f"{db}: SQL of {name}: anonbox {len(apps['anonbox'])} statements,"
            f" floor {len(apps['floor'])}: {'the same' if same else 'DIFFERENT'}"
        )
    return found
