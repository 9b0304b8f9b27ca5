"""Drive validation: replay a real drive's trace on the simulated drive and compare.

DiskSim 4.0 ships, for ten drives, a parameter file (``NAME.parv``) and a trace of about
10,000 requests in its ``validate`` format with the service time the real drive measured
for each (``NAME.trace``). :func:`validate` replays such a trace on one simulated drive the
way DiskSim does (a closed loop: each request is issued the trace's gap after the previous
one completes) and compares the two response-time distributions by their *demerit* —
Ruemmler & Wilkes's root-mean-square horizontal distance between the CDFs, computed exactly
from the two samples (``raidlab_core::metrics::demerit``).

>>> from raidlab.experiments.validate import validate, plot_validation
>>> v = validate("ibm0661", "../shared/diskspecs/ibm18es.trace")   # doctest: +SKIP
>>> v.demerit_ms, v.demerit_percent                                 # doctest: +SKIP
>>> plot_validation(v, "ibm18es.png")                                # doctest: +SKIP

:func:`write_validation_report` runs every drive of a directory of DiskSim specs and writes
``docs/validation.md`` with raidlab's demerit next to DiskSim's published one
(:data:`DISKSIM_PUBLISHED`).
"""

from __future__ import annotations

import errno
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

import numpy as np
import pandas as pd

from raidlab import _core
from raidlab.config import to_toml
from raidlab.exceptions import RaidlabError, RaidlabIOError

__all__ = [
    "DISKSIM_PUBLISHED",
    "DISKSIM_SOURCE",
    "PublishedValidation",
    "Validation",
    "drive_table",
    "validate",
    "disksim_bucket_starts",
    "disksim_rms",
    "draw_validation_cdfs",
    "plot_validation",
    "ReportEntry",
    "run_validation_report",
    "render_validation_report",
    "write_validation_report",
]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class PublishedValidation:
    """What DiskSim's distribution states about one of its validation traces."""

    #: The drive, as DiskSim names it.
    drive: str
    #: Requests in the trace.
    requests: int
    #: Mean of the measured service times, ms.
    measured_mean_ms: float
    #: DiskSim's demerit against the measured times, ms.
    disksim_demerit_ms: float


#: Where :data:`DISKSIM_PUBLISHED` comes from.
DISKSIM_SOURCE = (
    "DiskSim 4.0 (Carnegie Mellon University Parallel Data Lab), `valid/runvalid`: the "
    "\"rms should be about …\" figure of each validation run, as tabulated with the traces' "
    "request counts and measured means in `../shared/diskspecs/README.md`"
)

#: DiskSim's own accuracy on its ten validation traces (:data:`DISKSIM_SOURCE`), by trace
#: name (``NAME.parv`` / ``NAME.trace``), in the README's order.
DISKSIM_PUBLISHED: Dict[str, PublishedValidation] = {
    "atlas_III": PublishedValidation("Quantum Atlas III QM39100TD-SW", 10_000, 6.26, 0.378),
    "barracuda": PublishedValidation("Seagate Barracuda ST32171W", 10_000, 6.63, 0.349),
    "cheetah4LP": PublishedValidation("Seagate Cheetah 4LP ST34501N", 10_000, 5.33, 0.318),
    "cheetah9LP": PublishedValidation("Seagate Cheetah 9LP ST39102LW", 10_000, 4.27, 0.107),
    "ibm18es": PublishedValidation("IBM Ultrastar 18ES DNES-309170W", 10_000, 5.26, 0.135),
    "atlas10k": PublishedValidation("Quantum Atlas 10K (Tornado)", 10_000, 3.89, 0.268),
    "hp_c2247a": PublishedValidation("HP C2247A", 9_999, 15.30, 0.090),
    "hp_c3323a": PublishedValidation("HP C3323A", 9_074, 15.77, 0.306),
    "hp_c2490a": PublishedValidation("HP C2490A", 9_984, 12.55, 0.254),
    "dec_rz26": PublishedValidation("DEC RZ26", 7_980, 15.81, 0.340),
}


