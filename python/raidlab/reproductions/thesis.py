"""Thesis (seed 004) §3.2: traditional mirroring of 16 IBM 0661 drives in normal mode.

Runs ``experiments/thesis_normal_mode.toml`` (250 I/O per second, 75 % reads, 1,000,000
requests) once per seed through the sweep machinery (so a second ``reproduce`` reuses the
finished runs) and compares the two figures the thesis publishes for that point: the
90th-percentile read response time (Fig. 6: 41.65 ms) and the mean drive utilization
(Fig. 7: 40.33 %). Seeds 4, 5, … (the configuration's own seed first); ``--seeds N`` sets
how many (default 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List

from raidlab.output.report import PaperReport, ReportFigure, ReportTable, difference_text, number_text

if TYPE_CHECKING:
    import pandas as pd

    from raidlab.reproductions.context import Context

__all__ = ["PUBLISHED", "CONFIG", "run"]

#: The thesis's figures at 250 I/O per second: summary column -> (value, unit, source).
PUBLISHED = {
    "response_ms.read.p90": (41.65, "ms", "90th-percentile read response, Fig. 6"),
    "drives.mean_utilization": (0.4033, "", "mean drive utilization, Fig. 7"),
}
#: The experiment, relative to the experiments directory.
CONFIG = "thesis_normal_mode.toml"
FIRST_SEED = 4
DEFAULT_SEEDS = 2


def _cell(column: str, value: float) -> str:
    return number_text(value * 100, 2, " %") if column == "drives.mean_utilization" else number_text(value, 2, " ms")


def run(context: "Context") -> PaperReport:
    from raidlab.config import toml_literal
    from raidlab.reproductions.reproduce import default_experiments_dir
    from raidlab.experiments.stats import mean_interval
    from raidlab.experiments.sweep import load_sweep_spec

    experiments = Path(context.experiments_dir) if context.experiments_dir else default_experiments_dir()
    base = (experiments / CONFIG).resolve()
    seeds = list(range(FIRST_SEED, FIRST_SEED + (context.seeds or DEFAULT_SEEDS)))
    output = Path(context.output)
    spec_text = f"base = {toml_literal(str(base))}\nname = \"thesis\"\nseeds = {toml_literal(seeds)}\n"
    spec = load_sweep_spec(output / "thesis-sweep.toml", text=spec_text)

    outcome = context.run_sweep("thesis", spec, output / "sweep")
    table = outcome.table
    done = table[table["status"] == "done"]
    report = PaperReport(name="thesis", title="")
    report.facts.append(f"{len(table)} run(s) of experiments/{CONFIG}, seeds {', '.join(map(str, seeds))}; "
                        f"{outcome.skipped} already done, {outcome.ran} run now; sweep directory {outcome.directory}")
    if len(done) < len(table):
        failed = table[table["status"] != "done"]
        report.error = f"{len(failed)} run(s) failed: " + "; ".join(str(e) for e in failed["error"].dropna())
    rows: List[List[str]] = []
    for column, (published, _, source) in PUBLISHED.items():
        values = done[column].astype(float).tolist() if column in done else []
        interval = mean_interval(values)
        rows.append([source, _cell(column, published), *(_cell(column, v) for v in values),
                     _cell(column, interval.mean), difference_text(interval.mean, published)])
    columns = ["metric (250 I/O/s, 75 % reads)", "thesis §3.2",
               *(f"raidlab seed {seed}" for seed in done["seed"].tolist()), "raidlab mean", "difference"]
    report.tables.append(ReportTable(title="Normal mode at 250 I/O per second", columns=columns, rows=rows,
                                     note="Difference: (raidlab mean − thesis) / thesis."))
    if len(done):
        report.figures.append(ReportFigure(_draw(done, outcome.directory, output),
                                           "Read response-time CDF (seeds pooled) with the thesis's 90th percentile; "
                                           "utilization of each drive with the thesis's mean"))
    return report


def _draw(done: "pd.DataFrame", sweep_dir: Path, output: Path) -> Path:
    """The read CDF of the runs pooled, with the thesis's p90 marked, beside each drive's
    utilization (mean over seeds) with the thesis's mean: from the run directories' tables."""
    from matplotlib.figure import Figure

    from raidlab.output.plots import save_figure
    from raidlab.results import Result
    from raidlab.results.store import RUNS_DIR
    from raidlab.experiments.sweep_plots import draw_cdf_overlay

    results = [Result.load(sweep_dir / RUNS_DIR / run_id) for run_id in done["run_id"]]
    figure = Figure(figsize=(11, 4.4), layout="constrained")
    left, right = figure.subplots(1, 2)
    draw_cdf_overlay(left, {"raidlab": [result.histogram for result in results]}, "read")
    p90, _, _ = PUBLISHED["response_ms.read.p90"]
    left.plot([p90], [0.9], marker="x", markersize=10, color="C3", linestyle="none", label=f"thesis p90 = {p90} ms")
    left.axhline(0.9, color="0.6", linewidth=0.8, linestyle=":")
    left.legend(loc="lower right", fontsize="small")
    left.set_title("Read response time")
    drives = [result.drives[["drive", "utilization"]] for result in results]
    import pandas as pd

    per_drive = pd.concat(drives).groupby("drive", sort=True)["utilization"].mean()
    right.bar(per_drive.index.to_numpy(), per_drive.to_numpy() * 100, color="C0", label="raidlab (mean over seeds)")
    mean, _, _ = PUBLISHED["drives.mean_utilization"]
    right.axhline(mean * 100, color="C3", linestyle="--", label=f"thesis mean = {mean * 100:.2f} %")
    right.set_xlabel("drive")
    right.set_ylabel("utilization (%)")
    right.set_ylim(0, max(60.0, float(per_drive.max()) * 110))
    right.legend(loc="lower right", fontsize="small")
    right.set_title("Drive utilization")
    figure.suptitle("Thesis §3.2: 16 IBM 0661 drives as 8 mirror pairs, 250 I/O per second")
    return save_figure(figure, output / "thesis.png", dpi=110)
