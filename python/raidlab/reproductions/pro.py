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

Two studies of raidlab's own go with it (``--studies``, :data:`STUDIES`; the default is
``tables``, the above): ``load``, PRO's gain against the user load, the trace's arrival rate
scaled around the operating point with the paper's cells placed on the curve by their DOR
rebuild time (a sensitivity study, not a fit); and ``redirection``, DOR and PRO with read
redirection on and off on every array.

Options (``Context.options``): ``requests`` (per trace; default the published counts),
``capacity_gib`` (per drive; default 5), ``arrays`` (a subset of :data:`ARRAYS` as
``"raid5-3"``…), ``traces`` (a subset of the three), ``trace_files`` (trace name -> a real
WebSearch file replayed instead of its look-alike, as ``--trace websearch1=FILE`` gives it:
addresses folded onto the array, the first ``requests`` or the published count of records),
``load_factors`` and ``load_arrays`` (the load study's; default :data:`LOAD_FACTORS`, every
array). ``--seeds N`` runs seeds 1..N (the paper reports one measurement per cell; default 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from raidlab.exceptions import ConfigError
from raidlab.output.report import PaperReport, ReportFigure, ReportTable, number_text

if TYPE_CHECKING:
    import pandas as pd

    from raidlab.reproductions.context import Context

__all__ = ["ARRAYS", "TRACES", "TABLE3", "TABLE4", "STUDIES", "run", "improvement", "printed_misprints",
           "place_by_dor_time"]

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

#: What ``raidlab reproduce pro --studies A,B`` runs: ``tables``, the paper's Tables 3-4 and
#: Fig. 3 (the default); ``load``, PRO's gain against the user load, a sensitivity study with
#: the paper's points placed by their DOR rebuild time; ``redirection``, PRO and DOR with read
#: redirection on and off on every array. The last two are raidlab's studies, not the paper's.
STUDIES: Tuple[str, ...] = ("tables", "load", "redirection")
DEFAULT_STUDIES: Tuple[str, ...] = ("tables",)
#: The load study: the trace's arrival rate multiplied by each factor
#: (``workload.trace.time_scale`` = 1 / factor), 1 being the reproduction's operating point.
LOAD_FACTORS: Tuple[float, ...] = (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5)
LOAD_ARRAYS: Tuple[Tuple[str, int], ...] = ARRAYS
LOAD_TRACE = "websearch1"

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
               seeds: List[int], capacity_sectors: int, *, name: str = "pro",
               grid: Optional[Mapping[str, Sequence[Any]]] = None,
               case_keys: Optional[Mapping[str, Mapping[str, Any]]] = None) -> str:
    """The sweep of ``cases`` × DOR/PRO (× ``grid``'s further axes); ``case_keys[path]``: keys
    set on every case that replays that trace (a user's real file: its fold and prefix)."""
    from raidlab.config import toml_literal

    lines = [f"base = {toml_literal(str(base))}", f"name = {toml_literal(name)}", f"seeds = {toml_literal(seeds)}", "",
             "[set]", f'"drive.capacity_sectors" = {capacity_sectors}', "",
             "[grid]", f'"rebuild.order" = {toml_literal([orders["DOR"], orders["PRO"]])}']
    lines += [f"{toml_literal(key)} = {toml_literal(list(values))}" for key, values in (grid or {}).items()]
    lines.append("")
    for layout, disks, _, path in cases:
        lines += ["[[points]]", f'"array.layout" = {toml_literal(layout)}', f'"array.drives" = {disks}',
                  f'"workload.trace.path" = {toml_literal(str(path))}']
        keys = (case_keys or {}).get(str(path), {})
        lines += [f"{toml_literal(key)} = {toml_literal(value)}" for key, value in keys.items()]
        lines.append("")
    return "\n".join(lines)


def _studies(context: "Context") -> List[str]:
    """The parts ``--studies`` asks for, in :data:`STUDIES` order (default: the tables)."""
    wanted = list(context.studies or DEFAULT_STUDIES)
    unknown = [name for name in wanted if name not in STUDIES]
    if unknown:
        raise ConfigError(f"unknown study {unknown[0]!r} of pro; known: {', '.join(STUDIES)}", key="studies")
    return [name for name in STUDIES if name in wanted]


