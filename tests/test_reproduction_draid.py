"""``raidlab reproduce draid`` (raidlab.reproductions.draid): the drive's zone table against the
core's drive, the whole-drive extrapolation, the declustering bound, the mixture of response
times, the split of a survivor's rebuild work into reads and writes, and one scaled-down run of
the reproduction asserting what the OpenZFS docs publish: dRAID rebuilds onto distributed
spares faster than a RAID-6 group onto one spare, and by no more than (C − S)/(D + P) times."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from raidlab.reproductions import draid

REPO_ROOT = Path(__file__).resolve().parent.parent


# -- the drive --------------------------------------------------------------------------------


def _hc550() -> draid.DriveGeometry:
    return draid.drive_geometry(REPO_ROOT / "experiments" / "draid" / "pool.toml")


def test_the_drive_is_the_hc550_docs_drives_md_derives():
    # 20 zones of 28,936 cylinders whose tracks fall from 4,500 to 2,250 sectors, 18 surfaces,
    # 7,200 rpm, a 125-sector track skew; 18.0005 TB in all, whatever capacity_sectors keeps.
    geometry = _hc550()
    assert len(geometry.zones) == 20 and all(cylinders == 28_936 for cylinders, _, _ in geometry.zones)
    spt = [s for _, s, _ in geometry.zones]
    assert spt[:3] == [4500, 4382, 4263] and spt[-2:] == [2368, 2250]
    assert {skew for _, _, skew in geometry.zones} == {125}
    assert (geometry.surfaces, geometry.rpm) == (18, 7200.0)
    assert geometry.sectors == 35_157_240_000


def test_a_track_costs_a_revolution_and_its_skew():
    # One outer track: 8.333 ms × (1 + 125/4500) = 8.5648 ms, 2,304,000 B: 269.0 MB/s
    # (docs/drives.md's sustained outer rate); one inner track 8.7963 ms: 131.0 MB/s.
    geometry = _hc550()
    outer = draid.sequential_transfer_s(4500, geometry)
    assert outer == pytest.approx(60 / 7200 * (1 + 125 / 4500), rel=1e-12)
    assert 4500 * 512 / outer / 1e6 == pytest.approx(269.0, abs=0.05)
    inner = draid.DriveGeometry(zones=((1, 2250, 125),), surfaces=1, rpm=7200.0)
    assert 2250 * 512 / draid.sequential_transfer_s(2250, inner) / 1e6 == pytest.approx(131.0, abs=0.05)
    with pytest.raises(ValueError):
        draid.sequential_transfer_s(geometry.sectors + 1, geometry)


def test_the_extrapolation_is_bounded_by_the_sector_and_the_transfer_ratios():
    # Two zones of one track each, 10 and 5 sectors, 60 rpm (1 s a revolution), no skew: the
    # whole drive (15 sectors) reads in 2 s, its first 10 sectors in 1 s.
    geometry = draid.DriveGeometry(zones=((1, 10, 0), (1, 5, 0)), surfaces=1, rpm=60.0)
    assert draid.sequential_transfer_s(15, geometry) == pytest.approx(2.0)
    assert draid.sequential_transfer_s(12, geometry) == pytest.approx(1.4)
    assert draid.extrapolation_ratios(10, geometry) == pytest.approx((1.5, 2.0))
    # The hc550 at 400,000,000 sectors, all in the outer zone: the sector ratio, and a transfer
    # ratio above it because the inner zones are slower (about 25 h for the whole drive).
    hc550 = _hc550()
    sector_ratio, transfer_ratio = draid.extrapolation_ratios(400_000_000, hc550)
    assert sector_ratio == pytest.approx(35_157_240_000 / 400_000_000)
    assert draid.sequential_transfer_s(hc550.sectors, hc550) / 3600 == pytest.approx(25.046, abs=0.01)
    assert transfer_ratio == pytest.approx(118.43, abs=0.01)
    low, high = draid.extrapolate_rebuild_s(100.0, 400_000_000, hc550)
    assert (low, high) == pytest.approx((100 * sector_ratio, 100 * transfer_ratio))


# -- declustering -----------------------------------------------------------------------------


def _draid_config(spec: str, children: int) -> str:
    return (f'[array]\nlayout = "draid"\ndrives = {children}\ndraid = "{spec}"\nstripe_unit_kib = 4\n'
            '[drive]\npreset = "ibm0661"\n[workload]\nrequests = 1\n')


@pytest.mark.parametrize("spec, children, shape, bound", [
    ("draid2:8d:2s", 100, (100, 2, 10), 9.8),
    ("draid2:4d:2s", 24, (24, 2, 6), 22 / 6),
    ("draid2:11d:106c", 106, (106, 0, 13), 106 / 13),   # rebuild-controls.md §4.2: ≈ 8.2
    ("draid", 10, (10, 0, 9), 10 / 9),                  # ZFS's defaults: P = 1, D = 8, S = 0
])
def test_the_declustering_bound_is_c_minus_s_over_d_plus_p(spec, children, shape, bound):
    assert draid.draid_shape(_draid_config(spec, children), str(REPO_ROOT)) == shape
    assert draid.declustering_bound(*shape) == pytest.approx(bound)


def test_a_spec_that_is_not_draid_is_refused():
    from raidlab.exceptions import ConfigError

    with pytest.raises(ConfigError) as refused:
        draid.draid_shape(_draid_config("raidz2", 10), str(REPO_ROOT))
    assert refused.value.key == "array.draid"


# -- response times ---------------------------------------------------------------------------


def test_the_mixture_quantile_weighs_each_component_as_a_whole():
    # Weights 1/8 for each of 1..4 and 1/4 for each of 10, 20: cumulative .125 .25 .375 .5 .75 1.
    components = [([4, 2, 3, 1], 0.5), ([20, 10], 0.5)]
    assert draid.mixture_quantile(components, 0.5) == 4
    assert draid.mixture_quantile(components, 0.6) == 10
    assert draid.mixture_quantile(components, 0.99) == 20
    # The pool's 1 : 9: one rebuilding group whose requests all take 100 ms, nine normal groups
    # whose requests take 1..100 ms: 10 % of the pool at 100 ms, so p90 is the normal groups'
    # (the smallest x with 0.9·F(x) ≥ 0.9 is their largest, 100), p50 their 56th of 100.
    normal = list(range(1, 101))
    pool = [(normal, 9.0), ([100.0] * 5, 1.0)]
    assert draid.mixture_quantile(pool, 0.9) == 100
    assert draid.mixture_quantile(pool, 0.5) == 56
    assert draid.mixture_quantile(pool, 0.1) == 12
    # One component: its own empirical quantile.
    assert draid.mixture_quantile([(normal, 1.0)], 0.99) == 99
    assert math.isnan(draid.mixture_quantile([([], 1.0)], 0.5))
    with pytest.raises(ValueError):
        draid.mixture_quantile(pool, 0.0)


def test_period_responses_are_chosen_by_arrival_and_leave_lost_ones_out():
    responses = pd.DataFrame({"arrival_ns": [0, 1_000_000_000, 2_000_000_000, 3_000_000_000],
                              "response_ns": [1_000_000, 2_000_000, 3_000_000, 4_000_000],
                              "lost": [0, 0, 1, 0]})
    assert draid.period_response_ms(responses, 1.0, 3.0).tolist() == [2.0]
    assert draid.period_response_ms(responses, 0.0, 10.0).tolist() == [1.0, 2.0, 4.0]


# -- the survivors' reads ---------------------------------------------------------------------


def test_a_survivors_rebuild_work_splits_into_reads_and_writes():
    # 10 reads of 128 KiB and 2 writes of 1 MiB: 12 operations, 3.407872 MB.
    megabytes = (10 * 131072 + 2 * 1048576) / 1e6
    assert draid.split_reads_and_writes(12, megabytes, 131072, 1048576) == (10.0, 2.0)
    assert draid.split_reads_and_writes(5, 5 * 0.131072, 131072, 1048576) == (5.0, 0.0)
    with pytest.raises(ValueError):  # 12 operations cannot make 2 MB of these sizes
        draid.split_reads_and_writes(12, 2.0, 131072, 1048576)
    with pytest.raises(ValueError):
        draid.split_reads_and_writes(12, 2.0, 4096, 4096)


def test_the_imbalance_is_most_over_least():
    assert draid.read_imbalance([100, 168, 120]) == pytest.approx(1.68)
    assert draid.read_imbalance([7, 7, 7]) == 1.0
    assert math.isnan(draid.read_imbalance([0, 5]))


# -- the reproduction, scaled down ------------------------------------------------------------


@pytest.mark.engine
def test_a_small_pool_rebuilds_faster_than_a_raid6_group_and_within_the_docs_bound(tmp_path):
    """24 drives as draid2:4d:2s against a RAID-6 group of 8 + 2 with a hot spare, 2 GB of each
    drive, the same load per drive (20 requests/s): the docs' rule bounds the speed-up by
    (C − S)/(D + P) = 22/6."""
    from raidlab.reproductions import Context, entry, run_reproduction

    options = {"capacity_sectors": 4_000_000, "pool_drives": 24, "pool_rate_per_s": 480.0,
               "layouts": ["draid2:4d:2s"], "checks": False}
    context = Context(output=tmp_path / "draid", seeds=1, jobs=1, options=options)
    report = run_reproduction(entry("draid"), context)
    assert report.error is None, report.error
    assert report.notes, "docs/reproduction.md has no section for draid"
    assert [table.title.split(" (")[0] for table in report.tables][:2] == [
        "Rebuild of one failed drive under load", "User response time"]
    assert (tmp_path / "draid" / "draid.png").stat().st_size > 10_000

    pool = pd.read_parquet(tmp_path / "draid" / "draid-pool" / "summary.parquet")
    group = pd.read_parquet(tmp_path / "draid" / "draid-group" / "summary.parquet")
    assert pool["status"].tolist() == ["done"] and group["status"].tolist() == ["done"]
    assert pool["rebuild.outcome"].tolist() == ["complete"] and group["rebuild.outcome"].tolist() == ["complete"]
    draid_rate = float(pool["rebuild.target_write_mb_s"].iloc[0])
    group_rate = float(group["rebuild.target_write_mb_s"].iloc[0])
    bound = draid.declustering_bound(24, 2, 4 + 2)
    assert 1.0 < draid_rate / group_rate <= bound, (draid_rate, group_rate, bound)

    # The group's p99 while rebuilding, from its responses table, is the summary's (whose
    # percentiles come from its histogram's bins: within 2 %); the pool's mixture lies
    # between the group's normal and rebuilding p99.
    from raidlab.results.store import RUNS_DIR

    case = draid.Case("RAID-6", "layout")
    record = draid._measure(tmp_path / "draid" / "draid-group" / RUNS_DIR / str(group["run_id"].iloc[0]), case, _hc550())
    assert record["group_rebuilding_p99_from_responses"] == pytest.approx(record["rebuilding_p99"], rel=0.02)
    assert record["normal_p99"] <= record["pool_p99"] <= record["rebuilding_p99"]

    # A second reproduction reuses both finished runs.
    again = run_reproduction(entry("draid"), context)
    assert all("1 already done, 0 run now" in fact for fact in again.facts[:2]), again.facts
