"""``raidlab reproduce PAPER``: rerun a paper's studies and report them beside its numbers.

A paper lives in ``experiments/<paper>/``: ``base.toml`` (the setup every run starts from)
and ``studies.toml`` (what each study varies, how many seeds, the paper's numbers; its header
describes the format). This module

1. loads the studies (:func:`load_paper`) and expands them into runs (:func:`expand`): each
   study's cases are its axes crossed, each case runs with seeds ``1..n``; runs of different
   studies that resolve to the same configuration (the core's configuration hash) and seed
   are run once (:attr:`Plan.runs`);
2. runs them on a process pool (:func:`execute`), each worker returning only the numbers the
   report needs (:func:`run_one`); a failed run (an exception, or a rebuild that did not
   complete) stops everything with an error naming the studies and overrides;
3. aggregates per case over seeds (:func:`summarize`), fits the first-order rebuild-time model
   (:func:`fit_first_order`), and writes one CSV per study, PNG figures and ``report.md``
   (:func:`write_outputs`).

Everything is deterministic: seeds are ``1..n`` and results are keyed by run, not by the
order in which workers finish. Ctrl-C cancels the running simulations (the workers ignore
SIGINT; a shared event tells their progress callbacks to cancel) and shuts the pool down
before ``KeyboardInterrupt`` propagates, so no worker is left behind.
"""

from __future__ import annotations

import itertools
import math
import os
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from raidlab.config import toml_literal
from raidlab.exceptions import ConfigError, RaidlabError, RaidlabIOError
from raidlab.experiments.pool import end_with_parent, ignore_sigint, shutdown, sigint_blocked

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ReproduceError",
    "Paper",
    "Study",
    "Case",
    "RunSpec",
    "Plan",
    "STUDIES_FILE",
    "default_experiments_dir",
    "readable_trace",
    "given_traces",
    "known_papers",
    "load_paper",
    "expand",
    "execute",
    "run_one",
    "summarize",
    "fit_first_order",
    "write_outputs",
    "reproduce",
    "toml_literal",
]

STUDIES_FILE = "studies.toml"
#: Plot kinds a study may ask for.
PLOT_KINDS = ("timeseries", "sweep", "grid", "fit", "band", "regime")
#: R(t) in the first this many seconds after the failure (the "initial R(t)" of the paper).
EARLY_WINDOW_S = 300.0
#: Per-run numbers the workers return, the per-case aggregates and the CSV columns.
METRICS = (
    "rebuild_time_s",
    "response_rebuilding_ms",
    "response_normal_ms",
    "response_early_ms",
    "piggyback_fraction",
    "mean_utilization",
    "arrival_rate_per_s",
    "blocked_share",
    "blocked_share_max",
    "reads_per_idle_period",
    "model_rebuild_time_s",
)
#: Timeseries columns the workers return for studies that plot R(t) and c(t).
TIMESERIES_COLUMNS = ("window_start_s", "window_end_s", "mean_response_ms", "rebuilt_fraction")


class ReproduceError(RaidlabError):
    """A run of a reproduction failed, or its studies are malformed."""


# ---------------------------------------------------------------------------------------------
# Studies
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One combination of a study's varied values."""

    study: str
    index: int
    #: Varied key -> value, in axis order.
    values: Mapping[str, Any]
    #: The study's ``set`` then the case's values, as ``key=value`` strings (no seed, no
    #: command-line overrides).
    overrides: Tuple[str, ...]

    def label(self, labels: Optional[Mapping[str, str]] = None) -> str:
        labels = labels or {}
        return ", ".join(f"{labels.get(key, key)} = {show_value(value)}" for key, value in self.values.items())


@dataclass
class Study:
    name: str
    title: str
    description: str
    seeds: int
    fixed: Dict[str, Any]
    axes: List[Dict[str, List[Any]]]
    plot: Dict[str, Any]
    paper: List[Dict[str, Any]]
    ratio: Optional[Dict[str, Any]] = None
    fit: Optional[Dict[str, Any]] = None
    paper_table: Optional[Dict[str, Any]] = None
    cases: List[Case] = field(default_factory=list)

    @property
    def keys(self) -> List[str]:
        """The varied keys, in axis order."""
        return [key for axis in self.axes for key in axis]

    @property
    def needs_timeseries(self) -> bool:
        return self.plot.get("kind") == "timeseries"

    def paper_value(self, case: Case, metric: str = "rebuild_time_s") -> Tuple[Optional[float], str]:
        """The paper's number for ``case`` (and its source), if it has one."""
        merged = {**self.fixed, **case.values}
        for point in self.paper:
            if metric in point and all(
                key in merged and same_value(merged[key], value) for key, value in point["where"].items()
            ):
                return float(point[metric]), str(point.get("source", ""))
        return None, ""


@dataclass
class Paper:
    name: str
    title: str
    directory: Path
    base: Path
    seeds: int
    labels: Dict[str, str]
    studies: List[Study]

    def study(self, name: str) -> Study:
        for study in self.studies:
            if study.name == name:
                return study
        raise KeyError(name)


def default_experiments_dir() -> Path:
    """``experiments/`` of the repository this package is installed from (editable install:
    ``python/raidlab/reproductions/../../../experiments``)."""
    return Path(__file__).resolve().parents[3] / "experiments"


def readable_trace(path: Any, option: str = "--trace", format: str = "auto") -> Path:
    """``path`` resolved, once its first records have been read as a trace of ``format``
    (``auto``: told from its first lines). A missing, unreadable or malformed file is a
    :class:`ConfigError` whose key is ``option`` and whose message names the file."""
    from raidlab import _core
    from raidlab.config import to_toml

    path = Path(path).expanduser()
    if not path.exists():
        raise ConfigError(f"no such trace file: {path}", key=option)
    if not path.is_file():
        raise ConfigError(f"not a trace file: {path} is a directory or a device", key=option)
    try:
        with open(path, "rb") as probe:
            probe.read(1)
        _core.trace_info(to_toml({"path": str(path.resolve()), "format": format, "max_requests": 1000}),
                         str(Path.cwd()))
    except KeyboardInterrupt:
        raise
    except Exception as error:  # the core's trace errors and the OS's alike
        raise ConfigError(f"cannot read the trace file {path}: {error}", key=option) from None
    return path.resolve()


def given_traces(options: Mapping[str, Any], option: str, names: Sequence[str],
                 key_of: Callable[[str], str]) -> Dict[str, Path]:
    """The user's real trace files: option ``option`` maps some of ``names`` to files (as
    ``--trace NAME=FILE`` gives them). Each is checked readable (:func:`readable_trace`); a
    bad one's error has the key ``key_of(name)``, a malformed option the key ``option``."""
    given = options.get(option) or {}
    if not isinstance(given, Mapping):
        raise ConfigError(f"expected a mapping of {list(names)} to trace files, not {given!r}", key=option)
    files: Dict[str, Path] = {}
    for name, path in given.items():
        if name not in names:
            raise ConfigError(f"expected {' or '.join(names)}, not {name!r}", key=option)
        files[name] = readable_trace(path, option=key_of(name))
    return files


def known_papers(experiments_dir: Path) -> List[str]:
    """Names of the directories of ``experiments_dir`` that hold a ``studies.toml``."""
    if not experiments_dir.is_dir():
        return []
    return sorted(entry.name for entry in experiments_dir.iterdir() if (entry / STUDIES_FILE).is_file())