@dataclass
class Validation:
    """The comparison of one drive model with one real-drive trace.

    ``summary`` holds the figures (see ``raidlab_core::api::validate_toml``): ``requests``,
    ``measured_mean_ms``, ``simulated_mean_ms``, ``demerit_ms``, ``demerit_percent``,
    ``mean_abs_difference_ms``, the same for ``read`` and ``write`` alone, and
    ``beyond_capacity`` (trace requests that did not fit on the drive and were folded onto
    it). The tables: the two empirical CDFs (``response_ms``, ``fraction``) and one row per
    request (``line``, ``is_write``, ``buffer``, ``lbn``, ``blocks``, ``measured_ms``,
    ``simulated_ms``).
    """

    summary: Dict[str, Any]
    measured_cdf: pd.DataFrame
    simulated_cdf: pd.DataFrame
    requests: pd.DataFrame
    resolved_config: str
    config_hash: str

    @classmethod
    def from_core(cls, output: Mapping[str, Any]) -> "Validation":
        """Build from the dict ``raidlab._core.validate`` returns."""
        import json

        tables = {name: pd.DataFrame(dict(columns)) for name, columns in output["tables"].items()}
        return cls(
            summary=json.loads(output["summary"]),
            measured_cdf=tables["measured_cdf"],
            simulated_cdf=tables["simulated_cdf"],
            requests=tables["requests"],
            resolved_config=output["resolved_config"],
            config_hash=output["config_hash"],
        )

    def _figure(self, key: str) -> float:
        value = self.summary.get(key)
        return float(value) if value is not None else math.nan

    @property
    def request_count(self) -> int:
        """Requests replayed (every line of the trace)."""
        return int(self.summary["requests"])

    @property
    def measured_mean_ms(self) -> float:
        """Mean service time the real drive measured, ms."""
        return self._figure("measured_mean_ms")

    @property
    def simulated_mean_ms(self) -> float:
        """Mean simulated response time, ms."""
        return self._figure("simulated_mean_ms")

    @property
    def demerit_ms(self) -> float:
        """RMS horizontal distance between the measured and simulated CDFs, ms."""
        return self._figure("demerit_ms")

    @property
    def demerit_percent(self) -> float:
        """The demerit as a percentage of the measured mean."""
        return self._figure("demerit_percent")


def drive_table(drive: Union[PathLike, Mapping[str, Any]]) -> Dict[str, Any]:
    """The ``[drive]`` table for ``drive``: a mapping is used as it is; a path to an existing
    file is a DiskSim specification (``{"diskspec": <absolute path>}``); anything else is a
    preset name (``{"preset": drive}``)."""
    if isinstance(drive, Mapping):
        return dict(drive)
    path = Path(os.fspath(drive))
    if path.is_file():
        return {"diskspec": str(path.resolve())}
    return {"preset": os.fspath(drive)}


def _check_meant_as_file(drive: Union[PathLike, Mapping[str, Any]]) -> None:
    """A drive named like a file (a suffix, a directory part) that is not a file is a
    :class:`RaidlabIOError` saying so, rather than "unknown drive preset '../specs/x.parv'"
    (presets are plain names)."""
    if isinstance(drive, Mapping):
        return
    name = os.fspath(drive)
    path = Path(name)
    if path.is_file():
        return
    if path.exists() or path.suffix or "/" in name or os.sep in name:
        error = errno.EISDIR if path.is_dir() else errno.ENOENT
        raise RaidlabIOError(os.strerror(error), file=name, errno=error)


