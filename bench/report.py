"""The report of a run: ``latest.md`` (tables, targets, settings, statements, plans,
machine), ``latest.json`` (every run, the source of the tables), ``latency.png``, and the
README's table between its markers."""

# ruff: noqa: RUF001

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pages_report  # the public pages' section (issue 43)
from chart import chart
from layout import README
from load import CONNECTIONS
from scenarios import FLOOR_SCENARIOS, SCENARIO, SCENARIOS, Result
from servers import APPS
from targets import (
    DB_NAMES,
    P99_RATIO_MAX,
    RPS_RATIO_MIN,
    Summary,
    against,
    each,
    floor_targets,
    median,
    other_targets,
    runs,
)


def table(results: list[Result], dbs: list[str]) -> list[str]:
    lines = [
        "| scenario | db | app | req/s, each run | p50 ms | p99 ms, each run | socket errors "
        "| HTTP ≥ 400 | server CPU | PostgreSQL CPU | req/s ÷ floor | p99 ÷ floor |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    apps = list(APPS)
    for db in dbs:
        for scenario in SCENARIOS:
            for app in sorted(apps, key=lambda a: (a != "anonbox", a != "floor", a)):
                found = runs(results, scenario.name, db, app)
                if not found:
                    continue
                s = Summary(found)
                ratio = p99_ratio = ""
                vs = against(results, scenario.name, db) if app == "anonbox" else None
                if vs:
                    ratio = f"**{vs.rps:.2f}**"
                    p99_ratio = f"**{vs.p99:.2f}**"
                cpu = f"{median([r.cpu_percent for r in found]):.0f}%"
                if max(r.processes for r in found) > 1:
                    cpu += f" ({max(r.processes for r in found)} processes)"
                pg = [r.db_cpu_percent for r in found if r.db_cpu_percent is not None]
                lines.append(
                    f"| {scenario.name} | {DB_NAMES[db]} | {app} | "
                    f"{each([r.rps for r in found], ',.0f')} | {s.pct_ms('50'):.2f} | "
                    f"{each([r.pct_ms('99') for r in found], '.1f')} | "
                    f"{sum(r.socket_errors for r in found):,} | "
                    f"{sum(r.http_errors for r in found):,} | {cpu} | "
                    f"{f'{median(pg):.0f}%' if pg else ''} | {ratio} | {p99_ratio} |"
                )
    return lines


def settings_section(settings: dict[str, dict[str, Any]]) -> list[str]:
    md: list[str] = []
    for db, found in settings.items():
        md += [f"{DB_NAMES[db]}, as each app's connections report them:", ""]
        columns = found["columns"]
        md += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        md += ["| " + " | ".join(row) + " |" for row in found["rows"]]
        if found.get("session"):
            md += ["", "| in the apps | anonbox | anonbox-normal | floor |", "|---|---|---|---|"]
            md += ["| " + " | ".join(row) + " |" for row in found["session"]]
        md.append("")
    return md


def sql_section(notes: dict[str, dict[str, Any]]) -> list[str]:
    md = [
        "| scenario | db | statements, anonbox | statements, floor | the same |",
        "|---|---|--:|--:|---|",
    ]
    details: list[str] = []
    for db, note in notes.items():
        for name, apps in note.get("sql", {}).items():
            a, f = apps["anonbox"], apps["floor"]
            md.append(
                f"| {name} | {DB_NAMES[db]} | {len(a)} | {len(f)} | "
                f"{'yes' if a == f else '**no**'} |"
            )
            if a != f:
                diff = difflib.unified_diff(a, f, "anonbox", "floor", lineterm="", n=1)
                details += [f"{DB_NAMES[db]}, {name}:", "", "```diff", *diff, "```", ""]
            elif name == "reply":  # one example in full, for the reader
                details += [
                    f"{DB_NAMES[db]}, {name} (both apps):",
                    "",
                    "```sql",
                    *a,
                    "```",
                    "",
                ]
    return [*md, "", *details]


def seed_line(db: str, note: dict[str, Any]) -> str:
    seed = note["seed"]
    when = (
        f"earlier ({seed['seeded_at']}; this run used a copy of the cached database)"
        if seed["cached"]
        else "for this run"
    )
    return (
        f"{DB_NAMES[db]}: {seed['messages']:,} messages seeded {when} in {seed['seconds']:.0f} s;"
        f" the database ready in {seed['prepare_seconds']:.0f} s, all of its runs"
        f" {note['seconds'] / 60:.1f} min"
    )


def render(payload: dict[str, Any], chart_name: str) -> str:
    results = [Result(**r) for r in payload["results"]]
    notes: dict[str, dict[str, Any]] = payload["notes"]
    config = payload["config"]
    dbs = list(notes)
    sql = {db: note.get("sql", {}) for db, note in notes.items()}
    seeds = "; ".join(seed_line(db, note) for db, note in notes.items())
    md = [
        "# Benchmark results",
        "",
        f"Written by `{payload['command']}` (`make bench`), in {payload['seconds'] / 60:.1f} min."
        + (
            " **Quick run: short runs on a small inbox, for checking the bench, not for "
            "its numbers.**"
            if payload["quick"]
            else ""
        ),
        "",
        "## Machine",
        "",
        *payload["machine"],
        "",
        "## Method",
        "",
        f"- Each scenario: wrk warm-up {config['warmup_s']} s, then a timed run of "
        f"{config['duration_s']} s, {CONNECTIONS} connections; **{config['rounds']} runs per "
        "scenario and app**, the apps taking turns (anonbox, floor; floor, anonbox; …), each "
        "turn a fresh server process. One server at a time, one worker (uvicorn, httptools, "
        "uvloop, no access log) unless the app says otherwise.",
        "- **Verdicts use the median of the runs** of each app (with two runs, their mean): "
        "req/s ÷ floor is the median req/s of anonbox over the floor's, p99 ÷ floor the same "
        "for p99. In brackets, the same ratio for each round (anonbox's run n against the "
        "floor's run n): a verdict whose rounds disagree is inside this machine's noise. A "
        "scenario with any error, in any run of either app, is missed.",
        "- **floor** = bench/floor.py: Starlette running the same SQL statements as anonbox "
        "through the same driver with the same durability; see Settings, and Statements per "
        "request for the check that the SQL is the same.",
        f"- Inbox link seeded with {config['messages']:,} messages; the deep page starts "
        f"{config['depth']:,} messages down (cursor paging). The write scenario posts to "
        "another creator's link; reply answers the 1,000 newest seeded messages in turn; "
        "like, inbox and mixed use the seeded link. Order: the SQL check; the reads (like, "
        "inbox_first, inbox_deep; anonbox, floor, and on PostgreSQL anonbox-2w) on exactly "
        "the seeded rows; search (anonbox only); the public pages of a link made for them "
        "(anonbox, anonbox-nocache, floor; see Public pages); then write, reply, mixed "
        "(anonbox, floor) "
        "and write (anonbox-normal, and anonbox-muted: the writing creator mutes 1,000 words "
        "before its turn and unmutes them after), and on PostgreSQL write and reply through "
        "PgBouncer in transaction mode (anonbox-pooled, default_pool_size 20); write "
        "(anonbox-hooked); last the flood (anonbox, anonbox-nocache). The outbox rows the floor "
        "writes are marked handed over when it stops (it has no relay), so anonbox's relay "
        "never does the floor's work."
        + (
            f" Also {config['recent_elsewhere']:,} messages to a third link, newer than the "
            "whole inbox."
            if config["recent_elsewhere"]
            else ""
        ),
        f"- {seeds}.",
        "- Rate limits set out of reach (`ANONBOX_LIMIT_*=1000000000/1`).",
        "- errors: wrk's socket errors (connect, read, write, timeout) and answers with a "
        "status ≥ 400 (wrk counts no others), summed over the runs.",
        "- server CPU: CPU time of the server's processes over the timed run / wall time "
        "(100% = one core), median of the runs; with `--workers` the supervisor, every "
        "worker and multiprocessing's resource tracker. PostgreSQL CPU: the backends "
        "connected to the bench database and the WAL writer, checkpointer and background "
        "writer (shared with any other database on the server).",
        "",
        "## Targets: anonbox against the floor",
        "",
        *floor_targets(results, dbs, sql),
        "",
        "## Other targets",
        "",
        *other_targets(results, notes),
        "",
        *pages_report.section(results, notes, dbs),
        "## Results",
        "",
        *table(results, dbs),
        "",
        "## Settings",
        "",
        *settings_section(payload["settings"]),
        "## Statements per request",
        "",
        "Traced in the drivers (`bench/sqltrace.py`) for one request of each scenario, "
        "values replaced by `?`. The write differs from anonbox's only in that anonbox puts "
        "many concurrent posts in one such statement (group commit), the floor one.",
        "",
        *sql_section(notes),
        "## Query plans: the inbox query, first and deep page",
        "",
    ]
    for db, note in notes.items():
        for name, plan in note["plans"].items():
            md.append(f"- {DB_NAMES[db]}, {name}: `{plan}`")
    md += [
        "",
        "## Latency distribution",
        "",
        f"![latency percentiles, anonbox against the floor]({chart_name})",
        "",
    ]
    return "\n".join(md)


README_START = "<!-- bench-table:start (written by bench/run.py from bench/results/latest.json) -->"
README_END = "<!-- bench-table:end -->"


def readme_block(payload: dict[str, Any]) -> list[str]:
    """The README's table: each scenario's ratios to the floor, and the other targets."""
    results = [Result(**r) for r in payload["results"]]
    notes: dict[str, dict[str, Any]] = payload["notes"]
    dbs = [db for db in ("sqlite", "postgresql") if db in notes]
    date = payload["machine"][0].removeprefix("- date: ")
    head = " | ".join(f"{DB_NAMES[db]} req/s ÷ floor | {DB_NAMES[db]} p99 ÷ floor" for db in dbs)
    lines = [
        f"From [`bench/results/latest.md`](bench/results/latest.md) ({date}; "
        f"{payload['config']['rounds']} runs of {payload['config']['duration_s']} s per scenario "
        "and app, medians; target: req/s ≥ 0.8 × and p99 ≤ 1.5 × the floor's, no errors):",
        "",
        f"| scenario | {head} |",
        "|---|" + "--:|--:|" * len(dbs),
    ]
    for name in FLOOR_SCENARIOS:
        cells = []
        for db in dbs:
            vs = against(results, name, db)
            if vs is None:
                cells += ["", ""]
                continue
            errors = vs.anonbox.errors + vs.floor.errors
            rps_missed = vs.rps < RPS_RATIO_MIN or errors
            cells += [
                f"{vs.rps:.2f}"
                + (" **missed**" if rps_missed else "")
                + (f" ({errors:,} errors)" if errors else ""),
                f"{vs.p99:.2f}" + (" **missed**" if vs.p99 > P99_RATIO_MAX else ""),
            ]
        lines.append(f"| {SCENARIO[name].title} | " + " | ".join(cells) + " |")
    others = other_targets(results, notes)
    lines += ["", *others, *pages_report.readme_lines(results, notes)]
    return lines


def update_readme(payload: dict[str, Any]) -> None:
    text = README.read_text()
    if README_START not in text or README_END not in text:
        raise RuntimeError(f"README.md has no {README_START!r} … {README_END!r} block")
    before, rest = text.split(README_START, 1)
    _, after = rest.split(README_END, 1)
    block = "\n".join(readme_block(payload))
    README.write_text(f"{before}{README_START}\n{block}\n{README_END}{after}")


def write_outputs(payload: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    results = [Result(**r) for r in payload["results"]]
    png = chart(results, list(payload["notes"]), out)
    (out / "latest.json").write_text(json.dumps(payload, indent=1) + "\n")
    report = out / "latest.md"
    report.write_text(render(payload, png.name))
    return report
