"""Golden cells: each reproduction's key cells on a cheap subset, checked in, so drift shows.

For Fu et al., PRO, VDF and SWO this module runs a small subset of what ``raidlab reproduce
PAPER`` runs, with the reproduction's own configuration, its own functions and its own metric
definitions, only at a smaller scale (:data:`SUBSETS` says what each subset is), for the seeds
:data:`SEEDS`. Each number it reads off (a *cell*: a rebuild time, a mean response, an RGR, an
improvement) is kept per seed and as the mean over the seeds.

``make bless`` (:func:`bless`) writes ``tests/golden/<paper>.json``: every cell's mean and
per-seed values, its noise tolerance and how that tolerance was set, and the code that made
them (the git commit, whether the tree had uncommitted changes, the package's version, the
core's version with a digest of the compiled extension, and whether that extension is older
than the checkout's Rust sources). ``tests/test_golden.py`` runs
the same subset again (:func:`measure`) and fails when a cell's mean moved by more than its
tolerance (:func:`compare`), naming the paper, the cell, the stored and the new value and the
tolerance.

**Tolerances** (:func:`tolerance`). The same configuration and seed give byte-identical
results, so a rerun of unchanged code moves nothing; a tolerance says how far a cell may move
when the code changes in a way that should not matter (a different but equivalent draw of the
random numbers, say) before the change counts as drift.

* A cell that has the same value for every seed is *deterministic* (its inputs do not depend
  on the seed: a trace drawn with a fixed seed and replayed without random choices, a cache
  simulation, the same sequential stream for every seed). Its tolerance is
  :data:`DETERMINISTIC_RELATIVE` of its value (at least :data:`ABSOLUTE_FLOOR`): any change of
  the simulation that reaches it is drift.
* Any other cell is *stochastic*. With ``s`` the sample standard deviation of its per-seed
  values and ``n`` seeds, its mean over a new, equivalent draw of ``n`` seeds would differ
  from the stored mean with standard deviation ``s·√(2/n)``; the tolerance is
  :data:`SIGMAS` of those: ``3·s·√(2/n)``.

A deliberate 5 % change of a drive's seek curve is tested by :func:`seek_scaled_drives`,
which stands a ``drive.model`` table (or a copy of the DiskSim spec, for the DiskSim-derived
``ibm18es``) with every seek time scaled in for a preset; :func:`measure` takes it as
``drives``.

Run ``python -m raidlab.reproductions.golden`` to compare, ``--bless`` to rewrite the files.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from raidlab.exceptions import RaidlabError
from raidlab.reproductions.context import Context, repository_root

__all__ = ["PAPERS", "SEEDS", "SIGMAS", "DETERMINISTIC_RELATIVE", "ABSOLUTE_FLOOR", "SUBSETS", "SEED_MEANING",
           "Drift", "GoldenError", "golden_dir", "measure", "tolerance", "document", "bless", "load", "compare",
           "check", "seek_scaled_drives", "config_of", "preset_of", "code_facts", "main"]

#: The reproductions with golden cells, in report order.
PAPERS: Tuple[str, ...] = ("fu", "pro", "vdf", "swo")
#: The seeds every subset runs with (what each paper's seed stands for: :data:`SEED_MEANING`).
SEEDS: Tuple[int, ...] = (1, 2, 3)
#: A stochastic cell's tolerance, in standard deviations of the difference of two means over
#: :data:`SEEDS`.
SIGMAS = 3.0
#: A deterministic cell's tolerance, relative to its value.
DETERMINISTIC_RELATIVE = 1e-9
#: The smallest tolerance of any cell (a cell whose value is 0).
ABSOLUTE_FLOOR = 1e-12
#: The file format of ``tests/golden/<paper>.json``.
FORMAT = 1

#: What each subset runs, as the files state it.
SUBSETS: Dict[str, str] = {
    "fu": ("experiments/fu/base.toml (N = 19 ibm18es RAID-5 + spare, 4 KiB random reads, u = 0.45, failure at "
           "135 s, DOR, VSM, one-track units, B = 64, redirection on) with array.drives = 5 (the whole drives); "
           "cases: VSM (the base), PCM, and VSM without read redirection; the reproduction's worker "
           "(reproduce.run_one) measures each run"),
    "pro": ("experiments/pro/base.toml (st3146807lc, SPTF, DOR with RAIDframe's buffers, 64 KB units, redirection "
            "on, failure at 0 s, the run ending with the rebuild) on RAID-5 of 3 and RAID-1 of 2 + spare, drives "
            "limited to 1 GiB, the websearch1 and websearch3 look-alikes at 80,000 requests each (the array's "
            "capacity as their area, as the reproduction draws them), DOR (sequential) and PRO"),
    "vdf": ("a websearch1 look-alike of 150,000 records over 8 GiB (seed 1); RGR of LRU, VDF-LRU, LFU and VDF-LFU "
            "after warm-up at 8,192 and 32,768 blocks for 5 and 8 drives (drive 0 failed); the miss streams of the "
            "16,384-block caches over the first 80,000 records replayed on experiments/vdf/base.toml (hc550) with drives of 1 GiB, open loop "
            "while drive 0 is rebuilt (md's resync, Table 3's measure) and closed loop degraded with 60 threads "
            "(Figs. 7-9's measure)"),
    "swo": ("experiments/swo.toml (7 hc550 of 10 GiB, RAID-5) with 150 s of the Financial1 and Financial2 "
            "look-alikes at 512 KiB chunks (RAID5, DL, SWO, md's journal, PPL) and of Financial1 at 4 KiB chunks "
            "(RAID5, DL, RAID5L, SWO), the log drive failing 1 s after the replay (Fig. 10's re-sync); and 2,000 "
            "IOmeter-like writes of 4 and 64 KiB, 1 and 16 outstanding, sequential and random, at 512 KiB chunks "
            "(RAID5, DL, SWO: Fig. 6) and at 4 KiB chunks (RAID5, SWO: Fig. 7's smallest chunk)"),
}
#: What the seed of each subset changes.
SEED_MEANING: Dict[str, str] = {
    "fu": "the run's seed: the Poisson arrivals and the request addresses",
    "pro": ("the run's seed; the look-alike traces are drawn with seed 1 whatever the run's seed, as raidlab "
            "reproduce pro draws them"),
    "vdf": ("the replays' seed; the look-alike (seed 1), the RGR grid and the miss streams do not depend on it, "
            "as in raidlab reproduce vdf"),
    "swo": ("the run's seed and the seed of the Financial look-alikes and of the random IOmeter-like stream, as in "
            "raidlab reproduce swo; the sequential stream is the same for every seed"),
}


class GoldenError(RaidlabError):
    """A golden run failed, or a golden file is missing or malformed."""


@dataclass(frozen=True)
class Drift:
    """A cell that moved beyond its tolerance (or appeared, or went missing)."""

    paper: str
    cell: str
    stored: Optional[float]
    new: Optional[float]
    tolerance: Optional[float]

    def message(self) -> str:
        if self.stored is None:
            return f"{self.paper}: cell {self.cell!r} is new (value {self.new!r}); not in the golden file"
        if self.new is None:
            return f"{self.paper}: cell {self.cell!r} (stored {self.stored!r}) was not measured"
        moved = self.new - self.stored
        relative = f", {100.0 * moved / abs(self.stored):+.3g} %" if self.stored else ""
        return (f"{self.paper}: cell {self.cell!r} moved beyond its noise: stored {self.stored!r}, now {self.new!r} "
                f"(moved {moved:+.6g}{relative}), tolerance ±{self.tolerance:.6g}")


def golden_dir() -> Path:
    """``tests/golden`` of the repository this package runs from."""
    return repository_root() / "tests" / "golden"


# ---------------------------------------------------------------------------------------------
# Running the subsets
# ---------------------------------------------------------------------------------------------

#: One run: (configuration file, overrides) -> metrics.
Task = Tuple[Path, Tuple[str, ...], Callable[[Path, Sequence[str]], Dict[str, float]]]


def _experiments() -> Path:
    from raidlab.reproductions.reproduce import default_experiments_dir

    return default_experiments_dir()


def _literal(key: str, value: Any) -> str:
    from raidlab.config import toml_literal

    return f"{key}={toml_literal(value)}"


def _summary_metrics(config: Path, overrides: Sequence[str]) -> Dict[str, Any]:
    """A run's summary flattened as the sweeps flatten it (``results.store.summary_metrics``)."""
    import raidlab
    from raidlab.results.store import summary_metrics

    return summary_metrics(raidlab.run(config, overrides=list(overrides)).summary)


