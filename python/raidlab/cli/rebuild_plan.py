"""``raidlab rebuild-plan CONFIG``: how long will my rebuild take, and what will it cost?

For the user's own array, drive and workload (a run configuration), one member fails and is
rebuilt onto a hot spare under each candidate rebuild discipline, setting or layout; each
candidate is one run of a sweep (:mod:`raidlab.experiments.sweep`: the local process pool or Dask, content-addressed
run directories, resuming). The answer is one row per candidate::

    candidate ─▶ rebuild time, user p50 / p99 while rebuilding,
                 healing time and user p50 / p99 while healing (dRAID's copy onto a spare drive),
                 P(second drive failure in the group while it is degraded),
                 P(unrecoverable read error while reading the survivors),
                 P(data loss within a mission time, every rebuild taking as long as this one),
                 stripe-hours at risk (the stripes missing a unit, over the degraded window)
                 and the expected share of the stripes one more failure would lose

a Pareto plot of rebuild time against user p99, with, given an SLO on p99, the fastest
rebuild that keeps it, and a plot of the stripes at risk against the time since the failure.

The pieces are pure functions where they can be (tests call them on tables they build):

* :data:`DEFAULT_CANDIDATES`: the default set, as data (:class:`Candidate`);
* :func:`second_failure_probability`, :func:`ure_probability`, :func:`data_loss_probability`:
  the exposure formulas (the last is :mod:`raidlab.exposure`'s chain for the layout);
* :func:`stripes_at_risk_curve`, :func:`stripe_hours_at_risk`,
  :func:`expected_lost_stripe_fraction`: the stripes at risk over time, from a run's rebuilt
  fraction and the layout's stripes per member;
* :func:`pareto_front`, :func:`pick_for_slo`: the front and the SLO pick on a results table;
* :func:`prepare_base`: the configuration with a failure, a spare and ``rebuild.end_run``;
* :func:`run_plan`: everything, writing the output directory; the command is
  :func:`add_arguments`'s.

``docs/rebuild-plan.md`` explains the model, the defaults and their sources.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from raidlab.exceptions import ConfigError, RaidlabIOError

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

__all__ = [
    "DEFAULT_AFR",
    "DEFAULT_URE_PER_BIT",
    "HOURS_PER_YEAR",
    "MediaRate",
    "Candidate",
    "DEFAULT_CANDIDATES",
    "hourly_failure_rate",
    "second_failure_probability",
    "ure_probability",
    "data_loss_probability",
    "afr_of_mttf",
    "check_afr",
    "check_mttf_hours",
    "check_mission_years",
    "DEFAULT_MISSION_YEARS",
    "check_ure_per_bit",
    "check_slo_ms",
    "stripes_at_risk_curve",
    "stripe_hours_at_risk",
    "expected_lost_stripe_fraction",
    "pareto_front",
    "SloChoice",
    "pick_for_slo",
    "candidates_from_table",
    "prepare_base",
    "measure_media_rate_mb_s",
    "PlanOutcome",
    "run_plan",
    "draw_stripes_at_risk",
    "add_arguments",
]

#: Annual failure rate of a drive, the default of ``--afr``: Backblaze's 2024 fleet-wide
#: figure, 1.57 % (Backblaze Drive Stats for 2024; Q2 2024 1.71 %, Q3 2025 1.55 %).
DEFAULT_AFR = 0.0157
#: Unrecoverable read errors per bit read, the default of ``--ure-per-bit``: the enterprise
#: hard drive datasheet class, "< 1 sector per 10^15 bits read" (7200 rpm drives are rated
#: 10^-14 to 10^-15; SSDs 10^-17).
DEFAULT_URE_PER_BIT = 1e-15
#: Hours in a year of 365.25 days.
HOURS_PER_YEAR = 8766.0
#: The mission time of P(data loss), the default of ``--mission-years``.
DEFAULT_MISSION_YEARS = 1.0
#: md's ``speed_limit_min`` raised, as operators commonly do to make a rebuild go on under
#: load: 50 MiB/s per device.
MD_RAISED_MIN_KIB_S = 51200
#: md's built-in ``speed_limit_min`` (KiB/s), for the lowered-maximum candidate.
MD_DEFAULT_MIN_KIB_S = 1000
#: The pilot that measures the drive's sustained read rate (for candidates set relative to
#: it): reads of this many KiB at uniform random places, one at a time, on one drive.
PILOT_READ_KIB = 32768
PILOT_READS = 32


# ---------------------------------------------------------------------------------------------
# Candidates, as data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MediaRate:
    """A setting relative to the drive's sustained read rate (measured by a pilot run,
    :func:`measure_media_rate_mb_s`): ``fraction`` of it, in KiB/s, at most ``at_most``."""

    fraction: float
    at_most: Optional[float] = None

    def kib_s(self, media_rate_mb_s: float) -> int:
        value = self.fraction * media_rate_mb_s * 1e6 / 1024.0
        if self.at_most is not None:
            value = min(value, self.at_most)
        return max(1, int(round(value)))


@dataclass(frozen=True)
class Candidate:
    """One rebuild setting to simulate: a label and the configuration keys it sets (dotted
    key paths, as ``--set`` takes them; values may be :class:`MediaRate`)."""

    label: str
    overrides: Mapping[str, Any]
    #: Why it is in the set (docs and ``--json``).
    note: str = ""

    def discipline(self, default: str) -> str:
        value = self.overrides.get("rebuild.discipline", default)
        return str(value)

    def needs_media_rate(self) -> bool:
        return any(isinstance(value, MediaRate) for value in self.overrides.values())

    def resolved(self, media_rate_mb_s: Optional[float]) -> Dict[str, Any]:
        """The overrides with every :class:`MediaRate` turned into KiB/s."""
        values: Dict[str, Any] = {}
        for key, value in self.overrides.items():
            if isinstance(value, MediaRate):
                if media_rate_mb_s is None:
                    raise ConfigError(f"candidate {self.label!r}: needs the drive's media rate", key=key)
                value = value.kib_s(media_rate_mb_s)
            values[key] = value
        return values


#: The default set (8 candidates): Linux md at its defaults and at two other settings, Fu et
#: al.'s VSM and PCM, and Ceph's three mClock profiles.
DEFAULT_CANDIDATES: Tuple[Candidate, ...] = (
    Candidate("md", {"rebuild.discipline": "md"},
              "Linux md at its defaults: speed_limit_min 1000 KiB/s, speed_limit_max 200000 KiB/s"),
    Candidate("md min=50MiB/s", {"rebuild.discipline": "md", "rebuild.md.speed_limit_min_kib_s": MD_RAISED_MIN_KIB_S},
              "speed_limit_min raised to 50 MiB/s per device, the usual advice to make a rebuild go on "
              "under load: a floor at or above the drive's rate means the rebuild never yields"),
    Candidate("md max=media/4",
              {"rebuild.discipline": "md",
               "rebuild.md.speed_limit_max_kib_s": MediaRate(0.25),
               "rebuild.md.speed_limit_min_kib_s": MediaRate(0.25, at_most=MD_DEFAULT_MIN_KIB_S)},
              "speed_limit_max lowered to a quarter of the drive's sustained read rate, to spare the "
              "users (speed_limit_min lowered with it when the default floor would be above it)"),
    Candidate("vsm", {"rebuild.discipline": "vsm"},
              "Fu et al.'s VSM: a rebuild read only when the drive has no user work"),
    Candidate("pcm", {"rebuild.discipline": "pcm"},
              "Fu et al.'s PCM: rebuild reads queued beside user requests at the same priority"),
    Candidate("mclock high_client_ops", {"rebuild.discipline": "mclock", "rebuild.mclock.profile": "high_client_ops"},
              "Ceph mClock, profile high_client_ops (client 60 %/2, recovery 40 %/1)"),
    Candidate("mclock balanced", {"rebuild.discipline": "mclock", "rebuild.mclock.profile": "balanced"},
              "Ceph mClock, profile balanced, Ceph's default (client 50 %/1, recovery 50 %/1)"),
    Candidate("mclock high_recovery_ops", {"rebuild.discipline": "mclock", "rebuild.mclock.profile": "high_recovery_ops"},
              "Ceph mClock, profile high_recovery_ops (client 30 %/1, recovery 70 %/2)"),
)

#: Keys of ``[rebuild]`` that belong to one discipline besides its own table
#: (``[rebuild.<discipline>]``): the base configuration's are moved to the candidates of
#: that discipline, since the core refuses them beside another discipline.
DISCIPLINE_KEYS: Mapping[str, Tuple[str, ...]] = {"rate": ("rate_mb_s",)}


def _unique_labels(candidates: Sequence[Candidate]) -> List[Candidate]:
    seen: Dict[str, int] = {}
    unique = []
    for candidate in candidates:
        count = seen.get(candidate.label, 0) + 1
        seen[candidate.label] = count
        label = candidate.label if count == 1 else f"{candidate.label} ({count})"
        unique.append(Candidate(label, candidate.overrides, candidate.note))
    return unique


def candidates_from_table(table: Any, where: str = "rebuild_plan") -> List[Candidate]:
    """Candidates from a ``[rebuild_plan]`` table: ``[[rebuild_plan.candidates]]`` tables, each
    with an optional ``label`` and ``note`` and the keys it sets (dotted key paths; a quoted key
    with dots is a path whose value is taken whole, as in a sweep's points)."""
    from raidlab.experiments.sweep import _flatten

    if not isinstance(table, Mapping):
        raise ConfigError("expected a table with [[rebuild_plan.candidates]]", key=where)
    unknown = [key for key in table if key != "candidates"]
    if unknown:
        raise ConfigError("unknown key; [rebuild_plan] has `candidates`", key=f"{where}.{unknown[0]}")
    items = table.get("candidates")
    if not isinstance(items, list) or not items or not all(isinstance(item, Mapping) for item in items):
        raise ConfigError("expected one or more [[rebuild_plan.candidates]] tables", key=f"{where}.candidates")
    candidates = []
    for number, item in enumerate(items):
        at = f"{where}.candidates[{number}]"
        values = dict(item)
        label = values.pop("label", None)
        note = values.pop("note", "")
        if label is not None and (not isinstance(label, str) or not label):
            raise ConfigError("expected text", key=f"{at}.label")
        if not isinstance(note, str):
            raise ConfigError("expected text", key=f"{at}.note")
        overrides = _flatten(values)
        if not overrides:
            raise ConfigError("a candidate sets at least one key (e.g. rebuild.discipline)", key=at)
        candidates.append(Candidate(label or _label_of(overrides), overrides, note))
    return candidates


def _label_of(overrides: Mapping[str, Any]) -> str:
    from raidlab.config import toml_literal

    discipline = overrides.get("rebuild.discipline")
    rest = [f"{key.rsplit('.', 1)[-1]}={toml_literal(value)}" for key, value in overrides.items()
            if key != "rebuild.discipline"]
    return " ".join(([str(discipline)] if discipline is not None else []) + rest) or "base"


# ---------------------------------------------------------------------------------------------
# Exposure
# ---------------------------------------------------------------------------------------------


def check_afr(afr: float, key: str = "--afr") -> float:
    """An annual failure rate, a fraction in [0, 1)."""
    if not (isinstance(afr, (int, float)) and math.isfinite(afr)) or afr < 0 or afr >= 1:
        raise ConfigError(f"expected an annual failure rate as a fraction in [0, 1) (1.57 % is 0.0157), not {afr}",
                          key=key)
    return float(afr)


def check_ure_per_bit(rate: float, key: str = "--ure-per-bit") -> float:
    """A probability per bit read, in [0, 1)."""
    if not (isinstance(rate, (int, float)) and math.isfinite(rate)) or rate < 0 or rate >= 1:
        raise ConfigError(f"expected unrecoverable read errors per bit read, in [0, 1) (e.g. 1e-15), not {rate}",
                          key=key)
    return float(rate)


def check_mttf_hours(hours: float, key: str = "--mttf-hours") -> float:
    """A mean time to failure, hours > 0."""
    if not (isinstance(hours, (int, float)) and math.isfinite(hours)) or hours <= 0:
        raise ConfigError(f"expected a drive's mean time to failure in hours, > 0 (e.g. 2.5e6), not {hours}", key=key)
    if -math.expm1(-HOURS_PER_YEAR / hours) >= 1:
        raise ConfigError(f"a mean time to failure of {hours:g} h fails every drive within the year (an annual "
                          "failure rate of 1): expected more hours", key=key)
    return float(hours)


def check_mission_years(years: float, key: str = "--mission-years") -> float:
    """A mission time, years > 0."""
    if not (isinstance(years, (int, float)) and math.isfinite(years)) or years <= 0:
        raise ConfigError(f"expected a mission time in years, > 0, not {years}", key=key)
    return float(years)


def afr_of_mttf(mttf_hours: float) -> float:
    """The annual failure rate of an exponential lifetime of mean ``mttf_hours``:
    AFR = 1 − exp(−8766 h / MTTF), the inverse of :func:`hourly_failure_rate`."""
    return -math.expm1(-HOURS_PER_YEAR / check_mttf_hours(mttf_hours))


def check_slo_ms(slo_ms: float, key: str = "--p99-slo-ms") -> float:
    """A response-time objective, milliseconds > 0."""
    if not (isinstance(slo_ms, (int, float)) and math.isfinite(slo_ms)) or slo_ms <= 0:
        raise ConfigError(f"expected a p99 response time objective in milliseconds, > 0, not {slo_ms}", key=key)
    return float(slo_ms)


def hourly_failure_rate(afr: float) -> float:
    """λ per drive-hour of an exponential lifetime whose probability of failing within a year
    is ``afr``: λ = −ln(1 − AFR) / 8766 h."""
    return -math.log1p(-check_afr(afr)) / HOURS_PER_YEAR


def second_failure_probability(survivors: int, hours: float, afr: float) -> float:
    """The probability that one of ``survivors`` drives fails within ``hours`` (the window the
    group is degraded), drives failing independently at :func:`hourly_failure_rate`:
    P = 1 − exp(−survivors · λ · hours)."""
    if survivors < 0 or not (hours >= 0):
        raise ValueError(f"expected survivors >= 0 and hours >= 0, not {survivors}, {hours}")
    return -math.expm1(-survivors * hourly_failure_rate(afr) * hours)


def data_loss_probability(layout: Mapping[str, Any], survivors: Optional[int], degraded_h: Optional[float],
                          afr: float, mission_h: float = HOURS_PER_YEAR) -> Optional[float]:
    """P(data loss within ``mission_h`` hours) of the candidate's array (the core's
    ``layout_facts``: layout, drives, fault tolerance; ``survivors``: the members sharing a
    member's redundancy), drives failing at :func:`hourly_failure_rate` and every rebuild
    taking ``degraded_h`` hours exactly, one at a time (:func:`raidlab.exposure.mission_loss_probability`
    with constant repairs). ``None`` for a layout the chain has no model of (one that survives
    two failures other than RAID-6 and RAID-1) or without a rebuild time."""
    from raidlab.exposure import mission_loss_probability

    name, drives, tolerance = layout.get("layout"), layout.get("drives"), layout.get("fault_tolerance")
    if not isinstance(name, str) or not _finite(drives) or not _finite(degraded_h) or degraded_h <= 0:
        return None
    rate = hourly_failure_rate(afr)
    if rate == 0:
        return 0.0
    at_risk = int(survivors) if _finite(survivors) else None
    try:
        return mission_loss_probability(
            name, int(drives), mttf_h=1.0 / rate, repair_h=float(degraded_h), mission_h=mission_h,
            copies=at_risk + 1 if name == "raid1" and at_risk is not None else None, at_risk=at_risk,
            tolerance=int(tolerance) if _finite(tolerance) else None, repair="constant")
    except ValueError:
        return None


def ure_probability(bits_read: float, ure_per_bit: float) -> float:
    """The probability of at least one unrecoverable read error in ``bits_read`` bits, errors
    independent at ``ure_per_bit``: P = 1 − exp(−bits_read · rate)."""
    if not (bits_read >= 0):
        raise ValueError(f"expected bits_read >= 0, not {bits_read}")
    return -math.expm1(-bits_read * check_ure_per_bit(ure_per_bit))


# ---------------------------------------------------------------------------------------------
# Stripes at risk over time (pure functions of a run's rebuild and timeseries)
# ---------------------------------------------------------------------------------------------


def stripes_at_risk_curve(
    window_end_s: Sequence[Any],
    rebuilt_fraction: Sequence[Any],
    *,
    failed_at_s: float,
    started_at_s: float,
    ended_at_s: float,
    member_stripe_fraction: float,
) -> Tuple[List[float], List[float]]:
    """a(t): the fraction of the array's stripes that have lost a unit not yet restored, from
    the failure (t = 0, seconds) to the rebuild's end, as points to join by straight lines.

    a = m (``member_stripe_fraction``: the stripes with a unit on the failed member) from the
    failure until the rebuild starts; then m × (1 − c(t)) at each window's end inside the
    rebuild, c being the timeseries' ``rebuilt_fraction`` (the lost member's units current at
    the window's end; missing values are skipped); 0 when the rebuild ends. Windows ending at
    or after ``ended_at_s`` are left out: what follows (dRAID's healing copy) restores no
    redundancy. Without any window inside the rebuild, a falls in a straight line from its
    start to its end."""
    m = float(member_stripe_fraction)
    if not (0.0 <= m <= 1.0):
        raise ValueError(f"member_stripe_fraction: expected a fraction in [0, 1], not {member_stripe_fraction}")
    failed, started, ended = float(failed_at_s), float(started_at_s), float(ended_at_s)
    if not (math.isfinite(failed) and math.isfinite(started) and math.isfinite(ended)):
        raise ValueError(f"failed_at_s, started_at_s, ended_at_s: expected finite seconds, not "
                         f"{failed_at_s}, {started_at_s}, {ended_at_s}")
    if not failed <= started <= ended:
        raise ValueError(f"started_at_s: expected failed_at_s <= started_at_s <= ended_at_s, not "
                         f"{failed:g}, {started:g}, {ended:g}")
    if len(window_end_s) != len(rebuilt_fraction):
        raise ValueError(f"rebuilt_fraction: expected one value per window end ({len(window_end_s)}), "
                         f"not {len(rebuilt_fraction)}")
    times, at_risk = [0.0], [m]
    if started > failed:
        times.append(started - failed)
        at_risk.append(m)
    for end, fraction in sorted((float(e), float(f)) for e, f in zip(window_end_s, rebuilt_fraction)
                                if _finite_number(e) and _finite_number(f)):
        if started < end < ended:
            times.append(end - failed)
            at_risk.append(m * (1.0 - min(1.0, max(0.0, fraction))))
    times.append(ended - failed)
    at_risk.append(0.0)
    return times, at_risk


def stripe_hours_at_risk(times_s: Sequence[float], at_risk: Sequence[float]) -> float:
    """∫ a(t) dt over the curve's points (:func:`stripes_at_risk_curve`: seconds, fractions
    of the array's stripes) by trapezoids, in stripe-hours: the hours the whole array would
    have to be exposed to match (a rebuilt fraction rising in a straight line from 0 to 1
    over T hours gives m·T/2)."""
    if len(times_s) != len(at_risk):
        raise ValueError(f"at_risk: expected one value per time ({len(times_s)}), not {len(at_risk)}")
    area = 0.0
    for (t0, a0), (t1, a1) in zip(zip(times_s, at_risk), zip(times_s[1:], at_risk[1:])):
        if t1 < t0:
            raise ValueError(f"times_s: expected times in increasing order, not {t0:g} then {t1:g}")
        area += (t1 - t0) * (a0 + a1) / 2.0
    return area / 3600.0


def expected_lost_stripe_fraction(stripe_hours: float, stripe_width: int, fault_tolerance: int,
                                  afr: float) -> Optional[float]:
    """The expected fraction of the array's stripes lost to one more drive failure while
    degraded, for a layout that survives one failure: λ × (W − 1) × ``stripe_hours``, λ the
    per-drive hourly failure rate (:func:`hourly_failure_rate`), W the ``stripe_width``.

    Why W − 1: a stripe still missing its unit of the failed member has W − 1 other units on
    W − 1 different survivors, and survivor s failing at t loses the unrestored stripes that
    hold a unit of s; summed over the survivors that is (W − 1) × a(t) of the stripes, each
    survivor failing at λ. First order in λ·hours (no third failure), drives independent.
    ``None`` for a ``fault_tolerance`` other than 1: with two or more, one more failure loses
    nothing, and a loss needs two more failures within the window."""
    if not _finite_number(stripe_hours) or stripe_hours < 0:
        raise ValueError(f"stripe_hours: expected stripe-hours >= 0, not {stripe_hours}")
    if fault_tolerance != 1:
        return None
    width = int(stripe_width)
    if width < 2:
        raise ValueError(f"stripe_width: expected a stripe of at least 2 units, not {stripe_width}")
    return hourly_failure_rate(afr) * (width - 1) * float(stripe_hours)


def _finite_number(value: Any) -> bool:
    """A finite int or float, numpy's included (a table's cells)."""
    try:
        return not isinstance(value, bool) and value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


# ---------------------------------------------------------------------------------------------
# Pareto front and SLO pick (pure functions of a results table)
# ---------------------------------------------------------------------------------------------


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def pareto_front(times: Sequence[Any], p99s: Sequence[Any]) -> List[int]:
    """Indices of the points (rebuild time, p99) no other point beats: no other is at least as
    good in both and better in one. Points with a missing value are on no front. Indices in
    increasing rebuild time (then p99, then index)."""
    points = [(float(t), float(p), i) for i, (t, p) in enumerate(zip(times, p99s)) if _finite(t) and _finite(p)]
    front = []
    for t, p, i in points:
        dominated = any(ot <= t and op <= p and (ot < t or op < p) for ot, op, j in points if j != i)
        if not dominated:
            front.append((t, p, i))
    return [i for _, _, i in sorted(front)]


@dataclass(frozen=True)
class SloChoice:
    """The SLO pick: ``index`` is the row of the fastest rebuild whose p99 is within the SLO
    (``within`` true), else the row whose p99 comes closest (``within`` false), else ``None``
    (no finished row)."""

    slo_ms: float
    within: bool
    index: Optional[int]
    label: Optional[str]
    text: str


def pick_for_slo(table: "pd.DataFrame", slo_ms: float, *, time: str = "rebuild_time_s", p99: str = "p99_ms",
                 label: str = "candidate") -> SloChoice:
    """The fastest rebuild of ``table`` whose ``p99`` (ms) is at most ``slo_ms`` (ties: the
    lower p99, then the first row); when none is, the row with the lowest p99 (ties: the
    faster rebuild). Rows without both numbers take no part."""
    check_slo_ms(slo_ms)
    rows = [(float(row[time]), float(row[p99]), position, row[label])
            for position, (_, row) in enumerate(table.iterrows()) if _finite(row[time]) and _finite(row[p99])]
    if not rows:
        return SloChoice(slo_ms, False, None, None, "no candidate finished its rebuild: nothing to choose")
    within = [row for row in rows if row[1] <= slo_ms]
    if within:
        best = min(within, key=lambda row: (row[0], row[1], row[2]))
        return SloChoice(slo_ms, True, best[2], str(best[3]),
                         f"fastest rebuild with user p99 within {slo_ms:g} ms: {best[3]} "
                         f"({_duration(best[0])}, p99 {best[1]:.1f} ms)")
    best = min(rows, key=lambda row: (row[1], row[0], row[2]))
    return SloChoice(slo_ms, False, best[2], str(best[3]),
                     f"no candidate keeps user p99 within {slo_ms:g} ms; closest: {best[3]} "
                     f"(p99 {best[1]:.1f} ms, {best[1] - slo_ms:.1f} ms over; rebuild {_duration(best[0])})")


def time_unit(seconds: Sequence[Any]) -> Tuple[float, str]:
    """The unit the table's rebuild times and the Pareto plot's axis share, from the longest
    time: seconds below 2 min, minutes below 2 h, else hours; (seconds per unit, name)."""
    longest = max((float(t) for t in seconds if _finite(t)), default=0.0)
    if longest < 120:
        return 1.0, "s"
    if longest < 2 * 3600:
        return 60.0, "min"
    return 3600.0, "h"


def _duration(seconds: float, unit: Optional[Tuple[float, str]] = None) -> str:
    """A time in ``unit`` (:func:`time_unit`; default: the unit for this time alone)."""
    if not _finite(seconds):
        return "—"
    scale, name = unit if unit is not None else time_unit([seconds])
    return f"{seconds / scale:.2f} {name}" if name == "h" else f"{seconds / scale:.1f} {name}"


# ---------------------------------------------------------------------------------------------
# The base configuration
# ---------------------------------------------------------------------------------------------


@dataclass
class PreparedBase:
    """The configuration every candidate starts from (:func:`prepare_base`)."""

    document: Dict[str, Any]
    #: What was added or changed, in words.
    notes: List[str]
    #: The discipline the configuration names (``vsm`` by default) and the keys of its own it
    #: set, moved to the candidates of that discipline.
    discipline: str
    discipline_settings: Dict[str, Any]
    #: The failure every run has (slot, time).
    fail_drive: int
    fail_at_s: float
    #: Whether that failure is rebuild-plan's (``fail_drive`` / ``fail_at_s`` or the defaults)
    #: rather than the configuration's own: only then must its slot be a member, which
    #: :func:`check_candidates` checks against each candidate's array.
    failure_added: bool = False
    #: The ``[rebuild_plan]`` table, if the configuration had one.
    plan_table: Optional[Dict[str, Any]] = None
    #: What may make the answer other than expected (a failure after the workload's end).
    warnings: List[str] = field(default_factory=list)


def default_fail_at_s(document: Mapping[str, Any]) -> float:
    """When the member fails unless told: at the end of the warm-up (``metrics.warmup_s``); else
    a tenth of the workload's length (``workload.duration_s``, or ``requests`` over a Poisson
    rate); else 60 s."""
    metrics = document.get("metrics", {}) if isinstance(document.get("metrics"), Mapping) else {}
    warmup = metrics.get("warmup_s")
    if _finite(warmup) and warmup > 0:
        return float(warmup)
    workload = document.get("workload", {}) if isinstance(document.get("workload"), Mapping) else {}
    duration = workload.get("duration_s")
    if _finite(duration) and duration > 0:
        return 0.1 * float(duration)
    arrival = workload.get("arrival", {}) if isinstance(workload.get("arrival"), Mapping) else {}
    requests, rate = workload.get("requests"), arrival.get("rate_per_s")
    if _finite(requests) and _finite(rate) and requests > 0 and rate > 0:
        return 0.1 * float(requests) / float(rate)
    return 60.0


def workload_end_s(document: Mapping[str, Any]) -> Optional[Tuple[float, str]]:
    """When the configuration's workload stops issuing requests, and how that is known:
    ``workload.duration_s``, or for a synthetic workload of ``requests`` at a Poisson rate the
    expected end (``requests`` over the rate); ``None`` when neither says (a trace without
    ``duration_s``, a closed loop)."""
    workload = document.get("workload", {}) if isinstance(document.get("workload"), Mapping) else {}
    ends: List[Tuple[float, str]] = []
    duration = workload.get("duration_s")
    if _finite(duration) and duration > 0:
        ends.append((float(duration), f"workload.duration_s = {float(duration):g} s"))
    arrival = workload.get("arrival", {}) if isinstance(workload.get("arrival"), Mapping) else {}
    requests, rate = workload.get("requests"), arrival.get("rate_per_s")
    if ("trace" not in workload and arrival.get("process", "poisson") == "poisson" and _finite(requests)
            and _finite(rate) and requests > 0 and rate > 0):
        end = float(requests) / float(rate)
        ends.append((end, f"about {end:g} s: workload.requests = {requests:g} at {float(rate):g} per second"))
    return min(ends) if ends else None


def prepare_base(
    document: Mapping[str, Any],
    base_dir: Path,
    *,
    fail_at_s: Optional[float] = None,
    fail_drive: Optional[int] = None,
) -> PreparedBase:
    """The run configuration ``document`` made into one that loses a member and rebuilds it:

    * no ``[[failures]]`` (or ``fail_at_s`` / ``fail_drive`` given): member ``fail_drive``
      (default 0) fails at ``fail_at_s`` (default :func:`default_fail_at_s`);
    * no ``array.spares``: one hot spare;
    * ``[rebuild]`` added if absent, with ``end_run = true``: each run ends with its rebuild;
    * the discipline's own keys (``rate_mb_s``, ``[rebuild.<discipline>]``) moved aside, for the
      candidates of that discipline only;
    * relative file paths (traces, drive specs) made absolute from ``base_dir``;
    * a ``[rebuild_plan]`` table taken out (the core does not know it).
    """
    from raidlab.config import PATH_KEYS

    base = copy.deepcopy(dict(document))
    notes: List[str] = []
    plan_table = base.pop("rebuild_plan", None)
    for dotted in PATH_KEYS:
        node: Any = base
        parts = dotted.split(".")
        for part in parts[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get(parts[-1]), str) and not os.path.isabs(node[parts[-1]]):
            node[parts[-1]] = str((base_dir / node[parts[-1]]).resolve())

    array = base.setdefault("array", {})
    if not isinstance(array, dict):
        raise ConfigError("expected a table", key="array")
    if "spares" not in array:
        array["spares"] = 1
        notes.append("added array.spares = 1 (a hot spare to rebuild onto)")

    failures = base.get("failures")
    explicit = fail_at_s is not None or fail_drive is not None
    if explicit or not failures:
        at = default_fail_at_s(base) if fail_at_s is None else float(fail_at_s)
        drive = 0 if fail_drive is None else int(fail_drive)
        if not math.isfinite(at) or at < 0:
            raise ConfigError(f"expected seconds >= 0, not {at}", key="--fail-at")
        # Whether the slot is a member depends on each candidate's array (a candidate may set
        # array.drives): check_candidates checks it. No array has a negative slot.
        if drive < 0:
            members = array.get("drives")
            if isinstance(members, int) and not isinstance(members, bool) and members > 0:
                raise ConfigError(_not_a_member(drive, members), key="--fail-drive")
            raise ConfigError(f"expected a member's slot >= 0, not {drive}", key="--fail-drive")
        if failures:
            notes.append(f"replaced the configuration's failures: drive {drive} fails at {at:g} s")
        else:
            notes.append(f"added a failure: drive {drive} fails at {at:g} s")
        base["failures"] = [{"drive": drive, "at_s": at}]
    else:
        first = next((f for f in failures if isinstance(f, Mapping) and f.get("kind", "drive_fails") == "drive_fails"),
                     None)
        if first is None:
            raise ConfigError("no drive fails in the configuration's failures; give --fail-at", key="failures")
        drive, at = int(first.get("drive", 0)), float(first.get("at_s", 0.0))
        notes.append(f"kept the configuration's failures (first: drive {drive} at {at:g} s)")
    warnings: List[str] = []
    end = workload_end_s(base)
    if end is not None and at >= end[0]:
        given = ("--fail-at" if fail_at_s is not None else
                 "the failure at" if explicit or not failures else "the configuration's first failure, at")
        warnings.append(f"{given} {at:g} s is at or after the end of the workload ({end[1]}): no user request "
                        f"arrives while the array rebuilds, so p50 and p99 are empty (—) and the rebuild time is "
                        f"an idle array's; give --fail-at below {end[0]:g} s to see the users' response time")

    rebuild = base.get("rebuild")
    if rebuild is None:
        rebuild = base["rebuild"] = {}
        notes.append("added [rebuild] (DOR, sequential order, one-track units: the defaults)")
    if not isinstance(rebuild, dict):
        raise ConfigError("expected a table", key="rebuild")
    if rebuild.get("end_run") is not True:
        rebuild["end_run"] = True
        notes.append("set rebuild.end_run = true (each run ends with its rebuild)")
    discipline = str(rebuild.get("discipline", "vsm"))
    settings: Dict[str, Any] = {}
    from raidlab.catalogue import family

    disciplines = set(family("rebuild_disciplines").names) | {c.discipline("") for c in DEFAULT_CANDIDATES}
    for key in list(rebuild):
        value = rebuild[key]
        if key in DISCIPLINE_KEYS.get(discipline, ()) or (key in disciplines and isinstance(value, dict)):
            settings.update(_flat_under(f"rebuild.{key}", rebuild.pop(key)))
        elif any(key in keys for name, keys in DISCIPLINE_KEYS.items()) or (key in disciplines and isinstance(value, dict)):
            rebuild.pop(key)
    return PreparedBase(document=base, notes=notes, discipline=discipline, discipline_settings=settings,
                        fail_drive=drive, fail_at_s=at, failure_added=explicit or not failures,
                        plan_table=dict(plan_table) if isinstance(plan_table, Mapping) else plan_table,
                        warnings=warnings)


def _not_a_member(slot: int, members: int, whose: str = "") -> str:
    """Why failing ``slot`` of an array of ``members`` members starts no rebuild."""
    return (f"expected a member's slot from 0 to {members - 1} ({whose}array.drives = {members}; slots from "
            f"{members} on are hot spares, whose failure needs no rebuild), not {slot}")


def _flat_under(prefix: str, value: Any) -> Dict[str, Any]:
    if isinstance(value, Mapping):
        flat: Dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flat_under(f"{prefix}.{key}", item))
        return flat
    return {prefix: value}