def validate(
    drive: Union[PathLike, Mapping[str, Any]],
    trace: PathLike,
    *,
    base_dir: Optional[PathLike] = None,
) -> Validation:
    """Replay the validate trace ``trace`` on ``drive`` (see :func:`drive_table`) and compare
    with the measured times. Relative paths in a mapping start from ``base_dir`` (default: the
    current directory). Errors are :class:`raidlab.RaidlabError` subclasses: a bad drive is a
    ``ConfigError`` (or ``SpecError``), a malformed trace line a ``TraceError`` with file and
    line."""
    _check_meant_as_file(drive)
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    # The trace is named by the user: relative to the working directory, not to `base_dir`.
    trace_path = Path(os.fspath(trace)).resolve()
    output = _core.validate(to_toml(drive_table(drive)), str(trace_path), str(base))
    return Validation.from_core(output)


# ---------------------------------------------------------------------------------------------
# DiskSim's construction of the demerit (a cross-check of the exact one)
# ---------------------------------------------------------------------------------------------


def disksim_bucket_starts(buckets: int = 1750, start: int = 0, step: int = 1, grow: int = 1) -> np.ndarray:
    """Bucket boundaries (µs) of DiskSim's ``Physical access time`` and ``Trace access time``
    distributions (``statdefs``: 1750 buckets, scale 1000, ``Start 0 step 1 grow 1``): each
    boundary is the previous one plus ``step`` plus ``grow`` % of it, truncated
    (``stat_get_large_dist`` in ``disksim_stat.c``)."""
    starts = []
    value = start
    for _ in range(buckets):
        starts.append(value)
        value += step + int(abs(value) * grow / 100.0)
    return np.asarray(starts, dtype=np.int64)


def _disksim_cdf(sample_ms: np.ndarray, starts: np.ndarray) -> "tuple[np.ndarray, np.ndarray]":
    """The (x ms, cumulative fraction) lines DiskSim prints for a sample, as ``rms`` reads them:
    a value of ``v`` µs (truncated) with ``starts[k] <= v < starts[k+1]`` counts in bucket
    ``k+1``, printed at ``starts[k+1]``; fractions are printed with six decimals and reading
    stops at the first line that shows 1."""
    microseconds = np.trunc(np.asarray(sample_ms, dtype=float) * 1000.0).astype(np.int64)
    bucket = np.minimum(np.searchsorted(starts, microseconds, side="right"), len(starts) - 1)
    density = np.bincount(bucket, minlength=len(starts)) / float(len(microseconds))
    x, y = [], []
    cumulative = 0.0
    for k in range(len(starts)):
        cumulative += density[k]
        shown = float(f"{cumulative:f}")
        x.append(starts[k] / 1000.0)
        y.append(shown)
        if shown >= 1.0:
            break
    return np.asarray(x), np.asarray(y)


def disksim_rms(measured_ms: Any, simulated_ms: Any) -> float:
    """The demerit as DiskSim's ``rms`` tool computes it (``src/rms.c``): both samples binned
    as :func:`disksim_bucket_starts`, the CDF lines joined linearly, and the horizontal
    distance averaged (RMS) at p = 0.0001, 0.0002, … ≤ 1. Only a cross-check of raidlab's
    exact demerit; the report shows both."""
    starts = disksim_bucket_starts()
    x1, y1 = _disksim_cdf(np.asarray(measured_ms), starts)
    x2, y2 = _disksim_cdf(np.asarray(simulated_ms), starts)
    i1 = i2 = 0
    squares = 0.0
    count = 0
    p = 0.0001
    while p <= 1.0:
        while y1[i1] < p:
            i1 += 1
        while y2[i2] < p:
            i2 += 1
        x1p = x1[i1 - 1] + (p - y1[i1 - 1]) / (y1[i1] - y1[i1 - 1]) * (x1[i1] - x1[i1 - 1])
        x2p = x2[i2 - 1] + (p - y2[i2 - 1]) / (y2[i2] - y2[i2 - 1]) * (x2[i2] - x2[i2 - 1])
        squares += (x1p - x2p) ** 2
        count += 1
        p += 0.0001
    return math.sqrt(squares / count)


# ---------------------------------------------------------------------------------------------
# Plots (pure functions of the validation's tables)
# ---------------------------------------------------------------------------------------------