def load_paper(name: str, experiments_dir: Optional[Path] = None) -> Paper:
    """Load ``experiments_dir/<name>/studies.toml`` and expand each study's cases (without
    seeds). An unknown name is a :class:`ConfigError` listing the known ones."""
    from raidlab.config import parse_toml

    experiments_dir = Path(experiments_dir) if experiments_dir is not None else default_experiments_dir()
    known = known_papers(experiments_dir)
    if name not in known:
        listed = ", ".join(known) if known else f"none (no */{STUDIES_FILE} in {experiments_dir})"
        raise ConfigError(f"unknown paper {name!r}; known: {listed}")
    directory = experiments_dir / name
    path = directory / STUDIES_FILE
    try:
        document = parse_toml(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(path), errno=error.errno) from None
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None

    def bad(message: str, key: str) -> ConfigError:
        return ConfigError(f"{path}: {message}", key=key)

    base = directory / str(document.get("base", "base.toml"))
    if not base.is_file():
        raise bad(f"base configuration {base} does not exist", "base")
    seeds = _positive_int(document.get("seeds", 10), lambda m: bad(m, "seeds"))
    labels = {str(k): str(v) for k, v in (document.get("labels") or {}).items()}
    studies: List[Study] = []
    for number, table in enumerate(document.get("studies") or []):
        where = f"studies[{number}]"
        name_ = table.get("name")
        if not isinstance(name_, str) or not name_:
            raise bad("every study needs a name", f"{where}.name")
        if any(s.name == name_ for s in studies):
            raise bad(f"two studies are named {name_!r}", f"{where}.name")
        axes = table.get("axes") or []
        if not isinstance(axes, list) or not axes or not all(isinstance(a, dict) and a for a in axes):
            raise bad("axes must be a non-empty array of tables of key = [values]", f"{where}.axes")
        for axis in axes:
            lengths = {len(v) if isinstance(v, list) else -1 for v in axis.values()}
            if len(lengths) != 1 or min(lengths) < 1:
                raise bad("the keys of one axis need lists of the same, non-zero length", f"{where}.axes")
        plot = dict(table.get("plot") or {})
        kind = plot.get("kind")
        if kind is not None and kind not in PLOT_KINDS:
            raise bad(f"unknown plot kind {kind!r}; known: {', '.join(PLOT_KINDS)}", f"{where}.plot.kind")
        varied = [key for axis in axes for key in axis]
        for role in ("x", "series", "y", "panel"):
            if role in plot and plot[role] not in varied:
                raise bad(f"plot.{role} = {plot[role]!r} is not a varied key", f"{where}.plot.{role}")
        needed = {"band": ("x", "series"), "regime": ("x", "y", "panel", "series")}.get(kind, ())
        for role in needed:
            if role not in plot:
                raise bad(f"a {kind} plot needs plot.{role}", f"{where}.plot.{role}")
        paper = [dict(point) for point in table.get("paper") or []]
        paper_table = table.get("paper_table")
        if paper_table is not None:
            paper.extend(_points_of_table(paper_table, lambda m: bad(m, f"{where}.paper_table")))
        for point in paper:
            if not isinstance(point.get("where"), dict):
                raise bad("every paper point needs a `where` table", f"{where}.paper")
        study = Study(
            name=name_,
            title=str(table.get("title", name_)),
            description=" ".join(str(table.get("description", "")).split()),
            seeds=_positive_int(table.get("seeds", seeds), lambda m: bad(m, f"{where}.seeds")),
            fixed=dict(table.get("set") or {}),
            axes=[{str(k): list(v) for k, v in axis.items()} for axis in axes],
            plot=plot,
            paper=paper,
            ratio=dict(table["ratio"]) if "ratio" in table else None,
            fit=dict(table["fit"]) if "fit" in table else None,
            paper_table=dict(paper_table) if paper_table is not None else None,
        )
        if study.ratio is not None and study.ratio.get("key") not in varied:
            raise bad("ratio.key must be a varied key", f"{where}.ratio.key")
        if study.fit is not None and study.fit.get("x") not in varied:
            raise bad("fit.x must be a varied key", f"{where}.fit.x")
        study.cases = _cases(study)
        studies.append(study)
    if not studies:
        raise bad("no studies", "studies")
    return Paper(name=name, title=str(document.get("paper", name)), directory=directory, base=base,
                 seeds=seeds, labels=labels, studies=studies)


