"""The ``raidlab`` command.

::

    raidlab run CONFIG.toml [-o DIR] [--set key=value ...] [--quiet]
    raidlab plot RUN_DIR [-o FILE]
    raidlab trace info FILE [--format FORMAT] [--set key=value ...] [--json]
    raidlab trace synth websearch1|websearch2|websearch3|financial1|financial2 -o FILE [--seed N] [--requests N] [--area-gib X]
    raidlab trace synth --like websearch1|...|financial2 -o FILE [--seed N] [--requests N] [--area-gib X]
    raidlab cache TRACE --policy A,B --size N,M [--drives N,M] [--failed-drive D|all|none] [--json] [--miss-trace FILE]
    raidlab bench [--requests N] [--case NAME ...] [--json]
    raidlab validate DISKSPEC_OR_PRESET TRACE [-o PNG] [--json]
    raidlab schema [-o FILE]
    raidlab docs config [-o FILE]
    raidlab docs validation [-o FILE] [--diskspecs DIR]
    raidlab reproduce PAPER [-o DIR] [--seeds N] [--studies a,b] [--jobs J] [--set key=value ...]
    raidlab reproduce --all [-o DIR] [--seeds N] [--jobs J] [--diskspecs DIR]
    raidlab sweep SPEC [-o DIR] [--jobs J | --scheduler tcp://HOST:PORT] [--set key=value ...]
    raidlab summary RUN_OR_SWEEP_DIR [--json]
    raidlab compare RUN_OR_SWEEP_DIR ... [-o DIR] [--metric NAME ...] [--json]
    raidlab list [FAMILY] [--json]
    raidlab docs catalogue [-o FILE]

The experiments-at-scale commands (sweep, summary, compare, list, reproduce --all) live in
:mod:`raidlab.cli.experiments`.

User errors (configuration, trace, drive spec, files) print ``error: <message>`` — with the
key path or ``file:line`` — and exit with status 2; no traceback. Ctrl-C prints
``interrupted`` and exits with status 130, whenever it comes: :func:`main` catches it while a
command runs, and :mod:`raidlab.cli.__main__` (the console script) while this module loads. This
module imports nothing slow at its top (rich, pandas, pyarrow and Matplotlib take most of a
second to load): commands import what they need where they need it, inside :func:`main`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from raidlab import _core, __version__
from raidlab.config import apply_overrides, load_config, to_toml
from raidlab.cli.console import LazyConsole, rich_console, write_or_print
from raidlab.cli.summary import _ms, print_summary, run_warnings
from raidlab.exceptions import ConfigError, RaidlabError, RaidlabIOError

if TYPE_CHECKING:  # slow imports: at run time, inside the functions that use them
    from rich.console import Console
    from rich.progress import Progress

    from raidlab.results import Result

__all__ = ["main", "build_parser"]

#: Exit status for user errors (bad configuration, unreadable trace, missing file).
EXIT_USER_ERROR = 2
#: Exit status after Ctrl-C.
EXIT_INTERRUPTED = 130

#: A progress bar appears only for runs that last longer than this (seconds).
PROGRESS_DELAY_S = 1.0


# ---------------------------------------------------------------------------------------------
# raidlab run
# ---------------------------------------------------------------------------------------------


class ProgressReporter:
    """The progress callback of a run: shows a rich progress bar once the run has lasted
    :data:`PROGRESS_DELAY_S`, so short runs print nothing."""

    def __init__(self, console: Console, enabled: bool = True, delay_s: float = PROGRESS_DELAY_S) -> None:
        self.console = console
        self.enabled = enabled
        self.delay_s = delay_s
        self.started = time.monotonic()
        self.progress: Optional[Progress] = None
        self.task: Any = None

    def __call__(self, fraction: float, completed_requests: int) -> bool:
        if not self.enabled:
            return True
        if self.progress is None:
            if time.monotonic() - self.started < self.delay_s:
                return True
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[requests]:>12,} requests"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=rich_console(self.console),
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task("run", total=1.0, requests=0)
        if math.isfinite(fraction):
            self.progress.update(self.task, total=1.0, completed=min(max(fraction, 0.0), 1.0),
                                 requests=completed_requests)
        else:  # the run has no known end (e.g. a whole trace): an indeterminate bar
            self.progress.update(self.task, total=None, requests=completed_requests)
        return True

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def _command_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from raidlab.results import Result, gather_manifest_facts, is_run_directory

    loaded = load_config(args.config, overrides=args.set)
    if args.output and Path(args.output).exists() and not args.force:
        # Before the run, not after it: a directory named with -o may hold anything.
        what = "an earlier run" if is_run_directory(Path(args.output)) else "files that are not a run's"
        raise RaidlabIOError(f"exists and holds {what}; pass --force to replace it as a whole",
                             file=args.output)
    reporter = ProgressReporter(err, enabled=not args.quiet)
    gather_manifest_facts()
    try:
        output = _core.run(loaded.text, str(loaded.base_dir), reporter)
    except ConfigError as error:
        raise loaded.explain(error) from None
    finally:
        reporter.close()
    result = Result.from_core(output)
    # The default directory is named by the configuration's hash: one there already is an
    # earlier run of this same configuration, which this one replaces.
    run_dir = Path(args.output) if args.output else Path("runs") / f"{loaded.name or 'run'}-{result.config_hash[:8]}"
    result.save(run_dir, overrides=args.set, command_line=["raidlab", *args.argv], force=args.force,
                name=loaded.name)
    for warning in run_warnings(result.summary):
        err.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    if args.quiet:
        out.print(str(run_dir), markup=False, highlight=False, soft_wrap=True)
    else:
        print_summary(out, result, run_dir)
    return 0


# ---------------------------------------------------------------------------------------------
# raidlab plot
# ---------------------------------------------------------------------------------------------


def _command_plot(args: argparse.Namespace, out: Console, err: Console) -> int:
    from raidlab.results.store import is_sweep_dir

    if is_sweep_dir(args.run_dir) or args.x or args.metric:
        from raidlab.cli.experiments import command_plot_sweep

        return command_plot_sweep(args, out, err)
    from raidlab.output.plots import plot_run
    from raidlab.results import Result

    result = Result.load(args.run_dir)
    target = Path(args.output) if args.output else Path(args.run_dir) / "plot.png"
    try:
        path = plot_run(result, target)
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(target), errno=error.errno) from None
    out.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)
    return 0


# ---------------------------------------------------------------------------------------------
# raidlab trace info
# ---------------------------------------------------------------------------------------------

#: How `trace info` shows each statistic: label and formatter.
_TRACE_FIELDS = {
    "requests": ("requests", lambda v: f"{int(v):,}"),
    "read_fraction": ("reads", lambda v: f"{float(v):.1%}"),
    "mean_size_bytes": ("mean request size", lambda v: f"{float(v) / 1024:.1f} KiB"),
    "duration_s": ("duration", lambda v: f"{float(v):.3f} s"),
    "iops": ("mean rate", lambda v: f"{float(v):.1f} IO/s"),
    "footprint_bytes": ("footprint", lambda v: f"{int(v) / 2**20:.1f} MiB"),
    "locality_hot20": ("requests to the hottest 20 %", lambda v: f"{float(v):.1%}"),
    "volumes": ("volumes", lambda v: f"{int(v):,}" if int(v) <= 1024 else "more than 1,024"),
}


def _command_trace_info(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.table import Table

    trace_toml = to_toml({"path": str(Path(args.file).resolve()), "format": args.format})
    if args.set:
        trace_toml = apply_overrides(trace_toml, args.set)
    stats = json.loads(_core.trace_info(trace_toml, str(Path.cwd())))
    if args.json:
        out.print_json(data=stats)
        return 0
    detected = " detected" if args.format == "auto" else ""
    out.print(f"{args.file} ({stats['format']} trace{detected})", markup=False, highlight=False, soft_wrap=True)
    table = Table(show_header=False)
    table.add_column("statistic")
    table.add_column("value", justify="right")
    for key, value in stats.items():
        if key not in _TRACE_FIELDS:
            continue  # format (said above), the estimates' flags and errors (with their figure), notes
        label, show = _TRACE_FIELDS[key]
        shown = show(value) if value is not None else "—"
        if stats.get(f"{key.replace('_bytes', '')}_exact") is False:
            error = float(stats.get(f"{key.replace('_bytes', '')}_error") or 0.0)
            bound = f"{error:.1%}" if key == "footprint_bytes" else f"{error * 100:.1f} points"
            shown = f"≈ {shown} (± {bound}, estimated)"
        table.add_row(label, shown)
    out.print(table)
    for note in stats.get("notes") or []:
        out.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    return 0


# ---------------------------------------------------------------------------------------------
# raidlab trace synth
# ---------------------------------------------------------------------------------------------


def _check_writable(path: Path) -> None:
    """Raise :class:`RaidlabIOError` naming ``path`` and the cause when a file cannot be
    written there: a directory by that name, a missing directory or one that is a file."""
    if path.is_dir():
        raise RaidlabIOError("cannot write the trace: that is a directory; give a file name", file=str(path))
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise RaidlabIOError(f"cannot write the trace: the directory {parent} does not exist", file=str(path))
    if not parent.is_dir():
        raise RaidlabIOError(f"cannot write the trace: {parent} is not a directory", file=str(path))


def _command_trace_synth(args: argparse.Namespace, out: Console, err: Console) -> int:
    from raidlab import synth

    if (args.trace is None) == (args.like is None):
        raise ConfigError("give either a TRACE or --like NAME, not both and not neither", key="trace synth")
    plan = synth.like_plan(args.like) if args.like is not None else None
    overrides = {"requests": args.requests, "area": args.area_gib, "hot regions": args.hot_regions}
    if args.area_gib is None:
        args.area_gib = plan.area_gib if plan is not None else synth.default_area_gib(args.trace)
    try:
        synth.check_area(args.area_gib)
    except ValueError as error:
        raise ConfigError(str(error).removeprefix("area_gib: "), key="--area-gib") from None
    if args.requests is not None:
        try:  # before the output is checked or anything drawn: a huge count is refused at once
            synth.check_requests(args.requests)
        except ValueError as error:
            raise ConfigError(str(error).removeprefix("requests: "), key="--requests") from None
    output = Path(args.output)
    try:
        compression = synth.compression_for(output)
    except ValueError as error:
        raise ConfigError(str(error), key="-o/--output") from None
    _check_writable(output)  # before the generation, which can take seconds
    try:
        if plan is not None:
            trace = synth.generate_like(args.like, seed=args.seed, requests=args.requests, area_gib=args.area_gib,
                                        hot_regions=args.hot_regions)
        else:
            trace = synth.generate(args.trace, seed=args.seed, requests=args.requests, area_gib=args.area_gib,
                                   hot_regions=args.hot_regions)
    except ValueError as error:
        raise ConfigError(str(error), key="trace synth") from None
    try:
        path = synth.write(trace, output, compress=compression or False)
    except OSError as error:
        raise RaidlabIOError(f"cannot write the trace: {error.strerror or error}", file=str(output)) from None
    measured = synth.characteristics({"lba": trace.lba, "size_bytes": trace.size_bytes,
                                      "is_read": trace.lba >= 0, "time_s": trace.time_s})
    profile = trace.profile
    if plan is not None:
        _print_like(out, path, args.area_gib, trace, measured, plan, overrides)
        return 0
    if isinstance(profile, synth.OltpProfile):
        writes = int(trace.is_write.sum()) if trace.is_write is not None else 0
        out.print(f"wrote {path}: {measured['requests']:,} requests over {args.area_gib:g} GiB, "
                  f"{writes / measured['requests']:.2%} writes (published {profile.write_fraction:.1%}), "
                  f"mean size {measured['mean_size_kib']:.2f} KiB (published {profile.mean_size_kb:g} KB), "
                  f"{measured['iops']:.2f} I/O per second (published {profile.iops:g})",
                  markup=False, highlight=False, soft_wrap=True)
        return 0
    out.print(f"wrote {path}: {measured['requests']:,} reads over {args.area_gib:g} GiB, "
              f"{measured['hot_share']:.2%} of block accesses in the hottest 20 % (published {profile.hot_share:.2%}), "
              f"mean inter-arrival {measured['mean_interarrival_ms']:.2f} ms (published "
              f"{profile.mean_interarrival_ms:.2f} ms), mean size {measured['mean_size_kib']:.1f} KiB",
              markup=False, highlight=False, soft_wrap=True)
    return 0


def _print_like(out: Console, path: Path, area_gib: float, trace, measured: dict, plan, overrides: dict) -> None:
    """What ``trace synth --like`` wrote, then each parameter's source: a published fact
    (raidlab.trace_facts, with its citation), raidlab's choice, or the user's override."""
    from raidlab import trace_facts

    writes = int(trace.is_write.sum()) if trace.is_write is not None else 0
    share = f"{writes / measured['requests']:.3%} writes"
    if plan.read_fraction is not None:
        share += f" (published reads {plan.read_fraction:.2%}), {measured['hot_share']:.2%} of block accesses in " \
                 f"the hottest 20 % (published {plan.profile.hot_share:.2%})"
    else:
        share += f" (published {plan.profile.write_fraction:.1%})"
    out.print(f"wrote {path}: look-alike of {plan.name} from published facts, {measured['requests']:,} requests "
              f"over {area_gib:g} GiB, {share}, mean inter-arrival {measured['mean_interarrival_ms']:.3f} ms, "
              f"mean size {measured['mean_size_kib']:.2f} KiB",
              markup=False, highlight=False, soft_wrap=True)
    for parameter, source in plan.provenance:
        if overrides.get(parameter) is not None:
            text = f"{overrides[parameter]:g}, given on the command line (the plan's: {source})"
        elif source.startswith("fact "):
            fact = trace_facts.fact(source.split(" ", 1)[1])
            cited = fact.source
            under_test = f"; {cited.paper_under_test} is a paper under test" if cited.paper_under_test else ""
            text = f"{fact.value:g} from {cited.authors.split(',')[0]} et al., {cited.year}, {fact.where}{under_test}"
        else:
            text = source
        out.print(f"  {parameter}: {text}", markup=False, highlight=False, soft_wrap=True)


# ---------------------------------------------------------------------------------------------
# raidlab cache
# ---------------------------------------------------------------------------------------------


def _command_cache(args: argparse.Namespace, out: Console, err: Console) -> int:
    from raidlab.cache import command

    reporter = ProgressReporter(err, enabled=not args.quiet)
    try:
        return command(args, out, err, reporter)
    finally:
        reporter.close()


# ---------------------------------------------------------------------------------------------
# raidlab bench
# ---------------------------------------------------------------------------------------------


def peak_rss_kib() -> Optional[int]:
    """Peak resident set size of this process in KiB (``None`` where unavailable)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak // 1024) if sys.platform == "darwin" else int(peak)  # bytes on macOS