def draw_validation_cdfs(ax: Any, validation: Validation, title: Optional[str] = None) -> Any:
    """The measured and the simulated response-time CDFs as step functions on one ``Axes``,
    with the means and the demerit in the legend and title."""
    for frame, label, style in (
        (validation.measured_cdf, f"measured (mean {validation.measured_mean_ms:.2f} ms)",
         {"color": "k", "linewidth": 1.6}),
        (validation.simulated_cdf, f"raidlab (mean {validation.simulated_mean_ms:.2f} ms)",
         {"color": "C0", "linewidth": 1.2, "linestyle": "--"}),
    ):
        x = frame["response_ms"].to_numpy(dtype=float)
        p = frame["fraction"].to_numpy(dtype=float)
        # Start the staircase at 0 requests just left of the smallest value.
        ax.step([x[0], *x], [0.0, *p], where="post", label=label, **style)
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    demerit = (f"demerit {validation.demerit_ms:.3f} ms ({validation.demerit_percent:.1f} % of the "
               f"measured mean), {validation.request_count:,} requests")
    ax.set_title(f"{title}\n{demerit}" if title else demerit, fontsize="medium")
    return ax


def plot_validation(validation: Validation, output: PathLike, title: Optional[str] = None) -> Path:
    """Draw :func:`draw_validation_cdfs` into a PNG at ``output`` (directories created)."""
    from matplotlib.figure import Figure

    from raidlab.output.plots import save_figure

    figure = Figure(figsize=(7, 4.5), layout="constrained")
    draw_validation_cdfs(figure.subplots(), validation, title)
    path = Path(output)
    try:
        save_figure(figure, path, dpi=100)
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(path), errno=error.errno) from None
    return path


# ---------------------------------------------------------------------------------------------
# The validation report (docs/validation.md)
# ---------------------------------------------------------------------------------------------


@dataclass
class ReportEntry:
    """One drive of the report: its validation, or why it could not run."""

    name: str
    published: PublishedValidation
    drive: Dict[str, Any]
    validation: Optional[Validation] = None
    error: Optional[str] = None
    #: The CDF plot, relative to the report's directory.
    image: Optional[str] = None


def run_validation_report(
    diskspecs_dir: PathLike,
    image_dir: Optional[PathLike] = None,
    *,
    drives: Optional[Mapping[str, Mapping[str, Any]]] = None,
    image_link_base: Optional[PathLike] = None,
) -> List[ReportEntry]:
    """Validate every drive of :data:`DISKSIM_PUBLISHED` on ``diskspecs_dir/NAME.trace`` with
    the spec ``diskspecs_dir/NAME.parv`` (or the ``[drive]`` table ``drives[NAME]``, e.g. a
    preset standing in for it). A drive that fails (its spec cannot be imported, a file is
    missing) is kept with its error. CDF plots go to ``image_dir/NAME.png`` when given; their
    links are relative to ``image_link_base`` (default: ``image_dir``'s parent)."""
    directory = Path(diskspecs_dir)
    entries = []
    for name, published in DISKSIM_PUBLISHED.items():
        table = dict(drives[name]) if drives and name in drives else {"diskspec": str((directory / f"{name}.parv").resolve())}
        entry = ReportEntry(name=name, published=published, drive=table)
        try:
            entry.validation = validate(table, directory / f"{name}.trace", base_dir=directory)
        except RaidlabError as error:
            entry.error = str(error)
        if entry.validation is not None and image_dir is not None:
            image = plot_validation(entry.validation, Path(image_dir) / f"{name}.png",
                                    title=f"{name}: {published.drive}")
            base = Path(image_link_base) if image_link_base is not None else Path(image_dir).parent
            entry.image = os.path.relpath(image, base).replace(os.sep, "/")
        entries.append(entry)
    return entries


#: Requests faster than this (ms) were mostly cache hits (a report section counts them).
FAST_MS = 1.5


