"""Thesis (seed 004) §3.2-3.5: traditional mirroring (TM), distorted mirrors (DM) and
interleaved declustering (ID) in normal, degraded and rebuild modes.

16 IBM 0661 drives (Table 2): TM as 8 mirror pairs, DM as 8 pairs with a disk-fill factor of
80 %, ID as 2 clusters of 8 (reads take either copy, the reading the thesis's numbers fit).
4 KB requests uniform over the array, open Poisson arrivals, FCFS queues, the first 10 s
left out (``experiments/mirroring.toml``). Each scheme is one line of :data:`SCHEMES`; the
runs of a scheme that this build of the core refuses (a layout it does not know, or a
rebuild it does not have yet) are left out, and the report says which and why.

The points run are the ones the thesis's figures and numbers need (:func:`grid`), at
100-350 I/O per second (aggregate, step 50):

* **normal** (Figs. 5-7): 50, 75 and 100 % reads at every rate;
* **degraded** (Figs. 8-11): drive 1 fails at 1 s and stays failed; 50 and 75 % reads at
  every rate, and 100 % reads at 250 I/O/s (§3.3's numbers);
* **rebuild** (Figs. 12-32): drive 1 fails at 10 s (the end of the warm-up) and is rebuilt
  at once onto a hot spare, one unit at a time, the unrebuilt unit its source can fetch
  soonest first (the thesis's option 1, ``order = "fetch"``), rebuild I/O only on a drive with no user request (per drive, never
  preempted), reads not redirected to the spare; unit block (4 KB), track or cylinder; 50
  and 75 % reads at every rate, and 0 and 100 % reads at 200 and 300 I/O/s (Figs. 27-32).

Run lengths: normal and degraded runs 1,000,000 requests each (:data:`REQUESTS`; 10,000 s
of simulated time at 100 I/O/s, 2,857 s at 350). A rebuild run lasts until its rebuild
ends (``rebuild.end_run``), the arrivals stopping after 4 h of simulated time
(:data:`REBUILD_CAP_S`): a rebuild that has not ended by then did not finish while the load
lasted, and its time is reported as a lower bound. Seeds 4, 5, ... (``--seeds N``, default
2): 79 points × 2 seeds for each scheme in each mode the core accepts, 474 runs.
Measured on a 2-core machine shared with other work: a normal run of 1,000,000 requests
takes about 0.35 s (DM 0.9 s), a block-unit rebuild at 250 I/O/s about 0.5 s, the longest
(TM, block, 350 I/O/s, to the 4 h cap) about 1.8 s; the whole reproduction about 126 s.

Every run goes through the sweep machinery (one sweep per mode, ``OUTPUT/rebuild``,
``OUTPUT/degraded`` and ``OUTPUT/normal``), so a second
``reproduce`` reuses the finished runs. Reported: every number the thesis states (§3.2-3.5)
beside raidlab's, with the difference; Table 3's columns at 200 I/O/s (the thesis's body is
missing, none of it is invented); rebuild times at 75 % reads; the thesis's qualitative
statements checked; one figure per group of the thesis's figures (lines per scheme against
the I/O rate, or the read share for Figs. 27-32); ``mirroring_points.csv`` with every
point's means.

Options (``Context.options``): ``quick`` (true: only the points the published numbers need),
``requests`` (normal and degraded runs' length), ``schemes`` (a subset of :data:`SCHEMES`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from raidlab.exceptions import ConfigError
from raidlab.output.report import PaperReport, ReportFigure, ReportTable, difference_text, number_text

if TYPE_CHECKING:
    import pandas as pd

    from raidlab.reproductions.context import Context

__all__ = ["SCHEMES", "RATES", "UNITS", "PUBLISHED", "Point", "Stated", "grid", "available_schemes", "run"]

#: The schemes compared (§2.1): name -> the array's layout lines (TOML). The array's size
#: and stripe unit are the base configuration's. A scheme's runs that this build of the core
#: refuses are left out (:func:`available_schemes`).
SCHEMES: Dict[str, str] = {
    "TM": 'layout = "raid1"\ncopies = 2',
    "DM": 'layout = "distorted"\ndff = 0.8',
    "ID": 'layout = "interleaved"\ncluster_drives = 8\nid_reads = "either"',
}
#: §1.8: "We varied the I/O rate to the 16 disks from 100 I/Os to 350 I/Os per second"; the
#: step of 50 is the notes' choice.
RATES: Tuple[int, ...] = (100, 150, 200, 250, 300, 350)
#: §2.2.1's rebuild units: a 4 KB block, a track, a cylinder.
UNITS: Dict[str, Dict[str, int]] = {"block": {"sectors": 8}, "track": {"tracks": 1}, "cylinder": {"cylinders": 1}}
#: §2.1 and §2.2: one unit in flight; the unrebuilt unit whose data lies nearest its
#: source's head first (§2.2.1's "nearest unrebuilt unit in the survivor disk", §2.2.3's
#: option 1 for ID, the one the thesis reports); rebuild I/O only on a drive with no user
#: request (never preempted); no read redirection (Table 3's baseline).
#: DM's track and cylinder units rebuild in the thesis's two phases (§2.2.2: the slave
#: partition first, then each master unit nearest the replacement's head): the `replacement`
#: order over the layout's phases. Its block unit is TM's algorithm (the default order).
ORDER_BY_SCHEME_UNIT: Dict[Tuple[str, str], str] = {("DM", "track"): "replacement", ("DM", "cylinder"): "replacement"}
#: The order of every other rebuild run (set per point, beside the unit).
REBUILD_ORDER = "fetch"
REBUILD = {"executor": "sor", "discipline": "vsm", "redirect_reads": False, "end_run": True}
FAILED_DRIVE = 1
DEGRADED_FAILURE_S = 1.0
REBUILD_FAILURE_S = 10.0
#: Normal and degraded runs: the notes' "at least 10⁶ requests".
REQUESTS = 1_000_000
QUICK_REQUESTS = 100_000
#: Rebuild runs: arrivals stop after this much simulated time (4 h) if the rebuild is
#: still going; the run then ends with the rebuild.
REBUILD_CAP_S = 14_400.0
#: The modes, each one sweep (``OUTPUT/<mode>``), in the order they run (longest runs first).
MODES = ("rebuild", "degraded", "normal")
CONFIG = "mirroring.toml"
FIRST_SEED = 4
DEFAULT_SEEDS = 2

#: Summary columns of the metrics used here; ``util`` is reported in %, ``rebuild_min`` in min.
METRICS = {"read_p90": "response_ms.read.p90", "set_p90": "response_ms.failed_set_read.p90",
           "util": "drives.mean_utilization"}
METRIC_LABELS = {"read_p90": "p90 read response (ms)", "set_p90": "p90 read response, failed set (ms)",
                 "util": "mean drive utilization (%)", "rebuild_min": "rebuild time (min)"}


class Point(NamedTuple):
    """One operating point: ``mode`` (normal, degraded, rebuild), the rebuild ``unit`` (a key
    of :data:`UNITS`, or ``None``), the read ``share`` (0-1) and the aggregate ``rate`` (I/O/s)."""

    mode: str
    unit: Optional[str]
    share: float
    rate: int


def _normal(share: float, rate: int) -> Point:
    return Point("normal", None, share, rate)


@dataclass(frozen=True)
class Stated:
    """A number the thesis states, per scheme: ``metric`` at ``point``, or, with ``over``,
    the rise (%) of that over ``over``'s metric at ``over``'s point."""

    source: str
    what: str
    unit: str
    values: Mapping[str, float]
    point: Point
    metric: str
    over: Optional[Tuple[Point, str]] = None


#: Every number the thesis states about these runs (notes §2.3-2.7).
PUBLISHED: Tuple[Stated, ...] = (
    Stated("Fig. 6", "p90 read response, normal, 75 % reads (caption missing; 75 % inferred), 250 I/O/s", "ms",
           {"ID": 32.12, "TM": 41.65, "DM": 33.61}, _normal(0.75, 250), "read_p90"),
    Stated("Fig. 7", "mean drive utilization, normal, 75 % reads, 250 I/O/s", "%",
           {"ID": 39.12, "TM": 40.33, "DM": 31.20}, _normal(0.75, 250), "util"),
    Stated("§3.3", "p90 read response, degraded, 100 % reads, 250 I/O/s", "ms",
           {"ID": 30.92, "TM": 41.06, "DM": 37.13}, Point("degraded", None, 1.0, 250), "read_p90"),
    Stated("Fig. 11", "rise of the failed set's p90 over normal mode, degraded, 75 % reads, 250 I/O/s", "% rise",
           {"ID": 7.3, "DM": 148.5, "TM": 113.2}, Point("degraded", None, 0.75, 250), "set_p90",
           over=(_normal(0.75, 250), "read_p90")),
    Stated("Fig. 13", "rise of all reads' p90 over normal mode, block rebuild, 75 % reads, 250 I/O/s", "% rise",
           {"ID": 12.0, "DM": 30.9, "TM": 17.88}, Point("rebuild", "block", 0.75, 250), "read_p90",
           over=(_normal(0.75, 250), "read_p90")),
    Stated("Figs. 14-15", "rise of the failed set's p90 over normal mode, block rebuild, 75 % reads, 250 I/O/s",
           "% rise", {"ID": 19.3, "DM": 167.8, "TM": 119.2}, Point("rebuild", "block", 0.75, 250), "set_p90",
           over=(_normal(0.75, 250), "read_p90")),
    Stated("Table 3", "\"Max. response\" over \"90% response\", cylinder rebuild, 75 % reads, 200 I/O/s",
           "% rise", {"ID": 19.9, "TM": 161.7, "DM": 73.4}, Point("rebuild", "cylinder", 0.75, 200), "set_p90",
           over=(Point("rebuild", "cylinder", 0.75, 200), "read_p90")),
    Stated("Fig. 27", "rebuild time, block unit, 0 % reads, 200 I/O/s", "min",
           {"ID": 29.21, "TM": 13.50, "DM": 18.71}, Point("rebuild", "block", 0.0, 200), "rebuild_min"),
)


def grid(quick: bool = False) -> List[Point]:
    """The points run: those the figures need (or, ``quick``, only those the published
    numbers need), each once, in :data:`MODES` order, the highest rates (the longest runs)
    first."""
    points: List[Point] = []
    if not quick:
        for unit in UNITS:
            points += [Point("rebuild", unit, share, rate) for share in (0.5, 0.75) for rate in RATES]
            points += [Point("rebuild", unit, share, rate) for share in (0.0, 1.0) for rate in (200, 300)]
        points += [Point("degraded", None, share, rate) for share in (0.5, 0.75) for rate in RATES]
        points.append(Point("degraded", None, 1.0, 250))
        points += [_normal(share, rate) for share in (0.5, 0.75, 1.0) for rate in RATES]
    for stated in PUBLISHED:
        points += [stated.point] + ([stated.over[0]] if stated.over else [])
    unique = list(dict.fromkeys(points))
    return sorted(unique, key=lambda p: (MODES.index(p.mode), -p.rate, list(UNITS).index(p.unit) if p.unit else 0,
                                         p.share))


# ---------------------------------------------------------------------------------------------
# Schemes and runs
# ---------------------------------------------------------------------------------------------


def _array_keys(scheme: str) -> Dict[str, Any]:
    from raidlab.config import parse_toml

    return {f"array.{key}": value for key, value in parse_toml(SCHEMES[scheme]).items()}


def _group(point: Point) -> str:
    """The group of runs a point belongs to: its mode, and for a rebuild its unit."""
    return point.mode if point.unit is None else f"{point.mode} ({point.unit} unit)"


def available_schemes(base: Path, wanted: Sequence[str],
                      points: Sequence[Point]) -> Tuple[Dict[str, List[str]], Dict[str, Dict[str, str]]]:
    """Per group of ``points`` (:func:`_group`), the schemes of ``wanted`` whose runs there
    the core accepts on ``base`` (in :data:`SCHEMES` order); and per scheme refused in some
    group, the core's reason per group. A layout the core lacks is refused everywhere; one
    whose rebuild it lacks, in the rebuild groups only."""
    import raidlab
    from raidlab.config import toml_literal

    accepted: Dict[str, List[str]] = {}
    refused: Dict[str, Dict[str, str]] = {}
    for point in points:
        group = _group(point)
        if group in accepted:
            continue
        accepted[group] = []
        for scheme in (s for s in SCHEMES if s in wanted):
            keys = {**_mode_keys(point.mode, 1000), **_point_keys(scheme, point)}
            try:
                raidlab.resolve_config(base, overrides=[f"{k}={toml_literal(v)}" for k, v in keys.items()])
            except ConfigError as error:
                reason = re.sub(r" \(from --set [^)]*\)$", "", str(error.message))
                refused.setdefault(scheme, {})[group] = reason
                continue
            accepted[group].append(scheme)
    return accepted, refused


def _refusals_text(refused: Mapping[str, Mapping[str, str]]) -> str:
    parts = []
    for scheme, groups in refused.items():
        by_reason: Dict[str, List[str]] = {}
        for group, reason in groups.items():
            by_reason.setdefault(reason, []).append(group)
        parts += [f"{scheme} not run in {', '.join(groups)}: {reason}" for reason, groups in by_reason.items()]
    return "; ".join(parts)


def _mode_keys(mode: str, requests: int) -> Dict[str, Any]:
    """The keys every run of ``mode`` shares (its sweep's ``[set]``)."""
    if mode == "rebuild":
        return {"array.spares": 1, "workload.duration_s": REBUILD_CAP_S,
                "failures": [{"drive": FAILED_DRIVE, "at_s": REBUILD_FAILURE_S}], "rebuild": dict(REBUILD)}
    keys: Dict[str, Any] = {"workload.requests": requests}
    if mode == "degraded":
        keys["failures"] = [{"drive": FAILED_DRIVE, "at_s": DEGRADED_FAILURE_S}]
    return keys


def _point_keys(scheme: str, point: Point) -> Dict[str, Any]:
    keys: Dict[str, Any] = {**_array_keys(scheme), "workload.read_fraction": point.share,
                            "workload.arrival.rate_per_s": point.rate}
    if point.unit is not None:
        keys["rebuild.unit"] = UNITS[point.unit]
        keys["rebuild.order"] = ORDER_BY_SCHEME_UNIT.get((scheme, point.unit), REBUILD_ORDER)
    return keys


def _spec_text(base: Path, mode: str, seeds: List[int], cases: List[Tuple[str, Point]], requests: int) -> str:
    from raidlab.config import toml_literal

    lines = [f"base = {toml_literal(str(base))}", f'name = "mirroring-{mode}"', f"seeds = {toml_literal(seeds)}", "",
             "[set]"]
    lines += [f"{toml_literal(key)} = {toml_literal(value)}" for key, value in _mode_keys(mode, requests).items()]
    lines.append("")
    for scheme, point in cases:
        lines.append("[[points]]")
        lines += [f"{toml_literal(key)} = {toml_literal(value)}" for key, value in _point_keys(scheme, point).items()]
        lines.append("")
    return "\n".join(lines)


def _runs_frame(table: "pd.DataFrame", cases: List[Tuple[str, Point]]) -> "pd.DataFrame":
    """One row per finished run: scheme, mode, unit, share, rate, seed and the metrics;
    ``rebuild_min`` is +inf for a rebuild that did not end while the load lasted (``finished``
    false), response metrics NaN for a run that overloaded."""
    import pandas as pd

    rows = []
    for _, row in table[table["status"] == "done"].iterrows():
        scheme, point = cases[int(row["case"])]
        overloaded = bool(row.get("overloaded", False)) if not pd.isna(row.get("overloaded", False)) else False
        values = {name: (math.nan if overloaded else _float(row.get(column))) for name, column in METRICS.items()}
        values["util"] *= 100.0
        finished, outcome, rebuild_min = True, "", math.nan
        if point.mode == "rebuild":
            outcome = str(row.get("rebuild.outcome"))
            ended = _float(row.get("rebuild.ended_at_s"))
            finished = outcome == "complete" and ended <= REBUILD_CAP_S
            rebuild_min = _float(row.get("rebuild_time_s")) / 60.0 if finished else (
                math.inf if outcome == "complete" else math.nan)
        rows.append({"scheme": scheme, "mode": point.mode, "unit": point.unit or "", "share": point.share,
                     "rate": point.rate, "seed": int(row["seed"]), **values, "rebuild_min": rebuild_min,
                     "finished": finished, "outcome": outcome, "overloaded": overloaded})
    return pd.DataFrame(rows, columns=["scheme", "mode", "unit", "share", "rate", "seed", *METRICS, "rebuild_min",
                                       "finished", "outcome", "overloaded"])


def _float(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number


class _Means:
    """Per-seed values and means of the runs, by (scheme, point, metric)."""

    def __init__(self, runs: "pd.DataFrame") -> None:
        self.by_seed: Dict[Tuple[str, Point, str], Dict[int, float]] = {}
        for row in runs.itertuples(index=False):
            point = Point(row.mode, row.unit or None, float(row.share), int(row.rate))
            for metric in (*METRICS, "rebuild_min"):
                self.by_seed.setdefault((row.scheme, point, metric), {})[int(row.seed)] = float(getattr(row, metric))

    def seeds(self, scheme: str, point: Point, metric: str) -> Dict[int, float]:
        return self.by_seed.get((scheme, point, metric), {})

    def mean(self, scheme: str, point: Point, metric: str) -> float:
        """The mean over seeds; +inf when any seed's rebuild did not end while the load
        lasted; NaN when there is no value."""
        values = [v for v in self.seeds(scheme, point, metric).values() if not math.isnan(v)]
        if any(math.isinf(v) for v in values):
            return math.inf
        return math.fsum(values) / len(values) if values else math.nan

    def stated(self, stated: Stated, scheme: str) -> Dict[int, float]:
        """Per seed, what ``stated`` measures: the metric, or its rise (%) over ``over``."""
        top = self.seeds(scheme, stated.point, stated.metric)
        if stated.over is None:
            return dict(top)
        bottom = self.seeds(scheme, *stated.over)
        return {seed: 100.0 * (value / bottom[seed] - 1.0) for seed, value in top.items()
                if seed in bottom and bottom[seed] and not math.isnan(bottom[seed])}


# ---------------------------------------------------------------------------------------------
# The reproduction
# ---------------------------------------------------------------------------------------------


def run(context: "Context") -> PaperReport:
    """Run the grid (or the quick one), one sweep per mode, into ``context.output`` and
    return the report. Finished runs are reused by a second call."""
    import pandas as pd

    from raidlab.experiments.sweep import load_sweep_spec
    from raidlab.reproductions.reproduce import default_experiments_dir

    options = dict(context.options or {})
    unknown = set(options) - {"quick", "requests", "schemes"}
    if unknown:
        raise ConfigError(f"unknown option(s) {sorted(unknown)}", key="mirroring")
    quick = bool(options.get("quick", False))
    requests = options.get("requests", QUICK_REQUESTS if quick else REQUESTS)
    if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
        raise ConfigError(f"expected a whole number ≥ 1, not {requests!r}", key="requests")
    wanted = list(options.get("schemes") or SCHEMES)
    if any(s not in SCHEMES for s in wanted):
        raise ConfigError(f"expected some of {list(SCHEMES)}, not {wanted}", key="schemes")
    experiments = Path(context.experiments_dir) if context.experiments_dir else default_experiments_dir()
    base = (experiments / CONFIG).resolve()
    output = Path(context.output).resolve()
    output.mkdir(parents=True, exist_ok=True)
    seeds = list(range(FIRST_SEED, FIRST_SEED + (context.seeds or DEFAULT_SEEDS)))

    points = grid(quick)
    accepted, refused = available_schemes(base, wanted, points)
    schemes = [s for s in SCHEMES if any(s in group for group in accepted.values())]
    if not schemes:
        raise ConfigError(f"no scheme runs on this build: {_refusals_text(refused)}", key="mirroring")
    tables, frames, skipped, ran = [], [], 0, 0
    for mode in MODES:
        cases = [(scheme, point) for point in points if point.mode == mode for scheme in accepted[_group(point)]]
        if not cases:
            continue
        spec = load_sweep_spec(output / f"mirroring-{mode}.toml", text=_spec_text(base, mode, seeds, cases, requests))
        outcome = context.run_sweep(f"mirroring {mode}", spec, output / mode)
        tables.append(outcome.table)
        frames.append(_runs_frame(outcome.table, cases))
        skipped, ran = skipped + outcome.skipped, ran + outcome.ran
    table = pd.concat(tables, ignore_index=True)
    runs = pd.concat(frames, ignore_index=True)
    means = _Means(runs)

    report = PaperReport(name="mirroring", title="")
    modes = {m: sum(1 for p in points if p.mode == m) for m in MODES}
    report.facts.append(
        f"{len(table)} run(s): {len(points)} point(s) ({modes['normal']} normal, {modes['degraded']} degraded, "
        f"{modes['rebuild']} rebuild) × up to {len(schemes)} scheme(s) × {len(seeds)} seed(s) "
        f"({', '.join(map(str, seeds))}){' (quick grid: the published numbers only)' if quick else ''}; "
        f"{skipped} already done, {ran} run now; sweep directories {output}/{{{','.join(MODES)}}}")
    report.facts.append(
        f"normal and degraded runs {requests:,} requests each; rebuild runs until the rebuild ends, arrivals "
        f"stopping after {REBUILD_CAP_S:,.0f} s ({REBUILD_CAP_S / 3600:g} h) of simulated time if it has not")
    report.facts.append("schemes: " + "; ".join(f"{s} ({SCHEMES[s].replace(chr(10), ', ')})" for s in schemes)
                        + (f"; {_refusals_text(refused)}" if refused else ""))
    report.facts.append("The seed text lacks the bodies of Tables 3 and 4: only their captions survive, and three "
                        "ratios of Table 3 that the prose quotes. None of their cells is invented here; the Table 3 "
                        "table below holds raidlab's numbers only, and Table 4 (read redirection) is not run.")
    failed = table[table["status"] != "done"]
    if len(failed):
        errors = failed["error"].dropna().astype(str).value_counts()
        report.error = f"{len(failed)} run(s) failed: " + "; ".join(
            f"{error} ({count} run(s))" if count > 1 else error for error, count in errors.items())
    rebuilds = runs[runs["mode"] == "rebuild"]
    unfinished = rebuilds[~rebuilds["finished"].astype(bool)]
    if len(unfinished):
        where = sorted({f"{r.scheme} {r.unit} {r.share * 100:g} % {r.rate}" for r in unfinished.itertuples()})
        report.facts.append(f"{len(unfinished)} rebuild run(s) did not end while the load lasted (their time is a "
                            f"lower bound, shown as > …): {', '.join(where)}")
    overloaded = runs[runs["overloaded"].astype(bool)]
    if len(overloaded):
        where = sorted({f"{r.scheme} {r.mode} {r.unit} {r.share * 100:g} % {r.rate}" for r in overloaded.itertuples()})
        report.facts.append(f"{len(overloaded)} run(s) overloaded (no response figure): {', '.join(where)}")

    report.tables.append(_published_table(means, schemes, seeds))
    report.tables.append(_table3(means, schemes))
    if not quick:
        report.tables.append(_rebuild_time_table(means, schemes))
    report.tables.append(_claims_table(means, schemes))
    csv = _write_points(means, schemes, points, output / "mirroring_points.csv")
    report.facts.append(f"every point's means (over seeds): {csv}")
    for stem, title, panels in FIGURES:
        path = _draw(runs, schemes, stem, title, panels, output)
        if path is not None:
            report.figures.append(ReportFigure(path, f"{title}: lines per scheme, mean over seeds with 95 % "
                                                     "intervals; ×: the thesis's stated (or derived) values"))
    return report


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------


def _bound_text() -> str:
    return f"> {(REBUILD_CAP_S - REBUILD_FAILURE_S) / 60:.0f}"


def _cell(value: float, unit: str) -> str:
    if math.isinf(value):
        return f"{_bound_text()} min"
    suffix = {"ms": " ms", "%": " %", "% rise": " %", "min": " min"}[unit]
    return number_text(value, 2, suffix)


def _published_table(means: _Means, schemes: Sequence[str], seeds: Sequence[int]) -> ReportTable:
    rows: List[List[str]] = []
    for stated in PUBLISHED:
        for scheme in SCHEMES:
            published = stated.values.get(scheme)
            if published is None:
                continue
            needed = [(stated.point, stated.metric)] + ([stated.over] if stated.over else [])
            if scheme not in schemes or any(not means.seeds(scheme, *need) for need in needed):
                rows.append([stated.source, stated.what, scheme, _cell(published, stated.unit), "not run", "—", "—",
                             "—", "—"])
                continue
            per_seed = means.stated(stated, scheme)
            finite = [v for v in per_seed.values() if not math.isnan(v)]
            mean = math.inf if any(math.isinf(v) for v in finite) else (
                math.fsum(finite) / len(finite) if finite else math.nan)
            points = "—"
            if stated.unit in ("%", "% rise") and math.isfinite(mean):
                points = f"{mean - published:+.2f} pt"
            basis = ""
            if stated.over is not None:
                top = means.mean(scheme, stated.point, stated.metric)
                bottom = means.mean(scheme, *stated.over)
                basis = f"{number_text(top, 2)} over {number_text(bottom, 2)} ms"
            rows.append([stated.source, stated.what, scheme, _cell(published, stated.unit), _cell(mean, stated.unit),
                         " / ".join(_cell(per_seed[s], stated.unit) for s in seeds if s in per_seed) or "—",
                         difference_text(mean, published) if math.isfinite(mean) else "—", points, basis])
    return ReportTable(
        "Every number the thesis states (§3.2-3.5) beside raidlab's",
        ["source", "what", "scheme", "thesis", "raidlab (mean)", "raidlab per seed", "difference",
         "difference (points)", "raidlab basis"], rows, numeric_from=3,
        note="Difference: (raidlab − thesis) / thesis, of the quantity itself (for a rise, of the rise); points: "
             "raidlab − thesis for quantities in %. A rise is (p90 / p90 of the basis − 1), per seed, then the mean "
             "over seeds; the basis column gives both p90s (means over seeds). Normal mode is the same scheme, read "
             "share and I/O rate without a failure. \"Failed set\": the reads of the failed drive's mirror pair "
             "(TM, DM) or cluster (ID). \"> N min\": the rebuild had not ended when the arrivals stopped.")


def _table3(means: _Means, schemes: Sequence[str]) -> ReportTable:
    rows = []
    stated = next(s for s in PUBLISHED if s.source == "Table 3")
    for unit in UNITS:
        point = Point("rebuild", unit, 0.75, 200)
        for scheme in schemes:
            read, top = means.mean(scheme, point, "read_p90"), means.mean(scheme, point, "set_p90")
            ratio = 100.0 * (top / read - 1.0) if read and math.isfinite(read) else math.nan
            thesis = _cell(stated.values[scheme], "% rise") if unit == stated.point.unit and scheme in stated.values \
                else "missing"
            if all(math.isnan(v) for v in (read, top)):
                continue
            rows.append([unit, scheme, number_text(read, 2, " ms"), number_text(top, 2, " ms"),
                         number_text(ratio, 1, " %"), thesis, _cell(means.mean(scheme, point, "rebuild_min"), "min")])
    return ReportTable(
        "Table 3's columns at 200 I/O per second, 75 % reads, no redirection (raidlab only: the body is missing)",
        ["unit", "scheme", "90% response", "Max. response", "Max. over 90 %", "thesis: Max. over 90 %",
         "rebuild time"], rows, numeric_from=2,
        note="The captions of Tables 3 and 4 name these columns (\"90% response time\" over all application reads, "
             "\"Max. response\" over the reads of the failed set, rebuild time in minutes); the seed text prints "
             "none of their cells, only the three cylinder-unit ratios of Table 3 (§3.4). Every number here but "
             "those three is raidlab's (mean over seeds).")


def _rebuild_time_table(means: _Means, schemes: Sequence[str]) -> ReportTable:
    rows = []
    for unit in UNITS:
        for scheme in schemes:
            values = [means.mean(scheme, Point("rebuild", unit, 0.75, rate), "rebuild_min") for rate in RATES]
            if not all(math.isnan(v) for v in values):
                rows.append([unit, scheme, *(_cell(v, "min") for v in values)])
    return ReportTable(
        "Rebuild time at 75 % reads (Figs. 16, 21 and 26), raidlab", ["unit", "scheme", *(f"{r} I/O/s" for r in RATES)],
        rows, numeric_from=2,
        note="Simulated minutes from the failure to the rebuild's end (mean over seeds). The thesis prints no number "
             "for these figures; its conclusion (§4.1) is that every rebuild below 300 I/O/s ends within 30 min.")


def _value(means: _Means, scheme: str, point: Point, metric: str) -> float:
    """A metric's mean, or for ``*_rise`` the rise (%) of the p90 over normal mode's."""
    if metric.endswith("_rise"):
        top = means.mean(scheme, point, metric.replace("_rise", "_p90"))
        bottom = means.mean(scheme, _normal(point.share, point.rate), "read_p90")
        return 100.0 * (top / bottom - 1.0) if bottom and not math.isnan(bottom) else math.nan
    return means.mean(scheme, point, metric)


def _holds(good: int, total: int) -> Tuple[str, str]:
    if total == 0:
        return "no runs", "—"
    return f"holds at {good} of {total}", "yes" if good == total else "no"


def _extreme(means: _Means, schemes: Sequence[str], scheme: str, metric: str, points: Sequence[Point],
             lowest: bool = True) -> Tuple[str, str]:
    """Whether ``scheme`` has the lowest (highest) ``metric`` of the schemes at every point."""
    if scheme not in schemes:
        return f"{scheme} not run", "—"
    good = total = 0
    for point in points:
        values = {s: _value(means, s, point, metric) for s in schemes}
        values = {s: v for s, v in values.items() if not math.isnan(v)}
        if scheme not in values or len(values) < 2:
            continue
        total += 1
        others = [v for s, v in values.items() if s != scheme]
        good += all(values[scheme] < v for v in others) if lowest else all(values[scheme] > v for v in others)
    text, verdict = _holds(good, total)
    if not total:
        return f"no runs of {scheme} here", verdict
    compared = sorted({s for p in points for s in schemes if not math.isnan(_value(means, s, p, metric))},
                      key=list(SCHEMES).index)
    return f"{text} points ({' / '.join(compared)})", verdict


def _increasing(values: Sequence[float]) -> bool:
    return all(b > a or (math.isinf(a) and math.isinf(b)) for a, b in zip(values, values[1:]))


def _claims_table(means: _Means, schemes: Sequence[str]) -> ReportTable:
    rows: List[List[str]] = []
    rb = lambda unit, shares, rates: [Point("rebuild", unit, s, r) for s in shares for r in rates]  # noqa: E731

    def add(source: str, claim: str, result: Tuple[str, str]) -> None:
        rows.append([source, claim, *result])

    spread, where = -1.0, None
    for rate in RATES:
        values = [means.mean(s, _normal(1.0, rate), "util") for s in schemes]
        if len(values) > 1 and not any(math.isnan(v) for v in values):
            if (max(values) - min(values)) / min(values) > spread:
                spread, where = (max(values) - min(values)) / min(values), rate
    add("§3.2", "at 100 % reads the schemes' utilizations are identical",
        (f"largest spread {spread * 100:.1f} % (at {where} I/O/s)", "yes" if spread < 0.03 else "no")
        if where is not None else ("no runs", "—"))
    add("§3.2", "DM has the lowest utilization (75 % reads)",
        _extreme(means, schemes, "DM", "util", [_normal(0.75, r) for r in RATES]))
    add("§3.2", "TM degrades most as the rate rises: highest p90 at 350 I/O/s (50 and 75 % reads)",
        _extreme(means, schemes, "TM", "read_p90", [_normal(0.5, 350), _normal(0.75, 350)], lowest=False))
    add("§3.3", "ID is clearly best on failed-set reads (degraded, 50 and 75 % reads)",
        _extreme(means, schemes, "ID", "set_p90", [Point("degraded", None, s, r) for s in (0.5, 0.75) for r in RATES]))
    add("§3.4", "block unit: ID shows the smallest rises of the failed set's p90 over normal mode",
        _extreme(means, schemes, "ID", "set_rise", rb("block", (0.5, 0.75), RATES)))
    add("§3.4", "track and cylinder units: ID is best (p90 of all reads)",
        _extreme(means, schemes, "ID", "read_p90", rb("track", (0.5, 0.75), RATES) + rb("cylinder", (0.5, 0.75), RATES)))
    add("§3.4", "track and cylinder units: DM is worst below 300 I/O/s (p90 of all reads)",
        _extreme(means, schemes, "DM", "read_p90", rb("track", (0.5, 0.75), RATES[:4]) + rb("cylinder", (0.5, 0.75),
                                                                                           RATES[:4]), lowest=False))
    add("Fig. 16", "ID has the best block rebuild time over the range (75 % reads)",
        _extreme(means, schemes, "ID", "rebuild_min", rb("block", (0.75,), RATES)))
    good = total = 0
    for unit in UNITS:
        for scheme in schemes:
            values = [means.mean(scheme, Point("rebuild", unit, 0.75, r), "rebuild_min") for r in RATES]
            if not any(math.isnan(v) for v in values):
                total += 1
                good += _increasing(values)
    text, verdict = _holds(good, total)
    add("Fig. 16", "rebuild time rises with the I/O rate for every scheme (75 % reads; every unit here)",
        (f"{text} (scheme, unit) lines" if total else text, verdict))
    def units_in_order(metric: str, ascending: bool) -> Tuple[str, str]:
        # At each (scheme, rate) with all three units: block, track, cylinder in order of
        # `metric`, rising or falling.
        good = total = 0
        for scheme in schemes:
            for rate in RATES:
                values = [means.mean(scheme, Point("rebuild", u, 0.75, rate), metric) for u in UNITS]
                if not any(math.isnan(v) for v in values):
                    total += 1
                    good += (values[0] < values[1] < values[2]) if ascending else (values[2] < values[1] < values[0])
        text, verdict = _holds(good, total)
        return (f"{text} (scheme, rate) points" if total else text, verdict)

    add("§3.4", "the cylinder unit gives the shortest rebuild, the block unit the longest (75 % reads)",
        units_in_order("rebuild_min", ascending=False))
    add("§3.4", "the block unit raises response times least, the cylinder unit most (75 % reads)",
        units_in_order("read_p90", ascending=True))
    longest, at = -1.0, ""
    for (scheme, point, metric), by_seed in means.by_seed.items():
        if metric == "rebuild_min" and point.rate < 300 and scheme in schemes:
            value = means.mean(scheme, point, metric)
            if not math.isnan(value) and value > longest:
                longest, at = value, f"{scheme}, {point.unit}, {point.share * 100:g} % reads, {point.rate} I/O/s"
    add("§4.1", "every rebuild below 300 I/O/s ends within 30 min (320 MB disks)",
        (f"longest {_cell(longest, 'min')} ({at})", "yes" if longest < 30 else "no") if at else ("no runs", "—"))
    good = total = 0
    for unit in UNITS:
        for rate in (200, 300):
            for scheme in schemes:
                low = means.mean(scheme, Point("rebuild", unit, 0.0, rate), "rebuild_min")
                high = means.mean(scheme, Point("rebuild", unit, 1.0, rate), "rebuild_min")
                if math.isnan(low) or math.isnan(high) or (math.isinf(low) and math.isinf(high)):
                    continue
                total += 1
                good += (high < low) if scheme == "ID" else (high > low)
    text, verdict = _holds(good, total)
    add("§3.5", "TM's and DM's rebuild time rises with the read share, ID's falls (0 against 100 % reads, "
                "200 and 300 I/O/s)", (f"{text} (scheme, unit, rate) cases" if total else text, verdict))
    return ReportTable("The thesis's qualitative statements, checked on raidlab's runs",
                       ["source", "the thesis says", "raidlab", "holds"], rows, numeric_from=4,
                       note="Each statement is checked at every point run that it covers (mean over seeds); "
                            "\"yes\" when it holds at all of them. The 3 % for \"identical\" is a margin chosen "
                            "here, not the thesis's. A rebuild that did not end while the load lasted counts as "
                            "longer than any that did.")


def _write_points(means: _Means, schemes: Sequence[str], points: Sequence[Point], path: Path) -> Path:
    import pandas as pd

    rows = []
    for point in points:
        for scheme in schemes:
            row = {"scheme": scheme, "mode": point.mode, "unit": point.unit or "", "read_share": point.share,
                   "rate_per_s": point.rate, "runs": len(means.seeds(scheme, point, "read_p90"))}
            row.update({metric: means.mean(scheme, point, metric) for metric in (*METRICS, "rebuild_min")})
            rows.append(row)
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


class Panel(NamedTuple):
    """One panel: the thesis's figure ``title``, its runs (``mode``, ``unit``, ``share``;
    ``rate`` when the x axis is the read share) and its ``metric``."""

    title: str
    mode: str
    unit: Optional[str]
    share: Optional[float]
    metric: str
    rate: Optional[int] = None


def _unit_figures(unit: str, first: int, last_caption: str = "") -> Tuple[str, str, List[Panel]]:
    return (f"mirroring_rebuild_{unit}", f"Rebuild mode, {unit} unit (Figs. {first}-{first + 4})", [
        Panel(f"Fig. {first}: all reads, 50 % reads", "rebuild", unit, 0.5, "read_p90"),
        Panel(f"Fig. {first + 1}: all reads, 75 % reads", "rebuild", unit, 0.75, "read_p90"),
        Panel(f"Fig. {first + 2}: failed set, 50 % reads", "rebuild", unit, 0.5, "set_p90"),
        Panel(f"Fig. {first + 3}: failed set, 75 % reads", "rebuild", unit, 0.75, "set_p90"),
        Panel(f"Fig. {first + 4}{last_caption}: rebuild time, 75 % reads", "rebuild", unit, 0.75, "rebuild_min")])


#: One PNG per group of the thesis's figures: (file stem, title, panels).
FIGURES: Tuple[Tuple[str, str, List[Panel]], ...] = (
    ("mirroring_normal", "Normal mode (Figs. 5-7)", [
        Panel("Fig. 5: all reads, 50 % reads", "normal", None, 0.5, "read_p90"),
        Panel("Fig. 6: all reads, 75 % reads", "normal", None, 0.75, "read_p90"),
        Panel("Fig. 7: utilization, 75 % reads", "normal", None, 0.75, "util"),
        Panel("§3.2, not shown: utilization, 100 % reads", "normal", None, 1.0, "util")]),
    ("mirroring_degraded", "Degraded mode (Figs. 8-11)", [
        Panel("Fig. 8: all reads, 50 % reads", "degraded", None, 0.5, "read_p90"),
        Panel("Fig. 9: all reads, 75 % reads", "degraded", None, 0.75, "read_p90"),
        Panel("Fig. 10: failed set, 50 % reads", "degraded", None, 0.5, "set_p90"),
        Panel("Fig. 11: failed set, 75 % reads", "degraded", None, 0.75, "set_p90")]),
    _unit_figures("block", 12),
    _unit_figures("track", 17),
    _unit_figures("cylinder", 22, " (caption missing)"),
    ("mirroring_rebuild_time_vs_reads", "Rebuild time against the read share (Figs. 27-32)", [
        Panel(f"Fig. {27 + 3 * i + j}{' (caption missing)' if (i, j) == (1, 1) else ''}: {unit} unit, {rate} I/O/s",
              "rebuild", unit, None, "rebuild_min", rate)
        for i, rate in enumerate((200, 300)) for j, unit in enumerate(UNITS)]),
)


def _thesis_marks(panel: Panel, schemes: Sequence[str]) -> List[Tuple[str, float, float]]:
    """(scheme, x, y) of the thesis's values on ``panel``: a stated value, or a stated rise
    applied to a stated basis (the notes' "derived")."""
    marks = []
    for stated in PUBLISHED:
        point = stated.point
        on_panel = (point.mode == panel.mode and point.unit == panel.unit and stated.metric == panel.metric
                    and (point.share == panel.share if panel.rate is None else point.rate == panel.rate))
        if not on_panel:
            continue
        x = float(point.rate) if panel.rate is None else point.share * 100.0
        for scheme in schemes:
            if scheme not in stated.values:
                continue
            if stated.over is None:
                marks.append((scheme, x, stated.values[scheme]))
                continue
            basis = next((s for s in PUBLISHED if s.over is None and (s.point, s.metric) == stated.over
                          and scheme in s.values), None)
            if basis is not None:
                marks.append((scheme, x, basis.values[scheme] * (1.0 + stated.values[scheme] / 100.0)))
    return marks


def _colour(scheme: str) -> str:
    """A scheme's colour, the same in every panel: its place in :data:`SCHEMES`, as
    :func:`draw_metric_against_axis` colours its series."""
    return f"C{list(SCHEMES).index(scheme) % 10}"


def _draw(runs: "pd.DataFrame", schemes: Sequence[str], stem: str, title: str, panels: Sequence[Panel],
          output: Path) -> Optional[Path]:
    """One figure of ``panels`` (those with runs), lines per scheme: the mean over seeds
    with its 95 % interval; unfinished rebuilds as open markers at their lower bound; the
    thesis's values as crosses."""
    import pandas as pd
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    from raidlab.experiments.sweep_plots import draw_metric_against_axis, save_png_and_svg

    frames = []
    for panel in panels:
        rows = runs[(runs["mode"] == panel.mode) & (runs["unit"] == (panel.unit or ""))]
        rows = rows[rows["share"] == panel.share] if panel.rate is None else rows[rows["rate"] == panel.rate]
        if len(rows):
            frames.append((panel, rows))
    if not frames:
        return None
    columns = 3 if len(frames) > 4 else 2 if len(frames) > 1 else 1
    lines = math.ceil(len(frames) / columns)
    figure = Figure(figsize=(5.2 * columns, 3.9 * lines), layout="constrained")
    axes = figure.subplots(lines, columns, squeeze=False)
    for index, (panel, rows) in enumerate(frames):
        ax = axes[index // columns][index % columns]
        x = "rate" if panel.rate is None else "read share (%)"
        frame = rows.assign(**{"read share (%)": rows["share"] * 100.0})[["scheme", x, panel.metric]].copy()
        frame["scheme"] = frame["scheme"].astype(str)
        bounds = []
        if panel.metric == "rebuild_min":
            late = frame.groupby(["scheme", x])["rebuild_min"].transform(lambda v: bool(v.map(math.isinf).any()))
            bounds = sorted({(s, v) for s, v in frame.loc[late.astype(bool), ["scheme", x]].itertuples(index=False)})
            frame.loc[late.astype(bool), "rebuild_min"] = math.nan
        drawn = set(frame.loc[frame[panel.metric].notna(), "scheme"])
        # Every scheme of the table in the series, in its order, so that each keeps its colour
        # in every panel (a scheme without runs here is a row of NaN: no line, no legend entry).
        missing = [s for s in SCHEMES if s not in set(frame["scheme"])]
        frame = pd.concat([frame, pd.DataFrame({"scheme": missing, x: frame[x].iloc[0], panel.metric: math.nan})],
                          ignore_index=True)
        frame = frame.sort_values("scheme", key=lambda c: c.map(list(SCHEMES).index), kind="stable")
        draw_metric_against_axis(ax, frame, x, panel.metric, "scheme")
        for scheme, value in bounds:
            ax.plot([value], [(REBUILD_CAP_S - REBUILD_FAILURE_S) / 60.0], marker="^", markersize=8,
                    markerfacecolor="none", color=_colour(scheme), linestyle="none")
        marks = _thesis_marks(panel, schemes)
        for scheme, mark_x, mark_y in marks:
            ax.plot([mark_x], [mark_y], marker="x", markersize=9, markeredgewidth=2, color=_colour(scheme),
                    linestyle="none")
        handles, labels = [], []
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label.replace("scheme = ", "") in drawn:
                handles.append(handle)
                labels.append(label.replace("scheme = ", ""))
        extra = [Line2D([], [], marker="x", color="0.3", linestyle="none", markeredgewidth=2)] if marks else []
        extra_labels = ["thesis"] if extra else []
        if bounds:
            extra.append(Line2D([], [], marker="^", color="0.3", markerfacecolor="none", linestyle="none"))
            extra_labels.append(f"not ended in {REBUILD_CAP_S / 3600:g} h of load")
        ax.legend(handles + extra, labels + extra_labels, fontsize="small")
        ax.set_title(panel.title, fontsize="medium")
        ax.set_xlabel("I/O rate (per second, 16 drives)" if panel.rate is None else "read share (%)")
        ax.set_ylabel(METRIC_LABELS[panel.metric])
        ax.set_ylim(bottom=0)
    for index in range(len(frames), lines * columns):
        axes[index // columns][index % columns].set_visible(False)
    figure.suptitle(f"{title}: 16 IBM 0661 drives, 4 KB uniform requests (thesis, seed 004)")
    return save_png_and_svg(figure, output / stem)[0]
