"""SWO (seed 002, Mei et al., "A Stripe-Oriented Write Performance Optimization for
RAID-Structured Storage Systems"): the log-assisted RAID-5 schemes against plain RAID-5.

The paper's array (§IV-A, notes A.13-A.14): a 7-drive RAID-5 with 512 KB chunks, every drive
limited to 10 GB (a 60 GB volume), plus a log drive with a 10 GB log whose re-sync starts at
80 % full (``experiments/swo.toml``). raidlab's drive is ``hc550`` (7,200 rpm) for the
prototype's Seagate ST31000340NS, limited to its first 10 GiB. Schemes (:data:`SCHEMES`):
plain RAID-5, Data Logging, RAID5L, RAID5L_S, RAID5L_O, SWO, and beside them, beyond the
paper's comparison, Parity Logging (the paper describes it but measures nothing of it) and
Linux md's raid5 journal (write-through) and partial parity log (PPL), which the paper does
not name. md's schemes keep the parity current on every write (:data:`MD_SCHEMES`): they
have nothing to re-sync and are left out of Figs. 10-11; their PPL needs no log drive.

Studies (``--studies``, default both):

* ``iometer`` (Figs. 6-7): IOmeter-like writes replayed closed loop, every request a write:
  random (uniform over the volume, aligned to the request size, as IOmeter aligns by default)
  or sequential (from the start of the volume), of :data:`IOMETER_SIZES_KIB` with
  :data:`IOMETER_DEPTHS` requests outstanding, :data:`IOMETER_REQUESTS` requests per run.
  Every scheme at 512 KiB chunks (Fig. 6); RAID-5 and SWO at every chunk of
  :data:`CHUNKS_KIB` (Fig. 7). The paper gives none of size, depth or length.
* ``traces`` (Table II, Figs. 8, 10, 11): an hour of a Financial1 and a Financial2
  look-alike (:mod:`raidlab.synth`, one per seed) or of the real traces (option ``traces``),
  replayed open loop at their timestamps, at 512 KiB chunks (the paper's) and at 4 KiB (notes
  A.17); the log drive fails 1 s after the hour, so the re-sync runs offline (Fig. 10; not
  under md's schemes).

Fig. 9 (and Fig. 11's reconstruction column): the 512 KiB trace cases once more, with data
drive 0 failing 1 s after the hour and rebuilt onto a hot spare through the log, offline
(:data:`RECOVERY_REBUILD`); RAID-5 and md's schemes rebuild plainly. No published number
covers md's schemes: their cells beside the paper's show "—".

Every run goes through the sweep machinery, three sweeps per seed (``OUTPUT/resync-seedN``:
the trace runs of :data:`LOG_SCHEMES`, whose log drive fails; ``OUTPUT/recovery-seedN``: the
512 KiB trace runs whose data drive fails; ``OUTPUT/runs-seedN``: the others), so a second
``reproduce`` reuses finished runs. Seeds 1, 2 by default (``--seeds N``: 1..N); seed
N draws the look-alikes and the random IOmeter stream with seed N (the sequential stream is
the same for every seed).

Measured on a 2-core machine shared with other work: 344 runs (172 cases × 2 seeds) and the
36 runs of Fig. 9 in 1 min 32 s to 1 min 53 s from nothing, 8-10 s
when every run is done; the quick grid about 20 s.

Options (``Context.options``): ``quick`` (a small grid for tests: :data:`QUICK`), ``duration_s``
(the trace replays' length, default 3600), ``iometer_requests``, ``traces`` (a mapping
``{"financial1": FILE, "financial2": FILE}`` of real traces to replay instead of the
look-alikes; the command line's ``--trace financial1=FILE``).
"""

from __future__ import annotations

import functools
import hashlib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from raidlab.exceptions import ConfigError
from raidlab.output.report import PaperReport, ReportFigure, ReportTable, number_text

if TYPE_CHECKING:
    from raidlab.reproductions.context import Context

__all__ = ["SCHEMES", "LOG_SCHEMES", "MD_SCHEMES", "TRACES", "CHUNKS_KIB", "TABLE2", "FIG6", "FIG7", "FIG8", "FIG9",
           "FIG10", "FIG11", "Case", "cases", "run"]

# ---------------------------------------------------------------------------------------------
# The setup
# ---------------------------------------------------------------------------------------------

#: The schemes, in the paper's order, by the paper's names: the core's ``log.scheme`` (plain
#: RAID-5: no ``[log]`` table). Parity Logging is background in the paper (§II-A), shown beside;
#: so are Linux md's raid5 journal (write-through) and partial parity log, which the paper
#: does not name (docs/log.md, "Linux md's journal and PPL").
SCHEMES: Dict[str, Optional[str]] = {
    "RAID5": None, "DL": "data_logging", "RAID5L_S": "raid5l_s", "RAID5L_O": "raid5l_o", "RAID5L": "raid5l",
    "SWO": "swo", "PL": "parity_logging", "MDJ": "md_journal", "PPL": "md_ppl",
}
SCHEME_NAMES = {"RAID5": "RAID5", "DL": "Data Logging", "RAID5L_S": "RAID5L_S", "RAID5L_O": "RAID5L_O",
                "RAID5L": "RAID5L", "SWO": "SWO", "PL": "Parity Logging (extra)", "MDJ": "md journal (extra)",
                "PPL": "md PPL (extra)"}
#: md's schemes keep the parity current on every write (a write is planned as plain RAID-5, with
#: a log write of its own before the home writes): nothing to re-sync, no records to recover a
#: lost block from, so Figs. 10-11 and the paper's pre-read counting do not apply to them.
MD_SCHEMES = ("MDJ", "PPL")
#: The schemes that defer the parity to a re-sync through a log drive (the paper's sense of
#: "log-assisted").
LOG_SCHEMES = tuple(s for s, name in SCHEMES.items() if name is not None and s not in MD_SCHEMES)
#: The log (§IV-A; notes A.1, A.13): 10 GB, re-sync at 80 % full, 4 KiB rows (md's stripe_head).
LOG_TABLE = {"capacity_gb": 10.0, "resync_threshold": 0.8, "block_kib": 4}
TRACES = ("financial1", "financial2")
TRACE_LABELS = {"financial1": "Financial1", "financial2": "Financial2"}
#: Fig. 7's five chunk sizes "from 4KB to 512KB"; the paper names 4, 64 and 512 KB, 16 and
#: 256 are the notes' choice (A.14).
CHUNKS_KIB = (4, 16, 64, 256, 512)
PAPER_CHUNK_KIB = 512
#: The trace runs' chunks: the paper's, and 4 KiB where multi-block rows are common (A.17).
TRACE_CHUNKS_KIB = (512, 4)
#: raidlab's choices for the IOmeter-like runs (the paper gives none).
IOMETER_PATTERNS = ("sequential", "random")
IOMETER_SIZES_KIB = (4, 64)
IOMETER_DEPTHS = (1, 16)
IOMETER_REQUESTS = 20_000
HOUR_S = 3600.0
#: The log drive fails this long after the hour's end: the re-sync then runs with no user I/O.
LOG_FAILS_AFTER_S = 1.0
#: Fig. 9: data drive 0 fails this long after the hour's end and is rebuilt onto a hot spare
#: with no user I/O (notes A.12: offline), by raidlab's choices for what the paper leaves open
#: (notes A.12): stripe order, md-like concurrency (16 units of 64 KiB in flight, as md's
#: resync keeps 1 MiB per device; experiments/md_resync_tradeoff.toml), content checks off
#: (a 10 GiB rebuild's check would dominate the time; tests/simulation/log_raid.rs proves the
#: rebuild through the log).
DATA_FAILS_AFTER_S = 1.0
RECOVERY_REBUILD = {"executor": "sor", "parallel_units": 16, "unit": {"sectors": 128}, "order": "sequential"}
#: The quick grid (tests): 5 min of trace, 2,000 IOmeter requests of 4 KiB, one outstanding,
#: chunks 4 and 512 KiB.
QUICK = {"duration_s": 300.0, "iometer_requests": 2_000, "sizes": (4,), "depths": (1,), "chunks": (4, 512)}
CONFIG = "swo.toml"
FIRST_SEED = 1
DEFAULT_SEEDS = 2
#: The array (experiments/swo.toml): 7 drives of 10 GiB, so 6 × 10 GiB of data.
DRIVE_SECTORS = 20_971_520
DATA_DRIVES = 6
VOLUME_BYTES = DRIVE_SECTORS * 512 * DATA_DRIVES
STUDIES = ("iometer", "traces")

# ---------------------------------------------------------------------------------------------
# What the paper publishes (notes A.15)
# ---------------------------------------------------------------------------------------------

