"""Confidence intervals over replicates (runs that differ only in their seed).

Student's t distribution is computed here rather than taken from SciPy, which raidlab does
not otherwise need: the CDF through the regularized incomplete beta function (its continued
fraction, evaluated by the modified Lentz method), the quantile by bisection on it. Accurate
to about 1e-10, far beyond what replicate counts of simulations can resolve.

* :func:`mean_interval`: a mean and its t interval.
* :func:`difference_interval`: the difference of two groups' means, paired when both groups
  ran the same seeds (raidlab's per-component random streams make runs with one seed share
  their random numbers, so the paired interval is the tighter, correct one), else Welch's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

__all__ = ["student_t_cdf", "student_t_quantile", "Interval", "mean_interval", "Difference", "difference_interval"]

#: The confidence level of every interval raidlab shows.
CONFIDENCE = 0.95


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return fraction


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b))
    # The fraction converges fast for x below the mean of Beta(a, b); use the symmetry
    # I_x(a, b) = 1 - I_{1-x}(b, a) above it.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` > 0 degrees of freedom (not necessarily whole)."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if math.isinf(df):
        return 0.5 * math.erfc(-t / math.sqrt(2.0))
    tail = 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def student_t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p (0 < p < 1), by bisection on :func:`student_t_cdf`."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie strictly between 0 and 1, not {p}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -student_t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while student_t_cdf(high, df) < p:
        high *= 2.0
        if high > 1e12:
            return math.inf
    for _ in range(200):
        middle = 0.5 * (low + high)
        if student_t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * max(1.0, high):
            break
    return 0.5 * (low + high)


@dataclass(frozen=True)
class Interval:
    """A mean with the half-width of its confidence interval (NaN with fewer than 2 values)."""

    mean: float
    half_width: float
    count: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def _finite(values: Sequence[float]) -> list:
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """The mean of ``values`` (non-finite ones left out) and its t interval."""
    finite = _finite(values)
    n = len(finite)
    if n == 0:
        return Interval(math.nan, math.nan, 0)
    mean = math.fsum(finite) / n
    if n < 2:
        return Interval(mean, math.nan, n)
    variance = math.fsum((v - mean) ** 2 for v in finite) / (n - 1)
    half = student_t_quantile(0.5 + confidence / 2.0, n - 1) * math.sqrt(variance / n)
    return Interval(mean, half, n)


@dataclass(frozen=True)
class Difference:
    """``other − reference`` of two groups' means with its confidence interval."""

    reference: Interval
    other: Interval
    delta: float
    half_width: float
    #: ``paired`` (same seeds in both groups), ``welch``, or ``none`` (too few replicates).
    method: str

    @property
    def relative(self) -> float:
        """The difference as a fraction of the reference mean."""
        if not math.isfinite(self.reference.mean) or self.reference.mean == 0:
            return math.nan
        return self.delta / self.reference.mean


def difference_interval(
    reference: Sequence[float],
    other: Sequence[float],
    *,
    reference_seeds: Optional[Sequence[int]] = None,
    other_seeds: Optional[Sequence[int]] = None,
    confidence: float = CONFIDENCE,
) -> Difference:
    """The difference of the means of ``other`` and ``reference`` with its interval: paired
    over seeds when both groups ran the same set of at least two seeds, Welch's otherwise
    (at least two values in each group), no interval with fewer."""
    ref_interval, other_interval = mean_interval(reference, confidence), mean_interval(other, confidence)
    delta = other_interval.mean - ref_interval.mean
    level = 0.5 + confidence / 2.0
    if (reference_seeds is not None and other_seeds is not None and len(reference_seeds) == len(reference)
            and len(other_seeds) == len(other) and sorted(reference_seeds) == sorted(other_seeds)
            and len(set(reference_seeds)) == len(reference_seeds) >= 2):
        by_seed = dict(zip(reference_seeds, reference))
        differences = [float(value) - float(by_seed[seed]) for seed, value in zip(other_seeds, other)]
        paired = mean_interval(differences, confidence)
        if paired.count >= 2:
            return Difference(ref_interval, other_interval, paired.mean, paired.half_width, "paired")
    a, b = _finite(reference), _finite(other)
    if len(a) < 2 or len(b) < 2:
        return Difference(ref_interval, other_interval, delta, math.nan, "none")
    mean_a, mean_b = math.fsum(a) / len(a), math.fsum(b) / len(b)
    var_a = math.fsum((v - mean_a) ** 2 for v in a) / (len(a) - 1) / len(a)
    var_b = math.fsum((v - mean_b) ** 2 for v in b) / (len(b) - 1) / len(b)
    error = math.sqrt(var_a + var_b)
    if error == 0.0:
        return Difference(ref_interval, other_interval, delta, 0.0, "welch")
    df = (var_a + var_b) ** 2 / (var_a ** 2 / (len(a) - 1) + var_b ** 2 / (len(b) - 1))
    return Difference(ref_interval, other_interval, delta, student_t_quantile(level, df) * error, "welch")
