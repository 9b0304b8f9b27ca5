"""VDF (seed 003, Wan et al., "Victim Disk First"): RGR (Figs. 3-5), Table 3, Figs. 7-9.

Three parts, each on the same trace (a look-alike of the paper's SPC-1-web by default, or any
trace given with ``raidlab reproduce vdf --trace FILE``), reads only in 4 KiB blocks (§5):

1. **RGR** (§5, Figs. 3-5): the stand-alone cache simulator (:func:`raidlab.cache.simulate`)
   streams the trace through LRU, LFU, VDF-LRU and VDF-LFU at 64 Ki … 2 Mi blocks for RAID-5
   arrays of 5-8 drives with drive 0 failed for the whole trace; RGR is reported after the
   cache's warm-up (as the paper's miss streams are) and over the whole trace.
2. **Reconstruction time** (§6.3, Table 3): each cache's miss stream after warm-up
   (``--miss-trace``: the cache-fill misses dropped, §6.3) replayed open loop by its
   timestamps on the array in spare-rebuilding mode: drive 0 fails at the stream's first
   request and is rebuilt at once onto a hot spare by md's resync at the prototype's minimum
   reconstruction bandwidth (100 MB/s, §6.2), reads not redirected to the spare; the run
   ends with the rebuild.
3. **Service rate** (§6.4, Figs. 7-9): the same miss streams replayed closed loop, T
   requests outstanding and no think time, in degraded mode (drive 0 failed, no rebuild);
   the play duration PD of the whole stream measures the service rate.

The miss streams are computed offline with the drive failed throughout, as the paper's were
(notes B.4: "the cache never sees the rebuild progress"). Improvements use the paper's two
formulas (:func:`reconstruction_improvement`, :func:`service_rate_improvement`): they have
different denominators.

Options (``Context.options``): ``trace`` (a trace file to use instead of the look-alike),
``records`` (look-alike records; default :data:`DEFAULT_RECORDS`), ``replay_records`` (the
prefix of the trace whose miss streams are replayed; default :data:`DEFAULT_REPLAY_RECORDS`),
``area_gib`` (the look-alike's address space), ``capacity_gib`` (per drive, rounded down so
that folding keeps every block on its drive), ``drives`` (a subset of 5-8), ``sizes`` (the
RGR grid's cache sizes, blocks), ``replay_sizes`` (the three caches replayed, standing for
Table 3's 131,072 / 262,144 / 524,288 blocks in that order; smaller ones for quick checks). ``--seeds N`` runs the replays with seeds 1..N (the
look-alike is drawn with seed 1 whatever N). Scaling choices are in ``docs/reproduction.md``.

A study of raidlab's own goes with it (``--studies cache``; the default is ``tables``, the
three parts above): VDF's gain over LRU and LFU against the cache size and the look-alike's
footprint (a sensitivity study, not a fit). Its options: ``footprints_gib`` (the look-alikes'
address spaces; default :data:`FOOTPRINTS_GIB`), ``cache_drives`` (the RGR grid's drive
counts), ``cache_replay_drives`` and ``cache_replay_sizes`` (the open-loop replays').
"""

from __future__ import annotations

import gzip
import hashlib
import math
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from raidlab.exceptions import ConfigError
from raidlab.output.report import PaperReport, ReportFigure, ReportTable, number_text

if TYPE_CHECKING:
    import pandas as pd

    from raidlab.reproductions.context import Context

__all__ = ["DRIVES", "POLICIES", "RGR_SIZES", "TABLE3_SIZES", "TABLE3", "RGR_UP_TO", "FIG7_THREADS",
           "reconstruction_improvement", "service_rate_improvement", "rgr_reduction", "capacity_sectors",
           "drive_of_block", "run", "STUDIES", "FOOTPRINTS_GIB"]

#: Drive counts of every experiment (§5, §6.2), RAID-5 with one failed drive.
DRIVES: Tuple[int, ...] = (5, 6, 7, 8)
#: The four policies, each VDF variant after its base.
POLICIES: Tuple[str, ...] = ("lru", "vdf-lru", "lfu", "vdf-lfu")
BASE_OF = {"vdf-lru": "lru", "vdf-lfu": "lfu"}
LABELS = {"lru": "LRU", "vdf-lru": "VDF-LRU", "lfu": "LFU", "vdf-lfu": "VDF-LFU"}
#: Figs. 3-5's cache sizes, 64 Ki to 2 Mi blocks of 4 KiB (Fig. 3's caption); the
#: intermediate sizes are the notes' choice, powers of two (B.5).
RGR_SIZES: Tuple[int, ...] = tuple(2**k for k in range(16, 22))
#: Table 3's and Fig. 8's caches (§6.2: "filtered by 131,072 to 524,288 blocks").
TABLE3_SIZES: Tuple[int, ...] = (131_072, 262_144, 524_288)
#: Fig. 7's threads ("from 20 to 80"), Figs. 8-9's 60 threads, and Figs. 7-8's array (Figs. 7
#: and 9 use the largest of the three replayed caches, 524,288 blocks).
FIG7_THREADS: Tuple[int, ...] = (20, 40, 60, 80)
FIG89_THREADS = 60
FIG78_DRIVES = 8

#: Seed 003 Table 3, as printed: (disks, blocks) -> (LRU s, VDF-LRU s, printed improvement %,
#: LFU s, VDF-LFU s, printed improvement %).
TABLE3: Dict[Tuple[int, int], Tuple[float, float, float, float, float, float]] = {
    (5, 131072): (2662, 2543, 4.5, 2710, 1929, 28.8),
    (5, 262144): (2958, 1935, 34.6, 2851, 1531, 46.3),
    (5, 524288): (1845, 1407, 23.7, 1786, 1310, 26.7),
    (6, 131072): (1176, 1147, 2.5, 1175, 964, 18.0),
    (6, 262144): (1234, 943, 23.6, 1226, 921, 24.9),
    (6, 524288): (1027, 818, 20.4, 1005, 806, 19.8),
    (7, 131072): (730, 685, 6.2, 733, 652, 11.1),
    (7, 262144): (758, 659, 13.1, 761, 657, 13.7),
    (7, 524288): (691, 599, 13.3, 687, 598, 13.0),
    (8, 131072): (504, 485, 3.8, 509, 485, 4.7),
    (8, 262144): (558, 501, 10.2, 560, 501, 10.5),
    (8, 524288): (527, 483, 8.4, 526, 479, 8.9),
}
#: §5's "up to" RGR reductions per trace: (VDF-LRU vs LRU %, VDF-LFU vs LFU %).
RGR_UP_TO: Dict[str, Tuple[float, float]] = {"SPC-1-web (Fig. 3)": (31.4, 42.3), "LM-TBE (Fig. 4)": (36.2, 39.4),
                                             "DTRS (Fig. 5)": (22.7, 24.4)}
#: §6.4's VDF-LFU reduction of RGR at 524,288 blocks over 5-8 disks, "from 33.7% to 35.6%".
RGR_LFU_524288 = (33.7, 35.6)
#: The measured "up to" figures: reconstruction (Table 3, §6.3) and service rate (§6.4; the
#: abstract says 47.7 % for VDF-LFU, §6.4 says 46.8 %).
RD_UP_TO = {"vdf-lru": 34.6, "vdf-lfu": 46.3}
SERVICE_UP_TO = {"vdf-lru": "28.4 % (80 threads, 8 disks, 524,288 blocks)",
                 "vdf-lfu": "46.8 % (§6.4: 60 threads, 8 disks, 262,144 blocks); 47.7 % in the abstract"}

