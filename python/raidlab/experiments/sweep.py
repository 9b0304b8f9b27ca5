"""Sweeps: many runs of one experiment over axes of configuration values, on a local process
pool or a Dask cluster, collected into one table.

A sweep specification is a TOML file (``docs/sweeps.md`` has the whole format)::

    base = "../demo.toml"              # the experiment every run starts from
    seeds = 3                          # replicates: seeds 1..3 (or a list, [7, 11])

    [set]                              # the same for every run
    workload.duration_s = 60

    [grid]                             # crossed: 3 x 2 cases
    array.drives = [5, 7, 9]
    rebuild.discipline = ["vsm", "pcm"]

    [[zip]]                            # varied together: 2 cases
    rebuild.buffer_units = [4, 64]
    "rebuild.unit" = [{ tracks = 16 }, { tracks = 1 }]

    [[points]]                         # listed cases (each point one case)
    "workload.arrival.rate_per_s" = 20

    [[plots]]                          # drawn from summary.parquet after the sweep
    x = "array.drives"
    metrics = ["rebuild_time_s", "response_ms.all.mean"]
    series = "rebuild.discipline"

Every table under ``grid``, ``zip`` and ``points`` is an *axis*: ``grid`` gives one axis per
key, each ``[[zip]]`` table one axis whose keys move together, ``[[points]]`` one axis of
listed cases. The cases are the axes crossed, in the order the file gives them (the first
outermost); each case runs once per seed. A dotted key (``array.drives``) is a key path; a
quoted key with dots inside (``"rebuild.unit"``) is a path whose value is taken whole, as
``raidlab run --set`` takes it.

:func:`load_sweep_spec` checks the file and :func:`expand_sweep` resolves every run with the
core before anything runs, so a bad specification fails at once with
:class:`SweepSpecError` naming ``file:line`` and the key: an unknown key, an empty axis,
values of different types on one axis, zipped lists of different lengths, or a value the core
rejects. :func:`run_sweep` then runs what is not done yet and writes the sweep directory
(:mod:`raidlab.results.store`).

Runs are content-addressed: a run's id (:func:`run_id`) is a digest of its resolved
configuration, the directory its relative paths start from, and the code version
(:func:`code_version`: the core's version and a digest of the compiled extension, so any
rebuild of the simulator makes new ids). Running a sweep again skips runs whose directory is
complete; an interrupted sweep resumes where it stopped; a run that fails is recorded
(``error.json``, a ``failed`` row) and the others go on.

The same function (:func:`execute_run`: resolved configuration in, run directory and summary
out) runs on both executors: a process pool over the local cores (the default), or Dask
(``scheduler="tcp://HOST:PORT"`` or ``client=distributed.Client(...)``), where the run id is
the task's key. With Dask the sweep directory must be on a file system the workers share.
"""

from __future__ import annotations

import datetime as _datetime
import functools
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
import traceback
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from raidlab.exceptions import ConfigError, RaidlabError, RaidlabIOError
from raidlab.results import store

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SweepSpecError",
    "Axis",
    "PlotSpec",
    "SweepSpec",
    "RunTask",
    "SweepPlan",
    "SweepOutcome",
    "load_sweep_spec",
    "expand_sweep",
    "run_sweep",
    "execute_run",
    "run_id",
    "code_version",
    "metric_column",
    "SPEC_KEYS",
]

PathLike = Union[str, "os.PathLike[str]"]

#: The top-level keys a sweep specification may have.
SPEC_KEYS = ("base", "name", "description", "seeds", "set", "grid", "zip", "points", "plots")
#: The keys of a ``[[plots]]`` table.
PLOT_KEYS = ("x", "metrics", "metric", "series", "title")
#: Axis sections, in the words errors use.
AXIS_SECTIONS = ("grid", "zip", "points")
#: A running sweep rewrites summary.parquet at most this often (s), so a sweep stopped
#: without warning (killed) still leaves a recent table.
SUMMARY_EVERY_S = 30.0

#: Most runs (rows: cases × seeds) one specification may expand to. A row's plan holds its
#: resolved configuration (kilobytes), so the bound keeps planning's memory bounded; a larger
#: study is several specifications.
MAX_SWEEP_ROWS = 100_000

#: Largest seed a sweep may list: `summary.parquet` stores the seed as a signed 64-bit integer.
MAX_SWEEP_SEED = 2**63 - 1


class SweepSpecError(ConfigError):
    """A sweep specification is malformed: ``key`` names the specification's key
    (``grid.array.drives``, ``zip[0]``), ``file`` and ``line`` where it is (``line`` 0 when
    the text did not come from a file or the line is not known)."""

    def __init__(self, message: str, *, key: str = "", file: str = "", line: int = 0) -> None:
        super().__init__(message, key=key)
        self.file = str(file)
        self.line = int(line)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        return f"{where}{super().__str__()}"

    def __reduce__(self) -> Any:
        from raidlab.exceptions import _rebuild

        return (_rebuild, (type(self), (self.message,), {"key": self.key, "file": self.file, "line": self.line}))


# ---------------------------------------------------------------------------------------------
# The specification
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """One axis of a sweep: an ordered list of partial assignments (key path -> value)."""

    #: ``grid``, ``zip`` or ``points``.
    kind: str
    #: How errors and docs name it: ``grid.array.drives``, ``zip[0]``, ``points``.
    label: str
    #: The key paths it sets (for ``points``: every key any point sets, in first-seen order).
    keys: Tuple[str, ...]
    #: One assignment per position on the axis.
    positions: Tuple[Mapping[str, Any], ...]
    #: The specification's line of each key (0: unknown).
    lines: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PlotSpec:
    """A figure drawn from the summary table after the sweep: each metric against ``x``, one
    line per value of ``series`` (optional), with confidence intervals over seeds."""

    x: str
    metrics: Tuple[str, ...]
    series: Optional[str] = None
    title: Optional[str] = None


@dataclass
class SweepSpec:
    """A checked sweep specification (see the module's docs)."""

    name: str
    description: str
    base: Path
    #: ``[set]``: key path -> value, applied to every run before the axes.
    fixed: Dict[str, Any]
    axes: List[Axis]
    #: The seeds of each case; ``None``: the base configuration's own seed, once.
    seeds: Optional[List[int]]
    plots: List[PlotSpec]
    #: The specification's text and the file it came from (``None`` for text).
    text: str
    path: Optional[Path] = None

    @property
    def axis_keys(self) -> List[str]:
        """Every key an axis sets, in axis order (the summary table's axis columns)."""
        return list(dict.fromkeys(key for axis in self.axes for key in axis.keys))

    @property
    def file(self) -> str:
        return str(self.path) if self.path is not None else "<sweep>"

    def cases(self) -> List[Dict[str, Any]]:
        """The axes crossed, the first axis outermost: one assignment per case."""
        import itertools

        cases = []
        for combination in itertools.product(*(axis.positions for axis in self.axes)):
            values: Dict[str, Any] = {}
            for part in combination:
                values.update(part)
            cases.append(values)
        return cases


