# ruff: noqa: RUF001, RUF002
"""The public pages' part of the report (issue 43): each page scenario by anonbox with its
page cache, anonbox without it and the floor, in requests per second of the server's CPU
and latency; the verdicts against the issue's targets; the flood's post → live inbox
delay. Markdown rows for ``latest.md``, the run's printout and the README."""

from __future__ import annotations

from typing import Any

from scenarios import PAGE_SCENARIOS, SCENARIO, Result
from targets import DB_NAMES, P99_RATIO_MAX, RPS_RATIO_MIN, Summary, each, median, summary

# With its cache, anonbox must serve this many page requests per second of its CPU (the
# API inbox's figure is 1,710), its p99 within P99_RATIO_MAX of the floor's; without it,
# RPS_RATIO_MIN of the floor's req/s and the same p99 bound (nothing beyond the render).
CACHED_PER_CPU_SECOND = 1_000
LIVE_P99_MS = 1_000  # a post reaches the open live inboxes within a second (p99)
PAGE_APPS = ("anonbox", "anonbox-nocache", "floor")


def per_cpu(s: Summary) -> float:
    return median([r.per_cpu_second for r in s.runs])


def _errors(*found: Summary) -> int:
    return sum(s.errors for s in found)


def page_results(results: list[Result], dbs: list[str]) -> list[str]:
    """Every app's runs of every page scenario."""
    lines = [
        "| scenario | db | app | req/s, each run | req per CPU-second | p50 ms | p99 ms, each run "
        "| errors | server CPU |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    for db in dbs:
        for name in (*PAGE_SCENARIOS, "flood"):
            for app in PAGE_APPS:
                found = summary(results, name, db, app)
                if found is None:
                    continue
                rps = each([r.rps for r in found.runs], ",.0f")
                lines.append(
                    f"| {name} | {DB_NAMES[db]} | {app} | {rps}"
                    f" | {per_cpu(found):,.0f} | {found.pct_ms('50'):.2f}"
                    f" | {each([r.pct_ms('99') for r in found.runs], '.1f')} | {found.errors:,}"
                    f" | {median([r.cpu_percent for r in found.runs]):.0f}% |"
                )
    return lines


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def page_targets(results: list[Result], dbs: list[str]) -> list[str]:
    """Per page scenario: anonbox with its cache (≥ CACHED_PER_CPU_SECOND req per CPU-second,
    p99 ≤ 1.5 × the floor's) and without it (≥ 0.8 × the floor's req/s, p99 ≤ 1.5 ×)."""
    lines = [
        f"| scenario | db | cached: req per CPU-s (≥ {CACHED_PER_CPU_SECOND:,}) "
        f"| cached: p99 ÷ floor (≤ {P99_RATIO_MAX}) "
        f"| cache off: req/s ÷ floor (≥ {RPS_RATIO_MIN}) | cache off: p99 ÷ floor "
        "| floor: req per CPU-s | verdict, cached / cache off |",
        "|---|---|--:|--:|--:|--:|--:|---|",
    ]
    for db in dbs:
        for name in PAGE_SCENARIOS:
            floor = summary(results, name, db, "floor")
            cached = summary(results, name, db, "anonbox")
            off = summary(results, name, db, "anonbox-nocache")
            if floor is None or (cached is None and off is None):
                continue
            floor_p99 = floor.pct_ms("99")
            cells, verdicts = [], []
            if cached is not None:
                p99 = cached.pct_ms("99") / floor_p99
                ok = per_cpu(cached) >= CACHED_PER_CPU_SECOND and p99 <= P99_RATIO_MAX
                ok = ok and not _errors(cached, floor)
                cells += [f"{per_cpu(cached):,.0f}", f"{p99:.2f}"]
                verdicts.append(verdict(ok))
            else:
                cells += ["", ""]
            if off is not None:
                rps, p99 = off.rps / floor.rps, off.pct_ms("99") / floor_p99
                ok = rps >= RPS_RATIO_MIN and p99 <= P99_RATIO_MAX and not _errors(off, floor)
                cells += [f"{rps:.2f}", f"{p99:.2f}"]
                verdicts.append(verdict(ok))
            else:
                cells += ["", ""]
            lines.append(
                f"| {name} | {DB_NAMES[db]} | " + " | ".join(cells)
                + f" | {per_cpu(floor):,.0f} | {' / '.join(verdicts)} |"
            )  # fmt: skip
    return lines


def live_targets(results: list[Result], dbs: list[str]) -> list[str]:
    """The flood: how long a post took to reach the creator's open live inboxes."""
    lines = [
        f"| app | db | load (req/s, each run) | posts timed × inboxes | lost | p50 ms | p99 ms "
        f"(< {LIVE_P99_MS:,}) | max ms | verdict |",
        "|---|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    for db in dbs:
        for app in PAGE_APPS:
            found = summary(results, "flood", db, app)
            if found is None:
                continue
            live = [r.live for r in found.runs if r.live]
            if not live:
                continue
            worst = max(float(x["p99_ms"] or 0) for x in live)
            lost = sum(int(x["lost"]) for x in live)
            ok = worst < LIVE_P99_MS and not lost and not found.errors
            lines.append(
                f"| {app} | {DB_NAMES[db]} | {each([r.rps for r in found.runs], ',.0f')} | "
                + " / ".join(f"{x['posts']} × {x['inboxes']}" for x in live)
                + f" | {lost} | {each([float(x['p50_ms'] or 0) for x in live], '.1f')} | "
                + f"{each([float(x['p99_ms'] or 0) for x in live], '.1f')} | "
                + f"{each([float(x['max_ms'] or 0) for x in live], '.1f')} | {verdict(ok)} |"
            )
    return lines


def etag_line(notes: dict[str, dict[str, Any]]) -> str:
    """Whether each app's send page carried an ETag that page_304 could name."""
    seen = []
    for db, note in notes.items():
        for app, etag in note.get("etag", {}).items():
            seen.append(f"{app} on {DB_NAMES[db]}: {'`' + etag + '`' if etag else '**none**'}")
    return "ETag of the send page (what page_304 names): " + ("; ".join(seen) or "not run") + "."


def agreement_line(notes: dict[str, dict[str, Any]]) -> str:
    """Whether the apps' first answers to each page scenario agree (``pages.seen``: status,
    media type, title and answers shown, or the picture's size)."""
    differ = [
        f"{DB_NAMES[db]}: {d}" for db, note in notes.items() for d in note.get("pages_differ", [])
    ]
    if differ:
        return "**The apps answered differently**: " + "; ".join(differ) + "."
    return (
        "The apps' first answers agree on every page scenario run (status, media type, the "
        "page's title and the answers it shows, or the picture's size in pixels)."
    )


def section(results: list[Result], notes: dict[str, dict[str, Any]], dbs: list[str]) -> list[str]:
    """``latest.md``'s section on the public pages (empty when none ran)."""
    if not any(r.scenario in (*PAGE_SCENARIOS, "flood") for r in results):
        return []
    titles = [f"`{n}`: {SCENARIO[n].title}" for n in (*PAGE_SCENARIOS, "flood")]
    return [
        "## Public pages (issue 43)",
        "",
        "A link with 20 answered messages (bench/pages.py). anonbox as shipped (its page "
        "cache), **anonbox-nocache** (`ANONBOX_PAGE_CACHE=false`: every page rendered) and "
        "the floor (bench/floor_pages.py: anonbox's services and SQL, its template and Jinja "
        "environment, gzip, on every request; nothing kept). req per CPU-second = req/s ÷ "
        "the server's CPU (its processes only, not the database's).",
        "",
        *(f"- {t}" for t in titles),
        "",
        etag_line(notes),
        "",
        agreement_line(notes),
        "",
        *page_targets(results, dbs),
        "",
        "The flood: post sent → event received in each of the creator's 3 open live inboxes "
        "(the dashboard's server-sent events), for a post timed every 0.1 s beside wrk's load "
        "(warm-up and run):",
        "",
        *live_targets(results, dbs),
        "",
        *page_results(results, dbs),
        "",
    ]


def readme_lines(results: list[Result], notes: dict[str, dict[str, Any]]) -> list[str]:
    dbs: list[str] = [db for db in ("sqlite", "postgresql") if db in notes]
    if not any(r.scenario in PAGE_SCENARIOS for r in results):
        return []
    return [
        "",
        "The public pages (issue 43), anonbox with its page cache and without it, against "
        "the floor (medians):",
        "",
        *page_targets(results, dbs),
        "",
        *live_targets(results, dbs),
    ]