def _with_drive(config: Path, overrides: Sequence[str], drives: Optional[Mapping[str, Mapping[str, Any]]]) -> Tuple[str, ...]:
    """``overrides`` with the configuration's preset drive replaced by ``drives[preset]`` (a
    ``[drive]`` table without ``preset``), the other keys of its ``[drive]`` kept; the
    replacement comes first, so that the run's own ``drive.*`` overrides still apply."""
    if not drives:
        return tuple(overrides)
    from raidlab.config import parse_toml

    table = dict(parse_toml(config.read_text(encoding="utf-8"), config).get("drive") or {})
    preset = table.get("preset")
    if preset not in drives:
        return tuple(overrides)
    table.pop("preset")
    table.update(drives[preset])
    return (_literal("drive", table), *overrides)


def _execute(tasks: Mapping[Tuple[int, str], Task], jobs: int,
             drives: Optional[Mapping[str, Mapping[str, Any]]]) -> Dict[Tuple[int, str], Dict[str, float]]:
    """Every task's metrics, on ``jobs`` threads (the core releases the GIL while it runs)."""

    def one(key: Tuple[int, str]) -> Dict[str, float]:
        config, overrides, read = tasks[key]
        overrides = _with_drive(config, overrides, drives)
        try:
            return read(config, overrides)
        except RaidlabError as error:
            raise GoldenError(f"golden run {key[1]!r} (seed {key[0]}) failed: {error} "
                              f"(configuration {config}, overrides {' '.join(overrides)})") from None

    keys = list(tasks)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return dict(zip(keys, pool.map(one, keys)))


def _reduction(base: float, other: float) -> float:
    """(base − other) / base in %: how much ``other`` reduces ``base``."""
    return 100.0 * (base - other) / base if base else math.nan