def load_sweep_spec(source: PathLike, *, text: Optional[str] = None, base_must_exist: bool = True) -> SweepSpec:
    """Read and check the sweep specification at ``source`` (or ``text``, with ``source``
    naming it and the directory ``base`` is relative to). Errors are
    :class:`SweepSpecError` with the file, line and key. ``base_must_exist=False`` reads a
    specification only for its ``[[plots]]``: the copy a sweep directory keeps, whose
    relative ``base`` points from where the copy lies, not from where the original did."""
    from raidlab.config import parse_toml

    path = Path(source)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise RaidlabIOError(error.strerror or str(error), file=str(path), errno=error.errno) from None
        except UnicodeDecodeError as error:
            from raidlab.config import undecodable_place

            line, column = undecodable_place(error)
            raise SweepSpecError(f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at column {column})",
                                 file=str(path), line=line) from None
    locator = _KeyLocator(text)

    def bad(message: str, key: str, line: Optional[int] = None) -> SweepSpecError:
        return SweepSpecError(message, key=key, file=str(path), line=locator.line(key) if line is None else line)

    try:
        document = parse_toml(text)
    except ConfigError as error:
        match = re.search(r"line (\d+)", error.message)
        raise SweepSpecError(error.message, file=str(path), line=int(match.group(1)) if match else 0) from None

    for key in document:
        if key not in SPEC_KEYS:
            raise bad(f"unknown key; a sweep specification has {', '.join(SPEC_KEYS)}", key)

    base_value = document.get("base")
    if not isinstance(base_value, str) or not base_value:
        raise bad("expected the path of the base experiment (relative to this file)", "base")
    base = (path.parent / base_value).resolve() if not Path(base_value).is_absolute() else Path(base_value)
    if base_must_exist and not base.is_file():
        raise bad(f"the base experiment {base} does not exist", "base")

    name = document.get("name", path.stem)
    if not isinstance(name, str) or not name or "/" in name:
        raise bad("expected a name without '/'", "name")
    description = document.get("description", "")
    if not isinstance(description, str):
        raise bad("expected text", "description")

    seeds = _seeds(document.get("seeds"), bad)

    fixed_table = document.get("set", {})
    if not isinstance(fixed_table, dict):
        raise bad("expected a table of key = value", "set")
    fixed = _flatten(fixed_table)
    for key in fixed:
        if key == "seed":
            raise bad("set the seeds with the top-level `seeds`, not `set.seed`", "set.seed")

    axes: List[Axis] = []
    seen: Dict[str, str] = {}
    for section in document:
        if section not in AXIS_SECTIONS:
            continue
        value = document[section]
        if section == "grid":
            if not isinstance(value, dict):
                raise bad("expected a table of key = [values]", "grid")
            for key, values in _flatten(value).items():
                label = f"grid.{key}"
                if not isinstance(values, list):
                    raise bad(f"expected a list of values, not {_describe(values)}", label)
                if not values:
                    raise bad("empty axis: give at least one value", label)
                _same_types(values, label, bad)
                axes.append(Axis("grid", label, (key,), tuple({key: v} for v in values),
                                 {key: locator.line(label)}))
        elif section == "zip":
            groups = value if isinstance(value, list) else None
            if groups is None or not all(isinstance(group, dict) for group in groups):
                raise bad("expected [[zip]] tables of key = [values]", "zip")
            for number, group in enumerate(groups):
                where = f"zip[{number}]"
                flat = _flatten(group)
                if not flat:
                    raise bad("empty axis: a [[zip]] table needs keys", where)
                lengths = {}
                for key, values in flat.items():
                    if not isinstance(values, list):
                        raise bad(f"expected a list of values, not {_describe(values)}", f"{where}.{key}")
                    if not values:
                        raise bad("empty axis: give at least one value", f"{where}.{key}")
                    _same_types(values, f"{where}.{key}", bad)
                    lengths[key] = len(values)
                if len(set(lengths.values())) > 1:
                    shown = ", ".join(f"{key} has {count}" for key, count in lengths.items())
                    raise bad(f"zipped lists must have the same length: {shown}", where)
                count = next(iter(lengths.values()))
                positions = tuple({key: flat[key][i] for key in flat} for i in range(count))
                axes.append(Axis("zip", where, tuple(flat), positions,
                                 {key: locator.line(f"{where}.{key}") for key in flat}))
        else:  # points
            points = value if isinstance(value, list) else None
            if points is None or not all(isinstance(point, dict) for point in points):
                raise bad("expected [[points]] tables of key = value", "points")
            if not points:
                raise bad("empty axis: give at least one point", "points")
            flattened = [_flatten(point) for point in points]
            keys: List[str] = []
            for number, point in enumerate(flattened):
                if not point:
                    raise bad("a point needs at least one key", f"points[{number}]")
                keys += [key for key in point if key not in keys]
            for key in keys:
                _same_types([point[key] for point in flattened if key in point], f"points.{key}", bad)
            lines = {key: locator.line(f"points[{next(i for i, p in enumerate(flattened) if key in p)}].{key}")
                     for key in keys}
            axes.append(Axis("points", "points", tuple(keys), tuple(flattened), lines))
    for axis in axes:
        for key in axis.keys:
            if key == "seed":
                raise bad("vary the seed with the top-level `seeds`, not as an axis", f"{axis.label}")
            if key in seen and seen[key] != axis.label:
                raise bad(f"{key} is already varied by {seen[key]}", f"{axis.label}")
            seen[key] = axis.label
            if key in fixed:
                raise bad(f"{key} is both fixed in [set] and varied", f"{axis.label}")

    # Counted factor by factor, naming the one that crosses the bound, before anything expands.
    rows = 1
    for label, count in [("seeds", len(seeds) if seeds else 1)] + [(axis.label, len(axis.positions)) for axis in axes]:
        rows *= count
        if rows > MAX_SWEEP_ROWS:
            raise bad(f"the axes and seeds expand to more than {MAX_SWEEP_ROWS:,} runs; split the study into "
                      "several specifications", label)

    plots = _plots(document.get("plots", []), axes, bad)
    return SweepSpec(name=name, description=" ".join(description.split()), base=base, fixed=fixed, axes=axes,
                     seeds=seeds, plots=plots, text=text, path=path)


