"""``latency.png``: every run's latency percentiles, anonbox against the floor, one panel per
scenario and database."""

# ruff: noqa: RUF001

from __future__ import annotations

from pathlib import Path

from load import CONNECTIONS
from scenarios import SCENARIOS, Result
from targets import DB_NAMES, against, runs


def nines(q: float) -> float:
    return 1 / (1 - q / 100)


def chart(results: list[Result], dbs: list[str], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    rows = [s for s in SCENARIOS if any(r.scenario == s.name for r in results)]
    fig, axes = plt.subplots(
        len(rows), len(dbs), figsize=(7.5 * len(dbs), 3.4 * len(rows)), squeeze=False
    )
    ticks = [0, 50, 90, 99, 99.9, 99.99]
    style = {
        "anonbox": {"color": "#1f5fbf", "lw": 2.2},
        "floor": {"color": "#d2691e", "lw": 1.8, "ls": "--"},
    }
    for i, scenario in enumerate(rows):
        for j, db in enumerate(dbs):
            ax = axes[i][j]
            for app in ("anonbox", "floor"):
                found = runs(results, scenario.name, db, app)
                for n, r in enumerate(found):
                    points = sorted(
                        (float(q), v / 1000)
                        for q, v in r.latency_us["percentiles"].items()
                        if float(q) < 100
                    )
                    ax.plot(
                        [nines(q) for q, _ in points],
                        [v for _, v in points],
                        marker="o",
                        ms=3,
                        alpha=1.0 if n == 0 else 0.45,
                        label=f"{app} run {r.round}: {r.rps:,.0f} req/s, "
                        f"p99 {r.pct_ms('99'):.1f} ms",
                        **style[app],
                    )
            vs = against(results, scenario.name, db)
            ratio = f" — anonbox/floor {vs.rps:.2f}×" if vs else ""
            ax.set_title(f"{DB_NAMES[db]}: {scenario.title}{ratio}", fontsize=10)
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(FixedLocator([nines(t) for t in ticks]))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(
                FuncFormatter(lambda x, _: f"p{100 - 100 / x:g}" if x > 1 else "p0")
            )
            ax.set_xlim(1, nines(99.99) * 1.2)
            ax.set_ylim(bottom=0)
            ax.set_ylabel("latency (ms)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(
        f"Latency percentiles, {CONNECTIONS} connections\nanonbox (solid) against its floor "
        "(dashed), every run",
        fontsize=12,
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / len(rows) / 3.4))
    path = out / "latency.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