# -- Fu et al. ------------------------------------------------------------------------------------

FU_CONFIG = "fu/base.toml"
FU_DRIVES = 5
FU_CASES: Dict[str, Tuple[str, ...]] = {
    "VSM": (),
    "PCM": ('rebuild.discipline="pcm"',),
    "VSM, no redirection": ("rebuild.redirect_reads=false",),
}
FU_METRICS = {"rebuild_time_s": "rebuild time (s)", "response_rebuilding_ms": "mean response while rebuilding (ms)",
              "response_normal_ms": "mean response before the failure (ms)",
              "arrival_rate_per_s": "arrival rate that loads the drives to u = 0.45 (requests/s)"}
#: The metrics that do not depend on the case (the same seed runs the same period before the
#: failure): kept once, for VSM.
FU_SHARED = ("response_normal_ms", "arrival_rate_per_s")


def _fu_run(config: Path, overrides: Sequence[str]) -> Dict[str, float]:
    from raidlab.reproductions.reproduce import run_one

    answer = run_one(str(config), list(overrides), False)
    if "metrics" not in answer:
        raise GoldenError(str(answer.get("error") or answer))
    return {key: float(answer["metrics"][key]) for key in FU_METRICS}


def _fu(workdir: Path, jobs: int) -> Tuple[Dict[Tuple[int, str], Task], Callable[..., Dict[str, float]], Dict[str, float]]:
    config = config_of("fu")
    tasks: Dict[Tuple[int, str], Task] = {}
    for seed in SEEDS:
        for case, overrides in FU_CASES.items():
            tasks[(seed, case)] = (config, (f"array.drives={FU_DRIVES}", *overrides, f"seed={seed}"), _fu_run)

    def cells(runs: Mapping[str, Mapping[str, float]]) -> Dict[str, float]:
        found = {f"{case}: {label}": runs[case][key] for case in FU_CASES for key, label in FU_METRICS.items()
                 if case == "VSM" or key not in FU_SHARED}
        found["redirection off / on: rebuild time ratio (§2.5)"] = (
            runs["VSM, no redirection"]["rebuild_time_s"] / runs["VSM"]["rebuild_time_s"])
        found["PCM / VSM: rebuild time ratio (Fig. 1)"] = runs["PCM"]["rebuild_time_s"] / runs["VSM"]["rebuild_time_s"]
        return found

    return tasks, cells, {}


# -- PRO -----------------------------------------------------------------------------------------

PRO_ARRAYS: Tuple[Tuple[str, int], ...] = (("raid5", 3), ("raid1", 2))
PRO_TRACES: Tuple[str, ...] = ("websearch1", "websearch3")
PRO_REQUESTS = 80_000
PRO_CAPACITY_GIB = 1.0


def _pro_run(config: Path, overrides: Sequence[str]) -> Dict[str, float]:
    from raidlab.reproductions import pro

    row = _summary_metrics(config, overrides)
    if row.get("rebuild.outcome") != "complete" or row.get("overloaded"):
        raise GoldenError(f"the rebuild did not complete (outcome {row.get('rebuild.outcome')!r}, overloaded "
                          f"{row.get('overloaded')!r})")
    return {"time": float(row[pro.METRIC_TIME]), "response": float(row[pro.METRIC_RESPONSE])}


def _pro(workdir: Path, jobs: int) -> Tuple[Dict[Tuple[int, str], Task], Callable[..., Dict[str, float]], Dict[str, float]]:
    from raidlab.reproductions import pro

    config = config_of("pro")
    # The reproduction's own trace writer: one look-alike per (array capacity, trace), seed 1.
    paths = pro._traces(workdir / "pro", list(PRO_ARRAYS), list(PRO_TRACES), PRO_CAPACITY_GIB, PRO_REQUESTS, 1,
                        Context(output=workdir / "pro"))
    capacity = int(round(PRO_CAPACITY_GIB * pro.SECTORS_PER_GIB))
    tasks: Dict[Tuple[int, str], Task] = {}
    for seed in SEEDS:
        for layout, disks in PRO_ARRAYS:
            for trace in PRO_TRACES:
                for name, order in pro.ORDERS.items():
                    overrides = (f"drive.capacity_sectors={capacity}", _literal("rebuild.order", order),
                                 _literal("array.layout", layout), f"array.drives={disks}",
                                 _literal("workload.trace.path", str(paths[(layout, disks, trace)])), f"seed={seed}")
                    tasks[(seed, f"{layout}-{disks} {trace} {name}")] = (config, overrides, _pro_run)

    def cells(runs: Mapping[str, Mapping[str, float]]) -> Dict[str, float]:
        found: Dict[str, float] = {}
        for layout, disks in PRO_ARRAYS:
            for trace in PRO_TRACES:
                case = f"{pro._label(layout)} {disks} disks, {pro.TRACE_LABELS[trace]}"
                dor, pro_ = runs[f"{layout}-{disks} {trace} DOR"], runs[f"{layout}-{disks} {trace} PRO"]
                for metric, label in (("time", "reconstruction time (s)"),
                                      ("response", "mean response during recovery (ms)")):
                    found[f"{case}: DOR {label}"] = dor[metric]
                    found[f"{case}: PRO {label}"] = pro_[metric]
                    found[f"{case}: PRO improved, {label.split(' (')[0]} (%)"] = pro.improvement(dor[metric], pro_[metric])
        return found

    return tasks, cells, {}


