"""PRO (seed 000 §4): popularity-based reconstruction against DOR, Tables 3-4 and Fig. 3.

Arrays (§4.3): RAID-5 of 3, 5, 7 and 9 Seagate ST3146807LC drives and RAID-1 of 2, each
with one hot spare, 64 KB stripe units, every drive limited to 5 GB (§4.1). A drive fails
at t = 0 and is rebuilt at once onto the spare by DOR with RAIDframe's reconstruction
buffers (notes A1.2), 64 KB rebuild units, read redirection on; the run ends with the
rebuild. Workloads (§4.2, Table 2): the web-search traces' synthetic look-alikes
(:mod:`raidlab.synth`), one per array with the array's capacity as its area, replayed open
loop by their timestamps. Each (array, trace) case runs with ``rebuild.order =
"sequential"`` (DOR) and ``"pro"`` (PRO) through the sweep machinery (local process pool;
a second ``reproduce`` reuses finished runs and generated traces).

Reported: Table 3 (reconstruction time) and Table 4 (mean response time of the user
requests that arrive between the failure and the rebuild's end), the paper's numbers beside
raidlab's, every "improved" column computed from the times, the paper's misprints
footnoted; and R(t) in the style of Fig. 3 (RAID-5 of 3 disks + spare).

Options (``Context.options``): ``requests`` (per trace; default the published counts),
``capacity_gib`` (per drive; default 5), ``arrays`` (a subset of :data:`ARRAYS` as
``"raid5-3"``…), ``traces`` (a subset of the three). ``--seeds N`` runs seeds 1..N (the
paper reports one measurement per cell; default 1).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from raidlab.output.report import PaperReport, ReportFigure, ReportTable, number_text

if TYPE_CHECKING:
    import pandas as pd

    from raidlab.reproductions.context import Context

__all__ = ["ARRAYS", "TRACES", "TABLE3", "TABLE4", "run", "improvement", "printed_misprints"]

#: The arrays of §4.3, as (layout, drives without the spare).
ARRAYS: Tuple[Tuple[str, int], ...] = (("raid5", 3), ("raid5", 5), ("raid5", 7), ("raid5", 9), ("raid1", 2))
TRACES: Tuple[str, ...] = ("websearch1", "websearch2", "websearch3")
TRACE_LABELS = {"websearch1": "WT1", "websearch2": "WT2", "websearch3": "WT3"}
#: The paper's orders: DOR rebuilds sequentially; PRO is the popularity-based order.
ORDERS = {"DOR": "sequential", "PRO": "pro"}
#: Until the `pro` order is in the core, this stands in for it (and the report says so).
STAND_IN = "nearest"

#: Seed 000 Table 3, reconstruction time (s), as printed: (layout, disks) -> trace ->
#: (DOR, PRO, printed improvement %).
TABLE3: Dict[Tuple[str, int], Dict[str, Tuple[float, float, float]]] = {
    ("raid5", 3): {"websearch1": (1123.8, 666.5, 40.7), "websearch2": (1058.3, 585.2, 44.7),
                   "websearch3": (452.3, 351.6, 22.3)},
    ("raid5", 5): {"websearch1": (457.4, 353.1, 22.8), "websearch2": (374.5, 304.1, 18.8),
                   "websearch3": (242.8, 203.9, 16.0)},
    ("raid5", 7): {"websearch1": (344.0, 319.1, 7.2), "websearch2": (325.7, 278.5, 14.5),
                   "websearch3": (238.2, 210.8, 11.5)},
    ("raid5", 9): {"websearch1": (243.5, 240.3, 1.3), "websearch2": (231.5, 215.3, 7.0),
                   "websearch3": (192.4, 184.5, 4.1)},
    ("raid1", 2): {"websearch1": (1208.1, 1157.7, 4.2), "websearch2": (938.0, 870.1, 7.3),
                   "websearch3": (424.2, 409.5, 3.7)},
}
#: Seed 000 Table 4, average user response time during recovery (ms), as printed.
TABLE4: Dict[Tuple[str, int], Dict[str, Tuple[float, float, float]]] = {
    ("raid5", 3): {"websearch1": (31.8, 24.2, 23.9), "websearch2": (28.5, 23.9, 16.0),
                   "websearch3": (27.4, 23.1, 15.6)},
    ("raid5", 5): {"websearch1": (21.7, 19.3, 11.1), "websearch2": (21.0, 18.7, 11.0),
                   "websearch3": (20.0, 17.8, 11.3)},
    ("raid5", 7): {"websearch1": (25.0, 23.8, 5.1), "websearch2": (22.5, 21.4, 4.5),
                   "websearch3": (22.6, 20.0, 11.8)},
    ("raid5", 9): {"websearch1": (19.1, 18.2, 4.5), "websearch2": (19.6, 17.3, 11.5),
                   "websearch3": (19.5, 18.8, 3.6)},
    ("raid1", 2): {"websearch1": (29.5, 28.2, 11.1), "websearch2": (21.4, 20.6, 11.0),
                   "websearch3": (18.8, 17.8, 11.3)},
}

CONFIG = "pro/base.toml"
DEFAULT_CAPACITY_GIB = 5.0
SECTORS_PER_GIB = 2**30 // 512
METRIC_TIME = "rebuild_time_s"
METRIC_RESPONSE = "response_ms_by_period.rebuilding.mean"


def improvement(dor: float, pro: float) -> float:
    """(DOR − PRO) / DOR in %, the paper's "improved"."""
    return (dor - pro) / dor * 100.0 if dor else math.nan


