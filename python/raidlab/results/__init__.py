"""Results of a run: a summary dict and columnar tables, saved as JSON + Parquet.

This package is what raidlab writes for programs to read back: a run directory (this
module) and a sweep directory of many runs with its summary table
(:mod:`raidlab.results.store`). Importing it does not import :mod:`~raidlab.results.store`.

A run directory holds everything needed to inspect, plot or reproduce a run::

    config.toml         the resolved configuration (every default filled in)
    manifest.json       raidlab version, git commit, seed, config hash, UTC time, command line,
                        overrides
    summary.json        the run summary
    <table>.parquet     one file per result table (timeseries, histogram, drives, outcomes)

A save writes a new directory beside the target and then puts it in the target's place, so
a directory holds one run's files and nothing from an earlier run; a save that does not
finish leaves the earlier run as it was. (Directories written by raidlab before that may
hold an ``INCOMPLETE`` file, left by a save that did not finish: loading refuses them.)

Plots and reports read these files; they never rerun the simulation. pandas and pyarrow are
imported only when a table is read as a DataFrame or loaded from a file: a run's own tables
are written by the core (:func:`write_parquet`), so ``raidlab run`` does without them.
"""

from __future__ import annotations

import datetime as _datetime
import json
import math
import os
import platform
import shlex
import shutil
import subprocess
import sys
import threading
import time
from errno import ENOENT
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from raidlab.exceptions import RaidlabIOError

if TYPE_CHECKING:  # imported where a DataFrame is made or a file read (see the module docs)
    import pandas as pd

__all__ = ["Result", "TABLE_COLUMNS", "OPTIONAL_COLUMNS", "REBUILD_PERIODS", "CONFIG_FILE", "MANIFEST_FILE", "SUMMARY_FILE", "INCOMPLETE_FILE"]

CONFIG_FILE = "config.toml"
MANIFEST_FILE = "manifest.json"
SUMMARY_FILE = "summary.json"
TABLE_SUFFIX = ".parquet"
#: Marks a run directory whose writing has not finished.
INCOMPLETE_FILE = "INCOMPLETE"
INCOMPLETE_TEXT = (
    "raidlab began saving a run into this directory and did not finish (interrupted, or a\n"
    "write failed): its files may be missing, or left from an earlier run. Run it again.\n"
)

#: The tables every run produces and the columns they are documented to have (the core may
#: add columns; a table the core did not produce reads as empty with these columns).
TABLE_COLUMNS: Dict[str, List[str]] = {
    "timeseries": [
        "window_start_s",
        "window_end_s",
        "arrivals",
        "completions",
        "mean_response_ms",
        "read_mean_response_ms",
        "throughput_iops",
    ],
    "histogram": ["class", "upper_ms", "count"],
    "drives": ["drive", "utilization", "mean_queue_length", "operations", "failed_at_s"],
    "outcomes": ["time_s", "kind", "drive", "detail"],
}

#: Documented columns that runs of older raidlab versions lack (they came with rebuild onto
#: hot spares): a table may go without them, but where present they must hold numbers.
#: ``rebuilt_fraction`` is c(t), the fraction of the lost drive's rebuild units current on the
#: spare at each window's end (NaN before a rebuild starts and in runs without rebuild).
#: ``lost`` counts the requests of each window answered with data loss, which no response
#: statistic includes. ``cache_read_hit_ratio`` and ``cache_rgr`` are a run's buffer cache in
#: front of the array (``[cache]``): the read hit ratio and RGR (surviving-drive reads per read
#: block) of each window, NaN in windows without reads and absent without a cache.
OPTIONAL_COLUMNS: Dict[str, List[str]] = {
    "timeseries": ["rebuilt_fraction", "lost", "cache_read_hit_ratio", "cache_rgr"],
    "drives": ["user_busy_s", "rebuild_busy_s", "rebuild_mb", "rebuild_operations", "rebuild_runs",
               "rebuild_run_first_busy_s", "rebuild_blocked_s"],
}

#: The documented columns that hold text; every other documented column holds numbers.
TEXT_COLUMNS = {"histogram": ["class"], "outcomes": ["kind", "detail"]}

#: The periods of ``summary["response_ms_by_period"]``, in the order a run passes through them.
REBUILD_PERIODS = ("normal", "degraded", "rebuilding", "after", "healing", "data_loss")

PathLike = Union[str, "os.PathLike[str]"]