# -- VDF -----------------------------------------------------------------------------------------

VDF_OPTIONS = {"records": 150_000, "area_gib": 8}
#: The prefix of the trace whose miss streams are replayed.
VDF_REPLAY_RECORDS = 80_000
VDF_DRIVES: Tuple[int, ...] = (5, 8)
VDF_RGR_SIZES: Tuple[int, ...] = (8_192, 32_768)
VDF_REPLAY_SIZE = 16_384
VDF_CAPACITY_GIB = 1.0
VDF_THREADS = 60


def _vdf_run(metric: str) -> Callable[[Path, Sequence[str]], Dict[str, float]]:
    def read(config: Path, overrides: Sequence[str]) -> Dict[str, float]:
        row = _summary_metrics(config, overrides)
        if metric == "rebuild_time_s" and row.get("rebuild.outcome") != "complete":
            raise GoldenError(f"the rebuild did not complete (outcome {row.get('rebuild.outcome')!r})")
        return {"value": float(row[metric])}

    return read


def _vdf(workdir: Path, jobs: int) -> Tuple[Dict[Tuple[int, str], Task], Callable[..., Dict[str, float]], Dict[str, float]]:
    from raidlab.reproductions import vdf

    output = workdir / "vdf"
    context = Context(output=output)
    output.mkdir(parents=True, exist_ok=True)
    trace, _ = vdf._trace(output, VDF_OPTIONS, context)
    grid = vdf._stored_grid(output / "rgr.json", trace, VDF_DRIVES, VDF_RGR_SIZES)
    if grid is None:
        grid = vdf._rgr_grid(trace, VDF_DRIVES, VDF_RGR_SIZES, jobs, context)
        vdf._store_grid(grid, output / "rgr.json", trace, VDF_DRIVES, VDF_RGR_SIZES)
    streams = [(policy, VDF_REPLAY_SIZE, n) for n in VDF_DRIVES for policy in vdf.POLICIES]
    misses = vdf._miss_streams(trace, vdf._trace_tag(trace), output / "misses", streams, VDF_REPLAY_RECORDS, jobs,
                               context)
    config = config_of("vdf")
    common = {"drive.capacity_sectors": vdf.capacity_sectors(VDF_CAPACITY_GIB, VDF_DRIVES)}
    open_keys = [_literal(k, v) for k, v in {**common, **vdf.OPEN_LOOP_KEYS}.items()]
    closed_keys = [_literal(k, v) for k, v in {**common, **vdf.CLOSED_LOOP_KEYS}.items()]
    tasks: Dict[Tuple[int, str], Task] = {}
    for seed in SEEDS:
        for policy, size, n in streams:
            point = (f"array.drives={n}", _literal("workload.trace.path", misses[(policy, size, n)]["path"]))
            tasks[(seed, f"open {policy} {n}")] = (config, (*open_keys, *point, f"seed={seed}"),
                                                   _vdf_run(vdf.METRIC_RD))
            tasks[(seed, f"closed {policy} {n}")] = (
                config, (*closed_keys, *point, f"workload.arrival.outstanding={VDF_THREADS}", f"seed={seed}"),
                _vdf_run(vdf.METRIC_PD))

    fixed: Dict[str, float] = {}
    for n in VDF_DRIVES:
        for size in VDF_RGR_SIZES:
            for policy in vdf.POLICIES:
                fixed[f"{n} disks, {size:,} blocks: {vdf.LABELS[policy]} RGR after warm-up (Figs. 3-5)"] = float(
                    grid[(policy, size, n)]["after"])
            for policy, base in vdf.BASE_OF.items():
                fixed[f"{n} disks, {size:,} blocks: {vdf.LABELS[policy]} RGR reduction (%)"] = 100.0 * vdf.rgr_reduction(
                    grid[(base, size, n)]["after"], grid[(policy, size, n)]["after"])

    def cells(runs: Mapping[str, Mapping[str, float]]) -> Dict[str, float]:
        found: Dict[str, float] = {}
        for n in VDF_DRIVES:
            where = f"{n} disks, {VDF_REPLAY_SIZE:,} blocks"
            for policy in vdf.POLICIES:
                found[f"{where}: {vdf.LABELS[policy]} reconstruction time, open loop (s)"] = runs[f"open {policy} {n}"]["value"]
                found[f"{where}: {vdf.LABELS[policy]} play duration, closed loop, {VDF_THREADS} threads (s)"] = (
                    runs[f"closed {policy} {n}"]["value"])
            for policy, base in vdf.BASE_OF.items():
                found[f"{where}: {vdf.LABELS[policy]} reconstruction improvement (Table 3, %)"] = (
                    100.0 * vdf.reconstruction_improvement(runs[f"open {base} {n}"]["value"],
                                                           runs[f"open {policy} {n}"]["value"]))
                found[f"{where}: {vdf.LABELS[policy]} service-rate improvement (Figs. 7-9, %)"] = (
                    100.0 * vdf.service_rate_improvement(runs[f"closed {base} {n}"]["value"],
                                                         runs[f"closed {policy} {n}"]["value"]))
        return found

    return tasks, cells, fixed