def _improvement_range(dor: float, pro: float) -> Tuple[float, float]:
    """The improvements the printed one-decimal times allow (each ± 0.05)."""
    values = [improvement(d, p) for d in (dor - 0.05, dor + 0.05) for p in (pro - 0.05, pro + 0.05)]
    return min(values), max(values)


def printed_misprints(table: Dict[Tuple[str, int], Dict[str, Tuple[float, float, float]]]) -> Dict[Tuple[str, int, str], float]:
    """Cells whose printed improvement no pair of times within the printed rounding gives
    (the printed value itself rounded to 0.1 point): (layout, disks, trace) -> the value
    computed from the printed times."""
    wrong = {}
    for (layout, disks), row in table.items():
        for trace, (dor, pro, printed) in row.items():
            low, high = _improvement_range(dor, pro)
            if not low - 0.05 <= printed <= high + 0.05:
                wrong[(layout, disks, trace)] = improvement(dor, pro)
    return wrong


def _label(layout: str) -> str:
    return {"raid5": "RAID-5", "raid1": "RAID-1"}.get(layout, layout)


def _area_gib(layout: str, disks: int, capacity_gib: float) -> float:
    return capacity_gib * (disks - 1 if layout == "raid5" else disks // 2)


def _traces(output: Path, chosen: Sequence[Tuple[str, int]], traces: Sequence[str], capacity_gib: float,
            requests: Optional[int], seed: int, context: "Context") -> Dict[Tuple[str, int, str], Path]:
    """Write (or reuse) one trace per (array capacity, trace): the array's capacity is the
    trace's area, so every address lies on the array."""
    from raidlab import synth

    folder = output / "traces"
    folder.mkdir(parents=True, exist_ok=True)
    paths: Dict[Tuple[str, int, str], Path] = {}
    areas = sorted({_area_gib(layout, disks, capacity_gib) for layout, disks in chosen})
    todo = [(area, trace) for area in areas for trace in traces]
    written: Dict[Tuple[float, str], Path] = {}
    for number, (area, trace) in enumerate(todo):
        count = synth.PROFILES[trace].requests if requests is None else requests
        path = folder / f"{trace}-{area:g}gib-{count}req-seed{seed}.spc.gz"
        if not path.is_file():
            partial = path.with_name(path.name + ".partial")
            synth.write(synth.generate(trace, seed=seed, requests=count, area_gib=area), partial, compress=True)
            partial.replace(path)
        written[(area, trace)] = path
        context.report_progress("pro traces", number + 1, len(todo))
    for layout, disks in chosen:
        for trace in traces:
            paths[(layout, disks, trace)] = written[(_area_gib(layout, disks, capacity_gib), trace)]
    return paths


def _order_names() -> Dict[str, str]:
    """DOR and PRO as rebuild orders; PRO's stand-in while the core has no `pro` order."""
    from raidlab.catalogue import catalogue

    orders = next(f.names for f in catalogue() if f.name == "rebuild_orders")
    return {"DOR": ORDERS["DOR"], "PRO": ORDERS["PRO"] if ORDERS["PRO"] in orders else STAND_IN}


def _spec_text(base: Path, cases: List[Tuple[str, int, str, Path]], orders: Dict[str, str],
               seeds: List[int], capacity_sectors: int) -> str:
    from raidlab.config import toml_literal

    lines = [f"base = {toml_literal(str(base))}", 'name = "pro"', f"seeds = {toml_literal(seeds)}", "",
             "[set]", f'"drive.capacity_sectors" = {capacity_sectors}', "",
             "[grid]", f'"rebuild.order" = {toml_literal([orders["DOR"], orders["PRO"]])}', ""]
    for layout, disks, _, path in cases:
        lines += ["[[points]]", f'"array.layout" = {toml_literal(layout)}', f'"array.drives" = {disks}',
                  f'"workload.trace.path" = {toml_literal(str(path))}', ""]
    return "\n".join(lines)


def run(context: "Context") -> PaperReport:
    from raidlab.reproductions.reproduce import default_experiments_dir
    from raidlab.experiments.sweep import load_sweep_spec

    options = dict(context.options or {})
    capacity_gib = float(options.get("capacity_gib", DEFAULT_CAPACITY_GIB))
    requests = options.get("requests")
    wanted_arrays = options.get("arrays")
    chosen = [a for a in ARRAYS if wanted_arrays is None or f"{a[0]}-{a[1]}" in wanted_arrays]
    traces = [t for t in TRACES if options.get("traces") is None or t in options["traces"]]
    seeds = list(range(1, 1 + (context.seeds or 1)))
    output = Path(context.output)
    experiments = Path(context.experiments_dir) if context.experiments_dir else default_experiments_dir()
    base = (experiments / CONFIG).resolve()

    paths = _traces(output, chosen, traces, capacity_gib, requests, seeds[0], context)
    cases = [(layout, disks, trace, paths[(layout, disks, trace)]) for layout, disks in chosen for trace in traces]
    orders = _order_names()
    capacity_sectors = int(round(capacity_gib * SECTORS_PER_GIB))
    spec_text = _spec_text(base, cases, orders, seeds, capacity_sectors)
    spec = load_sweep_spec(output / "pro-sweep.toml", text=spec_text)

    outcome = context.run_sweep("pro", spec, output / "sweep")
    table = outcome.table
    done = table[table["status"] == "done"]
    report = PaperReport(name="pro", title="")
    report.facts.append(f"{len(table)} run(s): {len(chosen)} array(s) × {len(traces)} trace(s) × DOR/PRO × "
                        f"{len(seeds)} seed(s); {outcome.skipped} already done, {outcome.ran} run now; drives limited "
                        f"to {capacity_gib:g} GiB; {'published request counts' if requests is None else f'{requests:,} requests per trace'}; "
                        f"sweep directory {outcome.directory}")
    if orders["PRO"] != ORDERS["PRO"]:
        report.facts.append(f"the core has no `pro` rebuild order yet: `{orders['PRO']}` stands in for PRO in every "
                            "PRO column below")
    if len(done) < len(table):
        failed = table[table["status"] != "done"]
        report.error = f"{len(failed)} run(s) failed: " + "; ".join(str(e) for e in failed["error"].dropna())
    measured = _measured(done, cases, orders)
    report.tables.append(_table("Table 3: reconstruction time (s)", TABLE3, measured, METRIC_TIME, 1, "s", chosen, traces))
    report.tables.append(_table("Table 4: mean user response time during recovery (ms)", TABLE4, measured,
                                METRIC_RESPONSE, 1, "ms", chosen, traces))
    figure = _draw_fig3(done, outcome.directory, output, orders, traces, paths)
    if figure is not None:
        report.figures.append(ReportFigure(figure, "R(t) in the style of Fig. 3: RAID-5 of 3 disks + spare, "
                                                   "mean response time per 10 s window, DOR vs PRO, over the "
                                                   "trace's I/O intensity; each line ends with its rebuild"))
    return report


def _measured(done: "pd.DataFrame", cases: List[Tuple[str, int, str, Path]],
              orders: Dict[str, str]) -> Dict[Tuple[str, int, str, str], Dict[str, float]]:
    """(layout, disks, trace, DOR|PRO) -> metric -> mean over seeds."""
    result: Dict[Tuple[str, int, str, str], Dict[str, float]] = {}
    for layout, disks, trace, path in cases:
        for name, order in orders.items():
            rows = done[(done["array.layout"] == layout) & (done["array.drives"] == disks)
                        & (done["workload.trace.path"] == str(path)) & (done["rebuild.order"] == order)]
            if len(rows):
                # A run that overloads (the array cannot serve the trace) ends without a rebuild
                # time, and its response time is queueing, not a measurement: shown as such.
                overloaded = bool(rows["overloaded"].astype(bool).any()) if "overloaded" in rows else False
                result[(layout, disks, trace, name)] = {
                    metric: (math.nan if overloaded else float(rows[metric].astype(float).mean()))
                    for metric in (METRIC_TIME, METRIC_RESPONSE) if metric in rows}
                result[(layout, disks, trace, name)]["overloaded"] = float(overloaded)
    return result


def _table(title: str, published: Dict[Tuple[str, int], Dict[str, Tuple[float, float, float]]],
           measured: Dict[Tuple[str, int, str, str], Dict[str, float]], metric: str, digits: int, unit: str,
           chosen: Sequence[Tuple[str, int]], traces: Sequence[str]) -> ReportTable:
    wrong = printed_misprints(published)
    rows: List[List[str]] = []
    for layout, disks in chosen:
        for trace in traces:
            dor, pro, printed = published[(layout, disks)][trace]
            mark = " †" if (layout, disks, trace) in wrong else ""
            ours = {name: measured.get((layout, disks, trace, name), {}) for name in ("DOR", "PRO")}
            ours_dor, ours_pro = ours["DOR"].get(metric), ours["PRO"].get(metric)
            ours_gain = improvement(ours_dor, ours_pro) if ours_dor and ours_pro is not None else None

            def cell(name: str, value: Optional[float]) -> str:
                return "overloaded" if ours[name].get("overloaded") else number_text(value, digits)

            rows.append([_label(layout), str(disks), TRACE_LABELS[trace],
                         number_text(dor, digits), number_text(pro, digits), f"{printed:.1f} %{mark}",
                         number_text(improvement(dor, pro), 1, " %"),
                         cell("DOR", ours_dor), cell("PRO", ours_pro), number_text(ours_gain, 1, " %")])
    notes = ["Improved = (DOR − PRO) / DOR. \"paper, computed\" is that ratio of the paper's printed times; "
             "\"paper, printed\" is the paper's own column."]
    for (layout, disks, trace), computed in sorted(wrong.items()):
        notes.append(f"† {_label(layout)} {disks} disks {TRACE_LABELS[trace]}: printed "
                     f"{published[(layout, disks)][trace][2]:.1f} %, but the printed times give {computed:.1f} % "
                     "(no pair of times within their rounding gives the printed value).")
    if published is TABLE4:
        duplicated = all(published[("raid1", 2)][t][2] == published[("raid5", 5)][t][2] for t in TRACES)
        if duplicated:
            notes.append("The paper's RAID-1 row of Table 4 prints 11.1 / 11.0 / 11.3 %, the RAID-5 5-disk row's "
                         "improvements, evidently copied; its times give 4.4 / 3.7 / 5.3 %. The paper labels this "
                         "table's first row \"DAID5\", a typo for RAID5.")
    notes.append(f"Paper: seed 000 §4.3; raidlab: this reproduction ({unit}, mean over seeds; \"overloaded\": the "
                 "array could not serve the trace and the run ended with its backlog, so there is no figure).")
    columns = ["RAID", "disks", "trace", "paper DOR", "paper PRO", "paper improved, printed",
               "paper improved, computed", "raidlab DOR", "raidlab PRO", "raidlab improved"]
    return ReportTable(title=title, columns=columns, rows=rows, note=" ".join(notes), numeric_from=3)


def _draw_fig3(done: "pd.DataFrame", sweep_dir: Path, output: Path, orders: Dict[str, str],
               traces: Sequence[str], paths: Dict[Tuple[str, int, str], Path]) -> Optional[Path]:
    """Fig. 3's three panels (one per trace): R(t) of DOR and PRO over the I/O intensity."""
    from matplotlib.figure import Figure

    from raidlab.output.plots import complete_windows, merged_bars
    from raidlab.results import Result
    from raidlab.results.store import RUNS_DIR
    from raidlab.experiments.sweep_plots import mean_timeseries, save_png_and_svg

    panels = [t for t in traces if ("raid5", 3, t) in paths]
    if not panels:
        return None
    figure = Figure(figsize=(6.2 * len(panels), 4.2), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    drawn = False
    for ax, trace in zip(axes, panels):
        path = str(paths[("raid5", 3, trace)])
        frames: Dict[str, List["pd.DataFrame"]] = {}
        for name, order in orders.items():
            rows = done[(done["array.layout"] == "raid5") & (done["array.drives"] == 3)
                        & (done["workload.trace.path"] == path) & (done["rebuild.order"] == order)]
            results = [Result.load(sweep_dir / RUNS_DIR / run_id) for run_id in rows["run_id"]]
            # The last window, cut short by the rebuild's end, would draw a dip.
            frames[name] = [complete_windows(r.timeseries, r.summary.get("simulated_seconds")) for r in results]
        longest = max((f for group in frames.values() for f in group), key=len, default=None)
        if longest is None or longest.empty:
            continue
        drawn = True
        bars = ax.twinx()
        lefts, widths, rates = merged_bars(longest["window_start_s"].to_numpy(dtype=float),
                                           longest["window_end_s"].to_numpy(dtype=float),
                                           longest["arrivals"].to_numpy(dtype=float))
        bars.bar(lefts, rates, width=widths, align="edge", color="0.87", edgecolor="0.8", linewidth=0.4)
        bars.set_ylabel("I/O intensity (arrivals/s)")
        bars.set_ylim(0, max(1.0, float(rates.max()) * 2.5))
        ax.set_zorder(bars.get_zorder() + 1)
        ax.patch.set_visible(False)
        for number, (name, group) in enumerate(frames.items()):
            mean = mean_timeseries(group, "mean_response_ms")
            if mean.empty:
                continue
            middle = (mean["window_start_s"].to_numpy(dtype=float) + mean["window_end_s"].to_numpy(dtype=float)) / 2
            ax.plot(middle, mean["mean_response_ms"].to_numpy(dtype=float), color=f"C{number}", linewidth=1.3,
                    label=f"{name} ({orders[name]})")
        ax.set_xlabel("time since the failure (s)")
        ax.set_ylabel("mean response time (ms)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"({'abc'[panels.index(trace)]}) {TRACE_LABELS[trace]}: synthetic {trace}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="upper right")
    if not drawn:
        return None
    figure.suptitle("PRO vs DOR during recovery, RAID-5 of 3 disks + 1 hot spare, 64 KB stripe unit (Fig. 3's setup)")
    return save_png_and_svg(figure, output / "pro_fig3")[0]