def _positive_int(value: Any, error: Callable[[str], Exception]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise error(f"expected a whole number >= 1, not {value!r}")
    return value


def _points_of_table(table: Mapping[str, Any], error: Callable[[str], Exception]) -> List[Dict[str, Any]]:
    """A paper table as printed (``rows``, ``columns``: one key each with its values; ``values``:
    one list per row) as points ``{where, <metric>, source}``."""
    rows, columns, values = table.get("rows"), table.get("columns"), table.get("values")
    if not (isinstance(rows, dict) and len(rows) == 1 and isinstance(columns, dict) and len(columns) == 1):
        raise error("paper_table needs rows and columns, each one key = [values]")
    (row_key, row_values), = rows.items()
    (column_key, column_values), = columns.items()
    if not isinstance(values, list) or len(values) != len(row_values) or any(
        not isinstance(row, list) or len(row) != len(column_values) for row in values
    ):
        raise error("paper_table.values must have one row per row value, one cell per column value")
    metric = str(table.get("metric", "rebuild_time_s"))
    source = str(table.get("source", ""))
    return [
        {"where": {row_key: r, column_key: c}, metric: float(values[i][j]), "source": source}
        for i, r in enumerate(row_values)
        for j, c in enumerate(column_values)
    ]


def _cases(study: Study) -> List[Case]:
    """The study's axes crossed (first axis outermost); the keys of one axis zipped."""
    per_axis = [
        [dict(zip(axis.keys(), combination)) for combination in zip(*axis.values())] for axis in study.axes
    ]
    cases = []
    for index, parts in enumerate(itertools.product(*per_axis)):
        values: Dict[str, Any] = {}
        for part in parts:
            values.update(part)
        merged = {**study.fixed, **values}
        overrides = tuple(f"{key}={toml_literal(value)}" for key, value in merged.items())
        cases.append(Case(study=study.name, index=index, values=values, overrides=overrides))
    return cases


def same_value(a: Any, b: Any) -> bool:
    """Equality that keeps ``true`` and ``1`` apart and compares numbers by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return bool(a == b)


def show_value(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# ---------------------------------------------------------------------------------------------
# Expansion and deduplication
# ---------------------------------------------------------------------------------------------


@dataclass
class RunSpec:
    """One simulation to run: the base configuration with ``overrides`` (seed last)."""

    #: (configuration hash without the seed override, seed): the identity runs share.
    key: Tuple[str, int]
    seed: int
    overrides: Tuple[str, ...]
    needs_timeseries: bool
    #: (study, case label) of every case that uses this run.
    users: List[Tuple[str, str]] = field(default_factory=list)

    def describe(self) -> str:
        users = "; ".join(f"study {study} ({label})" for study, label in self.users)
        return f"{users}; overrides: {' '.join(self.overrides)}"


@dataclass
class Plan:
    paper: Paper
    studies: List[Study]
    extra: Tuple[str, ...]
    runs: List[RunSpec]
    #: (study, case index) -> the run keys of its seeds, in seed order.
    case_runs: Dict[Tuple[str, int], List[Tuple[str, int]]]

    @property
    def requested(self) -> int:
        """Runs the studies ask for before deduplication."""
        return sum(len(keys) for keys in self.case_runs.values())


def expand(
    paper: Paper,
    *,
    seeds: Optional[int] = None,
    studies: Optional[Sequence[str]] = None,
    extra: Sequence[str] = (),
    resolve: Optional[Callable[[Path, Sequence[str]], str]] = None,
) -> Plan:
    """The runs of ``studies`` (default: all), ``seeds`` per case (default: each study's),
    with ``extra`` overrides applied last to every run. Runs whose configurations resolve to
    the same hash (``resolve(base, overrides)``; default: the core's) with the same seed are
    one run. A configuration the core rejects is an error naming the study and case."""
    if resolve is None:
        resolve = _core_hash
    if studies is None:
        chosen = list(paper.studies)
    else:
        known = [s.name for s in paper.studies]
        unknown = [name for name in studies if name not in known]
        if unknown:
            raise ConfigError(f"unknown study {unknown[0]!r} of {paper.name}; known: {', '.join(known)}",
                              key="studies")
        chosen = [paper.study(name) for name in dict.fromkeys(studies)]  # paper order, no repeats
        chosen.sort(key=lambda s: known.index(s.name))
    extra = tuple(extra)
    runs: Dict[Tuple[str, int], RunSpec] = {}
    case_runs: Dict[Tuple[str, int], List[Tuple[str, int]]] = {}
    for study in chosen:
        count = seeds if seeds is not None else study.seeds
        for case in study.cases:
            overrides = case.overrides + extra
            try:
                config_hash = resolve(paper.base, overrides)
            except RaidlabError as error:
                raise ReproduceError(
                    f"study {study.name} ({case.label(paper.labels)}): the configuration is rejected: "
                    f"{error} (overrides: {' '.join(overrides)})"
                ) from None
            keys = []
            for seed in range(1, count + 1):
                key = (config_hash, seed)
                spec = runs.get(key)
                if spec is None:
                    spec = runs[key] = RunSpec(key=key, seed=seed, overrides=overrides + (f"seed={seed}",),
                                               needs_timeseries=False)
                spec.needs_timeseries = spec.needs_timeseries or study.needs_timeseries
                user = (study.name, case.label(paper.labels))
                if user not in spec.users:
                    spec.users.append(user)
                keys.append(key)
            case_runs[(study.name, case.index)] = keys
    return Plan(paper=paper, studies=chosen, extra=extra, runs=list(runs.values()), case_runs=case_runs)


def _core_hash(base: Path, overrides: Sequence[str]) -> str:
    import raidlab

    return raidlab.resolve_config(base, overrides=list(overrides))[1]


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------

#: Set in each worker by :func:`_init_worker`: tells running simulations to cancel.
_CANCEL: Any = None


def _init_worker(cancel: Any, parent: Optional[int] = None) -> None:
    global _CANCEL
    _CANCEL = cancel
    if parent is not None:
        # End with the process that started the pool, kill -9 included (see the sweep's).
        end_with_parent(parent)
    # The parent handles Ctrl-C and cancels us through `cancel`.
    ignore_sigint()


def _keep_going(fraction: float, completed: int) -> bool:
    return _CANCEL is None or not _CANCEL.is_set()


def run_one(base: str, overrides: Sequence[str], want_timeseries: bool) -> Dict[str, Any]:
    """Run one simulation and return only what the report needs: ``{"metrics": {...},
    "timeseries": {column: list} or None}``, ``{"error": message}`` or ``{"cancelled": True}``.
    Never raises (errors are returned, as strings, so they cross the process boundary)."""
    try:
        import raidlab

        result = raidlab.run(base, overrides=list(overrides), progress=_keep_going)
    except Exception as error:  # noqa: BLE001 - reported with the run's overrides
        return {"error": f"{type(error).__name__}: {error}"}
    if result.cancelled:
        return {"cancelled": True}
    summary = result.summary
    rebuilds = summary.get("rebuilds") or []
    if not rebuilds:
        return {"error": "the run rebuilt nothing (no failure, or no spare?)"}
    rebuild = rebuilds[0]
    if rebuild.get("outcome") != "complete":
        return {"error": f"the rebuild did not complete: outcome {rebuild.get('outcome')!r} "
                         f"after {rebuild.get('rebuild_time_s')} s"}
    periods = summary.get("response_ms_by_period") or {}
    timeseries = result.timeseries
    failed_at = float(rebuild.get("failed_at_s") or rebuild.get("started_at_s") or 0.0)
    early = math.nan
    if not timeseries.empty:
        start = timeseries["window_start_s"].to_numpy(dtype=float)
        chosen = (start >= failed_at - 1e-9) & (start < failed_at + EARLY_WINDOW_S)
        values = timeseries["mean_response_ms"].to_numpy(dtype=float)[chosen]
        values = values[[not math.isnan(v) for v in values]]
        if len(values):
            early = float(sum(values) / len(values))
    units = float(rebuild.get("units") or 0)
    metrics = {
        "rebuild_time_s": float(rebuild["rebuild_time_s"]),
        "response_rebuilding_ms": _number((periods.get("rebuilding") or {}).get("mean")),
        "response_normal_ms": _number((periods.get("normal") or {}).get("mean")),
        "response_early_ms": early,
        "piggyback_fraction": float(rebuild.get("units_by_piggyback") or 0) / units if units else math.nan,
        "mean_utilization": _number((summary.get("drives") or {}).get("mean_utilization")),
        "arrival_rate_per_s": _number(summary.get("arrival_rate_per_s")),
        "failed_at_s": failed_at,
        **_survivor_metrics(result),
    }
    series = None
    if want_timeseries:
        series = {column: timeseries[column].to_numpy(dtype=float).tolist() for column in TIMESERIES_COLUMNS}
    return {"metrics": metrics, "timeseries": series}


def _survivor_metrics(result: Any) -> Dict[str, float]:
    """What the survivors did while rebuilding (the drives table): the share of the rebuild
    time their DOR processes spent blocked on a full buffer (mean and most), their rebuild
    reads per idle period, and the rebuild time the VSM survivor model
    (:mod:`raidlab.vsm_model`) gives from the run's own service times, for VSM runs without
    piggybacking (NaN otherwise: the model is of VSM's free-running survivor)."""
    from raidlab import vsm_model
    from raidlab.config import parse_toml

    try:
        _, measured = vsm_model.survivors_of_run(result)
    except (KeyError, ValueError):
        return {"blocked_share": math.nan, "blocked_share_max": math.nan, "reads_per_idle_period": math.nan,
                "model_rebuild_time_s": math.nan}
    rebuild = parse_toml(result.resolved_config).get("rebuild") or {}
    model = math.nan
    if rebuild.get("discipline", "vsm") == "vsm" and not rebuild.get("piggyback", False):
        try:
            survivor, _ = vsm_model.survivor_of_run(result)
            model = vsm_model.rebuild_time_s(survivor, bool(rebuild.get("redirect_reads", True)))
        except ValueError:
            # Every idle period held one read (no later read to time): the model has no input.
            model = math.nan
    return {
        "blocked_share": measured["blocked_share"],
        "blocked_share_max": measured["blocked_share_max"],
        "reads_per_idle_period": measured["reads_per_idle_period"],
        "model_rebuild_time_s": model,
    }


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def execute(
    plan: Plan,
    *,
    jobs: Optional[int] = None,
    on_done: Optional[Callable[[int, int], None]] = None,
) -> Dict[Tuple[str, int], Dict[str, Any]]:
    """Run every run of ``plan`` on a pool of ``jobs`` processes (default: all cores) and
    return run key -> :func:`run_one`'s answer. ``on_done(done, total)`` is called after each
    run. The first failed run raises :class:`ReproduceError` naming its studies and overrides
    (the others are cancelled). Ctrl-C cancels the running simulations, shuts the pool down
    and re-raises ``KeyboardInterrupt``."""
    import concurrent.futures as futures
    import multiprocessing

    jobs = max(1, jobs or os.cpu_count() or 1)
    total = len(plan.runs)
    results: Dict[Tuple[str, int], Dict[str, Any]] = {}
    if total == 0:
        return results
    # spawn: the workers start clean (no copy of this process's threads, e.g. rich's refresh).
    context = multiprocessing.get_context("spawn")
    cancel = context.Event()
    executor = futures.ProcessPoolExecutor(max_workers=min(jobs, total), mp_context=context,
                                           initializer=_init_worker, initargs=(cancel, os.getpid()))
    pending: Dict[Any, RunSpec] = {}
    try:
        # Workers are started as tasks are submitted. Started while this thread blocks
        # SIGINT, they inherit the blocked mask and keep it until their initializer ignores
        # SIGINT: a Ctrl-C at the terminal, sent to the whole process group, then reaches
        # only this process, which gets it (if it came meanwhile) when the block ends.
        with sigint_blocked():
            for spec in plan.runs:
                future = executor.submit(run_one, str(plan.paper.base), spec.overrides, spec.needs_timeseries)
                pending[future] = spec
        done = 0
        for future in futures.as_completed(list(pending)):
            spec = pending[future]
            try:
                answer = future.result()
            except Exception as error:  # a worker died (BrokenProcessPool) or could not unpickle
                answer = {"error": f"{type(error).__name__}: {error}"}
            if "error" in answer:
                raise ReproduceError(f"a run failed: {answer['error']}\n  {spec.describe()}")
            if answer.get("cancelled"):
                raise ReproduceError(f"a run was cancelled\n  {spec.describe()}")
            results[spec.key] = answer
            done += 1
            if on_done is not None:
                on_done(done, total)
    except BaseException:
        cancel.set()
        shutdown(executor)
        raise
    executor.shutdown(wait=True)
    return results


# ---------------------------------------------------------------------------------------------
# Aggregation
# ---------------------------------------------------------------------------------------------


@dataclass
class StudyResult:
    study: Study
    #: One row per case: varied keys, seeds, <metric>_mean/_std, paper columns.
    table: "pd.DataFrame"
    #: Per case (index) for timeseries studies: mean R(t) and c(t) per window.
    timeseries: Dict[int, "pd.DataFrame"] = field(default_factory=dict)
    #: Per case: the failure time (s).
    failed_at: Dict[int, float] = field(default_factory=dict)
    fit: Optional[Dict[str, float]] = None
    ratio: Optional[Dict[str, float]] = None


def summarize(plan: Plan, results: Mapping[Tuple[str, int], Mapping[str, Any]]) -> List[StudyResult]:
    """Per study: per case mean and standard deviation over seeds, the paper's number and
    the relative difference where it has one, mean R(t)/c(t) for timeseries studies, the
    first-order fit and the ratio where the study asks for them."""
    import numpy as np
    import pandas as pd

    out = []
    for study in plan.studies:
        rows = []
        result = StudyResult(study=study, table=pd.DataFrame())
        for case in study.cases:
            keys = plan.case_runs[(study.name, case.index)]
            answers = [results[key] for key in keys]
            row: Dict[str, Any] = dict(case.values)
            row["seeds"] = len(answers)
            for metric in METRICS:
                values = np.array([a["metrics"][metric] for a in answers], dtype=float)
                finite = values[np.isfinite(values)]
                row[f"{metric}_mean"] = float(finite.mean()) if len(finite) else math.nan
                row[f"{metric}_std"] = float(finite.std(ddof=1)) if len(finite) > 1 else math.nan
            paper, source = study.paper_value(case)
            if study.paper:
                row["paper_rebuild_time_s"] = paper if paper is not None else math.nan
                row["rebuild_time_diff_percent"] = (
                    (row["rebuild_time_s_mean"] - paper) / paper * 100.0 if paper else math.nan
                )
                row["paper_source"] = source
            rows.append(row)
            result.failed_at[case.index] = float(np.mean([a["metrics"]["failed_at_s"] for a in answers]))
            if study.needs_timeseries:
                result.timeseries[case.index] = mean_timeseries([a["timeseries"] for a in answers])
        result.table = pd.DataFrame(rows)
        if study.fit is not None:
            x = study.fit["x"]
            t0, alpha = fit_first_order(result.table[x].to_numpy(dtype=float),
                                        result.table["rebuild_time_s_mean"].to_numpy(dtype=float))
            result.fit = {"T0": t0, "alpha": alpha}
            u = result.table[x].to_numpy(dtype=float)
            result.table["rebuild_time_fit_s"] = t0 / (1.0 - alpha * u)
            for name in ("paper_alpha", "paper_alpha_initial"):
                if name in study.fit:
                    a = float(study.fit[name])
                    result.fit[name] = a
                    result.table[f"rebuild_time_{name}_s"] = t0 / (1.0 - a * u)
        if study.ratio is not None:
            result.ratio = _ratio(study, result.table, plan, results)
        out.append(result)
    return out


def _ratio(study: Study, table: "pd.DataFrame", plan: Plan, results: Mapping[Tuple[str, int], Mapping[str, Any]]) -> Dict[str, float]:
    import numpy as np

    spec = study.ratio or {}
    key = spec["key"]

    def case_of(value: Any) -> Case:
        matches = [c for c in study.cases if same_value(c.values.get(key), value)]
        if len(matches) != 1:
            raise ReproduceError(f"study {study.name}: ratio needs exactly one case with {key} = {value!r}")
        return matches[0]

    numerator, denominator = case_of(spec["numerator"]), case_of(spec["denominator"])
    top = np.array([results[k]["metrics"]["rebuild_time_s"] for k in plan.case_runs[(study.name, numerator.index)]])
    bottom = np.array([results[k]["metrics"]["rebuild_time_s"] for k in plan.case_runs[(study.name, denominator.index)]])
    paired = top / bottom if len(top) == len(bottom) else np.array([math.nan])
    return {
        "ratio": float(top.mean() / bottom.mean()),
        "paired_mean": float(paired.mean()),
        "paired_std": float(paired.std(ddof=1)) if len(paired) > 1 else math.nan,
        "paper": float(spec["paper"]) if "paper" in spec else math.nan,
    }


def mean_timeseries(series: Sequence[Mapping[str, Sequence[float]]]) -> "pd.DataFrame":
    """Mean over runs per window (aligned on the window start): ``mean_response_ms`` over the
    runs still running in that window; ``rebuilt_fraction`` with a run that has ended (its
    rebuild complete) counted as 1; ``runs``: how many runs reach the window."""
    import numpy as np
    import pandas as pd

    frames = []
    for number, columns in enumerate(series):
        frame = pd.DataFrame({c: np.asarray(columns[c], dtype=float) for c in TIMESERIES_COLUMNS})
        frame["run"] = number
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=[*TIMESERIES_COLUMNS, "runs"])
    both = pd.concat(frames, ignore_index=True)
    both["window_start_s"] = both["window_start_s"].round(9)
    response = both.pivot_table(index="window_start_s", columns="run", values="mean_response_ms", aggfunc="mean", dropna=False)
    fraction = both.pivot(index="window_start_s", columns="run", values="rebuilt_fraction")
    ends = both.pivot(index="window_start_s", columns="run", values="window_end_s")
    windows = fraction.index
    present = ends.notna()
    # After a run's last window its rebuild is complete: c = 1 there.
    last = {run: ends[run].last_valid_index() for run in ends.columns}
    for run in fraction.columns:
        fraction.loc[windows > last[run], run] = 1.0
    out = pd.DataFrame({
        "window_start_s": windows.to_numpy(dtype=float),
        "window_end_s": ends.max(axis=1).to_numpy(dtype=float),
        "mean_response_ms": response.reindex(windows).mean(axis=1, skipna=True).to_numpy(dtype=float),
        "rebuilt_fraction": fraction.mean(axis=1, skipna=True).to_numpy(dtype=float),
        "runs": present.sum(axis=1).to_numpy(dtype=int),
    })
    return out.reset_index(drop=True)


def fit_first_order(u: Sequence[float], rebuild_time: Sequence[float]) -> Tuple[float, float]:
    """Fit T(u) = T0 / (1 - alpha u) by linear least squares on 1/T = 1/T0 - (alpha/T0) u;
    returns ``(T0, alpha)``."""
    import numpy as np

    u = np.asarray(u, dtype=float)
    inverse = 1.0 / np.asarray(rebuild_time, dtype=float)
    if len(u) < 2 or len(np.unique(u)) < 2:
        raise ValueError("the fit needs at least two different utilizations")
    design = np.column_stack([np.ones_like(u), u])
    (intercept, slope), *_ = np.linalg.lstsq(design, inverse, rcond=None)
    t0 = 1.0 / intercept
    return float(t0), float(-slope * t0)


# ---------------------------------------------------------------------------------------------
# Output: CSV, figures, report
# ---------------------------------------------------------------------------------------------


def write_outputs(
    plan: Plan,
    studies: Sequence[StudyResult],
    results: Mapping[Tuple[str, int], Mapping[str, Any]],
    output: Path,
    *,
    command_line: str,
    started: float,
    jobs: int,
) -> List[Path]:
    """One CSV per study (plus ``<study>_timeseries.csv`` for R(t)/c(t) studies and
    ``runs.csv`` with every simulation), PNG figures, then ``report.md``. Returns the files."""
    output = Path(output)
    written: List[Path] = []
    try:
        output.mkdir(parents=True, exist_ok=True)
        for result in studies:
            path = output / f"{result.study.name}.csv"
            result.table.to_csv(path, index=False, float_format="%.6g")
            written.append(path)
            if result.timeseries:
                written.append(_write_timeseries_csv(result, output, plan.paper.labels))
        written.append(_write_runs_csv(plan, results, output))
        figures = {}
        for result in studies:
            figure = _draw(result, plan.paper.labels, output)
            if figure is not None:
                figures[result.study.name] = figure
                written.append(figure)
        report = output / "report.md"
        wall = time.monotonic() - started
        report.write_text(render_report(plan, studies, figures, command_line=command_line, wall_s=wall,
                                        jobs=jobs), encoding="utf-8")
        written.append(report)
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(getattr(error, "filename", None) or output),
                             errno=error.errno) from None
    return written


def _write_timeseries_csv(result: StudyResult, output: Path, labels: Mapping[str, str]) -> Path:
    import pandas as pd

    frames = []
    for case in result.study.cases:
        frame = result.timeseries[case.index].copy()
        frame.insert(0, "t_since_failure_s", frame["window_start_s"] - result.failed_at[case.index])
        for position, (key, value) in enumerate(case.values.items()):
            frame.insert(position, key, value)
        frames.append(frame)
    path = output / f"{result.study.name}_timeseries.csv"
    pd.concat(frames, ignore_index=True).to_csv(path, index=False, float_format="%.6g")
    return path


def _write_runs_csv(plan: Plan, results: Mapping[Tuple[str, int], Mapping[str, Any]], output: Path) -> Path:
    import pandas as pd

    rows = []
    for spec in plan.runs:
        row: Dict[str, Any] = {"config_hash": spec.key[0], "seed": spec.seed,
                               "studies": " ".join(dict.fromkeys(s for s, _ in spec.users)),
                               "overrides": " ".join(spec.overrides)}
        row.update(results[spec.key]["metrics"])
        rows.append(row)
    path = output / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False, float_format="%.6g")
    return path


# -- figures ----------------------------------------------------------------------------------


def _draw(result: StudyResult, labels: Mapping[str, str], output: Path) -> Optional[Path]:
    kind = result.study.plot.get("kind")
    if kind is None:
        return None
    import matplotlib

    matplotlib.use("Agg", force=False)
    from raidlab.output.plots import save_figure

    draw = {"timeseries": _draw_timeseries, "sweep": _draw_sweep, "grid": _draw_grid, "fit": _draw_fit,
            "band": _draw_band, "regime": _draw_regime}[kind]
    figure = draw(result, labels)
    return save_figure(figure, output / f"{result.study.name}.png", dpi=110)


def _series_label(study: Study, case: Case, labels: Mapping[str, str]) -> str:
    series = study.plot.get("series")
    if series is not None:
        return f"{labels.get(series, series)} = {show_value(case.values[series])}"
    return case.label(labels)


def _draw_timeseries(result: StudyResult, labels: Mapping[str, str]) -> Any:
    from matplotlib.figure import Figure

    study = result.study
    figure = Figure(figsize=(10, 7.5), layout="constrained")
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=(3, 1.6))
    for number, case in enumerate(study.cases):
        frame = result.timeseries[case.index]
        since = frame["window_start_s"].to_numpy(dtype=float) - result.failed_at[case.index]
        middle = since + (frame["window_end_s"].to_numpy(dtype=float) - frame["window_start_s"].to_numpy(dtype=float)) / 2
        color = f"C{number}"
        label = _series_label(study, case, labels)
        top.plot(middle, frame["mean_response_ms"], color=color, linewidth=1.4, label=label)
        end = frame["window_end_s"].to_numpy(dtype=float) - result.failed_at[case.index]
        bottom.plot(end, frame["rebuilt_fraction"], color=color, linewidth=1.4, label=label)
        mean_rebuild = float(result.table.loc[case.index, "rebuild_time_s_mean"])
        for ax in (top, bottom):
            ax.axvline(mean_rebuild, color=color, linestyle=":", linewidth=1)
    for ax in (top, bottom):
        ax.axvline(0.0, color="C3", linestyle="--", linewidth=1, label="drive failure" if ax is top else None)
        ax.grid(True, alpha=0.3)
    top.set_ylabel("R(t): mean response time (ms)")
    top.set_ylim(bottom=0)
    top.set_title(f"{study.title}\nmean over {int(result.table['seeds'].min())} seeds per window; "
                  f"dotted: mean rebuild end")
    top.legend(loc="upper right", fontsize="small")
    bottom.set_ylabel("c(t): fraction rebuilt")
    bottom.set_ylim(0, 1.05)
    bottom.set_xlabel("time since the failure (s)")
    return figure