#: Table II, average pre-read data blocks per write request, verbatim.
TABLE2: Dict[str, Dict[str, float]] = {
    "financial1": {"RAID5": 3.14, "DL": 2.25, "RAID5L_S": 1.81, "RAID5L_O": 1.54, "RAID5L": 1.81, "SWO": 1.54},
    "financial2": {"RAID5": 2.08, "DL": 1.44, "RAID5L_S": 0.87, "RAID5L_O": 0.65, "RAID5L": 0.87, "SWO": 0.65},
}
#: Table II's "SWO Improved by" column as printed (%); the Financial2 row does not follow from
#: the row's own values (notes A.15).
TABLE2_IMPROVED: Dict[str, Dict[str, float]] = {
    "financial1": {"RAID5": 50.96, "DL": 31.56, "RAID5L_S": 14.92, "RAID5L_O": 0.0, "RAID5L": 14.92},
    "financial2": {"RAID5": 61.17, "DL": 35.96, "RAID5L_S": 16.09, "RAID5L_O": 0.0, "RAID5L": 16.09},
}
#: Fig. 6 (IOmeter, 512 KB): SWO's reduction of the mean response time (%) against each scheme.
FIG6: Dict[str, Dict[str, float]] = {
    "sequential": {"RAID5": 32.21, "DL": 21.86, "RAID5L": 12.91},
    "random": {"RAID5": 43.36, "DL": 33.86, "RAID5L": 16.34},
}
#: Fig. 7: SWO's reduction against RAID5 (%) at each chunk of :data:`CHUNKS_KIB`.
FIG7: Dict[str, Tuple[float, ...]] = {
    "sequential": (18.50, 20.76, 22.20, 27.46, 32.21),
    "random": (24.55, 27.86, 39.43, 41.10, 43.36),
}
#: Fig. 8 (traces, 512 KB): SWO's reduction of the mean response time (%).
FIG8: Dict[str, Dict[str, float]] = {
    "financial1": {"RAID5": 70.11, "DL": 47.32, "RAID5L": 33.40},
    "financial2": {"RAID5": 41.81, "DL": 24.97, "RAID5L": 15.92},
}
#: Fig. 9 (recovery time after a data drive fails): SWO's reduction (%).
FIG9: Dict[str, Dict[str, float]] = {
    "financial1": {"DL": 58.52, "RAID5L": 68.85},
    "financial2": {"DL": 21.32, "RAID5L": 31.17},
}
#: Fig. 10 (re-sync time after the log drive fails): SWO's reduction (%).
FIG10: Dict[str, Dict[str, float]] = {
    "financial1": {"DL": 40.82, "RAID5L": 28.01},
    "financial2": {"DL": 34.66, "RAID5L": 21.11},
}
#: Fig. 11: RAID5L_S's and RAID5L_O's reductions of RAID5L's (%): response, reconstruction,
#: re-sync time.
FIG11: Dict[Tuple[str, str], Tuple[float, float, float]] = {
    ("financial1", "RAID5L_S"): (2.59, 7.03, 7.14), ("financial1", "RAID5L_O"): (31.45, 55.03, 22.40),
    ("financial2", "RAID5L_S"): (1.43, 6.18, 6.24), ("financial2", "RAID5L_O"): (14.47, 15.64, 15.74),
}


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


class Case(NamedTuple):
    """One configuration run once per seed: ``workload`` is an IOmeter pattern (``random``,
    ``sequential``) or a trace (``financial1``, ``financial2``); ``size_kib`` and ``depth``
    are the IOmeter request size and outstanding requests (0 for a trace)."""

    workload: str
    scheme: str
    chunk_kib: int
    size_kib: int = 0
    depth: int = 0

    @property
    def study(self) -> str:
        return "traces" if self.workload in TRACES else "iometer"


def cases(studies: Sequence[str] = STUDIES, quick: bool = False) -> List[Case]:
    """The cases run: every scheme at 512 KiB for each IOmeter combination, and RAID-5 and SWO
    at the other chunks (Fig. 7); every scheme on each trace at each of
    :data:`TRACE_CHUNKS_KIB`."""
    found: List[Case] = []
    if "traces" in studies:
        found += [Case(trace, scheme, chunk) for trace in TRACES for chunk in TRACE_CHUNKS_KIB for scheme in SCHEMES]
    if "iometer" in studies:
        sizes = QUICK["sizes"] if quick else IOMETER_SIZES_KIB
        depths = QUICK["depths"] if quick else IOMETER_DEPTHS
        chunks = QUICK["chunks"] if quick else CHUNKS_KIB
        for pattern in IOMETER_PATTERNS:
            for size in sizes:
                for depth in depths:
                    found += [Case(pattern, scheme, PAPER_CHUNK_KIB, size, depth) for scheme in SCHEMES]
                    found += [Case(pattern, scheme, chunk, size, depth) for chunk in chunks if chunk != PAPER_CHUNK_KIB
                              for scheme in ("RAID5", "SWO")]
    return found


def _iometer_key(case: Case) -> Tuple[str, int, int]:
    return case.workload, case.size_kib, case.depth


# ---------------------------------------------------------------------------------------------
# Traces
# ---------------------------------------------------------------------------------------------


def _write_atomically(path: Path, write: Any) -> Path:
    if not path.is_file():
        partial = path.with_name(path.name + ".partial")
        write(partial)
        partial.replace(path)
    return path


def _iometer_trace(folder: Path, pattern: str, size_kib: int, requests: int, seed: int) -> Path:
    """An IOmeter-like stream of ``requests`` writes of ``size_kib`` KiB (SPC): sequential
    from the start of the volume, or uniformly random over it, aligned to the size. Closed-loop
    replays ignore the timestamps."""
    import numpy as np

    size = size_kib * 1024
    slots = VOLUME_BYTES // size
    name = f"iometer-{pattern}-{size_kib}k-{requests}req" + (f"-seed{seed}" if pattern == "random" else "") + ".spc"

    def write(partial: Path) -> None:
        if pattern == "sequential":
            offsets = (np.arange(requests, dtype=np.int64) % slots) * size
        else:
            rng = np.random.default_rng([0x10E7E2, size_kib, int(seed)])
            offsets = rng.integers(0, slots, requests, dtype=np.int64) * size
        partial.write_text("".join(f"0,{offset // 512},{size},w,{index / 1000:.3f}\n"
                                   for index, offset in enumerate(offsets.tolist())), encoding="ascii")

    return _write_atomically(folder / name, write)


def _financial_trace(folder: Path, trace: str, duration_s: float, seed: int) -> Path:
    from raidlab import synth

    profile = synth.OLTP_PROFILES[trace]
    requests = int(round(profile.iops * duration_s))
    path = folder / f"{trace}-{duration_s:g}s-seed{seed}.spc.gz"
    return _write_atomically(path, lambda partial: synth.write(
        synth.generate(trace, seed=seed, requests=requests, area_gib=VOLUME_BYTES / 2**30), partial, compress=True))


