"""The ``raidlab`` commands for experiments at scale (registered by :mod:`raidlab.cli.commands`)::

    raidlab sweep SPEC [-o DIR] [--jobs J | --scheduler tcp://HOST:PORT] [--set key=value ...] [--quiet]
    raidlab summary RUN_OR_SWEEP_DIR [--json]
    raidlab compare RUN_OR_SWEEP_DIR ... [-o DIR] [--metric NAME ...] [--class C] [--json]
    raidlab list [FAMILY] [--json]
    raidlab docs catalogue [-o FILE]
    raidlab reproduce NAME | --all [-o DIR] ...
    raidlab plot SWEEP_DIR [--x KEY --metric NAME ... [--series KEY]]

Like the rest of the command line, nothing slow is imported at the top of this module.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from raidlab.cli.console import rich_console, write_or_print

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

__all__ = ["add_sweep_arguments", "add_summary_arguments", "add_compare_arguments", "add_list_arguments",
           "add_docs_commands", "command_reproduce", "command_plot_sweep"]

#: Columns ``raidlab summary`` shows for a sweep after its axes (those the table has).
SUMMARY_COLUMNS = (
    "response_ms.all.mean",
    "response_ms.all.p99",
    "response_ms.read.mean",
    "rebuild_time_s",
    "drives.mean_utilization",
)


def _print(console: "Console", text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


# ---------------------------------------------------------------------------------------------
# raidlab sweep
# ---------------------------------------------------------------------------------------------


class SweepProgressBar:
    """The progress hook of a sweep: a rich bar with the runs done, failed and left, and the
    time remaining (from the runs finished so far)."""

    def __init__(self, console: "Console", enabled: bool = True, label: str = "sweep") -> None:
        self.console = console
        self.enabled = enabled
        self.label = label
        self.progress: Any = None
        self.task: Any = None

    def __call__(self, event: str, counts: Dict[str, int]) -> None:
        if not self.enabled:
            return
        if event == "start":
            if counts["skipped"]:
                _print(self.console, f"{counts['skipped']} of {counts['total']} runs already done; "
                                     f"running {counts['to_run']}")
            if not counts["to_run"]:
                return
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.progress = Progress(
                TextColumn(self.label),
                BarColumn(),
                TextColumn("{task.fields[done]} done · {task.fields[failed]} failed · {task.fields[remaining]} left"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=rich_console(self.console),
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=counts["to_run"], done=0, failed=0,
                                               remaining=counts["to_run"])
        elif event == "run" and self.progress is not None:
            self.progress.update(self.task, completed=counts["done"] + counts["failed"], done=counts["done"],
                                 failed=counts["failed"], remaining=counts["remaining"])
        elif event == "end":
            self.close()

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def _command_sweep(args: argparse.Namespace, out: "Console", err: "Console") -> int:
    from raidlab.experiments.sweep import run_sweep

    bar = SweepProgressBar(err, enabled=not args.quiet, label=f"sweep {Path(args.spec).stem}")
    try:
        outcome = run_sweep(args.spec, args.output, jobs=args.jobs, scheduler=args.scheduler, extra=args.set,
                            command_line=["raidlab", *args.argv], progress=bar)
    finally:
        bar.close()
    if args.quiet:
        _print(out, str(outcome.directory))
        return 1 if outcome.failed else 0
    total = len(outcome.plan.tasks)
    _print(out, f"{outcome.directory}: {total} run(s) for {len(outcome.plan.rows)} row(s); {outcome.ran} ran, "
                f"{outcome.skipped} already done, {outcome.failed} failed ({outcome.executor}, "
                f"{outcome.wall_s:.1f} s)")
    _print_sweep_table(out, outcome.table, outcome.plan.axis_keys, limit=40)
    failures = outcome.table[outcome.table["status"] == "failed"].drop_duplicates("run_id")
    for _, row in failures.iterrows():
        _print(err, f"failed: run {row['run_id']} (case {row['case']}, seed {row['seed']}): "
                    f"{row['error_type']}: {row['error']}")
    for path in outcome.plots:
        _print(out, f"wrote {path}")
    _print(out, f"wrote {outcome.summary_path}")
    return 1 if outcome.failed else 0


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


def _print_sweep_table(console: "Console", table: "pd.DataFrame", axes: List[str], limit: Optional[int] = None) -> None:
    from rich.table import Table

    columns = ["case", *axes, "seed", "status", *(c for c in SUMMARY_COLUMNS if c in table.columns)]
    shown = Table(title="summary.parquet (raidlab summary DIR --json for every column)", title_justify="left")
    for column in columns:
        shown.add_column(column, justify="right" if column not in ("status",) else "left")
    rows = table if limit is None else table.head(limit)
    for _, row in rows.iterrows():
        shown.add_row(*(_cell(row[c]) for c in columns))
    console.print(shown)
    if limit is not None and len(table) > limit:
        _print(console, f"… {len(table) - limit} more row(s)")


# ---------------------------------------------------------------------------------------------
# raidlab summary
# ---------------------------------------------------------------------------------------------


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _json_value(value.item())
    return value


def _command_summary(args: argparse.Namespace, out: "Console", err: "Console") -> int:
    from raidlab.results import store
    from raidlab.exceptions import RaidlabIOError

    path = Path(args.directory)
    if store.is_sweep_dir(path):
        table = store.read_summary(path)
        if args.json:
            records = [{column: _json_value(value) for column, value in row.items()}
                       for row in table.to_dict(orient="records")]
            out.print_json(data=records)
            return 0
        manifest = store.read_sweep_manifest(path)
        axes = [key for axis in manifest.get("axes", []) for key in axis.get("keys", [])]
        _print(out, f"sweep {manifest.get('name')}: {len(table)} row(s), "
                    + ", ".join(f"{count} {status}" for status, count in table["status"].value_counts().items()))
        _print_sweep_table(out, table, list(dict.fromkeys(axes)))
        return 0
    if store.is_run_dir(path):
        from raidlab.cli.summary import print_summary
        from raidlab.results import Result

        result = Result.load(path)
        if args.json:
            out.print_json(data=result.summary)
        else:
            print_summary(out, result, path)
        return 0
    raise RaidlabIOError("neither a run directory (summary.json) nor a sweep directory (sweep.json)", file=str(path))


# ---------------------------------------------------------------------------------------------
# raidlab compare
# ---------------------------------------------------------------------------------------------


def _command_compare(args: argparse.Namespace, out: "Console", err: "Console") -> int:
    from rich.table import Table

    from raidlab.experiments.compare import (collect_runs, compare_groups, delta_text, group_runs, left_out_text, overlay_figures,
                                 runs_left_out)
    from raidlab.exceptions import ConfigError

    groups = group_runs(collect_runs(args.runs))
    left_out = runs_left_out(args.runs)  # failed or unfinished runs of the sweeps: said, not dropped silently
    if left_out:
        _print(err, "warning: " + left_out_text(left_out))
    if len(groups) < 2:
        raise ConfigError("compare needs runs of at least two configurations (runs differing only in the seed are "
                          "replicates of one)", key="runs")
    table = compare_groups(groups, args.metric or None)
    if args.metric:
        known = set().union(*(run.metrics for group in groups for run in group.runs))
        unknown = [metric for metric in args.metric if metric not in known]
        if unknown:
            raise ConfigError(f"no run has the metric {unknown[0]!r}", key="metric")
    digest = hashlib.sha256("\0".join(str(Path(p).resolve()) for p in args.runs).encode()).hexdigest()[:8]
    output = Path(args.output) if args.output else Path("runs") / f"compare-{digest}"
    figures = overlay_figures(groups, output, args.response_class)
    if args.json:
        out.print_json(data={
            "groups": [{"label": g.label, "runs": [str(run.path) for run in g.runs], "seeds": g.seeds} for g in groups],
            "comparison": [{k: _json_value(v) for k, v in row.items()} for row in table.to_dict(orient="records")],
            "figures": [str(path) for path in figures],
            "left_out": [run.as_json() for run in left_out],
        })
        return 0
    for number, group in enumerate(groups):
        role = "reference" if number == 0 else f"group {number}"
        _print(out, f"{role}: {group.label} — {len(group.runs)} run(s): "
                    + ", ".join(str(run.path) for run in group.runs[:4]) + (" …" if len(group.runs) > 4 else ""))
    shown = Table(title=f"Differences from the reference (95 % confidence interval)", title_justify="left")
    for heading in ("metric", "group", "runs", "mean", "Δ", "95 % interval of Δ", "Δ %", "method"):
        shown.add_column(heading, justify="left" if heading in ("metric", "group", "method") else "right")
    for _, row in table.iterrows():
        reference = row["method"] == "reference"
        interval = "—" if reference or not math.isfinite(row["ci_low"]) else f"[{row['ci_low']:.4g}, {row['ci_high']:.4g}]"
        shown.add_row(row["metric"], row["group"], str(row["runs"]), _cell(row["mean"]),
                      delta_text(row), interval,
                      "—" if reference or not math.isfinite(row["relative"]) else f"{row['relative'] * 100:+.1f} %",
                      "" if reference else str(row["method"]))
    out.print(shown)
    if (table["method"] == "none").any():
        _print(err, "no interval where a group has a single run: give replicates (runs with other seeds)")
    for path in figures:
        _print(out, f"wrote {path}")
    return 0


# ---------------------------------------------------------------------------------------------
# raidlab list, raidlab docs catalogue
# ---------------------------------------------------------------------------------------------


def _command_list(args: argparse.Namespace, out: "Console", err: "Console") -> int:
    from raidlab.catalogue import catalogue, catalogue_json, family, print_catalogue

    families = [family(args.family)] if args.family else catalogue()
    if args.json:
        out.print_json(data=catalogue_json(families))
    else:
        print_catalogue(out, families)
    return 0


def _command_docs_catalogue(args: argparse.Namespace, out: "Console", err: "Console") -> int:
    from raidlab.catalogue import render_catalogue

    write_or_print(render_catalogue(), args.output, out)
    return 0


# ---------------------------------------------------------------------------------------------
# raidlab reproduce (the registry), raidlab plot SWEEP_DIR
# ---------------------------------------------------------------------------------------------


def command_reproduce(args: argparse.Namespace, out: "Console", err: "Console") -> int:
    """``raidlab reproduce NAME``: a config-folder reproduction as before (its own
    report.md), a module one into its directory with report.md and report.html;
    ``raidlab reproduce --all``: every one, with the combined report."""
    from raidlab.exceptions import ConfigError
    from raidlab import reproductions

    if args.all and args.paper:
        raise ConfigError("name one paper or give --all, not both", key="paper")
    if not args.all and not args.paper:
        raise ConfigError(f"name a paper ({', '.join(reproductions.names())}) or give --all", key="paper")
    # Options that only some reproductions take: refused for the others rather than ignored.
    options: Dict[str, Dict[str, Any]] = {}
    traces = getattr(args, "trace", None) or []
    if isinstance(traces, str):
        traces = [traces]
    if traces:
        if args.paper and args.paper not in ("pro", "vdf", "swo"):
            raise ConfigError(f"only pro, vdf and swo take a trace, not {args.paper}", key="--trace")
        options.update(_reproduce_traces(traces, args.paper))
    if args.paper:
        reproduction = reproductions.entry(args.paper)
        if reproduction.studies is not None:
            return _command_reproduce(args, out, err)
    from raidlab.reproductions.reproduce import command_line_text

    studies = [name.strip() for name in args.studies.split(",") if name.strip()] if args.studies else None
    output = Path(args.output) if args.output else Path("runs") / f"reproduce-{args.paper or 'all'}"
    progress = _StageProgress(err)
    started = time.monotonic()
    common = dict(seeds=args.seeds, jobs=args.jobs, extra=tuple(args.set),
                  experiments_dir=Path(args.experiments) if args.experiments else None,
                  diskspecs_dir=Path(args.diskspecs) if args.diskspecs else None,
                  command_line=command_line_text(args.argv), progress=progress)
    try:
        if args.all:
            contexts: Dict[str, Dict[str, Any]] = {name: {"studies": studies} for name in reproductions.names()} \
                if studies else {}
            for name, extra in options.items():
                contexts.setdefault(name, {})["options"] = extra
            done = reproductions.reproduce_all(output, contexts=contexts or None, **common)
            files, failed = done["files"], done["failed"]
        else:
            from raidlab.output.report import write_report

            report = reproductions.run_reproduction(
                reproduction, reproductions.Context(output=output, studies=studies,
                                                    options=options.get(reproduction.name, {}), **common))
            files, failed = write_report([report], output, title=f"raidlab reproduction: {reproduction.title}"), []
    finally:
        progress.close()
    for name in failed:
        _print(err, f"warning: {name} was not run (its error is in the report)")
    _print(out, f"wrote {', '.join(str(path) for path in files)} in {time.monotonic() - started:.1f} s")
    return 0


#: The traces ``reproduce swo --trace NAME=FILE`` replaces with a real file.
SWO_TRACE_NAMES = ("financial1", "financial2")
#: The traces ``reproduce pro --trace NAME=FILE`` replaces with a real file.
PRO_TRACE_NAMES = ("websearch1", "websearch2", "websearch3")


def _reproduce_traces(traces: List[str], paper: Optional[str]) -> Dict[str, Dict[str, Any]]:
    """The ``--trace`` values as each reproduction's options: ``FILE`` for vdf (one),
    ``websearch1=FILE`` … ``websearch3=FILE`` for pro and ``financial1=FILE`` /
    ``financial2=FILE`` for swo (with ``--all``, each goes to the one whose form it has).
    Each file is read before anything runs: a missing or unreadable one is an error naming
    the option and the file."""
    from raidlab.exceptions import ConfigError
    from raidlab.reproductions.reproduce import readable_trace

    options: Dict[str, Dict[str, Any]] = {}
    for value in traces:
        name, sep, rest = value.partition("=")
        owner = "swo" if sep and name in SWO_TRACE_NAMES else "pro" if sep and name in PRO_TRACE_NAMES else "vdf"
        if paper == "swo" and owner != "swo":
            raise ConfigError(f"swo takes {' or '.join(n + '=FILE' for n in SWO_TRACE_NAMES)}, not {value!r}",
                              key="--trace")
        if paper == "pro" and owner != "pro":
            raise ConfigError(f"pro takes {', '.join(n + '=FILE' for n in PRO_TRACE_NAMES)}, not {value!r}",
                              key="--trace")
        path = readable_trace(rest if owner != "vdf" else value, option="--trace")
        if owner == "vdf":
            if "vdf" in options:
                raise ConfigError("vdf takes one trace", key="--trace")
            options["vdf"] = {"trace": str(path)}
            continue
        key = "traces" if owner == "swo" else "trace_files"
        given = options.setdefault(owner, {key: {}})[key]
        if name in given:
            raise ConfigError(f"{name} given twice", key="--trace")
        given[name] = str(path)
    return options


def _command_reproduce(args: argparse.Namespace, out: "Console", err: "Console") -> int:
    """``raidlab reproduce PAPER`` of a config-folder reproduction: its studies on a process
    pool (:func:`raidlab.reproductions.reproduce.reproduce`), one progress bar of simulations."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from raidlab.reproductions.reproduce import command_line_text, reproduce

    studies = [name.strip() for name in args.studies.split(",") if name.strip()] if args.studies else None
    output = Path(args.output) if args.output else Path("runs") / f"reproduce-{args.paper}"
    progress = Progress(
        TextColumn(f"reproducing {args.paper}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("simulations"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=rich_console(err),
        transient=True,
    )
    task: Any = None

    def on_plan(plan: Any) -> None:
        nonlocal task
        err.print(f"{len(plan.runs)} simulations ({plan.requested} requested by "
                  f"{len(plan.studies)} studies; {plan.requested - len(plan.runs)} shared)",
                  markup=False, highlight=False, soft_wrap=True)
        progress.start()
        task = progress.add_task("reproduce", total=len(plan.runs))

    def on_done(done: int, total: int) -> None:
        progress.update(task, completed=done)

    started = time.monotonic()
    try:
        plan, _, files = reproduce(
            args.paper,
            output=output,
            experiments_dir=Path(args.experiments) if args.experiments else None,
            seeds=args.seeds,
            studies=studies,
            jobs=args.jobs,
            extra=args.set,
            command_line=command_line_text(args.argv),
            on_plan=on_plan,
            on_done=on_done,
        )
    finally:
        progress.stop()
    report = next((f for f in files if f.name == "report.md"), output / "report.md")
    out.print(f"wrote {report} ({len(files)} files in {output}); {len(plan.runs)} simulations in "
              f"{time.monotonic() - started:.1f} s", markup=False, highlight=False, soft_wrap=True)
    return 0


class _StageProgress:
    """One rich bar per reproduction stage (label, done, total)."""

    def __init__(self, console: "Console") -> None:
        self.console = console
        self.progress: Any = None
        self.tasks: Dict[str, Any] = {}

    def __call__(self, label: str, done: int, total: int) -> None:
        if self.progress is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
                TimeRemainingColumn

            self.progress = Progress(TextColumn("reproducing {task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TimeRemainingColumn(), console=rich_console(self.console), transient=True)
            self.progress.start()
        if label not in self.tasks:
            self.tasks[label] = self.progress.add_task(label, total=max(total, 1))
        self.progress.update(self.tasks[label], total=max(total, 1), completed=done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def command_plot_sweep(args: argparse.Namespace, out: "Console", err: "Console") -> int:
    """``raidlab plot SWEEP_DIR``: the specification's ``[[plots]]`` drawn again from
    summary.parquet, or one figure of ``--metric`` against ``--x`` (by ``--series``)."""
    from raidlab.results import store
    from raidlab.exceptions import ConfigError
    from raidlab.experiments.sweep import draw_spec_plots, load_sweep_spec
    from raidlab.experiments.sweep_plots import plot_metrics

    directory = Path(args.run_dir)
    table = store.read_summary(directory)
    output = Path(args.output) if args.output else directory / "plots"
    if args.x or args.metric:
        if not (args.x and args.metric):
            raise ConfigError("give both --x and --metric (and optionally --series)", key="x" if not args.x else "metric")
        for column in [args.x, *args.metric, *([args.series] if args.series else [])]:
            if column not in table.columns:
                raise ConfigError(f"summary.parquet has no column {column!r}", key=column)
        stem = f"{'+'.join(args.metric)}-vs-{args.x}" + (f"-by-{args.series}" if args.series else "")
        paths = plot_metrics(table, x=args.x, metrics=args.metric, series=args.series,
                             title=directory.name, output_stem=output / stem.replace("/", "_"))
    else:
        spec = load_sweep_spec(directory / store.SPEC_COPY, base_must_exist=False)
        if not spec.plots:
            raise ConfigError("the sweep's specification has no [[plots]]: give --x and --metric", key="plots")
        paths = draw_spec_plots(spec, table, output)
    for path in paths:
        _print(out, f"wrote {path}")
    return 0


# ---------------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------------


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of worker processes, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def add_sweep_arguments(sweep: argparse.ArgumentParser) -> None:
    """Give ``raidlab sweep``'s parser its description, arguments and handler."""
    sweep.description = ("Expand a sweep specification (docs/sweeps.md), run every run not finished yet on a local "
                         "process pool or a Dask cluster, and write the sweep directory: one run directory per run "
                         "(content-addressed: finished runs are skipped, an interrupted sweep resumes) and "
                         "summary.parquet. Exit status 1 when a run failed (the others still ran).")
    sweep.add_argument("spec", metavar="SPEC.toml", help="sweep specification")
    sweep.add_argument("-o", "--output", metavar="DIR", help="sweep directory (default: runs/sweep-<name>)")
    where = sweep.add_mutually_exclusive_group()
    where.add_argument("--jobs", "-j", type=_jobs, metavar="J", help="local worker processes (default: all cores)")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                       help="run on the Dask cluster of this scheduler instead of locally")
    sweep.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                       help="override a configuration key in every run, after the specification's values "
                            "(repeatable; as raidlab run --set)")
    sweep.add_argument("-q", "--quiet", action="store_true", help="no progress bar or table; print the directory")
    sweep.set_defaults(handler=_command_sweep)


def add_summary_arguments(summary: argparse.ArgumentParser) -> None:
    """Give ``raidlab summary``'s parser its description, arguments and handler."""
    summary.description = ("Print a run directory's summary tables, or a sweep directory's "
                           "summary.parquet (its axes and main metrics; --json: every column).")
    summary.add_argument("directory", metavar="RUN_OR_SWEEP_DIR")
    summary.add_argument("--json", action="store_true", help="print JSON (a sweep: one object per row)")
    summary.set_defaults(handler=_command_summary)


def add_compare_arguments(compare: argparse.ArgumentParser) -> None:
    """Give ``raidlab compare``'s parser its description, arguments and handler."""
    compare.description = ("Group the runs (run directories; a sweep directory stands for its finished runs) by "
                           "configuration, runs differing only in the seed being replicates; print each metric's "
                           "difference from the first group with its 95 % confidence interval (paired over seeds "
                           "when both groups ran the same seeds, else Welch's); write R(t), c(t) and response-time "
                           "CDF overlays as PNG and SVG.")
    compare.add_argument("runs", metavar="RUN_OR_SWEEP_DIR", nargs="+")
    compare.add_argument("-o", "--output", metavar="DIR", help="figures' directory (default: runs/compare-<hash8>)")
    compare.add_argument("--metric", action="append", metavar="NAME",
                         help="a summary metric (a summary.parquet column, e.g. response_ms.read.p99); "
                              "repeatable; default: the main response, rebuild and utilization figures")
    compare.add_argument("--class", dest="response_class", default="all",
                         choices=("all", "read", "write", "degraded_read", "failed_set_read"), help="requests of the CDF (default: all)")
    compare.add_argument("--json", action="store_true", help="print JSON instead of tables")
    compare.set_defaults(handler=_command_compare)


def add_list_arguments(listing: argparse.ArgumentParser) -> None:
    """Give ``raidlab list``'s parser its description, arguments and handler."""
    listing.description = ("Print every registry of the core (drive presets, layouts, queue disciplines, trace "
                           "formats, rebuild executors, orders and disciplines, …) with one line per entry, read "
                           "from the registries themselves.")
    listing.add_argument("family", nargs="?", metavar="FAMILY", help="only this registry (e.g. layouts)")
    listing.add_argument("--json", action="store_true", help="print JSON instead of tables")
    listing.set_defaults(handler=_command_list)


def add_docs_commands(docs_commands: Any) -> None:
    """Add ``docs catalogue``."""
    catalogue = docs_commands.add_parser("catalogue", help="policy catalogue (markdown) from the core's registries",
                                         description="Generate docs/catalogue.md: every registry and its entries.")
    catalogue.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    catalogue.set_defaults(handler=_command_docs_catalogue)