def _array_names(options: Mapping[str, Any], key: str, default: Sequence[Tuple[str, int]]) -> List[Tuple[str, int]]:
    wanted = options.get(key)
    if wanted is None:
        return list(default)
    known = {f"{layout}-{disks}": (layout, disks) for layout, disks in ARRAYS}
    unknown = [name for name in wanted if name not in known]
    if unknown or not wanted:
        raise ConfigError(f"expected some of {list(known)}, not {list(wanted)}", key=key)
    return [a for a in ARRAYS if f"{a[0]}-{a[1]}" in wanted]


def _given_traces(options: Mapping[str, Any]) -> Dict[str, Path]:
    """The user's real trace files (option ``trace_files``: trace name -> file, as
    ``--trace websearch1=FILE`` gives them), each checked readable."""
    from raidlab.reproductions.reproduce import given_traces

    return given_traces(options, "trace_files", TRACES, lambda name: f"--trace {name}")


def _real_trace_keys(files: Mapping[str, Path], requests: Optional[int]) -> Dict[str, Dict[str, Any]]:
    """Keys of every case that replays a user's real file: its addresses folded onto the
    array (the real traces span tens of GB), its format told from its first lines, and the
    prefix the paper used (Table 2's count, or ``requests``)."""
    return {str(path): {"workload.trace.format": "auto", "workload.trace.fold": "modulo",
                        "workload.trace.max_requests": int(requests or _published_requests(name))}
            for name, path in files.items()}


def _published_requests(trace: str) -> int:
    from raidlab import synth

    return synth.PROFILES[trace].requests


def _case_paths(output: Path, arrays: Sequence[Tuple[str, int]], traces: Sequence[str], capacity_gib: float,
                requests: Optional[int], seed: int, files: Mapping[str, Path],
                context: "Context") -> Dict[Tuple[str, int, str], Path]:
    """(layout, disks, trace) -> the trace file: the user's real file where given, else the
    look-alike (written or reused by :func:`_traces`)."""
    synthetic = [t for t in traces if t not in files]
    paths = _traces(output, arrays, synthetic, capacity_gib, requests, seed, context) if synthetic else {}
    for layout, disks in arrays:
        for trace in traces:
            if trace in files:
                paths[(layout, disks, trace)] = files[trace]
    return paths


def _add_error(report: PaperReport, error: Optional[str]) -> None:
    if error:
        report.error = f"{report.error}; {error}" if report.error else error


def _failed_runs(table: "pd.DataFrame") -> Optional[str]:
    failed = table[table["status"] != "done"]
    if not len(failed):
        return None
    return f"{len(failed)} run(s) failed: " + "; ".join(str(e) for e in failed["error"].dropna())


def run(context: "Context") -> PaperReport:
    """The parts ``--studies`` names (:data:`STUDIES`; default ``tables``, the paper's Tables
    3-4 and Fig. 3), into ``context.output``."""
    from raidlab.reproductions.reproduce import default_experiments_dir

    options = dict(context.options or {})
    studies = _studies(context)
    capacity_gib = float(options.get("capacity_gib", DEFAULT_CAPACITY_GIB))
    requests = options.get("requests")
    chosen = _array_names(options, "arrays", ARRAYS)
    traces = [t for t in TRACES if options.get("traces") is None or t in options["traces"]]
    files = _given_traces(options)
    seeds = list(range(1, 1 + (context.seeds or 1)))
    # Absolute: the sweep resolves a relative trace path against the base configuration's folder.
    output = Path(context.output).resolve()
    experiments = Path(context.experiments_dir) if context.experiments_dir else default_experiments_dir()
    base = (experiments / CONFIG).resolve()
    setup = _Setup(base=base, output=output, seeds=seeds, capacity_gib=capacity_gib, requests=requests,
                   files=files, orders=_order_names(), case_keys=_real_trace_keys(files, requests))

    report = PaperReport(name="pro", title="")
    if "tables" in studies:
        _run_tables(context, setup, chosen, traces, report)
    elif setup.orders["PRO"] != ORDERS["PRO"]:
        report.facts.append(f"the core has no `pro` rebuild order yet: `{setup.orders['PRO']}` stands in for PRO")
    if files:
        report.facts.append("real trace files replayed instead of the look-alikes (addresses folded onto the array, "
                            "the paper's prefix of each): " + "; ".join(f"{name}: {path}" for name, path in files.items()))
    if "load" in studies:
        factors = _load_factors(options)
        load_arrays = _array_names(options, "load_arrays", LOAD_ARRAYS)
        load_trace = LOAD_TRACE if LOAD_TRACE in traces else traces[0]
        _run_load(context, setup, load_arrays, load_trace, factors, report)
    if "redirection" in studies:
        _run_redirection(context, setup, chosen, traces, report)
    return report