def _request_count(text: str) -> int:
    """``--requests``: a whole number of requests, at least 1 (the core takes a u64)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of requests, got {text!r}") from None
    if not 1 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"expected at least 1 request, got {value}"
                                         if value < 1 else f"{value} requests is too many")
    return value


#: DiskSim 4.0's speed on the `ibm18es_cached` case's drive, requests per second: DiskSim 4.0
#: built with ``-O2`` and run on this machine class side by side with raidlab, on the
#: 1 M-request trace the `ibm18es_cached_trace` case writes, took 14.1 s (its mean response
#: agreed with raidlab's within 3 %): 70.7 k requests/s (docs/performance.md, "DiskSim"). An
#: earlier figure of 52 k requests/s came from an unmeasured estimate and flattered raidlab by
#: a third. Both `ibm18es_cached` (requests generated as it runs) and `ibm18es_cached_trace`
#: (the same requests replayed from the trace) are compared with it.
DISKSIM_IBM18ES_REQUESTS_PER_S = 70_700


def _command_bench(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.table import Table

    # The long cases (a whole 18 TB rebuild) run only when named.
    known = list(_core.bench_cases()) + list(_core.long_bench_cases())
    cases = args.case or list(_core.bench_cases())
    unknown = [case for case in cases if case not in known]
    if unknown:  # before any case runs, not after the ones before it
        raise ConfigError(f"unknown bench case {unknown[0]!r}; known: {', '.join(known)}", key="case")
    baseline = peak_rss_kib()  # the interpreter and its libraries, before any simulation
    results: List[Dict[str, Any]] = []
    for case in cases:
        result = dict(_core.bench(case, args.requests))
        result["peak_rss_kib"] = peak_rss_kib()
        result["baseline_rss_kib"] = baseline
        if case in ("ibm18es_cached", "ibm18es_cached_trace"):
            result["times_disksim"] = float(result["requests_per_second"]) / DISKSIM_IBM18ES_REQUESTS_PER_S
        results.append(result)
    if args.json:
        out.print_json(data=results)
        return 0
    table = Table(title=f"raidlab {__version__} benchmarks", title_justify="left")
    for heading in ("case", "requests", "disk ops", "wall (s)", "requests/s", "disk ops/s", "peak RSS (MiB)"):
        table.add_column(heading, justify="left" if heading == "case" else "right")
    for result in results:
        rss = result["peak_rss_kib"]
        table.add_row(
            str(result["case"]),
            f"{int(result['requests']):,}",
            f"{int(result['disk_ops']):,}",
            f"{float(result['wall_seconds']):.3f}",
            f"{float(result['requests_per_second']):,.0f}",
            f"{float(result['disk_ops_per_second']):,.0f}",
            f"{rss / 1024:.1f}" if rss is not None else "—",
        )
    out.print(table)
    for result in results:
        if result.get("rebuild_time_s") is not None:
            err.print(
                f"{result['case']}: simulated a {float(result['rebuild_time_s']) / 3600:.1f} h rebuild "
                f"({float(result['simulated_seconds']):,.0f} s of simulated time) in "
                f"{float(result['wall_seconds']):.1f} s of wall time.",
                style="dim", highlight=False,
            )
        if "times_disksim" in result:
            err.print(
                f"{result['case']}: {result['times_disksim']:.1f} × DiskSim 4.0's "
                f"{DISKSIM_IBM18ES_REQUESTS_PER_S:,} requests/s, measured on this machine class on the "
                f"same trace (docs/performance.md); simulation alone, set-up left out.",
                style="dim", highlight=False,
            )
    if baseline is not None:
        err.print(
            f"peak RSS is this process's high-water mark after each case (cumulative); "
            f"it was {baseline / 1024:.1f} MiB before the first case.",
            style="dim", highlight=False,
        )
    return 0


# ---------------------------------------------------------------------------------------------
# raidlab validate, raidlab docs validation
# ---------------------------------------------------------------------------------------------

#: Rows of the `validate` table: summary key of the class (None: all requests) and label.
_VALIDATE_ROWS = ((None, "all requests"), ("read", "reads"), ("write", "writes"))


def _command_validate(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.table import Table

    from raidlab.experiments.validate import drive_table, plot_validation, validate

    drive = drive_table(args.drive)
    validation = validate(args.drive, args.trace)  # the name itself: a missing file is named as one
    trace = Path(args.trace)
    target = Path(args.output) if args.output else Path(f"{trace.stem}-validation.png")
    label = drive.get("preset") or Path(str(drive.get("diskspec", "drive"))).name
    path = plot_validation(validation, target, title=f"{label} on {trace.name}")
    beyond = int(validation.summary.get("beyond_capacity") or 0)
    if beyond:
        err.print(f"warning: {beyond:,} of {validation.request_count:,} requests lie beyond the "
                  f"drive's capacity and were folded onto it: is this the trace's drive?",
                  markup=False, highlight=False, soft_wrap=True)
    if args.json:
        out.print_json(data=validation.summary)
        err.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)
        return 0
    table = Table(title=f"{label} on {trace.name}: measured vs simulated response time",
                  title_justify="left")
    table.add_column("requests", justify="left")
    for heading in ("count", "measured mean (ms)", "simulated mean (ms)", "demerit (ms)",
                    "demerit (% of mean)"):
        table.add_column(heading, justify="right")
    for key, name in _VALIDATE_ROWS:
        figures = validation.summary if key is None else (validation.summary.get(key) or {})
        if not figures.get("requests"):
            table.add_row(name, "0", "—", "—", "—", "—")
            continue
        table.add_row(
            name,
            f"{int(figures['requests']):,}",
            _ms(figures.get("measured_mean_ms")),
            _ms(figures.get("simulated_mean_ms")),
            _three(figures.get("demerit_ms")),
            _ms(figures.get("demerit_percent")),
        )
    out.print(table)
    out.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)
    return 0


def _three(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{float(value):.3f}"


def _command_docs_validation(args: argparse.Namespace, out: Console, err: Console) -> int:
    from raidlab.experiments.validate import write_validation_report

    command = f"raidlab docs validation -o {args.output} --diskspecs {args.diskspecs}"
    entries = write_validation_report(args.diskspecs, args.output, command=command)
    failed = [entry for entry in entries if entry.validation is None]
    out.print(f"wrote {args.output}: {len(entries) - len(failed)} of {len(entries)} drives validated",
              markup=False, highlight=False, soft_wrap=True)
    for entry in failed:
        err.print(f"warning: {entry.name}: {entry.error}", markup=False, highlight=False, soft_wrap=True)
    return 0


# ---------------------------------------------------------------------------------------------
# raidlab schema, raidlab docs config
# ---------------------------------------------------------------------------------------------


def _schema() -> Dict[str, Any]:
    return json.loads(_core.config_schema())


def _command_schema(args: argparse.Namespace, out: Console, err: Console) -> int:
    write_or_print(json.dumps(_schema(), indent=2, ensure_ascii=False) + "\n", args.output, out)
    return 0


def _command_docs_config(args: argparse.Namespace, out: Console, err: Console) -> int:
    from raidlab.output.config_reference import render_config_reference, undocumented_keys

    schema = _schema()
    write_or_print(render_config_reference(schema), args.output, out)
    missing = undocumented_keys(schema)
    if missing:
        err.print(
            f"warning: {len(missing)} key(s) have no description in the core's config types: "
            + ", ".join(missing),
            markup=False, highlight=False, soft_wrap=True,
        )
    return 0


# ---------------------------------------------------------------------------------------------
# raidlab reproduce
# ---------------------------------------------------------------------------------------------


def _positive(what: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number of {what}, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
        return value

    return parse


# ---------------------------------------------------------------------------------------------
# Parser and entry point
# ---------------------------------------------------------------------------------------------


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The ``raidlab`` command line's parser. Every command is listed, with its one-line help;
    only ``command``'s arguments are built (``None``: every command's). Building every
    command's arguments took most of a small run's parsing time, and importing the modules
    that hold some of them more: :func:`main` builds only the command it runs."""
    parser = argparse.ArgumentParser(
        prog="raidlab",
        description="Simulate RAID storage under drive failure.",
    )
    parser.add_argument("--version", action="version", version=f"raidlab {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, help_text, add_arguments in COMMANDS:
        command_parser = commands.add_parser(name, help=help_text)
        if command is None or command == name:
            add_arguments(command_parser)
    return parser


def _add_run_arguments(run: argparse.ArgumentParser) -> None:
    run.description = "Run a simulation, write its run directory and print a summary."
    run.add_argument("config", metavar="CONFIG.toml", help="experiment configuration")
    run.add_argument("-o", "--output", metavar="DIR",
                     help="run directory (default: runs/<config-stem>-<config-hash8>)")
    run.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                     help="override a configuration key, e.g. --set array.drives=6 "
                          "--set 'failures[0].at_s=2.5' (repeatable; values are TOML literals, "
                          "bare words are strings)")
    run.add_argument("-q", "--quiet", action="store_true",
                     help="no progress bar or summary; print only the run directory")
    run.add_argument("--force", action="store_true",
                     help="replace the directory given with -o as a whole if it exists (without it, "
                          "an existing -o directory is refused before the run; the default directory, "
                          "named by the configuration's hash, is always replaced)")
    run.set_defaults(handler=_command_run)