class Result:
    """The output of one simulation run.

    ``summary`` is a dict (see ``summary.json``); ``tables`` maps table names to DataFrames,
    also reachable as :attr:`timeseries`, :attr:`histogram`, :attr:`drives` and
    :attr:`outcomes`. ``manifest`` is set once the result has been saved or loaded.
    """

    def __init__(
        self,
        *,
        summary: Mapping[str, Any],
        tables: Mapping[str, Any],
        resolved_config: str,
        config_hash: str,
        manifest: Optional[Mapping[str, Any]] = None,
    ) -> None:
        self.summary: Dict[str, Any] = dict(summary)
        # Each table a DataFrame, or (from the core) a dict of column name → memoryview of
        # int64 ("q") or float64 ("d") values, or list of text; made a DataFrame when first
        # read as one (pandas takes a memoryview as it is).
        self._tables: Dict[str, Any] = dict(tables)
        self.resolved_config = resolved_config
        self.config_hash = config_hash
        self.manifest: Optional[Dict[str, Any]] = dict(manifest) if manifest is not None else None
        #: The run directory it was saved to or loaded from, if any.
        self.directory: Optional[Path] = None

    @classmethod
    def from_core(cls, output: Mapping[str, Any]) -> "Result":
        """Build a result from the dict returned by ``raidlab._core.run``."""
        return cls(
            summary=json.loads(output["summary"]),
            tables={name: dict(columns) for name, columns in output["tables"].items()},
            resolved_config=output["resolved_config"],
            config_hash=output["config_hash"],
        )

    # -- tables ---------------------------------------------------------------------------

    @property
    def tables(self) -> Dict[str, "pd.DataFrame"]:
        """Every table, by name, as a pandas DataFrame."""
        for name in self._tables:
            self._frame(name)
        return self._tables

    @tables.setter
    def tables(self, tables: Mapping[str, Any]) -> None:
        self._tables = dict(tables)

    def _frame(self, name: str) -> "pd.DataFrame":
        table = self._tables[name]
        if isinstance(table, dict):
            import pandas as pd

            table = self._tables[name] = pd.DataFrame(table)
        return table

    def table(self, name: str) -> "pd.DataFrame":
        """The table ``name``; a documented table the run did not produce reads as empty."""
        if name in self._tables:
            return self._frame(name)
        if name in TABLE_COLUMNS:
            import pandas as pd

            return pd.DataFrame({column: [] for column in TABLE_COLUMNS[name]})
        raise KeyError(f"no table {name!r}; the run has {sorted(self._tables)}")

    def column(self, table: str, name: str) -> Optional[List[Any]]:
        """The values of column ``name`` of ``table`` as a list, without making a DataFrame
        of a table that is not one yet; ``None`` when the table or the column is missing."""
        values = self._tables.get(table)
        if values is None:
            return None
        if isinstance(values, dict):
            column = values.get(name)
        else:
            column = values[name] if name in values.columns else None
        if column is None:
            return None
        return column.tolist() if hasattr(column, "tolist") else list(column)

    @property
    def timeseries(self) -> "pd.DataFrame":
        """Per time window: arrivals, completions, mean response times, throughput and, from
        runs with rebuild support on, ``rebuilt_fraction`` (c(t), NaN while nothing rebuilds)."""
        return self.table("timeseries")

    @property
    def histogram(self) -> "pd.DataFrame":
        """Response-time histogram per class (``all``, ``read``, ``write``, ``degraded_read``, ``failed_set_read``)."""
        return self.table("histogram")

    @property
    def drives(self) -> "pd.DataFrame":
        """Per drive slot (spares after the members): utilization, mean queue length,
        operations, failure time (NaN if none) and, in newer runs, busy seconds for user and
        rebuild I/O (``user_busy_s``, ``rebuild_busy_s``), rebuild megabytes (``rebuild_mb``),
        rebuild operations (``rebuild_operations``), their runs between user operations
        (``rebuild_runs``: under VSM, one idle period's worth each) and the busy seconds of each
        run's first (``rebuild_run_first_busy_s``), and the seconds the slot's DOR process
        waited on a full buffer (``rebuild_blocked_s``; 0 under SOR)."""
        return self.table("drives")

    @property
    def outcomes(self) -> "pd.DataFrame":
        """Events that change the array's state, by ``kind``: ``drive_failed``,
        ``spare_arrived``, ``rebuild_started``, ``rebuild_complete``, ``rebuild_abandoned``,
        ``healing_started``, ``healing_complete``, ``healing_abandoned``, ``data_loss``."""
        return self.table("outcomes")

    # -- summary shortcuts ------------------------------------------------------------------

    @property
    def seed(self) -> Optional[int]:
        """The run's seed (from the summary)."""
        seed = self.summary.get("seed")
        return int(seed) if seed is not None else None

    @property
    def data_loss(self) -> bool:
        """Whether the simulated array lost data."""
        return bool(self.summary.get("data_loss", False))

    @property
    def cancelled(self) -> bool:
        """Whether the run was stopped early by its progress callback."""
        return bool(self.summary.get("cancelled", False))

    @property
    def rebuilds(self) -> List[Dict[str, Any]]:
        """The summary's rebuilds onto spares, in order of start (empty for runs without
        rebuild, and for runs of raidlab versions before it)."""
        return list(self.summary.get("rebuilds") or [])

    @property
    def failures(self) -> List[Dict[str, Any]]:
        """The summary's drive failures in time order, each told what its slot held when it
        failed (see :func:`failures_in_time_order`)."""
        return failures_in_time_order(self.summary)

    def __repr__(self) -> str:
        completed = self.summary.get("requests_completed")
        return (
            f"<Result config_hash={self.config_hash[:8]} requests_completed={completed} "
            f"data_loss={self.data_loss}>"
        )

    # -- files ------------------------------------------------------------------------------

    def save(
        self,
        run_dir: PathLike,
        *,
        overrides: Sequence[str] = (),
        command_line: Optional[Sequence[str]] = None,
        force: bool = False,
        name: Optional[str] = None,
    ) -> Path:
        """Write the run directory and return its path.

        ``overrides`` (the ``--set`` values), ``command_line`` (default ``sys.argv``) and
        ``name`` (the configuration's, as plots title the run) are recorded in the manifest.

        The files are written into a new directory beside ``run_dir``, which then takes its
        place: an earlier run there is replaced as a whole (no file of it is left behind),
        and a save that does not finish (Ctrl-C, a failed write) leaves whatever was there
        as it was. A directory that is not a run directory (it has files, none of them
        ``manifest.json``, ``summary.json`` or ``INCOMPLETE``) is refused unless ``force``.
        """
        directory = Path(run_dir)
        try:
            if directory.exists() and not force:
                _check_replaceable(directory)
            directory.parent.mkdir(parents=True, exist_ok=True)
            staging = directory.parent / f".{directory.name}.saving-{os.getpid()}"
            if staging.exists():
                shutil.rmtree(staging)
            staging.mkdir()
            try:
                (staging / CONFIG_FILE).write_text(self.resolved_config, encoding="utf-8")
                _write_json(staging / SUMMARY_FILE, self.summary)
                table_files = {}
                for table_name, table in self._tables.items():
                    file_name = table_name + TABLE_SUFFIX
                    _write_table(table, staging / file_name)
                    table_files[table_name] = file_name
                manifest = self._manifest(table_files, overrides, command_line)
                if name:
                    manifest["config_name"] = name
                _write_json(staging / MANIFEST_FILE, manifest)
                _put_in_place(staging, directory)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        except OSError as error:
            raise RaidlabIOError(
                error.strerror or str(error),
                file=str(error.filename or directory),
                errno=error.errno,
            ) from None
        self.manifest = manifest
        self.directory = directory
        return directory

    def _manifest(
        self,
        table_files: Mapping[str, str],
        overrides: Sequence[str],
        command_line: Optional[Sequence[str]],
    ) -> Dict[str, Any]:
        from raidlab import __version__

        git, platform_text = _manifest_facts()
        argv = list(sys.argv if command_line is None else command_line)
        return {
            "raidlab_version": __version__,
            "git_commit": git.get("commit"),
            "git_dirty": git.get("dirty"),
            "seed": self.seed,
            "config_hash": self.config_hash,
            "created_utc": _datetime.datetime.now(_datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            ),
            "command_line": shlex.join(argv),
            "overrides": list(overrides),
            "python": platform.python_version(),
            "platform": platform_text,
            "files": {
                "config": CONFIG_FILE,
                "summary": SUMMARY_FILE,
                "tables": dict(table_files),
            },
        }

    @classmethod
    def load(cls, run_dir: PathLike) -> "Result":
        """Read a run directory written by :meth:`save`."""
        directory = Path(run_dir)
        if not directory.is_dir():
            raise RaidlabIOError("not a run directory", file=str(directory), errno=None)
        if (directory / INCOMPLETE_FILE).exists():
            raise RaidlabIOError(
                "saving this run directory did not finish (interrupted, or a write failed); "
                "its files may be missing or from an earlier run: run it again",
                file=str(directory / INCOMPLETE_FILE),
            )
        manifest = _read_json(directory / MANIFEST_FILE) if (directory / MANIFEST_FILE).exists() else None
        if manifest is not None:
            _check_config_hash(manifest, directory / MANIFEST_FILE)
        summary = _read_json(directory / SUMMARY_FILE)
        _check_summary(summary, directory / SUMMARY_FILE)
        resolved_config = _read_text(directory / CONFIG_FILE)
        if manifest is not None and "files" in manifest:
            table_files = {name: directory / file for name, file in _manifest_tables(manifest, directory).items()}
        else:
            table_files = {path.stem: path for path in sorted(directory.glob("*" + TABLE_SUFFIX))}
        tables = {name: _read_table(name, path) for name, path in table_files.items()}
        config_hash = (manifest or {}).get("config_hash") or summary.get("config_hash", "")
        result = cls(
            summary=summary,
            tables=tables,
            resolved_config=resolved_config,
            config_hash=config_hash,
            manifest=manifest,
        )
        result.directory = directory
        return result


