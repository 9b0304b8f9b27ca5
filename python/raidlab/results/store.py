"""The results store: run directories, sweep directories and their summary tables.

A *run directory* is what ``raidlab run`` writes (:mod:`raidlab.results`). A *sweep
directory* holds many, content-addressed::

    SWEEP_DIR/
      sweep.toml          the sweep specification it last ran (a copy)
      sweep.json          the sweep's manifest: name, base, axes, code version, run count,
                          executor, command line, times
      summary.parquet     one row per run of the specification: run id, status, case, the
                          axes' values, seed, then the summary metrics (below)
      runs/<run-id>/      one run directory per run; a run that failed holds error.json
                          (exception class, message, overrides) instead of results

The run id is a digest of what determines the run's results
(:func:`raidlab.experiments.sweep.run_id`), so a directory that holds a complete run
(``manifest.json`` written, no ``INCOMPLETE``) is a run that never needs to run again: that
is how sweeps skip finished runs and resume.

``summary.parquet`` is plain Parquet (no index, columns of integers, floats, booleans and
text), so pandas (``pd.read_parquet``), polars (``pl.read_parquet``) and DuckDB
(``SELECT * FROM 'summary.parquet'``) read it as it is. Its metric columns are the summary's
scalar fields, flattened to dotted names (``response_ms.read.p99``,
``drives.mean_utilization``, ``rebuild_time_s``); the first rebuild's fields are
``rebuild.<field>`` (``rebuild.outcome``, ``rebuild.units_by_piggyback``); lists become their
length (``failures``). A row is a pure function of the run's ``summary.json``, so rows read
back from run directories equal the rows of runs just made.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from raidlab.exceptions import RaidlabIOError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SWEEP_FILE",
    "SPEC_COPY",
    "RUNS_DIR",
    "SUMMARY_FILE",
    "ERROR_FILE",
    "LOCK_FILE",
    "FIXED_COLUMNS",
    "is_run_dir",
    "is_sweep_dir",
    "is_complete_run",
    "summary_metrics",
    "summary_columns",
    "summary_frame",
    "write_summary",
    "read_summary",
    "read_sweep_manifest",
    "read_run_summary",
    "write_error",
    "read_error",
    "SweepLock",
    "atomic_write_text",
]

SWEEP_FILE = "sweep.json"
SPEC_COPY = "sweep.toml"
RUNS_DIR = "runs"
SUMMARY_FILE = "summary.parquet"
ERROR_FILE = "error.json"
LOCK_FILE = ".sweep.lock"

#: Columns every summary table starts with, before the axes: the run's id, its status
#: (``done``, ``failed`` or ``pending``: not run yet, e.g. an interrupted sweep) and the index
#: of its case (one combination of the axes' values) in the specification's order.
FIXED_COLUMNS = ("run_id", "status", "case")
#: Columns every summary table ends with: why a failed run failed.
ERROR_COLUMNS = ("error_type", "error")

#: Summary fields left out of the metric columns: identity and version (the run id stands
#: for them), the seed (an axis column), free text lists.
_SKIPPED_FIELDS = {"config_hash", "raidlab_version", "seed", "warnings"}

PathLike = Union[str, "os.PathLike[str]"]


# ---------------------------------------------------------------------------------------------
# Directories
# ---------------------------------------------------------------------------------------------


def is_sweep_dir(path: PathLike) -> bool:
    """Whether ``path`` is a sweep directory (it holds ``sweep.json``)."""
    return (Path(path) / SWEEP_FILE).is_file()


def is_run_dir(path: PathLike) -> bool:
    """Whether ``path`` looks like a run directory (it holds ``summary.json``)."""
    from raidlab.results import SUMMARY_FILE as RUN_SUMMARY

    return (Path(path) / RUN_SUMMARY).is_file()


def is_complete_run(run_dir: PathLike) -> bool:
    """Whether ``run_dir`` holds a run whose saving finished: its manifest (written last) is
    there and no ``INCOMPLETE`` marker is. Two ``stat`` calls, no reading."""
    from raidlab.results import INCOMPLETE_FILE, MANIFEST_FILE

    directory = Path(run_dir)
    return (directory / MANIFEST_FILE).is_file() and not (directory / INCOMPLETE_FILE).exists()


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, so a reader (or a
    kill) never sees half a file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise RaidlabIOError(error.strerror or str(error), file=str(path), errno=error.errno) from None


# ---------------------------------------------------------------------------------------------
# Summary rows
# ---------------------------------------------------------------------------------------------


def _scalar(value: Any) -> Any:
    """A JSON scalar as a table cell: non-finite floats become missing (as in summary.json)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def summary_metrics(summary: Mapping[str, Any]) -> Dict[str, Any]:
    """The metric columns of one run: the scalar fields of its summary flattened to dotted
    names, the first rebuild's fields as ``rebuild.<field>``, lists as their length."""
    metrics: Dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), item)
        elif isinstance(value, list):
            metrics[prefix] = len(value)
        else:
            metrics[prefix] = _scalar(value)

    for key, value in summary.items():
        if key in _SKIPPED_FIELDS:
            continue
        if key == "rebuilds" and isinstance(value, list):
            metrics["rebuilds"] = len(value)
            if value and isinstance(value[0], Mapping):
                walk("rebuild", value[0])
            continue
        walk(key, value)
    return metrics