def _number(value: float, digits: int) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _drive_label(table: Mapping[str, Any]) -> str:
    if "diskspec" in table:
        return f"spec `{Path(str(table['diskspec'])).name}`"
    if "preset" in table:
        return f"preset `{table['preset']}`"
    return "model"


_INTRODUCTION = """\
# Drive validation against real-drive traces

<!-- Generated by `{command}`; do not edit by hand. -->

How closely does raidlab's drive model reproduce real drives? DiskSim 4.0 ships ten drive
specifications together with a *validation trace* for each: about 10,000 requests that the
real drive served, with the service time it measured for every one. raidlab replays each trace
on the drive built from its specification and compares the two response-time distributions
the way DiskSim's authors do — so DiskSim's own published accuracy on the same traces is the
yardstick.

## How the comparison is made

- **Replay.** One drive (RAID-0 over one drive, one stripe unit spanning it, so each request
  is one disk operation at its own address), requests in trace order, one outstanding at a
  time: request *k+1* is issued the trace's `next_interarrival_us` after request *k*
  completes. That is DiskSim's rule (it reads the next line when a request completes;
  `disksim_iotrace.c`), reproduced by `[workload.arrival] process = "closed"`,
  `outstanding = 1`, `think_from_trace = true`. Laying the gaps end to end instead would load
  the HP and DEC drives beyond 100 %: their mean gap is shorter than their mean service time.
- **Demerit** (Ruemmler & Wilkes 1994): the root-mean-square horizontal distance between the
  measured and the simulated response-time CDFs,
  `sqrt(∫₀¹ (Q_measured(p) − Q_simulated(p))² dp)` with `Q` the quantile function, in ms and
  as a percentage of the measured mean. raidlab computes it exactly from the two samples
  (for equal sizes, the RMS difference of the sorted samples). DiskSim's `rms` tool reads the
  CDFs from histograms (1 µs bins growing by 1 %), joins the bin edges linearly and averages
  over 10,000 probabilities. On the measured samples shifted or scaled, the two constructions
  agree within 1 % (`tests/test_validate.py`); each validated drive below shows both.
- **Ratio** = raidlab's demerit / DiskSim's: 1 means as accurate as DiskSim, below 1 better.
- DiskSim's figures: {source}.

Regenerate with `make validation`, which runs `{command}`; it takes seconds.
"""