@dataclass
class _Setup:
    """What every part of the reproduction shares."""

    base: Path
    output: Path
    seeds: List[int]
    capacity_gib: float
    requests: Optional[int]
    files: Mapping[str, Path]
    orders: Dict[str, str]
    case_keys: Dict[str, Dict[str, Any]]

    @property
    def capacity_sectors(self) -> int:
        return int(round(self.capacity_gib * SECTORS_PER_GIB))

    def paths(self, arrays: Sequence[Tuple[str, int]], traces: Sequence[str],
              context: "Context") -> Dict[Tuple[str, int, str], Path]:
        return _case_paths(self.output, arrays, traces, self.capacity_gib, self.requests, self.seeds[0], self.files,
                           context)


def _run_tables(context: "Context", setup: _Setup, chosen: Sequence[Tuple[str, int]], traces: Sequence[str],
                report: PaperReport) -> None:
    """The paper's Tables 3-4 and Fig. 3 (the default part)."""
    from raidlab.experiments.sweep import load_sweep_spec

    output, seeds, orders, requests = setup.output, setup.seeds, setup.orders, setup.requests
    paths = setup.paths(chosen, traces, context)
    cases = [(layout, disks, trace, paths[(layout, disks, trace)]) for layout, disks in chosen for trace in traces]
    spec_text = _spec_text(setup.base, cases, orders, seeds, setup.capacity_sectors, case_keys=setup.case_keys)
    spec = load_sweep_spec(output / "pro-sweep.toml", text=spec_text)

    outcome = context.run_sweep("pro", spec, output / "sweep")
    table = outcome.table
    done = table[table["status"] == "done"]
    report.facts.append(f"{len(table)} run(s): {len(chosen)} array(s) × {len(traces)} trace(s) × DOR/PRO × "
                        f"{len(seeds)} seed(s); {outcome.skipped} already done, {outcome.ran} run now; drives limited "
                        f"to {setup.capacity_gib:g} GiB; {'published request counts' if requests is None else f'{requests:,} requests per trace'}; "
                        f"sweep directory {outcome.directory}")
    if orders["PRO"] != ORDERS["PRO"]:
        report.facts.append(f"the core has no `pro` rebuild order yet: `{orders['PRO']}` stands in for PRO in every "
                            "PRO column below")
    _add_error(report, _failed_runs(table))
    measured = _measured(done, cases, orders)
    report.tables.append(_table("Table 3: reconstruction time (s)", TABLE3, measured, METRIC_TIME, 1, "s", chosen, traces))
    report.tables.append(_table("Table 4: mean user response time during recovery (ms)", TABLE4, measured,
                                METRIC_RESPONSE, 1, "ms", chosen, traces))
    figure = _draw_fig3(done, outcome.directory, output, orders, traces, paths)
    if figure is not None:
        report.figures.append(ReportFigure(figure, "R(t) in the style of Fig. 3: RAID-5 of 3 disks + spare, "
                                                   "mean response time per 10 s window, DOR vs PRO, over the "
                                                   "trace's I/O intensity; each line ends with its rebuild"))


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


