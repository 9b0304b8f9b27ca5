"""Exposure, per layout: the probability that an array loses data within a mission time.

An array of N drives with independent exponential lifetimes (mean ``mttf_h`` hours) survives
``tolerance`` concurrent failures (RAID-5 and parity declustering 1, RAID-6 2); each failed
drive is replaced at once and rebuilt. Two models answer "P(data loss within T hours)":

* **The CTMC** (an exact oracle for its assumptions): states 0 … t+1 failed drives, a
  failure rate b_i from state i ((N − i)/MTTF when every stripe spans every drive), a repair
  rate 1/MTTR from every degraded state (one repair at a time; ``repairs="parallel"``: i/MTTR),
  state t+1 absorbing. :func:`ctmc_loss_probability` is its transient solution at T,
  :func:`ctmc_mttdl` its mean time to absorption; :func:`mttdl_closed_form` is the textbook
  approximation MTTF^(t+1) / (N(N−1)…(N−t)·MTTR^t). The repair time is exponential with
  ``repair_phases=1``; with k phases it is Erlang-k (the same mean, coefficient of variation
  1/√k), which tends to a constant repair time as k grows (serial repairs only);
  :func:`constant_repair_loss_probability` extrapolates k = 32 and 64 to a constant repair
  time, which for RAID-5 :func:`raid5_constant_repair_loss_probability` gives exactly.
* **Monte Carlo with the layout's exposure** (:func:`monte_carlo`): failure times drawn,
  rebuild times constant, exponential or drawn from a list (raidlab runs' rebuild times),
  each rebuild progressing linearly through the member's stripes in the same order on every
  drive. A failure while ``tolerance`` drives are unrebuilt loses the stripes that are
  unrebuilt on all of them and that the new failure also touches: a fraction
  (1 − x) of the first lost member's stripes for RAID-5 (x: the rebuild's progress), 1 − max x
  for RAID-6, and (1 − x)·(G − 1)/(C − 1) for parity declustering of stripe width G over C
  drives (the share of a member's stripes that a second drive also holds in a balanced
  design). It reports P(loss) with a Wilson interval and the expected data lost.

Numerics: P(loss by T) is P(h)^(2^m) with P(h) = exp(Q·h) by uniformization at Λh ≤ 1/2
and m squarings; every matrix involved is entrywise nonnegative, so tiny loss probabilities
(10⁻¹⁰ and below) keep their relative accuracy. The MTTDL is found by eliminating states one
by one with rates summed, never subtracted (the Grassmann–Taqqu–Heyman idea), because a plain
linear solve of −Q·τ = 1 cancels catastrophically when MTTR ≪ MTTF (for RAID-6 the
determinant is of order λ³ beside terms of order λμ²).

``docs/exposure.md`` states the models, which assumptions are raidlab's, and example numbers.
Bad input is a :class:`ValueError` whose message starts with the argument's name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Optional, Sequence, Tuple, Union

import numpy as np

__all__ = [
    "LAYOUTS",
    "fault_tolerance",
    "ctmc_rates",
    "ctmc_generator",
    "ctmc_loss_probability",
    "ctmc_mttdl",
    "transition_matrix",
    "mean_time_to_absorption",
    "mttdl_closed_form",
    "raid5_mttdl_exact",
    "raid5_constant_repair_mttdl",
    "raid5_constant_repair_loss_probability",
    "constant_repair_loss_probability",
    "constant_repair_mttdl",
    "mission_loss_probability",
    "wilson_interval",
    "MonteCarloResult",
    "monte_carlo",
    "declustering_ratio",
]

#: Layouts with an exposure model (the CTMC; the Monte Carlo takes raid5, raid6, declustered).
LAYOUTS = ("raid0", "raid1", "raid5", "raid6", "declustered")
#: Layouts the Monte Carlo simulates stripe by stripe.
MONTE_CARLO_LAYOUTS = ("raid5", "raid6", "declustered")
#: Erlang phases of the two chains whose extrapolation stands for a constant repair time.
CONSTANT_REPAIR_PHASES = (32, 64)


# ---------------------------------------------------------------------------------------------
# Checks: a ValueError naming the argument
# ---------------------------------------------------------------------------------------------


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: expected a finite number > 0, not {value!r}")
    return float(value)


def _count(name: str, value: int, least: int, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{name}: expected an integer >= {least}{why}, not {value!r}")
    return int(value)


def _choice(name: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, choices))}, not {value!r}")
    return value


def fault_tolerance(layout: str, copies: Optional[int] = None) -> int:
    """Concurrent drive failures ``layout`` survives: raid0 0, raid1 ``copies`` − 1 (default
    2 copies), raid5 and declustered 1, raid6 2. Another name is a ValueError naming ``layout``."""
    if layout == "raid1":
        return _count("copies", 2 if copies is None else copies, 2) - 1
    tolerances = {"raid0": 0, "raid5": 1, "declustered": 1, "raid6": 2}
    if layout not in tolerances:
        raise ValueError(f"layout: no exposure model for {layout!r}; known: {', '.join(LAYOUTS)}")
    return tolerances[layout]


def declustering_ratio(stripe_width: int, drives: int) -> float:
    """(G − 1)/(C − 1): the share of a member's stripes that one other member also holds, in a
    balanced block design of stripe width G over C drives (1 for RAID-5, G = C)."""
    width = _count("stripe_width", stripe_width, 3)
    count = _count("drives", drives, width, f" (stripe_width = {width})")
    return (width - 1) / (count - 1)


# ---------------------------------------------------------------------------------------------
# The CTMC
# ---------------------------------------------------------------------------------------------


def ctmc_rates(drives: int, tolerance: int, mttf_h: float, mttr_h: float, *, repairs: str = "serial",
               at_risk: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Failure and repair rates (per hour) out of states 0 … ``tolerance``: ``(birth, death)``.

    birth[i] = (N − i)·λ when every stripe spans every drive; with ``at_risk`` = c (the drives
    whose failure beside a failed one brings the array closer to loss, e.g. 2 for chained
    declustering), birth[0] = N·λ and birth[i] = (c − i + 1)·λ. death[i] = μ (``"serial"``: one
    repair at a time) or i·μ (``"parallel"``), death[0] = 0."""
    t = _count("tolerance", tolerance, 0)
    n = _count("drives", drives, t + 1, f" (tolerance {t} + 1)")
    lam = 1.0 / _positive("mttf_h", mttf_h)
    mu = 1.0 / _positive("mttr_h", mttr_h)
    _choice("repairs", repairs, ("serial", "parallel"))
    c = n - 1 if at_risk is None else _count("at_risk", at_risk, t, f" (tolerance {t})")
    if c > n - 1:
        raise ValueError(f"at_risk: expected at most drives - 1 = {n - 1}, not {c}")
    birth = np.array([n * lam] + [(c - i + 1) * lam for i in range(1, t + 1)], dtype=float)
    death = np.array([0.0] + [(i if repairs == "parallel" else 1) * mu for i in range(1, t + 1)], dtype=float)
    return birth, death