def _draw_sweep(result: StudyResult, labels: Mapping[str, str]) -> Any:
    from matplotlib.figure import Figure

    study, table = result.study, result.table
    x, series = study.plot["x"], study.plot.get("series")
    figure = Figure(figsize=(11, 4.5), layout="constrained")
    left, right = figure.subplots(1, 2)
    groups = [(None, table)] if series is None else list(table.groupby(series, sort=False))
    for number, (value, group) in enumerate(groups):
        group = group.sort_values(x)
        label = f"{labels.get(series, series)} = {show_value(value)}" if series else "raidlab"
        for ax, metric in ((left, "rebuild_time_s"), (right, "response_rebuilding_ms")):
            ax.errorbar(group[x], group[f"{metric}_mean"], yerr=group[f"{metric}_std"].fillna(0.0),
                        color=f"C{number}", marker="o", capsize=3, label=label)
        if "paper_rebuild_time_s" in group and group["paper_rebuild_time_s"].notna().any():
            known = group[group["paper_rebuild_time_s"].notna()]
            left.plot(known[x], known["paper_rebuild_time_s"], color=f"C{number}", marker="x", linestyle="none",
                      markersize=9, label=f"paper ({label})")
    for ax, what in ((left, "rebuild time (s)"), (right, "mean response while rebuilding (ms)")):
        if study.plot.get("log_x"):
            ax.set_xscale("log", base=2)
            values = sorted(table[x].unique())
            ax.set_xticks(values, [show_value(v) for v in values])
            ax.minorticks_off()
        ax.set_xlabel(labels.get(x, x))
        ax.set_ylabel(what)
        ax.set_ylim(bottom=0)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    figure.suptitle(f"{study.title} (mean ± std over seeds)")
    return figure


