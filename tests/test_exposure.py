"""raidlab.exposure: the CTMC against the MTTDL closed forms (../shared/anchors/rebuild-controls.md
§4.6), its numerics where a linear solve fails, the Monte Carlo against the CTMC with the same
repair model (exponential repairs against the exponential chain; constant repairs against
RAID-5's exact constant-repair formula and the Erlang-64 chain), parity declustering's
(G − 1)/(C − 1) share of the data lost, and bad input naming the argument.

Sample counts keep the default tests to a fraction of a second; RAIDLAB_LONG_TESTS=1 runs
the same comparisons with 50 times the samples."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from raidlab.exposure import (
    constant_repair_loss_probability,
    constant_repair_mttdl,
    ctmc_generator,
    ctmc_loss_probability,
    ctmc_mttdl,
    declustering_ratio,
    fault_tolerance,
    mean_time_to_absorption,
    mission_loss_probability,
    monte_carlo,
    mttdl_closed_form,
    raid5_constant_repair_loss_probability,
    raid5_constant_repair_mttdl,
    raid5_mttdl_exact,
    transition_matrix,
    wilson_interval,
)

LONG = bool(os.environ.get("RAIDLAB_LONG_TESTS"))
long_only = pytest.mark.skipif(not LONG, reason="a million-sample Monte Carlo (about 10 s): set RAIDLAB_LONG_TESTS=1")


def _passage_mttdl(drives: int, tolerance: int, mttf: float, mttr: float, parallel: bool = False) -> float:
    """The birth-death chain's mean absorption time by first-passage times, an independent
    oracle: T_0 = 1/b_0, T_k = (1 + d_k·T_(k−1))/b_k, MTTDL = Σ T_k."""
    lam, mu = 1.0 / mttf, 1.0 / mttr
    total, previous = 0.0, 0.0
    for k in range(tolerance + 1):
        birth = (drives - k) * lam
        death = 0.0 if k == 0 else (k if parallel else 1) * mu
        previous = (1.0 + death * previous) / birth
        total += previous
    return total


# --------------------------------------------------------------------------------------------
# The CTMC
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("drives", [4, 8])
@pytest.mark.parametrize("tolerance", [1, 2])
def test_mttdl_matches_the_closed_forms_when_repair_is_fast(drives, tolerance):
    # §4.6: RAID-5 MTTF²/(N(N−1)MTTR), RAID-6 MTTF³/(N(N−1)(N−2)MTTR²), for MTTR ≪ MTTF. At
    # MTTR/MTTF = 1e-3 the chain's exact value is above them by about (2N − 1)·1e-3 (RAID-5):
    # 1.5 % for N = 8.
    mttf, mttr = 100_000.0, 100.0
    exact = ctmc_mttdl(drives, tolerance, mttf, mttr)
    closed = mttdl_closed_form(drives, tolerance, mttf, mttr)
    assert closed == pytest.approx(mttf ** (tolerance + 1) / (math.prod(range(drives - tolerance, drives + 1))
                                                             * mttr ** tolerance))
    assert 1.0 < exact / closed < 1.02
    # … and the gap closes as MTTR/MTTF falls.
    assert ctmc_mttdl(drives, tolerance, mttf, 0.1) / mttdl_closed_form(drives, tolerance, mttf, 0.1) \
        == pytest.approx(1.0, rel=3e-5)


def test_raid5_mttdl_is_the_three_state_chains_exact_value():
    # §4.6: MTTDL = ((2N − 1)λ + μ)/(N(N − 1)λ²).
    for drives, mttf, mttr in ((3, 1e3, 50.0), (8, 558_000.0, 30.0), (20, 1e6, 1e-3)):
        assert ctmc_mttdl(drives, 1, mttf, mttr) == pytest.approx(raid5_mttdl_exact(drives, mttf, mttr), rel=1e-12)


def test_the_anchors_worked_example():
    # §4.6: 8 × 20 TB, MTTF ≈ 558,000 h (AFR 1.57 %: 8766/0.0157), MTTR 30 h: RAID-5 closed
    # form 21,200 y, exact CTMC 21,171 y; RAID-6 6.6 × 10^7 y.
    mttf, year = 8766 / 0.0157, 8766.0
    assert mttdl_closed_form(8, 1, mttf, 30.0) / year == pytest.approx(21_200, rel=0.005)
    assert ctmc_mttdl(8, 1, mttf, 30.0) / year == pytest.approx(21_171, rel=0.002)
    assert mttdl_closed_form(8, 2, mttf, 30.0) / year == pytest.approx(6.6e7, rel=0.01)
    assert mttdl_closed_form(8, 1, mttf, 5424.0) / year == pytest.approx(117, rel=0.01)


@pytest.mark.parametrize("ratio", [1e-2, 1e-5, 1e-9])
@pytest.mark.parametrize("tolerance, parallel", [(1, False), (2, False), (2, True), (3, False)])
def test_mttdl_keeps_its_accuracy_where_a_linear_solve_does_not(ratio, tolerance, parallel):
    drives, mttf = 10, 1e6
    mttr = ratio * mttf
    got = ctmc_mttdl(drives, tolerance, mttf, mttr, repairs="parallel" if parallel else "serial")
    assert got == pytest.approx(_passage_mttdl(drives, tolerance, mttf, mttr, parallel), rel=1e-11)


def test_a_linear_solve_agrees_where_it_can():
    q = ctmc_generator(8, 2, 1000.0, 50.0)
    transient = q.shape[0] - 1
    solved = np.linalg.solve(-q[:transient, :transient], np.ones(transient))[0]
    assert mean_time_to_absorption(q) == pytest.approx(solved, rel=1e-12)


def test_transient_solution():
    q = ctmc_generator(8, 2, 1000.0, 50.0)
    p = transition_matrix(q, 2000.0)
    assert np.all(p >= 0) and np.allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert np.allclose(transition_matrix(q, 700.0) @ transition_matrix(q, 1300.0), p, rtol=1e-10, atol=1e-15)
    # One state and its exit: 1 − e^(−λT) exactly.
    assert ctmc_loss_probability(1, 0, 1000.0, 1.0, 300.0) == pytest.approx(-math.expm1(-0.3), rel=1e-13)
    # Rare loss: the chain is nearly exponential at rate 1/MTTDL once MTTR ≪ T ≪ MTTDL. An
    # 8-drive RAID-6, MTTF 5.5e5 h, MTTR 2 h, a year: P ≈ 7e-11, to 1e-4 relative.
    mttf, year = 5.5e5, 8766.0
    p = ctmc_loss_probability(8, 2, mttf, 2.0, year)
    assert 1e-11 < p < 1e-10
    assert p == pytest.approx(-math.expm1(-year / ctmc_mttdl(8, 2, mttf, 2.0)), rel=1e-4)
    # More repairs at once: less time with two drives down.
    assert ctmc_loss_probability(8, 2, 1000.0, 50.0, 1000.0, repairs="parallel") \
        < ctmc_loss_probability(8, 2, 1000.0, 50.0, 1000.0)


def test_a_constant_repair_time():
    # RAID-5 with a constant repair time D has an exact MTTDL and P(loss by T); the chain with
    # Erlang-k repairs (the same mean) tends to them as 1/k, and the extrapolation of k = 32 and
    # 64 to k → ∞ meets them. At λD = 0.05 a constant repair is riskier than an exponential one
    # (1 − e^(−aD) > aD/(1 + aD)).
    drives, mttf, d, horizon = 8, 1000.0, 50.0, 2000.0
    constant = raid5_constant_repair_mttdl(drives, mttf, d)
    assert ctmc_mttdl(drives, 1, mttf, d, repair_phases=64) == pytest.approx(constant, rel=2e-3)
    assert constant_repair_mttdl(drives, 1, mttf, d) == pytest.approx(constant, rel=1e-5)
    assert constant < ctmc_mttdl(drives, 1, mttf, d)
    p = raid5_constant_repair_loss_probability(drives, mttf, d, horizon)
    assert ctmc_loss_probability(drives, 1, mttf, d, horizon, repair_phases=64) == pytest.approx(p, rel=2e-3)
    assert constant_repair_loss_probability(drives, 1, mttf, d, horizon) == pytest.approx(p, rel=1e-5)
    assert constant_repair_loss_probability(8, 1, 1000.0, 10.0, 500.0) == pytest.approx(
        raid5_constant_repair_loss_probability(8, 1000.0, 10.0, 500.0), rel=1e-5)
    # Rare: P ≈ T/MTTDL.
    assert raid5_constant_repair_loss_probability(5, 5e5, 1.0, 8766.0) == pytest.approx(
        8766.0 / raid5_constant_repair_mttdl(5, 5e5, 1.0), rel=1e-3)
    # RAID-6 with constant repairs, one at a time: half the exponential chain's loss rate when
    # repairs are fast (a third failure needs the second's repair to overlap the first's:
    # E[R²] = MTTR² rather than 2·MTTR²), so twice the MTTDL of the §4.6 closed form.
    ratio = constant_repair_mttdl(8, 2, 5e5, 10.0) / mttdl_closed_form(8, 2, 5e5, 10.0)
    assert ratio == pytest.approx(2.0, rel=1e-3)


def test_mission_loss_by_layout():
    mttf, repair, year = 5e5, 10.0, 8766.0
    assert mission_loss_probability("raid0", 4, mttf_h=mttf, repair_h=repair, mission_h=year) == pytest.approx(
        -math.expm1(-4 * year / mttf))
    one_set = ctmc_loss_probability(2, 1, mttf, repair, year)
    assert mission_loss_probability("raid1", 6, mttf_h=mttf, repair_h=repair, mission_h=year) == pytest.approx(
        1 - (1 - one_set) ** 3, rel=1e-12)
    raid5 = mission_loss_probability("raid5", 8, mttf_h=mttf, repair_h=repair, mission_h=year)
    assert raid5 == mission_loss_probability("declustered", 8, mttf_h=mttf, repair_h=repair, mission_h=year)
    assert raid5 == pytest.approx(mission_loss_probability("any t=1 layout", 8, mttf_h=mttf, repair_h=repair,
                                                           mission_h=year, tolerance=1, at_risk=7), rel=1e-12)
    # Chained declustering: two neighbours at risk, not seven.
    chained = mission_loss_probability("chained", 8, mttf_h=mttf, repair_h=repair, mission_h=year, tolerance=1,
                                       at_risk=2)
    assert chained == pytest.approx(raid5 * 2 / 7, rel=1e-3)
    assert mission_loss_probability("raid6", 8, mttf_h=mttf, repair_h=repair, mission_h=year) < raid5 * 1e-3


def test_fault_tolerance_and_the_declustering_ratio():
    assert [fault_tolerance(name) for name in ("raid0", "raid5", "declustered", "raid6")] == [0, 1, 1, 2]
    assert fault_tolerance("raid1") == 1 and fault_tolerance("raid1", copies=3) == 2
    assert declustering_ratio(4, 16) == pytest.approx(3 / 15) and declustering_ratio(8, 8) == 1.0


def test_wilson_interval():
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(1.959964 ** 2 / (10 + 1.959964 ** 2), rel=1e-6)
    low, high = wilson_interval(50, 100)
    assert (low + high) / 2 == pytest.approx(0.5) and high - low == pytest.approx(0.1924, abs=2e-4)
    assert wilson_interval(50, 100, 0.99)[1] > high


# --------------------------------------------------------------------------------------------
# Monte Carlo against the chain
# --------------------------------------------------------------------------------------------

#: Accelerated cases, loss common enough to count (p 0.2–0.4): layout, drives, MTTF, MTTR, T.
CASES = [("raid5", 8, 1000.0, 10.0, 500.0), ("raid6", 8, 1000.0, 50.0, 1000.0)]
SAMPLES = 1_000_000 if LONG else 20_000


def _within(result, expected, confidence=0.99):
    low, high = result.interval(confidence)
    assert low <= expected <= high, f"{expected} outside [{low}, {high}] (p̂ = {result.p_loss}, n = {result.samples})"


def _tolerance(layout):
    return fault_tolerance(layout)


@pytest.mark.parametrize("layout, drives, mttf, mttr, horizon", CASES)
@pytest.mark.parametrize("repairs", ["serial", "parallel"])
def test_exponential_repairs_match_the_chain(layout, drives, mttf, mttr, horizon, repairs):
    """Exponential rebuild times in the Monte Carlo: the chain's own assumptions."""
    result = monte_carlo(layout, drives, mttf_h=mttf, mission_h=horizon, rebuild_h=mttr, rebuild="exponential",
                         repairs=repairs, samples=SAMPLES, seed=11)
    expected = ctmc_loss_probability(drives, _tolerance(layout), mttf, mttr, horizon, repairs=repairs)
    assert 0.05 < expected < 0.5
    _within(result, expected)