def ctmc_generator(drives: int, tolerance: int, mttf_h: float, mttr_h: float, *, repairs: str = "serial",
                   at_risk: Optional[int] = None, repair_phases: int = 1) -> np.ndarray:
    """The generator Q (rates per hour, rows summing to 0) of the chain; the last state is data
    loss (absorbing), the first all drives working.

    ``repair_phases`` = k > 1 (serial repairs only): each repair is k exponential phases of
    rate k·μ, so its time is Erlang-k with mean MTTR; states are 0, then (i failed, phase p)
    for i = 1 … t and p = 0 … k − 1, then loss. A failure in state (i, p) moves to
    (i + 1, p): the new drive waits while the repair under way goes on."""
    birth, death = ctmc_rates(drives, tolerance, mttf_h, mttr_h, repairs=repairs, at_risk=at_risk)
    k = _count("repair_phases", repair_phases, 1)
    if k > 1 and repairs != "serial":
        raise ValueError("repair_phases: phases > 1 model serial repairs only (repairs='serial')")
    t = len(birth) - 1
    size = 2 + t * k
    loss = size - 1

    def state(i: int, p: int = 0) -> int:
        return 0 if i == 0 else 1 + (i - 1) * k + p

    q = np.zeros((size, size))
    q[0, state(1) if t >= 1 else loss] += birth[0]
    for i in range(1, t + 1):
        for p in range(k):
            here = state(i, p)
            q[here, state(i + 1, p) if i < t else loss] += birth[i]
            rate = k * death[i]
            if p < k - 1:
                q[here, state(i, p + 1)] += rate
            else:
                q[here, state(i - 1, 0)] += rate
    np.fill_diagonal(q, 0.0)
    q[np.diag_indices(size)] = -q.sum(axis=1)
    return q