def _seeds(value: Any, bad: Callable[..., SweepSpecError]) -> Optional[List[int]]:
    if value is None:
        return None
    if isinstance(value, bool):
        raise bad("expected a number of seeds or a list of seeds, not a boolean", "seeds")
    if isinstance(value, int):
        if value < 1:
            raise bad(f"expected at least 1 seed, not {value}", "seeds")
        if value > MAX_SWEEP_ROWS:
            raise bad(f"at most {MAX_SWEEP_ROWS:,} seeds (a sweep has at most {MAX_SWEEP_ROWS:,} runs), "
                      f"not {value:,}", "seeds")
        return list(range(1, value + 1))
    if isinstance(value, list):
        if not value:
            raise bad("empty axis: give at least one seed", "seeds")
        if not all(isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed <= MAX_SWEEP_SEED
                   for seed in value):
            raise bad(f"expected whole numbers from 0 to {MAX_SWEEP_SEED} (summary.parquet's seed column is "
                      "a signed 64-bit integer)", "seeds")
        if len(set(value)) != len(value):
            raise bad("a seed is listed twice", "seeds")
        return list(value)
    raise bad(f"expected a number of seeds or a list of seeds, not {_describe(value)}", "seeds")


def _plots(value: Any, axes: Sequence[Axis], bad: Callable[..., SweepSpecError]) -> List[PlotSpec]:
    if not isinstance(value, list) or not all(isinstance(plot, dict) for plot in value):
        raise bad("expected [[plots]] tables", "plots")
    varied = [key for axis in axes for key in axis.keys] + ["seed"]
    plots = []
    for number, table in enumerate(value):
        where = f"plots[{number}]"
        for key in table:
            if key not in PLOT_KEYS:
                raise bad(f"unknown key; a plot has {', '.join(k for k in PLOT_KEYS if k != 'metric')}",
                          f"{where}.{key}")
        x = table.get("x")
        if x not in varied:
            raise bad(f"x must be a varied key ({', '.join(varied)}), not {x!r}", f"{where}.x")
        metrics = table.get("metrics", table.get("metric"))
        if isinstance(metrics, str):
            metrics = [metrics]
        if not isinstance(metrics, list) or not metrics or not all(isinstance(m, str) and m for m in metrics):
            raise bad("expected a list of metric names (summary.parquet columns)", f"{where}.metrics")
        series = table.get("series")
        if series is not None and (series not in varied or series == x):
            raise bad(f"series must be another varied key, not {series!r}", f"{where}.series")
        title = table.get("title")
        if title is not None and not isinstance(title, str):
            raise bad("expected text", f"{where}.title")
        plots.append(PlotSpec(x=x, metrics=tuple(metrics), series=series, title=title))
    return plots