@pytest.mark.parametrize("layout, drives, mttf, mttr, horizon", CASES)
def test_constant_repairs_match_their_own_model(layout, drives, mttf, mttr, horizon):
    """Constant rebuild times (one at a time): RAID-5 against its exact constant-repair formula,
    RAID-6 against the Erlang chains extrapolated to a constant repair; both differ from the
    exponential chain."""
    result = monte_carlo(layout, drives, mttf_h=mttf, mission_h=horizon, rebuild_h=mttr, samples=SAMPLES, seed=12)
    if layout == "raid5":
        expected = raid5_constant_repair_loss_probability(drives, mttf, mttr, horizon)
    else:
        expected = constant_repair_loss_probability(drives, 2, mttf, mttr, horizon)
    _within(result, expected)
    exponential = ctmc_loss_probability(drives, _tolerance(layout), mttf, mttr, horizon)
    if layout == "raid6":  # 0.25 against 0.32: far outside the interval
        assert not result.interval(0.99)[0] <= exponential <= result.interval(0.99)[1]


def test_rebuild_times_from_a_list():
    # Rebuild times of simulated runs, drawn with replacement: a list of one time is that
    # constant, draw for draw; a list of several has the chain of their mean within reach.
    one = monte_carlo("raid5", 8, mttf_h=1000.0, mission_h=500.0, rebuild_h=[10.0], samples=5000, seed=3)
    constant = monte_carlo("raid5", 8, mttf_h=1000.0, mission_h=500.0, rebuild_h=10.0, samples=5000, seed=3)
    assert one == constant
    spread = monte_carlo("raid5", 8, mttf_h=1000.0, mission_h=500.0, rebuild_h=[5.0, 10.0, 15.0], samples=SAMPLES,
                         seed=4)
    _within(spread, raid5_constant_repair_loss_probability(8, 1000.0, 10.0, 500.0), 0.999)