def transition_matrix(generator: np.ndarray, hours: float) -> np.ndarray:
    """exp(Q·hours) for a generator Q: uniformization at a step h = hours / 2^m with Λh ≤ 1/2
    (Λ: the largest exit rate), then m squarings. Every term is nonnegative, so small entries
    (a loss probability of 10⁻¹²) keep their relative accuracy; the relative error grows at
    most about in proportion to Λ·hours · 10⁻¹⁶."""
    q = np.asarray(generator, dtype=float)
    hours = _positive("hours", hours)
    size = q.shape[0]
    exit_rate = float(np.max(-np.diag(q))) if size else 0.0
    if exit_rate <= 0:
        return np.eye(size)
    squarings = max(0, math.ceil(math.log2(exit_rate * hours / 0.5)))
    step = hours / 2.0 ** squarings
    jump = np.eye(size) + q / exit_rate
    jump[jump < 0] = 0.0  # 1 − exit/Λ of the fastest state: 0, not −1e-17
    mean = exit_rate * step  # ≤ 1/2
    # Σ_j e^(−Λh) (Λh)^j / j! · P^j, to j = 40: the tail is below 1e-60 of the sum.
    term_weight = math.exp(-mean)
    power = np.eye(size)
    result = term_weight * power
    for j in range(1, 41):
        power = power @ jump
        term_weight *= mean / j
        result += term_weight * power
    for _ in range(squarings):
        result = result @ result
    return result


def ctmc_loss_probability(drives: int, tolerance: int, mttf_h: float, mttr_h: float, mission_h: float, *,
                          repairs: str = "serial", at_risk: Optional[int] = None, repair_phases: int = 1) -> float:
    """P(data loss within ``mission_h`` hours), all drives working at 0: the absorbing state's
    probability in exp(Q·T) (:func:`transition_matrix`)."""
    mission_h = _positive("mission_h", mission_h)
    q = ctmc_generator(drives, tolerance, mttf_h, mttr_h, repairs=repairs, at_risk=at_risk,
                       repair_phases=repair_phases)
    return float(min(1.0, max(0.0, transition_matrix(q, mission_h)[0, -1])))


def mean_time_to_absorption(generator: np.ndarray) -> float:
    """Mean time from state 0 to the absorbing last state of a generator whose every transient
    state can reach it, by eliminating the transient states one at a time from the last:
    jump probabilities and mean holding times are updated with sums of nonnegative terms, and
    a state's probability of leaving is summed from its exits, never taken as 1 − P(stay)."""
    rates = np.array(generator, dtype=float)
    np.fill_diagonal(rates, 0.0)
    if np.any(rates < 0):
        raise ValueError("generator: expected nonnegative rates off the diagonal")
    transient = rates.shape[0] - 1
    out = rates.sum(axis=1)
    if np.any(out[:transient] <= 0):
        raise ValueError("generator: a transient state has no exit")
    jump = rates / np.where(out > 0, out, 1.0)[:, None]  # embedded chain; self-loops appear below
    hold = np.where(out > 0, 1.0 / np.where(out > 0, out, 1.0), 0.0)
    for s in range(transient - 1, 0, -1):
        leave = jump[s, :s].sum() + jump[s, s + 1:].sum()  # 1 − P(s → s), summed
        into = jump[:s, s].copy()
        jump[:s, :] += np.outer(into / leave, jump[s, :])
        hold[:s] += into * hold[s] / leave
        jump[:s, s] = 0.0
        jump[s, :] = 0.0
    leave0 = jump[0, 1:].sum()
    return float(hold[0] / leave0)


def ctmc_mttdl(drives: int, tolerance: int, mttf_h: float, mttr_h: float, *, repairs: str = "serial",
               at_risk: Optional[int] = None, repair_phases: int = 1) -> float:
    """Mean time to data loss (hours) of the chain, from all drives working
    (:func:`mean_time_to_absorption` of :func:`ctmc_generator`)."""
    return mean_time_to_absorption(ctmc_generator(drives, tolerance, mttf_h, mttr_h, repairs=repairs,
                                                  at_risk=at_risk, repair_phases=repair_phases))