def measure_media_rate_mb_s(drive: Mapping[str, Any]) -> float:
    """The drive's sustained read rate, MB/s (10⁶ B): a pilot run of :data:`PILOT_READS`
    reads of :data:`PILOT_READ_KIB` KiB at uniform random places on one drive, one at a time
    (so seeks are in it, as they are between a rebuild's tracks, but at most a few %)."""
    import raidlab

    size_kib = PILOT_READ_KIB
    while True:
        config = {
            "seed": 1,
            "array": {"layout": "raid0", "drives": 1, "stripe_unit_kib": size_kib},
            "drive": copy.deepcopy(dict(drive)),
            "workload": {"requests": PILOT_READS, "size_kib": size_kib, "read_fraction": 1.0, "align_kib": 4,
                         "arrival": {"process": "closed", "outstanding": 1}},
        }
        try:
            summary = raidlab.run(config).summary
        except ConfigError:
            if size_kib <= 256:
                raise
            size_kib //= 8  # a drive smaller than the reads
            continue
        return PILOT_READS * size_kib * 1024 / 1e6 / float(summary["simulated_seconds"])


# ---------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------

#: Columns of the results table (plan.csv, plan.parquet), in order.
COLUMNS = (
    "candidate", "discipline", "status", "rebuild_time_s", "p50_ms", "p99_ms", "mean_ms", "requests_during_rebuild",
    "healing_time_s", "healing_p50_ms", "healing_p99_ms", "layout", "stripe_width", "member_stripe_fraction",
    "degraded_s", "survivors", "survivor_read_bytes", "survivor_read_source", "p_second_failure", "p_ure",
    "p_data_loss", "stripe_hours_at_risk", "expected_lost_stripe_fraction", "pareto", "outcome", "run_id", "error",
    "settings",
)


