"""What the runs are judged by: the median of each app's runs of a scenario, anonbox against
the floor (req/s and p99 ratios, per round too), and the other targets (durability,
webhooks, muted words, a second worker, the deep page, RSS), as Markdown table rows."""

# ruff: noqa: RUF001

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from scenarios import FLOOR_SCENARIOS, Result
from servers import MUTED_WORDS, SLOW_WEBHOOKS

RSS_TARGET_MIB = 150
# The targets of the issue for every scenario the floor also runs: anonbox's req/s at least
# this share of the floor's, and its p99 at most this multiple of the floor's.
RPS_RATIO_MIN = 0.8
P99_RATIO_MAX = 1.5

DB_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def runs(results: list[Result], scenario: str, db: str, app: str) -> list[Result]:
    return sorted(
        (r for r in results if (r.scenario, r.db, r.app) == (scenario, db, app)),
        key=lambda r: r.round,
    )


def median(values: list[float]) -> float:
    return float(statistics.median(values))


@dataclass(frozen=True)
class Summary:
    """Several runs of one scenario by one app: the median is what verdicts use."""

    runs: list[Result]

    @property
    def rps(self) -> float:
        return median([r.rps for r in self.runs])

    def pct_ms(self, q: str) -> float:
        return median([r.pct_ms(q) for r in self.runs])

    @property
    def errors(self) -> int:
        return sum(r.socket_errors + r.http_errors for r in self.runs)


def summary(results: list[Result], scenario: str, db: str, app: str) -> Summary | None:
    found = runs(results, scenario, db, app)
    return Summary(found) if found else None


def each(values: list[float], spec: str) -> str:
    return " / ".join(format(v, spec) for v in values)


@dataclass(frozen=True)
class Against:
    """anonbox against the floor on one scenario: ratios of the medians, and per round."""

    anonbox: Summary
    floor: Summary

    @property
    def rps(self) -> float:
        return self.anonbox.rps / self.floor.rps

    @property
    def p99(self) -> float:
        return self.anonbox.pct_ms("99") / self.floor.pct_ms("99")

    def rounds(self) -> list[tuple[float, float]]:
        return [
            (a.rps / f.rps, a.pct_ms("99") / f.pct_ms("99"))
            for a, f in zip(self.anonbox.runs, self.floor.runs, strict=False)
        ]

    @property
    def met(self) -> bool:
        return (
            self.rps >= RPS_RATIO_MIN
            and self.p99 <= P99_RATIO_MAX
            and self.anonbox.errors == 0
            and self.floor.errors == 0
        )


def against(results: list[Result], scenario: str, db: str) -> Against | None:
    a, f = summary(results, scenario, db, "anonbox"), summary(results, scenario, db, "floor")
    return Against(a, f) if a and f else None


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def floor_targets(
    results: list[Result], dbs: list[str], sql: dict[str, dict[str, Any]]
) -> list[str]:
    lines = [
        f"| scenario | db | req/s ÷ floor (≥ {RPS_RATIO_MIN}) | p99 ÷ floor (≤ {P99_RATIO_MAX}) "
        "| errors, anonbox / floor | same SQL | verdict |",
        "|---|---|--:|--:|--:|---|---|",
    ]
    for db in dbs:
        for name in FLOOR_SCENARIOS:
            vs = against(results, name, db)
            if vs is None:
                continue
            rounds = vs.rounds()
            statements = sql.get(db, {}).get(name)
            if name == "mixed":
                same = "(write, inbox_first)"
            elif statements is None:
                same = "not checked"
            else:
                same = "yes" if statements["anonbox"] == statements["floor"] else "**no**"
            per_round_rps = each([r for r, _ in rounds], ".2f")
            per_round_p99 = each([p for _, p in rounds], ".2f")
            lines.append(
                f"| {name} | {DB_NAMES[db]} | **{vs.rps:.2f}** ({per_round_rps}) "
                f"| **{vs.p99:.2f}** ({per_round_p99}) "
                f"| {vs.anonbox.errors:,} / {vs.floor.errors:,} | {same} | {verdict(vs.met)} |"
            )
    return lines


def other_targets(results: list[Result], notes: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["| target | db | measured (medians) | verdict |", "|---|---|--:|---|"]
    for db, note in notes.items():
        name = DB_NAMES[db]
        write = summary(results, "write", db, "anonbox")
        normal = summary(results, "write", db, "anonbox-normal")
        if write and normal:
            ratio = write.rps / normal.rps
            lines.append(
                f"| durable write ≥ 0.8 × the same with commits not on disk (req/s) | {name} | "
                f"{ratio:.2f} × ({write.rps:,.0f} / {normal.rps:,.0f}) | {verdict(ratio >= 0.8)} |"
            )
        for scenario in ("write", "reply"):
            direct = summary(results, scenario, db, "anonbox")
            pooled = summary(results, scenario, db, "anonbox-pooled")
            if direct and pooled:
                lines.append(
                    f"| {scenario} through PgBouncer (transaction mode) ÷ straight to the"
                    f" database: req/s, and p99 | {name} | {pooled.rps / direct.rps:.2f} ×"
                    f" ({pooled.rps:,.0f} / {direct.rps:,.0f}); p99"
                    f" {pooled.pct_ms('99'):.2f} / {direct.pct_ms('99'):.2f} ms |"
                    " the pooler's cost (no target) |"
                )
        hooked = summary(results, "write", db, "anonbox-hooked")
        if write and hooked:
            ratio = hooked.rps / write.rps
            lines.append(
                f"| write with {SLOW_WEBHOOKS} webhooks that never answer ≥ 0.9 × write"
                f" (req/s) | {name} | {ratio:.2f} × ({hooked.rps:,.0f} / {write.rps:,.0f}) |"
                f" {verdict(ratio >= 0.9)} |"
            )
        muted = summary(results, "write", db, "anonbox-muted")
        if write and muted:
            ratio = muted.rps / write.rps
            lines.append(
                # The run-to-run noise of the write here is about a tenth (per-round figures).
                f"| write with {MUTED_WORDS:,} muted words ≥ 0.9 × write with none (req/s)"
                f" | {name} | {ratio:.2f} × ({muted.rps:,.0f} / {write.rps:,.0f}) |"
                f" {verdict(ratio >= 0.9)} |"
            )
        first = summary(results, "inbox_first", db, "anonbox")
        two = summary(results, "inbox_first", db, "anonbox-2w")
        if first and two:
            lines.append(
                # Within a tenth of one worker is within this machine's run-to-run noise.
                f"| --workers 2 scales reads (≥ 1.1 × one worker) | {name} | "
                f"{two.rps / first.rps:.2f} × ({two.rps:,.0f} / {first.rps:,.0f} req/s) | "
                f"{verdict(two.rps >= 1.1 * first.rps)} |"
            )
        deep = summary(results, "inbox_deep", db, "anonbox")
        if first and deep:
            ratio = deep.pct_ms("99") / first.pct_ms("99")
            lines.append(
                f"| deep inbox page p99 ≤ 1.5 × first page p99 | {name} | "
                f"{ratio:.2f} × ({deep.pct_ms('99'):.2f} / {first.pct_ms('99'):.2f} ms) | "
                f"{verdict(ratio <= 1.5)} |"
            )
        rss = note.get("rss_max_mib", {}).get("anonbox")
        if rss is not None:
            lines.append(
                f"| one worker's RSS < {RSS_TARGET_MIB} MiB through the runs | {name} | "
                f"{rss:.0f} MiB (at start {note['rss_start_mib']['anonbox']:.0f}) | "
                f"{verdict(rss < RSS_TARGET_MIB)} |"
            )
    return lines