def mttdl_closed_form(drives: int, tolerance: int, mttf_h: float, mttr_h: float) -> float:
    """MTTF^(t+1) / (N(N−1)…(N−t)·MTTR^t): RAID-5 (t = 1) MTTF²/(N(N−1)·MTTR), RAID-6 (t = 2)
    MTTF³/(N(N−1)(N−2)·MTTR²), the approximation for MTTR ≪ MTTF."""
    t = _count("tolerance", tolerance, 0)
    n = _count("drives", drives, t + 1, f" (tolerance {t} + 1)")
    mttf, mttr = _positive("mttf_h", mttf_h), _positive("mttr_h", mttr_h)
    return mttf ** (t + 1) / (math.prod(range(n - t, n + 1)) * mttr ** t)


def raid5_mttdl_exact(drives: int, mttf_h: float, mttr_h: float) -> float:
    """The three-state chain's exact MTTDL, ((2N − 1)λ + μ)/(N(N − 1)λ²)."""
    n = _count("drives", drives, 2)
    lam, mu = 1.0 / _positive("mttf_h", mttf_h), 1.0 / _positive("mttr_h", mttr_h)
    return ((2 * n - 1) * lam + mu) / (n * (n - 1) * lam ** 2)


def raid5_constant_repair_mttdl(drives: int, mttf_h: float, repair_h: float) -> float:
    """RAID-5's MTTDL with a constant repair time D (not exponential): cycles of an up time
    (mean 1/(Nλ)) and a window of D in which one of N − 1 drives failing (probability
    q = 1 − e^(−(N−1)λD)) loses data. MTTDL = 1/(qNλ) + (1 − q)D/q + E[W | W < D], W the
    window's failure time."""
    n = _count("drives", drives, 2)
    lam, d = 1.0 / _positive("mttf_h", mttf_h), _positive("repair_h", repair_h)
    a = (n - 1) * lam
    q = -math.expm1(-a * d)
    within = 1.0 / a - d * math.exp(-a * d) / q
    return 1.0 / (q * n * lam) + (1.0 - q) * d / q + within


