"""Benchmark anonbox against its floor, on SQLite and on PostgreSQL.

    python bench/run.py [--quick] [--db sqlite|postgresql|both]      (or: make bench)
    python bench/run.py --readme      (README table and latest.md again, from latest.json)

For each database: a database migrated by ``anonbox migrate``; two creators made by
``anonbox creator create --json`` (one whose link receives the anonymous writes, one whose
link holds the seeded inbox); 1,000,000 messages seeded into the inbox link by direct
inserts in big batches (same schema, ULIDs from ``anonbox.core.ids.new_ulid``, created_at
in microseconds). The seeded database is kept in ``bench/.data/`` (SQLite: a file;
PostgreSQL: a template database) and copied for the next run, as long as the seed, the
migrations and the credential code are unchanged (``--fresh`` seeds again).

On PostgreSQL, anonbox also writes and replies through PgBouncer in transaction mode
(``anonbox-pooled``, ``bench/pooler.py``; ``--no-pooler`` skips it): what the pooler costs.

Then anonbox (``python -m anonbox serve``, rate limits set out of reach) and the floor
(``bench/floor.py``: Starlette, the same SQL through the same raw driver with the same
durability, the same uvicorn settings) are started one at a time on the same database.
Every scenario runs ``--rounds`` times (at least 2) per app, the apps taking turns (anonbox,
floor; then floor, anonbox; …), so that drift of a shared machine falls on both; the report shows
every run, and the verdicts use the median of the runs. Each run is wrk with 64
connections, a warm-up, then a timed run. The reads run first, on exactly the seeded
rows; then the scenarios that write. The outbox rows the floor writes are marked handed
over once it stops (it has no relay), so that anonbox's relay does not do the floor's
work in anonbox's next run.

First, ``--check-sql`` (on by default) starts both apps under ``bench/sqltrace.py`` and
compares the statements each sends for one request of each scenario.

Writes ``latest.md`` (tables, targets, settings, machine), ``latest.json`` (every run, the
source of the tables) and ``latency.png`` to ``bench/results/`` for a complete run (both
databases, the default sizes and durations), and updates the README's table from them;
any other run writes to ``bench/.data/results/``. Databases, server logs, SQL traces and
wrk's raw output go to ``bench/.data/`` (not committed).

This script runs a benchmark in that order; the modules beside it do one job each:
``scenarios.py`` (the configuration, the scenarios, the seeded fixture, a run's result and
the order of the turns), ``servers.py`` (the processes started and the requests sent to
them), ``seeding.py`` (the database, the seed and its cache), ``load.py`` (one timed wrk
run and what is sampled around it), ``sqlcheck.py`` (``--check-sql``), ``machine.py``
(settings and machine), ``targets.py`` (the verdicts), ``report.py`` and ``chart.py``
(``latest.md``, ``latest.json``, ``latency.png`` and the README's table), ``layout.py``
(where things go).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from layout import DATA, LOGS, RESULTS, ROOT

VENV_PYTHON = ROOT / ".venv" / "bin" / "python"

# Re-run under the project's virtualenv when started with another interpreter.
if (
    VENV_PYTHON.exists()
    and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve()
    and not os.environ.get("BENCH_NO_REEXEC")
):
    os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), *sys.argv])  # noqa: S606

import pages  # noqa: E402  (bench/pages.py, beside this script)
import pages_report  # noqa: E402
import pooler  # noqa: E402
import psutil  # noqa: E402
import servers  # noqa: E402
from load import MIB, measure, settle_outbox  # noqa: E402
from machine import database_settings, machine  # noqa: E402
from report import sql_section, table, update_readme, write_outputs  # noqa: E402
from scenarios import (  # noqa: E402
    PAGE_SCENARIOS,
    PAGE_SQL_SCENARIOS,
    SCENARIO,
    SCENARIOS,
    SQL_SCENARIOS,
    Config,
    Result,
    phases,
    probe,
)
from seeding import POSTGRES_ADMIN_URL, fixture_url, prepare, query_plans  # noqa: E402
from servers import (  # noqa: E402
    BlackHole,
    Server,
    add_slow_webhooks,
    log,
    mute_words,
    unmute_words,
)
from sqlcheck import check_sql  # noqa: E402
from targets import floor_targets, other_targets  # noqa: E402

# --- the run ------------------------------------------------------------------------------


def bench_database(db: str, config: Config) -> tuple[list[Result], dict[str, Any]]:
    started = time.monotonic()
    fixture = prepare(db, config)
    prepared = time.monotonic() - started
    results: list[Result] = []
    notes: dict[str, Any] = {
        "plans": {f"before the runs: {k}": v for k, v in query_plans(db, fixture).items()},
        "seed": {
            "messages": fixture.seeded,
            "seconds": round(fixture.seed_seconds, 1),
            "seeded_at": fixture.seeded_at,
            "cached": fixture.cached,
            "prepare_seconds": round(prepared, 1),
        },
        "rss_start_mib": {},
        "rss_max_mib": {},
        "floor_events_settled": 0,
        "etag": {},  # the send page's ETag, per app (None: the page has none)
        "pages_seen": {},  # each page scenario's first answer, per app (pages.seen)
    }
    if (not config.only or config.only & {*PAGE_SCENARIOS, "flood"}) and not fixture.pages_link:
        # Before the SQL check, which asks for the pages too.
        with Server("anonbox", db, fixture.url) as server:
            pages.setup(server, fixture)
        log(f"{db}: the pages' link {fixture.pages_link}, {pages.ANSWERS} answers")
    sql_asked = {*SQL_SCENARIOS, *PAGE_SQL_SCENARIOS}
    if config.check_sql and (not config.only or config.only & sql_asked):
        # First: a floor that fails a request fails here, not after minutes of runs; and
        # before anonbox-hooked gives the writing creator webhooks, whose deliveries
        # anonbox's relay would write beside the traced requests.
        notes["sql"] = check_sql(db, fixture, config)
        settle_outbox(fixture, db)  # the floor's traced requests
    deep_first_ids: dict[str, str] = {}
    with BlackHole() as hole:
        hooked = False
        for phase in phases(db, pooled=servers.POOLER is not None):
            groups = [
                (app, [SCENARIO[s] for s in names if not config.only or s in config.only])
                for app, names in phase
            ]
            groups = [(app, scenarios) for app, scenarios in groups if scenarios]
            for round_ in range(1, config.rounds + 1):
                # ABBA: every other round the other app goes first, so neither always
                # meets a cold cache or the first minutes of a load on the machine.
                for app, scenarios in groups if round_ % 2 else groups[::-1]:
                    with Server(app, db, fixture.url) as server:
                        if app == "anonbox-hooked" and not hooked:
                            add_slow_webhooks(server, fixture, hole.url)
                            hooked = True
                        muted = mute_words(server, fixture) if app == "anonbox-muted" else []
                        start_rss = psutil.Process(server.pid).memory_info().rss / MIB
                        notes["rss_start_mib"].setdefault(app, start_rss)
                        log(
                            f"{db}: {app} up on {server.base} (pid {server.pid}),"
                            f" RSS {start_rss:.0f} MiB, round {round_}"
                        )
                        for scenario in scenarios:
                            answer = probe(server, fixture, scenario.name)
                            if scenario.name == "inbox_deep":
                                deep_first_ids[app] = answer["items"][0]["id"]
                            if scenario.name in PAGE_SCENARIOS:
                                notes["pages_seen"].setdefault(scenario.name, {})[app] = answer
                            if scenario.name == "page_304":
                                notes["etag"][app] = fixture.page_etag or None
                            if scenario.name == "flood":
                                with pages.Live(server, fixture) as live:
                                    result = measure(
                                        server, scenario, fixture, config, round_, live.start
                                    )
                                result.live = live.figures()
                                log(f"{db}: {app} flood, post → live inbox: {result.live}")
                            else:
                                result = measure(server, scenario, fixture, config, round_)
                            results.append(result)
                            rss = notes["rss_max_mib"]
                            rss[app] = max(rss.get(app, 0.0), result.rss_max_mib)
                            log(
                                f"{db}: {app:14} {scenario.name:11} {result.rps:8.0f} req/s"
                                f"  p50 {result.pct_ms('50'):7.2f} ms"
                                f"  p99 {result.pct_ms('99'):7.2f} ms"
                                f"  errors {result.socket_errors}+{result.http_errors}"
                                f"  CPU {result.cpu_percent:.0f}%"
                                f"  RSS max {result.rss_max_mib:.0f} MiB"
                            )
                        unmute_words(server, fixture, muted)
                    if app == "floor":
                        settled = settle_outbox(fixture, db)
                        notes["floor_events_settled"] += settled
                        log(f"{db}: the floor's {settled:,} outbox rows marked handed over")
    notes["plans"].update({f"after the runs: {k}": v for k, v in query_plans(db, fixture).items()})
    # Recorded and shown in the report rather than raised: the runs are worth keeping.
    if differ := pages.disagreements(notes["pages_seen"]):
        log(f"{db}: THE APPS ANSWER THE PAGES DIFFERENTLY: {'; '.join(differ)}")
    notes["pages_differ"] = differ
    if len(set(deep_first_ids.values())) > 1:
        raise RuntimeError(f"the apps disagree on the deep page: {deep_first_ids}")
    notes["seconds"] = round(time.monotonic() - started, 1)
    return results, notes


# --- main ---------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="short runs (1 s warm-up, 3 s) on a smaller inbox (100,000): every scenario, "
        "for checking the bench; results to bench/.data/results/",
    )
    parser.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--messages", type=int, help="messages in the inbox link")
    parser.add_argument("--depth", type=int, help="how deep the deep page starts")
    parser.add_argument(
        "--recent-elsewhere",
        type=int,
        default=0,
        metavar="N",
        help="also seed N messages to another link, newer than the whole inbox "
        "(traffic the rest of the service received since; default 0). With a link that "
        "holds most rows, PostgreSQL walks pk_messages backwards for the first page and "
        "skips those N rows",
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="S1,S2",
        help="run only these scenarios (" + ", ".join(s.name for s in SCENARIOS) + "; "
        "pages: every public page scenario and the flood)",
    )
    parser.add_argument("--warmup", type=int, help="seconds of warm-up per scenario")
    parser.add_argument("--duration", type=int, help="seconds of timed run per scenario")
    parser.add_argument(
        "--rounds", type=int, default=2, help="runs of every scenario per app (at least 2)"
    )
    parser.add_argument("--fresh", action="store_true", help="seed again, ignoring the cache")
    parser.add_argument(
        "--no-check-sql",
        action="store_true",
        help="skip comparing the statements anonbox and the floor send",
    )
    parser.add_argument(
        "--no-pooler",
        action="store_true",
        help="on PostgreSQL, skip anonbox-pooled (write and reply through PgBouncer in "
        "transaction mode, to show what the pooler costs)",
    )
    parser.add_argument("--out", type=Path, help="where to write the results")
    parser.add_argument(
        "--readme",
        action="store_true",
        help="run nothing: write latest.md, latency.png and the README's table again from "
        "bench/results/latest.json",
    )
    args = parser.parse_args()
    if args.readme:
        payload = json.loads((RESULTS / "latest.json").read_text())
        report = write_outputs(payload, RESULTS)
        update_readme(payload)
        print(f"wrote {report.relative_to(ROOT)} and the README's table")
        return 0
    names = [name for name in args.only.split(",") if name]
    if "pages" in names:  # the public pages' scenarios together (issue 43)
        names += [*PAGE_SCENARIOS, "flood"]
        names.remove("pages")
    only = frozenset(names)
    if unknown := only - set(SCENARIO):
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    if args.rounds < 2:
        parser.error("--rounds must be at least 2: one run cannot show its own noise")
    complete = not (
        args.quick
        or args.db != "both"
        or only
        or args.messages
        or args.depth
        or args.warmup
        or args.duration
        or args.recent_elsewhere
    )
    config = Config(
        warmup_s=args.warmup or (1 if args.quick else 2),
        duration_s=args.duration or (3 if args.quick else 10),
        messages=args.messages or (100_000 if args.quick else 1_000_000),
        depth=args.depth or (10_000 if args.quick else 100_000),
        recent_elsewhere=args.recent_elsewhere,
        dbs=("sqlite", "postgresql") if args.db == "both" else (args.db,),
        rounds=args.rounds,
        out=args.out or (RESULTS if complete else DATA / "results"),
        complete=complete,
        only=only,
        fresh=args.fresh,
        check_sql=not args.no_check_sql,
        command="python bench/run.py " + " ".join(sys.argv[1:]),
    )
    if config.depth >= config.messages:
        parser.error("--depth must be smaller than --messages")
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk (or make bench)", file=sys.stderr)
        return 2
    LOGS.mkdir(parents=True, exist_ok=True)
    (DATA / ".gitignore").write_text("*\n")
    started = time.monotonic()
    results: list[Result] = []
    notes: dict[str, dict[str, Any]] = {}
    settings: dict[str, dict[str, Any]] = {}
    for db in config.dbs:
        if db == "postgresql" and not args.no_pooler:
            if not pooler.available():
                print("pgbouncer is not installed: apt-get install -y pgbouncer (or make bench)")
                return 2
            # One pooler for the PostgreSQL runs, set here only (Server reads it).
            servers.POOLER = pooler.PgBouncer(POSTGRES_ADMIN_URL).__enter__()
        try:
            db_results, notes[db] = bench_database(db, config)
        finally:
            if servers.POOLER is not None:
                servers.POOLER.__exit__()
                servers.POOLER = None
        results += db_results
        settings[db] = database_settings(db, fixture_url(db))
    payload = {
        "command": config.command.strip(),
        "quick": args.quick,
        "config": {
            "warmup_s": config.warmup_s,
            "duration_s": config.duration_s,
            "messages": config.messages,
            "depth": config.depth,
            "recent_elsewhere": config.recent_elsewhere,
            "rounds": config.rounds,
            "only": sorted(config.only),
        },
        "machine": machine(),
        "settings": settings,
        "notes": notes,
        "results": [asdict(r) for r in results],
        "seconds": round(time.monotonic() - started, 1),
    }
    report = write_outputs(payload, config.out)
    dbs = list(config.dbs)
    print()
    print("\n".join(floor_targets(results, dbs, {db: n.get("sql", {}) for db, n in notes.items()})))
    print()
    print("\n".join(other_targets(results, notes)))
    print()
    print("\n".join(pages_report.section(results, notes, dbs)))
    print("\n".join(table(results, dbs)))
    print()
    print("\n".join(sql_section(notes)).split("\n\n")[0])
    # --out may name a directory outside the checkout: say where, without failing after the runs.
    where = report.parent
    if where.is_relative_to(ROOT):
        where = where.relative_to(ROOT)
    print(
        f"wrote {where}/latest.md, latest.json and latency.png in {payload['seconds'] / 60:.1f} min"
    )
    if config.complete:
        update_readme(payload)
        print("updated the README's table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