# ---------------------------------------------------------------------------------------------
# Study "load": PRO's gain against the user load (a sensitivity study, not a fit)
# ---------------------------------------------------------------------------------------------


def _load_factors(options: Mapping[str, Any]) -> List[float]:
    values = options.get("load_factors", LOAD_FACTORS)
    try:
        factors = sorted({float(v) for v in values})
    except (TypeError, ValueError):
        raise ConfigError(f"expected positive numbers, not {values!r}", key="load_factors") from None
    if not factors or any(not (math.isfinite(f) and f > 0) for f in factors):
        raise ConfigError(f"expected positive numbers, not {values!r}", key="load_factors")
    return factors


def _trace_facts(path: Path, keys: Mapping[str, Any]) -> Tuple[int, float]:
    """(requests, duration in s at the trace's own rate) of the records a run replays."""
    import json

    from raidlab import _core
    from raidlab.config import to_toml

    trace = {"path": str(path), "format": keys.get("workload.trace.format", "spc")}
    if "workload.trace.max_requests" in keys:
        trace["max_requests"] = keys["workload.trace.max_requests"]
    stats = json.loads(_core.trace_info(to_toml(trace), str(Path.cwd())))
    return int(stats["requests"]), float(stats["duration_s"])


def _select(done: "pd.DataFrame", layout: str, disks: int, path: Path, order: str,
            where: Mapping[str, Any]) -> "pd.DataFrame":
    import numpy as np

    rows = done[(done["array.layout"] == layout) & (done["array.drives"] == disks)
                & (done["workload.trace.path"] == str(path)) & (done["rebuild.order"] == order)]
    for key, value in where.items():
        if isinstance(value, float):
            rows = rows[np.isclose(rows[key].astype(float), value, rtol=1e-9, atol=0.0)]
        else:
            rows = rows[rows[key] == value]
    return rows


def _cell(rows: "pd.DataFrame") -> Dict[str, float]:
    """Mean rebuild time and response over seeds; NaN for an overloaded run (no figure)."""
    if not len(rows):
        return {METRIC_TIME: math.nan, METRIC_RESPONSE: math.nan, "overloaded": 0.0}
    overloaded = bool(rows["overloaded"].astype(bool).any()) if "overloaded" in rows else False
    cell = {metric: (math.nan if overloaded or metric not in rows else float(rows[metric].astype(float).mean()))
            for metric in (METRIC_TIME, METRIC_RESPONSE)}
    cell["overloaded"] = float(overloaded)
    return cell


def place_by_dor_time(points: Sequence[Mapping[str, float]], dor_time: float) -> Optional[Dict[str, float]]:
    """The load at which raidlab's DOR rebuild takes ``dor_time``, and PRO's gains there, by
    linear interpolation between the two measured loads whose DOR times bracket it
    (``points``: dicts of ``factor``, ``dor`` and the figures to interpolate, e.g.
    ``gain_time``, ``gain_response``, sorted by factor; the first bracketing pair wins).
    ``None`` when no pair brackets it."""
    for low, high in zip(points, points[1:]):
        a, b = low["dor"], high["dor"]
        if not (math.isfinite(a) and math.isfinite(b)) or a == b:
            continue
        if min(a, b) <= dor_time <= max(a, b):
            w = (dor_time - a) / (b - a)
            return {key: low[key] + w * (high[key] - low[key]) for key in low if key != "dor" and key in high}
    return None