# -- SWO -----------------------------------------------------------------------------------------

SWO_DURATION_S = 150.0
SWO_IOMETER_REQUESTS = 2_000
SWO_TRACE_CASES: Tuple[Tuple[str, int, Tuple[str, ...]], ...] = (
    ("financial1", 512, ("RAID5", "DL", "SWO", "MDJ", "PPL")),
    ("financial2", 512, ("RAID5", "DL", "SWO", "MDJ", "PPL")),
    ("financial1", 4, ("RAID5", "DL", "RAID5L", "SWO")),
)
#: The IOmeter-like runs: chunk -> schemes (Fig. 6 at 512 KiB, Fig. 7's smallest chunk beside it).
SWO_IOMETER_SCHEMES: Dict[int, Tuple[str, ...]] = {512: ("RAID5", "DL", "SWO"), 4: ("RAID5", "SWO")}
SWO_METRICS = {"response": "mean response (ms)", "pre_reads": "pre-read blocks per write (Table II)",
               "resync_s": "re-sync after the log drive fails (Fig. 10, s)",
               "md_log_bytes_per_write": "logged bytes per write"}


def _swo_run(case: Any) -> Callable[[Path, Sequence[str]], Dict[str, float]]:
    from raidlab.reproductions import swo

    # A re-sync runs only in the trace runs, whose log drive fails after the replay.
    wanted = [key for key in SWO_METRICS if key != "resync_s" or case.study == "traces"]

    def read(config: Path, overrides: Sequence[str]) -> Dict[str, float]:
        metrics = swo._metrics(_summary_metrics(config, overrides), case)
        return {key: metrics[key] for key in wanted if not math.isnan(metrics.get(key, math.nan))}

    return read


def _swo(workdir: Path, jobs: int) -> Tuple[Dict[Tuple[int, str], Task], Callable[..., Dict[str, float]], Dict[str, float]]:
    from raidlab.reproductions import swo

    config = config_of("swo")
    folder = workdir / "swo"
    folder.mkdir(parents=True, exist_ok=True)
    tasks: Dict[Tuple[int, str], Task] = {}
    for seed in SEEDS:
        chosen = [swo.Case(trace, scheme, chunk) for trace, chunk, schemes in SWO_TRACE_CASES for scheme in schemes]
        chosen += [swo.Case(pattern, scheme, chunk, size, depth) for pattern in swo.IOMETER_PATTERNS
                   for size in swo.IOMETER_SIZES_KIB for depth in swo.IOMETER_DEPTHS
                   for chunk, schemes in SWO_IOMETER_SCHEMES.items() for scheme in schemes]
        for case in chosen:
            if case.study == "traces":
                path = swo._financial_trace(folder, case.workload, SWO_DURATION_S, seed)
            else:
                path = swo._iometer_trace(folder, case.workload, case.size_kib, SWO_IOMETER_REQUESTS, seed)
            keys: Dict[str, Any] = {}
            if case.study == "traces" and case.scheme in swo.LOG_SCHEMES:
                # As the reproduction's re-sync sweep: the log drive fails after the replay.
                keys["failures"] = [{"kind": "log_fails", "at_s": SWO_DURATION_S + swo.LOG_FAILS_AFTER_S}]
            keys.update(swo._case_keys(case, path, SWO_DURATION_S, SWO_IOMETER_REQUESTS, False))
            overrides = (*(_literal(k, v) for k, v in keys.items()), f"seed={seed}")
            tasks[(seed, _swo_name(case))] = (config, overrides, _swo_run(case))

    def cells(runs: Mapping[str, Mapping[str, float]]) -> Dict[str, float]:
        found: Dict[str, float] = {}
        for name, metrics in runs.items():
            for key, value in metrics.items():
                found[f"{name}: {SWO_METRICS[key]}"] = value
        for trace, chunk, _ in SWO_TRACE_CASES:
            where = f"{swo.TRACE_LABELS[trace]}, {chunk} KiB"
            for versus in ("RAID5", "DL"):
                found[f"{where}: SWO's reduction of {versus}'s mean response (Fig. 8, %)"] = _reduction(
                    runs[f"{where}, {versus}"]["response"], runs[f"{where}, SWO"]["response"])
        for pattern in swo.IOMETER_PATTERNS:
            for size in swo.IOMETER_SIZES_KIB:
                for depth in swo.IOMETER_DEPTHS:
                    for chunk, figure in ((512, "Fig. 6"), (4, "Fig. 7")):
                        where = f"IOmeter-like {pattern}, {size} KiB, {depth} outstanding, {chunk} KiB"
                        found[f"{where}: SWO's reduction of RAID5's mean response ({figure}, %)"] = _reduction(
                            runs[f"{where}, RAID5"]["response"], runs[f"{where}, SWO"]["response"])
        return found

    return tasks, cells, {}