def _draw_grid(result: StudyResult, labels: Mapping[str, str]) -> Any:
    from matplotlib.figure import Figure

    study, table = result.study, result.table
    x, series = study.plot["x"], study.plot["series"]
    figure = Figure(figsize=(8, 5.5), layout="constrained")
    ax = figure.subplots()
    for number, (value, group) in enumerate(table.groupby(series, sort=False)):
        group = group.sort_values(x)
        label = f"{labels.get(series, series)} = {show_value(value)}"
        ax.errorbar(group[x], group["rebuild_time_s_mean"], yerr=group["rebuild_time_s_std"].fillna(0.0),
                    color=f"C{number}", marker="o", capsize=3, label=f"raidlab, {label}")
        if "paper_rebuild_time_s" in group:
            ax.plot(group[x], group["paper_rebuild_time_s"], color=f"C{number}", marker="x", linestyle="--",
                    label=f"paper, {label}")
    ax.set_xlabel(labels.get(x, x))
    ax.set_ylabel("rebuild time (s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    ax.set_title(study.title)
    return figure


def _draw_fit(result: StudyResult, labels: Mapping[str, str]) -> Any:
    import numpy as np
    from matplotlib.figure import Figure

    study, table, fit = result.study, result.table, result.fit or {}
    x = study.plot["x"]
    figure = Figure(figsize=(8, 5.5), layout="constrained")
    ax = figure.subplots()
    ax.errorbar(table[x], table["rebuild_time_s_mean"], yerr=table["rebuild_time_s_std"].fillna(0.0),
                marker="o", linestyle="none", capsize=3, color="C0", label="raidlab (mean ± std)")
    if fit:
        u = np.linspace(0.0, float(table[x].max()) * 1.02, 200)
        t0 = fit["T0"]
        ax.plot(u, t0 / (1 - fit["alpha"] * u), color="C0",
                label=f"fit: T0 = {t0:.0f} s, alpha = {fit['alpha']:.3f}")
        for name, style in (("paper_alpha", "--"), ("paper_alpha_initial", ":")):
            if name in fit:
                a = fit[name]
                ok = a * u < 0.98
                ax.plot(u[ok], t0 / (1 - a * u[ok]), color="C1", linestyle=style,
                        label=f"paper alpha = {a:g}, raidlab's T0")
    if "paper_rebuild_time_s" in table and table["paper_rebuild_time_s"].notna().any():
        known = table[table["paper_rebuild_time_s"].notna()]
        ax.plot(known[x], known["paper_rebuild_time_s"], marker="x", markersize=9, linestyle="none",
                color="C3", label="paper (Table 1)")
    ax.set_xlabel(labels.get(x, x))
    ax.set_ylabel("rebuild time (s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(f"{study.title}\nT(u) = T0 / (1 - alpha u)")
    return figure


def _bands(result: StudyResult) -> List[Dict[str, Any]]:
    """Per panel value and series value of a ``band`` study: the mean rebuild time at the
    lowest, middle and highest x, and the half-width of the band as a share of the middle."""
    study, table = result.study, result.table
    x, series, panel = study.plot["x"], study.plot["series"], study.plot.get("panel")
    out = []
    groups = table.groupby([panel, series], sort=False) if panel else table.groupby(series, sort=False)
    for key, group in groups:
        group = group.sort_values(x)
        times = group["rebuild_time_s_mean"].to_numpy(dtype=float)
        middle = times[len(times) // 2]
        panel_value, series_value = key if panel else (None, key)
        out.append({"panel": panel_value, "series": series_value, "x": group[x].tolist(), "times": times.tolist(),
                    "half_width": (times[-1] - times[0]) / 2 / middle if middle else math.nan,
                    "paper": group["paper_rebuild_time_s"].dropna().tolist() if "paper_rebuild_time_s" in group else []})
    return out


def _band_lines(result: StudyResult, labels: Mapping[str, str]) -> List[str]:
    study = result.study
    x, series, panel = study.plot["x"], study.plot["series"], study.plot.get("panel")
    header = ([labels.get(panel, panel)] if panel else []) + [labels.get(series, series)]
    header += [f"{labels.get(x, x)} = {show_value(v)}" for v in sorted(result.table[x].unique())]
    header += ["band (± half-width)", "paper (s)"]
    rows = []
    for band in _bands(result):
        cells = ([show_value(band["panel"])] if panel else []) + [show_value(band["series"])]
        cells += [_fmt(t) for t in band["times"]]
        cells += [f"± {_fmt(band['half_width'] * 100, 1, ' %')}",
                  ", ".join(_fmt(p) for p in band["paper"]) or "—"]
        rows.append(cells)
    lines = ["**The band**: mean rebuild time at each load, and half the spread from the lowest to the "
             "highest load as a share of the middle one.", ""]
    return lines + _markdown_table(header, rows, right_from=len(header) - 5)


def _draw_band(result: StudyResult, labels: Mapping[str, str]) -> Any:
    from matplotlib.figure import Figure

    study = result.study
    x, series, panel = study.plot["x"], study.plot["series"], study.plot.get("panel")
    bands = _bands(result)
    panels = list(dict.fromkeys(b["panel"] for b in bands))
    figure = Figure(figsize=(5.5 * len(panels), 4.8), layout="constrained")
    axes = figure.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    series_values = list(dict.fromkeys(b["series"] for b in bands))
    for ax, panel_value in zip(axes, panels):
        for band in (b for b in bands if b["panel"] == panel_value):
            color = f"C{series_values.index(band['series'])}"
            ax.plot(band["x"], band["times"], marker="o", color=color,
                    label=f"{labels.get(series, series)} = {show_value(band['series'])} (± {band['half_width'] * 100:.1f} %)")
            for paper in band["paper"]:
                ax.plot([band["x"][len(band["x"]) // 2]], [paper], marker="x", markersize=9, color=color,
                        linestyle="none")
        ax.set_title(f"{labels.get(panel, panel)} = {show_value(panel_value)}" if panel else study.title, fontsize="medium")
        ax.set_xlabel(labels.get(x, x))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    axes[0].set_ylabel("rebuild time (s); x: the paper's")
    axes[0].set_ylim(bottom=0)
    figure.suptitle(f"{study.title}: mean over seeds")
    return figure


def _regime_cells(result: StudyResult) -> List[Dict[str, Any]]:
    """Per (panel, y, x) cell of a ``regime`` study: PCM's rebuild time and response over
    VSM's (the two values of ``series``, in the study's order)."""
    study, table = result.study, result.table
    x, y, panel, series = study.plot["x"], study.plot["y"], study.plot["panel"], study.plot["series"]
    first, second = [v for axis in study.axes for k, v in axis.items() if k == series][0][:2]
    cells = []
    for (p, yv, xv), group in table.groupby([panel, y, x], sort=False):
        a = group[group[series] == first].iloc[0]
        b = group[group[series] == second].iloc[0]
        cells.append({"panel": p, "y": yv, "x": xv, "first": first, "second": second,
                      "time_ratio": b["rebuild_time_s_mean"] / a["rebuild_time_s_mean"],
                      "response_ratio": b["response_rebuilding_ms_mean"] / a["response_rebuilding_ms_mean"],
                      "times": (a["rebuild_time_s_mean"], b["rebuild_time_s_mean"]),
                      "responses": (a["response_rebuilding_ms_mean"], b["response_rebuilding_ms_mean"])})
    return cells


#: A regime cell whose ratio is within this of 1 is a tie.
TIE = 0.01


def _winner(ratio: float, first: Any, second: Any) -> str:
    """Who is better by a ratio (second's value over first's, lower is better)."""
    if not math.isfinite(ratio) or abs(ratio - 1) <= TIE:
        return "tie"
    return str(first if ratio > 1 else second)


def _regime_lines(result: StudyResult, labels: Mapping[str, str]) -> List[str]:
    study = result.study
    x, y, panel, series = study.plot["x"], study.plot["y"], study.plot["panel"], study.plot["series"]
    cells = _regime_cells(result)
    if not cells:
        return []
    first, second = cells[0]["first"], cells[0]["second"]
    header = [labels.get(panel, panel), labels.get(y, y), labels.get(x, x), f"rebuild time {first} / {second} (s)",
              f"{second} / {first}", f"R rebuilding {first} / {second} (ms)", f"{second} / {first}", "faster rebuild",
              "lower R"]
    rows = []
    for c in cells:
        rows.append([show_value(c["panel"]), show_value(c["y"]), show_value(c["x"]),
                     f"{_fmt(c['times'][0])} / {_fmt(c['times'][1])}", _fmt(c["time_ratio"], 2),
                     f"{_fmt(c['responses'][0], 1)} / {_fmt(c['responses'][1], 1)}", _fmt(c["response_ratio"], 2),
                     _winner(c["time_ratio"], first, second), _winner(c["response_ratio"], first, second)])
    both = sum(1 for c in cells if c["time_ratio"] > 1 + TIE and c["response_ratio"] > 1 + TIE)
    lines = [f"**Who wins where** ({labels.get(series, series)}): {first} is better on both measures in {both} of "
             f"{len(cells)} cells; a cell whose ratio is within {TIE:.0%} of 1 is a tie (about the seeds' noise).", ""]
    return lines + _markdown_table(header, rows, right_from=3)


def _draw_regime(result: StudyResult, labels: Mapping[str, str]) -> Any:
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.figure import Figure

    study = result.study
    x, y, panel = study.plot["x"], study.plot["y"], study.plot["panel"]
    cells = _regime_cells(result)
    panels = list(dict.fromkeys(c["panel"] for c in cells))
    xs = sorted({c["x"] for c in cells})
    ys = sorted({c["y"] for c in cells})
    figure = Figure(figsize=(4.8 * len(panels) + 1, 4.4), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    ratios = [math.log2(c["time_ratio"]) for c in cells]
    limit = max(0.1, max(abs(r) for r in ratios))
    norm = TwoSlopeNorm(vmin=-limit, vcenter=0.0, vmax=limit)
    image = None
    for ax, panel_value in zip(axes, panels):
        grid = np.full((len(ys), len(xs)), np.nan)
        for c in (c for c in cells if c["panel"] == panel_value):
            i, j = ys.index(c["y"]), xs.index(c["x"])
            grid[i, j] = math.log2(c["time_ratio"])
            ax.text(j, i, f"{c['time_ratio']:.2f}\nR {c['response_ratio']:.2f}", ha="center", va="center",
                    fontsize="small")
        image = ax.imshow(grid, cmap="RdBu", norm=norm, origin="lower", aspect="auto")
        ax.set_xticks(range(len(xs)), [show_value(v) for v in xs])
        ax.set_yticks(range(len(ys)), [show_value(v) for v in ys])
        ax.set_xlabel(labels.get(x, x))
        ax.set_ylabel(labels.get(y, y))
        ax.set_title(f"{labels.get(panel, panel)} = {show_value(panel_value)}", fontsize="medium")
    first, second = cells[0]["first"], cells[0]["second"]
    bar = figure.colorbar(image, ax=list(axes), shrink=0.9)
    bar.set_label(f"log2(rebuild time {second} / {first}); blue: {first} faster")
    figure.suptitle(f"{study.title}\neach cell: {second}/{first} rebuild time, and R: {second}/{first} response while rebuilding")
    return figure


# -- report -----------------------------------------------------------------------------------


def _pm(mean: float, std: float, digits: int = 1) -> str:
    if mean is None or not math.isfinite(mean):
        return "—"
    if std is None or not math.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _fmt(value: Any, digits: int = 1, suffix: str = "") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{float(value):.{digits}f}{suffix}"


def _signed(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{float(value):+.1f} %"


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], right_from: int = 0) -> List[str]:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if i >= right_from else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _case_table(result: StudyResult, labels: Mapping[str, str]) -> List[str]:
    study, table = result.study, result.table
    keys = study.keys
    has_paper = "paper_rebuild_time_s" in table and table["paper_rebuild_time_s"].notna().any()
    early = study.needs_timeseries
    piggyback = table["piggyback_fraction_mean"].fillna(0).gt(0).any()
    header = [labels.get(k, k) for k in keys] + ["rebuild time (s)"]
    if has_paper:
        header += ["paper (s)", "difference"]
    header += ["R rebuilding (ms)"]
    if early:
        header += [f"R first {EARLY_WINDOW_S:.0f} s (ms)"]
    header += ["R normal (ms)", "utilization"]
    if piggyback:
        header += ["piggybacked units"]
    survivors = "blocked_share_mean" in table and table["blocked_share_mean"].notna().any()
    model = "model_rebuild_time_s_mean" in table and table["model_rebuild_time_s_mean"].notna().any()
    if survivors:
        header += ["blocked (mean / most)", "reads per idle period"]
    if model:
        header += ["VSM model (s)"]
    rows = []
    for _, row in table.iterrows():
        cells = [show_value(row[k]) for k in keys]
        cells.append(_pm(row["rebuild_time_s_mean"], row["rebuild_time_s_std"]))
        if has_paper:
            cells += [_fmt(row["paper_rebuild_time_s"]), _signed(row["rebuild_time_diff_percent"])]
        cells.append(_pm(row["response_rebuilding_ms_mean"], row["response_rebuilding_ms_std"], 2))
        if early:
            cells.append(_pm(row["response_early_ms_mean"], row["response_early_ms_std"], 2))
        cells.append(_pm(row["response_normal_ms_mean"], row["response_normal_ms_std"], 2))
        cells.append(_fmt(row["mean_utilization_mean"] * 100, 1, " %"))
        if piggyback:
            cells.append(_fmt(row["piggyback_fraction_mean"] * 100, 1, " %"))
        if survivors:
            cells.append(f"{_fmt(row['blocked_share_mean'] * 100, 1, ' %')} / {_fmt(row['blocked_share_max_mean'] * 100, 1, ' %')}")
            cells.append(_fmt(row["reads_per_idle_period_mean"], 2))
        if model:
            cells.append(_fmt(row["model_rebuild_time_s_mean"]))
        rows.append(cells)
    lines = _markdown_table(header, rows, right_from=len(keys))
    sources = sorted({str(s) for s in table.get("paper_source", []) if isinstance(s, str) and s})
    if sources:
        lines += ["", "Paper numbers: " + "; ".join(sources) + "."]
    if survivors or model:
        lines += ["", "*Blocked*: the share of the rebuild time a survivor's DOR process waited on a full "
                      "buffer (the survivors' mean, and the most any one waited). *Reads per idle period*: "
                      "the survivors' rebuild reads between two user operations. *VSM model*: the rebuild "
                      "time of a free-running VSM survivor (no buffer limit) by the M/G/1-with-vacations "
                      "model of `raidlab.vsm_model`, from the run's own service times (VSM runs only)."]
    return lines


def _trend(xs: Sequence[float], ys: Sequence[float]) -> str:
    steps = [b - a for a, b in zip(ys, ys[1:])]
    if all(s < 0 for s in steps):
        return "falls monotonically"
    if all(s > 0 for s in steps):
        return "rises monotonically"
    return "is not monotonic"


def _sweep_trends(result: StudyResult, labels: Mapping[str, str]) -> List[str]:
    study, table = result.study, result.table
    x, series = study.plot["x"], study.plot.get("series")
    groups = [(None, table)] if series is None else list(table.groupby(series, sort=False))
    lines = []
    for value, group in groups:
        group = group.sort_values(x)
        xs = group[x].tolist()
        who = f"{show_value(value)}" if series else "raidlab"
        parts = []
        for metric, what, unit, digits in (("rebuild_time_s", "rebuild time", "s", 0),
                                           ("response_rebuilding_ms", "R while rebuilding", "ms", 1)):
            ys = group[f"{metric}_mean"].tolist()
            change = (ys[-1] - ys[0]) / ys[0] * 100 if ys[0] else math.nan
            parts.append(f"{what} {_trend(xs, ys)} from {ys[0]:.{digits}f} to {ys[-1]:.{digits}f} {unit} "
                         f"({change:+.0f} %)")
        lines.append(f"- {who}, {labels.get(x, x)} {show_value(xs[0])} → {show_value(xs[-1])}: " + "; ".join(parts) + ".")
    return lines


def _grid_tables(result: StudyResult, labels: Mapping[str, str]) -> List[str]:
    study, table = result.study, result.table
    spec = study.paper_table or {}
    if not spec:
        return []
    (row_key, row_values), = spec["rows"].items()
    (column_key, column_values), = spec["columns"].items()

    def cell(r: Any, c: Any) -> Optional[Any]:
        match = table[[same_value(a, r) and same_value(b, c) for a, b in zip(table[row_key], table[column_key])]]
        return None if match.empty else match.iloc[0]

    header = [labels.get(row_key, row_key), ""] + [f"{labels.get(column_key, column_key)} = {show_value(c)}" for c in column_values]
    rows = []
    for r in row_values:
        paper_row = [f"{show_value(r)}", "paper (s)"]
        ours = ["", "raidlab (s)"]
        diff = ["", "difference"]
        for c in column_values:
            found = cell(r, c)
            if found is None:
                paper_row.append("—"); ours.append("—"); diff.append("—")
                continue
            paper_row.append(_fmt(found["paper_rebuild_time_s"]))
            ours.append(_pm(found["rebuild_time_s_mean"], found["rebuild_time_s_std"]))
            diff.append(_signed(found["rebuild_time_diff_percent"]))
        rows += [paper_row, ours, diff]
    lines = _markdown_table(header, rows, right_from=2)
    # The ratios the notes derive: each B against the largest, and N = last against N = first.
    base_row = row_values[0]
    ratio_rows = []
    for r in row_values[1:]:
        paper_cells, our_cells = [], []
        for c in column_values:
            a, b = cell(r, c), cell(base_row, c)
            if a is None or b is None:
                paper_cells.append("—"); our_cells.append("—")
                continue
            paper_cells.append(_fmt(a["paper_rebuild_time_s"] / b["paper_rebuild_time_s"], 3))
            our_cells.append(_fmt(a["rebuild_time_s_mean"] / b["rebuild_time_s_mean"], 3))
        name = f"{show_value(r)} / {show_value(base_row)}"
        ratio_rows += [[name, "paper", *paper_cells], ["", "raidlab", *our_cells]]
    if ratio_rows:
        lines += ["", "Ratios of rebuild times:", ""]
        lines += _markdown_table([labels.get(row_key, row_key), "", *[f"{labels.get(column_key, column_key)} = {show_value(c)}" for c in column_values]],
                                 ratio_rows, right_from=2)
    first, last = column_values[0], column_values[-1]
    spread = []
    for r in row_values:
        a, b = cell(r, last), cell(r, first)
        if a is not None and b is not None:
            spread.append(f"{labels.get(row_key, row_key)} = {show_value(r)}: paper "
                          f"{a['paper_rebuild_time_s'] / b['paper_rebuild_time_s']:.3f}, raidlab "
                          f"{a['rebuild_time_s_mean'] / b['rebuild_time_s_mean']:.3f}")
    if spread:
        lines += ["", f"{labels.get(column_key, column_key)} = {show_value(last)} over "
                      f"{labels.get(column_key, column_key)} = {show_value(first)}: " + "; ".join(spread) + "."]
    return lines


def _fit_lines(result: StudyResult, labels: Mapping[str, str]) -> List[str]:
    study, table, fit = result.study, result.table, result.fit or {}
    x = study.fit["x"] if study.fit else study.plot["x"]
    header = [labels.get(x, x), "rebuild time (s)", "fit (s)"]
    names = [n for n in ("paper_alpha", "paper_alpha_initial") if n in fit]
    header += [f"T0/(1 − {fit[n]:g}u) (s)" for n in names]
    has_paper = "paper_rebuild_time_s" in table and table["paper_rebuild_time_s"].notna().any()
    if has_paper:
        header += ["paper (s)", "difference"]
    rows = []
    for _, row in table.iterrows():
        cells = [show_value(row[x]), _pm(row["rebuild_time_s_mean"], row["rebuild_time_s_std"]),
                 _fmt(row["rebuild_time_fit_s"])]
        cells += [_fmt(row[f"rebuild_time_{n}_s"]) for n in names]
        if has_paper:
            cells += [_fmt(row["paper_rebuild_time_s"]), _signed(row["rebuild_time_diff_percent"])]
        rows.append(cells)
    lines = _markdown_table(header, rows, right_from=1)
    lines += ["", f"**Fit** (least squares on 1/T = 1/T0 − (α/T0)·u over the mean rebuild time per u): "
                  f"**T0 = {fit['T0']:.1f} s, α = {fit['alpha']:.3f}**. "
                  f"The paper: α ≈ {fit.get('paper_alpha', math.nan):g} from its curve fit "
                  f"(α ≈ {fit.get('paper_alpha_initial', math.nan):g} as the initial guess)."]
    return lines


def render_report(
    plan: Plan,
    studies: Sequence[StudyResult],
    figures: Mapping[str, Path],
    *,
    command_line: str,
    wall_s: float,
    jobs: int,
) -> str:
    """``report.md``: per study its table (the paper beside raidlab where the paper has a
    number), the extra analyses, the figure, and the run facts."""
    from raidlab import __version__

    paper, labels = plan.paper, plan.paper.labels
    shared = plan.requested - len(plan.runs)
    seeds = sorted({s.seeds for s in plan.studies}) if not plan.case_runs else sorted(
        {len(v) for v in plan.case_runs.values()})
    lines = [
        f"# Reproduction: {paper.title}",
        "",
        f"- command: `{command_line}`",
        f"- wall time: {wall_s:.1f} s ({wall_s / 60:.1f} min) with {jobs} worker process(es)",
        f"- simulations: {len(plan.runs)} ({plan.requested} requested by the studies, {shared} shared "
        f"between studies and run once); seeds per case: {', '.join(map(str, seeds))} (seeds 1..n)",
        f"- raidlab {__version__}; base configuration `{_relative(paper.base)}`; studies `{_relative(paper.directory / STUDIES_FILE)}`",
    ]
    if plan.extra:
        lines.append(f"- extra overrides on every run: `{' '.join(plan.extra)}`")
    lines += [
        "",
        "Each number is the mean ± standard deviation over seeds. *Rebuild time*: failure to "
        "rebuild end. *R rebuilding*: mean response time of the requests that arrived while "
        f"rebuilding; *R first {EARLY_WINDOW_S:.0f} s*: mean of R(t) over the windows of the first "
        f"{EARLY_WINDOW_S:.0f} s after the failure; *R normal*: before the failure. *Difference*: "
        "(raidlab − paper) / paper. `runs.csv` has every simulation's numbers.",
    ]
    for result in studies:
        study = result.study
        lines += ["", f"## {study.name}: {study.title}", ""]
        if study.description:
            lines += [study.description, ""]
        kind = study.plot.get("kind")
        if kind == "grid":
            lines += _grid_tables(result, labels)
            lines += ["", "Per case:", ""]
            lines += _case_table(result, labels)
        elif kind == "fit" and result.fit:
            lines += _fit_lines(result, labels)
        else:
            lines += _case_table(result, labels)
        if kind == "sweep":
            lines += ["", "Trends (means):", ""] + _sweep_trends(result, labels)
        if kind == "band":
            lines += [""] + _band_lines(result, labels)
        if kind == "regime":
            lines += [""] + _regime_lines(result, labels)
        if result.ratio is not None:
            r = result.ratio
            spec = study.ratio or {}
            key = spec.get("key", "")
            lines += ["", f"**Ratio** of rebuild times, {labels.get(key, key)} {show_value(spec.get('numerator'))} / "
                          f"{show_value(spec.get('denominator'))}: **{r['ratio']:.2f}** (ratio of means; per seed "
                          f"{_pm(r['paired_mean'], r['paired_std'], 2)}); paper: {r['paper']:g} "
                          f"({spec.get('source', '')})."]
        lines += [""]
        files = [f"[{study.name}.csv]({study.name}.csv)"]
        if result.timeseries:
            files.append(f"[{study.name}_timeseries.csv]({study.name}_timeseries.csv)")
        if study.name in figures:
            lines += [f"![{study.name}]({figures[study.name].name})", ""]
            files.append(f"[{figures[study.name].name}]({figures[study.name].name})")
        lines += ["Files: " + ", ".join(files) + "."]
    return "\n".join(lines) + "\n"


def _relative(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------------------------
# Top level
# ---------------------------------------------------------------------------------------------


def reproduce(
    paper_name: str,
    *,
    output: Path,
    experiments_dir: Optional[Path] = None,
    seeds: Optional[int] = None,
    studies: Optional[Sequence[str]] = None,
    jobs: Optional[int] = None,
    extra: Sequence[str] = (),
    command_line: Optional[str] = None,
    on_plan: Optional[Callable[[Plan], None]] = None,
    on_done: Optional[Callable[[int, int], None]] = None,
) -> Tuple[Plan, List[StudyResult], List[Path]]:
    """Load, expand, run, summarize and write; returns the plan, the results and the files."""
    started = time.monotonic()
    paper = load_paper(paper_name, experiments_dir)
    plan = expand(paper, seeds=seeds, studies=studies, extra=extra)
    if on_plan is not None:
        on_plan(plan)
    jobs = max(1, jobs or os.cpu_count() or 1)
    results = execute(plan, jobs=jobs, on_done=on_done)
    summary = summarize(plan, results)
    if command_line is None:
        command_line = "raidlab.reproductions.reproduce.reproduce(" + repr(paper_name) + ", ...)"
    files = write_outputs(plan, summary, results, Path(output), command_line=command_line, started=started,
                          jobs=jobs)
    return plan, summary, files


def command_line_text(argv: Sequence[str]) -> str:
    """The command line as a shell would need it typed: ``raidlab`` and its arguments."""
    return shlex.join(["raidlab", *argv])