def _add_plot_arguments(plot: argparse.ArgumentParser) -> None:
    plot.description = ("Draw R(t) over I/O intensity with failure markers, c(t) "
                        "(the fraction rebuilt) under it for a run that rebuilt a "
                        "drive onto a spare, and the response-time CDFs, from a "
                        "run directory.")
    plot.add_argument("run_dir", metavar="RUN_DIR")
    plot.add_argument("-o", "--output", metavar="FILE", help="PNG file (default: RUN_DIR/plot.png); "
                      "for a sweep directory, the figures' directory (default: SWEEP_DIR/plots)")
    plot.add_argument("--x", metavar="KEY", help="sweep directory: the axis of the x axis")
    plot.add_argument("--metric", action="append", metavar="NAME",
                      help="sweep directory: a summary.parquet column to draw against --x (repeatable); "
                           "without --x and --metric, the specification's [[plots]]")
    plot.add_argument("--series", metavar="KEY", help="sweep directory: one line per value of this axis")
    plot.set_defaults(handler=_command_plot)


def _add_trace_arguments(trace: argparse.ArgumentParser) -> None:
    trace_commands = trace.add_subparsers(dest="trace_command", metavar="COMMAND", required=True)
    info = trace_commands.add_parser("info", help="statistics of a trace file",
                                     description="Read a trace once and print its statistics.")
    info.add_argument("file", metavar="FILE")
    info.add_argument("--format", default="auto",
                      help="trace format: spc, msr, systor, tencent, csv (with --set csv.…), disksim, validate, "
                           "or oracleGeneral (libCacheSim's binary format, as raidlab cache reads it); default: auto, "
                           "told from the name and first bytes")
    info.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                      help="other keys of workload.trace, e.g. --set csv.time_column=0 "
                           "--set max_requests=1000; time_scale scales the duration and rate")
    info.add_argument("--json", action="store_true", help="print JSON instead of a table")
    info.set_defaults(handler=_command_trace_info)
    synth = trace_commands.add_parser(
        "synth", help="write a synthetic look-alike of a web-search or OLTP trace (SPC format)",
        description="Write an SPC trace with the characteristics the PRO paper publishes for the web-search "
                    "traces (request count, reads only, 70 % of requests in the hottest 20 % of the area, "
                    "mean inter-arrival time), or those the SWO paper publishes for the OLTP traces Financial1 "
                    "and Financial2 (write share, mean request size, mean rate; one hour); sizes and the hot "
                    "area's shape are raidlab's choice (docs/traces.md). With --like NAME instead of TRACE, "
                    "every parameter a published fact sets comes from that fact (raidlab.trace_facts, "
                    "docs/trace-lookalikes.md) and the command lists each parameter's source. The same seed "
                    "gives the same bytes.")
    trace_names = ["websearch1", "websearch2", "websearch3", "financial1", "financial2"]
    synth.add_argument("trace", metavar="TRACE", nargs="?", default=None, choices=trace_names,
                       help="websearch1, websearch2, websearch3, financial1 or financial2")
    synth.add_argument("--like", metavar="NAME", default=None, choices=trace_names,
                       help="instead of TRACE: a look-alike of NAME fitted to the published facts about it "
                            "(web search: the PRO paper's prefix count, 70 %% locality and rate, 99.98 %% reads, "
                            "the VDF paper's 60 GB span; financial: the SWO paper's Table I)")
    synth.add_argument("-o", "--output", metavar="FILE", required=True,
                       help="the trace file to write (a name ending in .gz is gzip-compressed, "
                            "in .bz2 bzip2-compressed)")
    synth.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    synth.add_argument("--requests", type=_request_count, default=None, metavar="N",
                       help="requests to write (default: the published count; financial: one hour at the "
                            "published rate)")
    synth.add_argument("--area-gib", type=float, default=None, metavar="X",
                       help="size of the address space the trace covers, GiB; make it at most the array's "
                            "capacity (default: 5, which every array of the PRO paper holds; financial: 60, the "
                            "SWO paper's volume; --like: 60, the VDF paper's span for web search)")
    synth.add_argument("--hot-regions", type=_positive("hot regions"), default=None, metavar="K",
                       help="contiguous hot regions (default: 8; financial: 16)")
    synth.set_defaults(handler=_command_trace_synth)