def _swo_name(case: Any) -> str:
    from raidlab.reproductions import swo

    if case.study == "traces":
        return f"{swo.TRACE_LABELS[case.workload]}, {case.chunk_kib} KiB, {case.scheme}"
    return f"IOmeter-like {case.workload}, {case.size_kib} KiB, {case.depth} outstanding, {case.chunk_kib} KiB, {case.scheme}"


_SUBSET_BUILDERS = {"fu": _fu, "pro": _pro, "vdf": _vdf, "swo": _swo}


def config_of(paper: str) -> Path:
    """The configuration ``paper``'s subset runs from: its reproduction's."""
    from raidlab.reproductions import pro, swo, vdf

    return _experiments() / {"fu": FU_CONFIG, "pro": pro.CONFIG, "vdf": vdf.CONFIG, "swo": swo.CONFIG}[paper]


def preset_of(paper: str) -> Optional[str]:
    """The preset drive of ``paper``'s configuration (what :func:`seek_scaled_drives` must
    stand in for to change its drive)."""
    from raidlab.config import parse_toml

    path = config_of(paper)
    return (parse_toml(path.read_text(encoding="utf-8"), path).get("drive") or {}).get("preset")


def measure(papers: Sequence[str] = PAPERS, *, workdir: Optional[Path] = None, jobs: Optional[int] = None,
            drives: Optional[Mapping[str, Mapping[str, Any]]] = None) -> Dict[str, Dict[str, Dict[int, float]]]:
    """Run each paper's subset and return ``{paper: {cell: {seed: value}}}``. ``workdir`` keeps
    the traces and miss streams (a second call with the same directory reuses them; default: a
    temporary directory, removed afterwards). ``drives`` replaces a preset drive (by name) with
    a ``[drive]`` table (:func:`seek_scaled_drives`)."""
    unknown = [paper for paper in papers if paper not in _SUBSET_BUILDERS]
    if unknown:
        raise GoldenError(f"no golden subset for {unknown[0]!r}; known: {', '.join(PAPERS)}")
    jobs = max(1, jobs or os.cpu_count() or 1)
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="raidlab-golden-") as scratch:
            return measure(papers, workdir=Path(scratch), jobs=jobs, drives=drives)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    measured: Dict[str, Dict[str, Dict[int, float]]] = {}
    for paper in papers:
        tasks, cells, fixed = _SUBSET_BUILDERS[paper](workdir, jobs)
        results = _execute(tasks, jobs, drives)
        per_cell: Dict[str, Dict[int, float]] = {}
        for seed in SEEDS:
            runs = {name: metrics for (s, name), metrics in results.items() if s == seed}
            for cell, value in {**fixed, **cells(runs)}.items():
                if value is not None and math.isfinite(value):
                    per_cell.setdefault(cell, {})[seed] = float(value)
        incomplete = sorted(cell for cell, values in per_cell.items() if len(values) != len(SEEDS))
        if incomplete:
            raise GoldenError(f"{paper}: cell(s) not measured for every seed: {incomplete[:3]}")
        measured[paper] = per_cell
    return measured


# ---------------------------------------------------------------------------------------------
# Tolerances, files and comparison
# ---------------------------------------------------------------------------------------------


def tolerance(values: Sequence[float]) -> Tuple[str, float, str]:
    """``(kind, tolerance, basis)`` of a cell measured as ``values`` (one per seed): see the
    module's docstring."""
    n = len(values)
    mean = math.fsum(values) / n
    floor = max(DETERMINISTIC_RELATIVE * abs(mean), ABSOLUTE_FLOOR)
    if all(v == values[0] for v in values):
        return ("deterministic", floor,
                f"the same value for every one of the {n} seeds: {DETERMINISTIC_RELATIVE:g} of the value "
                f"(at least {ABSOLUTE_FLOOR:g})")
    if n < 2:
        raise GoldenError("a cell's noise needs at least two seeds")
    s = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return ("stochastic", max(SIGMAS * s * math.sqrt(2.0 / n), floor),
            f"{SIGMAS:g}·s·√(2/n), s = {s:.6g} (sample standard deviation over the {n} seeds), n = {n}")


def code_facts() -> Dict[str, Any]:
    """The code that makes the numbers: the git commit (short) and whether the tree had
    uncommitted changes to tracked files, the package's version, the core's version with a
    digest of the compiled extension (``raidlab.experiments.sweep.code_version``), and whether
    that extension is older than the checkout's Rust sources."""
    from raidlab import __version__
    from raidlab.experiments.sweep import code_version

    root = repository_root()

    def git(*args: str) -> Optional[str]:
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10,
                                  check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    commit = git("rev-parse", "--short", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit, "git_uncommitted_changes": None if status is None else bool(status),
            "raidlab_version": __version__, "core": code_version(),
            "extension_older_than_rust_sources": _extension_is_stale(root)}


def _extension_is_stale(root: Path) -> Optional[bool]:
    """Whether the compiled extension is older than a Rust source of the checkout (the sources
    ``make build`` watches): then the numbers are those of an earlier core than the commit's.
    ``None`` when either is not there."""
    extensions = sorted((root / "python" / "raidlab").glob("_core*.so"))
    crates = root / "crates"
    if not extensions or not crates.is_dir():
        return None
    sources = [root / "Cargo.toml", root / "Cargo.lock", *crates.rglob("*.rs"), *crates.rglob("Cargo.toml")]
    newest = max((p.stat().st_mtime for p in sources if p.is_file()), default=0.0)
    return extensions[-1].stat().st_mtime < newest


