"""A survivor rebuilding under VSM, as an M/G/1 queue with vacations (Fu et al., seed 001 §1,
whose refs [1, 6] analyse VSM this way).

A surviving drive serves Poisson user operations (rate ``user_rate_per_s``, mean service time
``user_service_s``) first come first served. Whenever it has no user work it reads rebuild
units, one at a time, and the read in service is not pre-empted: these reads are the
server's vacations. A run of them (one idle period's worth) ends with the first read during
which a user operation arrived. The first read of a run starts wherever the last user
operation left the arm, so it costs ``first_read_s``; the reads that follow it in the same
run are sequential and cost ``next_read_s``.

With a buffer that never fills (a *free-running* survivor), three results follow:

* **reads per idle period** (:func:`reads_per_idle_period`). A read of length V ends a run
  with the probability that a user operation arrived during it, 1 - e^(-λV). So
  E[K] = 1 + p₁ / (1 - p), with p₁ = e^(-λ V₁) for the first read and p = e^(-λ V) for each
  later one (the reads' lengths are taken at their means);
* **the mean rebuild read** (:func:`mean_rebuild_read_s`): (V₁ + (E[K] - 1) V) / E[K];
* **the rebuild read rate** (:func:`rebuild_read_rate`). The server never idles while rebuild
  work waits, and the user work it does is λ E[S] of its time whatever the vacations are, so
  it reads rebuild units for 1 - λ E[S] of its time: (1 - λ E[S]) / mean rebuild read.

:func:`rebuild_time_s` integrates that rate over a rebuild: with read redirection, the user
load on a survivor falls as the lost drive is rebuilt (its own operations, plus one read for
every read of a lost unit not yet rebuilt); without, it stays at its degraded level.

This is raidlab's model, written from the paper's description of VSM; it is not the paper's
model, whose equations the paper does not give. It has no buffer, no forced reads and no
writes: :mod:`raidlab.reproductions.fu_model` checks it against raidlab's simulated survivors
and uses it to ask what Fu's Table 1 needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Tuple

__all__ = [
    "Survivor",
    "reads_per_idle_period",
    "mean_rebuild_read_s",
    "rebuild_read_rate",
    "rebuild_time_s",
    "survivor_of_run",
    "survivors_of_run",
]


@dataclass(frozen=True)
class Survivor:
    """One surviving drive's user load and rebuild reads (seconds, operations per second).

    ``own_rate_per_s``: user operations on the drive's own data; ``lost_rate_per_s``: user
    reads of the lost drive's data, each of which reads this survivor too while its unit is
    not rebuilt (in a RAID-5 of N drives under uniform load both are the per-drive rate).
    ``user_service_s``: a user operation's mean service time. ``first_read_s``,
    ``next_read_s``: the first rebuild read of an idle period and each later one.
    ``units``: rebuild units the survivor reads in all.
    """

    own_rate_per_s: float
    lost_rate_per_s: float
    user_service_s: float
    first_read_s: float
    next_read_s: float
    units: int

    def __post_init__(self) -> None:
        for name in ("own_rate_per_s", "lost_rate_per_s"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise ValueError(f"{name} must be a non-negative number, not {getattr(self, name)!r}")
        for name in ("user_service_s", "first_read_s", "next_read_s"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise ValueError(f"{name} must be a positive number of seconds, not {getattr(self, name)!r}")
        if self.units < 1:
            raise ValueError(f"units must be at least 1, not {self.units!r}")

    def user_rate_per_s(self, rebuilt_fraction: float, redirect: bool = True) -> float:
        """User operations per second on the survivor when ``rebuilt_fraction`` of the lost
        drive is rebuilt: reads of rebuilt units go to the spare only with redirection."""
        pending = 1.0 - rebuilt_fraction if redirect else 1.0
        return self.own_rate_per_s + self.lost_rate_per_s * pending


def reads_per_idle_period(user_rate_per_s: float, first_read_s: float, next_read_s: float) -> float:
    """E[K], the rebuild reads of one idle period: 1 + e^(-λV₁) / (1 - e^(-λV))."""
    if user_rate_per_s <= 0:
        return math.inf
    return 1.0 + math.exp(-user_rate_per_s * first_read_s) / -math.expm1(-user_rate_per_s * next_read_s)


def mean_rebuild_read_s(user_rate_per_s: float, first_read_s: float, next_read_s: float) -> float:
    """The mean rebuild read, s: (V₁ + (E[K] - 1) V) / E[K]."""
    k = reads_per_idle_period(user_rate_per_s, first_read_s, next_read_s)
    if math.isinf(k):
        return next_read_s
    return (first_read_s + (k - 1.0) * next_read_s) / k


def rebuild_read_rate(user_rate_per_s: float, user_service_s: float, first_read_s: float, next_read_s: float) -> float:
    """Rebuild reads per second of a free-running survivor: (1 - λE[S]) / mean rebuild read
    (0 when the user load alone saturates the drive)."""
    idle_share = 1.0 - user_rate_per_s * user_service_s
    if idle_share <= 0:
        return 0.0
    return idle_share / mean_rebuild_read_s(user_rate_per_s, first_read_s, next_read_s)


def rebuild_time_s(survivor: Survivor, redirect: bool = True, steps: int = 4000) -> float:
    """Time for a free-running survivor to read all its units, s: the integral of
    units / rate(f) over the rebuilt fraction f from 0 to 1 (midpoint rule, ``steps``
    steps). Infinite when the user load saturates the drive at some f."""
    total = 0.0
    for i in range(steps):
        f = (i + 0.5) / steps
        rate = rebuild_read_rate(
            survivor.user_rate_per_s(f, redirect), survivor.user_service_s, survivor.first_read_s, survivor.next_read_s
        )
        if rate <= 0:
            return math.inf
        total += survivor.units / rate / steps
    return total


def survivors_of_run(result: Any) -> Tuple[Any, Dict[str, float]]:
    """The rows of a finished run's drives table that are survivors of its first rebuild
    (members that read for it), and what they measured: ``blocked_s`` (the most any spent
    blocked on its buffer), ``blocked_share`` and ``blocked_share_max`` (the survivors' mean
    and most blocked time over the rebuild time), ``reads_per_idle_period`` (their mean)."""
    summary, drives = result.summary, result.tables["drives"]
    members = int(summary["drives_in_array"])
    survivors = drives[(drives["drive"] < members) & (drives["rebuild_operations"] > 0)]
    if survivors.empty:
        raise ValueError("the run has no survivor that read for a rebuild")
    took = float(summary["rebuilds"][0]["rebuild_time_s"])
    share = (lambda seconds: seconds / took) if took > 0 else (lambda seconds: math.nan)
    measured = {
        "blocked_s": float(survivors["rebuild_blocked_s"].max()),
        "blocked_share": share(float(survivors["rebuild_blocked_s"].mean())),
        "blocked_share_max": share(float(survivors["rebuild_blocked_s"].max())),
        "reads_per_idle_period": float((survivors["rebuild_operations"] / survivors["rebuild_runs"]).mean()),
    }
    return survivors, measured


def survivor_of_run(result: Any) -> Tuple[Survivor, Dict[str, float]]:
    """The mean survivor of a finished run (a :class:`raidlab.Result` of a RAID-5 that lost one
    drive under uniform random reads, as Fu's setup), and what it measured
    (:func:`survivors_of_run`).

    The model's inputs come from the run: the per-drive user rate is the arrival rate over
    the members, both for the survivor's own data and for the lost drive's; the service
    times are the survivors' means (``user_busy_s`` over their user operations; the first
    rebuild read of each run and the others, from ``rebuild_run_first_busy_s``). These are
    mechanics, not queueing: what the model predicts from them is how the reads fall into
    idle periods, and so the rate.
    """
    survivors, measured = survivors_of_run(result)
    if (survivors["rebuild_operations"] == survivors["rebuild_runs"]).all():
        raise ValueError("every idle period held a single rebuild read: the later reads cannot be timed")
    user_ops = survivors["operations"] - survivors["rebuild_operations"]
    later = survivors["rebuild_operations"] - survivors["rebuild_runs"]
    rate = float(result.summary["arrival_rate_per_s"]) / int(result.summary["drives_in_array"])
    survivor = Survivor(
        own_rate_per_s=rate,
        lost_rate_per_s=rate,
        user_service_s=float((survivors["user_busy_s"] / user_ops).mean()),
        first_read_s=float((survivors["rebuild_run_first_busy_s"] / survivors["rebuild_runs"]).mean()),
        next_read_s=float(((survivors["rebuild_busy_s"] - survivors["rebuild_run_first_busy_s"]) / later).mean()),
        units=int(round(float(survivors["rebuild_operations"].mean()))),
    )
    return survivor, measured