def _add_bench_arguments(bench: argparse.ArgumentParser) -> None:
    bench.description = ("Measure simulation speed (requests/s, disk ops/s) "
                         "and peak memory.")
    bench.add_argument("--requests", type=_request_count, default=100_000, metavar="N",
                       help="user requests per case (default: %(default)s)")
    bench.add_argument("--case", action="append", metavar="NAME",
                       help="case to run (repeatable; default: all of raidlab._core.bench_cases(); "
                            "the long ones, raidlab._core.long_bench_cases(), only when named)")
    bench.add_argument("--json", action="store_true", help="print JSON instead of a table")
    bench.set_defaults(handler=_command_bench)


def _add_validate_arguments(validate: argparse.ArgumentParser) -> None:
    validate.description = ("Replay a DiskSim validate trace on one simulated drive, as DiskSim does "
                            "(each request issued the trace's gap after the previous one completes), and "
                            "compare the response-time distribution with the measured one: means and the "
                            "demerit (RMS horizontal distance between the CDFs). Writes both CDFs to a PNG.")
    validate.add_argument("drive", metavar="DISKSPEC_OR_PRESET",
                          help="a DiskSim parameter file (an existing file) or a drive preset name")
    validate.add_argument("trace", metavar="TRACE", help="trace in DiskSim's validate format")
    validate.add_argument("-o", "--output", metavar="PNG",
                          help="CDF plot (default: <trace-stem>-validation.png)")
    validate.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    validate.set_defaults(handler=_command_validate)