def _run_load(context: "Context", setup: _Setup, arrays: Sequence[Tuple[str, int]], trace: str,
              factors: Sequence[float], report: PaperReport) -> None:
    import pandas as pd

    from raidlab.experiments.sweep import load_sweep_spec

    paths = setup.paths(arrays, [trace], context)
    cases = [(layout, disks, trace, paths[(layout, disks, trace)]) for layout, disks in arrays]
    scales = [1.0 / f for f in factors]
    spec = load_sweep_spec(setup.output / "pro-load.toml", text=_spec_text(
        setup.base, cases, setup.orders, setup.seeds, setup.capacity_sectors, name="pro-load",
        grid={"workload.trace.time_scale": scales}, case_keys=setup.case_keys))
    outcome = context.run_sweep("pro load", spec, setup.output / "load")
    table = outcome.table
    _add_error(report, _failed_runs(table))
    done = table[table["status"] == "done"]

    facts = {path: _trace_facts(path, setup.case_keys.get(str(path), {})) for path in set(paths.values())}
    records: List[Dict[str, Any]] = []
    for layout, disks, _, path in cases:
        requests, span = facts[path]
        for factor, scale in zip(factors, scales):
            where = {"workload.trace.time_scale": scale}
            dor = _cell(_select(done, layout, disks, path, setup.orders["DOR"], where))
            pro_ = _cell(_select(done, layout, disks, path, setup.orders["PRO"], where))
            # The run ends with the rebuild; a trace shorter than DOR's rebuild leaves its end
            # unloaded, and the point no longer measures that load.
            short = bool(math.isfinite(dor[METRIC_TIME]) and dor[METRIC_TIME] > span * scale)
            records.append({
                "layout": layout, "drives": disks, "trace": trace, "load_factor": factor,
                "rate_per_s": factor * (requests - 1) / span if span > 0 else math.nan,
                "dor_rebuild_s": dor[METRIC_TIME], "pro_rebuild_s": pro_[METRIC_TIME],
                "rebuild_gain_pct": improvement(dor[METRIC_TIME], pro_[METRIC_TIME]),
                "dor_response_ms": dor[METRIC_RESPONSE], "pro_response_ms": pro_[METRIC_RESPONSE],
                "response_gain_pct": improvement(dor[METRIC_RESPONSE], pro_[METRIC_RESPONSE]),
                "overloaded": bool(dor["overloaded"] or pro_["overloaded"]), "trace_ended_first": short})
    frame = pd.DataFrame(records)
    frame.to_csv(setup.output / "load.csv", index=False)

    placed: List[Dict[str, Any]] = []
    for layout, disks in arrays:
        rows = frame[(frame["layout"] == layout) & (frame["drives"] == disks)]
        usable = [{"factor": r.load_factor, "dor": r.dor_rebuild_s, "gain_time": r.rebuild_gain_pct,
                   "gain_response": r.response_gain_pct, "dor_response": r.dor_response_ms}
                  for r in rows.itertuples()
                  if not r.overloaded and not r.trace_ended_first and math.isfinite(r.dor_rebuild_s)]
        for paper_trace in TRACES:
            dor_p, pro_p, _ = TABLE3[(layout, disks)][paper_trace]
            dor_r, pro_r, _ = TABLE4[(layout, disks)][paper_trace]
            at = place_by_dor_time(usable, dor_p)
            placed.append({"layout": layout, "drives": disks, "paper_trace": paper_trace, "paper_dor_s": dor_p,
                           "paper_rebuild_gain_pct": improvement(dor_p, pro_p),
                           "paper_response_gain_pct": improvement(dor_r, pro_r),
                           "load_factor": at["factor"] if at else math.nan,
                           "rebuild_gain_pct": at["gain_time"] if at else math.nan,
                           "response_gain_pct": at["gain_response"] if at else math.nan,
                           "paper_dor_response_ms": dor_r,
                           "dor_response_ms": at["dor_response"] if at else math.nan,
                           "measured_dor_s": (min(p["dor"] for p in usable), max(p["dor"] for p in usable))
                           if usable else (math.nan, math.nan)})
    pd.DataFrame([{k: v for k, v in p.items() if k != "measured_dor_s"} for p in placed]).to_csv(
        setup.output / "load_paper_points.csv", index=False)

    report.facts.append(f"load study (sensitivity study, not a fit): {len(table)} run(s), {len(arrays)} array(s) × "
                        f"{len(factors)} load(s) × DOR/PRO × {len(setup.seeds)} seed(s) on {TRACE_LABELS[trace]}; "
                        f"{outcome.skipped} already done, {outcome.ran} run now; sweep directory {outcome.directory}")
    report.tables.append(_load_table(frame, trace))
    report.tables.append(_placed_table(placed, trace))
    figure = _draw_load(frame, placed, arrays, trace, setup.output)
    if figure is not None:
        report.figures.append(ReportFigure(figure, "PRO's gain over DOR against the user load, a sensitivity study, "
                                                   "not a fit: the trace's arrival rate scaled around the "
                                                   "reproduction's operating point (1×); the paper's points placed "
                                                   "at the load where raidlab's DOR rebuild takes as long as the "
                                                   "paper's"))


