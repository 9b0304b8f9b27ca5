"""``raidlab compare``: runs side by side, metric by metric, with confidence intervals.

The inputs are run directories and sweep directories (a sweep stands for its finished runs).
Runs whose resolved configurations differ only in the seed are *replicates* of one
configuration and form one group (:func:`group_runs`). The first group is the reference;
for every other group and metric, :func:`compare_groups` gives the difference of the means
with its 95 % interval (:func:`raidlab.experiments.stats.difference_interval`: paired over seeds when
both groups ran the same seeds, Welch's otherwise, none without replicates).
:func:`overlay_figures` draws the groups' R(t), c(t) (for runs that rebuilt) and
response-time CDFs on shared axes, as PNG and SVG, from the runs' tables.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

from raidlab.results import store
from raidlab.exceptions import RaidlabIOError
from raidlab.experiments.stats import difference_interval

if TYPE_CHECKING:
    import os

    import pandas as pd

    from raidlab.results import Result

__all__ = [
    "DEFAULT_METRICS",
    "RunRecord",
    "Group",
    "LeftOut",
    "collect_runs",
    "runs_left_out",
    "left_out_text",
    "delta_text",
    "group_runs",
    "compare_groups",
    "overlay_figures",
]

#: Metrics compared when none are named (those no run has are left out).
DEFAULT_METRICS = (
    "response_ms.all.mean",
    "response_ms.all.p99",
    "response_ms.read.mean",
    "response_ms.write.mean",
    "response_ms.degraded_read.mean",
    "response_ms_by_period.rebuilding.mean",
    "rebuild_time_s",
    "drives.mean_utilization",
    "requests_completed",
)

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class RunRecord:
    """One finished run: where it is, its summary metrics and its configuration."""

    path: Path
    metrics: Dict[str, Any]
    #: The resolved configuration, parsed (``config.toml``).
    config: Dict[str, Any]
    seed: Optional[int]

    @property
    def group_key(self) -> str:
        """Digest of the configuration without its seed: replicates share it."""
        rest = {key: value for key, value in self.config.items() if key != "seed"}
        return hashlib.sha256(json.dumps(rest, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def load(self) -> "Result":
        from raidlab.results import Result

        return Result.load(self.path)


@dataclass
class Group:
    """Replicates of one configuration, in the order they were given."""

    key: str
    runs: List[RunRecord] = field(default_factory=list)
    label: str = ""

    @property
    def seeds(self) -> List[Optional[int]]:
        return [run.seed for run in self.runs]

    def values(self, metric: str) -> List[float]:
        out = []
        for run in self.runs:
            value = run.metrics.get(metric)
            out.append(float(value) if isinstance(value, (int, float)) else math.nan)
        return out


def _read_config(path: Path) -> Dict[str, Any]:
    from raidlab.config import parse_toml
    from raidlab.results import CONFIG_FILE, _read_text

    file = path / CONFIG_FILE
    return parse_toml(_read_text(file), file)  # a damaged file is an error naming it


def _record(path: Path) -> RunRecord:
    from raidlab.results import INCOMPLETE_FILE

    if (path / INCOMPLETE_FILE).exists():
        raise RaidlabIOError("saving this run directory did not finish; run it again", file=str(path / INCOMPLETE_FILE))
    summary = store.read_run_summary(path)
    seed = summary.get("seed")
    return RunRecord(path=path, metrics=store.summary_metrics(summary), config=_read_config(path),
                     seed=int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None)


def collect_runs(paths: Sequence[PathLike]) -> List[RunRecord]:
    """The finished runs of ``paths``: each a run directory, or a sweep directory standing
    for its finished runs (in its table's order). Anything else is a :class:`RaidlabIOError`."""
    records: List[RunRecord] = []
    for given in paths:
        path = Path(given)
        if store.is_sweep_dir(path):
            table = store.read_summary(path)
            done = table[table["status"] == "done"]["run_id"].drop_duplicates().tolist()
            if not done:
                raise RaidlabIOError("the sweep has no finished run", file=str(path))
            records += [_record(path / store.RUNS_DIR / identity) for identity in done]
        elif store.is_run_dir(path):
            records.append(_record(path))
        else:
            raise RaidlabIOError("neither a run directory (summary.json) nor a sweep directory (sweep.json)",
                                 file=str(path))
    return records


@dataclass
class LeftOut:
    """A run of a sweep that :func:`collect_runs` leaves out: it failed or never finished."""

    sweep: Path
    run_id: str
    status: str
    case: Optional[int] = None
    seed: Optional[int] = None
    error_type: Optional[str] = None
    error: Optional[str] = None

    def as_json(self) -> Dict[str, Any]:
        return {"sweep": str(self.sweep), "run_id": self.run_id, "status": self.status, "case": self.case,
                "seed": self.seed, "error_type": self.error_type, "error": self.error}


def _plain(value: Any) -> Any:
    """A table cell as plain Python, ``None`` for a missing one."""
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return value


def runs_left_out(paths: Sequence[PathLike]) -> List[LeftOut]:
    """The runs of the sweep directories among ``paths`` that :func:`collect_runs` leaves
    out because they did not finish: ``failed`` (with the error) or ``pending`` (the sweep was
    stopped first), one per run in the table's order."""
    left: List[LeftOut] = []
    for given in paths:
        path = Path(given)
        if not store.is_sweep_dir(path):
            continue
        table = store.read_summary(path)
        done = set(table.loc[table["status"] == "done", "run_id"])
        seen = set()
        for row in table[table["status"] != "done"].to_dict("records"):
            identity = str(row["run_id"])
            if identity in done or identity in seen:
                continue
            seen.add(identity)
            case, seed = _plain(row.get("case")), _plain(row.get("seed"))
            left.append(LeftOut(sweep=path, run_id=identity, status=str(row["status"]),
                                case=int(case) if case is not None else None,
                                seed=int(seed) if seed is not None else None,
                                error_type=_plain(row.get("error_type")), error=_plain(row.get("error"))))
    return left


def left_out_text(left: Sequence[LeftOut], shown: int = 5) -> str:
    """The runs left out, in words: how many failed and how many did not finish, then the
    first ``shown`` of them with their error."""
    if not left:
        return ""
    failed = sum(1 for run in left if run.status == "failed")
    counts = [f"{failed} failed" if failed else "", f"{len(left) - failed} did not finish" if len(left) > failed else ""]
    lines = [f"left out {len(left)} run(s) that have no results ({', '.join(c for c in counts if c)}):"]
    for run in left[:shown]:
        where = f"case {run.case}, seed {run.seed}" if run.case is not None else f"seed {run.seed}"
        what = f"{run.error_type}: {run.error}" if run.error_type or run.error else run.status
        first_line = str(what).strip().splitlines()[0] if str(what).strip() else run.status
        lines.append(f"  {run.sweep / store.RUNS_DIR / run.run_id} ({where}): {first_line}")
    if len(left) > shown:
        lines.append(f"  … and {len(left) - shown} more (raidlab summary SWEEP_DIR lists them)")
    return "\n".join(lines)


def _flatten(config: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    flat: Dict[str, Any] = {}
    for key, value in config.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            flat.update(_flatten(value, path))
        else:
            flat[path] = json.dumps(value, sort_keys=True, default=str)
    return flat


def _show(value: str) -> str:
    """A flattened value as a label shows it: numbers and text as such, truth values as TOML
    writes them (``false``, not Python's ``False``), lists and tables as their JSON text."""
    try:
        shown = json.loads(value)
    except ValueError:
        return value
    if isinstance(shown, bool):
        return "true" if shown else "false"
    return str(shown) if not isinstance(shown, (list, dict)) else value


@functools.lru_cache(maxsize=1)
def _config_schema() -> Optional[Dict[str, Any]]:
    try:
        from raidlab import _core

        return json.loads(_core.config_schema())
    except Exception:  # noqa: BLE001 - defaults only complete labels; without them a left-out key shows "—"
        return None


def _default_of(key: str) -> Optional[str]:
    """The default of the configuration key ``key`` (dotted) as :func:`_flatten` writes values
    (JSON text), from the core's JSON Schema; ``None`` when the schema gives none."""
    from raidlab.output.config_reference import NO_DEFAULT, key_default

    schema = _config_schema()
    if schema is None:
        return None
    default = key_default(schema, key)
    return None if default is NO_DEFAULT else json.dumps(default, sort_keys=True, default=str)


def _has_table(config: Mapping[str, Any], path: str) -> bool:
    """Whether the table ``path`` (dotted; empty for the top level) is in ``config``."""
    for part in path.split(".") if path else ():
        config = config.get(part) if isinstance(config, Mapping) else None
        if not isinstance(config, Mapping):
            return False
    return True


def _with_defaults(flat: Dict[str, Any], config: Mapping[str, Any], keys: Sequence[str]) -> Dict[str, Any]:
    """``flat`` with each of ``keys`` it lacks set to the key's default when its table is there.
    A resolved configuration leaves out values equal to their default that way (the core
    writes no ``spares = 0``, no ``false`` flag, no empty ``failures``), so a key missing from
    a present table is its default, not a missing value; a key of an absent table (no
    ``[rebuild]`` at all) stays missing."""
    filled = dict(flat)
    for key in keys:
        if key not in filled and _has_table(config, key.rpartition(".")[0]):
            default = _default_of(key)
            if default is not None:
                filled[key] = default
    return filled


def group_runs(records: Sequence[RunRecord]) -> List[Group]:
    """Replicates grouped (same configuration but the seed), groups in order of first
    appearance, each labelled by the configuration keys in which the groups differ (at most
    three shown), or by its first run's directory when they differ in none."""
    groups: Dict[str, Group] = {}
    for record in records:
        group = groups.setdefault(record.group_key, Group(key=record.group_key))
        group.runs.append(record)
    ordered = list(groups.values())
    configs = [{k: v for k, v in group.runs[0].config.items() if k != "seed"} for group in ordered]
    flats = [_flatten(config) for config in configs]
    keys = sorted({key for flat in flats for key in flat})
    flats = [_with_defaults(flat, config, keys) for flat, config in zip(flats, configs)]
    differing = [key for key in keys if len({flat.get(key) for flat in flats}) > 1]
    for group, flat in zip(ordered, flats):
        if differing:
            parts = [f"{key}={_show(flat[key]) if key in flat else '—'}" for key in differing[:3]]
            if len(differing) > 3:
                parts.append(f"+{len(differing) - 3} more")
            group.label = ", ".join(parts)
        else:
            group.label = group.runs[0].path.name
        if len(group.runs) > 1:
            group.label += f" [{len(group.runs)} seeds]"
    return ordered


def compare_groups(groups: Sequence[Group], metrics: Optional[Sequence[str]] = None) -> "pd.DataFrame":
    """One row per (metric, group): the group's run count and mean, and for every group after
    the first its difference from the first with the 95 % interval (``ci_low``, ``ci_high``;
    NaN without replicates), the relative difference and the method. Metrics default to
    :data:`DEFAULT_METRICS` that some run has."""
    import pandas as pd

    if metrics is None:
        metrics = [m for m in DEFAULT_METRICS
                   if any(isinstance(run.metrics.get(m), (int, float)) for g in groups for run in g.runs)]
    rows = []
    reference = groups[0]
    for metric in metrics:
        for index, group in enumerate(groups):
            difference = difference_interval(
                reference.values(metric), group.values(metric),
                reference_seeds=reference.seeds if None not in reference.seeds else None,
                other_seeds=group.seeds if None not in group.seeds else None)
            row: Dict[str, Any] = {"metric": metric, "group": group.label, "runs": len(group.runs),
                                   "mean": difference.other.mean, "mean_half_width": difference.other.half_width,
                                   "missing": None}
            if index == 0:
                row.update(delta=math.nan, ci_low=math.nan, ci_high=math.nan, relative=math.nan, method="reference")
            else:
                row.update(delta=difference.delta, ci_low=difference.delta - difference.half_width,
                           ci_high=difference.delta + difference.half_width, relative=difference.relative,
                           method=difference.method)
                if not math.isfinite(difference.delta):
                    # No difference: a group has no value for the metric (no rebuild to time).
                    lacking = [g for g in (reference, group) if not math.isfinite(_mean(g.values(metric)))]
                    row.update(method="missing", missing=_why_missing(metric, lacking, reference))
            rows.append(row)
    return pd.DataFrame(rows, columns=["metric", "group", "runs", "mean", "mean_half_width", "delta", "ci_low",
                                       "ci_high", "relative", "method", "missing"])


#: Metrics only a run with a rebuild has.
_REBUILD_METRICS = ("rebuild_time_s", "rebuild.", "response_ms_by_period.rebuilding.")


def _mean(values: Sequence[float]) -> float:
    finite = [value for value in values if math.isfinite(value)]
    return sum(finite) / len(finite) if finite else math.nan


def _why_missing(metric: str, lacking: Sequence[Group], reference: Group) -> str:
    """Why a difference is missing, in words: "no rebuild" (in the reference, or in this
    group) for a rebuild's metric when the runs had none, else "no value"."""
    rebuild = any(metric == name or (name.endswith(".") and metric.startswith(name)) for name in _REBUILD_METRICS)
    if rebuild and lacking and all(run.metrics.get("rebuilds") == 0 for g in lacking for run in g.runs):
        reason = "no rebuild"
    else:
        reason = "no value"
    if lacking and all(g is reference for g in lacking):
        return f"{reason} in the reference"
    return reason


def delta_text(row: Mapping[str, Any]) -> str:
    """A row of :func:`compare_groups` as its Δ cell: "—" for the reference, the signed
    difference, or why there is none ("no rebuild", "no value"), never "nan"."""
    if row.get("method") == "reference":
        return "—"
    delta = row.get("delta")
    if isinstance(delta, (int, float)) and math.isfinite(delta):
        return f"{delta:+.4g}"
    missing = row.get("missing")
    return str(missing) if isinstance(missing, str) and missing else "—"


def overlay_figures(groups: Sequence[Group], output: PathLike, response_class: str = "all") -> List[Path]:
    """``rt`` (R(t) of each group, averaged over its replicates window by window), ``ct``
    (c(t), only when some run rebuilt) and ``cdf`` (response-time CDF of ``response_class``,
    replicates' histograms pooled), each as PNG and SVG in ``output``."""
    from matplotlib.figure import Figure

    from raidlab.output.plots import has_rebuild_progress
    from raidlab.experiments.sweep_plots import draw_cdf_overlay, draw_timeseries_overlay, save_png_and_svg

    directory = Path(output)
    timeseries: Dict[str, List["pd.DataFrame"]] = {}
    histograms: Dict[str, List["pd.DataFrame"]] = {}
    for group in groups:
        results = [run.load() for run in group.runs]
        timeseries[group.label] = [result.timeseries for result in results]
        histograms[group.label] = [result.histogram for result in results]
    written: List[Path] = []
    figure = Figure(figsize=(10, 5), layout="constrained")
    draw_timeseries_overlay(figure.subplots(), timeseries, "mean_response_ms", "R(t): mean response time (ms)")
    figure.suptitle("R(t)")
    written += save_png_and_svg(figure, directory / "rt")
    if any(has_rebuild_progress(frame) for frames in timeseries.values() for frame in frames):
        figure = Figure(figsize=(10, 4), layout="constrained")
        draw_timeseries_overlay(figure.subplots(), timeseries, "rebuilt_fraction", "c(t): fraction rebuilt")
        figure.suptitle("c(t)")
        written += save_png_and_svg(figure, directory / "ct")
    figure = Figure(figsize=(8, 5), layout="constrained")
    draw_cdf_overlay(figure.subplots(), histograms, response_class)
    figure.suptitle(f"Response-time CDF ({response_class} requests)")
    written += save_png_and_svg(figure, directory / "cdf")
    return written