def _add_schema_arguments(schema: argparse.ArgumentParser) -> None:
    schema.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    schema.set_defaults(handler=_command_schema)


def _add_docs_arguments(docs: argparse.ArgumentParser) -> None:
    docs_commands = docs.add_subparsers(dest="docs_command", metavar="COMMAND", required=True)
    docs_config = docs_commands.add_parser("config", help="configuration reference (markdown)",
                                           description="Generate the configuration reference from "
                                                       "the JSON Schema.")
    docs_config.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    docs_config.set_defaults(handler=_command_docs_config)
    docs_validation = docs_commands.add_parser(
        "validation", help="drive validation report (markdown + CDF plots)",
        description="Validate every DiskSim drive of DIR (NAME.parv against NAME.trace), and write "
                    "the report with raidlab's demerit next to DiskSim's, plus one CDF plot per drive "
                    "in a directory named after the report.")
    docs_validation.add_argument("-o", "--output", metavar="FILE", default="docs/validation.md",
                                 help="report (default: %(default)s; plots go to its stem's directory)")
    docs_validation.add_argument("--diskspecs", metavar="DIR", default="../shared/diskspecs",
                                 help="directory of the DiskSim specs and traces (default: %(default)s)")
    docs_validation.set_defaults(handler=_command_docs_validation)
    from raidlab.cli.experiments import add_docs_commands

    add_docs_commands(docs_commands)