def raid5_constant_repair_loss_probability(drives: int, mttf_h: float, repair_h: float, mission_h: float,
                                           nodes: int = 64) -> float:
    """RAID-5's P(data loss within T) with a constant repair time D: the sum over the window j
    in which data is lost, (e^(−aD))^(j−1) · P(Γ_j + (j − 1)D + W ≤ T, W < D), Γ_j the sum of j
    up times (Gamma(j, Nλ)), W ~ Exp(a), a = (N − 1)λ; the integral over W by Gauss–Legendre
    with ``nodes`` points. A check of the Monte Carlo (its terms number about T/D)."""
    n = _count("drives", drives, 2)
    lam, d = 1.0 / _positive("mttf_h", mttf_h), _positive("repair_h", repair_h)
    horizon = _positive("mission_h", mission_h)
    a, up = (n - 1) * lam, n * lam
    x, w = np.polynomial.legendre.leggauss(nodes)
    windows = int(horizon // d) + 1
    lgamma = np.array([math.lgamma(i + 1) for i in range(windows + 1)])
    # Windows past the up times' count ever likely in T add nothing (P(Γ_j ≤ T) < 1e-30).
    likely = up * horizon + 12.0 * math.sqrt(up * horizon) + 40.0
    total = 0.0
    for j in range(1, windows + 1):
        left = horizon - (j - 1) * d
        if left <= 0 or j > likely:
            break
        top = min(d, left)
        ws = 0.5 * top * (x + 1.0)
        m = up * (left - ws)  # Poisson mean of the up times' count
        # P(Γ_j ≤ s) = P(Poisson(Nλs) ≥ j) = 1 − Σ_{i<j} e^(−m) m^i / i!
        i = np.arange(j)[:, None]
        with np.errstate(divide="ignore"):
            logs = -m[None, :] + i * np.log(np.maximum(m[None, :], 1e-300)) - lgamma[:j, None]
        below = np.exp(logs).sum(axis=0)
        cdf = np.clip(1.0 - below, 0.0, 1.0)
        integral = 0.5 * top * float(np.sum(w * a * np.exp(-a * ws) * cdf))
        total += math.exp(-a * d * (j - 1)) * integral
    return min(1.0, total)


def constant_repair_loss_probability(drives: int, tolerance: int, mttf_h: float, repair_h: float, mission_h: float,
                                     *, at_risk: Optional[int] = None) -> float:
    """P(data loss within ``mission_h``) when every repair takes exactly ``repair_h`` hours, one
    at a time: the chains with Erlang-32 and Erlang-64 repairs extrapolated to k → ∞
    (Richardson, 2·p₆₄ − p₃₂; the error of Erlang-k falls as 1/k). Against RAID-5's exact
    constant-repair value (:func:`raid5_constant_repair_loss_probability`) it is within 10⁻⁴
    relative in the tests' cases."""
    p32, p64 = (ctmc_loss_probability(drives, tolerance, mttf_h, repair_h, mission_h, at_risk=at_risk,
                                      repair_phases=k) for k in CONSTANT_REPAIR_PHASES)
    return float(min(1.0, max(0.0, 2.0 * p64 - p32)))


def constant_repair_mttdl(drives: int, tolerance: int, mttf_h: float, repair_h: float, *,
                          at_risk: Optional[int] = None) -> float:
    """The MTTDL when every repair takes exactly ``repair_h`` hours, one at a time, as
    :func:`constant_repair_loss_probability` extrapolates it: 2·m₆₄ − m₃₂."""
    m32, m64 = (ctmc_mttdl(drives, tolerance, mttf_h, repair_h, at_risk=at_risk, repair_phases=k)
                for k in CONSTANT_REPAIR_PHASES)
    return float(2.0 * m64 - m32)


def mission_loss_probability(layout: str, drives: int, *, mttf_h: float, repair_h: float, mission_h: float,
                             copies: Optional[int] = None, at_risk: Optional[int] = None,
                             tolerance: Optional[int] = None, repair: str = "exponential",
                             repairs: str = "serial") -> float:
    """P(data loss within ``mission_h``) of a whole array, by its layout:

    * raid0: 1 − exp(−N·T/MTTF) (the first failure);
    * raid1: N/copies mirror sets, independent, each a chain of ``copies`` drives tolerating
      ``copies`` − 1 failures: 1 − (1 − p_set)^(N/copies);
    * raid5, declustered: one chain tolerating 1 (any two failed drives share a stripe);
    * raid6: one chain tolerating 2;
    * another layout that tolerates one failure (``tolerance`` = 1) with ``at_risk`` members
      sharing each member's redundancy (chained declustering, say): the chain with
      birth rates N·λ then at_risk·λ.

    ``repair_h``: the repair (rebuild) time, the mean of an exponential time with
    ``repair="exponential"`` (the textbook chain; ``repairs`` serial or parallel), exactly
    that long with ``repair="constant"`` (one at a time: :func:`constant_repair_loss_probability`)."""
    n = _count("drives", drives, 1)
    mttf, horizon = _positive("mttf_h", mttf_h), _positive("mission_h", mission_h)
    _choice("repair", repair, ("exponential", "constant"))
    _positive("repair_h", repair_h)
    if repair == "constant" and repairs != "serial":
        raise ValueError("repairs: a constant repair time is modelled with one repair at a time ('serial')")

    def chain(count: int, tolerance_: int, risk: Optional[int] = None) -> float:
        if repair == "constant":
            return constant_repair_loss_probability(count, tolerance_, mttf, repair_h, horizon, at_risk=risk)
        return ctmc_loss_probability(count, tolerance_, mttf, repair_h, horizon, repairs=repairs, at_risk=risk)

    if layout == "raid0":
        return -math.expm1(-n * horizon / mttf)
    if layout == "raid1":
        c = _count("copies", copies if copies is not None else (at_risk + 1 if at_risk is not None else 2), 2)
        if n % c:
            raise ValueError(f"drives: expected a multiple of copies = {c}, not {n}")
        p = chain(c, c - 1)
        return -math.expm1((n // c) * math.log1p(-p)) if p < 1 else 1.0
    if layout in ("raid5", "declustered", "raid6"):
        return chain(n, fault_tolerance(layout))
    if tolerance == 1 and at_risk is not None:
        return chain(n, 1, at_risk)
    fault_tolerance(layout)  # the error naming the layout
    raise AssertionError("unreachable")  # pragma: no cover


# ---------------------------------------------------------------------------------------------
# Monte Carlo with the layout's exposure
# ---------------------------------------------------------------------------------------------


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> Tuple[float, float]:
    """Wilson's score interval for a binomial proportion."""
    n = _count("trials", trials, 1)
    x = _count("successes", successes, 0)
    if x > n:
        raise ValueError(f"successes: expected at most trials = {n}, not {x}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: expected a number in (0, 1), not {confidence!r}")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = x / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (0.0 if x == 0 else max(0.0, centre - half)), (1.0 if x == n else min(1.0, centre + half))


@dataclass(frozen=True)
class MonteCarloResult:
    """What :func:`monte_carlo` found. Fractions of a member are of the stripes of the first
    lost member of the failure that lost data; ``lost_data_fraction`` is of the array's user
    data; both are means over every trial (0 where nothing was lost)."""

    layout: str
    drives: int
    tolerance: int
    samples: int
    losses: int
    p_loss: float
    ci_low: float
    ci_high: float
    confidence: float
    #: E[fraction of a member's stripes lost]: (1 − x), (1 − max x), or (1 − x)(G − 1)/(C − 1).
    lost_member_fraction: float
    #: E[fraction of the array's user data lost] = lost_member_fraction · (t + 1)/N.
    lost_data_fraction: float
    #: E[bytes of user data lost], given ``member_bytes``; else None.
    expected_lost_bytes: Optional[float]
    #: Mean of the member fraction over the trials that lost data (NaN if none did).
    lost_member_fraction_given_loss: float
    #: Mean time of the loss, hours, over the trials that lost data (NaN if none did).
    mean_loss_time_h: float

    def interval(self, confidence: float) -> Tuple[float, float]:
        """Wilson's interval for P(loss) at another confidence."""
        return wilson_interval(self.losses, self.samples, confidence)


def _rebuild_sampler(rebuild_h: Union[float, Sequence[float]], rebuild: str):
    _choice("rebuild", rebuild, ("constant", "exponential"))
    if isinstance(rebuild_h, (int, float, np.integer, np.floating)) and not isinstance(rebuild_h, bool):
        values = np.array([float(rebuild_h)])
        single = True
    else:
        try:
            values = np.asarray(list(rebuild_h), dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"rebuild_h: expected hours, a number or a list of numbers, not {rebuild_h!r}") from None
        single = False
        if values.size == 0:
            raise ValueError("rebuild_h: expected at least one rebuild time, not an empty list")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        bad = values[~(np.isfinite(values) & (values >= 0))][0]
        raise ValueError(f"rebuild_h: expected rebuild times >= 0 hours, not {bad!r}")
    mean = float(values.mean())
    if rebuild == "exponential":
        if mean <= 0:
            raise ValueError("rebuild_h: an exponential rebuild time needs a mean > 0")
        return lambda rng, size: rng.exponential(mean, size)
    if single:
        return lambda rng, size: np.full(size, values[0])
    return lambda rng, size: values[rng.integers(0, values.size, size)]


def monte_carlo(layout: str, drives: int, *, mttf_h: float, mission_h: float,
                rebuild_h: Union[float, Sequence[float]], rebuild: str = "constant", samples: int = 10_000,
                seed: int = 0, stripe_width: Optional[int] = None, repairs: str = "serial",
                member_bytes: Optional[float] = None, confidence: float = 0.95) -> MonteCarloResult:
    """Simulate ``samples`` missions of ``mission_h`` hours of a ``layout`` array of ``drives``
    drives, all working at 0, and count those that lose data.

    Failures: each working drive fails at rate 1/``mttf_h`` (a drive being rebuilt onto does
    not fail, as in the CTMC). Rebuilds: each failed drive is replaced at once and rebuilt in
    ``rebuild_h`` hours — a constant, or a time drawn (uniformly, with replacement) from a list
    of rebuild times, or (``rebuild="exponential"``) an exponential time of that mean. With
    ``repairs="serial"`` one rebuild runs at a time, the next starting when it ends; with
    ``"parallel"`` each starts at its failure. A rebuild's progress x grows linearly from 0 to 1.

    Loss: a failure while ``tolerance`` drives are unrebuilt loses data (every stripe position
    unrebuilt on all of them: a fraction 1 − max x of the first member's stripes; times
    (G − 1)/(C − 1) for ``declustered``, whose other members hold only that share of a member's
    stripes, ``stripe_width`` G, default 4, over C = ``drives``). The mission ends at its first
    loss. Deterministic for a given ``seed`` (numpy's default generator)."""
    if layout not in MONTE_CARLO_LAYOUTS:
        fault_tolerance(layout)  # an unknown name: the error naming the layout
        raise ValueError(f"layout: the Monte Carlo simulates {', '.join(MONTE_CARLO_LAYOUTS)}, not {layout!r} "
                         "(mission_loss_probability has its CTMC)")
    t = fault_tolerance(layout)
    n = _count("drives", drives, t + 1, f" ({layout} tolerates {t})")
    lam = 1.0 / _positive("mttf_h", mttf_h)
    horizon = _positive("mission_h", mission_h)
    count = _count("samples", samples, 1)
    _choice("repairs", repairs, ("serial", "parallel"))
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: expected a number in (0, 1), not {confidence!r}")
    if member_bytes is not None:
        member_bytes = float(member_bytes)
        if not math.isfinite(member_bytes) or member_bytes < 0:
            raise ValueError(f"member_bytes: expected bytes >= 0, not {member_bytes!r}")
    if layout == "declustered":
        share = declustering_ratio(4 if stripe_width is None else stripe_width, n)
        width = 4 if stripe_width is None else int(stripe_width)
    else:
        if stripe_width is not None and stripe_width != n:
            raise ValueError(f"stripe_width: {layout} stripes span all {n} drives; give it for declustered only")
        share, width = 1.0, n
    draw = _rebuild_sampler(rebuild_h, rebuild)
    rng = np.random.default_rng(seed)

    now = np.zeros(count)
    unrebuilt = np.zeros(count, dtype=np.int64)
    # Slots of the unrebuilt drives, in failure order: start (inf: waiting) and duration.
    start = np.full((count, t), np.inf)
    length = np.zeros((count, t))
    active = np.ones(count, dtype=bool)
    lost = np.zeros(count, dtype=bool)
    lost_fraction = np.zeros(count)
    loss_time = np.full(count, np.nan)
    columns = np.arange(t)
    while True:
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        k = unrebuilt[rows]
        rate = (n - k) * lam  # the drives not being rebuilt
        failure_at = now[rows] + rng.exponential(1.0, rows.size) / rate
        used = columns[None, :] < k[:, None]
        ends = np.where(used, start[rows] + length[rows], np.inf)
        done_slot = np.argmin(ends, axis=1)
        done_at = ends[np.arange(rows.size), done_slot]
        failure_first = failure_at < done_at
        at = np.where(failure_first, failure_at, done_at)
        over = at > horizon
        active[rows[over]] = False
        now[rows[over]] = horizon
        # Rebuilds that end.
        ending = ~failure_first & ~over
        if np.any(ending):
            r, slot, when = rows[ending], done_slot[ending], done_at[ending]
            kk = unrebuilt[r]
            for j in range(t - 1):  # close the gap: slots after the ended one move up
                move = slot <= j
                take = (j + 1 < kk)[move]
                start[r[move], j] = np.where(take, start[r[move], j + 1], np.inf)
                length[r[move], j] = np.where(take, length[r[move], j + 1], 0.0)
            start[r, t - 1] = np.inf
            length[r, t - 1] = 0.0
            unrebuilt[r] = kk - 1
            if repairs == "serial":  # the next waiting drive's rebuild starts now
                waiting = unrebuilt[r] > 0
                start[r[waiting], 0] = when[waiting]
            now[r] = when
        # Failures.
        failing = failure_first & ~over
        if np.any(failing):
            r, when = rows[failing], failure_at[failing]
            kk = unrebuilt[r]
            full = kk >= t
            if np.any(full):
                rf = r[full]
                waited = np.where(np.isfinite(start[rf]), when[full][:, None] - start[rf], 0.0)  # waiting: 0
                progress = np.clip(waited / np.where(length[rf] > 0, length[rf], 1.0), 0.0, 1.0)
                fraction = (1.0 - progress.max(axis=1)) * share
                lost[rf] = fraction > 0
                lost_fraction[rf] = fraction
                loss_time[rf] = when[full]
                active[rf] = False
                now[rf] = when[full]
            rn, wn, kn = r[~full], when[~full], kk[~full]
            if rn.size:
                durations = draw(rng, rn.size)
                first = kn == 0
                start[rn, kn] = np.where(first | (repairs == "parallel"), wn, np.inf)
                length[rn, kn] = durations
                unrebuilt[rn] = kn + 1
                now[rn] = wn
    losses = int(lost.sum())
    low, high = wilson_interval(losses, count, confidence)
    member_fraction = float(lost_fraction[lost].sum() / count)
    data_fraction = member_fraction * (t + 1) / n
    lost_bytes = None
    if member_bytes is not None:
        lost_bytes = member_fraction * member_bytes * (t + 1) * (width - t) / width
    return MonteCarloResult(
        layout=layout, drives=n, tolerance=t, samples=count, losses=losses, p_loss=losses / count,
        ci_low=low, ci_high=high, confidence=confidence, lost_member_fraction=member_fraction,
        lost_data_fraction=data_fraction, expected_lost_bytes=lost_bytes,
        lost_member_fraction_given_loss=float(lost_fraction[lost].mean()) if losses else float("nan"),
        mean_loss_time_h=float(np.nanmean(loss_time[lost])) if losses else float("nan"),
    )


# ---------------------------------------------------------------------------------------------
# The examples of docs/exposure.md: ``python -m raidlab.exposure``
# ---------------------------------------------------------------------------------------------


def examples(samples: int = 200_000, seed: int = 1) -> str:
    """The tables of ``docs/exposure.md``, as Markdown."""
    lines = ["Accelerated parameters (MTTF 1,000 h, 8 drives), Monte Carlo of "
             f"{samples:,} missions (seed {seed}), 95 % Wilson intervals:", "",
             "| layout | MTTR | T | MTTDL closed form | MTTDL CTMC | P(loss) CTMC, exp. repair | MC, exp. repair "
             "| P(loss), constant repair | MC, constant repair | E[lost share of a member \\| loss] |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for layout, mttr, horizon, width in (("raid5", 10.0, 500.0, None), ("declustered", 10.0, 500.0, 4),
                                         ("raid6", 50.0, 1000.0, None)):
        t = fault_tolerance(layout)
        exponential = monte_carlo(layout, 8, mttf_h=1000.0, mission_h=horizon, rebuild_h=mttr, rebuild="exponential",
                                  samples=samples, seed=seed, stripe_width=width)
        constant = monte_carlo(layout, 8, mttf_h=1000.0, mission_h=horizon, rebuild_h=mttr, samples=samples,
                               seed=seed, stripe_width=width)
        name = layout + (f" G={width}" if width else "")
        lines.append(
            f"| {name} | {mttr:g} h | {horizon:g} h | {mttdl_closed_form(8, t, 1000.0, mttr):,.0f} h "
            f"| {ctmc_mttdl(8, t, 1000.0, mttr):,.0f} h | {ctmc_loss_probability(8, t, 1000.0, mttr, horizon):.4f} "
            f"| {exponential.p_loss:.4f} [{exponential.ci_low:.4f}, {exponential.ci_high:.4f}] "
            f"| {constant_repair_loss_probability(8, t, 1000.0, mttr, horizon):.4f} "
            f"| {constant.p_loss:.4f} [{constant.ci_low:.4f}, {constant.ci_high:.4f}] "
            f"| {constant.lost_member_fraction_given_loss:.3f} |")
    year = 8766.0
    mttf = year / 0.0157
    lines += ["", "8 × 20 TB drives, AFR 1.57 % (MTTF 8766/0.0157 = 558,344 h), one year; the rebuild "
              "time is the repair time, constant and one at a time unless said:", "",
              "| layout | rebuild | MTTDL closed form | MTTDL CTMC (exp.) | MTTDL (constant) "
              "| P(loss in 1 y) CTMC (exp.) | P(loss in 1 y) (constant) |",
              "|---|---|---|---|---|---|---|"]
    for layout, mttr in (("raid5", 30.0), ("raid5", 5424.0), ("raid6", 30.0), ("raid6", 5424.0)):
        t = fault_tolerance(layout)
        lines.append(
            f"| {layout} | {mttr:g} h | {mttdl_closed_form(8, t, mttf, mttr) / year:,.3g} y "
            f"| {ctmc_mttdl(8, t, mttf, mttr) / year:,.3g} y | {constant_repair_mttdl(8, t, mttf, mttr) / year:,.3g} y "
            f"| {ctmc_loss_probability(8, t, mttf, mttr, year):.3g} "
            f"| {constant_repair_loss_probability(8, t, mttf, mttr, year):.3g} |")
    slow = monte_carlo("raid6", 8, mttf_h=mttf, mission_h=year, rebuild_h=5424.0, samples=2_000_000, seed=3)
    lines += ["", f"Monte Carlo of RAID-6, rebuilds of 5424 h (constant), 2,000,000 missions (seed 3): "
              f"P(loss in 1 y) = {slow.p_loss:.3g} [{slow.ci_low:.3g}, {slow.ci_high:.3g}]"]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - the docs' command
    print(examples())