#: Files whose presence makes a directory a run directory, which a save may replace.
_RUN_MARKERS = (MANIFEST_FILE, SUMMARY_FILE, INCOMPLETE_FILE)


def failures_in_time_order(summary: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The summary's ``failures`` in time order (older summaries listed them by drive slot), each a
    copy with ``holds``: what the slot held when it failed, read from the summary's
    ``rebuilds`` (a spare's slot holds a member once a rebuild onto it is complete):

    * ``"member"``: a member in its own slot (``member`` is the slot);
    * ``"member in spare slot"``: a member a completed rebuild moved into this spare's slot
      (``member``), so the failure is a member's, not a spare's;
    * ``"rebuild target"``: the spare a rebuild of ``member`` was writing when it failed;
    * ``"spare"``: an idle spare;
    * ``"drive"``: not known (a summary without ``drives_in_array``).
    """
    members = summary.get("drives_in_array")
    rebuilds = [r for r in summary.get("rebuilds") or [] if isinstance(r, Mapping)]
    described = []
    for failure in summary.get("failures") or []:
        slot, at_s = failure.get("drive"), failure.get("at_s")
        record = dict(failure, holds="drive", member=None)
        # The latest rebuild onto this slot that had started by the failure.
        onto = [r for r in rebuilds if r.get("target_slot") == slot and at_s is not None
                and r.get("started_at_s") is not None and float(r["started_at_s"]) <= float(at_s)]
        if onto:
            rebuild = max(onto, key=lambda r: float(r["started_at_s"]))
            ended = rebuild.get("ended_at_s")
            if rebuild.get("outcome") == "complete" and ended is not None and float(ended) <= float(at_s):
                record.update(holds="member in spare slot", member=rebuild.get("member"))
            elif ended is None or float(ended) >= float(at_s):
                record.update(holds="rebuild target", member=rebuild.get("member"))
            else:
                record.update(holds="spare")
        elif isinstance(members, int) and isinstance(slot, int):
            if slot < members:
                record.update(holds="member", member=slot)
            else:
                record.update(holds="spare")
        described.append(record)
    return sorted(described, key=lambda f: (float(f["at_s"]) if f.get("at_s") is not None else math.inf))


def is_run_directory(directory: Path) -> bool:
    """Whether ``directory`` holds a run (or is empty): what a save replaces without
    ``force``."""
    try:
        entries = [entry.name for entry in directory.iterdir()]
    except OSError:
        return False
    return not entries or any(name in entries for name in _RUN_MARKERS)


def _check_replaceable(directory: Path) -> None:
    if not directory.is_dir():
        raise RaidlabIOError("exists and is not a directory", file=str(directory))
    if not is_run_directory(directory):
        raise RaidlabIOError(
            "exists and is not a run directory (it has no manifest.json or summary.json); "
            "a save would replace it as a whole: choose another directory, or force it",
            file=str(directory),
        )


def _put_in_place(staging: Path, directory: Path) -> None:
    """Move the finished ``staging`` directory to ``directory``, replacing what is there as a
    whole. The earlier directory is moved aside first and removed last; an interruption in
    between moves it back."""
    if not directory.exists():
        os.rename(staging, directory)
        return
    aside = directory.parent / f".{directory.name}.replaced-{os.getpid()}"
    if aside.exists():
        shutil.rmtree(aside)
    os.rename(directory, aside)
    try:
        os.rename(staging, directory)
    except BaseException:
        os.rename(aside, directory)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _write_table(table: Any, path: Path) -> None:
    """One table as Parquet: the core's columns by :func:`write_parquet`; a DataFrame
    (loaded, or made by a user) by pyarrow, which keeps any dtype it holds."""
    if isinstance(table, dict):
        write_parquet(path, table)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pandas(table, preserve_index=False), path, write_page_checksum=True)


def write_parquet(path: PathLike, columns: Mapping[str, Any], *, nullable: bool = False) -> None:
    """Write ``columns`` (name → values, all of one length) as a Parquet file at ``path``, by
    the core (``raidlab._core.write_parquet``), without pandas, pyarrow or NumPy: one row
    group, plain uncompressed pages, each with its CRC-32.

    Values: a ``memoryview`` of format ``"q"`` or ``"d"`` (as ``raidlab._core.run`` hands
    numbers over), a NumPy array of integers, truth values (written as integers) or floats,
    or a sequence of text, of integers or of numbers (floats). With ``nullable`` (a sweep's
    summary table), every column is nullable: a sequence of text, truth values, integers or
    numbers with ``None`` for a null, its kind that of the values that are not ``None`` (a
    column of nulls only is text). Raises ``TypeError`` for a column of mixed kinds and
    :class:`RaidlabIOError` naming ``path`` if the file cannot be written."""
    from raidlab import _core

    _core.write_parquet(
        os.fspath(path),
        [(name, *(_nullable_parquet_column(name, values) if nullable else _parquet_column(values)))
         for name, values in columns.items()],
        nullable,
    )


def _parquet_column(values: Any) -> Tuple[str, Any]:
    """(kind, values) of a column without nulls, as ``raidlab._core.write_parquet`` takes it:
    numbers as ``bytes`` in native byte order where they come as a memoryview or an array."""
    if isinstance(values, memoryview) and values.format in ("q", "d"):
        return ("int64" if values.format == "q" else "float64"), values.tobytes()
    if hasattr(values, "to_numpy"):  # a pandas Series
        values = values.to_numpy()
    dtype = getattr(values, "dtype", None)
    if dtype is not None and dtype.kind in "iub":
        return "int64", values.astype("=i8", copy=False).tobytes()
    if dtype is not None and dtype.kind == "f":
        return "float64", values.astype("=f8", copy=False).tobytes()
    items = list(values)
    if all(isinstance(item, str) for item in items):
        return "string", items
    if items and all(isinstance(item, int) for item in items):
        return "int64", [int(item) for item in items]
    if items and all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in items):
        return "float64", [float(item) for item in items]
    raise TypeError("a column holds integers, floats or text, one kind throughout")


def _nullable_parquet_column(name: str, values: Any) -> Tuple[str, List[Any]]:
    """(kind, values with ``None`` for nulls) of a nullable column: its kind from the values
    that are not ``None`` (text, truth values, integers, or numbers with a float among them);
    a column of nulls only is text."""
    items = list(values)
    present = [item for item in items if item is not None]
    if all(isinstance(item, str) for item in present):
        return "string", items
    if all(isinstance(item, bool) for item in present):
        return "bool", items
    if all(isinstance(item, int) and not isinstance(item, bool) for item in present):
        return "int64", items
    if all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in present):
        return "float64", [None if item is None else float(item) for item in items]
    raise TypeError(f"column {name!r} mixes kinds of values: text, truth values and numbers apart")


def _write_json(path: Path, value: Any) -> None:
    path.write_text(
        json.dumps(_json_safe(value), indent=2, sort_keys=False, allow_nan=False) + "\n",
        encoding="utf-8",
    )


def _json_safe(value: Any) -> Any:
    """Non-finite floats become null (strict JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    return value


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(path), errno=error.errno) from None
    except UnicodeDecodeError as error:
        raise RaidlabIOError(f"not UTF-8 text: {error}", file=str(path)) from None


def _read_json(path: Path) -> Dict[str, Any]:
    text = _read_text(path)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise RaidlabIOError(f"not valid JSON: {error}", file=str(path)) from None
    if not isinstance(value, dict):
        raise RaidlabIOError(
            f"expected a JSON object, found {type(value).__name__}", file=str(path)
        )
    return value


def _is_integer(value: Any) -> bool:
    # JSON true/false arrive as bool, which is an int to Python but not a number to a reader.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """A finite JSON number (Python's json reads ``Infinity`` and ``NaN`` too)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_number_or_null(value: Any) -> bool:
    return value is None or _is_number(value)


def _check_summary(summary: Mapping[str, Any], path: Path) -> None:
    """The summary fields that results, plots and reports read must have the types the core
    writes; a hand-edited or damaged ``summary.json`` fails here, naming the field, rather than
    as a traceback in whatever reads it first. Fields a summary may lack (older runs) are
    skipped; those every summary has had since the first are required, so that an emptied
    file is not read as a run that did nothing."""
    for key in _ALWAYS_IN_A_SUMMARY:
        if key not in summary:
            raise _field_error(path, key, "every run's summary has it", _MISSING)
    _check_config_hash(summary, path)
    if "seed" in summary and summary["seed"] is not None and not _is_integer(summary["seed"]):
        raise _field_error(path, "seed", "expected a whole number", summary["seed"])
    for flag in ("data_loss", "cancelled"):
        if flag in summary and not isinstance(summary[flag], bool):
            raise _field_error(path, flag, "expected true or false", summary[flag])
    failures = summary.get("failures", [])
    if not isinstance(failures, list):
        raise _field_error(path, "failures", "expected a list of {drive, at_s} objects", failures)
    for index, failure in enumerate(failures):
        field = f"failures[{index}]"
        if not isinstance(failure, Mapping):
            raise _field_error(path, field, "expected a {drive, at_s} object", failure)
        drive = failure.get("drive", _MISSING)
        if not _is_integer(drive):
            raise _field_error(path, f"{field}.drive", "expected a drive number", drive)
        at_s = failure.get("at_s", _MISSING)
        if not _is_number(at_s):
            raise _field_error(path, f"{field}.at_s", "expected a number of seconds", at_s)
    _check_run_fields(summary, path)
    # Rebuild onto spares came later: runs from before it have none of these keys.
    if "rebuild_time_s" in summary and not _is_number_or_null(summary["rebuild_time_s"]):
        raise _field_error(path, "rebuild_time_s", "expected a number of seconds or null", summary["rebuild_time_s"])
    _check_rebuilds(summary.get("rebuilds", []), path)
    _check_periods(summary.get("response_ms_by_period", {}), path)


def _is_count(value: Any) -> bool:
    return _is_integer(value) and value >= 0


#: Fields every summary the core has written has: from the first version on.
_ALWAYS_IN_A_SUMMARY = ("simulated_seconds", "requests_completed", "response_ms")

#: Top-level summary fields the CLI, plots and reports read: the check and what it expects
#: (checked where present).
_RUN_FIELDS = (
    ("simulated_seconds", _is_number, "expected a number of seconds"),
    ("requests_completed", _is_count, "expected a count of requests"),
    ("lost_requests", _is_count, "expected a count of requests"),
    ("crashed_requests", _is_count, "expected a count of requests"),
    ("crashes_at_s", lambda value: isinstance(value, list) and all(_is_number(t) for t in value),
     "expected a list of seconds"),
    ("data_loss_at_s", _is_number_or_null, "expected a number of seconds or null"),
    ("arrival_rate_per_s", _is_number_or_null, "expected requests per second or null"),
)

#: Statistics of each ``response_ms`` class, all milliseconds or null but the count.
_RESPONSE_STATS = ("mean", "p50", "p90", "p99", "max")

#: Counts of the ``content`` object (present when the content model was on).
_CONTENT_COUNTS = ("sectors_checked", "stale_sectors", "stale_reads", "rebuilt_sectors_checked", "rebuilt_sectors_wrong")


def _check_run_fields(summary: Mapping[str, Any], path: Path) -> None:
    """The run's own fields (times, counts, response times, drives, warnings, content): of
    the types the core writes, where present."""
    for key, check, expected in _RUN_FIELDS:
        if key in summary and not check(summary[key]):
            raise _field_error(path, key, expected, summary[key])
    response = summary.get("response_ms", {})
    if not isinstance(response, Mapping):
        raise _field_error(path, "response_ms", "expected an object of response-time classes", response)
    for name, stats in response.items():
        field = f"response_ms.{name}"
        if not isinstance(stats, Mapping):
            raise _field_error(path, field, "expected a {count, mean, p50, p90, p99, max} object", stats)
        if "count" in stats and not _is_count(stats["count"]):
            raise _field_error(path, f"{field}.count", "expected a count of requests", stats["count"])
        for key in _RESPONSE_STATS:
            if key in stats and not _is_number_or_null(stats[key]):
                raise _field_error(path, f"{field}.{key}", "expected milliseconds or null", stats[key])
    drives = summary.get("drives", {})
    if not isinstance(drives, Mapping):
        raise _field_error(path, "drives", "expected an object", drives)
    for key in ("mean_utilization", "max_utilization"):
        if key in drives and not _is_number_or_null(drives[key]):
            raise _field_error(path, f"drives.{key}", "expected a fraction or null", drives[key])
    if "disk_operations" in drives and not _is_count(drives["disk_operations"]):
        raise _field_error(path, "drives.disk_operations", "expected a count of operations", drives["disk_operations"])
    warnings = summary.get("warnings", [])
    if not (isinstance(warnings, list) and all(isinstance(warning, str) for warning in warnings)):
        raise _field_error(path, "warnings", "expected a list of text", warnings)
    content = summary.get("content")
    if content is not None:
        if not isinstance(content, Mapping):
            raise _field_error(path, "content", "expected an object or null", content)
        for key in _CONTENT_COUNTS:
            if key in content and not _is_count(content[key]):
                raise _field_error(path, f"content.{key}", "expected a count", content[key])


#: Fields of each ``rebuilds`` entry that the core always writes with a value: the check and
#: what it expects.
_REBUILD_REQUIRED = (
    ("member", _is_integer, "expected a member number"),
    ("target_slot", _is_integer, "expected a drive slot number"),
    ("failed_at_s", _is_number, "expected a number of seconds"),
    ("started_at_s", _is_number, "expected a number of seconds"),
)
#: Fields that are null until the rebuild ends (or when the rate is undefined).
_REBUILD_NULLABLE = ("ended_at_s", "rebuild_time_s", "target_write_mb_s")
#: Unit counts: whole numbers where present.
_REBUILD_COUNTS = ("units", "units_by_executor", "units_by_user_writes", "units_by_piggyback")


def _check_rebuilds(rebuilds: Any, path: Path) -> None:
    """``rebuilds``: a list of objects, each with the fields the CLI and the plots read."""
    if not isinstance(rebuilds, list):
        raise _field_error(path, "rebuilds", "expected a list of rebuild objects", rebuilds)
    for index, rebuild in enumerate(rebuilds):
        field = f"rebuilds[{index}]"
        if not isinstance(rebuild, Mapping):
            raise _field_error(path, field, "expected a rebuild object", rebuild)
        for key, check, expected in _REBUILD_REQUIRED:
            value = rebuild.get(key, _MISSING)
            if not check(value):
                raise _field_error(path, f"{field}.{key}", expected, value)
        # Any text: readers show it as it is, so a newer core's outcome still loads.
        outcome = rebuild.get("outcome", _MISSING)
        if not isinstance(outcome, str):
            raise _field_error(path, f"{field}.outcome", 'expected text ("complete", "abandoned" or "running")', outcome)
        for key in _REBUILD_NULLABLE:
            if key in rebuild and not _is_number_or_null(rebuild[key]):
                raise _field_error(path, f"{field}.{key}", "expected a number or null", rebuild[key])
        for key in _REBUILD_COUNTS:
            if key in rebuild and not (_is_integer(rebuild[key]) and rebuild[key] >= 0):
                raise _field_error(path, f"{field}.{key}", "expected a count of units", rebuild[key])


def _check_periods(periods: Any, path: Path) -> None:
    """``response_ms_by_period``: period name → {count, mean, p50, p90, p99, starts_s}."""
    if not isinstance(periods, Mapping):
        raise _field_error(path, "response_ms_by_period", "expected an object of periods", periods)
    for name, stats in periods.items():
        field = f"response_ms_by_period.{name}"
        if not isinstance(stats, Mapping):
            raise _field_error(path, field, "expected a {count, mean, p50, p90, p99, starts_s} object", stats)
        count = stats.get("count", _MISSING)
        if not (_is_integer(count) and count >= 0):
            raise _field_error(path, f"{field}.count", "expected a count of requests", count)
        for key in ("mean", "p50", "p90", "p99"):
            # Null when the period saw no completed request.
            if key in stats and not _is_number_or_null(stats[key]):
                raise _field_error(path, f"{field}.{key}", "expected milliseconds or null", stats[key])
        starts = stats.get("starts_s", [])
        if not (isinstance(starts, list) and all(_is_number(start) for start in starts)):
            raise _field_error(path, f"{field}.starts_s", "expected a list of numbers of seconds", starts)


def _check_config_hash(document: Mapping[str, Any], path: Path) -> None:
    """``config_hash`` (in the summary and the manifest), where present, is text."""
    if "config_hash" in document and not isinstance(document["config_hash"], str):
        raise _field_error(path, "config_hash", "expected a hex digest string", document["config_hash"])


#: Stands for a key the summary lacks, which reads differently from a JSON ``null``.
_MISSING = object()


def _field_error(path: Path, field: str, expected: str, found: Any) -> RaidlabIOError:
    if found is _MISSING:
        return RaidlabIOError(f"{field}: missing ({expected})", file=str(path))
    text = json.dumps(found)  # as the file spells it: "five", true, null
    if len(text) > 60:
        text = text[:57] + "..."
    return RaidlabIOError(f"{field}: {expected}, found {text}", file=str(path))


def _manifest_tables(manifest: Mapping[str, Any], directory: Path) -> Dict[str, str]:
    """The ``files.tables`` entry of a manifest: table name → file name."""
    files = manifest["files"]
    tables = files.get("tables") if isinstance(files, Mapping) else None
    if not isinstance(tables, Mapping) or not all(
        isinstance(name, str) and isinstance(file, str) for name, file in tables.items()
    ):
        raise RaidlabIOError(
            "files.tables must map table names to file names",
            file=str(directory / MANIFEST_FILE),
        )
    return dict(tables)


def _read_table(name: str, path: Path) -> "pd.DataFrame":
    """Read one Parquet table; a documented table must have its documented columns."""
    import pandas as pd
    import pyarrow as pa

    try:
        frame = pd.read_parquet(path, page_checksum_verification=True)
    except OSError as error:
        errno = error.errno
        if errno is None and isinstance(error, FileNotFoundError):
            errno = ENOENT  # pyarrow raises it without an errno
        raise RaidlabIOError(error.strerror or str(error), file=str(path), errno=errno) from None
    except (pa.ArrowException, ValueError) as error:
        raise RaidlabIOError(f"not a readable Parquet file: {error}", file=str(path)) from None
    missing = [column for column in TABLE_COLUMNS.get(name, []) if column not in frame.columns]
    if missing:
        raise RaidlabIOError(
            f"the {name} table lacks the column(s) {', '.join(missing)} "
            f"(written by another raidlab version?)",
            file=str(path),
        )
    # The plots and summaries compute with these; text there would fail far from its file.
    # Optional columns are checked only where present: older runs lack them.
    numeric = [column for column in TABLE_COLUMNS.get(name, []) if column not in TEXT_COLUMNS.get(name, [])]
    numeric += [column for column in OPTIONAL_COLUMNS.get(name, []) if column in frame.columns]
    for column in numeric:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            raise RaidlabIOError(
                f"the {name} table's column {column} must hold numbers, not {frame[column].dtype} values",
                file=str(path),
            )
    return frame


def _ask_git() -> Dict[str, Any]:
    """Commit and dirtiness of the checkout this package runs from, if it is one: one ``git``
    process, whose porcelain v2 header carries the commit and whose entries are the tracked
    files changed."""
    source = Path(__file__).resolve().parent
    try:
        status = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain=v2", "--branch", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    commit = None
    dirty = False
    for line in status.splitlines():
        if line.startswith("# branch.oid "):
            oid = line.removeprefix("# branch.oid ").strip()
            commit = None if oid == "(initial)" else oid
        elif line and not line.startswith("#"):
            dirty = True
    return {"commit": commit, "dirty": dirty}


#: Seconds this process reuses the git state it read last (0: git is asked at every save),
#: and that state with the monotonic time it was read; see :func:`reuse_git_state_for`.
_git_state_reuse_s = 0.0
_git_state_read: Optional[Tuple[float, Dict[str, Any]]] = None


def reuse_git_state_for(seconds: float) -> None:
    """Let this process reuse the checkout's git state for ``seconds`` after reading it,
    instead of asking git at every save. A sweep's workers do (``sweep.GIT_STATE_TTL_S``):
    the git process was most of what saving a small run cost."""
    global _git_state_reuse_s
    _git_state_reuse_s = seconds


def git_state() -> Dict[str, Any]:
    """The commit (``None`` before the first) and dirtiness of the checkout this package runs
    from, ``{}`` outside one: asked now, or the answer read within the reuse time of
    :func:`reuse_git_state_for`."""
    global _git_state_read
    now = time.monotonic()
    if _git_state_reuse_s > 0 and _git_state_read is not None and now - _git_state_read[0] <= _git_state_reuse_s:
        return dict(_git_state_read[1])
    state = _ask_git()
    _git_state_read = (now, state) if _git_state_reuse_s > 0 else None
    return dict(state)


#: The manifest's two facts that each cost a process (git's answer, and the platform string,
#: for which Python runs ``uname -p``), being gathered on a thread for the next save; see
#: :func:`gather_manifest_facts`.
_gathering: Optional[Tuple[threading.Thread, Dict[str, Any]]] = None


def gather_manifest_facts() -> None:
    """Start gathering, on a thread, the manifest facts that cost a process each, for the next
    run saved in this process; a gathering no save took yet is dropped. ``raidlab run`` calls
    it just before its simulation, which releases the GIL, so the answers are ready when the
    run directory is written instead of adding their processes' time to the run's."""
    global _gathering
    facts: Dict[str, Any] = {}

    def gather() -> None:
        facts["git"] = git_state()
        facts["platform"] = platform.platform()

    thread = threading.Thread(target=gather, name="raidlab-manifest-facts", daemon=True)
    thread.start()
    _gathering = (thread, facts)


def _manifest_facts() -> Tuple[Dict[str, Any], str]:
    """The git state and the platform string: those gathered since
    :func:`gather_manifest_facts`, once, or asked now."""
    global _gathering
    gathering, _gathering = _gathering, None
    if gathering is not None:
        thread, facts = gathering
        thread.join()
        if "platform" in facts:
            return facts["git"], facts["platform"]
    return git_state(), platform.platform()