#: What ``raidlab reproduce vdf --studies A,B`` runs: ``tables``, the paper's measurements
#: (the default); ``cache``, VDF's gain over its base policy against the cache size and the
#: trace's footprint (raidlab's study, not the paper's).
STUDIES: Tuple[str, ...] = ("tables", "cache")
DEFAULT_STUDIES: Tuple[str, ...] = ("tables",)
#: The cache study: the look-alike's address space (GiB), which sets its footprint (its cold
#: reads are uniform over it, and its hot regions scale with it); 60 is the reproduction's.
FOOTPRINTS_GIB: Tuple[float, ...] = (15.0, 60.0, 240.0)
#: The cache study's RGR grid drive counts, and those of its open-loop replays.
CACHE_DRIVES: Tuple[int, ...] = (5, 8)
CACHE_REPLAY_DRIVES: Tuple[int, ...] = (5,)
#: The caches replayed in the cache study (the larger RGR sizes do not fill within the replayed prefix).
CACHE_REPLAY_SIZES: Tuple[int, ...] = (65_536, 131_072, 262_144, 524_288)

CONFIG = "vdf/base.toml"
#: The look-alike: which published profile stands for SPC-1-web (the WebSearch traces; the
#: notes B.5 leave the file open), its records and its address space (§5: "spans a 60GB
#: dataset").
PROFILE = "websearch1"
DEFAULT_RECORDS = 2_600_000
DEFAULT_REPLAY_RECORDS = 600_000
DEFAULT_AREA_GIB = 60.0
DEFAULT_CAPACITY_GIB = 32.0
TRACE_SEED = 1
#: Stripe unit (KiB) of the cache's placement and of the array: MD's 64 KB chunk (§6.2).
CHUNK_KIB = 64
SECTORS_PER_CHUNK = CHUNK_KIB * 2
SECTORS_PER_GIB = 2**30 // 512
#: md's minimum reconstruction bandwidth on the prototype, "100MBps" (§6.2), read as md's
#: speed_limit_min in KiB/s per device.
MD_SPEED_LIMIT_MIN_KIB_S = 100_000
METRIC_RD = "rebuild_time_s"
METRIC_PD = "simulated_seconds"


# ---------------------------------------------------------------------------------------------
# The paper's formulas
# ---------------------------------------------------------------------------------------------


def reconstruction_improvement(original: float, vdf: float) -> float:
    """Table 3's "Improvement" (§6.3; Eq. 4 reduces to it, notes B.1): (RD_orig − RD_VDF) /
    RD_orig, a fraction (times in any one unit, e.g. s). NaN when ``original`` is 0."""
    return (original - vdf) / original if original else math.nan


def service_rate_improvement(original: float, vdf: float) -> float:
    """§6.4's service-rate improvement: the rate is "inversely proportional to the Play
    Duration", so (PD_orig − PD_VDF) / PD_VDF, a fraction; note the VDF denominator (play
    durations in any one unit, e.g. s). NaN when ``vdf`` is 0."""
    return (original - vdf) / vdf if vdf else math.nan


def rgr_reduction(original: float, vdf: float) -> float:
    """§5's relative RGR reduction of a VDF policy against its base: (RGR_orig − RGR_VDF) /
    RGR_orig, a fraction (RGR in surviving-drive I/Os per request)."""
    return (original - vdf) / original if original else math.nan


def _pct(value: Optional[float], digits: int = 1) -> str:
    return number_text(None if value is None else value * 100.0, digits, " %")


# ---------------------------------------------------------------------------------------------
# Placement: the cache's view and the array's agree
# ---------------------------------------------------------------------------------------------


def drive_of_block(block: int, drives: int) -> int:
    """The drive holding 4 KiB ``block`` (an int, or a numpy array of them) in a left-symmetric
    RAID-5 of ``drives`` drives with 64 KiB chunks (Linux md's layout, §6.2), as the cache
    simulator and raidlab's ``raid5`` layout place it: chunk c = block // 16 is data unit c mod (n − 1) of stripe c // (n − 1),
    whose parity is on drive n − 1 − (stripe mod n) and whose data follow it."""
    chunk = block // (CHUNK_KIB // 4)
    stripe, unit = divmod(chunk, drives - 1)
    parity = drives - 1 - stripe % drives
    return (parity + 1 + unit) % drives


def capacity_sectors(capacity_gib: float, drives: Sequence[int]) -> int:
    """Per-drive capacity in 512-byte sectors: ``capacity_gib`` rounded down to a whole number
    of layout periods. The miss streams' addresses span the trace's space, larger than the
    shrunken array, and the replay folds them modulo the array's capacity; the placement
    repeats every n stripes, so when each drive holds a multiple of n chunks (for every n of
    ``drives``: a multiple of their least common multiple) the fold moves no block to another
    drive, and the replay's failed drive holds exactly the blocks the cache weighed as the
    failed drive's."""
    period = reduce(lambda a, b: a * b // math.gcd(a, b), drives, 1) * SECTORS_PER_CHUNK
    periods = int(capacity_gib * SECTORS_PER_GIB) // period
    if periods < 1:
        raise ConfigError(f"{capacity_gib:g} GiB per drive is less than one layout period "
                          f"({period * 512 / 2**20:g} MiB for drives {list(drives)})", key="capacity_gib")
    return periods * period


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


def _positive_int(options: Mapping[str, Any], key: str, default: int) -> int:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"expected a whole number ≥ 1, not {value!r}", key=key)
    return value


def _positive_float(options: Mapping[str, Any], key: str, default: float) -> float:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(f"expected a positive number, not {value!r}", key=key)
    return float(value)


def _subset(options: Mapping[str, Any], key: str, allowed: Sequence[int]) -> List[int]:
    wanted = options.get(key)
    if wanted is None:
        return list(allowed)
    wanted = [int(v) for v in wanted]
    if not wanted or any(v not in allowed for v in wanted):
        raise ConfigError(f"expected some of {list(allowed)}, not {wanted}", key=key)
    return [v for v in allowed if v in wanted]


def _trace(output: Path, options: Mapping[str, Any], context: "Context") -> Tuple[Path, str]:
    """The trace every part runs on, and a label: the user's file, or the look-alike written
    (or reused) under ``output/traces``."""
    given = options.get("trace")
    if given:
        from raidlab.reproductions.reproduce import readable_trace

        path = readable_trace(given, option="trace")
        return path, f"the given trace {path.name}"
    from raidlab import synth

    records = _positive_int(options, "records", DEFAULT_RECORDS)
    area = _positive_float(options, "area_gib", DEFAULT_AREA_GIB)
    folder = output / "traces"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{PROFILE}-{area:g}gib-{records}req-seed{TRACE_SEED}.spc.gz"
    context.report_progress("vdf trace", 0, 1)
    if not path.is_file():
        partial = path.with_name(path.name + ".partial")
        synth.write(synth.generate(PROFILE, seed=TRACE_SEED, requests=records, area_gib=area), partial,
                    compress=True)
        partial.replace(path)
    context.report_progress("vdf trace", 1, 1)
    return path.resolve(), f"a {PROFILE} look-alike ({records:,} records over {area:g} GiB)"