@dataclass
class PlanOutcome:
    """What :func:`run_plan` did and found."""

    directory: Path
    table: "pd.DataFrame"
    candidates: List[Candidate]
    base: PreparedBase
    afr: float
    ure_per_bit: float
    media_rate_mb_s: Optional[float]
    slo: Optional[SloChoice]
    pareto: List[int]
    files: List[Path]
    wall_s: float
    executor: str
    ran: int
    skipped: int
    failed: int
    #: What may make the answer other than expected, in words (also printed as it is found).
    warnings: List[str] = field(default_factory=list)
    #: Candidates left out because an earlier one sets the same (label, the earlier's label).
    repeated: List[Tuple[str, str]] = field(default_factory=list)
    #: Runs the candidates make: fewer than the candidates when settings written differently
    #: resolve to the same configuration (one run stands for them).
    runs: Optional[int] = None
    #: The mission time of ``p_data_loss``, years.
    mission_years: float = DEFAULT_MISSION_YEARS
    #: What was changed in single candidates, in words (a spare drive for dRAID's healing).
    candidate_notes: List[str] = field(default_factory=list)
    #: Each completed rebuild's a(t) by candidate label: (seconds since the failure, fraction
    #: of the array's stripes at risk), as :func:`stripes_at_risk_curve` gives it.
    curves: Dict[str, Tuple[List[float], List[float]]] = field(default_factory=dict)

    def as_json(self) -> Dict[str, Any]:
        rows = [{key: _json_cell(value) for key, value in row.items()} for row in self.table.to_dict("records")]
        return {
            "directory": str(self.directory),
            "failure": {"drive": self.base.fail_drive, "at_s": self.base.fail_at_s},
            "changes": list(self.base.notes) + list(self.candidate_notes),
            "warnings": list(self.warnings),
            "left_out": [{"candidate": label, "same_as": same} for label, same in self.repeated],
            "afr": self.afr,
            "mttf_hours": 1.0 / hourly_failure_rate(self.afr) if self.afr > 0 else None,
            "mission_years": self.mission_years,
            "ure_per_bit": self.ure_per_bit,
            "media_rate_mb_s": self.media_rate_mb_s,
            "candidates": rows,
            "pareto_front": [rows[i]["candidate"] for i in self.pareto],
            "slo": None if self.slo is None else {"p99_ms": self.slo.slo_ms, "within": self.slo.within,
                                                   "candidate": self.slo.label, "text": self.slo.text},
            "files": [str(path) for path in self.files],
        }