def _load_table(frame: "pd.DataFrame", trace: str) -> ReportTable:
    rows = []
    for r in frame.itertuples():
        remark = "overloaded" if r.overloaded else ("trace ended before DOR's rebuild" if r.trace_ended_first else "")
        rows.append([_label(r.layout), str(r.drives), f"{r.load_factor:g}×", number_text(r.rate_per_s, 0),
                     number_text(r.dor_rebuild_s, 1), number_text(r.pro_rebuild_s, 1),
                     number_text(r.rebuild_gain_pct, 1, " %"), number_text(r.dor_response_ms, 2),
                     number_text(r.pro_response_ms, 2), number_text(r.response_gain_pct, 1, " %"), remark])
    note = (f"Sensitivity study, not a fit. The {TRACE_LABELS[trace]} trace replayed with its arrival rate multiplied "
            "by the load factor (workload.trace.time_scale = 1 / factor; 1× is the reproduction's operating point), "
            "everything else as in Tables 3-4. Gain = (DOR − PRO) / DOR. \"overloaded\": the array could not serve "
            "the trace (no figure); \"trace ended before DOR's rebuild\": the rest of the rebuild ran unloaded, so "
            "the point does not measure that load and is not used to place the paper's points.")
    return ReportTable("PRO's gain against load (sensitivity study, not a fit)", [
        "RAID", "disks", "load", "rate (req/s)", "DOR (s)", "PRO (s)", "rebuild gain", "DOR R (ms)", "PRO R (ms)",
        "response gain", "remark"], rows, note=note, numeric_from=2)


def _placed_table(placed: Sequence[Mapping[str, Any]], trace: str) -> ReportTable:
    rows = []
    for p in placed:
        low, high = p["measured_dor_s"]
        if math.isfinite(p["load_factor"]):
            where = f"{p['load_factor']:.2f}×"
        elif not math.isfinite(low):
            where = "no usable load"
        elif p["paper_dor_s"] < low:
            where = f"below the range (DOR ≥ {low:,.0f} s)"
        else:
            where = f"beyond the range (DOR ≤ {high:,.0f} s)"
        rows.append([_label(p["layout"]), str(p["drives"]), TRACE_LABELS[p["paper_trace"]],
                     number_text(p["paper_dor_s"], 1), where,
                     number_text(p["paper_rebuild_gain_pct"], 1, " %"), number_text(p["rebuild_gain_pct"], 1, " %"),
                     number_text(p["paper_response_gain_pct"], 1, " %"), number_text(p["response_gain_pct"], 1, " %"),
                     number_text(p["paper_dor_response_ms"], 1), number_text(p["dor_response_ms"], 1)])
    note = (f"Sensitivity study, not a fit. Each of the paper's cells is placed on raidlab's curve of its array "
            f"({TRACE_LABELS[trace]} at scaled rates) by its DOR rebuild time: the load at which raidlab's DOR takes "
            "as long as the paper's (linear interpolation between the two measured loads that bracket it), and "
            "raidlab's gains there beside the paper's (computed from the paper's printed times); the last two "
            "columns are DOR's mean response during recovery, the paper's and raidlab's at that load. Nothing was "
            "tuned: the placement only asks what raidlab predicts at a load that slows its DOR as much as the paper's.")
    return ReportTable("The paper's points placed by their DOR rebuild time (sensitivity study, not a fit)", [
        "RAID", "disks", "paper trace", "paper DOR (s)", "raidlab load with that DOR time", "paper rebuild gain",
        "raidlab rebuild gain", "paper response gain", "raidlab response gain", "paper DOR R (ms)",
        "raidlab DOR R (ms)"], rows, note=note, numeric_from=3)