def _trace_tag(path: Path) -> str:
    """A name for files derived from ``path`` that changes when the file does (its name,
    size and modification time), so a changed trace never reuses old miss streams or runs."""
    stat = path.stat()
    digest = hashlib.sha256(f"{path}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:10]
    stem = path.name.split(".")[0]
    return f"{stem}-{digest}"


# ---------------------------------------------------------------------------------------------
# Part 1: RGR over the grid (Figs. 3-5)
# ---------------------------------------------------------------------------------------------


def _rgr_grid(trace: Path, drives: Sequence[int], sizes: Sequence[int], jobs: int,
              context: "Context") -> Dict[Tuple[str, int, int], Dict[str, Optional[float]]]:
    """(policy, size, drives) -> {"after": RGR after warm-up, "total": RGR over the trace,
    "hit": hit ratio}, drive 0 failed throughout. One pass for the base policies (they do not
    depend on the drive count: one cache per size serves every count) and one per drive count
    for the VDF ones, run on ``jobs`` threads (the core releases the GIL)."""
    from raidlab.cache import simulate

    calls: List[Tuple[Sequence[str], Sequence[int]]] = [(("lru", "lfu"), tuple(drives))]
    calls += [(("vdf-lru", "vdf-lfu"), (n,)) for n in drives]
    cells: Dict[Tuple[str, int, int], Dict[str, Optional[float]]] = {}

    def one(call: Tuple[Sequence[str], Sequence[int]]) -> Any:
        return simulate(trace, policies=list(call[0]), sizes=list(sizes), drives=list(call[1]), failed_drive=0,
                        writes="skip", chunk_kib=CHUNK_KIB)

    context.report_progress("vdf RGR grid", 0, len(calls))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for done, report in enumerate(pool.map(one, calls), start=1):
            for cell in report.cells:
                cells[(cell["policy"], int(cell["size_blocks"]), int(cell["drives"]))] = {
                    "after": cell["after_warmup"]["rgr"], "total": cell["total"]["rgr"],
                    "hit": cell["total"]["hit_ratio"], "warmup_requests": cell["warmup_requests"],
                    "requests": cell["total"]["requests"]}
            context.report_progress("vdf RGR grid", done, len(calls))
    return cells


def _grid_key(trace: Path, drives: Sequence[int], sizes: Sequence[int]) -> Dict[str, Any]:
    """What the grid depends on: the trace (as :func:`_trace_tag` names it), the drive counts,
    the sizes, the chunk and the core's version (a rebuilt core may count differently)."""
    from raidlab.experiments.sweep import code_version

    return {"trace": _trace_tag(trace), "drives": list(drives), "sizes": list(sizes), "chunk_kib": CHUNK_KIB,
            "code": code_version()}


def _stored_grid(path: Path, trace: Path, drives: Sequence[int],
                 sizes: Sequence[int]) -> Optional[Dict[Tuple[str, int, int], Dict[str, Any]]]:
    """The grid a previous run stored in ``path`` for the same inputs, or ``None``."""
    import json

    if not path.is_file():
        return None
    stored = json.loads(path.read_text(encoding="utf-8"))
    if stored.get("key") != _grid_key(trace, drives, sizes):
        return None
    return {(c["policy"], int(c["size_blocks"]), int(c["drives"])): c["cell"] for c in stored["cells"]}


def _store_grid(grid: Mapping[Tuple[str, int, int], Mapping[str, Any]], path: Path, trace: Path,
                drives: Sequence[int], sizes: Sequence[int]) -> None:
    import json

    cells = [{"policy": p, "size_blocks": s, "drives": n, "cell": dict(cell)} for (p, s, n), cell in sorted(grid.items())]
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps({"key": _grid_key(trace, drives, sizes), "cells": cells}), encoding="utf-8")
    partial.replace(path)


def _write_grid(grid: Mapping[Tuple[str, int, int], Mapping[str, Any]], path: Path) -> Path:
    """The grid's cells as CSV (one row per policy, size and drive count), for the figures'
    numbers and for checking the report's claims."""
    import pandas as pd

    rows = [{"policy": p, "size_blocks": s, "drives": n, "rgr_after_warmup": cell["after"], "rgr_total": cell["total"],
             "hit_ratio": cell["hit"], "warmup_requests": cell["warmup_requests"], "requests": cell["requests"]}
            for (p, s, n), cell in sorted(grid.items(), key=lambda item: (item[0][2], item[0][1], item[0][0]))]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


# ---------------------------------------------------------------------------------------------
# Part 2-3: miss streams and their replays
# ---------------------------------------------------------------------------------------------