def _json_cell(value: Any) -> Any:
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is not None and not isinstance(value, (bool, int, float, str)):
        try:
            import pandas as pd

            if pd.isna(value):
                return None
        except (TypeError, ValueError):
            pass
        return str(value)
    return value


def _survivors_at_risk(layout: Mapping[str, Any], member: Any) -> Optional[int]:
    """How many members share a redundancy set with the failed ``member``: those whose failure
    while it is degraded takes the data closer to loss, from the core's ``exposure`` of the
    candidate's layout (``_core.layout_facts``; RAID-5 of n drives: n − 1, RAID-1: copies − 1,
    RAID-0: none). ``None`` when the core did not examine that member and members differ."""
    exposure = layout.get("exposure") or []
    if _finite(member):
        for entry in exposure:
            if entry["member"] == int(member):
                return int(entry["count"])
    if exposure and layout.get("every_member_examined") and layout.get("same_exposure_count"):
        return int(exposure[0]["count"])
    return None


def _survivor_read_bytes(run_dir: Path, member: Any, target: Any) -> Optional[float]:
    """Bytes the rebuild read from the survivors: the drives table's ``rebuild_mb`` of every
    slot but the failed member and the rebuild's target."""
    import pandas as pd

    path = run_dir / "drives.parquet"
    if not path.is_file():
        return None
    try:
        drives = pd.read_parquet(path, columns=["drive", "rebuild_mb"], page_checksum_verification=True)
    except Exception:  # noqa: BLE001 - an unreadable table: fall back to the capacity
        return None
    keep = ~drives["drive"].isin([member, target])
    return float(drives.loc[keep, "rebuild_mb"].sum()) * 1e6


def _rebuilt_fraction_series(run_dir: Path) -> Optional[Tuple[List[float], List[float]]]:
    """The run's timeseries ``window_end_s`` and ``rebuilt_fraction`` (seconds, fractions);
    ``None`` when the run directory has no such table or column (a run of an older raidlab)."""
    import pandas as pd

    path = run_dir / "timeseries.parquet"
    if not path.is_file():
        return None
    try:
        series = pd.read_parquet(path, columns=["window_end_s", "rebuilt_fraction"], page_checksum_verification=True)
    except Exception:  # noqa: BLE001 - no such column, or an unreadable table: a straight line instead
        return None
    return series["window_end_s"].astype(float).tolist(), series["rebuilt_fraction"].astype(float).tolist()