def document(paper: str, per_cell: Mapping[str, Mapping[int, float]], *, made_by: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The golden file's content for ``paper`` from :func:`measure`'s cells."""
    cells: Dict[str, Any] = {}
    for cell in sorted(per_cell):
        values = [per_cell[cell][seed] for seed in SEEDS]
        kind, tol, basis = tolerance(values)
        cells[cell] = {"value": math.fsum(values) / len(values), "kind": kind, "tolerance": tol,
                       "tolerance_basis": basis, "seeds": {str(seed): per_cell[cell][seed] for seed in SEEDS}}
    return {
        "format": FORMAT,
        "paper": paper,
        "about": ("Golden cells of `raidlab reproduce " + paper + "` on a cheap subset; rewritten by `make bless`, "
                  "checked by tests/test_golden.py (docs/reproduction.md, \"Golden cells: tests that catch drift\")."),
        "made_by": dict(made_by if made_by is not None else code_facts()),
        "subset": SUBSETS[paper],
        "seeds": list(SEEDS),
        "seed_meaning": SEED_MEANING[paper],
        "value": "the mean over the seeds",
        "tolerance_rule": (f"deterministic cells (the same value for every seed): {DETERMINISTIC_RELATIVE:g} of the "
                           f"value; stochastic cells: {SIGMAS:g}·s·√(2/n), {SIGMAS:g} standard deviations of the "
                           "difference between two means over n seeds, s the sample standard deviation of the "
                           "per-seed values; never below " + f"{ABSOLUTE_FLOOR:g}"),
        "cells": cells,
    }


def _path(paper: str, directory: Optional[Path]) -> Path:
    return Path(directory if directory is not None else golden_dir()) / f"{paper}.json"


def bless(papers: Sequence[str] = PAPERS, *, directory: Optional[Path] = None, workdir: Optional[Path] = None,
          jobs: Optional[int] = None) -> List[Path]:
    """Measure ``papers`` with the current code and (re)write their golden files."""
    measured = measure(papers, workdir=workdir, jobs=jobs)
    made_by = code_facts()
    written = []
    for paper in papers:
        path = _path(paper, directory)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(document(paper, measured[paper], made_by=made_by), indent=1, ensure_ascii=False)
                           + "\n", encoding="utf-8")
        partial.replace(path)
        written.append(path)
    return written


def load(paper: str, directory: Optional[Path] = None) -> Dict[str, Any]:
    """The golden file of ``paper``; a missing or malformed one is a :class:`GoldenError`."""
    path = _path(paper, directory)
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise GoldenError(f"{path}: cannot read the golden file ({error.strerror}); run `make bless`") from None
    except ValueError as error:
        raise GoldenError(f"{path}: not JSON: {error}") from None
    if stored.get("format") != FORMAT or stored.get("paper") != paper or not isinstance(stored.get("cells"), dict):
        raise GoldenError(f"{path}: not a golden file of format {FORMAT} for {paper!r}; run `make bless`")
    if stored.get("seeds") != list(SEEDS):
        raise GoldenError(f"{path}: blessed with seeds {stored.get('seeds')}, the subset now runs {list(SEEDS)}; "
                          "run `make bless`")
    return stored


def compare(stored: Mapping[str, Any], per_cell: Mapping[str, Mapping[int, float]]) -> List[Drift]:
    """The cells of ``per_cell`` (one paper's :func:`measure`) whose mean over the seeds is
    farther from the stored value than the stored tolerance, and cells only one side has."""
    paper = str(stored["paper"])
    drifts = []
    for cell, entry in stored["cells"].items():
        if cell not in per_cell:
            drifts.append(Drift(paper, cell, float(entry["value"]), None, float(entry["tolerance"])))
            continue
        values = [per_cell[cell][seed] for seed in SEEDS]
        new = math.fsum(values) / len(values)
        if not abs(new - float(entry["value"])) <= float(entry["tolerance"]):
            drifts.append(Drift(paper, cell, float(entry["value"]), new, float(entry["tolerance"])))
    for cell in per_cell:
        if cell not in stored["cells"]:
            values = [per_cell[cell][seed] for seed in SEEDS]
            drifts.append(Drift(paper, cell, None, math.fsum(values) / len(values), None))
    return drifts


def check(papers: Sequence[str] = PAPERS, *, directory: Optional[Path] = None, workdir: Optional[Path] = None,
          jobs: Optional[int] = None, drives: Optional[Mapping[str, Mapping[str, Any]]] = None) -> Dict[str, List[Drift]]:
    """Measure ``papers`` and compare each with its golden file: ``{paper: drifts}``."""
    stored = {paper: load(paper, directory) for paper in papers}
    measured = measure(papers, workdir=workdir, jobs=jobs, drives=drives)
    return {paper: compare(stored[paper], measured[paper]) for paper in papers}


# ---------------------------------------------------------------------------------------------
# A deliberate change of a drive's seek curve
# ---------------------------------------------------------------------------------------------


def _half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def _linear_zones(zones: int, cylinders: int, outer: int, inner: int) -> List[Dict[str, int]]:
    """Zones whose sectors per track fall linearly from ``outer`` to ``inner`` (rounded half up),
    as ``hc550`` and ``st3146807lc`` are derived (docs/drives.md)."""
    return [{"cylinders": cylinders, "sectors_per_track": _half_up(outer - (outer - inner) * i / (zones - 1))}
            for i in range(zones)]


def _formula_models(scale: float) -> Dict[str, Dict[str, Any]]:
    """The presets that are formulas, as ``drive.model`` tables (docs/drives.md gives every
    figure), with the seek curve a + b·d + c·√d multiplied by ``scale``."""

    def seek(a: float, b: float, c: float) -> Dict[str, Any]:
        return {"kind": "formula", "a_ms": a * scale, "b_ms": b * scale, "c_ms": c * scale}

    return {
        "ibm0661": {"rpm": 4318.0, "surfaces": 14, "zones": [{"cylinders": 949, "sectors_per_track": 48}],
                    "seek": seek(2.0, 0.01, 0.46), "rotation": "uniform"},
        "hc550": {"rpm": 7200.0, "surfaces": 18, "zones": _linear_zones(20, 28_936, 4_500, 2_250),
                  "seek": seek(0.2123, 0.0, 0.017716), "head_switch_ms": 0.23, "track_skew_sectors": 125},
        "st3146807lc": {"rpm": 10_000.0, "surfaces": 8, "zones": _linear_zones(15, 3_780, 797, 469),
                        "seek": seek(0.315476, 0.0, 0.0345243), "head_switch_ms": 0.35, "track_skew_sectors": 47},
    }


#: The DiskSim-derived presets and the files of their spec (the seek curve last).
DISKSIM_PRESETS = {"ibm18es": ("ibm18es.parv", "ibm18es.diskspecs", "ibm18es.model", "ibm18es.seek"),
                   "cheetah9LP": ("cheetah9LP.parv", "cheetah9LP.diskspecs", "cheetah9LP.model", "cheetah9LP.seek")}


def seek_scaled_drives(scale: float, *, workdir: Path, diskspecs: Optional[Path] = None) -> Dict[str, Dict[str, Any]]:
    """``{preset: [drive] table}`` standing for each preset with every seek time multiplied by
    ``scale`` (``scale = 1``: the preset itself). The formula presets become ``drive.model``
    tables; the DiskSim-derived ones (``ibm18es``, ``cheetah9LP``) a copy of their DiskSim spec
    in ``workdir`` with the ``Full seek curve`` file's times scaled, when ``diskspecs`` (the
    directory of DiskSim's files) holds it."""
    drives: Dict[str, Dict[str, Any]] = {name: {"model": model} for name, model in _formula_models(scale).items()}
    if diskspecs is not None and Path(diskspecs).is_dir():
        for name, files in DISKSIM_PRESETS.items():
            if not all((Path(diskspecs) / f).is_file() for f in files):
                continue
            folder = Path(workdir) / f"{name}-seek-x{scale:g}"
            folder.mkdir(parents=True, exist_ok=True)
            for f in files[:-1]:
                shutil.copyfile(Path(diskspecs) / f, folder / f)
            lines = (Path(diskspecs) / files[-1]).read_text(encoding="utf-8").splitlines()
            scaled = [lines[0]]
            for line in lines[1:]:
                fields = [f for f in line.replace(",", " ").split() if f]
                scaled.append(f"{fields[0]},\t{float(fields[1]) * scale:.6f}" if len(fields) >= 2 else line)
            (folder / files[-1]).write_text("\n".join(scaled) + "\n", encoding="utf-8")
            drives[name] = {"diskspec": str((folder / files[0]).resolve())}
    return drives


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m raidlab.reproductions.golden",
                                     description="Compare the reproductions' golden cells with the current code, or "
                                                 "rewrite them (--bless).")
    parser.add_argument("--bless", action="store_true", help="rewrite the golden files from the current code")
    parser.add_argument("--papers", default=",".join(PAPERS), help=f"comma-separated (default {','.join(PAPERS)})")
    parser.add_argument("--dir", type=Path, default=None, help="where the golden files are (default tests/golden)")
    parser.add_argument("--jobs", type=int, default=None, help="threads (default: every core)")
    args = parser.parse_args(argv)
    papers = [p for p in args.papers.split(",") if p]
    started = time.monotonic()
    try:
        if args.bless:
            for path in bless(papers, directory=args.dir, jobs=args.jobs):
                cells = load(path.stem, args.dir)["cells"]
                print(f"blessed {path} ({len(cells)} cells)")
            print(f"{time.monotonic() - started:.1f} s")
            return 0
        drifts = check(papers, directory=args.dir, jobs=args.jobs)
    except RaidlabError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    bad = [d for paper in papers for d in drifts[paper]]
    for paper in papers:
        print(f"{paper}: {'no drift' if not drifts[paper] else f'{len(drifts[paper])} cell(s) drifted'}")
    for drift in bad:
        print(drift.message())
    print(f"{time.monotonic() - started:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