def _draw_load(frame: "pd.DataFrame", placed: Sequence[Mapping[str, Any]], arrays: Sequence[Tuple[str, int]],
               trace: str, output: Path) -> Optional[Path]:
    from matplotlib.figure import Figure

    from raidlab.experiments.sweep_plots import save_png_and_svg

    if frame.empty:
        return None
    columns = min(3, len(arrays))
    lines = (len(arrays) + columns - 1) // columns
    figure = Figure(figsize=(4.6 * columns, 3.7 * lines), layout="constrained")
    axes = figure.subplots(lines, columns, squeeze=False).ravel()
    for ax in axes[len(arrays):]:
        ax.set_visible(False)
    for ax, (layout, disks) in zip(axes, arrays):
        rows = frame[(frame["layout"] == layout) & (frame["drives"] == disks)].sort_values("load_factor")
        good = rows[~rows["overloaded"] & ~rows["trace_ended_first"]]
        x = good["load_factor"].to_numpy(dtype=float)
        ax.plot(x, good["rebuild_gain_pct"].to_numpy(dtype=float), "-o", color="C0", markersize=3,
                label="raidlab: rebuild time")
        ax.plot(x, good["response_gain_pct"].to_numpy(dtype=float), "--o", color="C1", markersize=3,
                label="raidlab: response time")
        for number, p in enumerate(q for q in placed if q["layout"] == layout and q["drives"] == disks):
            if not math.isfinite(p["load_factor"]):
                continue
            label = TRACE_LABELS[p["paper_trace"]]
            ax.plot([p["load_factor"]], [p["paper_rebuild_gain_pct"]], "x", color="C0", markersize=8,
                    label="paper: rebuild time" if number == 0 else None)
            ax.plot([p["load_factor"]], [p["paper_response_gain_pct"]], "+", color="C1", markersize=9,
                    label="paper: response time" if number == 0 else None)
            ax.annotate(label, (p["load_factor"], p["paper_rebuild_gain_pct"]), textcoords="offset points",
                        xytext=(4, 4), fontsize="x-small", color="C0")
        for r in rows[rows["overloaded"] | rows["trace_ended_first"]].itertuples():
            ax.axvspan(r.load_factor - 0.04, r.load_factor + 0.04, color="0.85", linewidth=0)
        ax.axvline(1.0, color="0.6", linewidth=0.8, linestyle=":")
        ax.axhline(0.0, color="0.5", linewidth=0.8)
        ax.set_title(f"{_label(layout)}, {disks} disks + spare", fontsize="medium")
        ax.set_xlabel(f"load: {TRACE_LABELS[trace]}'s arrival rate × factor")
        ax.set_ylabel("PRO's gain over DOR (%)")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="x-small")
    figure.suptitle("PRO's gain against load: a sensitivity study, not a fit (× paper's rebuild gain, + paper's "
                    "response gain, placed by DOR rebuild time; grey: overloaded or trace too short)",
                    fontsize="medium")
    return save_png_and_svg(figure, output / "pro_load")[0]


# ---------------------------------------------------------------------------------------------
# Study "redirection": PRO with read redirection on and off, per layout
# ---------------------------------------------------------------------------------------------


def _span(values: "pd.Series") -> str:
    clean = values.astype(float).dropna()
    return f"{clean.min():.1f} … {clean.max():.1f} %" if len(clean) else "—"