def _add_reproduce_arguments(reproduce: argparse.ArgumentParser) -> None:
    from raidlab.cli.experiments import command_reproduce

    reproduce.description = ("Run one reproduction of the registry (raidlab.reproductions), or every one with "
                             "--all. A config-folder reproduction (fu) runs the studies of "
                             "experiments/PAPER/studies.toml (each from experiments/PAPER/base.toml) on all cores, "
                             "running identical runs of different studies once, and writes one CSV per study, PNG "
                             "figures and report.md (the paper's numbers beside raidlab's) into the output "
                             "directory; the others write their figures, report.md and report.html. --all writes "
                             "each into its own subdirectory and one report.md and self-contained report.html of "
                             "every paper: its tables, figures and the notes of docs/reproduction.md.")
    reproduce.add_argument("paper", metavar="PAPER", nargs="?",
                           help="the reproduction (raidlab.reproductions.REPRODUCTIONS: fu, pro, vdf, thesis, mirroring, validation, swo, draid)")
    reproduce.add_argument("--all", action="store_true",
                           help="run every reproduction and write report.md and a self-contained report.html")
    reproduce.add_argument("--diskspecs", metavar="DIR",
                           help="DiskSim specs and traces for the validation (default: ../shared/diskspecs)")
    reproduce.add_argument("--trace", metavar="[NAME=]FILE", action="append", default=[],
                           help="vdf: run on this block trace (any format raidlab reads) instead of the "
                                "synthetic look-alike of the paper's SPC-1-web; pro: websearch1=FILE, "
                                "websearch2=FILE and/or websearch3=FILE, the real WebSearch traces (SPC) to "
                                "replay instead of the look-alikes (the paper's prefix of each, addresses folded "
                                "onto the array); swo: financial1=FILE and/or financial2=FILE, the real OLTP "
                                "traces to replay instead of the look-alikes (repeatable; a missing or "
                                "unreadable file is an error)")
    reproduce.add_argument("-o", "--output", metavar="DIR",
                           help="output directory (default: runs/reproduce-PAPER)")
    reproduce.add_argument("--seeds", type=_positive("seeds"), metavar="N",
                           help="seeds per case for every study (default: each study's, seeds 1..n)")
    reproduce.add_argument("--studies", metavar="A,B",
                           help="comma-separated studies to run (default: all; pro: tables, load, redirection, "
                                "default tables; vdf: tables, cache, default tables)")
    reproduce.add_argument("--jobs", "-j", type=_positive("jobs"), metavar="J",
                           help="worker processes (default: all cores)")
    reproduce.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                           help="override a configuration key in every run, after the studies' own "
                                "values (repeatable; as raidlab run --set)")
    reproduce.add_argument("--experiments", metavar="DIR",
                           help="experiments directory (default: the repository's experiments/, "
                                "next to the package's source)")
    reproduce.set_defaults(handler=command_reproduce)