def test_seeded_and_deterministic():
    a = monte_carlo("raid6", 8, mttf_h=1000.0, mission_h=1000.0, rebuild_h=50.0, samples=2000, seed=5)
    b = monte_carlo("raid6", 8, mttf_h=1000.0, mission_h=1000.0, rebuild_h=50.0, samples=2000, seed=5)
    c = monte_carlo("raid6", 8, mttf_h=1000.0, mission_h=1000.0, rebuild_h=50.0, samples=2000, seed=6)
    assert a == b and a != c


# --------------------------------------------------------------------------------------------
# How much is lost: parity declustering's (G − 1)/(C − 1)
# --------------------------------------------------------------------------------------------


def test_declustered_loss_scales_with_the_declustering_ratio():
    """The same failures (same seed, same rebuild time) on 16 drives: RAID-5 and declustered
    arrays of every stripe width lose data in the same missions (any two drives share a stripe),
    and lose (G − 1)/(C − 1) of what RAID-5 loses."""
    drives, kwargs = 16, dict(mttf_h=2000.0, mission_h=3000.0, rebuild_h=1.0, samples=SAMPLES, seed=7)
    raid5 = monte_carlo("raid5", drives, **kwargs)
    assert 0.05 < raid5.p_loss < 0.5
    for width in (3, 4, 8, 16):
        declustered = monte_carlo("declustered", drives, stripe_width=width, **kwargs)
        assert declustered.losses == raid5.losses
        ratio = (width - 1) / (drives - 1)
        assert declustered.lost_member_fraction == pytest.approx(raid5.lost_member_fraction * ratio, rel=1e-12)
        assert declustered.lost_data_fraction == pytest.approx(declustered.lost_member_fraction * 2 / drives)
    # RAID-5's lost share, (1 − x) at the second failure: with a constant rebuild D the failure
    # comes at u ~ Exp(a) within D, a = (N − 1)λ, so E[1 − u/D] = 1 − (1/a − D·e^(−aD)/(1 − e^(−aD)))/D
    # (but for windows the mission's end cuts short: D/T = 1/3000 of them here).
    a, d = (drives - 1) / 2000.0, 1.0
    expected = 1 - (1 / a - d * math.exp(-a * d) / -math.expm1(-a * d)) / d
    standard_error = 0.29 / math.sqrt(raid5.losses)  # (1 − x) is about uniform: sd 1/√12
    assert raid5.lost_member_fraction_given_loss == pytest.approx(expected, abs=4 * standard_error)