def _run_redirection(context: "Context", setup: _Setup, arrays: Sequence[Tuple[str, int]], traces: Sequence[str],
                     report: PaperReport) -> None:
    import pandas as pd

    from raidlab.experiments.sweep import load_sweep_spec

    paths = setup.paths(arrays, traces, context)
    cases = [(layout, disks, trace, paths[(layout, disks, trace)]) for layout, disks in arrays for trace in traces]
    spec = load_sweep_spec(setup.output / "pro-redirection.toml", text=_spec_text(
        setup.base, cases, setup.orders, setup.seeds, setup.capacity_sectors, name="pro-redirection",
        grid={"rebuild.redirect_reads": [True, False]}, case_keys=setup.case_keys))
    outcome = context.run_sweep("pro redirection", spec, setup.output / "redirection")
    table = outcome.table
    _add_error(report, _failed_runs(table))
    done = table[table["status"] == "done"]
    records = []
    for layout, disks, trace, path in cases:
        record: Dict[str, Any] = {"layout": layout, "drives": disks, "trace": trace}
        for redirect, name in ((True, "on"), (False, "off")):
            where = {"rebuild.redirect_reads": redirect}
            dor = _cell(_select(done, layout, disks, path, setup.orders["DOR"], where))
            pro_ = _cell(_select(done, layout, disks, path, setup.orders["PRO"], where))
            record.update({f"dor_rebuild_s_{name}": dor[METRIC_TIME], f"pro_rebuild_s_{name}": pro_[METRIC_TIME],
                           f"rebuild_gain_pct_{name}": improvement(dor[METRIC_TIME], pro_[METRIC_TIME]),
                           f"dor_response_ms_{name}": dor[METRIC_RESPONSE],
                           f"pro_response_ms_{name}": pro_[METRIC_RESPONSE],
                           f"response_gain_pct_{name}": improvement(dor[METRIC_RESPONSE], pro_[METRIC_RESPONSE])})
        records.append(record)
    frame = pd.DataFrame(records)
    frame.to_csv(setup.output / "redirection.csv", index=False)
    report.facts.append(f"redirection study: {len(table)} run(s), {len(arrays)} array(s) × {len(traces)} trace(s) × "
                        f"DOR/PRO × read redirection on/off × {len(setup.seeds)} seed(s); {outcome.skipped} already "
                        f"done, {outcome.ran} run now; sweep directory {outcome.directory}")
    rows = []
    for r in frame.itertuples():
        rows.append([_label(r.layout), str(r.drives), TRACE_LABELS[r.trace],
                     number_text(r.dor_rebuild_s_on, 1), number_text(r.pro_rebuild_s_on, 1),
                     number_text(r.rebuild_gain_pct_on, 1, " %"),
                     number_text(r.dor_rebuild_s_off, 1), number_text(r.pro_rebuild_s_off, 1),
                     number_text(r.rebuild_gain_pct_off, 1, " %"),
                     number_text(r.response_gain_pct_on, 1, " %"), number_text(r.response_gain_pct_off, 1, " %")])
    report.tables.append(ReportTable("PRO with read redirection on and off, per array", [
        "RAID", "disks", "trace", "DOR (s), on", "PRO (s), on", "rebuild gain, on", "DOR (s), off", "PRO (s), off",
        "rebuild gain, off", "response gain, on", "response gain, off"], rows,
        note="raidlab's study, not the paper's (the paper does not say whether RAIDframe redirected reads). "
             "\"on\": reads of rebuilt units go to the spare (rebuild.redirect_reads = true, the reproduction's "
             "setting); \"off\": they are served by reconstruction from the survivors until the rebuild ends. "
             "Gain = (DOR − PRO) / DOR; a negative gain is PRO slower than DOR.", numeric_from=3))
    summary = []
    for layout in dict.fromkeys(frame["layout"]):
        rows_of = frame[frame["layout"] == layout]
        summary.append([_label(layout), f"{len(rows_of)}",
                        *(_span(rows_of[c]) for c in ("rebuild_gain_pct_on", "rebuild_gain_pct_off",
                                                      "response_gain_pct_on", "response_gain_pct_off"))])
    report.tables.append(ReportTable("PRO's gains with read redirection on and off, per layout (range over arrays and "
                                     "traces)", ["RAID", "cells", "rebuild gain, on", "rebuild gain, off",
                                                 "response gain, on", "response gain, off"], summary,
                                     numeric_from=1))