def _elsewhere(module: str, function: str, *arguments: Any) -> Callable[[argparse.ArgumentParser], None]:
    """A command's argument builder that lives in ``module``: imported only when that command
    is built."""

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        getattr(importlib.import_module(module), function)(parser, *arguments)

    return add_arguments


#: The commands, in the order ``raidlab --help`` lists them: name, one-line help, and the
#: function that gives the command's parser its description, arguments and handler.
COMMANDS: Sequence[Tuple[str, str, Callable[[argparse.ArgumentParser], None]]] = (
    ("run", "run a simulation and write its run directory", _add_run_arguments),
    ("plot", "plot a run directory (R(t) and response-time CDFs)", _add_plot_arguments),
    ("trace", "inspect block traces", _add_trace_arguments),
    ("cache", "stream a trace through buffer caches: hit ratio and RGR (VDF paper)",
     _elsewhere("raidlab.cache", "add_arguments", _command_cache)),
    ("bench", "run the built-in benchmarks", _add_bench_arguments),
    ("validate", "compare a drive model with a real drive's trace (DiskSim validate format)",
     _add_validate_arguments),
    ("schema", "print the configuration's JSON Schema", _add_schema_arguments),
    ("docs", "generate documentation", _add_docs_arguments),
    ("reproduce", "rerun a paper's studies and report them beside its numbers", _add_reproduce_arguments),
    ("sweep", "run a sweep specification: many runs over axes, collected into summary.parquet",
     _elsewhere("raidlab.cli.experiments", "add_sweep_arguments")),
    ("summary", "print the summary of a run or a sweep",
     _elsewhere("raidlab.cli.experiments", "add_summary_arguments")),
    ("compare", "compare runs: metric differences with confidence intervals, overlaid R(t), c(t), CDFs",
     _elsewhere("raidlab.cli.experiments", "add_compare_arguments")),
    ("list", "list what a configuration can name: presets, layouts, schedulers, trace formats, policies",
     _elsewhere("raidlab.cli.experiments", "add_list_arguments")),
    ("rebuild-plan", "how long will my rebuild take, and what will it cost? (one run per rebuild setting or layout)",
     _elsewhere("raidlab.cli.rebuild_plan", "add_arguments")),
)


def _command_word(arguments: Sequence[str]) -> Optional[str]:
    """The command ``arguments`` run: their first word that is not an option. The command line
    has no option before the command that takes a value (only ``--help`` and ``--version``),
    so this is the word argparse takes for the command."""
    return next((argument for argument in arguments if not argument.startswith("-")), None)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``raidlab`` command line ``argv`` (default ``sys.argv[1:]``); returns the exit
    status. The console script calls it through :func:`raidlab.cli.__main__.main`, which also
    catches a Ctrl-C while this module loads."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        # Inside the try: a Ctrl-C that lands while the command line is parsed or rich loads
        # is an interrupt like any other, not a traceback.
        args = build_parser(_command_word(arguments)).parse_args(arguments)
        args.argv = arguments
        out: Any = LazyConsole(stderr=False)
        err: Any = LazyConsole(stderr=True)
        return args.handler(args, out, err)
    except RaidlabError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
