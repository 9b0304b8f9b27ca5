"""OpenZFS dRAID against RAID-6 groups with a traditional hot spare: a 100-drive pool of 18 TB
drives (``hc550``) under a production-like load, one drive failing and rebuilt.

Runs, through the sweep machinery (so a second ``reproduce`` reuses the finished runs), two
experiments of ``experiments/draid/``:

* ``pool.toml``: 100 children as ``draid2:4d:2s``, ``draid2:8d:2s`` and ``draid2:16d:2s``,
  2,000 random 4 KiB reads per second, child 3 failing at 60 s and rebuilt onto the
  distributed spare space by the ``zfs`` discipline's ``sequential`` mode (``zpool replace
  -s``) in 1 MiB units;
* ``raid6_group.toml``: one RAID-6 group of 8 + 2 drives with one hot spare taking a tenth
  of that load (200 per second: the pool as ten such groups), rebuilt by ``zfs`` in its
  ``healing`` mode (ZFS cannot rebuild RAIDZ sequentially) and by ``md``.

Only the outermost 204.8 GB (400,000,000 sectors) of each drive is simulated (``drive.capacity_sectors``); the whole
18 TB drive's rebuild time is extrapolated from it with bounds taken from the drive's zone
table (:func:`extrapolation_ratios`). Beside them: the published anchors of
``rebuild-controls.md`` §4.2 (1.2 GB/s to the distributed spare of a 106-drive
``draid2:11d:106c`` pool, run here on an idle pool of that shape; the docs' scaling rule,
:func:`declustering_bound`) and ``layouts-and-logs.md`` §4 (the read imbalance over the
survivors, :func:`read_imbalance`), with two checks of raidlab's own: the rebuild at half
the simulated capacity (the extrapolation's linearity) and the rebuild executor's buffer
(``rebuild.buffer_units``) at 64 and 1,024 units; and the healing copy of ``draid2:8d:2s``'s
member onto a hot spare drive once the rebuild ends (``rebuild.healing``), which frees the
distributed spare. Seeds 1, 2, … (``--seeds N``, default 1).

``context.options`` scale it down (the tests): ``capacity_sectors``, ``pool_drives``,
``pool_rate_per_s``, ``layouts`` (dRAID specs) and ``checks`` (``False``: the layouts and
the zfs-rebuilt group only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from raidlab.output.report import PaperReport, ReportFigure, ReportTable, difference_text, number_text

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from raidlab.reproductions.context import Context

__all__ = [
    "PUBLISHED",
    "POOL_CONFIG",
    "GROUP_CONFIG",
    "DriveGeometry",
    "drive_geometry",
    "sequential_transfer_s",
    "extrapolation_ratios",
    "extrapolate_rebuild_s",
    "draid_shape",
    "declustering_bound",
    "mixture_quantile",
    "split_reads_and_writes",
    "read_imbalance",
    "run",
]

#: The experiments, relative to the experiments directory.
POOL_CONFIG = "draid/pool.toml"
GROUP_CONFIG = "draid/raid6_group.toml"
FIRST_SEED = 1
DEFAULT_SEEDS = 1

#: The dRAID vdevs the pool is run as (raidlab's choice of D; P = 2 and S = 2 throughout).
DEFAULT_LAYOUTS = ("draid2:4d:2s", "draid2:8d:2s", "draid2:16d:2s")
#: The pool's children and load, and the simulated region of each drive (204.8 GB).
DEFAULT_POOL_DRIVES = 100
DEFAULT_POOL_RATE_PER_S = 2000.0
DEFAULT_CAPACITY_SECTORS = 400_000_000
#: The RAID-6 group: 8 data + 2 parity drives (``raid6_group.toml``).
GROUP_DRIVES = 10
#: The anchor's pool (rebuild-controls.md §4.2): 106 children, D = 11, P = 2. Its spare count
#: is not in the quoted spec; 2 is raidlab's choice, as in the other runs.
ANCHOR_DRAID = "draid2:11d:2s"
ANCHOR_DRIVES = 106
#: "Idle": one request per 100 s, so that the run has a workload and the rebuild the drives.
IDLE_RATE_PER_S = 0.01
#: The rebuild executor's buffer tried beside raidlab's default (64 units).
LARGE_BUFFER_UNITS = 1024
#: The pool's RAID-6 groups: the rebuilding one is 1 in this many.
GROUPS_IN_POOL = 10

#: Published figures: name -> (value, source).
PUBLISHED = {
    "anchor_rate_gb_s": (1.2, "rebuild rate to the distributed spare, 106-drive draid2:11d:106c "
                              "(rebuild-controls.md §4.2, vdev_rebuild.c)"),
    "anchor_speedup": (1.2e9 / 285e6, "the same against one 285 MB/s replacement drive "
                                      "(rebuild-controls.md §4.2, computed there)"),
    "imbalance_100": (1.68, "rebuild imbalance, most / least busy child, 100 children "
                            "(layouts-and-logs.md §4, vdev_draid.c's table)"),
}

# -- the drive's geometry ---------------------------------------------------------------------


@dataclass(frozen=True)
class DriveGeometry:
    """A drive model's zones as a sequential pass sees them: ``zones`` outermost first, each
    (cylinders, sectors per track, track skew in sectors); ``surfaces``; ``rpm``."""

    zones: Tuple[Tuple[int, int, int], ...]
    surfaces: int
    rpm: float

    @property
    def sectors(self) -> int:
        """Sectors (512 B) the whole drive holds: Σ cylinders × surfaces × sectors per track."""
        return sum(cylinders * self.surfaces * spt for cylinders, spt, _ in self.zones)


def drive_geometry(config_path: Path) -> DriveGeometry:
    """The drive of the configuration at ``config_path``, as the core builds it
    (``_core.layout_facts``): its whole zone table, whatever ``drive.capacity_sectors``
    leaves of it."""
    from raidlab import _core

    facts = _core.layout_facts(config_path.read_text(encoding="utf-8"), str(config_path.parent))
    zones = tuple((z["cylinders"], z["sectors_per_track"], z["track_skew_sectors"]) for z in facts["drive_zones"])
    return DriveGeometry(zones=zones, surfaces=int(facts["drive_surfaces"]), rpm=float(facts["drive_rpm"]))


def sequential_transfer_s(sectors: float, geometry: DriveGeometry) -> float:
    """Seconds to read the drive's first ``sectors`` sectors in one sequential pass, from the
    zone table: each track costs a revolution for its own sectors plus the skew (in that
    zone's sectors) that the next track's switch costs; a partial track its share. No seeks
    beyond those, no command overhead."""
    revolution_s = 60.0 / geometry.rpm
    remaining = float(sectors)
    total_s = 0.0
    for cylinders, spt, skew in geometry.zones:
        if remaining <= 0:
            break
        taken = min(remaining, cylinders * geometry.surfaces * spt)
        total_s += taken / spt * revolution_s * (1.0 + skew / spt)
        remaining -= taken
    if remaining > 1e-9:
        raise ValueError(f"the drive holds {geometry.sectors} sectors, not {sectors}")
    return total_s


def extrapolation_ratios(region_sectors: float, geometry: DriveGeometry) -> Tuple[float, float]:
    """(sector ratio, transfer ratio) of the whole drive to its first ``region_sectors``.

    A rebuild's cost per unit is positioning (about the same in every zone) plus transfer
    (slower inward). If it were all positioning, the whole drive's rebuild would take the
    region's × the sector ratio; if all transfer, × the ratio of sequential transfer times.
    A mix lies between the two (the mediant of the two ratios), so they bound the
    extrapolation of a rebuild whose per-unit cost is what the region's run measured."""
    whole = float(geometry.sectors)
    sector_ratio = whole / float(region_sectors)
    transfer_ratio = sequential_transfer_s(whole, geometry) / sequential_transfer_s(region_sectors, geometry)
    return sector_ratio, transfer_ratio


def extrapolate_rebuild_s(simulated_s: float, region_sectors: float, geometry: DriveGeometry) -> Tuple[float, float]:
    """The whole drive's rebuild time, s, extrapolated from ``simulated_s`` (the rebuild of
    the first ``region_sectors`` of each drive): (low, high) = simulated × the two
    :func:`extrapolation_ratios`. An extrapolation, not a simulation."""
    sector_ratio, transfer_ratio = extrapolation_ratios(region_sectors, geometry)
    return simulated_s * sector_ratio, simulated_s * transfer_ratio


# -- declustering -----------------------------------------------------------------------------


def draid_shape(config_text: str, base_dir: str) -> Tuple[int, int, int]:
    """(children C, distributed spares S, group width D + P) of the dRAID a configuration
    describes, as the core builds its layout (``_core.layout_facts``: ``drives``,
    ``distributed_spares``, ``stripe_width``); a spec the core refuses is its
    :class:`ConfigError` naming ``array.draid``."""
    from raidlab import _core

    facts = _core.layout_facts(config_text, base_dir)
    return int(facts["drives"]), int(facts["distributed_spares"]), int(facts["stripe_width"])


def declustering_bound(children: int, spares: int, width: int) -> float:
    """(C − S) / (D + P): how many times faster than onto one drive a rebuild onto distributed
    spares can be, by the OpenZFS docs' rule ("performance scales with the number of disks
    divided by the stripe width (D+P)"): a lost unit costs D + P units of work (its group's
    other units read, itself written), spread over C − S drives' worth of columns, where a
    traditional spare's drive does one unit of work per lost unit. ``width``: D + P."""
    return (children - spares) / float(width)


# -- response times ---------------------------------------------------------------------------


def mixture_quantile(components: Sequence[Tuple[Sequence[float], float]], q: float) -> float:
    """The ``q``-quantile (0 < q ≤ 1) of a mixture: component ``i`` is the empirical
    distribution of its samples, with weight ``w_i`` (weights normalised). The smallest
    sample x with Σ w_i F_i(x) ≥ q (the inverse-CDF quantile; one component gives its own
    empirical quantile). Units are the samples'."""
    import numpy as np

    if not 0.0 < q <= 1.0:
        raise ValueError(f"q must be in (0, 1], not {q}")
    values, weights = [], []
    total = sum(weight for samples, weight in components if len(samples))
    if total <= 0:
        return math.nan
    for samples, weight in components:
        array = np.asarray(samples, dtype=float)
        if len(array) == 0:
            continue
        values.append(array)
        weights.append(np.full(len(array), weight / total / len(array)))
    value = np.concatenate(values)
    weight = np.concatenate(weights)
    order = np.argsort(value, kind="stable")
    cumulative = np.cumsum(weight[order])
    index = int(np.searchsorted(cumulative, q - 1e-12, side="left"))
    return float(value[order][min(index, len(value) - 1)])


def period_response_ms(responses: "pd.DataFrame", start_s: float, end_s: float) -> "np.ndarray":
    """Response times, ms, of the requests that arrived in [start_s, end_s) and were answered
    (lost requests left out): from a run's ``responses`` table (``metrics.record_responses``)."""
    import numpy as np

    arrival_s = responses["arrival_ns"].to_numpy() / 1e9
    chosen = (arrival_s >= start_s) & (arrival_s < end_s)
    if "lost" in responses:
        chosen &= responses["lost"].to_numpy() == 0
    return np.asarray(responses["response_ns"].to_numpy()[chosen] / 1e6, dtype=float)


# -- the survivors' rebuild reads -------------------------------------------------------------


def split_reads_and_writes(operations: float, megabytes: float, read_bytes: int,
                           write_bytes: int) -> Tuple[float, float]:
    """(reads, writes) of a drive's rebuild work from its drives-table ``rebuild_operations``
    and ``rebuild_mb`` (10⁶ B), when every rebuild read is ``read_bytes`` and every write
    ``write_bytes`` long: reads + writes = operations, reads·r + writes·w = bytes. On dRAID a
    survivor reads stripe units and writes the distributed spare's whole rebuild units. A
    result that is not two whole non-negative numbers is a :class:`ValueError` (the sizes
    were not those)."""
    if read_bytes == write_bytes:
        raise ValueError("reads and writes of one size cannot be told apart")
    total_bytes = megabytes * 1e6
    writes = (total_bytes - read_bytes * operations) / float(write_bytes - read_bytes)
    reads = operations - writes
    for count in (reads, writes):
        if count < -1e-6 or abs(count - round(count)) > 1e-4 * max(1.0, abs(count)):
            raise ValueError(f"{operations} operations of {megabytes} MB are not reads of {read_bytes} B "
                             f"and writes of {write_bytes} B")
    return float(round(reads)), float(round(writes))


def read_imbalance(reads: Sequence[float]) -> float:
    """Most busy / least busy survivor by rebuild reads (≥ 1; 1 is perfect balance), the
    direction of the ratio ``vdev_draid.c`` tabulates (1.000 at 4 children, about 1.68 at 100).
    NaN when a survivor read nothing."""
    least, most = min(reads), max(reads)
    return math.nan if least <= 0 else most / least


# -- the runs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One configuration: ``label`` for the tables, ``role`` (``layout``: a row of the main
    tables; ``capacity``, ``anchor``, ``buffer``: the checks) and its keys over the base."""

    label: str
    role: str
    keys: Mapping[str, Any] = field(default_factory=dict)


def _pool_cases(layouts: Sequence[str], drives: int, rate: float, capacity: int, checks: bool) -> List[Case]:
    common = {"array.drives": drives, "workload.arrival.rate_per_s": rate, "drive.capacity_sectors": capacity}
    cases = [Case(f"dRAID {spec}", "layout", {**common, "array.draid": spec}) for spec in layouts]
    if checks:
        middle = "draid2:8d:2s" if "draid2:8d:2s" in layouts else layouts[0]
        cases += [
            Case(f"dRAID {middle}, half the region", "capacity",
                 {**common, "array.draid": middle, "drive.capacity_sectors": capacity // 2}),
            Case(f"dRAID {middle}, buffer {LARGE_BUFFER_UNITS} units", "buffer",
                 {**common, "array.draid": middle, "rebuild.buffer_units": LARGE_BUFFER_UNITS}),
            Case(f"dRAID {ANCHOR_DRAID}, {ANCHOR_DRIVES} drives, idle", "anchor",
                 {**common, "array.draid": ANCHOR_DRAID, "array.drives": ANCHOR_DRIVES,
                  "workload.arrival.rate_per_s": IDLE_RATE_PER_S}),
            Case(f"dRAID {ANCHOR_DRAID}, {ANCHOR_DRIVES} drives, idle, buffer {LARGE_BUFFER_UNITS} units", "buffer",
                 {**common, "array.draid": ANCHOR_DRAID, "array.drives": ANCHOR_DRIVES,
                  "workload.arrival.rate_per_s": IDLE_RATE_PER_S, "rebuild.buffer_units": LARGE_BUFFER_UNITS}),
            # A replacement drive at hand when the rebuild ends: the member is copied onto it
            # (ZFS's healing resilver after `zpool replace`), which frees the distributed spare.
            Case(f"dRAID {middle}, then healed onto a replacement", "healing",
                 {**common, "array.draid": middle, "array.spares": 1}),
        ]
    return cases


def _group_cases(rate: float, capacity: int, checks: bool) -> List[Case]:
    common = {"workload.arrival.rate_per_s": rate, "drive.capacity_sectors": capacity}
    cases = [Case("RAID-6 8+2 + spare, zfs healing", "layout", dict(common))]
    if checks:
        cases += [
            Case("RAID-6 8+2 + spare, md", "layout", {**common, "rebuild.discipline": "md"}),
            Case("RAID-6 8+2 + spare, zfs healing, half the region", "capacity",
                 {**common, "drive.capacity_sectors": capacity // 2}),
            Case("RAID-6 8+2 + spare, zfs healing, idle", "anchor",
                 {**common, "workload.arrival.rate_per_s": IDLE_RATE_PER_S}),
        ]
    return cases


def _spec_text(base: Path, name: str, seeds: List[int], cases: Sequence[Case]) -> str:
    from raidlab.config import toml_literal

    lines = [f"base = {toml_literal(str(base))}", f"name = {toml_literal(name)}", f"seeds = {toml_literal(seeds)}", ""]
    for case in cases:
        lines.append("[[points]]")
        lines += [f"{toml_literal(key)} = {toml_literal(value)}" for key, value in case.keys.items()]
        lines.append("")
    return "\n".join(lines)


def _measure(run_dir: Path, case: Case, geometry: DriveGeometry) -> Dict[str, Any]:
    """The figures of one finished run (its directory's summary and tables)."""
    from raidlab.config import parse_toml
    from raidlab.results import Result

    result = Result.load(run_dir)
    summary = result.summary
    config = parse_toml((run_dir / "config.toml").read_text(encoding="utf-8"))
    array, drive_keys, rebuild_keys = config["array"], config["drive"], config.get("rebuild", {})
    members = int(summary["drives_in_array"])
    rebuild = (summary.get("rebuilds") or [{}])[0]
    complete = rebuild.get("outcome") == "complete"
    periods = summary["response_ms_by_period"]
    record: Dict[str, Any] = {
        "label": case.label, "role": case.role, "layout": summary["layout"], "members": members,
        "draid": array.get("draid"), "capacity_sectors": int(drive_keys["capacity_sectors"]),
        "rate_per_s": float(config["workload"]["arrival"]["rate_per_s"]),
        "buffer_units": int(rebuild_keys.get("buffer_units", 64)),
        "complete": complete,
        "rebuild_s": float(rebuild["rebuild_time_s"]) if complete else math.nan,
        "rate_mb_s": float(rebuild["target_write_mb_s"]) if complete else math.nan,
        "normal_p50": periods["normal"]["p50"], "normal_p99": periods["normal"]["p99"],
        "rebuilding_p50": periods["rebuilding"]["p50"], "rebuilding_p99": periods["rebuilding"]["p99"],
        "overloaded": bool(summary.get("overloaded")),
    }
    # The healing copy onto a spare drive, for a run that had one (`rebuild.healing`).
    healing = next((r for r in summary.get("rebuilds") or [] if r.get("kind") == "healing"), {})
    healed = healing.get("outcome") == "complete"
    record["healing_s"] = float(healing["rebuild_time_s"]) if healed else math.nan
    record["healing_rate_mb_s"] = float(healing["target_write_mb_s"]) if healed else math.nan
    record["healing_p50"] = (periods.get("healing") or {}).get("p50")
    record["healing_p99"] = (periods.get("healing") or {}).get("p99")
    if summary["layout"] == "draid":
        record["bound"] = declustering_bound(*draid_shape((run_dir / "config.toml").read_text(encoding="utf-8"), str(run_dir)))
    drives = result.drives
    survivors = drives[(drives["drive"] < members) & drives["failed_at_s"].isna()]
    # Shares of a survivor's time while the rebuild ran: rebuild work (its busy time over the
    # rebuild time) and user work (its user busy time over the run, the rate it kept all along).
    record["rebuild_busy_share"] = (float(survivors["rebuild_busy_s"].mean()) / record["rebuild_s"]
                                    if complete else math.nan)
    record["user_busy_share"] = float(survivors["user_busy_s"].mean()) / float(summary["simulated_seconds"])
    record["blocked_fraction"] = (float(survivors["rebuild_blocked_s"].mean()) / record["rebuild_s"]
                                  if complete and "rebuild_blocked_s" in survivors else math.nan)
    record["imbalance"] = math.nan
    record["imbalance_of"] = ""
    if summary["layout"] == "draid":
        read_bytes = int(round(float(array["stripe_unit_kib"]) * 1024))
        write_bytes = int(rebuild_keys["unit"]["sectors"]) * 512
        try:
            reads = [split_reads_and_writes(float(ops), float(mb), read_bytes, write_bytes)[0]
                     for ops, mb in zip(survivors["rebuild_operations"], survivors["rebuild_mb"])]
            record["imbalance"], record["imbalance_of"] = read_imbalance(reads), "reads"
        except ValueError:
            record["imbalance"] = read_imbalance(survivors["rebuild_operations"].astype(float).tolist())
            record["imbalance_of"] = "operations"
    # The pool's response times while one group rebuilds: nine groups in normal mode (this
    # group's own normal period stands for them) and this one rebuilding, 9 : 1.
    record["pool_p50"], record["pool_p99"] = record["rebuilding_p50"], record["rebuilding_p99"]
    if summary["layout"] != "draid" and "responses" in result.tables and complete:
        responses = result.table("responses")
        failed_at = float(rebuild["failed_at_s"])
        normal = period_response_ms(responses, 0.0, failed_at)
        rebuilding = period_response_ms(responses, float(rebuild["started_at_s"]), float(rebuild["ended_at_s"]))
        record["group_rebuilding_p99_from_responses"] = mixture_quantile([(rebuilding, 1.0)], 0.99)
        components = [(normal, GROUPS_IN_POOL - 1.0), (rebuilding, 1.0)]
        record["pool_p50"] = mixture_quantile(components, 0.50)
        record["pool_p99"] = mixture_quantile(components, 0.99)
    if complete:
        low, high = extrapolate_rebuild_s(record["rebuild_s"], record["capacity_sectors"], geometry)
        record["full_low_h"], record["full_high_h"] = low / 3600.0, high / 3600.0
    else:
        record["full_low_h"] = record["full_high_h"] = math.nan
    return record


def _mean_by_label(records: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The records of each case averaged over seeds (numbers) in case order."""
    merged: Dict[str, Dict[str, Any]] = {}
    for record in records:
        merged.setdefault(record["label"], {"runs": []})["runs"].append(record)
    for label, entry in merged.items():
        runs = entry.pop("runs")
        for key, value in runs[0].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                values = [float(run[key]) if run.get(key) is not None else math.nan for run in runs]
                entry[key] = sum(values) / len(values)
            else:
                entry[key] = value
        entry["complete"] = all(run["complete"] for run in runs)
        entry["seeds"] = len(runs)
    return merged


def run(context: "Context") -> PaperReport:
    """Run the pool and the group at every case and seed; the report's tables and figure."""
    from raidlab.experiments.sweep import load_sweep_spec
    from raidlab.reproductions.reproduce import default_experiments_dir
    from raidlab.results.store import RUNS_DIR

    options = dict(context.options or {})
    layouts = list(options.get("layouts", DEFAULT_LAYOUTS))
    pool_drives = int(options.get("pool_drives", DEFAULT_POOL_DRIVES))
    pool_rate = float(options.get("pool_rate_per_s", DEFAULT_POOL_RATE_PER_S))
    capacity = int(options.get("capacity_sectors", DEFAULT_CAPACITY_SECTORS))
    checks = bool(options.get("checks", True))
    # The group takes its share of the pool's load: the same requests per drive.
    group_rate = pool_rate * GROUP_DRIVES / pool_drives

    experiments = Path(context.experiments_dir) if context.experiments_dir else default_experiments_dir()
    seeds = list(range(FIRST_SEED, FIRST_SEED + (context.seeds or DEFAULT_SEEDS)))
    output = Path(context.output)
    report = PaperReport(name="draid", title="")
    records: List[Dict[str, Any]] = []
    errors: List[str] = []
    # Both experiments run the same drive: its zone table bounds the extrapolation.
    geometry = drive_geometry((experiments / POOL_CONFIG).resolve())
    experiments_run = (("draid-pool", POOL_CONFIG, _pool_cases(layouts, pool_drives, pool_rate, capacity, checks)),
                       ("draid-group", GROUP_CONFIG, _group_cases(group_rate, capacity, checks)))
    for name, config, cases in experiments_run:
        base = (experiments / config).resolve()
        spec = load_sweep_spec(output / f"{name}.toml", text=_spec_text(base, name, seeds, cases))
        outcome = context.run_sweep(name, spec, output / name)
        table = outcome.table
        report.facts.append(f"experiments/{config}: {len(table)} run(s), seeds {', '.join(map(str, seeds))}; "
                            f"{outcome.skipped} already done, {outcome.ran} run now; "
                            f"sweep directory {outcome.directory}")
        for _, row in table.iterrows():
            if row["status"] != "done":
                errors.append(f"{cases[int(row['case'])].label}: {row.get('error')}")
                continue
            records.append(_measure(outcome.directory / RUNS_DIR / str(row["run_id"]), cases[int(row["case"])], geometry))
    if errors:
        report.error = f"{len(errors)} run(s) failed: " + "; ".join(errors)
    cases = _mean_by_label(records)
    if not cases:
        return report
    _tables(report, cases, capacity, pool_drives, pool_rate, group_rate, geometry)
    figure = _draw(cases, output)
    if figure is not None:
        report.figures.append(ReportFigure(figure, "Rebuild rate per layout under load (simulated region) with each "
                                                   "dRAID's bound from the RAID-6 group's rate × (C − S)/(D + P); user "
                                                   "p99 before the failure and while rebuilding"))
    return report


# -- the report -------------------------------------------------------------------------------


def _gb(sectors: float) -> float:
    return sectors * 512 / 1e9


def _bound_of(case: Mapping[str, Any]) -> float:
    return float(case.get("bound", math.nan)) if case["layout"] == "draid" else math.nan


def _ms(value: Any) -> str:
    return number_text(value, 1, " ms") if value is not None else "—"


def _tables(report: PaperReport, cases: Mapping[str, Mapping[str, Any]], capacity: int, pool_drives: int,
            pool_rate: float, group_rate: float, geometry: DriveGeometry) -> None:
    layouts = [case for case in cases.values() if case["role"] == "layout"]
    group = next((case for case in layouts if case["layout"] != "draid" and "zfs" in case["label"]), None)
    group_rate_mb_s = group["rate_mb_s"] if group else math.nan
    region = _gb(capacity)
    sector_ratio, transfer_ratio = extrapolation_ratios(capacity, geometry)

    rows = []
    for case in layouts:
        bound = _bound_of(case)
        speedup = case["rate_mb_s"] / group_rate_mb_s if case["layout"] == "draid" else math.nan
        rows.append([case["label"], str(int(case["members"])), number_text(case["rate_per_s"], 0),
                     number_text(case["rebuild_s"], 1, " s"), number_text(case["rate_mb_s"] / 1000, 3, " GB/s"),
                     number_text(speedup, 2, "×"), number_text(bound, 2, "×"),
                     f"{number_text(case['full_low_h'], 1)}–{number_text(case['full_high_h'], 1)} h",
                     f"{number_text(case['rebuild_busy_share'] * 100, 1, ' %')} + "
                     f"{number_text(case['user_busy_share'] * 100, 1, ' %')}",
                     number_text(case["imbalance"], 3)])
    report.tables.append(ReportTable(
        title=f"Rebuild of one failed drive under load ({number_text(region, 1)} GB of each drive simulated)",
        columns=["layout", "drives", "requests/s", "rebuild (simulated)", "rate to the spare",
                 "speed-up over the RAID-6 group (zfs)", "(C − S)/(D + P)",
                 "whole 18 TB drive (EXTRAPOLATED)", "survivor busy: rebuild + user", "read imbalance (most/least)"],
        rows=rows,
        note=(f"Rate: the lost member's bytes rebuilt / rebuild time (10⁹ B/s). Speed-up: the dRAID's rate over "
              f"the RAID-6 group's under the zfs healing rebuild, both at {number_text(pool_rate / pool_drives, 0)} "
              f"requests/s per drive. Extrapolated, not simulated: the simulated time × the whole drive's sectors "
              f"/ the region's ({number_text(sector_ratio, 2)}, low) and × the drive's sequential transfer time / "
              f"the region's ({number_text(transfer_ratio, 2)}, high), from the hc550 zone table. Survivor busy: "
              f"the mean survivor's rebuild busy time / the rebuild time, and its user busy time / the run. Read "
              f"imbalance: the survivors' rebuild reads, most / least (1 = even).")))

    rows = []
    for case in layouts:
        pool_note = "(the group's own)" if case["layout"] == "draid" else "(1 rebuilding : 9 normal groups)"
        rows.append([case["label"], _ms(case["normal_p50"]), _ms(case["normal_p99"]), _ms(case["rebuilding_p50"]),
                     _ms(case["rebuilding_p99"]), f"{_ms(case['pool_p50'])} / {_ms(case['pool_p99'])}",
                     pool_note])
    report.tables.append(ReportTable(
        title="User response time (4 KiB random reads) before the failure and while rebuilding",
        columns=["layout", "p50 normal", "p99 normal", "p50 rebuilding", "p99 rebuilding",
                 "pool p50 / p99 while rebuilding", "pool is"],
        rows=rows,
        note=(f"A dRAID pool is one vdev: its figures are the pool's. A RAID-6 pool is {GROUPS_IN_POOL} groups of "
              f"which one rebuilds: its p50/p99 are those of the mixture, 1 : {GROUPS_IN_POOL - 1}, of the group's "
              f"requests while it rebuilds and its requests before the failure (standing for the nine groups in "
              f"normal mode), from the run's responses table.")))

    anchor = next((case for case in cases.values() if case["role"] == "anchor" and case["layout"] == "draid"), None)
    group_idle = next((case for case in cases.values() if case["role"] == "anchor" and case["layout"] != "draid"), None)
    rows = []
    if anchor is not None:
        published_rate, source = PUBLISHED["anchor_rate_gb_s"]
        rows.append([source, number_text(published_rate, 2, " GB/s"),
                     f"{number_text(anchor['rate_mb_s'] / 1000, 3, ' GB/s')} ({anchor['label']})",
                     difference_text(anchor["rate_mb_s"] / 1000, published_rate)])
        if group_idle is not None:
            published_speedup, source = PUBLISHED["anchor_speedup"]
            ours = anchor["rate_mb_s"] / group_idle["rate_mb_s"]
            rows.append([source, number_text(published_speedup, 2, "×"),
                         f"{number_text(ours, 2, '×')} (over the idle RAID-6 group's "
                         f"{number_text(group_idle['rate_mb_s'], 0, ' MB/s')})",
                         difference_text(ours, published_speedup)])
            rows.append(["the docs' rule: (C − S)/(D + P) for the anchor's pool (rebuild-controls.md §4.2 computes "
                         "106/13 ≈ 8.2)", number_text(_bound_of(anchor), 2, "×"), number_text(ours, 2, "×"),
                         difference_text(ours, _bound_of(anchor))])
    published_imbalance, source = PUBLISHED["imbalance_100"]
    for case in layouts:
        if case["layout"] == "draid" and int(case["members"]) == 100:
            rows.append([f"{source}; raidlab: {case['label']}", number_text(published_imbalance, 2),
                         f"{number_text(case['imbalance'], 3)} ({case['imbalance_of']})",
                         difference_text(case["imbalance"], published_imbalance)])
    if rows:
        report.tables.append(ReportTable(
            title="Published anchors beside raidlab", columns=["figure", "published", "raidlab", "difference"],
            rows=rows, note="Difference: (raidlab − published) / published. docs/reproduction.md explains each."))

    healed = [case for case in cases.values() if case["role"] == "healing"]
    if healed:
        rows = []
        for case in healed:
            low, high = (extrapolate_rebuild_s(case["healing_s"], case["capacity_sectors"], geometry)
                         if math.isfinite(case["healing_s"]) else (math.nan, math.nan))
            rows.append([case["label"], number_text(case["rebuild_s"], 1, " s"), _ms(case["rebuilding_p99"]),
                         number_text(case["healing_s"], 1, " s"), number_text(case["healing_rate_mb_s"], 1, " MB/s"),
                         _ms(case["healing_p99"]), f"{number_text(low / 3600, 1)}–{number_text(high / 3600, 1)} h"])
        if group is not None:
            rows.append([f"{group['label']} (for comparison: its rebuild onto the spare)",
                         number_text(group["rebuild_s"], 1, " s"), _ms(group["rebuilding_p99"]), "—", "—", "—", "—"])
        report.tables.append(ReportTable(
            title="The healing copy onto a replacement drive",
            columns=["run", "rebuild onto the distributed spare", "user p99 rebuilding", "healing copy (simulated)",
                     "copy rate", "user p99 healing", "healing, whole drive (EXTRAPOLATED)"],
            rows=rows,
            note=("A hot spare drive is at hand when the rebuild ends (raidlab's choice); the member is copied onto it "
                  "from the distributed spare, every stripe whole throughout, and the distributed spare is then free "
                  "for the next failure. The copy is bound by the replacement's writes, as a traditional rebuild is "
                  "by its spare's; it runs in the zfs discipline's healing-resilver limits.")))

    checks = [case for case in cases.values() if case["role"] in ("capacity", "buffer", "anchor")]
    if checks:
        by_label = {case["label"]: case for case in cases.values()}
        rows = []
        for case in checks:
            full_label = case["label"].replace(", half the region", "")
            full = by_label.get(full_label)
            per_gb = case["rebuild_s"] / _gb(case["capacity_sectors"])
            full_per_gb = (full["rebuild_s"] / _gb(full["capacity_sectors"])
                           if full and case["role"] == "capacity" else math.nan)
            rows.append([case["label"], number_text(_gb(case["capacity_sectors"]), 1, " GB"),
                         number_text(case["rate_per_s"], 2), str(int(case["buffer_units"])),
                         number_text(case["rebuild_s"], 1, " s"), number_text(per_gb, 3, " s/GB"),
                         difference_text(per_gb, full_per_gb) if case["role"] == "capacity" else "",
                         number_text(case["rate_mb_s"] / 1000, 3, " GB/s"),
                         number_text(case["rebuild_busy_share"] * 100, 1, " %"),
                         number_text(case["blocked_fraction"] * 100, 1, " %"), number_text(case["imbalance"], 3),
                         _ms(case["rebuilding_p99"])])
        report.tables.append(ReportTable(
            title="raidlab's checks: half the region, the rebuild buffer, an idle pool",
            columns=["run", "region", "requests/s", "buffer units", "rebuild (simulated)", "per GB",
                     "per GB against the whole region", "rate to the spare", "survivor busy with the rebuild",
                     "survivors blocked on a full buffer", "read imbalance", "user p99 rebuilding"],
            rows=rows,
            note=("Half the region: the rebuild time per GB should not change if the time is linear in the region "
                  "(the extrapolation's premise). Buffer: rebuild.buffer_units, the disk-oriented executor's "
                  "per-survivor buffer (raidlab's default 64), not a ZFS tunable. Blocked: the mean survivor's "
                  "time waiting on a full buffer / the rebuild time.")))


def _draw(cases: Mapping[str, Mapping[str, Any]], output: Path) -> Optional[Path]:
    """Left: each layout's rebuild rate under load, and for each dRAID the RAID-6 group's rate ×
    (C − S)/(D + P). Right: the user's p99 before the failure and the pool's while rebuilding."""
    from matplotlib.figure import Figure

    from raidlab.output.plots import save_figure

    layouts = [case for case in cases.values() if case["role"] == "layout"]
    if not layouts:
        return None
    group = next((case for case in layouts if case["layout"] != "draid" and "zfs" in case["label"]), None)
    labels = [case["label"].replace("dRAID ", "").replace("RAID-6 8+2 + spare, ", "RAID-6 ") for case in layouts]
    positions = list(range(len(layouts)))
    figure = Figure(figsize=(12, 4.6), layout="constrained")
    left, right = figure.subplots(1, 2)
    left.bar(positions, [case["rate_mb_s"] / 1000 for case in layouts], color="C0", label="raidlab (simulated)")
    bounds: List[Tuple[int, float]] = []
    if group is not None:
        bounds = [(index, group["rate_mb_s"] / 1000 * _bound_of(case)) for index, case in enumerate(layouts)
                  if case["layout"] == "draid"]
        if bounds:
            left.plot([index for index, _ in bounds], [value for _, value in bounds], marker="_", markersize=28,
                      markeredgewidth=2.5, linestyle="none", color="C3",
                      label="RAID-6 group's rate × (C − S)/(D + P)")
    left.axhline(PUBLISHED["anchor_rate_gb_s"][0], color="0.4", linestyle="--",
                 label="1.2 GB/s: ZFS, 106-drive draid2:11d (published, idle)")
    left.set_xticks(positions, labels, rotation=15, fontsize="small")
    left.set_ylabel("rebuild rate to the spare (GB/s)")
    left.set_title("Rebuild rate, 1 failed drive, under load")
    highest = max([PUBLISHED["anchor_rate_gb_s"][0]] + [case["rate_mb_s"] / 1000 for case in layouts]
                  + [value for _, value in bounds])
    left.set_ylim(0, highest * 1.35)  # room for the legend above the bars and marks
    left.legend(loc="upper right", fontsize="small")
    width = 0.38
    right.bar([p - width / 2 for p in positions], [case["normal_p99"] or math.nan for case in layouts], width,
              color="C2", label="before the failure")
    right.bar([p + width / 2 for p in positions], [case["pool_p99"] for case in layouts], width, color="C1",
              label="pool while rebuilding (RAID-6: 1 group in 10)")
    right.set_xticks(positions, labels, rotation=15, fontsize="small")
    right.set_yscale("log")
    p99s = [value for case in layouts for value in (case["normal_p99"], case["pool_p99"])
            if value is not None and math.isfinite(value)]
    right.set_ylim(1.0, max(p99s + [10.0]) * 5)  # room for the legend above the bars
    # Plain numbers on the log axis (1, 10, 100 ms), not powers of ten.
    from matplotlib.ticker import FuncFormatter, NullFormatter

    right.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    right.yaxis.set_minor_formatter(NullFormatter())
    right.set_ylabel("user p99 response time (ms)")
    right.set_title("User p99")
    right.legend(loc="upper right", fontsize="small")
    figure.suptitle("dRAID against RAID-6 groups with a hot spare: 18 TB drives (hc550), outermost region simulated")
    return save_figure(figure, output / "draid.png", dpi=110)