def _miss_streams(trace: Path, tag: str, folder: Path, streams: Sequence[Tuple[str, int, int]],
                  replay_records: int, jobs: int, context: "Context") -> Dict[Tuple[str, int, int], Dict[str, Any]]:
    """Write (or reuse) the miss stream after warm-up of each (policy, size, drives) over the
    trace's first ``replay_records`` records, gzip-compressed; -> {"path", "lines", "rgr"}
    (the cell's RGR after warm-up over that prefix), read back from a small JSON beside it."""
    import json

    from raidlab.cache import simulate

    from raidlab.experiments.sweep import code_version

    folder.mkdir(parents=True, exist_ok=True)
    # A stream written by another build of the core is written again (its cache may differ).
    code = code_version()

    def one(stream: Tuple[str, int, int]) -> Dict[str, Any]:
        policy, size, drives = stream
        path = folder / f"{tag}-{replay_records}rec-{policy}-{size}-{drives}d.spc.gz"
        facts = path.with_name(path.name + ".json")
        if path.is_file() and facts.is_file():
            stored = json.loads(facts.read_text(encoding="utf-8"))
            if stored.pop("code", None) == code:
                return dict(stored, path=str(path))
        plain = path.with_name(path.name[:-3])
        report = simulate(trace, policies=[policy], sizes=[size], drives=[drives], failed_drive=0, writes="skip",
                          chunk_kib=CHUNK_KIB, miss_trace=plain, trace_keys={"max_records": replay_records})
        [cell] = report.cells
        if cell["after_warmup"]["requests"] == 0:
            plain.unlink(missing_ok=True)
            raise ConfigError(f"the first {replay_records:,} records never fill a cache of {size:,} blocks "
                              f"({policy}, {drives} drives): no miss stream after warm-up; give more records",
                              key="replay_records")
        # Compressed (level 1, no name or time in the header: the bytes depend on the stream
        # only); the replay reads gzip as it reads plain text.
        partial = path.with_name(path.name + ".partial")
        with open(plain, "rb") as source, open(partial, "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=1, mtime=0) as out:
            shutil.copyfileobj(source, out, 1 << 20)
        partial.replace(path)
        plain.unlink()
        result = {"lines": int(report.miss_trace["lines"]), "rgr": cell["after_warmup"]["rgr"],
                  "warmup_requests": int(cell["warmup_requests"])}
        facts.write_text(json.dumps(dict(result, code=code)), encoding="utf-8")
        return dict(result, path=str(path))

    result: Dict[Tuple[str, int, int], Dict[str, Any]] = {}
    context.report_progress("vdf miss streams", 0, len(streams))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for done, (stream, facts) in enumerate(zip(streams, pool.map(one, streams)), start=1):
            result[stream] = facts
            context.report_progress("vdf miss streams", done, len(streams))
    return result


def _spec(base: Path, name: str, seeds: List[int], set_keys: Mapping[str, Any],
          points: List[Mapping[str, Any]]) -> str:
    from raidlab.config import toml_literal

    lines = [f"base = {toml_literal(str(base))}", f"name = {toml_literal(name)}", f"seeds = {toml_literal(seeds)}",
             "", "[set]"]
    lines += [f"{toml_literal(key)} = {toml_literal(value)}" for key, value in set_keys.items()]
    lines.append("")
    for point in points:
        lines.append("[[points]]")
        lines += [f"{toml_literal(key)} = {toml_literal(value)}" for key, value in point.items()]
        lines.append("")
    return "\n".join(lines)


#: Spare-rebuilding mode (§6.3): a hot spare, md's resync at the prototype's minimum
#: reconstruction bandwidth, 64 KiB units (one chunk), 16 in flight (md's stripe cache: 256
#: stripes of 4 KiB per device, as experiments/md_resync_tradeoff.toml), the run ending with
#: the rebuild. Reads are **not** redirected to the spare: Eq. 3 charges one RGR for the whole
#: rebuild, which holds only if a rebuilt block's miss still costs what it did, and the paper
#: presents redirection as another technique (§2) that VDF could be combined with (§6.5).
#: ``--set rebuild.redirect_reads=true`` gives the other reading (docs/reproduction.md).
OPEN_LOOP_KEYS: Dict[str, Any] = {
    "array.spares": 1,
    "workload.arrival.process": "trace",
    "rebuild.executor": "sor",
    "rebuild.parallel_units": 16,
    "rebuild.unit": {"sectors": SECTORS_PER_CHUNK},
    "rebuild.discipline": "md",
    "rebuild.md.speed_limit_min_kib_s": MD_SPEED_LIMIT_MIN_KIB_S,
    "rebuild.redirect_reads": False,
    "rebuild.end_run": True,
}
#: Degraded mode (§6.4): the failed drive stays failed (no [rebuild], no spare); T threads
#: take the next request of the stream as their previous one completes, no think time.
CLOSED_LOOP_KEYS: Dict[str, Any] = {"workload.arrival.process": "closed", "workload.arrival.think_ms": 0}


def _closed_cases(drives: Sequence[int], replay: Sequence[int]) -> List[Tuple[int, int, int]]:
    """(drives, size, threads) of Figs. 7-9 that the chosen drive counts allow, each once;
    ``replay``: the three cache sizes standing for 131,072, 262,144 and 524,288 blocks."""
    cases: List[Tuple[int, int, int]] = []
    if FIG78_DRIVES in drives:
        cases += [(FIG78_DRIVES, replay[-1], t) for t in FIG7_THREADS]
        cases += [(FIG78_DRIVES, s, FIG89_THREADS) for s in replay]
    cases += [(n, replay[-1], FIG89_THREADS) for n in drives]
    return sorted(set(cases))


def _mean_by(done: "pd.DataFrame", metric: str, where: Mapping[str, Any]) -> Optional[float]:
    rows = done
    for key, value in where.items():
        rows = rows[rows[key] == value]
    if not len(rows) or metric not in rows:
        return None
    if "overloaded" in rows and rows["overloaded"].astype(bool).any():
        return None
    return float(rows[metric].astype(float).mean())


# ---------------------------------------------------------------------------------------------
# The reproduction
# ---------------------------------------------------------------------------------------------


def run(context: "Context") -> PaperReport:
    """Run the parts ``--studies`` names (:data:`STUDIES`; default ``tables``) into
    ``context.output`` and return the report. ``tables``: the three parts (RGR grid,
    open-loop and closed-loop replays), tables with the paper's numbers beside raidlab's and
    figures in the shape of Figs. 3-5 and 7-9; ``cache``: VDF's gain against cache size and
    footprint (:func:`_run_cache`). Finished files and runs are reused by a second call with
    the same options."""
    options = dict(context.options or {})
    unknown = set(options) - {"trace", "records", "replay_records", "area_gib", "capacity_gib", "drives", "sizes",
                            "replay_sizes", "footprints_gib", "cache_drives", "cache_replay_drives",
                            "cache_replay_sizes"}
    if unknown:
        raise ConfigError(f"unknown option(s) {sorted(unknown)}", key="vdf")
    wanted = list(context.studies or DEFAULT_STUDIES)
    if any(name not in STUDIES for name in wanted):
        bad = next(name for name in wanted if name not in STUDIES)
        raise ConfigError(f"unknown study {bad!r} of vdf; known: {', '.join(STUDIES)}", key="studies")
    report = _run_tables(context, options) if "tables" in wanted else PaperReport(name="vdf", title="")
    if "cache" in wanted:
        _run_cache(context, options, report)
    return report


def _run_tables(context: "Context", options: Mapping[str, Any]) -> PaperReport:
    """The three parts of the paper's measurements (the default study)."""
    from raidlab.reproductions.reproduce import default_experiments_dir
    from raidlab.experiments.sweep import load_sweep_spec

    drives = _subset(options, "drives", DRIVES)
    sizes = sorted({int(s) for s in options.get("sizes", RGR_SIZES)})
    if not sizes or any(s < 1 for s in sizes):
        raise ConfigError(f"expected cache sizes ≥ 1 block, not {sizes}", key="sizes")
    replay_records = _positive_int(options, "replay_records", DEFAULT_REPLAY_RECORDS)
    replay = sorted({int(s) for s in options.get("replay_sizes", TABLE3_SIZES)})
    if len(replay) != len(TABLE3_SIZES) or replay[0] < 1:
        raise ConfigError(f"expected three cache sizes ≥ 1 block (standing for Table 3's "
                          f"{', '.join(f'{s:,}' for s in TABLE3_SIZES)}), not {replay}", key="replay_sizes")
    capacity = capacity_sectors(_positive_float(options, "capacity_gib", DEFAULT_CAPACITY_GIB), drives)
    seeds = list(range(1, 1 + (context.seeds or 1)))
    jobs = context.jobs or os.cpu_count() or 1
    output = Path(context.output).resolve()
    output.mkdir(parents=True, exist_ok=True)
    experiments = Path(context.experiments_dir) if context.experiments_dir else default_experiments_dir()
    base = (experiments / CONFIG).resolve()

    trace, trace_label = _trace(output, options, context)
    grid = _stored_grid(output / "rgr.json", trace, drives, sizes)
    grid_reused = grid is not None
    if grid is None:
        grid = _rgr_grid(trace, drives, sizes, jobs, context)
        _store_grid(grid, output / "rgr.json", trace, drives, sizes)
    _write_grid(grid, output / "rgr.csv")

    closed = _closed_cases(drives, replay)
    streams = sorted({(p, s, n) for n in drives for s in replay for p in POLICIES}
                     | {(p, s, n) for n, s, _ in closed for p in POLICIES}, key=lambda k: (k[2], k[1], POLICIES.index(k[0])))
    misses = _miss_streams(trace, _trace_tag(trace), output / "misses", streams, replay_records, jobs, context)

    common = {"drive.capacity_sectors": capacity}
    open_points = [{"array.drives": n, "workload.trace.path": misses[(p, s, n)]["path"]}
                   for n in drives for s in replay for p in POLICIES]
    open_spec = load_sweep_spec(output / "vdf-open-loop.toml",
                                text=_spec(base, "vdf-open-loop", seeds, {**common, **OPEN_LOOP_KEYS}, open_points))
    open_outcome = context.run_sweep("vdf open loop (rebuild)", open_spec, output / "open-loop")
    closed_points = [{"array.drives": n, "workload.trace.path": misses[(p, s, n)]["path"],
                      "workload.arrival.outstanding": t} for n, s, t in closed for p in POLICIES]
    closed_spec = load_sweep_spec(output / "vdf-closed-loop.toml",
                                  text=_spec(base, "vdf-closed-loop", seeds, {**common, **CLOSED_LOOP_KEYS},
                                             closed_points))
    closed_outcome = context.run_sweep("vdf closed loop (degraded)", closed_spec, output / "closed-loop")

    report = PaperReport(name="vdf", title="")
    open_table, closed_table = open_outcome.table, closed_outcome.table
    report.facts.append(
        f"trace: {trace_label}, reads only, 4 KiB blocks; RGR grid {len(drives)} drive count(s) × {len(sizes)} "
        f"size(s) × 4 policies, drive 0 failed ({'reused' if grid_reused else 'computed now'}); miss streams after warm-up from the first {replay_records:,} "
        f"records; drives {capacity:,} sectors ({capacity * 512 / 2**30:.2f} GiB) each; {len(open_table)} "
        f"open-loop and {len(closed_table)} closed-loop run(s) × {len(seeds)} seed(s) "
        f"({open_outcome.skipped + closed_outcome.skipped} already done); sweeps in {open_outcome.directory} and "
        f"{closed_outcome.directory}")
    failed = [t[t["status"] != "done"] for t in (open_table, closed_table)]
    if any(len(f) for f in failed):
        report.error = "run(s) failed: " + "; ".join(str(e) for f in failed for e in f["error"].dropna())
    open_done = open_table[open_table["status"] == "done"]
    closed_done = closed_table[closed_table["status"] == "done"]

    rd = {(p, s, n): _mean_by(open_done, METRIC_RD, {"array.drives": n, "workload.trace.path": misses[(p, s, n)]["path"]})
          for n in drives for s in replay for p in POLICIES}
    incomplete = open_done[open_done["rebuild.outcome"] != "complete"] if "rebuild.outcome" in open_done else open_done
    if len(incomplete):
        report.facts.append(f"{len(incomplete)} open-loop run(s) ended without a complete rebuild: no time shown")
        for key in list(rd):
            if misses[key]["path"] in set(incomplete["workload.trace.path"]):
                rd[key] = None
    pd_ = {(p, s, n, t): _mean_by(closed_done, METRIC_PD, {"array.drives": n, "workload.arrival.outstanding": t,
                                                           "workload.trace.path": misses[(p, s, n)]["path"]})
           for n, s, t in closed for p in POLICIES}

    report.tables.append(_rgr_table(grid, drives, sizes))
    report.tables.append(_gains_table(grid, rd, pd_, drives, sizes, replay, closed))
    for policy in ("vdf-lru", "vdf-lfu"):
        report.tables.append(_table3(policy, rd, misses, drives, replay))
    report.tables.append(_service_table(pd_, misses, closed, replay))
    figure = _draw_rgr(grid, drives, sizes, output)
    if figure is not None:
        report.figures.append(ReportFigure(figure, "RGR after warm-up against cache size (Figs. 3-5's shape), one "
                                                   "panel per drive count, drive 0 failed; dotted: over the whole "
                                                   "trace, warm-up included"))
    figure = _draw_service(pd_, drives, replay, output)
    if figure is not None:
        report.figures.append(ReportFigure(figure, "Service-rate improvement (PD_orig − PD_VDF) / PD_VDF in "
                                                   "degraded mode, closed loop (Figs. 7-9's shapes)"))
    return report


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------


def _reductions(grid: Mapping[Tuple[str, int, int], Mapping[str, Optional[float]]], policy: str, drives: int,
                sizes: Sequence[int]) -> List[float]:
    """The RGR reductions (after warm-up) of ``policy`` against its base at each size where
    both caches filled."""
    values = []
    for size in sizes:
        vdf, base = grid.get((policy, size, drives), {}), grid.get((BASE_OF[policy], size, drives), {})
        if vdf.get("after") is not None and base.get("after"):
            values.append(rgr_reduction(base["after"], vdf["after"]))
    return values


def _rgr_table(grid: Mapping[Tuple[str, int, int], Mapping[str, Optional[float]]], drives: Sequence[int],
               sizes: Sequence[int]) -> ReportTable:
    rows = []
    for n in drives:
        row = [str(n)]
        for policy in ("vdf-lru", "vdf-lfu"):
            values = _reductions(grid, policy, n, sizes)
            row += [_pct(max(values) if values else None), _pct(sum(values) / len(values) if values else None),
                    _pct(min(values) if values else None)]
        at = grid.get(("vdf-lfu", 524_288, n), {}).get("after"), grid.get(("lfu", 524_288, n), {}).get("after")
        row.append(_pct(rgr_reduction(at[1], at[0]) if at[0] is not None and at[1] else None))
        rows.append(row)
    up_to = "; ".join(f"{trace}: VDF-LRU {lru:.1f} %, VDF-LFU {lfu:.1f} %" for trace, (lru, lfu) in RGR_UP_TO.items())
    note = (f"RGR reduction = (RGR_base − RGR_VDF) / RGR_base after the cache's warm-up, over the cache sizes "
            f"{', '.join(f'{s:,}' for s in sizes)} blocks (a size whose cache never filled is left out). The paper's "
            f"\"up to\" figures (§5): {up_to}. At 524,288 blocks the paper's VDF-LFU reduction on SPC-1-web lies "
            f"between {RGR_LFU_524288[0]} % and {RGR_LFU_524288[1]} % over 5-8 disks (§6.4). Magnitudes depend on the "
            "real traces' footprint and skew, which a look-alike does not claim to reproduce (docs/reproduction.md).")
    return ReportTable("Figs. 3-5: RGR reduction by VDF, per drive count", [
        "disks", "VDF-LRU best", "VDF-LRU mean", "VDF-LRU worst", "VDF-LFU best", "VDF-LFU mean", "VDF-LFU worst",
        "VDF-LFU at 524,288"], rows, note=note, numeric_from=1)


def _distribution(values: Sequence[Optional[float]]) -> List[str]:
    clean = sorted(v for v in values if v is not None and math.isfinite(v))
    if not clean:
        return ["0", "—", "—", "—", "—"]
    median = clean[len(clean) // 2] if len(clean) % 2 else (clean[len(clean) // 2 - 1] + clean[len(clean) // 2]) / 2
    losses = sum(1 for v in clean if v < 0)
    return [str(len(clean)), f"{losses}", _pct(clean[0]), _pct(median), _pct(clean[-1])]


def _gains_table(grid: Mapping[Tuple[str, int, int], Mapping[str, Optional[float]]],
                 rd: Mapping[Tuple[str, int, int], Optional[float]],
                 pd_: Mapping[Tuple[str, int, int, int], Optional[float]], drives: Sequence[int],
                 sizes: Sequence[int], replay: Sequence[int], closed: Sequence[Tuple[int, int, int]]) -> ReportTable:
    rows = []
    for policy in ("vdf-lru", "vdf-lfu"):
        base = BASE_OF[policy]
        rgr = [v for n in drives for v in _reductions(grid, policy, n, sizes)]
        rows.append([LABELS[policy], "RGR reduction (Figs. 3-5)", *_distribution(rgr)])
        rds = [reconstruction_improvement(rd[(base, s, n)], rd[(policy, s, n)])
               if rd.get((base, s, n)) and rd.get((policy, s, n)) is not None else None
               for n in drives for s in replay]
        rows.append([LABELS[policy], "reconstruction (Table 3)", *_distribution(rds)])
        rates = [service_rate_improvement(pd_[(base, s, n, t)], pd_[(policy, s, n, t)])
                 if pd_.get((base, s, n, t)) is not None and pd_.get((policy, s, n, t)) else None
                 for n, s, t in closed]
        rows.append([LABELS[policy], "service rate (Figs. 7-9)", *_distribution(rates)])
    return ReportTable("Distribution of VDF's gains over every cell, losses included", [
        "policy", "measure", "cells", "cells where VDF loses", "worst", "median", "best"], rows,
        note="Each cell compares a VDF policy with its base at the same drive count and cache size (and threads). "
             "RGR and reconstruction: (base − VDF) / base; service rate: (PD_base − PD_VDF) / PD_VDF. A negative "
             "value is a cell where VDF loses. The paper reports VDF faster in all 24 cells of Table 3.",
        numeric_from=2)


def _table3(policy: str, rd: Mapping[Tuple[str, int, int], Optional[float]],
            misses: Mapping[Tuple[str, int, int], Mapping[str, Any]], drives: Sequence[int],
            replay: Sequence[int]) -> ReportTable:
    base = BASE_OF[policy]
    offset = 0 if policy == "vdf-lru" else 3
    rows = []
    for n in drives:
        for paper_size, size in zip(TABLE3_SIZES, replay):
            published = TABLE3[(n, paper_size)][offset:offset + 3]
            ours_base, ours_vdf = rd.get((base, size, n)), rd.get((policy, size, n))
            both = ours_base is not None and ours_vdf is not None
            ceiling = None
            rgr_base, rgr_vdf = misses[(base, size, n)]["rgr"], misses[(policy, size, n)]["rgr"]
            if rgr_base and rgr_vdf:
                ceiling = rgr_reduction(rgr_base, rgr_vdf)
            rows.append([str(n), f"{paper_size:,}" if size == paper_size else f"{paper_size:,} (raidlab {size:,})",
                         number_text(published[0], 0), number_text(published[1], 0),
                         f"{published[2]:.1f} %", _pct(reconstruction_improvement(published[0], published[1])),
                         number_text(ours_base, 1), number_text(ours_vdf, 1),
                         _pct(reconstruction_improvement(ours_base, ours_vdf) if both else None),
                         _pct(service_rate_improvement(ours_base, ours_vdf) if both else None),
                         _pct(ceiling)])
    name, base_name = LABELS[policy], LABELS[base]
    note = (f"Open loop, spare-rebuilding mode: the miss stream after warm-up replayed by its timestamps while drive 0 "
            f"is rebuilt onto a hot spare (reads of rebuilt blocks not redirected); raidlab's times are rebuild times of drives scaled down (docs/reproduction.md), "
            f"so compare improvements, not seconds. Improvement = (RD_{base_name} − RD_{name}) / RD_{base_name} "
            f"(Table 3's, §6.3); \"as speed-up\" divides by RD_{name} instead, as §6.4's service-rate formula does. "
            f"\"RGR reduction\" is that of the replayed stream's cells (after warm-up, the replayed prefix), the "
            f"cause Eq. 3 names. The paper's best: {RD_UP_TO[policy]} %.")
    columns = ["disks", "blocks", f"paper {base_name} (s)", f"paper {name} (s)", "paper improvement, printed",
               "paper improvement, computed", f"raidlab {base_name} (s)", f"raidlab {name} (s)",
               "raidlab improvement", "raidlab as speed-up", "raidlab RGR reduction"]
    return ReportTable(f"Table 3: reconstruction time, {base_name} vs {name}", columns, rows, note=note,
                       numeric_from=2)


def _service_table(pd_: Mapping[Tuple[str, int, int, int], Optional[float]],
                   misses: Mapping[Tuple[str, int, int], Mapping[str, Any]],
                   closed: Sequence[Tuple[int, int, int]], replay: Sequence[int]) -> ReportTable:
    rows = []
    for n, size, threads in closed:
        figures = []
        if n == FIG78_DRIVES and size == replay[-1]:
            figures.append("7")
        if n == FIG78_DRIVES and threads == FIG89_THREADS:
            figures.append("8")
        if size == replay[-1] and threads == FIG89_THREADS:
            figures.append("9")
        row = [", ".join(figures), str(n), f"{size:,}", str(threads)]
        for policy in ("vdf-lru", "vdf-lfu"):
            base = BASE_OF[policy]
            ori, vdf = pd_.get((base, size, n, threads)), pd_.get((policy, size, n, threads))
            rgr_o, rgr_v = misses[(base, size, n)]["rgr"], misses[(policy, size, n)]["rgr"]
            row += [number_text(ori, 1), number_text(vdf, 1),
                    _pct(service_rate_improvement(ori, vdf) if ori is not None and vdf else None),
                    _pct(rgr_o / rgr_v - 1.0 if rgr_o and rgr_v else None)]
        rows.append(row)
    note = ("Closed loop, degraded mode: the whole miss stream after warm-up replayed in order by T threads with no "
            "think time, drive 0 failed and not rebuilt; PD is its play duration (s). Improvement = (PD_base − "
            "PD_VDF) / PD_VDF (§6.4), note the VDF denominator. \"ceiling\" = RGR_base / RGR_VDF − 1 of the streams "
            "(notes B.1: the most a lower RGR allows when the surviving drives are the bottleneck). Paper (read off "
            f"its figures only as \"up to\"): VDF-LRU {SERVICE_UP_TO['vdf-lru']}; VDF-LFU {SERVICE_UP_TO['vdf-lfu']}.")
    columns = ["Fig.", "disks", "blocks", "threads", "LRU PD (s)", "VDF-LRU PD (s)", "VDF-LRU improvement",
               "VDF-LRU ceiling", "LFU PD (s)", "VDF-LFU PD (s)", "VDF-LFU improvement", "VDF-LFU ceiling"]
    return ReportTable("Figs. 7-9: service rate in degraded mode, closed loop", columns, rows, note=note,
                       numeric_from=1)


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def _draw_rgr(grid: Mapping[Tuple[str, int, int], Mapping[str, Optional[float]]], drives: Sequence[int],
              sizes: Sequence[int], output: Path) -> Optional[Path]:
    """RGR against cache size, one panel per drive count, one line per policy."""
    from matplotlib.figure import Figure

    from raidlab.experiments.sweep_plots import save_png_and_svg

    if not grid:
        return None
    figure = Figure(figsize=(3.6 * len(drives), 3.8), layout="constrained")
    axes = figure.subplots(1, len(drives), squeeze=False, sharey=True)[0]
    # One scale for every panel, from 0 to the largest RGR drawn (shared axes would otherwise
    # take the first panel's range and clip the larger arrays' curves).
    top = max((v for cell in grid.values() for v in (cell["after"], cell["total"]) if v is not None), default=1.0)
    for ax, n in zip(axes, drives):
        for number, policy in enumerate(POLICIES):
            style = "-" if policy.startswith("vdf") else "--"
            for key, line, width in (("after", style, 1.6), ("total", ":", 0.9)):
                points = [(s, grid[(policy, s, n)][key]) for s in sizes
                          if (policy, s, n) in grid and grid[(policy, s, n)][key] is not None]
                if points:
                    ax.plot([p[0] for p in points], [p[1] for p in points], line, marker="o" if key == "after" else None,
                            markersize=3, color=f"C{number}", linewidth=width,
                            label=LABELS[policy] if key == "after" else None)
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(sizes))
        ax.set_xticklabels([f"{s // 1024}K" if s < 2**20 else f"{s // 2**20}M" for s in sizes], fontsize="small")
        ax.set_xlabel("cache size (4 KiB blocks)")
        ax.set_title(f"{n} disks, one failed")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(0, top * 1.05)
    axes[0].set_ylabel("RGR (surviving-drive I/Os per request)")
    axes[0].legend(fontsize="small")
    return save_png_and_svg(figure, output / "vdf_rgr")[0]


def _draw_service(pd_: Mapping[Tuple[str, int, int, int], Optional[float]], drives: Sequence[int],
                  replay: Sequence[int], output: Path) -> Optional[Path]:
    """Three panels: improvement against threads (Fig. 7), cache size (Fig. 8), disks (Fig. 9)."""
    from matplotlib.figure import Figure

    from raidlab.experiments.sweep_plots import save_png_and_svg

    panels = []
    if FIG78_DRIVES in drives:
        panels.append((f"Fig. 7: 8 disks, {replay[-1]:,} blocks", "threads",
                       [(FIG78_DRIVES, replay[-1], t) for t in FIG7_THREADS], 2))
        panels.append(("Fig. 8: 8 disks, 60 threads", "cache size (blocks)",
                       [(FIG78_DRIVES, s, FIG89_THREADS) for s in replay], 1))
    panels.append((f"Fig. 9: {replay[-1]:,} blocks, 60 threads", "disks", [(n, replay[-1], FIG89_THREADS) for n in drives], 0))
    figure = Figure(figsize=(4.2 * len(panels), 3.6), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    drawn = False
    for ax, (title, xlabel, cases, axis) in zip(axes, panels):
        for number, policy in enumerate(("vdf-lru", "vdf-lfu")):
            base = BASE_OF[policy]
            points = []
            for case in cases:
                n, s, t = case
                ori, vdf = pd_.get((base, s, n, t)), pd_.get((policy, s, n, t))
                if ori is not None and vdf:
                    points.append((case[axis], 100.0 * service_rate_improvement(ori, vdf)))
            if points:
                drawn = True
                ax.plot([p[0] for p in points], [p[1] for p in points], "-o", color=f"C{2 * number + 1}",
                        label=f"{LABELS[policy]} vs {LABELS[base]}")
        ax.axhline(0, color="0.5", linewidth=0.8)
        values = sorted({case[axis] for case in cases})
        if axis == 1:
            ax.set_xscale("log", base=2)
        ax.set_xticks(values)
        ax.set_xticklabels([f"{v // 1024:,}K" if axis == 1 else str(v) for v in values])
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("service-rate improvement (%)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    if not drawn:
        return None
    return save_png_and_svg(figure, output / "vdf_service_rate")[0]


# ---------------------------------------------------------------------------------------------
# Study "cache": VDF's gain against cache size and footprint
# ---------------------------------------------------------------------------------------------


def _footprint_blocks(trace: Path) -> Optional[int]:
    """The trace's distinct 4 KiB blocks as ``raidlab trace info`` counts them (reads and
    writes alike; the look-alikes are reads only)."""
    import json

    from raidlab import _core
    from raidlab.config import to_toml

    stats = json.loads(_core.trace_info(to_toml({"path": str(trace), "format": "auto"}), str(Path.cwd())))
    footprint = stats.get("footprint_bytes")
    return None if footprint is None else int(round(float(footprint) / 4096))


def _run_cache(context: "Context", options: Mapping[str, Any], report: PaperReport) -> None:
    """VDF's gain over LRU and LFU against the cache size (the RGR grid's sizes) and the
    trace's footprint (look-alikes over :data:`FOOTPRINTS_GIB`, or the given trace alone):
    the RGR reduction after warm-up on the ``cache_drives`` arrays, and the reconstruction
    improvement of the open-loop replay (Table 3's setup) on the ``cache_replay_drives``
    arrays. A sensitivity study, not a fit: nothing in it is set from the paper's gains."""
    import pandas as pd

    from raidlab.reproductions.reproduce import default_experiments_dir
    from raidlab.experiments.sweep import load_sweep_spec

    rgr_drives = _subset({"cache_drives": list(CACHE_DRIVES), **options}, "cache_drives", DRIVES)
    replay_drives = _subset({"cache_replay_drives": list(CACHE_REPLAY_DRIVES), **options}, "cache_replay_drives",
                            DRIVES)
    replay_sizes = sorted({int(s) for s in options.get("cache_replay_sizes", CACHE_REPLAY_SIZES)})
    sizes = sorted({int(s) for s in options.get("sizes", RGR_SIZES)} | set(replay_sizes))
    if not replay_sizes or sizes[0] < 1:
        raise ConfigError(f"expected cache sizes ≥ 1 block, not {sizes}", key="cache_replay_sizes")
    replay_records = _positive_int(options, "replay_records", DEFAULT_REPLAY_RECORDS)
    capacity = capacity_sectors(_positive_float(options, "capacity_gib", DEFAULT_CAPACITY_GIB),
                                _subset(options, "drives", DRIVES))
    seeds = list(range(1, 1 + (context.seeds or 1)))
    jobs = context.jobs or os.cpu_count() or 1
    output = Path(context.output).resolve()
    folder = output / "cache-study"
    folder.mkdir(parents=True, exist_ok=True)
    experiments = Path(context.experiments_dir) if context.experiments_dir else default_experiments_dir()
    base = (experiments / CONFIG).resolve()

    if options.get("trace"):
        footprints = [(None, *_trace(output, options, context))]
    else:
        areas = sorted({float(a) for a in options.get("footprints_gib", FOOTPRINTS_GIB)})
        if not areas or any(not a > 0 for a in areas):
            raise ConfigError(f"expected positive sizes in GiB, not {areas}", key="footprints_gib")
        footprints = [(area, _trace(output, {**options, "area_gib": area}, context)[0], f"look-alike over {area:g} GiB")
                      for area in areas]

    grids: Dict[Path, Dict[Tuple[str, int, int], Dict[str, Any]]] = {}
    misses: Dict[Tuple[Path, str, int, int], Dict[str, Any]] = {}
    unfilled: List[Tuple[Path, int]] = []
    blocks: Dict[Path, Optional[int]] = {}
    for _, trace, _ in footprints:
        tag = _trace_tag(trace)
        blocks[trace] = _footprint_blocks(trace)
        stored = folder / f"rgr-{tag}.json"
        grid = _stored_grid(stored, trace, rgr_drives, sizes)
        if grid is None:
            grid = _rgr_grid(trace, rgr_drives, sizes, jobs, context)
            _store_grid(grid, stored, trace, rgr_drives, sizes)
        grids[trace] = grid
        for size in replay_sizes:
            streams = [(p, size, n) for n in replay_drives for p in POLICIES]
            try:
                found = _miss_streams(trace, tag, output / "misses", streams, replay_records, jobs, context)
            except ConfigError:
                unfilled.append((trace, size))  # a cache the replayed prefix never fills: no stream after warm-up
                continue
            for (p, s, n), facts in found.items():
                misses[(trace, p, s, n)] = facts

    points = [{"array.drives": n, "workload.trace.path": facts["path"]} for (_, _, _, n), facts in misses.items()]
    table = None
    rd: Dict[Tuple[Path, str, int, int], Optional[float]] = {}
    if points:
        spec = load_sweep_spec(folder / "vdf-cache-open-loop.toml", text=_spec(
            base, "vdf-cache-open-loop", seeds, {"drive.capacity_sectors": capacity, **OPEN_LOOP_KEYS}, points))
        outcome = context.run_sweep("vdf cache study (rebuild)", spec, folder / "open-loop")
        table = outcome.table
        failed = table[table["status"] != "done"]
        if len(failed):
            error = "cache study run(s) failed: " + "; ".join(str(e) for e in failed["error"].dropna())
            report.error = f"{report.error}; {error}" if report.error else error
        done = table[table["status"] == "done"]
        incomplete = set(done[done["rebuild.outcome"] != "complete"]["workload.trace.path"]) \
            if "rebuild.outcome" in done else set()
        for key, facts in misses.items():
            rd[key] = None if facts["path"] in incomplete else _mean_by(
                done, METRIC_RD, {"array.drives": key[3], "workload.trace.path": facts["path"]})

    records = []
    for area, trace, label in footprints:
        grid = grids[trace]
        for size in sizes:
            for base_policy in ("lru", "lfu"):
                policy = f"vdf-{base_policy}"
                for n in sorted(set(rgr_drives) | set(replay_drives)):
                    cell_base, cell_vdf = grid.get((base_policy, size, n), {}), grid.get((policy, size, n), {})
                    rgr = (rgr_reduction(cell_base["after"], cell_vdf["after"])
                           if cell_base.get("after") and cell_vdf.get("after") is not None else None)
                    rd_base, rd_vdf = rd.get((trace, base_policy, size, n)), rd.get((trace, policy, size, n))
                    records.append({
                        "trace": label, "area_gib": area, "footprint_blocks": blocks[trace], "size_blocks": size,
                        "base": base_policy, "drives": n,
                        "rgr_reduction_pct": None if rgr is None else 100.0 * rgr,
                        "base_hit_ratio": cell_base.get("hit"),
                        "rd_base_s": rd_base, "rd_vdf_s": rd_vdf,
                        "rd_gain_pct": (100.0 * reconstruction_improvement(rd_base, rd_vdf)
                                        if rd_base and rd_vdf is not None else None),
                        "replayed": (trace, size) not in unfilled and n in replay_drives and size in replay_sizes})
    frame = pd.DataFrame(records)
    frame.to_csv(folder / "cache_study.csv", index=False)
    report.facts.append(
        f"cache study (sensitivity study, not a fit): {len(footprints)} trace(s) ("
        + "; ".join(f"{label}: {blocks[trace]:,} distinct blocks" if blocks[trace] else label
                    for _, trace, label in footprints)
        + f"), RGR grid on {', '.join(map(str, rgr_drives))} drives × {len(sizes)} size(s), open-loop replays on "
        f"{', '.join(map(str, replay_drives))} drives at {', '.join(f'{s:,}' for s in replay_sizes)} blocks "
        f"({0 if table is None else len(table)} run(s) × {len(seeds)} seed(s))"
        + (f"; not replayed (the first {replay_records:,} records never fill the cache): "
           + ", ".join(f"{t.name} at {s:,}" for t, s in unfilled) if unfilled else "")
        + f"; files in {folder}")
    for base_policy in ("lru", "lfu"):
        report.tables.append(_cache_table(frame, base_policy, rgr_drives, replay_drives))
        figure = _draw_cache(frame, base_policy, replay_drives, folder)
        if figure is not None:
            report.figures.append(ReportFigure(figure, f"VDF-{base_policy.upper()}'s gain over "
                                                       f"{base_policy.upper()} against cache size, one colour per "
                                                       "footprint: a sensitivity study, not a fit"))


def _cache_table(frame: "pd.DataFrame", base_policy: str, rgr_drives: Sequence[int],
                 replay_drives: Sequence[int]) -> ReportTable:
    policy = f"vdf-{base_policy}"
    offset = 0 if base_policy == "lru" else 3
    rows = []
    keys = frame[["trace", "size_blocks"]].drop_duplicates().itertuples(index=False)
    for trace, size in keys:
        cells = frame[(frame["trace"] == trace) & (frame["size_blocks"] == size) & (frame["base"] == base_policy)]
        first = cells.iloc[0]
        footprint = first["footprint_blocks"]
        row = [str(trace), f"{size:,}",
               "—" if footprint is None or not footprint == footprint else f"{size / footprint:.2f}",
               _pct(first["base_hit_ratio"]) if first["base_hit_ratio"] == first["base_hit_ratio"] else "—"]
        for n in rgr_drives:
            value = cells[cells["drives"] == n]["rgr_reduction_pct"]
            row.append(number_text(value.iloc[0] if len(value) else None, 1, " %"))
        for n in replay_drives:
            value = cells[(cells["drives"] == n)]["rd_gain_pct"]
            row.append(number_text(value.iloc[0] if len(value) else None, 1, " %"))
            paper = TABLE3.get((n, size))
            row.append(f"{paper[offset + 2]:.1f} %" if paper else "")
        if size == 524_288 and base_policy == "lfu":
            row.append(f"RGR {RGR_LFU_524288[0]}–{RGR_LFU_524288[1]} % (5-8 disks, §6.4)")
        else:
            row.append("")
        rows.append(row)
    name, base_name = LABELS[policy], LABELS[base_policy]
    columns = ["trace", "cache (blocks)", "cache / footprint", f"{base_name} hit ratio, whole trace"]
    columns += [f"RGR reduction, {n} disks" for n in rgr_drives]
    for n in replay_drives:
        columns += [f"reconstruction gain, {n} disks", f"paper, {n} disks (Table 3)"]
    columns.append("paper, other")
    note = (f"Sensitivity study, not a fit. {name} against {base_name} on look-alikes of different footprints (the "
            "trace's address space, hence its distinct blocks and the size of its hot regions; the reproduction's "
            "is 60 GiB). RGR reduction = (RGR_base − RGR_VDF) / RGR_base after warm-up, drive 0 failed; "
            "reconstruction gain = (RD_base − RD_VDF) / RD_base of the open-loop replay of Table 3's setup. "
            "\"—\": the cache never filled in the replayed prefix, or held the whole footprint.")
    return ReportTable(f"VDF's gain against cache size and footprint: {name} vs {base_name} "
                       "(sensitivity study, not a fit)", columns, rows, note=note, numeric_from=1)


def _draw_cache(frame: "pd.DataFrame", base_policy: str, replay_drives: Sequence[int], folder: Path) -> Optional[Path]:
    from matplotlib.figure import Figure

    from raidlab.experiments.sweep_plots import save_png_and_svg

    cells = frame[frame["base"] == base_policy]
    if cells.empty:
        return None
    n = replay_drives[0] if replay_drives else int(cells["drives"].min())
    offset = 0 if base_policy == "lru" else 3
    figure = Figure(figsize=(10.0, 4.6), layout="constrained")
    ax = figure.subplots()
    for number, trace in enumerate(dict.fromkeys(cells["trace"])):
        rows = cells[(cells["trace"] == trace) & (cells["drives"] == n)].sort_values("size_blocks")
        rgr = rows.dropna(subset=["rgr_reduction_pct"])
        ax.plot(rgr["size_blocks"], rgr["rgr_reduction_pct"], "-o", color=f"C{number}", markersize=3,
                label=f"{trace}: RGR reduction")
        rd = rows.dropna(subset=["rd_gain_pct"])
        if len(rd):
            ax.plot(rd["size_blocks"], rd["rd_gain_pct"], "--s", color=f"C{number}", markersize=3,
                    label=f"{trace}: reconstruction gain")
    paper = [(size, TABLE3[(n, size)][offset + 2]) for size in TABLE3_SIZES if (n, size) in TABLE3]
    if paper:
        ax.plot([p[0] for p in paper], [p[1] for p in paper], "kx", markersize=8,
                label=f"paper: reconstruction gain, Table 3 ({n} disks)")
    if base_policy == "lfu":
        ax.errorbar([524_288], [sum(RGR_LFU_524288) / 2], yerr=[[sum(RGR_LFU_524288) / 2 - RGR_LFU_524288[0]],
                                                               [RGR_LFU_524288[1] - sum(RGR_LFU_524288) / 2]],
                    fmt="k^", markersize=5, capsize=3, label="paper: RGR reduction at 524,288 (§6.4, 5-8 disks)")
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.set_xscale("log", base=2)
    values = sorted(set(cells["size_blocks"]))
    ax.set_xticks(values)
    ax.set_xticklabels([f"{v // 1024:,}K" for v in values], fontsize="small")
    ax.set_xlabel("cache size (4 KiB blocks)")
    ax.set_ylabel(f"gain of VDF-{base_policy.upper()} over {base_policy.upper()} (%)")
    ax.set_title(f"VDF-{base_policy.upper()} vs {base_policy.upper()}, {n} disks, one failed: "
                 "sensitivity study, not a fit", fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save_png_and_svg(figure, folder / f"vdf_cache_{base_policy}")[0]