def _summary_columns(rows: Sequence[Mapping[str, Any]], axis_columns: Sequence[str]) -> List[str]:
    """The summary table's columns: the fixed ones, the axes in specification order,
    ``seed``, the metrics sorted by name, the error columns."""
    leading = [*FIXED_COLUMNS, *axis_columns, "seed"]
    known = set(leading) | set(ERROR_COLUMNS)
    metric_names = sorted({key for row in rows for key in row if key not in known})
    return [*leading, *metric_names, *ERROR_COLUMNS]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def summary_frame(
    rows: Sequence[Mapping[str, Any]],
    axis_columns: Sequence[str],
) -> "pd.DataFrame":
    """The summary table of ``rows`` (dicts with the fixed columns, the axes, ``seed``, the
    metrics and, for failed runs, the error columns), in the order given. Columns: the fixed
    ones, the axes in specification order, ``seed``, the metrics sorted by name, the error
    columns; so the table depends only on the rows, not on the order runs finished in."""
    import pandas as pd

    columns = _summary_columns(rows, axis_columns)
    data = {column: [row.get(column) for row in rows] for column in columns}
    frame = pd.DataFrame(data, columns=columns)
    # Columns of only missing values have no type to infer: store them as text, not as
    # Parquet's null type, which some readers handle badly.
    for column in columns:
        if frame[column].isna().all():
            frame[column] = frame[column].astype("string")
    return frame


def summary_columns(rows: Sequence[Mapping[str, Any]], axis_columns: Sequence[str]) -> Dict[str, List[Any]]:
    """The summary table of ``rows`` as columns (name → values, ``None`` where missing, a
    float NaN included), the columns of :func:`summary_frame` in its order: what a sweep
    writes, without pandas (whose import takes longer than writing a sweep's table)."""
    return {column: [None if _missing(value) else value for value in (row.get(column) for row in rows)]
            for column in _summary_columns(rows, axis_columns)}