def _flatten(table: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    """Dotted key paths of a TOML table: nested tables are walked, a key with a dot inside
    (written quoted) is a path whose value is kept whole."""
    flat: Dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and "." not in str(key):
            flat.update(_flatten(value, path))
        else:
            flat[path] = value
    return flat


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def _describe(value: Any) -> str:
    return f"{_kind(value)} ({_literal(value)})"


def _literal(value: Any) -> str:
    from raidlab.config import toml_literal

    try:
        text = toml_literal(value)
    except TypeError:
        text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _same_types(values: Sequence[Any], label: str, bad: Callable[..., SweepSpecError]) -> None:
    first = values[0]
    for value in values[1:]:
        if _kind(value) != _kind(first):
            raise bad(f"type mismatch: {_literal(first)} is {_kind(first)}, {_literal(value)} is {_kind(value)}",
                      label)


class _KeyLocator:
    """Finds the line of a key in TOML text: each line that assigns a key (or opens a table)
    is recorded under its full dotted path, with ``[[array]]`` tables numbered."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    _ASSIGN = re.compile(r"^\s*((?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-]+)(?:\s*\.\s*(?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-]+))*)\s*=")

    def __init__(self, text: str) -> None:
        self.lines: Dict[str, int] = {}
        table = ""
        counts: Counter = Counter()
        for number, line in enumerate(text.splitlines(), start=1):
            header = self._HEADER.match(line)
            if header and not self._ASSIGN.match(line):
                name = ".".join(self._parts(header.group(2)))
                if header.group(1) == "[[":
                    table = f"{name}[{counts[name]}]"
                    counts[name] += 1
                else:
                    table = name
                self.lines.setdefault(table, number)
                self.lines.setdefault(name, number)
                continue
            assign = self._ASSIGN.match(line)
            if assign:
                key = ".".join(self._parts(assign.group(1)))
                full = f"{table}.{key}" if table else key
                self.lines.setdefault(full, number)
                if "[" in table:  # also under the array's name: points.x finds the first
                    self.lines.setdefault(f"{table.split('[')[0]}.{key}", number)

    @staticmethod
    def _parts(dotted: str) -> List[str]:
        parts = re.findall(r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_\-]+)", dotted)
        return [next(p for p in part if p != "") if any(part) else "" for part in parts]

    def line(self, key: str) -> int:
        """The line of ``key`` (``grid.array.drives``, ``zip[0].x``), else of the nearest
        enclosing table, else 0."""
        probe = key
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            if "." in probe:
                probe = probe.rsplit(".", 1)[0]
            elif "[" in probe:
                probe = probe.split("[", 1)[0]
            else:
                break
        return 0


# ---------------------------------------------------------------------------------------------
# Code version and run ids
# ---------------------------------------------------------------------------------------------


def extension_digest() -> str:
    """SHA-256 of the compiled extension (``raidlab._core``), 16 hex digits, read now."""
    from raidlab import _core

    digest = hashlib.sha256()
    with open(_core.__file__, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """The code that makes a run's results: the core's version and a digest of the compiled
    extension (``0.1.0+3f2a…``). Any rebuild of the simulator changes it; edits to the Python
    package, which only files and plots results, do not."""
    from raidlab import _core

    return f"{_core.version()}+{extension_digest()}"


def run_id(resolved_config: str, base_dir: PathLike, version: str) -> str:
    """The id of a run: 20 hex digits of SHA-256 over the code version, the directory the
    configuration's relative paths start from, and the resolved configuration (which holds
    the seed and every default)."""
    digest = hashlib.sha256()
    for part in ("raidlab-run-v1", version, str(Path(base_dir).resolve()), resolved_config):
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:20]


def _git_describe() -> Optional[str]:
    source = Path(__file__).resolve().parent
    try:
        return subprocess.run(["git", "-C", str(source), "describe", "--always", "--dirty"],
                              capture_output=True, text=True, timeout=5, check=True).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


# ---------------------------------------------------------------------------------------------
# Expansion
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunTask:
    """One run, everything a worker needs (picklable): the resolved configuration and where
    to write the run directory."""

    run_id: str
    #: The resolved configuration (TOML, seed included) the core runs.
    config: str
    #: Directory the configuration's relative paths start from.
    base_dir: str
    #: The run directory to write.
    run_dir: str
    #: The ``key=value`` overrides of the base that make this run (recorded in its manifest).
    overrides: Tuple[str, ...]
    #: The sweep's command line (recorded in the run's manifest).
    command_line: Tuple[str, ...]
    #: The build the sweep was planned with; a worker running another build refuses the run.
    build: str


@dataclass
class SweepPlan:
    """The runs of a specification: one row per (case, seed); rows whose configurations
    resolve alike share one run (:attr:`tasks` has each once)."""

    spec: SweepSpec
    output: Path
    version: str
    #: One per (case, seed), in case order then seed order: ``case``, ``seed``, the case's
    #: values and ``run_id``.
    rows: List[Dict[str, Any]]
    #: The distinct runs, in the order of their first row.
    tasks: List[RunTask]

    @property
    def axis_keys(self) -> List[str]:
        return self.spec.axis_keys


def _core_message(error: ConfigError) -> str:
    """The core's message without the TOML excerpt of the generated configuration, and with
    the name of a Rust type put in words (:func:`_type_in_words`)."""
    message = error.message
    if message.startswith("TOML parse error"):
        lines = [line for line in message.splitlines() if line.strip()]
        message = lines[-1] if lines else message
    return _type_in_words(message.strip(), error.key or "")


#: serde's words for a value of the wrong kind where a table is expected: "invalid type:
#: `7`, expected struct RebuildUnitConfig" (a Rust type's name, which the user never wrote).
_RUST_TYPE = re.compile(r"expected (?:struct|internally tagged enum|enum|map) [A-Z][A-Za-z0-9_]*")


def _type_in_words(message: str, key: str) -> str:
    """``message`` with serde's "expected struct SomeConfig" replaced by what ``key`` accepts,
    in the configuration reference's words: "expected a table: the rebuild unit: `{ tracks =
    1 }` (default), `{ sectors = 2048 }` or `{ cylinders = 1 }`"."""
    if not _RUST_TYPE.search(message):
        return message
    accepted = _accepted_forms(key)
    words = f"expected a table ({accepted})" if accepted else "expected a table"
    return _RUST_TYPE.sub(lambda _: words, message)


@functools.lru_cache(maxsize=None)
def _reference_rows() -> Dict[str, str]:
    """Each configuration key's description in the reference (``docs/config.md``)."""
    from raidlab import _core
    from raidlab.output.config_reference import _Renderer, _walk

    schema = json.loads(_core.config_schema())
    return {row.key: row.description for row in _walk(_Renderer(schema).section("", schema, "Top level"))}


def _accepted_forms(key: str) -> str:
    try:
        description = _reference_rows().get(key, "")
    except Exception:  # noqa: BLE001 - the words are a help, never a second error
        return ""
    description = re.sub(r"\s*See `\[[^\]]*\]` below\.?$", "", description).strip().rstrip(".")
    return f"{description[0].lower()}{description[1:]}" if description else ""


def expand_sweep(
    spec: SweepSpec,
    output: PathLike,
    *,
    extra: Sequence[str] = (),
    command_line: Sequence[str] = (),
) -> SweepPlan:
    """Resolve every run of ``spec`` with the core (``extra`` overrides last, as
    ``raidlab sweep --set``); a configuration the core rejects is a :class:`SweepSpecError`
    naming the specification key that set the value, before anything runs."""
    from raidlab import _core
    from raidlab.config import apply_overrides, read_utf8
    from raidlab.config import toml_literal

    output = Path(output).resolve()
    version = code_version()
    base_text = read_utf8(spec.base)
    base_dir = str(spec.base.parent)
    fixed = [f"{key}={toml_literal(value)}" for key, value in spec.fixed.items()]
    rows: List[Dict[str, Any]] = []
    tasks: Dict[str, RunTask] = {}
    seeds: Sequence[Optional[int]] = spec.seeds if spec.seeds is not None else [None]
    for case, values in enumerate(spec.cases()):
        case_overrides = [f"{key}={toml_literal(value)}" for key, value in values.items()]
        for seed in seeds:
            overrides = tuple(fixed + case_overrides + ([f"seed={seed}"] if seed is not None else []) + list(extra))
            try:
                resolved, _ = _core.resolve_config(apply_overrides(base_text, overrides), base_dir)
            except ConfigError as error:
                raise _case_error(spec, values, error) from None
            except RaidlabError as error:  # a drive spec or trace the configuration names
                raise SweepSpecError(f"case {case} ({_show(values)}): {error}", file=spec.file) from None
            identity = run_id(resolved, base_dir, version)
            actual_seed = seed if seed is not None else _seed_of(resolved)
            rows.append({"case": case, "seed": actual_seed, "values": values, "run_id": identity})
            if identity not in tasks:
                tasks[identity] = RunTask(
                    run_id=identity, config=resolved, base_dir=base_dir,
                    run_dir=str(output / store.RUNS_DIR / identity), overrides=overrides,
                    command_line=tuple(command_line), build=code_version())
    return SweepPlan(spec=spec, output=output, version=version, rows=rows, tasks=list(tasks.values()))


def _seed_of(resolved: str) -> Optional[int]:
    from raidlab.config import parse_toml

    seed = parse_toml(resolved).get("seed")
    return int(seed) if isinstance(seed, int) else None


def _show(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{key} = {_literal(value)}" for key, value in values.items()) or "the base"


def _case_error(spec: SweepSpec, values: Mapping[str, Any], error: ConfigError) -> SweepSpecError:
    """The core rejected a run: name the specification key that set the value it names."""
    message = _core_message(error)
    key = error.key or ""

    def related(path: str) -> bool:
        return bool(key) and (path == key or key.startswith(path + ".") or path.startswith(key + "."))

    for axis in spec.axes:
        for path in axis.keys:
            if path in values and related(path):
                label = axis.label if axis.kind == "grid" else f"{axis.label}.{path}"
                return SweepSpecError(f"{_literal(values[path])}: {key}: {message}", key=label,
                                      file=spec.file, line=axis.lines.get(path, 0))
    for path, value in spec.fixed.items():
        if related(path):
            locator = _KeyLocator(spec.text)
            return SweepSpecError(f"{_literal(value)}: {key}: {message}", key=f"set.{path}", file=spec.file,
                                  line=locator.line(f"set.{path}"))
    return SweepSpecError(f"the base {spec.base} with {_show(values)}: {key + ': ' if key else ''}{message}",
                          key="base", file=spec.file, line=_KeyLocator(spec.text).line("base"))


# ---------------------------------------------------------------------------------------------
# One run (in a worker)
# ---------------------------------------------------------------------------------------------

#: Set in local pool workers: tells running simulations to stop (Ctrl-C in the sweep).
_CANCEL: Any = None


def _init_local_worker(cancel: Any, parent: Optional[int] = None) -> None:
    global _CANCEL
    from raidlab.experiments.pool import end_with_parent, ignore_sigint

    _CANCEL = cancel
    ignore_sigint()  # the parent handles Ctrl-C and sets `cancel`
    if parent is not None:
        end_with_parent(parent)


def _keep_going(fraction: float, completed: int) -> bool:
    return _CANCEL is None or not _CANCEL.is_set()


#: How long a worker reuses the checkout's git state it read last (s), instead of asking git
#: for each run it saves (a process per run: most of what saving a small run costs); the
#: answer cannot change faster than someone commits. See :func:`raidlab.results.reuse_git_state_for`.
GIT_STATE_TTL_S = 10.0


def execute_run(task: RunTask) -> Dict[str, Any]:
    """Run one task and write its run directory; return ``{"run_id", "status": "done",
    "summary", "simulate_s", "wall_s"}``, or ``status`` ``failed`` with ``error_type``,
    ``error`` and ``traceback``, or ``cancelled``. Never raises for a failed run: the answer
    crosses process and machine boundaries as plain data. Runs on local pool workers and on
    Dask workers alike."""
    started = time.perf_counter()
    try:
        from raidlab import _core, results
        from raidlab.results import Result

        build = code_version()
        if build != task.build:
            return _failure(task, "BuildMismatch",
                            f"this worker runs raidlab build {build}, the sweep was planned with {task.build}: "
                            f"install the same build everywhere", started)
        simulate_started = time.perf_counter()
        output = _core.run(task.config, task.base_dir, _keep_going)
        simulate_s = time.perf_counter() - simulate_started
        result = Result.from_core(output)
        results.reuse_git_state_for(GIT_STATE_TTL_S)
        if result.cancelled:
            return {"run_id": task.run_id, "status": "cancelled"}
        run_dir = Path(task.run_dir)
        (run_dir / store.ERROR_FILE).unlink(missing_ok=True)
        result.save(run_dir, overrides=task.overrides, command_line=list(task.command_line))
        return {"run_id": task.run_id, "status": "done", "summary": result.summary,
                "simulate_s": simulate_s, "wall_s": time.perf_counter() - started}
    except KeyboardInterrupt:
        return {"run_id": task.run_id, "status": "cancelled"}
    except Exception as error:  # noqa: BLE001 - recorded as the run's failure
        return _failure(task, type(error).__name__, str(error), started,
                        "".join(traceback.format_exception(type(error), error, error.__traceback__)))


def _failure(task: RunTask, kind: str, message: str, started: float, trace: str = "") -> Dict[str, Any]:
    return {"run_id": task.run_id, "status": "failed", "error_type": kind, "error": message,
            "traceback": trace, "wall_s": time.perf_counter() - started}


# ---------------------------------------------------------------------------------------------
# Executors
# ---------------------------------------------------------------------------------------------

#: ``handle(task, answer)``: called in the sweep's thread as each run ends.
Handler = Callable[[RunTask, Dict[str, Any]], None]
#: The function that runs a task (``execute_run``; tests substitute their own).
RunFunction = Callable[[RunTask], Dict[str, Any]]


class _LocalPool:
    """The local worker processes, started before the sweep is planned: starting a worker
    (Python, raidlab's modules, the extension's digest) takes about as long as resolving a
    64-run sweep's configurations, so the two overlap. Also holds the event that cancels the
    workers' simulations."""

    def __init__(self, workers: int) -> None:
        import multiprocessing

        from raidlab.experiments.pool import sigint_blocked

        self.context = multiprocessing.get_context("spawn")
        self.cancel = self.context.Event()
        self.workers = workers
        #: The pool of the first round, until :meth:`take` hands it out.
        self.started: Optional[Any] = self.executor(workers)
        # One task per worker: the pool starts a process for each task it has no idle worker
        # for. Workers start with SIGINT blocked until their initializer ignores it (see
        # reproduce.execute).
        with sigint_blocked():
            for _ in range(workers):
                self.started.submit(_start_worker)

    def executor(self, workers: int) -> Any:
        """A new pool of ``workers`` processes."""
        import concurrent.futures as futures

        # The workers end with this process, should it be killed (see raidlab.experiments.pool.end_with_parent).
        return futures.ProcessPoolExecutor(max_workers=workers, mp_context=self.context,
                                           initializer=_init_local_worker, initargs=(self.cancel, os.getpid()))

    def take(self, workers: int) -> Any:
        """The pool started at first, then new pools of ``workers`` processes."""
        started, self.started = self.started, None
        return started if started is not None else self.executor(workers)

    def close(self) -> None:
        """Stop the started pool if no round took it (nothing to run, or the plan failed)."""
        from raidlab.experiments.pool import shutdown

        started, self.started = self.started, None
        if started is not None:
            shutdown(started)


def _start_worker() -> None:
    """A worker's first task: what each run needs before its simulation, done while the
    sweep is planned (the modules, the extension's digest, the checkout's git state)."""
    from raidlab import results

    code_version()
    results.reuse_git_state_for(GIT_STATE_TTL_S)
    results.git_state()


def _run_local(tasks: Sequence[RunTask], pool: _LocalPool, handle: Handler, run: RunFunction) -> None:
    """Run ``tasks`` on ``pool``'s processes, at most two per worker submitted at a time. A
    worker that dies (killed, out of memory) breaks the pool and every run in flight with it;
    those runs are then run again one at a time, each alone on a pool of one process, so that
    a run which kills its worker again is known to be the cause and is recorded as failed
    while the others finish. Ctrl-C cancels the running simulations, shuts the pool down and
    re-raises."""
    import concurrent.futures as futures
    from concurrent.futures.process import BrokenProcessPool

    from raidlab.experiments.pool import shutdown, sigint_blocked

    queue: Deque[RunTask] = deque(tasks)
    #: Runs in flight when a pool broke, to be run alone.
    isolated: Deque[RunTask] = deque()
    while queue or isolated:
        alone = bool(isolated)
        source, window = (isolated, 1) if alone else (queue, 2 * pool.workers)
        executor = pool.executor(1) if alone else pool.take(max(1, min(pool.workers, len(queue))))
        in_flight: Dict[Any, RunTask] = {}
        broken: List[RunTask] = []
        try:
            while source or in_flight:
                while source and len(in_flight) < window:
                    task = source.popleft()
                    # Workers start as tasks are submitted; with SIGINT blocked they inherit
                    # the block until their initializer ignores it (see reproduce.execute).
                    with sigint_blocked():
                        in_flight[executor.submit(run, task)] = task
                done, _ = futures.wait(list(in_flight), return_when=futures.FIRST_COMPLETED)
                for future in done:
                    task = in_flight.pop(future)
                    try:
                        answer = future.result()
                    except BrokenProcessPool:
                        broken.append(task)
                        continue
                    except Exception as error:  # noqa: BLE001 - e.g. an answer that does not unpickle
                        answer = {"run_id": task.run_id, "status": "failed", "error_type": type(error).__name__,
                                  "error": str(error)}
                    handle(task, answer)
                if broken:
                    broken.extend(in_flight.values())  # the pool is gone: every future fails
                    in_flight.clear()
                    break
        except BaseException:
            pool.cancel.set()
            shutdown(executor)
            raise
        executor.shutdown(wait=not broken, cancel_futures=True)
        if alone:
            for task in broken:  # it was alone: it killed its worker
                handle(task, {"run_id": task.run_id, "status": "failed", "error_type": "WorkerDied",
                              "error": "the worker process died while running it (killed, out of memory, or it could not start: see the error output)"})
        else:
            isolated.extend(broken)


def _run_dask(tasks: Sequence[RunTask], client: Any, handle: Handler, run: RunFunction) -> None:
    """Run ``tasks`` on a Dask cluster through ``client``, one task per run keyed by its run
    id. A task whose worker died more often than the scheduler allows (``KilledWorker``) or
    that raised is recorded as failed. Ctrl-C cancels the runs not finished and re-raises."""
    from distributed import as_completed

    by_key = {f"raidlab-run-{task.run_id}": task for task in tasks}
    submitted = client.map(run, list(by_key.values()), key=list(by_key))
    try:
        for future in as_completed(submitted):
            task = by_key[future.key]
            try:
                answer = future.result()
            except Exception as error:  # noqa: BLE001 - KilledWorker, a lost connection
                answer = {"run_id": task.run_id, "status": "failed", "error_type": type(error).__name__,
                          "error": str(error)}
            handle(task, answer)
            future.release()
    except BaseException:
        client.cancel(submitted)
        raise


# ---------------------------------------------------------------------------------------------
# The sweep
# ---------------------------------------------------------------------------------------------


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did."""

    plan: SweepPlan
    #: The summary table's rows, one dict per (case, seed) in plan order.
    rows: List[Dict[str, Any]]
    #: Runs made now, runs found finished, runs that failed now.
    ran: int
    skipped: int
    failed: int
    wall_s: float
    #: Seconds the runs made now spent simulating, summed (the rest of ``wall_s`` is the
    #: machinery: resolving, processes, saving, collecting; divided by the workers).
    simulate_s: float
    summary_path: Path
    plots: List[Path]
    executor: str

    @property
    def directory(self) -> Path:
        return self.plan.output

    @functools.cached_property
    def table(self) -> "pd.DataFrame":
        """The summary table, as written to ``summary.parquet``, as a DataFrame (made on
        first use: a sweep writes its table without pandas)."""
        return store.summary_frame(self.rows, self.plan.axis_keys)


#: ``progress(event, counts)``: ``event`` is ``start`` (counts has ``total``, ``to_run``,
#: ``skipped``), ``run`` (after each run: ``done``, ``failed``, ``remaining``) or ``end``.
ProgressHook = Callable[[str, Mapping[str, int]], None]


def run_sweep(
    spec: Union[SweepSpec, PathLike],
    output: Optional[PathLike] = None,
    *,
    jobs: Optional[int] = None,
    scheduler: Optional[str] = None,
    client: Any = None,
    extra: Sequence[str] = (),
    command_line: Optional[Sequence[str]] = None,
    progress: Optional[ProgressHook] = None,
    run_function: RunFunction = execute_run,
) -> SweepOutcome:
    """Expand ``spec`` (a :class:`SweepSpec` or the path of its file), run every run not
    finished yet and write the sweep directory ``output`` (default ``runs/sweep-<name>``).

    Runs go to a local pool of ``jobs`` processes (default: every core), or to a Dask
    cluster: ``client`` (a ``distributed.Client``) or ``scheduler`` (its address,
    ``tcp://HOST:PORT``). ``extra`` overrides apply to every run, last. ``progress`` is
    called as runs end (see :data:`ProgressHook`). Ctrl-C stops the sweep after writing the
    table of what finished (``KeyboardInterrupt`` propagates); starting it again resumes.
    """
    started = time.monotonic()
    if not isinstance(spec, SweepSpec):
        spec = load_sweep_spec(spec)
    check_plot_metrics(spec)  # a misspelt metric is known now, not after every run
    output_dir = Path(output) if output is not None else Path("runs") / f"sweep-{spec.name}"
    argv = list(command_line) if command_line is not None else list(sys.argv)
    workers = max(1, jobs or os.cpu_count() or 1)
    pool = None
    if client is None and scheduler is None:
        # Started first, so that the workers start while the runs are resolved; no more of
        # them than the specification has runs.
        pool = _LocalPool(min(workers, len(spec.cases()) * len(spec.seeds or [None])))
    try:
        return _run_planned(spec, output_dir, pool, client, scheduler, workers, extra, argv, progress,
                            run_function, started)
    finally:
        if pool is not None:
            pool.close()


def _run_planned(spec: SweepSpec, output_dir: Path, pool: Optional[_LocalPool], client: Any,
                 scheduler: Optional[str], workers: int, extra: Sequence[str], argv: List[str],
                 progress: Optional[ProgressHook], run_function: RunFunction, started: float) -> SweepOutcome:
    """:func:`run_sweep` once its local pool, if any, is starting."""
    plan = expand_sweep(spec, output_dir, extra=extra, command_line=argv)
    directory = plan.output
    try:
        (directory / store.RUNS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(directory), errno=error.errno) from None

    own_client = None
    if client is None and scheduler is not None:
        from distributed import Client

        try:
            client = own_client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as error:
            raise RaidlabIOError(f"cannot reach the Dask scheduler: {error}", file=scheduler) from None
    if client is not None:
        executor = f"dask {getattr(getattr(client, 'scheduler', None), 'address', 'cluster')}"
    else:
        executor = f"local pool of {workers} process(es)"

    with store.SweepLock(directory):
        store.atomic_write_text(directory / store.SPEC_COPY, spec.text)
        manifest = _manifest(plan, executor, argv, extra)
        _write_manifest(directory, manifest)

        answers: Dict[str, Dict[str, Any]] = {}
        to_run: List[RunTask] = []
        for task in plan.tasks:
            if store.is_complete_run(task.run_dir):
                answers[task.run_id] = {"status": "done", "summary": store.read_run_summary(task.run_dir),
                                        "skipped": True}
            else:
                to_run.append(task)
        skipped = len(answers)
        counts = {"total": len(plan.tasks), "to_run": len(to_run), "skipped": skipped,
                  "done": 0, "failed": 0, "remaining": len(to_run)}
        if progress is not None:
            progress("start", dict(counts))
        simulate_s = 0.0
        last_write = time.monotonic()

        def handle(task: RunTask, answer: Dict[str, Any]) -> None:
            nonlocal simulate_s, last_write
            status = answer.get("status")
            if status == "cancelled":
                return
            if status == "failed":
                store.write_error(task.run_dir, {
                    "run_id": task.run_id, "error_type": answer.get("error_type"), "error": answer.get("error"),
                    "traceback": answer.get("traceback", ""), "overrides": list(task.overrides),
                    "recorded_utc": _utc_now()})
                counts["failed"] += 1
            else:
                counts["done"] += 1
                simulate_s += float(answer.get("simulate_s") or 0.0)
            counts["remaining"] -= 1
            answers[task.run_id] = answer
            if progress is not None:
                progress("run", dict(counts))
            if time.monotonic() - last_write >= SUMMARY_EVERY_S:
                store.write_summary(directory / store.SUMMARY_FILE, store.summary_columns(_rows(plan, answers),
                                                                                        plan.axis_keys))
                last_write = time.monotonic()

        try:
            if to_run:
                if client is not None:
                    _run_dask(to_run, client, handle, run_function)
                else:
                    assert pool is not None
                    _run_local(to_run, pool, handle, run_function)
        except BaseException:
            # Whatever finished is kept: the table, then the manifest, say how far it got.
            # A worker may have finished saving a run whose answer never arrived.
            for task in to_run:
                if task.run_id not in answers and store.is_complete_run(task.run_dir):
                    try:
                        answers[task.run_id] = {"status": "done", "summary": store.read_run_summary(task.run_dir)}
                    except RaidlabError:
                        pass
            rows = _rows(plan, answers)
            store.write_summary(directory / store.SUMMARY_FILE, store.summary_columns(rows, plan.axis_keys))
            manifest.update(_counts(rows), finished_utc=None, interrupted_utc=_utc_now())
            _write_manifest(directory, manifest)
            raise
        finally:
            if own_client is not None:
                own_client.close()
            if progress is not None:
                progress("end", dict(counts))

        rows = _rows(plan, answers)
        summary_path = store.write_summary(directory / store.SUMMARY_FILE, store.summary_columns(rows, plan.axis_keys))
        plots = (draw_spec_plots(spec, store.summary_frame(rows, plan.axis_keys), directory / "plots")
                 if spec.plots else [])
        wall = time.monotonic() - started
        manifest.update(_counts(rows), finished_utc=_utc_now(), wall_s=round(wall, 3),
                        plots=[str(path.relative_to(directory)) for path in plots])
        _write_manifest(directory, manifest)
    return SweepOutcome(plan=plan, rows=rows, ran=counts["done"], skipped=skipped, failed=counts["failed"],
                        wall_s=wall, simulate_s=simulate_s, summary_path=summary_path, plots=plots,
                        executor=executor)


#: Prefix of a run's metric whose name is also an axis key (:func:`metric_column`).
SHADOWED_METRIC_PREFIX = "run."


def metric_column(metric: str, axis_keys: Sequence[str]) -> str:
    """The summary table's column for the run metric ``metric``: its name, or
    ``run.<name>`` when an axis has that name (a ``[[points]]`` axis that sets ``failures``,
    whose metric is the run's count of failures). The axis keeps the column: every row has
    its value, done, failed or pending alike, and plots and ``raidlab compare`` read the
    case's value there; the metric sharing it overwrote it for the finished runs only and
    left a column of TOML text and numbers mixed, which Parquet refuses."""
    return f"{SHADOWED_METRIC_PREFIX}{metric}" if metric in axis_keys else metric


def _rows(plan: SweepPlan, answers: Mapping[str, Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """The summary table's rows: one per (case, seed) of the plan, in plan order. An axis
    value that is a list or a table is stored as its TOML text (``[{ drive = 2, at_s = 1.0
    }]``), which :func:`raidlab.config.parse_toml` of ``"v = " + text`` reads back."""
    from raidlab.config import toml_literal

    axis_keys = set(plan.axis_keys)
    metrics_of: Dict[str, Dict[str, Any]] = {}
    rows = []
    for planned in plan.rows:
        identity = planned["run_id"]
        answer = answers.get(identity)
        row: Dict[str, Any] = {"run_id": identity, "case": planned["case"], "seed": planned["seed"]}
        for key in plan.axis_keys:
            value = planned["values"].get(key)
            row[key] = value if value is None or isinstance(value, (bool, int, float, str)) else toml_literal(value)
        if answer is None:
            row["status"] = "pending"
        elif answer.get("status") == "done":
            row["status"] = "done"
            if identity not in metrics_of:
                metrics_of[identity] = {metric_column(name, axis_keys): value
                                        for name, value in store.summary_metrics(answer["summary"]).items()}
            row.update(metrics_of[identity])
        else:
            row["status"] = "failed"
            row["error_type"] = answer.get("error_type")
            row["error"] = answer.get("error")
        rows.append(row)
    return rows


def _counts(rows: Sequence[Mapping[str, Any]]) -> Dict[str, int]:
    statuses = Counter(row["status"] for row in rows)
    return {"rows": len(rows), "done": statuses["done"], "failed": statuses["failed"], "pending": statuses["pending"]}


def _manifest(plan: SweepPlan, executor: str, argv: Sequence[str], extra: Sequence[str]) -> Dict[str, Any]:
    spec = plan.spec
    return {
        "name": spec.name,
        "description": spec.description,
        "spec": store.SPEC_COPY,
        "spec_file": str(spec.path.resolve()) if spec.path is not None else None,
        "base": str(spec.base),
        "axes": [{"kind": axis.kind, "label": axis.label, "keys": list(axis.keys), "positions": len(axis.positions)}
                 for axis in spec.axes],
        "seeds": spec.seeds,
        "extra_overrides": list(extra),
        "cases": len(spec.cases()),
        "rows": len(plan.rows),
        "runs": len(plan.tasks),
        "code_version": plan.version,
        "git_describe": _git_describe(),
        "executor": executor,
        "command_line": shlex.join(argv),
        "started_utc": _utc_now(),
        "finished_utc": None,
    }


def _write_manifest(directory: Path, manifest: Mapping[str, Any]) -> None:
    store.atomic_write_text(directory / store.SWEEP_FILE, json.dumps(manifest, indent=2) + "\n")


def _utc_now() -> str:
    return _datetime.datetime.now(_datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# Figures of a sweep (from its table only)
# ---------------------------------------------------------------------------------------------


def _file_part(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "plot"


#: A run with every optional part of the summary (a buffer cache, content checks, a failure
#: rebuilt in PRO's order): its summary's fields are the metric columns a sweep's table can
#: have (:func:`known_metrics`). Runs in milliseconds.
_PROBE_CONFIG = """\
seed = 1
[array]
layout = "raid5"
drives = 3
stripe_unit_kib = 4
spares = 1
[drive]
zero_latency = true
[drive.model]
rpm = 7200
surfaces = 1
zones = [{ cylinders = 20, sectors_per_track = 32 }]
seek = { kind = "formula", a_ms = 1.0, b_ms = 0.002, c_ms = 0.25 }
head_switch_ms = 0.3
command_overhead_ms = 0.2
[workload]
requests = 200
read_fraction = 0.7
size_kib = 4
align_kib = 4
[workload.arrival]
process = "poisson"
rate_per_s = 200
[cache]
policy = "vdf-lru"
size_blocks = 16
[content]
check = true
[[failures]]
drive = 0
at_s = 0.1
[rebuild]
order = "pro"
"""


@functools.lru_cache(maxsize=1)
def known_metrics() -> Optional[Tuple[Tuple[str, ...], Tuple[str, ...]]]:
    """The metric columns a sweep's table can have, from a probe run of this build: (the names,
    the names whose value may also be a table of further fields: a ``first_stale`` that is
    empty in the probe, an order's counts). ``None`` if the probe cannot run, so that nothing
    is refused for want of it."""
    from raidlab import _core
    from raidlab.results import Result

    try:
        summary = Result.from_core(_core.run(_PROBE_CONFIG, str(Path.cwd()), None)).summary
    except Exception:  # noqa: BLE001 - no probe: the plots' metrics are checked after the runs
        return None
    metrics = store.summary_metrics(summary)
    open_ended = {name for name, value in metrics.items() if value is None} | {"rebuild.order"}
    return tuple(sorted(metrics)), tuple(sorted(open_ended))


def _grouped(names: Sequence[str]) -> str:
    """``response_ms.all.{mean, p99}, rebuild_time_s``: names sharing all but their last part
    written once."""
    groups: Dict[str, List[str]] = {}
    for name in names:
        head, _, last = name.rpartition(".")
        groups.setdefault(head, []).append(last)
    parts = []
    for head, lasts in groups.items():
        if not head:
            parts.extend(lasts)
        else:
            parts.append(f"{head}.{lasts[0]}" if len(lasts) == 1 else f"{head}.{{{', '.join(lasts)}}}")
    return ", ".join(parts)


def check_plot_metrics(spec: SweepSpec) -> None:
    """Refuse a ``[[plots]]`` metric no run can have (a misspelt name) before anything runs:
    a :class:`SweepSpecError` naming the file and line, the plot and the metric, with the names
    it may take. Metrics are a run's summary fields (:func:`known_metrics`), the axes, ``seed``
    and the table's own columns."""
    import difflib

    if not spec.plots:
        return
    known = known_metrics()
    if known is None:
        return
    names, open_ended = known
    names = tuple(metric_column(name, spec.axis_keys) for name in names)
    columns = set(names) | set(spec.axis_keys) | {"seed", *store.FIXED_COLUMNS, *store.ERROR_COLUMNS}
    for number, plot in enumerate(spec.plots):
        for metric in plot.metrics:
            if metric in columns or any(metric.startswith(prefix + ".") for prefix in open_ended):
                continue
            close = difflib.get_close_matches(metric, sorted(columns), n=3, cutoff=0.75)
            hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
            titled = f" (the plot titled {plot.title!r})" if plot.title else ""
            locator = _KeyLocator(spec.text)
            line = (locator.lines.get(f"plots[{number}].metrics") or locator.lines.get(f"plots[{number}].metric")
                    or locator.line(f"plots[{number}]"))
            raise SweepSpecError(
                f"no metric {metric!r} in a sweep's table{titled}{hint}; nothing was run. The metrics: "
                f"{_grouped(names)}; and the axes, seed, run_id, status, case",
                key=f"plots[{number}].metrics", file=spec.file, line=line)


def draw_spec_plots(spec: SweepSpec, table: "pd.DataFrame", directory: Path) -> List[Path]:
    """Each ``[[plots]]`` figure of ``spec`` from ``table``: one PNG and one SVG per plot,
    one panel per metric. Metrics the table does not have are an error naming the plot."""
    from raidlab.experiments.sweep_plots import plot_metrics

    written: List[Path] = []
    for number, plot in enumerate(spec.plots):
        missing = [metric for metric in plot.metrics if metric not in table.columns]
        if missing:
            raise SweepSpecError(
                f"no column {missing[0]!r} in summary.parquet (its metrics: "
                f"{', '.join(c for c in table.columns if '.' in c or c.endswith('_s'))[:300]}…)",
                key=f"plots[{number}].metrics", file=spec.file, line=_KeyLocator(spec.text).line(f"plots[{number}]"))
        # One metric names its file; several, the plot's place in the specification.
        what = _file_part(plot.metrics[0]) if len(plot.metrics) == 1 else f"plot{number + 1}"
        stem = f"{what}-vs-{_file_part(plot.x)}"
        if plot.series:
            stem += f"-by-{_file_part(plot.series)}"
        written += plot_metrics(table, x=plot.x, metrics=plot.metrics, series=plot.series,
                                title=plot.title or spec.name, output_stem=directory / stem)
    return written