def test_expected_bytes_lost():
    # A lost RAID-5 stripe of G units loses the two failed drives' units, 2(G − 1)/G of them
    # data on average (parity rotates); per member byte at risk: 2(G − 1)/G.
    kwargs = dict(mttf_h=2000.0, mission_h=300.0, rebuild_h=10.0, samples=5000, seed=8, member_bytes=1e12)
    raid5 = monte_carlo("raid5", 16, **kwargs)
    assert raid5.expected_lost_bytes == pytest.approx(raid5.lost_member_fraction * 1e12 * 2 * 15 / 16)
    declustered = monte_carlo("declustered", 16, stripe_width=4, **kwargs)
    assert declustered.expected_lost_bytes == pytest.approx(declustered.lost_member_fraction * 1e12 * 2 * 3 / 4)
    raid6 = monte_carlo("raid6", 16, **kwargs)
    assert raid6.expected_lost_bytes == pytest.approx(raid6.lost_member_fraction * 1e12 * 3 * 14 / 16)
    assert monte_carlo("raid5", 16, **{**kwargs, "member_bytes": None}).expected_lost_bytes is None


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call, name", [
    (lambda: ctmc_mttdl(2, 2, 1000.0, 10.0), "drives"),
    (lambda: ctmc_mttdl(1, 1, 1000.0, 10.0), "drives"),
    (lambda: ctmc_mttdl(8, 1, 0.0, 10.0), "mttf_h"),
    (lambda: ctmc_mttdl(8, 1, -5.0, 10.0), "mttf_h"),
    (lambda: ctmc_mttdl(8, 1, math.nan, 10.0), "mttf_h"),
    (lambda: ctmc_mttdl(8, 1, 1000.0, 0.0), "mttr_h"),
    (lambda: ctmc_mttdl(8, -1, 1000.0, 10.0), "tolerance"),
    (lambda: ctmc_mttdl(8, 1, 1000.0, 10.0, repairs="all"), "repairs"),
    (lambda: ctmc_mttdl(8, 2, 1000.0, 10.0, repairs="parallel", repair_phases=4), "repair_phases"),
    (lambda: ctmc_loss_probability(8, 1, 1000.0, 10.0, 0.0), "mission_h"),
    (lambda: ctmc_loss_probability(8, 1, 1000.0, 10.0, -1.0), "mission_h"),
    (lambda: monte_carlo("raid6", 2, mttf_h=1e3, mission_h=1e3, rebuild_h=1.0), "drives"),
    (lambda: monte_carlo("raid5", 8, mttf_h=0, mission_h=1e3, rebuild_h=1.0), "mttf_h"),
    (lambda: monte_carlo("raid5", 8, mttf_h=1e3, mission_h=0, rebuild_h=1.0), "mission_h"),
    (lambda: monte_carlo("raid5", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=-1.0), "rebuild_h"),
    (lambda: monte_carlo("raid5", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=[3.0, -2.0]), "rebuild_h"),
    (lambda: monte_carlo("raid5", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=[]), "rebuild_h"),
    (lambda: monte_carlo("raid5", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=1.0, rebuild="gamma"), "rebuild"),
    (lambda: monte_carlo("raid5", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=1.0, samples=0), "samples"),
    (lambda: monte_carlo("raid7", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=1.0), "layout"),
    (lambda: monte_carlo("raid1", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=1.0), "layout"),
    (lambda: monte_carlo("declustered", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=1.0, stripe_width=9), "drives"),
    (lambda: monte_carlo("declustered", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=1.0, stripe_width=2),
     "stripe_width"),
    (lambda: monte_carlo("raid5", 8, mttf_h=1e3, mission_h=1e3, rebuild_h=1.0, stripe_width=4), "stripe_width"),
    (lambda: mission_loss_probability("weird", 8, mttf_h=1e3, repair_h=1.0, mission_h=1e3), "layout"),
    (lambda: mission_loss_probability("raid1", 7, mttf_h=1e3, repair_h=1.0, mission_h=1e3), "drives"),
    (lambda: fault_tolerance("raid50"), "layout"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError) as caught:
        call()
    assert str(caught.value).startswith(f"{name}:"), str(caught.value)


# --------------------------------------------------------------------------------------------
# Long: the comparisons with a million samples, and a wider sweep
# --------------------------------------------------------------------------------------------


@long_only
@pytest.mark.parametrize("drives", [5, 12])
@pytest.mark.parametrize("layout, mttr, horizon", [("raid5", 5.0, 400.0), ("raid6", 40.0, 1500.0)])
def test_long_more_arrays(drives, layout, mttr, horizon):
    for repairs in ("serial", "parallel"):
        result = monte_carlo(layout, drives, mttf_h=1000.0, mission_h=horizon, rebuild_h=mttr, rebuild="exponential",
                             repairs=repairs, samples=1_000_000, seed=drives)
        _within(result, ctmc_loss_probability(drives, fault_tolerance(layout), 1000.0, mttr, horizon, repairs=repairs))