def write_summary(path: PathLike, table: Union["pd.DataFrame", Mapping[str, Sequence[Any]]]) -> Path:
    """Write ``table`` as ``summary.parquet`` at ``path`` atomically (temporary file, then a
    rename): columns from :func:`summary_columns` by :func:`raidlab.results.write_parquet`,
    every column nullable (a column of only missing values is text; integers with missing
    values stay integers); or a DataFrame by pyarrow, without its index."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if isinstance(table, Mapping):
            from raidlab.results import write_parquet

            write_parquet(temporary, table, nullable=True)
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pandas(table, preserve_index=False), temporary, write_page_checksum=True)
        os.replace(temporary, target)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise RaidlabIOError(error.strerror or str(error), file=str(target), errno=error.errno) from None
    return target


def read_summary(sweep_dir: PathLike) -> "pd.DataFrame":
    """The summary table of a sweep directory."""
    import pandas as pd
    import pyarrow as pa

    path = Path(sweep_dir) / SUMMARY_FILE
    if not path.is_file():
        raise RaidlabIOError("the sweep has no summary table yet (run the sweep to make it)", file=str(path))
    try:
        return pd.read_parquet(path, page_checksum_verification=True)
    except (OSError, pa.ArrowException, ValueError) as error:
        raise RaidlabIOError(f"not a readable Parquet file: {error}", file=str(path)) from None


def read_sweep_manifest(sweep_dir: PathLike) -> Dict[str, Any]:
    """``sweep.json`` of a sweep directory, with the fields the commands read checked: its
    ``name`` (text) and ``axes`` (a list of ``{keys: [text, …]}``). A damaged file is a
    :class:`RaidlabIOError` naming the file and the field."""
    from raidlab.results import _MISSING, _field_error, _read_json

    path = Path(sweep_dir) / SWEEP_FILE
    manifest = _read_json(path)
    name = manifest.get("name", _MISSING)
    if not isinstance(name, str):
        raise _field_error(path, "name", "expected the sweep's name", name)
    axes = manifest.get("axes", _MISSING)
    if not isinstance(axes, list):
        raise _field_error(path, "axes", "expected a list of axes", axes)
    for number, axis in enumerate(axes):
        keys = axis.get("keys", _MISSING) if isinstance(axis, dict) else axis
        if not (isinstance(keys, list) and all(isinstance(key, str) for key in keys)):
            raise _field_error(path, f"axes[{number}].keys", "expected a list of key paths", keys)
    return manifest


def read_run_summary(run_dir: PathLike) -> Dict[str, Any]:
    """``summary.json`` of a run directory (checked as :meth:`raidlab.Result.load` checks it)."""
    from raidlab.results import SUMMARY_FILE as RUN_SUMMARY
    from raidlab.results import _check_summary, _read_json

    path = Path(run_dir) / RUN_SUMMARY
    summary = _read_json(path)
    _check_summary(summary, path)
    return summary


# ---------------------------------------------------------------------------------------------
# Failed runs
# ---------------------------------------------------------------------------------------------


def write_error(run_dir: PathLike, record: Mapping[str, Any]) -> Path:
    """Record why a run failed in ``run_dir/error.json`` (the directory is created)."""
    directory = Path(run_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(directory), errno=error.errno) from None
    path = directory / ERROR_FILE
    atomic_write_text(path, json.dumps(dict(record), indent=2) + "\n")
    return path


def read_error(run_dir: PathLike) -> Optional[Dict[str, Any]]:
    """The failure recorded in ``run_dir``, if any."""
    path = Path(run_dir) / ERROR_FILE
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"error_type": "unreadable", "error": f"{path} could not be read"}
    return value if isinstance(value, dict) else None


# ---------------------------------------------------------------------------------------------
# One writer per sweep directory
# ---------------------------------------------------------------------------------------------


@dataclass
class SweepLock:
    """Keeps two sweeps from writing one sweep directory at once: ``.sweep.lock`` holds the
    process id of the sweep that runs there. A lock whose process is gone (the sweep was
    killed) is taken over."""

    directory: Path

    def __enter__(self) -> "SweepLock":
        path = self.directory / LOCK_FILE
        for _ in range(2):
            try:
                descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                owner = _lock_owner(path)
                if owner is not None and owner != os.getpid() and _alive(owner):
                    raise RaidlabIOError(
                        f"another sweep (process {owner}) is running in this directory", file=str(path)
                    ) from None
                path.unlink(missing_ok=True)  # left by a sweep that was killed
                continue
            except OSError as error:
                raise RaidlabIOError(error.strerror or str(error), file=str(path), errno=error.errno) from None
            with os.fdopen(descriptor, "w") as handle:
                handle.write(f"{os.getpid()}\n")
            return self
        raise RaidlabIOError("could not take the sweep lock", file=str(path))

    def __exit__(self, *exc: Any) -> None:
        path = self.directory / LOCK_FILE
        if _lock_owner(path) == os.getpid():
            path.unlink(missing_ok=True)


def _lock_owner(path: Path) -> Optional[int]:
    try:
        return int(path.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