def _at_risk_curve(source: Mapping[str, Any], run_dir: Optional[Path],
                   layout: Mapping[str, Any]) -> Optional[Tuple[List[float], List[float]]]:
    """a(t) of a completed first rebuild (:func:`stripes_at_risk_curve`) from its sweep row
    (``rebuild.failed_at_s`` … ``rebuild.ended_at_s``), its run's timeseries and the layout's
    ``member_stripe_fraction``; ``None`` when one of them is missing."""
    failed, started, ended = (source.get(f"rebuild.{name}") for name in ("failed_at_s", "started_at_s", "ended_at_s"))
    fraction = layout.get("member_stripe_fraction")
    if not all(_finite_number(value) for value in (failed, ended, fraction)):
        return None
    started = started if _finite_number(started) else failed
    series = _rebuilt_fraction_series(run_dir) if run_dir is not None else None
    ends, fractions = series if series is not None else ([], [])
    try:
        return stripes_at_risk_curve(ends, fractions, failed_at_s=float(failed), started_at_s=float(started),
                                     ended_at_s=float(ended), member_stripe_fraction=float(fraction))
    except ValueError:
        return None


def _no_rebuild(settings: Mapping[str, Any], base_document: Mapping[str, Any]) -> str:
    """Why a run has no rebuild, in words: no spare to rebuild onto, or no rebuild at all."""
    array = base_document.get("array", {}) if isinstance(base_document.get("array"), Mapping) else {}
    spares = settings.get("array.spares", array.get("spares"))
    if _finite(spares) and spares == 0:
        return "no rebuild: no spare to rebuild onto (array.spares = 0)"
    return "no rebuild"


def plan_rows(
    candidates: Sequence[Candidate],
    disciplines: Sequence[str],
    settings: Sequence[Mapping[str, Any]],
    summary: "pd.DataFrame",
    run_dirs: Sequence[Optional[Path]],
    base_document: Mapping[str, Any],
    *,
    layouts: Sequence[Mapping[str, Any]],
    afr: float,
    ure_per_bit: float,
    mission_h: float = HOURS_PER_YEAR,
    curves: Optional[Dict[str, Tuple[List[float], List[float]]]] = None,
) -> "pd.DataFrame":
    """The results table: one row per candidate from its sweep row (``summary``, in candidate
    order), run directory (for the survivors' reads and the rebuilt fraction over time) and
    layout (``layouts``: the core's ``_core.layout_facts`` of its configuration, for the
    members at risk, a member's bytes, the stripe width and the stripes on a member), with the
    exposure computed (P(data loss) within ``mission_h`` hours, the stripe-hours at risk).
    ``curves``, if given, receives each completed rebuild's a(t) by candidate label (seconds
    since the failure, fractions of the array's stripes) for the plot."""
    import pandas as pd

    from raidlab.config import toml_literal

    rows = []
    for number, candidate in enumerate(candidates):
        source = summary.iloc[number].to_dict()
        row: Dict[str, Any] = {key: None for key in COLUMNS}
        row.update(candidate=candidate.label, discipline=disciplines[number], run_id=source.get("run_id"),
                   settings=", ".join(f"{k}={toml_literal(v)}" for k, v in settings[number].items()))
        layout = layouts[number]
        row.update(layout=layout.get("layout"), stripe_width=layout.get("stripe_width"),
                   member_stripe_fraction=layout.get("member_stripe_fraction"))
        status = source.get("status")
        # A run without a rebuild has no outcome: None, or NaN in a table where others have one.
        outcome = _json_cell(source.get("rebuild.outcome"))
        row["outcome"] = outcome
        if status != "done":
            row["status"] = status or "pending"
            row["error"] = source.get("error")
            rows.append(row)
            continue
        if outcome != "complete":
            row["status"] = f"rebuild {outcome}" if outcome is not None else _no_rebuild(settings[number], base_document)
            rows.append(row)
            continue
        row["status"] = "done"
        took = source.get("rebuild.rebuild_time_s")
        row["rebuild_time_s"] = float(took) if _finite(took) else None
        for column, metric in (("p50_ms", "p50"), ("p99_ms", "p99"), ("mean_ms", "mean"), ("requests_during_rebuild", "count")):
            value = source.get(f"response_ms_by_period.rebuilding.{metric}")
            row[column] = value if _finite(value) else None
        ended, failed = source.get("rebuild.ended_at_s"), source.get("rebuild.failed_at_s")
        degraded = float(ended) - float(failed) if _finite(ended) and _finite(failed) else row["rebuild_time_s"]
        row["degraded_s"] = degraded
        # dRAID's healing copy: the summary's healing_time_s and healing period, present only
        # for runs that healed.
        healing = source.get("healing_time_s")
        if _finite_number(healing):
            row["healing_time_s"] = float(healing)
            for column, metric in (("healing_p50_ms", "p50"), ("healing_p99_ms", "p99")):
                value = source.get(f"response_ms_by_period.healing.{metric}")
                row[column] = float(value) if _finite_number(value) else None
        survivors = _survivors_at_risk(layout, source.get("rebuild.member"))
        row["survivors"] = survivors
        measured = None
        if run_dirs[number] is not None:
            measured = _survivor_read_bytes(run_dirs[number], source.get("rebuild.member"), source.get("rebuild.target_slot"))
        if measured is not None and measured > 0:
            # A run that healed read the distributed spare for the copy too, and the drives
            # table does not tell the two apart: the figure is the rebuild's reads and the copy's.
            row["survivor_read_bytes"] = measured
            row["survivor_read_source"] = "measured, with healing" if row["healing_time_s"] is not None else "measured"
        else:
            row["survivor_read_bytes"] = survivors * float(layout["member_bytes"]) if survivors is not None else None
            row["survivor_read_source"] = "capacity"
        if degraded is not None and survivors is not None:
            row["p_second_failure"] = second_failure_probability(survivors, degraded / 3600.0, afr)
        if row["survivor_read_bytes"] is not None:
            row["p_ure"] = ure_probability(8.0 * row["survivor_read_bytes"], ure_per_bit)
        if degraded is not None:
            row["p_data_loss"] = data_loss_probability(layout, survivors, degraded / 3600.0, afr, mission_h)
        curve = _at_risk_curve(source, run_dirs[number], layout)
        if curve is not None:
            row["stripe_hours_at_risk"] = stripe_hours_at_risk(*curve)
            width, tolerance = layout.get("stripe_width"), layout.get("fault_tolerance")
            if _finite_number(width) and _finite_number(tolerance):
                row["expected_lost_stripe_fraction"] = expected_lost_stripe_fraction(
                    row["stripe_hours_at_risk"], int(width), int(tolerance), afr)
            if curves is not None:
                curves[candidate.label] = curve
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    front = set(pareto_front(table["rebuild_time_s"].tolist(), table["p99_ms"].tolist()))
    table["pareto"] = [index in front for index in range(len(table))]
    for column in ("status", "candidate", "discipline", "layout", "survivor_read_source", "outcome", "run_id", "error",
                   "settings"):
        table[column] = table[column].astype("string")
    for column in ("rebuild_time_s", "p50_ms", "p99_ms", "mean_ms", "degraded_s", "survivor_read_bytes",
                   "p_second_failure", "p_ure", "p_data_loss", "requests_during_rebuild", "survivors",
                   "healing_time_s", "healing_p50_ms", "healing_p99_ms", "stripe_width", "member_stripe_fraction",
                   "stripe_hours_at_risk", "expected_lost_stripe_fraction"):
        table[column] = pd.to_numeric(table[column], errors="coerce").astype("float64")
    return table


def check_candidates(
    candidates: Sequence[Candidate],
    base: PreparedBase,
    base_dir: Path,
    media_rate_mb_s: Optional[float],
    extra: Sequence[str] = (),
    notes: Optional[List[str]] = None,
) -> Tuple[List[str], List[Dict[str, Any]], List[Dict[str, Any]]]:
    """Each candidate's discipline, settings (the overrides it runs with) and layout (the
    core's ``_core.layout_facts`` of its configuration), checked before anything runs: a
    discipline this build does not know, or a configuration the core refuses, is a
    :class:`ConfigError` naming the candidate; a failure rebuild-plan added (``--fail-drive``)
    of a slot that is not one of the candidate's members is one naming ``--fail-drive``.

    A candidate with distributed spares (dRAID: the core's ``layout_facts``) whose array has no
    spare drive (``array.spares = 0`` in the base, the candidate not setting it) and no
    replacement arriving (``spare_arrives``) is given ``array.spares = 1``, so that its healing
    copy onto a drive is measured (:func:`_healing_spare`); ``notes``, if given, receives a line
    saying so for each."""
    from raidlab import _core
    from raidlab.catalogue import family
    from raidlab.config import apply_overrides, parse_toml, to_toml
    from raidlab.config import toml_literal
    from raidlab.experiments.sweep import _core_message

    known = family("rebuild_disciplines").names
    text = to_toml(base.document)
    disciplines, settings, layouts = [], [], []
    layouts_known: Dict[str, Dict[str, Any]] = {}
    for candidate in candidates:
        discipline = candidate.discipline(base.discipline)
        if discipline not in known:
            defaults = " (the default set needs it: name the candidates with --policy until it is built in)" if any(
                c.discipline("") == discipline for c in DEFAULT_CANDIDATES) else ""
            raise ConfigError(f"candidate {candidate.label!r}: this build of raidlab has no rebuild discipline "
                              f"{discipline!r}{defaults}; known: {', '.join(known)} (raidlab list rebuild_disciplines)",
                              key="rebuild.discipline")
        values: Dict[str, Any] = {}
        if discipline == base.discipline:
            values.update(base.discipline_settings)
        values.update(candidate.resolved(media_rate_mb_s))
        values["rebuild.discipline"] = discipline
        overrides = [f"{key}={toml_literal(value)}" for key, value in values.items()] + list(extra)
        try:
            candidate_text = apply_overrides(text, overrides)
            layout = _candidate_layout(candidate_text, base, overrides, base_dir, layouts_known)
            if _healing_spare(parse_toml(candidate_text), values, int(layout.get("distributed_spares") or 0)):
                values["array.spares"] = 1
                overrides = [f"{key}={toml_literal(value)}" for key, value in values.items()] + list(extra)
                candidate_text = apply_overrides(text, overrides)
                layout = _candidate_layout(candidate_text, base, overrides, base_dir, layouts_known)
                if notes is not None:
                    notes.append(f"candidate {candidate.label!r}: set array.spares = 1 (a spare drive for the "
                                 "healing copy off its distributed spare, at hand when the rebuild ends)")
        except ConfigError as error:
            raise ConfigError(f"candidate {candidate.label!r}: {_core_message(error)}", key=error.key) from None
        members = int(layout["drives"])
        if base.failure_added and not 0 <= base.fail_drive < members:
            # Name the candidate only when its own keys set the array: otherwise the slot is
            # wrong for every candidate alike.
            if any(key.startswith("array.") for key in values):
                raise ConfigError(f"candidate {candidate.label!r}: {_not_a_member(base.fail_drive, members, 'its ')}",
                                  key="--fail-drive")
            raise ConfigError(_not_a_member(base.fail_drive, members), key="--fail-drive")
        try:
            _core.resolve_config(candidate_text, str(base_dir))
        except ConfigError as error:
            raise ConfigError(f"candidate {candidate.label!r}: {_core_message(error)}", key=error.key) from None
        disciplines.append(discipline)
        settings.append(values)
        layouts.append(layout)
    return disciplines, settings, layouts