def _trace_tag(path: Path) -> str:
    """A tag that changes when the file does, so a changed trace never reuses old runs."""
    stat = path.stat()
    return hashlib.sha256(f"{path}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:10]


def _given_traces(options: Mapping[str, Any]) -> Dict[str, Path]:
    """The user's real trace files (option ``traces``: trace name -> file), each checked
    readable."""
    from raidlab.reproductions.reproduce import given_traces

    return given_traces(options, "traces", TRACES, lambda name: f"traces.{name}")


def _columns(path: Path) -> Dict[str, Any]:
    """A trace file's columns (``synth.read_spc``), read once for the report's several uses
    (again if the file changes). The ASU field is left out, as raidlab's replay puts every
    ASU in one address space."""
    stat = Path(path).stat()
    return _read_columns(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _read_columns(path: str, size: int, mtime_ns: int) -> Dict[str, Any]:
    from raidlab import synth

    return synth.read_spc(path)


def _trace_facts(path: Path, duration_s: float) -> Dict[str, float]:
    """Table I's characteristics of a trace's first ``duration_s`` seconds (from its first
    timestamp), and its rewrite share: of the 4 KiB blocks the writes cover, the share of
    block writes to a block already written earlier in that time."""
    import numpy as np

    columns = _columns(path)
    time_s = columns["time_s"]
    keep = time_s < time_s.min() + duration_s
    columns = {key: value[keep] for key, value in columns.items()}
    n = int(columns["time_s"].size)
    writes = ~columns["is_read"]
    first = columns["lba"][writes] * 512 // 4096
    last = (columns["lba"][writes] * 512 + columns["size_bytes"][writes] - 1) // 4096
    spans = last - first + 1
    blocks = np.repeat(first, spans) + (np.arange(int(spans.sum())) - np.repeat(np.cumsum(spans) - spans, spans))
    unique = np.unique(blocks).size
    return {"requests": n, "write_fraction": float(writes.mean()) if n else math.nan,
            "mean_size_kb": float(columns["size_bytes"].mean() / 1024) if n else math.nan,
            "iops": n / duration_s, "rewrite_share": 1.0 - unique / blocks.size if blocks.size else math.nan,
            "written_gib": unique * 4096 / 2**30}


def md_raid5_pages(path: Path, chunk_kib: int, duration_s: float) -> float:
    """Plain RAID-5's pre-reads per write request counted as Linux md counts them (notes
    A.2), from the trace alone (a model, not a simulation): per 4 KiB row a write touches,
    with k of the 6 data blocks updated (a block covered in part counts as updated, since md
    works in whole 4 KiB pages), read-modify-write reads k + 1 pages (the parity's included)
    and reconstruct-write 6 − k; md takes the smaller, ties to reconstruct-write; a full row
    reads nothing. Addresses are folded onto the volume (modulo), the trace's first
    ``duration_s`` seconds are counted."""
    import numpy as np

    columns = _columns(path)
    keep = (~columns["is_read"]) & (columns["time_s"] < columns["time_s"].min() + duration_s)
    start = (columns["lba"][keep].astype(np.int64) * 512) % VOLUME_BYTES
    size = columns["size_bytes"][keep].astype(np.int64)
    if not start.size:
        return math.nan
    first, last = start // 4096, (start + size - 1) // 4096
    spans = last - first + 1
    request = np.repeat(np.arange(start.size), spans)
    block = (np.repeat(first, spans) + np.arange(int(spans.sum())) - np.repeat(np.cumsum(spans) - spans, spans))
    block %= VOLUME_BYTES // 4096
    per_chunk = chunk_kib // 4
    chunk, offset = block // per_chunk, block % per_chunk
    row = (chunk // DATA_DRIVES) * per_chunk + offset  # the 4 KiB row: stripe, then offset in the chunk
    _, k = np.unique(request * (int(row.max()) + 1) + row, return_counts=True)  # blocks per (request, row)
    pages = np.where(k >= DATA_DRIVES, 0, np.minimum(k + 1, DATA_DRIVES - k))
    return float(pages.sum() / start.size)


# ---------------------------------------------------------------------------------------------
# Sweeps
# ---------------------------------------------------------------------------------------------


def ppl_area_sectors(chunk_kib: int) -> int:
    """The area md's PPL takes at the end of every member, sectors, as the core reserves it
    (docs/log.md): a 4 KiB header and the larger of md's 128 KiB and one chunk."""
    return 8 + max(256, chunk_kib * 2)


def _case_keys(case: Case, path: Path, duration_s: float, requests: int, given: bool) -> Dict[str, Any]:
    keys: Dict[str, Any] = {"array.stripe_unit_kib": case.chunk_kib, "workload.trace.path": str(path)}
    log = SCHEMES[case.scheme]
    if log is not None:
        # md's journal sizes its ring by capacity_gb; neither md scheme uses the threshold.
        keys["log"] = {"scheme": log, **LOG_TABLE}
    if log == "md_ppl":
        # The core takes PPL's area from the members' data, which would leave a volume a few
        # stripes short of 60 GiB (and addresses near its end refused); md keeps the PPL in the
        # members' metadata space, beside the data. So the members hold that much more: every
        # scheme then serves the same volume and the same addresses.
        keys["drive.capacity_sectors"] = DRIVE_SECTORS + ppl_area_sectors(case.chunk_kib)
    if case.study == "traces":
        keys["workload.duration_s"] = duration_s
        keys["workload.trace.fold"] = "modulo" if given else "reject"
        if given:
            keys["workload.trace.format"] = "auto"
    else:
        keys["workload.trace.fold"] = "reject"
        keys["workload.arrival"] = {"process": "closed", "outstanding": case.depth}
        keys["workload.requests"] = requests
        keys["workload.duration_s"] = 1.0e6  # the stream's length ends the run
        # The content model changes no simulated time; off here, it takes the IOmeter runs from
        # 6.5 s to 0.3 s (64 KiB random, SWO); the trace runs keep it on.
        keys["content.check"] = False
    return keys


def _spec_text(base: Path, name: str, seed: int, set_keys: Mapping[str, Any], points: List[Dict[str, Any]]) -> str:
    from raidlab.config import toml_literal

    lines = [f"base = {toml_literal(str(base))}", f"name = {toml_literal(name)}", f"seeds = [{seed}]", "", "[set]"]
    lines += [f"{toml_literal(key)} = {toml_literal(value)}" for key, value in set_keys.items()]
    lines.append("")
    for keys in points:
        lines.append("[[points]]")
        lines += [f"{toml_literal(key)} = {toml_literal(value)}" for key, value in keys.items()]
        lines.append("")
    return "\n".join(lines)


#: Per-run metrics kept (``_metrics``).
METRICS = ("response", "write_response", "read_response", "pre_reads", "merge_reads", "lookups", "resync_s",
           "resync_rows", "resync_lookups", "resyncs", "recovery_checked", "recovery_wrong", "stale_reads",
           "log_full_rows", "peak_log_gb", "requests", "write_requests", "completed", "volume_bytes",
           "md_log_bytes_per_write", "unprotected_writes")


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _metrics(row: Mapping[str, Any], case: Case) -> Dict[str, float]:
    """A run's metrics. ``pre_reads`` is Table II's measure: the scheme's pre-read data blocks
    per write request; for plain RAID-5 and md's schemes (which plan every write as plain
    RAID-5), the pre-read sectors (parity pre-reads included) / 8 per write request."""
    get = lambda key: _float(row.get(key))  # noqa: E731
    writes = get("response_ms.write.count")
    values = {"response": get("response_ms.all.mean"), "write_response": get("response_ms.write.mean"),
              "read_response": get("response_ms.read.mean"), "requests": get("response_ms.all.count"),
              "write_requests": writes, "completed": get("requests_completed"),
              "stale_reads": get("content.stale_reads"), "volume_bytes": get("capacity_bytes"),
              "md_log_bytes_per_write": math.nan, "unprotected_writes": math.nan}
    if SCHEMES[case.scheme] is None or case.scheme in MD_SCHEMES:
        # md's log table counts no pre-reads (the paper's row counting does not apply to it).
        values["pre_reads"] = get("writes.pre_read_sectors") / 8.0 / writes if writes else math.nan
        for name in ("merge_reads", "lookups", "resync_s", "resync_rows", "resync_lookups", "resyncs",
                     "recovery_checked", "recovery_wrong", "log_full_rows", "peak_log_gb"):
            values[name] = math.nan
        if case.scheme in MD_SCHEMES:
            # With content checks the run's end recovers every written row plainly (md's parity
            # is current), which proves every parity is the XOR of its data.
            values.update({"md_log_bytes_per_write": get("log.md_log_bytes_per_write"),
                           "unprotected_writes": get("log.unprotected_writes"),
                           "recovery_checked": get("log.recovery_sectors_checked"),
                           "recovery_wrong": get("log.recovery_sectors_wrong")})
        return values
    log_writes = get("log.write_requests")
    values.update({
        "pre_reads": get("log.pre_read_blocks_per_write_request"),
        "merge_reads": get("log.merge_read_blocks") / log_writes if log_writes else math.nan,
        "lookups": get("log.lookups_per_write_request"), "resync_s": get("log.resync_s"),
        "resync_rows": get("log.resync_rows"), "resync_lookups": get("log.resync_lookups"),
        "resyncs": get("log.resyncs"), "recovery_checked": get("log.recovery_sectors_checked"),
        "recovery_wrong": get("log.recovery_sectors_wrong"), "log_full_rows": get("log.log_full_rows"),
        "peak_log_gb": get("log.peak_used_bytes") / 1e9})
    return values


class _Runs:
    """Per case and metric, each seed's value; means over seeds."""

    def __init__(self) -> None:
        self.values: Dict[Tuple[Case, str], Dict[int, float]] = {}

    def add(self, case: Case, seed: int, metrics: Mapping[str, float]) -> None:
        for name, value in metrics.items():
            self.values.setdefault((case, name), {})[seed] = value

    def seeds(self, case: Case, metric: str) -> Dict[int, float]:
        return self.values.get((case, metric), {})

    def mean(self, case: Case, metric: str) -> float:
        values = [v for v in self.seeds(case, metric).values() if not math.isnan(v)]
        return math.fsum(values) / len(values) if values else math.nan

    def reduction(self, case: Case, versus: Case, metric: str = "response") -> Dict[int, float]:
        """Per seed, (versus − case) / versus in %: the case's reduction of ``versus``'s metric."""
        ours, theirs = self.seeds(case, metric), self.seeds(versus, metric)
        return {seed: 100.0 * (theirs[seed] - value) / theirs[seed] for seed, value in ours.items()
                if seed in theirs and theirs[seed] and not math.isnan(value) and not math.isnan(theirs[seed])}

    def has(self, case: Case) -> bool:
        return bool(self.seeds(case, "response"))


def _mean(values: Mapping[int, float]) -> float:
    finite = [v for v in values.values() if not math.isnan(v)]
    return math.fsum(finite) / len(finite) if finite else math.nan


def _per_seed(values: Mapping[int, float], digits: int = 1, suffix: str = "") -> str:
    return " / ".join(number_text(values[s], digits, suffix) for s in sorted(values)) or "—"


def _points(value: float, paper: float) -> str:
    return f"{value - paper:+.1f} pt" if math.isfinite(value) and math.isfinite(paper) else "—"


# ---------------------------------------------------------------------------------------------
# The reproduction
# ---------------------------------------------------------------------------------------------


def _positive(options: Mapping[str, Any], key: str, default: Any, kind: type) -> Any:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or (
            kind is int and int(value) != value):
        raise ConfigError(f"expected a {'whole ' if kind is int else ''}number > 0, not {value!r}", key=key)
    return kind(value)


def run(context: "Context") -> PaperReport:
    """Write the traces, run one sweep per seed into ``context.output`` and return the report.
    Finished runs are reused by a second call."""
    from raidlab.experiments.sweep import load_sweep_spec
    from raidlab.reproductions.reproduce import default_experiments_dir

    options = dict(context.options or {})
    unknown = set(options) - {"quick", "duration_s", "iometer_requests", "traces"}
    if unknown:
        raise ConfigError(f"unknown option(s) {sorted(unknown)}", key="swo")
    quick = bool(options.get("quick", False))
    duration_s = _positive(options, "duration_s", QUICK["duration_s"] if quick else HOUR_S, float)
    requests = _positive(options, "iometer_requests", QUICK["iometer_requests"] if quick else IOMETER_REQUESTS, int)
    given = _given_traces(options)
    studies = list(context.studies or STUDIES)
    if not studies or any(s not in STUDIES for s in studies):
        raise ConfigError(f"expected some of {list(STUDIES)}, not {studies}", key="studies")
    experiments = Path(context.experiments_dir) if context.experiments_dir else default_experiments_dir()
    base = (experiments / CONFIG).resolve()
    output = Path(context.output).resolve()
    folder = output / "traces"
    folder.mkdir(parents=True, exist_ok=True)
    seeds = list(range(FIRST_SEED, FIRST_SEED + (context.seeds or DEFAULT_SEEDS)))
    chosen = cases(studies, quick)
    tag = "-".join(f"{name}-{_trace_tag(path)}" for name, path in sorted(given.items()))

    runs = _Runs()
    trace_paths: Dict[Tuple[str, int], Path] = {}
    skipped = ran = failed = 0
    errors: List[str] = []
    # Three sweeps per seed: the trace runs of the schemes that re-sync, whose log drive fails
    # after the replay (the failure in the sweep's [set]); the Fig. 9 runs, whose data drive
    # fails; and every other run. md's schemes have nothing to re-sync (and PPL no log drive to
    # fail: a config error), so their trace runs are among the others.
    failure = {"failures": [{"kind": "log_fails", "at_s": duration_s + LOG_FAILS_AFTER_S}]}
    set_keys: Dict[str, Dict[str, Any]] = {
        "runs": {}, "resync": failure,
        "recovery": {"failures": [{"drive": 0, "at_s": duration_s + DATA_FAILS_AFTER_S}], "array.spares": 1,
                     "rebuild": RECOVERY_REBUILD}}
    for seed in seeds:
        context.report_progress(f"swo traces, seed {seed}", 0, 1)
        groups: Dict[str, Tuple[List[Dict[str, Any]], List[Case]]] = {"runs": ([], []), "resync": ([], []),
                                                                      "recovery": ([], [])}
        for case in chosen:
            if case.study == "traces":
                path = given.get(case.workload) or _financial_trace(folder, case.workload, duration_s, seed)
                trace_paths[(case.workload, seed)] = path
            else:
                path = _iometer_trace(folder, case.workload, case.size_kib, requests, seed)
            group = "resync" if case.study == "traces" and case.scheme in LOG_SCHEMES else "runs"
            keys = _case_keys(case, path, duration_s, requests, case.workload in given)
            groups[group][0].append(keys)
            groups[group][1].append(case)
            if case.study == "traces" and case.chunk_kib == PAPER_CHUNK_KIB:
                # Fig. 9: the same hour, then a data drive fails and is rebuilt through the log.
                groups["recovery"][0].append(dict(keys, **{"content.check": False}))
                groups["recovery"][1].append(case)
        context.report_progress(f"swo traces, seed {seed}", 1, 1)
        for group, (points, seen) in groups.items():
            if not points:
                continue
            name = f"{group}-seed{seed}" + (f"-{tag}" if tag else "")
            spec = load_sweep_spec(output / f"swo-{name}.toml",
                                   text=_spec_text(base, f"swo-{name}", seed, set_keys[group], points))
            outcome = context.run_sweep(f"swo {group}, seed {seed}", spec, output / name)
            skipped, ran = skipped + outcome.skipped, ran + outcome.ran
            for _, row in outcome.table.iterrows():
                case = seen[int(row["case"])]
                if row["status"] != "done":
                    failed += 1
                    errors.append(f"{case}: {row.get('error')}")
                    continue
                if group == "recovery":
                    runs.add(case, seed, {"recovery_s": _float(row.get("rebuild_time_s"))})
                else:
                    runs.add(case, seed, _metrics(row, case))

    report = PaperReport(name="swo", title="")
    report.facts.append(
        f"{len(chosen) * len(seeds)} run(s): {len(chosen)} case(s) × {len(seeds)} seed(s) ({', '.join(map(str, seeds))})"
        f"{' (quick grid)' if quick else ''}, and the 512 KiB trace cases once more for Fig. 9; {skipped} already "
        f"done, {ran} run now; sweep directories {output}/{{runs,resync,recovery}}-seed*")
    report.facts.append(
        "array: 7 × hc550 (7,200 rpm, standing in for the Seagate ST31000340NS) limited to 10 GiB each, RAID-5, "
        "a 60 GiB volume; log-assisted schemes add an eighth drive with a 10 GB log, re-sync at 80 % full, 4 KiB "
        "rows; md's journal a 10 GB ring on an eighth drive of the same model; md's PPL no eighth drive, its area "
        "(a 4 KiB header and the larger of 128 KiB and a chunk) beyond the 10 GiB of every member; FCFS queues; "
        "content checks on in the trace runs (off in the IOmeter-like runs: no simulated time changes, and it made "
        "them 20 times slower)")
    if "traces" in studies:
        source = ", ".join(f"{TRACE_LABELS[n]}: {given[n]}" for n in TRACES if n in given)
        report.facts.append(
            f"traces: {duration_s:g} s of each, replayed open loop at its timestamps"
            + (f"; given traces ({source}), folded onto the volume" if source else "")
            + (f"; look-alikes (raidlab.synth, seed = run seed) for {', '.join(TRACE_LABELS[n] for n in TRACES if n not in given)}"
               if len(given) < len(TRACES) else "")
            + f"; chunks {' and '.join(f'{c} KiB' for c in TRACE_CHUNKS_KIB)}; the log drive fails "
              f"{LOG_FAILS_AFTER_S:g} s after the replay's end (Fig. 10's re-sync, offline; not under md's schemes, "
              f"which have nothing to re-sync); for Fig. 9, data drive 0 fails {DATA_FAILS_AFTER_S:g} s after it and "
              "is rebuilt onto a hot spare through the log (plainly under RAID5 and md's schemes), offline (stripe "
              "order, 16 units of 64 KiB in flight, content checks off)")
    if "iometer" in studies:
        sizes = QUICK["sizes"] if quick else IOMETER_SIZES_KIB
        depths = QUICK["depths"] if quick else IOMETER_DEPTHS
        report.facts.append(
            f"IOmeter-like runs: {requests:,} writes each, closed loop, {' and '.join(f'{s} KiB' for s in sizes)} "
            f"aligned to their size, {' and '.join(str(d) for d in depths)} outstanding; random over the volume or "
            "sequential from its start")
    if failed:
        report.error = f"{failed} run(s) failed: " + "; ".join(errors[:5])
    checks = _checks(runs, chosen)
    report.facts.extend(checks)
    bad = [c for c in chosen for name in ("recovery_wrong", "stale_reads") for v in runs.seeds(c, name).values() if v > 0]
    if bad and report.error is None:
        report.error = f"the content check failed in {len(bad)} run(s): {sorted(set(map(str, bad)))[:3]}"

    if "traces" in studies:
        report.tables.append(_trace_table(trace_paths, given, duration_s, seeds))
        report.tables.append(_table2(runs, seeds, trace_paths, duration_s))
        report.tables.append(_responses_table(runs, seeds))
        report.tables.append(_fig8_table(runs))
        report.tables.append(_fig10_table(runs))
        report.tables.append(_fig11_table(runs))
        report.tables.append(_fig9_table(runs))
    if "iometer" in studies:
        report.tables.append(_iometer_responses(runs, chosen))
        report.tables.append(_fig6_table(runs, chosen))
        report.tables.append(_fig7_table(runs, chosen))
    if any(c.scheme in MD_SCHEMES for c in chosen):
        report.tables.append(_md_table(runs, chosen))
    report.tables.append(_claims_table(runs, chosen, trace_paths, duration_s, seeds, given))
    for path, caption in _figures(runs, chosen, output):
        report.figures.append(ReportFigure(path, caption))
    return report


# ---------------------------------------------------------------------------------------------
# Checks and tables
# ---------------------------------------------------------------------------------------------


def _checks(runs: _Runs, chosen: Sequence[Case]) -> List[str]:
    """Facts every run must satisfy, stated with their numbers: every request completed,
    no stale read, every logged row recovered right, the proven pre-read identities, md's
    pre-reads equal to RAID-5's, and one volume for every scheme."""
    facts = []
    log_cases = [c for c in chosen if c.scheme in LOG_SCHEMES and runs.has(c)]
    checked_cases = [c for c in log_cases if c.study == "traces"]
    checked = sum(v for c in checked_cases for v in runs.seeds(c, "recovery_checked").values() if not math.isnan(v))
    wrong = sum(v for c in checked_cases for v in runs.seeds(c, "recovery_wrong").values() if not math.isnan(v))
    stale = sum(v for c in chosen if c.study == "traces" for v in runs.seeds(c, "stale_reads").values()
                if not math.isnan(v))
    facts.append(f"content checks (trace runs): {stale:,.0f} stale read(s); recovery of every row written, through "
                 f"the log (Fig. 5's rule), in the {sum(len(runs.seeds(c, 'recovery_checked')) for c in checked_cases)} "
                 f"log-assisted trace runs: {checked:,.0f} sectors checked, {wrong:,.0f} wrong")
    full = sum(v for c in log_cases for v in runs.seeds(c, "log_full_rows").values() if not math.isnan(v))
    threshold = sum(1 for c in log_cases for s, v in runs.seeds(c, "resyncs").items()
                    if v > (1 if c.study == "traces" else 0))
    peak = max((v for c in log_cases for v in runs.seeds(c, "peak_log_gb").values() if not math.isnan(v)),
               default=math.nan)
    facts.append(f"the log: at most {number_text(peak, 2)} GB in use (re-sync threshold 8 GB); {threshold} run(s) "
                 f"re-synchronized at the threshold; {full:,.0f} row(s) written as plain RAID-5 for a full log")
    pairs = [("RAID5L_S", "RAID5L"), ("RAID5L_O", "SWO")]
    same = total = 0
    for case in log_cases:
        for left, right in pairs:
            if case.scheme == left:
                twin = case._replace(scheme=right)
                for seed, value in runs.seeds(case, "pre_reads").items():
                    other = runs.seeds(twin, "pre_reads").get(seed)
                    if other is not None:
                        total += 1
                        same += value == other
    facts.append(f"identities (notes A.8): RAID5L_S's pre-reads equal RAID5L's and RAID5L_O's equal SWO's in "
                 f"{same} of {total} run pairs")
    md_cases = [c for c in chosen if c.scheme in MD_SCHEMES and runs.has(c)]
    if md_cases:
        # md plans every write as plain RAID-5, so its pre-reads must be RAID-5's to the sector.
        same = total = 0
        for case in md_cases:
            plain = runs.seeds(case._replace(scheme="RAID5"), "pre_reads")
            for seed, value in runs.seeds(case, "pre_reads").items():
                if seed in plain:
                    total += 1
                    same += value == plain[seed]
        md_checked = [c for c in md_cases if c.study == "traces"]
        checked = sum(v for c in md_checked for v in runs.seeds(c, "recovery_checked").values() if not math.isnan(v))
        wrong = sum(v for c in md_checked for v in runs.seeds(c, "recovery_wrong").values() if not math.isnan(v))
        unprotected = sum(v for c in md_cases for v in runs.seeds(c, "unprotected_writes").values()
                          if not math.isnan(v))
        facts.append(f"md's journal and PPL (parity current on every write, nothing to re-sync): pre-reads equal "
                     f"RAID5's in {same} of {total} run pairs; every row written recovered plainly at the end of the "
                     f"{sum(len(runs.seeds(c, 'recovery_checked')) for c in md_checked)} trace runs: {checked:,.0f} "
                     f"sectors checked, {wrong:,.0f} wrong; {unprotected:,.0f} write(s) left without a log")
    volumes = {v for c in chosen for v in runs.seeds(c, "volume_bytes").values() if not math.isnan(v)}
    facts.append("every run's volume: " + ", ".join(f"{v / 2**30:,.4f} GiB" for v in sorted(volumes))
                 + (" (the same for every scheme)" if len(volumes) == 1 else " (NOT the same for every scheme)"))
    return facts


def _trace_table(paths: Mapping[Tuple[str, int], Path], given: Mapping[str, Path], duration_s: float,
                 seeds: Sequence[int]) -> ReportTable:
    from raidlab import synth

    rows = []
    for trace in TRACES:
        profile = synth.OLTP_PROFILES[trace]
        facts = [_trace_facts(paths[(trace, seed)], duration_s) for seed in seeds if (trace, seed) in paths]
        if trace in given:
            facts = facts[:1]
        if not facts:
            continue
        mean = {key: math.fsum(f[key] for f in facts) / len(facts) for key in facts[0]}
        source = f"given: {given[trace].name}" if trace in given else f"look-alike, {len(facts)} seed(s)"
        rows.append([TRACE_LABELS[trace], source, f"{profile.write_fraction * 100:.1f} %",
                     number_text(mean["write_fraction"] * 100, 2, " %"), f"{profile.mean_size_kb:g} KB",
                     number_text(mean["mean_size_kb"], 3, " KiB"), f"{profile.iops:g}", number_text(mean["iops"], 2),
                     f"{mean['requests']:,.0f}", number_text(mean["rewrite_share"] * 100, 1, " %"),
                     number_text(mean["written_gib"], 2, " GiB")])
    return ReportTable(
        f"Table I: the traces' characteristics, published and measured on what was replayed (first {duration_s:g} s)",
        ["trace", "source", "paper: writes", "raidlab: writes", "paper: mean size", "raidlab: mean size",
         "paper: IOPS", "raidlab: IOPS", "requests", "rewrites", "blocks written"], rows, numeric_from=2,
        note="Measured on the replayed files (mean over seeds for the look-alikes). \"Rewrites\": the share of 4 KiB "
             "block writes that rewrite a block already written in the replayed time; \"blocks written\": how much "
             "distinct data the writes cover. The look-alikes' locality (80 % of requests in hot regions holding 2 % "
             "of the volume) is raidlab's choice (docs/traces.md), the same for both traces: Table II's text says "
             "Financial2 has \"more workload locality\", which no published number quantifies.")


def _table2(runs: _Runs, seeds: Sequence[int], trace_paths: Mapping[Tuple[str, int], Path],
            duration_s: float) -> ReportTable:
    rows = []
    for trace in TRACES:
        for chunk in TRACE_CHUNKS_KIB:
            swo = Case(trace, "SWO", chunk)
            paths = list(dict.fromkeys(trace_paths[(trace, seed)] for seed in seeds if (trace, seed) in trace_paths))
            pages = [md_raid5_pages(path, chunk, duration_s) for path in paths]
            for scheme in SCHEMES:
                case = Case(trace, scheme, chunk)
                if not runs.has(case):
                    continue
                paper = TABLE2[trace].get(scheme, math.nan) if chunk == PAPER_CHUNK_KIB else math.nan
                ours = runs.mean(case, "pre_reads")
                cut = runs.reduction(swo, case, "pre_reads") if scheme != "SWO" else {}
                printed = TABLE2_IMPROVED[trace].get(scheme, math.nan) if chunk == PAPER_CHUNK_KIB else math.nan
                computed = 100 * (TABLE2[trace][scheme] - TABLE2[trace]["SWO"]) / TABLE2[trace][scheme] \
                    if chunk == PAPER_CHUNK_KIB and scheme in TABLE2[trace] and scheme != "SWO" else math.nan
                plain = scheme == "RAID5" or scheme in MD_SCHEMES
                model = math.fsum(pages) / len(pages) if plain and pages else math.nan
                rows.append([TRACE_LABELS[trace], f"{chunk} KiB", SCHEME_NAMES[scheme],
                             number_text(paper, 2), number_text(ours, 3), _per_seed(runs.seeds(case, "pre_reads"), 3),
                             number_text(model, 3), number_text(runs.mean(case, "merge_reads"), 3),
                             number_text(ours + runs.mean(case, "merge_reads"), 3),
                             number_text(runs.mean(case, "lookups"), 2),
                             number_text(printed, 2, " %") + (" *" if trace == "financial2" and math.isfinite(printed)
                                                               and printed else ""),
                             number_text(computed, 2, " %"), number_text(_mean(cut), 2, " %") if cut else "—"])
    return ReportTable(
        "Table II: average pre-read data blocks per write request (512 KiB: the paper's chunk; 4 KiB beside it)",
        ["trace", "chunk", "scheme", "paper", "raidlab", "raidlab per seed", "md's 4 KiB pages (model)",
         "merge reads / write", "all reads / write",
         "look-ups / write", "SWO improved by: paper printed", "paper, from its values", "raidlab"], rows,
        numeric_from=3,
        note="raidlab's count is the scheme's pre-read data blocks per write request (log.pre_read_blocks_per_write_"
             "request); for RAID5, its pre-read sectors / 8 per write request, the parity's pre-reads included "
             "(raidlab's plain RAID-5 reads the sectors a write covers, not whole 4 KiB pages, so a write under 4 KiB "
             "counts less than one block); \"md's 4 KiB pages\" is the same count in whole pages, as Linux md reads them, computed "
             "from the trace by md's rule (notes A.2; swo.md_raid5_pages), not simulated. Merge reads (blocks a write covers in part, read before their record is "
             "logged) are counted apart; \"all reads\" is the two together, what the data drives read before a write. "
             "* Table II's Financial2 percentages do not follow from its own values "
             "(68.75 / 54.86 / 25.29 % computed, 61.17 / 35.96 / 16.09 % printed; notes A.15): compare the block "
             "counts. With 512 KiB chunks a small write updates one block per 4 KiB row, so RAID5L decides as Data "
             "Logging does (notes A.17). md's journal and PPL (beyond the paper: no published count) plan every write "
             "as plain RAID-5, so they are counted as RAID5 is, and pre-read what it does.")


def _responses_table(runs: _Runs, seeds: Sequence[int]) -> ReportTable:
    rows = []
    for trace in TRACES:
        for chunk in TRACE_CHUNKS_KIB:
            for scheme in SCHEMES:
                case = Case(trace, scheme, chunk)
                if not runs.has(case):
                    continue
                raid5 = runs.mean(Case(trace, "RAID5", chunk), "response")
                rows.append([TRACE_LABELS[trace], f"{chunk} KiB", SCHEME_NAMES[scheme],
                             number_text(runs.mean(case, "response"), 2, " ms"),
                             _per_seed(runs.seeds(case, "response"), 2),
                             number_text(runs.mean(case, "response") / raid5, 3) if raid5 else "—",
                             number_text(runs.mean(case, "write_response"), 2, " ms"),
                             number_text(runs.mean(case, "read_response"), 2, " ms"),
                             number_text(runs.mean(case, "resync_s"), 1, " s")])
    return ReportTable(
        "Fig. 8 and Fig. 10, raidlab's runs: mean response time per scheme, and the re-sync after the log drive fails",
        ["trace", "chunk", "scheme", "mean response", "per seed (ms)", "over RAID5", "writes", "reads",
         "re-sync time"], rows, numeric_from=3,
        note="Means over seeds of every request of the replayed time; the re-sync starts when the log drive fails, "
             f"{LOG_FAILS_AFTER_S:g} s after the replay's end, and runs with no user I/O; md's schemes keep the "
             "parity current and have none. The paper's Fig. 8 relative values (derived from its reductions, notes "
             "A.15): Financial1 SWO 0.299, DL 0.567, RAID5L 0.449; Financial2 SWO 0.582, DL 0.776, RAID5L 0.692; "
             "the paper has no md scheme.")


def _reduction_rows(runs: _Runs, published: Mapping[str, Mapping[str, float]], metric: str,
                    chunks: Sequence[int]) -> List[List[str]]:
    rows = []
    for trace in TRACES:
        for chunk in chunks:
            swo = Case(trace, "SWO", chunk)
            for versus, paper in published[trace].items():
                other = Case(trace, versus, chunk)
                if not (runs.has(swo) and runs.has(other)):
                    continue
                cut = runs.reduction(swo, other, metric)
                shown = paper if chunk == PAPER_CHUNK_KIB else math.nan
                rows.append([TRACE_LABELS[trace], f"{chunk} KiB", f"SWO vs {SCHEME_NAMES[versus]}",
                             number_text(shown, 2, " %"), number_text(_mean(cut), 2, " %"), _per_seed(cut, 2),
                             _points(_mean(cut), shown)])
    return rows


def _fig8_table(runs: _Runs) -> ReportTable:
    return ReportTable(
        "Fig. 8: SWO's reduction of the mean response time on the traces",
        ["trace", "chunk", "comparison", "paper", "raidlab", "raidlab per seed (%)", "difference"],
        _reduction_rows(runs, FIG8, "response", TRACE_CHUNKS_KIB), numeric_from=3,
        note="Reduction = (other − SWO) / other of the mean response time, per seed, then the mean over seeds. The "
             "paper's numbers are for 512 KB chunks; 4 KiB rows are raidlab's alone.")


def _fig10_table(runs: _Runs) -> ReportTable:
    rows = _reduction_rows(runs, FIG10, "resync_s", TRACE_CHUNKS_KIB)
    return ReportTable(
        "Fig. 10: SWO's reduction of the re-sync time after the log drive fails",
        ["trace", "chunk", "comparison", "paper", "raidlab", "raidlab per seed (%)", "difference"], rows,
        numeric_from=3,
        note="The re-sync (§III-D) reads every data block of each logged 4 KiB row from the data drives and writes "
             "its parity; it never reads the log (which has failed here). Its work is the set of logged rows, which "
             "the same trace makes the same for every scheme (every row written is logged); index look-ups cost no "
             "simulated time (the paper gives no cost). So raidlab predicts equal times (notes A.11), and the paper's "
             "explanation of Fig. 10 by log-disk reads contradicts its own §III-D. md's journal and PPL are left out: "
             "they keep the parity current, so a lost journal drive leaves nothing to re-sync (the array goes on "
             "without its journal), and PPL has no log drive.")


def _fig11_table(runs: _Runs) -> ReportTable:
    rows = []
    for (trace, scheme), (response, recovery, resync) in FIG11.items():
        for chunk in TRACE_CHUNKS_KIB:
            case, base = Case(trace, scheme, chunk), Case(trace, "RAID5L", chunk)
            if not (runs.has(case) and runs.has(base)):
                continue
            shown = chunk == PAPER_CHUNK_KIB
            for label, paper, metric in (("mean response time", response, "response"),
                                         ("reconstruction time (Fig. 9's experiment)", recovery, "recovery_s"),
                                         ("re-sync time", resync, "resync_s")):
                if metric == "recovery_s" and not runs.seeds(case, metric):
                    rows.append([TRACE_LABELS[trace], f"{chunk} KiB", scheme, label,
                                 number_text(paper if shown else math.nan, 2, " %"), "not run at this chunk", "—", "—"])
                    continue
                cut = runs.reduction(case, base, metric)
                rows.append([TRACE_LABELS[trace], f"{chunk} KiB", scheme, label,
                             number_text(paper if shown else math.nan, 2, " %"), number_text(_mean(cut), 2, " %"),
                             _per_seed(cut, 2), _points(_mean(cut), paper if shown else math.nan)])
    return ReportTable(
        "Fig. 11: RAID5L_S's and RAID5L_O's reductions of RAID5L's times",
        ["trace", "chunk", "scheme", "metric", "paper (\"up to\")", "raidlab", "raidlab per seed (%)", "difference"],
        rows, numeric_from=4,
        note="RAID5L_S decides and pre-reads as RAID5L and differs only in its index (one look-up per row), whose "
             "cost raidlab does not simulate: its times equal RAID5L's. RAID5L_O decides and pre-reads as SWO. md's "
             "schemes have no place here (no re-sync, and no records to rebuild through).")


def _fig9_table(runs: _Runs) -> ReportTable:
    """Fig. 9: each scheme's recovery time after a data drive fails, and SWO's reductions."""
    rows = []
    for trace in TRACES:
        times = {scheme: runs.mean(Case(trace, scheme, PAPER_CHUNK_KIB), "recovery_s") for scheme in SCHEMES}
        rows.append([TRACE_LABELS[trace], "recovery time, s: " + " / ".join(SCHEMES), "—",
                     " / ".join(number_text(times[s], 1) for s in SCHEMES), "—", "—"])
        for versus, paper in FIG9[trace].items():
            cut = runs.reduction(Case(trace, "SWO", PAPER_CHUNK_KIB), Case(trace, versus, PAPER_CHUNK_KIB), "recovery_s")
            rows.append([TRACE_LABELS[trace], f"SWO vs {SCHEME_NAMES[versus]}", number_text(paper, 2, " %"),
                         number_text(_mean(cut), 2, " %"), _per_seed(cut, 2), _points(_mean(cut), paper)])
    return ReportTable(
        "Fig. 9: recovery time after a data drive fails, and SWO's reduction of it (512 KiB)",
        ["trace", "comparison", "paper", "raidlab", "raidlab per seed (%)", "difference"], rows, numeric_from=2,
        note="After the hour of trace, data drive 0 fails and is rebuilt onto a hot spare with no user I/O (notes A.12: "
             "offline). Each logged row's lost block comes from the log by Fig. 5 (its newest record; or the stale "
             "parity, the logged survivors' old values from the log and the other survivors), every other row from "
             "the six survivors; the log drive is one more source of the rebuild. RAID5 and md's journal and PPL "
             "(beyond the paper) rebuild plainly from the six survivors: md's parity is current, and its logs hold "
             "nothing a rebuild needs once their writes are done. The paper says RAID5's time is "
             "about the same for both traces and every log-assisted scheme recovers more slowly than RAID5 (log-disk "
             "bottleneck); its numbers imply RAID5 < SWO < DL < RAID5L (notes A.15).")


def _iometer_combinations(chosen: Sequence[Case]) -> List[Tuple[str, int, int]]:
    return list(dict.fromkeys(_iometer_key(c) for c in chosen if c.study == "iometer"))


def _combination_text(key: Tuple[str, int, int]) -> str:
    pattern, size, depth = key
    return f"{pattern}, {size} KiB, {depth} outstanding"


def _iometer_responses(runs: _Runs, chosen: Sequence[Case]) -> ReportTable:
    rows = []
    for key in _iometer_combinations(chosen):
        pattern, size, depth = key
        values = [runs.mean(Case(pattern, s, PAPER_CHUNK_KIB, size, depth), "response") for s in SCHEMES]
        pre = [runs.mean(Case(pattern, s, PAPER_CHUNK_KIB, size, depth), "pre_reads") for s in SCHEMES]
        rows.append([_combination_text(key), *(f"{number_text(v, 2)} ({number_text(p, 2)})" for v, p in zip(values, pre))])
    return ReportTable(
        "Fig. 6, raidlab's runs: IOmeter-like writes at 512 KiB chunks, mean response time (ms) and, in "
        "parentheses, pre-read blocks per write", ["workload", *(SCHEME_NAMES[s] for s in SCHEMES)], rows,
        numeric_from=1,
        note="Mean over seeds. Request size, outstanding I/Os and run length are raidlab's choices (the paper gives "
             "none). RAID5's pre-reads include the parity's, as do md's (planned as RAID5's).")


def _fig6_table(runs: _Runs, chosen: Sequence[Case]) -> ReportTable:
    rows = []
    for key in _iometer_combinations(chosen):
        pattern, size, depth = key
        swo = Case(pattern, "SWO", PAPER_CHUNK_KIB, size, depth)
        for versus, paper in FIG6[pattern].items():
            cut = runs.reduction(swo, swo._replace(scheme=versus))
            rows.append([_combination_text(key), f"SWO vs {SCHEME_NAMES[versus]}", number_text(paper, 2, " %"),
                         number_text(_mean(cut), 2, " %"), _per_seed(cut, 2), _points(_mean(cut), paper)])
    return ReportTable(
        "Fig. 6: SWO's reduction of the mean response time, IOmeter-like writes, 512 KiB chunks",
        ["workload", "comparison", "paper", "raidlab", "raidlab per seed (%)", "difference"], rows, numeric_from=2,
        note="The paper's figure is one number per pattern; its request size and queue depth are unknown, so each "
             "of raidlab's combinations is set beside it.")


def _fig7_table(runs: _Runs, chosen: Sequence[Case]) -> ReportTable:
    rows = []
    for key in _iometer_combinations(chosen):
        pattern, size, depth = key
        for index, chunk in enumerate(CHUNKS_KIB):
            swo = Case(pattern, "SWO", chunk, size, depth)
            raid5 = swo._replace(scheme="RAID5")
            if not (runs.has(swo) and runs.has(raid5)):
                continue
            cut = runs.reduction(swo, raid5)
            paper = FIG7[pattern][index]
            rows.append([_combination_text(key), f"{chunk} KiB", number_text(paper, 2, " %"),
                         number_text(_mean(cut), 2, " %"), _points(_mean(cut), paper),
                         number_text(runs.mean(raid5, "response"), 2, " ms"),
                         number_text(runs.mean(swo, "response"), 2, " ms"),
                         number_text(runs.mean(raid5, "pre_reads"), 2), number_text(runs.mean(swo, "pre_reads"), 2)])
    return ReportTable(
        "Fig. 7: SWO's reduction of RAID5's mean response time against the chunk size",
        ["workload", "chunk", "paper", "raidlab", "difference", "RAID5", "SWO", "RAID5 pre-reads / write",
         "SWO pre-reads / write"], rows, numeric_from=2,
        note="The paper names the first, third and fifth chunk sizes (4, 64 and 512 KB); 16 and 256 KiB are the "
             "notes' reading of the other two. Mean over seeds.")


def _md_table(runs: _Runs, chosen: Sequence[Case]) -> ReportTable:
    """md's journal and PPL against plain RAID-5 on every workload both ran: what closing the
    write hole costs, and how much each logs per write."""
    workloads = [(TRACE_LABELS[trace], Case(trace, "RAID5", chunk)) for trace in TRACES for chunk in TRACE_CHUNKS_KIB]
    workloads += [(_combination_text(key), Case(key[0], "RAID5", PAPER_CHUNK_KIB, key[1], key[2]))
                  for key in _iometer_combinations(chosen)]
    rows = []
    for label, raid5 in workloads:
        for scheme in MD_SCHEMES:
            case = raid5._replace(scheme=scheme)
            if not (runs.has(case) and runs.has(raid5)):
                continue
            rows.append([label, f"{case.chunk_kib} KiB", SCHEME_NAMES[scheme],
                         number_text(runs.mean(case, "response"), 2, " ms"),
                         number_text(runs.mean(case, "response") / runs.mean(raid5, "response"), 3),
                         number_text(runs.mean(case, "write_response"), 2, " ms"),
                         number_text(runs.mean(case, "write_response") / runs.mean(raid5, "write_response"), 3),
                         number_text(runs.mean(case, "md_log_bytes_per_write") / 1024, 2, " KiB"),
                         number_text(runs.mean(case, "unprotected_writes"), 0)])
    return ReportTable(
        "md's journal and PPL (beyond the paper): mean response time against RAID5's, and bytes logged per write",
        ["workload", "chunk", "scheme", "mean response", "over RAID5", "writes", "writes over RAID5",
         "logged / write", "writes without a log"], rows, numeric_from=3,
        note="Mean over seeds; the paper has no md scheme, so there is nothing to compare with. Both follow md's rules "
             "(docs/log.md): a write is planned as plain RAID-5, and its log write is a phase of its own before the "
             "home writes. The journal (write-through) logs a 4 KiB header and every data and parity range the write "
             "writes home, on an eighth drive of the same model; PPL logs a 4 KiB header and the partial parity, on "
             "the stripe's parity drive. raidlab does not serialize PPL's I/O units (md keeps one in flight per "
             "member), so PPL's cost here is a lower bound; nor does a write wait for room in a full log, as md's "
             "does: it goes without a log (\"writes without a log\"), which lowers the bound further. \"Logged / "
             "write\" is the core's md_log_bytes_per_write: per stripe piece written (a request crossing a stripe "
             "boundary is logged once per stripe).")


# ---------------------------------------------------------------------------------------------
# The paper's qualitative claims (notes A.16)
# ---------------------------------------------------------------------------------------------


def _verdict(good: int, total: int) -> str:
    return "—" if not total else "yes" if good == total else "no" if good == 0 else "in part"


def _claims_table(runs: _Runs, chosen: Sequence[Case], trace_paths: Mapping[Tuple[str, int], Path],
                  duration_s: float, seeds: Sequence[int], given: Mapping[str, Path]) -> ReportTable:
    rows: List[List[str]] = []

    def add(source: str, claim: str, text: str, good: int, total: int) -> None:
        rows.append([source, claim, text if total else "no runs", _verdict(good, total)])

    # The points where every scheme ran at the paper's chunk: IOmeter combinations and traces.
    points = [(key, Case(key[0], "SWO", PAPER_CHUNK_KIB, key[1], key[2])) for key in _iometer_combinations(chosen)]
    points += [((trace,), Case(trace, "SWO", PAPER_CHUNK_KIB)) for trace in TRACES
               if runs.has(Case(trace, "SWO", PAPER_CHUNK_KIB))]

    def label(key: Tuple) -> str:
        return TRACE_LABELS[key[0]] if len(key) == 1 else _combination_text(key)

    def r(case: Case, scheme: str, metric: str = "response") -> float:
        return runs.mean(case._replace(scheme=scheme), metric)

    good, total, worst = 0, 0, ""
    for key, swo in points:
        for scheme in ("DL", "RAID5L", "SWO"):
            total += 1
            ok = r(swo, scheme) < r(swo, "RAID5")
            good += ok
            if not ok:
                worst += f"{scheme} {number_text(r(swo, scheme), 2)} ≥ RAID5 {number_text(r(swo, 'RAID5'), 2)} ms " \
                         f"({label(key)}); "
    add("§IV-B-1", "log-assisted schemes (DL, RAID5L, SWO) respond faster than RAID5 (512 KiB chunks)",
        f"{good} of {total} (scheme, workload) pairs" + (f"; not: {worst.rstrip('; ')}" if worst else ""), good, total)

    for versus in ("SWO", "RAID5L"):
        good, total, notes = 0, 0, []
        for key, swo in points:
            total += 1
            dl, other = r(swo, "DL"), r(swo, versus)
            good += dl > other * 1.005
            notes.append(f"{label(key)} DL {number_text(dl, 2)} / {versus} {number_text(other, 2)}")
        add("§IV-B-1", f"Data Logging is slower than {versus} (never reconstruction-write; by more than 0.5 %)",
            f"{good} of {total} workloads: " + "; ".join(notes), good, total)

    good, total, notes = 0, 0, []
    for key, swo in points:
        total += 1
        fewer = r(swo, "SWO", "pre_reads") < r(swo, "RAID5L", "pre_reads")
        faster = r(swo, "SWO") < r(swo, "RAID5L") / 1.005
        good += fewer and faster
        notes.append(f"{label(key)}: pre-reads {number_text(r(swo, 'SWO', 'pre_reads'), 3)} vs "
                     f"{number_text(r(swo, 'RAID5L', 'pre_reads'), 3)}, {number_text(r(swo, 'SWO'), 2)} vs "
                     f"{number_text(r(swo, 'RAID5L'), 2)} ms")
    add("§II-B, §IV-B-1", "SWO pre-reads fewer blocks than RAID5L and so responds faster (by more than 0.5 %)",
        f"{good} of {total}: " + "; ".join(notes), good, total)

    good, total, notes = 0, 0, []
    for key in _iometer_combinations(chosen):
        if key[0] != "sequential":
            continue
        seq = Case("sequential", "SWO", PAPER_CHUNK_KIB, key[1], key[2])
        rand = seq._replace(workload="random")
        if not (runs.has(seq) and runs.has(rand)):
            continue
        a = _mean(runs.reduction(seq, seq._replace(scheme="RAID5")))
        b = _mean(runs.reduction(rand, rand._replace(scheme="RAID5")))
        total += 1
        good += a < b
        notes.append(f"{key[1]} KiB, {key[2]} outstanding: sequential {number_text(a, 1)} %, random "
                     f"{number_text(b, 1)} %")
    add("§IV-B-1", "SWO's gain over RAID5 is smaller for sequential than for random writes (512 KiB)",
        f"{good} of {total}: " + "; ".join(notes), good, total)

    good, total, notes, best_good, best_total, best_notes = 0, 0, [], 0, 0, []
    for key in _iometer_combinations(chosen):
        pattern, size, depth = key
        cuts, times = {}, {}
        for chunk in CHUNKS_KIB:
            swo = Case(pattern, "SWO", chunk, size, depth)
            if runs.has(swo) and runs.has(swo._replace(scheme="RAID5")):
                cuts[chunk] = _mean(runs.reduction(swo, swo._replace(scheme="RAID5")))
                times[chunk] = runs.mean(swo, "response")
        if len(cuts) < 2:
            continue
        total += 1
        highest = max(cuts, key=cuts.get)
        good += highest == PAPER_CHUNK_KIB
        notes.append(f"{_combination_text(key)}: highest at {highest} KiB ({number_text(cuts[highest], 1)} %)")
        if pattern == "random" and 64 in times:
            best_total += 1
            fastest = min(times, key=times.get)
            best_good += fastest == 64
            best_notes.append(f"{_combination_text(key)}: fastest at {fastest} KiB ({number_text(times[fastest], 2)} ms)")
    add("Fig. 7", "SWO's gain over RAID5 is highest at 512 KB chunks", f"{good} of {total}: " + "; ".join(notes),
        good, total)
    add("Fig. 7", "SWO's random writes are fastest at 64 KB chunks", f"{best_good} of {best_total}: "
        + "; ".join(best_notes), best_good, best_total)

    good, total, notes = 0, 0, []
    for chunk in TRACE_CHUNKS_KIB:
        for versus in ("RAID5", "DL", "RAID5L"):
            one, two = Case("financial1", "SWO", chunk), Case("financial2", "SWO", chunk)
            if not all(runs.has(c) and runs.has(c._replace(scheme=versus)) for c in (one, two)):
                continue
            a = _mean(runs.reduction(one, one._replace(scheme=versus)))
            b = _mean(runs.reduction(two, two._replace(scheme=versus)))
            total += 1
            good += b < a
            notes.append(f"{chunk} KiB vs {versus}: F1 {number_text(a, 1)} %, F2 {number_text(b, 1)} %")
    add("§IV-B-2", "SWO's gains are smaller on Financial2 (lower write share)", f"{good} of {total}: "
        + "; ".join(notes), good, total)

    good, total, notes = 0, 0, []
    for trace in TRACES:
        for chunk in TRACE_CHUNKS_KIB:
            swo = Case(trace, "SWO", chunk)
            if not runs.has(swo):
                continue
            value = {s: r(swo, s, "pre_reads") for s in ("RAID5", "DL", "RAID5L", "SWO")}
            total += 1
            good += value["RAID5"] > value["DL"] * 1.005 and value["DL"] > value["RAID5L"] * 1.005 and \
                value["RAID5L"] > value["SWO"] * 1.005
            notes.append(f"{TRACE_LABELS[trace]} {chunk} KiB: " + " / ".join(f"{number_text(v, 3)}"
                                                                          for v in value.values()))
    add("Table II", "pre-reads per write fall from RAID5 to DL to RAID5L to SWO (each by more than 0.5 %)",
        f"{good} of {total} (RAID5 / DL / RAID5L / SWO): " + "; ".join(notes), good, total)

    good, total, notes = 0, 0, []
    for trace in TRACES:
        times = {scheme: runs.mean(Case(trace, scheme, PAPER_CHUNK_KIB), "recovery_s")
                 for scheme in ("RAID5", "DL", "RAID5L", "SWO")}
        if any(math.isnan(v) for v in times.values()):
            continue
        total += 1
        slower = all(times[s] > times["RAID5"] * 1.005 for s in ("DL", "RAID5L", "SWO"))
        fastest = times["SWO"] < min(times["DL"], times["RAID5L"]) / 1.005
        good += slower and fastest
        notes.append(f"{TRACE_LABELS[trace]}: " + " / ".join(f"{number_text(v, 1)} s" for v in times.values()))
    add("Fig. 9", "every log-assisted scheme recovers more slowly than RAID5 (log-disk bottleneck); SWO fastest of them",
        f"{good} of {total} (RAID5 / DL / RAID5L / SWO): " + "; ".join(notes), good, total)

    good, total, notes = 0, 0, []
    for trace in TRACES:
        for chunk in TRACE_CHUNKS_KIB:
            swo = Case(trace, "SWO", chunk)
            if not runs.has(swo):
                continue
            total += 1
            times = {s: r(swo, s, "resync_s") for s in ("DL", "RAID5L", "SWO")}
            good += times["SWO"] < min(times["DL"], times["RAID5L"]) / 1.005
            notes.append(f"{TRACE_LABELS[trace]} {chunk} KiB: " + ", ".join(f"{s} {number_text(v, 1)} s"
                                                                          for s, v in times.items()))
    add("Fig. 10", "SWO re-synchronizes fastest (by more than 0.5 %)", f"{good} of {total}: " + "; ".join(notes),
        good, total)

    good, total, notes = 0, 0, []
    for trace in TRACES:
        for chunk in TRACE_CHUNKS_KIB:
            base = Case(trace, "RAID5L", chunk)
            if not runs.has(base):
                continue
            s = _mean(runs.reduction(base._replace(scheme="RAID5L_S"), base))
            o = _mean(runs.reduction(base._replace(scheme="RAID5L_O"), base))
            total += 1
            good += o > s + 1.0
            notes.append(f"{TRACE_LABELS[trace]} {chunk} KiB: O {number_text(o, 1)} %, S {number_text(s, 1)} %")
    add("Fig. 11", "RAID5L_O gains far more over RAID5L than RAID5L_S (response; by more than 1 point)",
        f"{good} of {total}: " + "; ".join(notes), good, total)

    good, total, notes = 0, 0, []
    for trace in TRACES:
        for chunk in TRACE_CHUNKS_KIB:
            swo = Case(trace, "SWO", chunk)
            if not runs.has(swo):
                continue
            a, b = r(swo, "SWO", "read_response"), r(swo, "RAID5", "read_response")
            total += 1
            good += a <= b * 1.05
            notes.append(f"{TRACE_LABELS[trace]} {chunk} KiB: SWO {number_text(a, 2)} ms, RAID5 {number_text(b, 2)} ms")
    add("§III-A", "SWO has no (adverse) effect on reads: its mean read response is at most 5 % above RAID5's",
        f"{good} of {total}: " + "; ".join(notes), good, total)

    shares = {}
    for trace in TRACES:
        found = [_trace_facts(trace_paths[(trace, s)], duration_s)["rewrite_share"] for s in seeds
                 if (trace, s) in trace_paths]
        if found:
            shares[trace] = math.fsum(found) / len(found)
    if len(shares) == 2:
        text = f"rewrites F1 {shares['financial1'] * 100:.1f} %, F2 {shares['financial2'] * 100:.1f} %"
        claim = "Financial2 has a more pronounced frequent-update pattern (rewrites of written blocks)"
        if set(given) == set(TRACES):
            add("Table II text", claim, f"on the given traces: {text}",
                int(shares["financial2"] > shares["financial1"]), 1)
        else:
            rows.append(["Table II text", claim, f"a property of the real traces, not testable on the look-alikes "
                         f"(the same locality by construction): {text}", "—"])
    return ReportTable("The paper's qualitative statements (notes A.16), checked on raidlab's runs",
                       ["source", "the paper says", "raidlab", "holds"], rows, numeric_from=4,
                       note="Means over seeds. The margins (0.5 %, 1 point, 5 %) are chosen here so that a tie does "
                            "not count as a win; they are not the paper's.")


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def _colour(scheme: str) -> str:
    return f"C{list(SCHEMES).index(scheme) % 10}"


def _paper_relative(trace: str) -> Dict[str, float]:
    """Fig. 8's response over RAID5 implied by the paper's reductions (notes A.15)."""
    swo = 1 - FIG8[trace]["RAID5"] / 100
    return {"RAID5": 1.0, "SWO": swo, "DL": swo / (1 - FIG8[trace]["DL"] / 100),
            "RAID5L": swo / (1 - FIG8[trace]["RAID5L"] / 100)}


def _figures(runs: _Runs, chosen: Sequence[Case], output: Path) -> List[Tuple[Path, str]]:
    from matplotlib.figure import Figure

    from raidlab.experiments.sweep_plots import save_png_and_svg

    made: List[Tuple[Path, str]] = []
    schemes = list(SCHEMES)
    trace_panels = [(t, c) for t in TRACES for c in TRACE_CHUNKS_KIB if runs.has(Case(t, "SWO", c))]
    if trace_panels:
        figure = Figure(figsize=(11, 7.5), layout="constrained")
        axes = figure.subplots(2, len(trace_panels), squeeze=False)
        for index, (trace, chunk) in enumerate(trace_panels):
            for row, (metric, ylabel) in enumerate((("response", "mean response time (ms)"),
                                                    ("pre_reads", "pre-read blocks per write"))):
                ax = axes[row][index]
                values = [runs.mean(Case(trace, s, chunk), metric) for s in schemes]
                ax.bar(range(len(schemes)), values, color=[_colour(s) for s in schemes])
                if chunk == PAPER_CHUNK_KIB:
                    if metric == "response":
                        raid5 = runs.mean(Case(trace, "RAID5", chunk), "response")
                        marks = {s: v * raid5 for s, v in _paper_relative(trace).items()}
                        label = "paper (relative to raidlab's RAID5)"
                    else:
                        marks, label = TABLE2[trace], "paper (Table II)"
                    xs = [schemes.index(s) for s in marks]
                    ax.plot(xs, list(marks.values()), "kx", markersize=9, markeredgewidth=2, label=label)
                    ax.legend(fontsize="x-small", loc="lower left", framealpha=0.9)
                ax.set_xticks(range(len(schemes)), schemes, rotation=45, fontsize="small")
                ax.set_ylabel(ylabel)
                ax.set_title(f"{TRACE_LABELS[trace]}, {chunk} KiB chunks", fontsize="medium")
        figure.suptitle("Traces (Fig. 8, Table II): mean response time and pre-reads per write, mean over seeds")
        made.append((save_png_and_svg(figure, output / "swo_traces")[0],
                     "Traces: mean response time (Fig. 8) and pre-read blocks per write (Table II) per scheme; ×: "
                     "the paper's (Fig. 8's relative values applied to raidlab's RAID5)"))

    resync = [(t, c) for t, c in trace_panels if runs.has(Case(t, "DL", c))]
    if resync:
        figure = Figure(figsize=(9, 3.8), layout="constrained")
        axes = figure.subplots(1, len(resync), squeeze=False)[0]
        logged = list(LOG_SCHEMES)
        for ax, (trace, chunk) in zip(axes, resync):
            values = [runs.mean(Case(trace, s, chunk), "resync_s") for s in logged]
            ax.bar(range(len(logged)), values, color=[_colour(s) for s in logged])
            ax.set_xticks(range(len(logged)), logged, rotation=45, fontsize="small")
            ax.set_ylabel("re-sync time (s)")
            ax.set_title(f"{TRACE_LABELS[trace]}, {chunk} KiB", fontsize="medium")
        figure.suptitle("Fig. 10: re-sync time after the log drive fails at the end of the replay")
        made.append((save_png_and_svg(figure, output / "swo_resync")[0],
                     "Fig. 10: re-sync time per log-assisted scheme, mean over seeds (the paper prints only "
                     "reductions: SWO 40.82 / 28.01 % below DL / RAID5L on Financial1, 34.66 / 21.11 % on "
                     "Financial2)"))

    combinations = _iometer_combinations(chosen)
    if combinations:
        figure = Figure(figsize=(11, 4.2 * 2), layout="constrained")
        axes = figure.subplots(2, 2, squeeze=False)
        for column, pattern in enumerate(IOMETER_PATTERNS):
            ax_cut, ax_time = axes[0][column], axes[1][column]
            for number, key in enumerate(k for k in combinations if k[0] == pattern):
                chunks, cuts, times = [], [], []
                for chunk in CHUNKS_KIB:
                    swo = Case(pattern, "SWO", chunk, key[1], key[2])
                    if runs.has(swo) and runs.has(swo._replace(scheme="RAID5")):
                        chunks.append(chunk)
                        cuts.append(_mean(runs.reduction(swo, swo._replace(scheme="RAID5"))))
                        times.append((runs.mean(swo._replace(scheme="RAID5"), "response"), runs.mean(swo, "response")))
                label = f"{key[1]} KiB, {key[2]} outstanding"
                ax_cut.plot(chunks, cuts, marker="o", color=f"C{number}", label=label)
                ax_time.plot(chunks, [t[0] for t in times], marker="s", linestyle="--", color=f"C{number}",
                             label=f"RAID5, {label}")
                ax_time.plot(chunks, [t[1] for t in times], marker="o", color=f"C{number}", label=f"SWO, {label}")
            ax_cut.plot(CHUNKS_KIB, FIG7[pattern], "kx", markersize=9, markeredgewidth=2, linestyle=":",
                        label="paper (Fig. 7)")
            ax_cut.axhline(0, color="0.6", linewidth=0.8)
            for ax in (ax_cut, ax_time):
                ax.set_xscale("log", base=2)
                ax.set_xticks(list(CHUNKS_KIB), [str(c) for c in CHUNKS_KIB])
                ax.set_xlabel("chunk (KiB)")
                ax.legend(fontsize="x-small")
            ax_cut.set_ylabel("SWO's reduction of RAID5's response (%)")
            ax_time.set_yscale("log")
            ax_time.set_ylabel("mean response time (ms, log scale)")
            ax_cut.set_title(f"{pattern} writes", fontsize="medium")
        figure.suptitle("IOmeter-like writes (Figs. 6-7): SWO against RAID5 by chunk size, mean over seeds")
        made.append((save_png_and_svg(figure, output / "swo_chunks")[0],
                     "Fig. 7: SWO's reduction of RAID5's mean response time against the chunk size (×: the paper), "
                     "and both mean response times"))
    return made