def render_validation_report(entries: List[ReportEntry], command: str) -> str:
    """The markdown of ``docs/validation.md`` for ``entries``."""
    lines = [_INTRODUCTION.format(command=command, source=DISKSIM_SOURCE), "## Results", ""]
    lines += [
        "| trace | drive | raidlab drive | requests | measured mean (ms) | raidlab mean (ms) "
        "| raidlab demerit (ms) | % of mean | DiskSim demerit (ms) | ratio to DiskSim "
        "| reads: demerit (ms) | writes: demerit (ms) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for entry in entries:
        published = entry.published
        v = entry.validation
        if v is None:
            lines.append(
                f"| `{entry.name}` | {published.drive} | {_drive_label(entry.drive)} "
                f"| {published.requests:,} | {published.measured_mean_ms:.2f} "
                f"| — | not run | — | {published.disksim_demerit_ms:.3f} | — | — | — |"
            )
            continue
        ratio = v.demerit_ms / published.disksim_demerit_ms
        by_kind = [(v.summary.get(kind) or {}).get("demerit_ms") for kind in ("read", "write")]
        lines.append(
            f"| `{entry.name}` | {published.drive} | {_drive_label(entry.drive)} "
            f"| {v.request_count:,} | {v.measured_mean_ms:.2f} | {v.simulated_mean_ms:.2f} "
            f"| {v.demerit_ms:.3f} | {v.demerit_percent:.1f} | {published.disksim_demerit_ms:.3f} "
            f"| {ratio:.1f} | {_number(by_kind[0], 3)} | {_number(by_kind[1], 3)} |"
        )
    failed = [entry for entry in entries if entry.validation is None]
    if failed:
        lines += ["", "For drives not run, the requests and the measured mean are DiskSim's published "
                      "figures; otherwise they are read from the trace."]
        lines += [
            "",
            "## Drives not validated",
            "",
            f"{len(failed)} of {len(entries)} drives could not be run; the error for each:",
            "",
            "| trace | raidlab drive | error |",
            "|---|---|---|",
        ]
        for entry in failed:
            error = (entry.error or "unknown error").replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{entry.name}` | {_drive_label(entry.drive)} | {error} |")
    ran = [entry for entry in entries if entry.validation is not None]
    if ran:
        lines += [
            "",
            "### The exact demerit against DiskSim's construction",
            "",
            "The same two samples, with the demerit computed as DiskSim's `rms` tool does it "
            "(binned CDFs joined linearly, 10,000 probabilities; `raidlab.experiments.validate.disksim_rms`):",
            "",
            "| trace | exact (ms) | DiskSim's construction (ms) | difference (ms) |",
            "|---|---:|---:|---:|",
        ]
        for entry in ran:
            requests = entry.validation.requests
            binned = disksim_rms(requests["measured_ms"], requests["simulated_ms"])
            exact = entry.validation.demerit_ms
            lines.append(f"| `{entry.name}` | {exact:.4f} | {binned:.4f} | {binned - exact:+.4f} |")
    if ran:
        lines += [
            "",
            f"### Requests served in under {FAST_MS:g} ms",
            "",
            "A random access needs a seek and on average half a revolution, several ms on these "
            "drives, so requests this fast were mostly served by the drive's cache (read hits, "
            "write-back); a drive model without such a cache cannot match them.",
            "",
            "| trace | reads: measured | reads: raidlab | writes: measured | writes: raidlab |",
            "|---|---:|---:|---:|---:|",
        ]
        for entry in ran:
            requests = entry.validation.requests
            shares = []
            for is_write in (0, 1):
                kind = requests[requests["is_write"] == is_write]
                for column in ("measured_ms", "simulated_ms"):
                    shares.append(f"{(kind[column] < FAST_MS).mean():.1%}" if len(kind) else "—")
            lines.append(f"| `{entry.name}` | " + " | ".join(shares) + " |")
    warned = [e for e in entries if e.validation is not None and e.validation.summary.get("beyond_capacity")]
    if warned:
        lines += ["", "Requests beyond the drive's capacity (folded onto it, so the drive is not the "
                      "trace's): " + ", ".join(f"`{e.name}` {int(e.validation.summary['beyond_capacity']):,}"
                                               for e in warned) + "."]
    plotted = [entry for entry in entries if entry.image is not None]
    if plotted:
        lines += ["", "## Response-time distributions", ""]
        for entry in plotted:
            lines += [f"### `{entry.name}` — {entry.published.drive}", "",
                      f"![{entry.name}: measured and simulated response-time CDFs]({entry.image})", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_validation_report(
    diskspecs_dir: PathLike,
    output: PathLike,
    *,
    command: str = "raidlab docs validation -o docs/validation.md --diskspecs ../shared/diskspecs",
    drives: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> List[ReportEntry]:
    """Run :func:`run_validation_report` and write the markdown to ``output`` and the plots
    to ``validation/`` beside it (stale plots of that directory are removed first)."""
    path = Path(output)
    image_dir = path.parent / path.stem
    if not Path(diskspecs_dir).is_dir():
        # Checked first: the report and its plots are replaced, with every drive failed.
        raise RaidlabIOError("not a directory of DiskSim specs and traces", file=os.fspath(diskspecs_dir))
    try:
        if image_dir.is_dir():
            for stale in image_dir.glob("*.png"):
                stale.unlink()
        entries = run_validation_report(diskspecs_dir, image_dir, drives=drives, image_link_base=path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_validation_report(entries, command), encoding="utf-8")
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(error.filename or path), errno=error.errno) from None
    return entries