def _healing_spare(document: Mapping[str, Any], values: Mapping[str, Any], distributed_spares: int) -> bool:
    """Whether a candidate's configuration (``document``, its keys ``values``) needs a spare
    drive added for its dRAID healing copy to be measured: the layout has distributed spares
    (``distributed_spares``, the core's ``layout_facts``),
    healing is on (``rebuild.healing``, default true), the array has no spare drive, no
    ``spare_arrives`` brings one, and the candidate did not set ``array.spares`` itself (a
    candidate without a spare drive on purpose keeps it so)."""
    array = document.get("array") if isinstance(document.get("array"), Mapping) else {}
    rebuild = document.get("rebuild") if isinstance(document.get("rebuild"), Mapping) else {}
    failures = document.get("failures") if isinstance(document.get("failures"), list) else []
    if "array.spares" in values or distributed_spares <= 0 or rebuild.get("healing", True) is False:
        return False
    spares = array.get("spares", 0)
    if not _finite(spares) or spares > 0:
        return False
    return not any(isinstance(f, Mapping) and f.get("kind") == "spare_arrives" for f in failures)


def _candidate_layout(candidate_text: str, base: PreparedBase, overrides: Sequence[str], base_dir: Path,
                      known: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The core's facts of a candidate's layout (``_core.layout_facts``). A failure
    rebuild-plan added at a slot past the members and the spares is refused by the core; the
    members are then counted with member 0 failing instead, for the check of the slot to
    name them. ``known``: the facts found so far, by the tables they depend on."""
    from raidlab import _core
    from raidlab.config import apply_overrides, parse_toml, to_toml

    # The layout depends on [array] and [drive] only, the members examined on the failures:
    # candidates that differ in their rebuild settings alone ask the core once (it builds the
    # drive model, which for an imported drive means reading its specification).
    document = parse_toml(candidate_text)
    key = to_toml({name: document[name] for name in ("array", "drive", "failures") if name in document})
    if key not in known:
        try:
            known[key] = _core.layout_facts(candidate_text, str(base_dir))
        except ConfigError as error:
            if not (base.failure_added and error.key == "failures[0].drive"):
                raise
            member_0_failing = copy.deepcopy(base.document)
            member_0_failing["failures"] = [{"drive": 0, "at_s": base.fail_at_s}]
            known[key] = _core.layout_facts(apply_overrides(to_toml(member_0_failing), overrides), str(base_dir))
    return known[key]


def _without_repeats(
    candidates: Sequence[Candidate], disciplines: Sequence[str], settings: Sequence[Mapping[str, Any]],
) -> Tuple[List[Candidate], List[str], List[Dict[str, Any]], List[Tuple[str, str]]]:
    """The candidates without those that set the same keys to the same values as an earlier
    one (``--policy pcm --policy pcm``): one run would stand for both, and the counts of runs
    would not add up to the candidates. Also the repeats left out: (label, earlier label)."""
    from raidlab.config import toml_literal

    seen: Dict[Tuple[Tuple[str, str], ...], str] = {}
    kept: Tuple[List[Candidate], List[str], List[Dict[str, Any]]] = ([], [], [])
    repeated: List[Tuple[str, str]] = []
    for candidate, discipline, values in zip(candidates, disciplines, settings):
        key = tuple(sorted((name, toml_literal(value)) for name, value in values.items()))
        if key in seen:
            repeated.append((candidate.label, seen[key]))
            continue
        seen[key] = candidate.label
        kept[0].append(candidate)
        kept[1].append(discipline)
        kept[2].append(dict(values))
    return kept[0], kept[1], kept[2], repeated


ProgressHook = Callable[[str, Mapping[str, int]], None]


def run_plan(
    config: Union[str, "os.PathLike[str]"],
    output: Optional[Union[str, "os.PathLike[str]"]] = None,
    *,
    candidates: Optional[Sequence[Candidate]] = None,
    candidates_file: Optional[Union[str, "os.PathLike[str]"]] = None,
    overrides: Sequence[str] = (),
    fail_at_s: Optional[float] = None,
    fail_drive: Optional[int] = None,
    afr: float = DEFAULT_AFR,
    ure_per_bit: float = DEFAULT_URE_PER_BIT,
    p99_slo_ms: Optional[float] = None,
    mission_years: float = DEFAULT_MISSION_YEARS,
    jobs: Optional[int] = None,
    scheduler: Optional[str] = None,
    command_line: Optional[Sequence[str]] = None,
    progress: Optional[ProgressHook] = None,
    warn: Optional[Callable[[str], None]] = None,
) -> PlanOutcome:
    """Simulate the failure and rebuild of ``config`` under each candidate and write the
    output directory (default ``runs/rebuild-plan-<config stem>``): the sweep's files
    (``sweep.toml``, ``sweep.json``, ``summary.parquet``, ``runs/``), ``base.toml`` (the
    configuration every candidate starts from), ``plan.csv``, ``plan.parquet``, ``plan.json``
    and ``pareto.png`` / ``pareto.svg``.

    Candidates: ``candidates``, else those of ``candidates_file``'s ``[rebuild_plan]`` table,
    else the configuration's own ``[rebuild_plan]`` table, else :data:`DEFAULT_CANDIDATES`.
    ``overrides`` (``key=value``) apply to the configuration first, as ``raidlab run --set``.
    A candidate that sets the same as an earlier one is left out (it would be the same run).
    ``warn`` is called with each warning as it is found, before anything runs (a failure
    after the workload's end); they are also in the outcome's ``warnings``.
    """
    from raidlab.config import load_config, parse_toml, read_utf8, to_toml
    from raidlab.config import toml_literal
    from raidlab.experiments.sweep import load_sweep_spec, run_sweep

    started = time.monotonic()
    afr = check_afr(afr)
    ure_per_bit = check_ure_per_bit(ure_per_bit)
    if p99_slo_ms is not None:
        check_slo_ms(p99_slo_ms)
    mission_years = check_mission_years(mission_years)
    loaded = load_config(config, overrides=overrides)
    name = loaded.name or "config"
    base = prepare_base(parse_toml(loaded.text, loaded.path), loaded.base_dir, fail_at_s=fail_at_s,
                        fail_drive=fail_drive)
    warnings = list(base.warnings)

    chosen: List[Candidate]
    if candidates:
        chosen = list(candidates)
    elif candidates_file is not None:
        path = Path(candidates_file)
        document = parse_toml(read_utf8(path), path)
        if "rebuild_plan" not in document:
            raise ConfigError(f"{path}: no [rebuild_plan] table", key="rebuild_plan")
        chosen = candidates_from_table(document["rebuild_plan"])
    elif base.plan_table is not None:
        chosen = candidates_from_table(base.plan_table)
    else:
        chosen = list(DEFAULT_CANDIDATES)
    chosen = _unique_labels(chosen)

    # Unknown disciplines first: they need no pilot run to be found.
    from raidlab.catalogue import family

    known = family("rebuild_disciplines").names
    for candidate in chosen:
        if candidate.discipline(base.discipline) not in known:
            check_candidates([candidate], base, loaded.base_dir, None)
    media_rate = None
    if any(candidate.needs_media_rate() for candidate in chosen):
        media_rate = measure_media_rate_mb_s(base.document.get("drive", {}))
    candidate_notes: List[str] = []
    disciplines, settings, layouts = check_candidates(chosen, base, loaded.base_dir, media_rate, notes=candidate_notes)
    layout_of = {candidate.label: layout for candidate, layout in zip(chosen, layouts)}  # labels are unique
    chosen, disciplines, settings, repeated = _without_repeats(chosen, disciplines, settings)
    warnings += [f"candidate {label!r} sets the same as {same!r}: left out (it would be the same run)"
                 for label, same in repeated]
    if warn is not None:
        for warning in warnings:
            warn(warning)

    directory = Path(output) if output is not None else Path("runs") / f"rebuild-plan-{name}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(directory), errno=error.errno) from None
    from raidlab.results.store import atomic_write_text

    header = (f"# The configuration every candidate of `raidlab rebuild-plan` starts from: {loaded.path or name}\n"
              f"# with {'; '.join(base.notes) or 'nothing changed'}.\n")
    atomic_write_text(directory / "base.toml", header + to_toml(base.document))
    points = "\n".join("[[points]]\n" + "\n".join(f"{json.dumps(key)} = {toml_literal(value)}"
                                                  for key, value in values.items()) + "\n"
                       for values in settings)
    spec_text = (f'# raidlab rebuild-plan: one point per candidate ({", ".join(c.label for c in chosen)}).\n'
                 f'# Run it again with `raidlab sweep sweep.toml -o .` from this directory.\n'
                 f'base = "base.toml"\nname = {json.dumps("rebuild-plan-" + name)}\n\n{points}')
    spec = load_sweep_spec(directory / "rebuild-plan.toml", text=spec_text)
    outcome = run_sweep(spec, directory, jobs=jobs, scheduler=scheduler,
                        command_line=list(command_line) if command_line is not None else None, progress=progress)

    run_dirs = [outcome.plan.output / "runs" / str(row["run_id"]) for row in outcome.plan.rows]
    curves: Dict[str, Tuple[List[float], List[float]]] = {}
    table = plan_rows(chosen, disciplines, settings, outcome.table, run_dirs, base.document,
                      layouts=[layout_of[candidate.label] for candidate in chosen], afr=afr, ure_per_bit=ure_per_bit,
                      mission_h=mission_years * HOURS_PER_YEAR, curves=curves)
    front = [i for i in pareto_front(table["rebuild_time_s"].tolist(), table["p99_ms"].tolist())]
    slo = pick_for_slo(table, p99_slo_ms) if p99_slo_ms is not None else None

    files = _write_results(directory, table)
    files += draw_pareto(table, directory / "pareto", title=f"Rebuild plan: {name}",
                         slo_ms=p99_slo_ms, chosen=None if slo is None or not slo.within else slo.index)
    if curves:
        files += draw_stripes_at_risk(curves, directory / "stripes-at-risk", title=f"Stripes at risk: {name}")
    else:
        # No rebuild completed: an earlier plan's figure in this directory would describe other runs.
        for suffix in (".png", ".svg"):
            (directory / f"stripes-at-risk{suffix}").unlink(missing_ok=True)
    result = PlanOutcome(directory=directory, table=table, candidates=chosen, base=base, afr=afr,
                         ure_per_bit=ure_per_bit, media_rate_mb_s=media_rate, slo=slo, pareto=front, files=files,
                         wall_s=time.monotonic() - started, executor=outcome.executor, ran=outcome.ran,
                         skipped=outcome.skipped, failed=outcome.failed, warnings=warnings, repeated=repeated,
                         runs=len(outcome.plan.tasks), mission_years=mission_years,
                         candidate_notes=candidate_notes, curves=curves)
    atomic_write_text(directory / "plan.json", json.dumps(result.as_json(), indent=2) + "\n")
    result.files.append(directory / "plan.json")
    return result


def _write_results(directory: Path, table: "pd.DataFrame") -> List[Path]:
    from raidlab.results.store import atomic_write_text, write_summary

    atomic_write_text(directory / "plan.csv", table.to_csv(index=False))
    return [directory / "plan.csv", write_summary(directory / "plan.parquet", table)]


def draw_pareto(table: "pd.DataFrame", output_stem: Path, *, title: str = "Rebuild plan",
                slo_ms: Optional[float] = None, chosen: Optional[int] = None) -> List[Path]:
    """Rebuild time against user p99 while rebuilding, one labelled point per candidate, the
    Pareto front drawn through its points (and the SLO line, the pick ringed): PNG and SVG."""
    from raidlab.experiments.sweep_plots import save_png_and_svg

    return save_png_and_svg(pareto_figure(table, title=title, slo_ms=slo_ms, chosen=chosen), output_stem)


def pareto_figure(table: "pd.DataFrame", *, title: str = "Rebuild plan", slo_ms: Optional[float] = None,
                  chosen: Optional[int] = None) -> Any:
    """The figure :func:`draw_pareto` writes (a matplotlib ``Figure``): rebuild times in the
    unit of the table printed beside it (:func:`time_unit`), every label inside the axes."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.6, 5.2), layout="constrained")
    axes = figure.subplots()
    times = table["rebuild_time_s"].tolist()
    p99s = table["p99_ms"].tolist()
    scale, unit = time_unit(times)  # the table's unit
    front = pareto_front(times, p99s)
    # Candidates that land on one point (md at a floor above the drive's rate and PCM, say)
    # share one label; labels of points in x order alternate above and below them, and go
    # to the left of points in the right half, so that they stay inside the axes.
    places: Dict[Tuple[float, float], List[int]] = {}
    for index, (t, p) in enumerate(zip(times, p99s)):
        if _finite(t) and _finite(p):
            places.setdefault((round(float(t), 6), round(float(p), 6)), []).append(index)
    xs = [t / scale for t, _ in places]
    middle = (min(xs) + max(xs)) / 2 if xs else 0.0
    labels = []
    for number, ((t, p), indices) in enumerate(sorted(places.items())):
        on_front = any(index in front for index in indices)
        axes.scatter([t / scale], [p], s=46 if on_front else 30, zorder=3,
                     color="tab:red" if on_front else "tab:blue", edgecolor="black", linewidth=0.5)
        label = " = ".join(str(table["candidate"].iloc[index]) for index in indices)
        left = len(places) > 1 and t / scale > middle
        labels.append(axes.annotate(label, (t / scale, p), xytext=(-5 if left else 5, 4 if number % 2 == 0 else -11),
                                    textcoords="offset points", fontsize=8, ha="right" if left else "left"))
    finite = [float(p) for p in p99s if _finite(p) and p > 0]
    if finite and max(finite) / min(finite) > 10:
        axes.set_yscale("log")  # one setting's p99 far above the rest would flatten them
    if front:
        axes.plot([times[i] / scale for i in front], [p99s[i] for i in front], drawstyle="steps-post",
                  color="tab:red", linewidth=1.2, zorder=2, label="Pareto front")
    if slo_ms is not None:
        axes.axhline(slo_ms, color="gray", linestyle="--", linewidth=1, label=f"p99 SLO {slo_ms:g} ms")
    if chosen is not None:
        axes.scatter([times[chosen] / scale], [p99s[chosen]], s=180, facecolors="none", edgecolors="green",
                     linewidth=1.6, zorder=4, label="fastest within the SLO")
    axes.margins(x=0.15, y=0.08)  # room for the labels of the outermost points
    axes.set_xlabel(f"rebuild time ({unit})")
    axes.set_ylabel("user p99 response while rebuilding (ms)")
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    if front or slo_ms is not None:
        axes.legend(fontsize=8, loc="best")
    _labels_inside(figure, axes, labels)
    return figure


def _labels_inside(figure: Any, axes: Any, labels: Sequence[Any]) -> None:
    """Widen the axes' limits until every label lies inside them (a long label beside the
    outermost point would run past the axes, or out of the figure)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    for _ in range(8):
        canvas.draw()  # lays the figure out (constrained): the labels' extents in pixels
        box = axes.get_window_extent()
        over_left = max([box.x0 - label.get_window_extent().x0 for label in labels] + [0.0])
        over_right = max([label.get_window_extent().x1 - box.x1 for label in labels] + [0.0])
        over_bottom = max([box.y0 - label.get_window_extent().y0 for label in labels] + [0.0])
        over_top = max([label.get_window_extent().y1 - box.y1 for label in labels] + [0.0])
        if max(over_left, over_right, over_bottom, over_top) <= 0.5:
            return
        pad = 4.0  # pixels beyond what is over
        for over, (low, high), span, setter, log in (
                ((over_left, over_right), axes.get_xlim(), box.width, axes.set_xlim, axes.get_xscale() == "log"),
                ((over_bottom, over_top), axes.get_ylim(), box.height, axes.set_ylim, axes.get_yscale() == "log")):
            lower, upper = (over[0] + pad if over[0] > 0.5 else 0.0), (over[1] + pad if over[1] > 0.5 else 0.0)
            if not lower and not upper:
                continue
            # The data range keeps its pixels minus what the labels need either side.
            keep = max(span - lower - upper, span * 0.3)
            if log:
                low_log, high_log = math.log10(low), math.log10(high)
                per_pixel = (high_log - low_log) / keep
                setter(10 ** (low_log - lower * per_pixel), 10 ** (high_log + upper * per_pixel))
            else:
                per_pixel = (high - low) / keep
                setter(low - lower * per_pixel, high + upper * per_pixel)


def draw_stripes_at_risk(curves: Mapping[str, Tuple[Sequence[float], Sequence[float]]], output_stem: Path, *,
                         title: str = "Stripes at risk") -> List[Path]:
    """a(t), the fraction of the array's stripes missing a unit not yet restored, against the
    time since the failure, one line per candidate with a rebuild (``curves``: label → (seconds,
    fractions), :func:`stripes_at_risk_curve`): PNG and SVG."""
    from raidlab.experiments.sweep_plots import save_png_and_svg

    return save_png_and_svg(stripes_at_risk_figure(curves, title=title), output_stem)


def stripes_at_risk_figure(curves: Mapping[str, Tuple[Sequence[float], Sequence[float]]], *,
                           title: str = "Stripes at risk") -> Any:
    """The figure :func:`draw_stripes_at_risk` writes (a matplotlib ``Figure``): times in the
    unit :func:`time_unit` picks for the longest degraded window; the area under each line is
    the candidate's ``stripe_hours_at_risk``."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.6, 4.6), layout="constrained")
    axes = figure.subplots()
    scale, unit = time_unit([times[-1] for times, _ in curves.values() if len(times)])
    # Lines drawn on top of one another (two candidates of one layout and discipline) would
    # hide one: a dashed style for every other line keeps both visible.
    for number, (label, (times, at_risk)) in enumerate(curves.items()):
        axes.plot([t / scale for t in times], list(at_risk), label=str(label), linewidth=1.4,
                  linestyle="-" if number % 2 == 0 else "--")
    axes.set_xlabel(f"time since the failure ({unit})")
    axes.set_ylabel("stripes at risk, a(t) (fraction of the array's)")
    axes.set_ylim(0.0, 1.05 * max([max(a) for _, a in curves.values() if len(a)] + [1e-9]))
    axes.set_xlim(left=0.0)
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    if curves:
        axes.legend(fontsize=8, loc="best")
    return figure


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


class _PolicyAction(argparse.Action):
    """``--policy NAME`` starts a candidate; ``--with KEY=VALUE`` adds a setting to the last."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        policies = list(getattr(namespace, "policies", None) or [])
        if option_string == "--policy":
            policies.append({"name": str(values), "with": []})
        else:
            if not policies:
                parser.error("--with sets a key of the candidate named by the --policy before it: give --policy first")
            policies[-1]["with"].append(str(values))
        namespace.policies = policies


def _candidates_from_arguments(policies: Sequence[Mapping[str, Any]]) -> List[Candidate]:
    from raidlab.config import _show_key, parse_override

    candidates = []
    for policy in policies:
        name = policy["name"].strip()
        if not name:
            raise ConfigError("expected a discipline name", key="--policy")
        overrides: Dict[str, Any] = {"rebuild.discipline": name}
        for text in policy["with"]:
            path, value = parse_override(text)
            overrides[_show_key(path)] = value
        candidates.append(Candidate(_label_of(overrides), overrides))
    return candidates


def _float_option(option: str, check: Optional[Callable[[float, str], float]] = None) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if check is not None:
            try:
                check(value, option)
            except ConfigError as error:
                raise argparse.ArgumentTypeError(error.message) from None
        return value

    return parse


def _percent(value: Any) -> str:
    if not _finite(value):
        return "—"
    percent = 100.0 * float(value)
    if percent == 0:
        return "0 %"
    return f"{percent:.3g} %" if percent >= 0.001 else f"{percent:.1e} %"


def _ms(value: Any) -> str:
    return f"{float(value):.1f}" if _finite(value) else "—"


def _stripe_hours(value: Any) -> str:
    if not _finite(value):
        return "—"
    return f"{float(value):.3g}" if value == 0 or value >= 0.001 else f"{float(value):.1e}"


def print_plan(console: "Console", outcome: PlanOutcome) -> None:
    """The results as a rich table, then the front and the SLO pick."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"Rebuild plan: {outcome.directory}", title_justify="left")
    mission = f"{outcome.mission_years:g} y"
    # The healing columns only when a candidate healed (dRAID with a spare drive): for the
    # others they would be empty.
    healed = any(_finite(value) for value in outcome.table["healing_time_s"].tolist())
    headings = [("candidate", "left"), ("rebuild time", "right"), ("p50 ms", "right"), ("p99 ms", "right")]
    if healed:
        headings += [("healing", "right"), ("heal p50", "right"), ("heal p99", "right")]
    headings += [("P(2nd failure)", "right"), ("P(URE)", "right"), (f"P(loss, {mission})", "right"),
                 ("stripe-h at risk", "right"), ("E[lost]", "right"), ("", "left")]
    for heading, justify in headings:
        table.add_column(escape(heading), justify=justify, no_wrap=heading == "candidate")  # "E[lost]" is no markup
    unit = time_unit(outcome.table["rebuild_time_s"].tolist())  # one unit for the column, as the plot's axis
    for index, row in enumerate(outcome.table.to_dict("records")):
        marks = []
        if row["pareto"]:
            marks.append("Pareto")
        if outcome.slo is not None and outcome.slo.index == index:
            marks.append("SLO pick" if outcome.slo.within else "closest to SLO")
        if row["status"] != "done":
            marks.append(str(row["status"]) + (f": {row['error']}" if _json_cell(row["error"]) else ""))
        cells = [str(row["candidate"]), _duration(row["rebuild_time_s"], unit), _ms(row["p50_ms"]), _ms(row["p99_ms"])]
        if healed:
            # In the rebuild time's unit, so the two read side by side.
            cells += [_duration(row["healing_time_s"], unit), _ms(row["healing_p50_ms"]), _ms(row["healing_p99_ms"])]
        cells += [_percent(row["p_second_failure"]), _percent(row["p_ure"]), _percent(row["p_data_loss"]),
                  _stripe_hours(row["stripe_hours_at_risk"]), _percent(row["expected_lost_stripe_fraction"]),
                  ", ".join(marks)]
        table.add_row(*cells)
    console.print(table)
    base = outcome.base
    media = f"; drive's sustained read rate {outcome.media_rate_mb_s:.1f} MB/s (pilot)" if outcome.media_rate_mb_s else ""
    mttf = f" (MTTF {1.0 / hourly_failure_rate(outcome.afr):,.0f} h)" if outcome.afr > 0 else ""
    console.print(f"drive {base.fail_drive} fails at {base.fail_at_s:g} s; p50/p99: user requests while rebuilding; "
                  f"AFR {outcome.afr * 100:.3g} %{mttf}, URE {outcome.ure_per_bit:g} per bit{media}; "
                  f"P(loss, {mission}): every rebuild as long as the candidate's, one at a time; stripe-h at risk: "
                  f"the stripes missing a unit, integrated over the degraded window; E[lost]: the share of the "
                  f"stripes one more failure in it loses (fault tolerance 1)"
                  + ("; healing: dRAID's copy onto the spare drive, heal p50/p99: user requests meanwhile, ms" if healed else ""),
                  markup=False, highlight=False)
    if outcome.slo is not None:
        console.print(outcome.slo.text, markup=False, highlight=False)


def _command(args: argparse.Namespace, out: "Console", err: "Console") -> int:
    from raidlab.cli.experiments import SweepProgressBar

    candidates = _candidates_from_arguments(args.policies or [])
    quiet = args.quiet or args.json
    bar = SweepProgressBar(err, enabled=not quiet, label=f"rebuild-plan {Path(args.config).stem}")

    def warn(text: str) -> None:
        err.print(f"warning: {text}", markup=False, highlight=False, soft_wrap=True)

    afr = afr_of_mttf(args.mttf_hours) if args.mttf_hours is not None else args.afr
    try:
        outcome = run_plan(args.config, args.output, candidates=candidates, candidates_file=args.candidates,
                           overrides=args.set, fail_at_s=args.fail_at, fail_drive=args.fail_drive, afr=afr,
                           ure_per_bit=args.ure_per_bit, p99_slo_ms=args.p99_slo_ms,
                           mission_years=args.mission_years, jobs=args.jobs,
                           scheduler=args.scheduler, command_line=["raidlab", *getattr(args, "argv", [])],
                           progress=bar, warn=warn)
    finally:
        bar.close()
    if args.json:
        print(json.dumps(outcome.as_json(), indent=2))
    elif args.quiet:
        out.print(str(outcome.directory), markup=False, highlight=False)
    else:
        for note in [*outcome.base.notes, *outcome.candidate_notes]:
            out.print(note, markup=False, highlight=False)
        print_plan(out, outcome)
        runs = len(outcome.candidates) if outcome.runs is None else outcome.runs
        shared = (f", {runs} run(s) (candidates whose settings resolve to the same configuration share one)"
                  if runs != len(outcome.candidates) else "")
        out.print(f"{len(outcome.candidates)} candidates{shared}: {outcome.ran} ran, {outcome.skipped} already done, "
                  f"{outcome.failed} failed ({outcome.executor}, {outcome.wall_s:.1f} s)", markup=False, highlight=False)
        for path in outcome.files:
            out.print(f"wrote {path}", markup=False, highlight=False)
    return 1 if outcome.failed else 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Give ``raidlab rebuild-plan``'s parser its description, arguments and handler."""
    from raidlab.cli.experiments import _jobs

    parser.description = ("Fail one member of the configuration's array (unless it has failures) and rebuild it onto "
                          "a hot spare under each candidate rebuild discipline, setting or layout, one run each (the "
                          "sweep machinery: local cores or Dask); print the rebuild time, the user p50 and p99 while "
                          "rebuilding, dRAID's healing copy onto a spare drive (its time, p50 and p99) and the "
                          "exposure (a second drive failure, an unrecoverable read error, data loss within a mission "
                          "time, the stripes at risk over the degraded window and the share one more failure would "
                          "lose), draw the Pareto plot of rebuild time against p99 and the stripes at risk against "
                          "time, and with --p99-slo-ms name the fastest "
                          "rebuild within the SLO. Candidates: --policy (with --with), --candidates FILE, the "
                          "configuration's [rebuild_plan] table, or the default set (md at three settings, VSM, "
                          "PCM, Ceph mClock's three profiles). See docs/rebuild-plan.md.")
    parser.add_argument("config", metavar="CONFIG.toml", help="run configuration: array, drive, workload")
    parser.add_argument("-o", "--output", metavar="DIR", help="output directory (default: runs/rebuild-plan-<name>)")
    parser.add_argument("--policy", action=_PolicyAction, dest="policies", metavar="NAME",
                        help="a candidate: rebuild.discipline = NAME (repeatable)")
    parser.add_argument("--with", action=_PolicyAction, dest="policies", metavar="KEY=VALUE",
                        help="a setting of the last --policy's candidate, e.g. --policy rate --with "
                             "rebuild.rate_mb_s=20 (repeatable)")
    parser.add_argument("--candidates", metavar="FILE",
                        help="a TOML file whose [rebuild_plan] table lists [[rebuild_plan.candidates]]")
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                        help="override a configuration key before anything else (repeatable; as raidlab run --set)")
    parser.add_argument("--fail-at", type=_float_option("--fail-at"), metavar="S",
                        help="seconds into the run the member fails (default: the end of metrics.warmup_s; "
                             "else a tenth of the workload's length; else 60)")
    parser.add_argument("--fail-drive", type=int, metavar="SLOT", help="the member that fails (default: 0)")
    rates = parser.add_mutually_exclusive_group()
    rates.add_argument("--afr", type=_float_option("--afr", check_afr), default=DEFAULT_AFR, metavar="FRACTION",
                       help="annual failure rate of a drive (default: %(default)s, Backblaze's 2024 figure; "
                            "an MTTF of 554,000 h)")
    rates.add_argument("--mttf-hours", type=_float_option("--mttf-hours", check_mttf_hours), metavar="H",
                       help="a drive's mean time to failure instead of --afr (a datasheet's MTBF, e.g. 2.5e6)")
    parser.add_argument("--mission-years", type=_float_option("--mission-years", check_mission_years),
                        default=DEFAULT_MISSION_YEARS, metavar="Y",
                        help="mission time of P(data loss) (default: %(default)g year)")
    parser.add_argument("--ure-per-bit", type=_float_option("--ure-per-bit", check_ure_per_bit),
                        default=DEFAULT_URE_PER_BIT, metavar="RATE",
                        help="unrecoverable read errors per bit read (default: %(default)g, enterprise HDD datasheets)")
    parser.add_argument("--p99-slo-ms", type=_float_option("--p99-slo-ms", check_slo_ms), metavar="MS",
                        help="name the fastest rebuild whose user p99 while rebuilding is within MS")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--jobs", "-j", type=_jobs, metavar="J", help="local worker processes (default: all cores)")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask cluster instead")
    parser.add_argument("--json", action="store_true", help="print the results as JSON (no table, no progress bar)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar or table; print the directory")
    parser.set_defaults(handler=_command, policies=None)
