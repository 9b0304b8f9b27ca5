"""raidlab.rebuild_plan: the exposure formulas, the Pareto front, the SLO pick, candidates and
the base configuration, bad input naming the option or key, and one small end-to-end run of
``raidlab rebuild-plan`` with VSM, PCM and a rate limit."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from raidlab.cli import main
from raidlab.exceptions import ConfigError
from raidlab.rebuild_plan import (
    DEFAULT_CANDIDATES,
    Candidate,
    MediaRate,
    afr_of_mttf,
    candidates_from_table,
    check_candidates,
    data_loss_probability,
    hourly_failure_rate,
    pareto_front,
    pick_for_slo,
    prepare_base,
    run_plan,
    second_failure_probability,
    ure_probability,
)

#: A RAID-5 of five small drives (19.7 MB each) under 200 random 4 KiB reads/s (utilization
#: about 0.57); no failure, spare or rebuild: rebuild-plan adds them. Runs of a second or two.
TINY = """\
seed = 1

[array]
layout = "raid5"
drives = 5
stripe_unit_kib = 4

[drive]
zero_latency = true

[drive.model]
rpm = 7200
surfaces = 4
zones = [{ cylinders = 100, sectors_per_track = 96 }]
seek = { kind = "formula", a_ms = 1.0, b_ms = 0.002, c_ms = 0.25 }
head_switch_ms = 0.3
command_overhead_ms = 0.2

[workload]
duration_s = 200
read_fraction = 1.0
size_kib = 4
align_kib = 4

[workload.arrival]
process = "poisson"
rate_per_s = 200
"""


# --------------------------------------------------------------------------------------------
# Exposure: against values computed by hand
# --------------------------------------------------------------------------------------------


def test_hourly_failure_rate_of_an_afr():
    # λ = −ln(1 − 0.0157) / 8766 h = 0.0158246 / 8766 = 1.80522e-6 per hour.
    assert hourly_failure_rate(0.0157) == pytest.approx(1.80522e-6, rel=1e-5)
    assert hourly_failure_rate(0.0) == 0.0


def test_second_failure_probability_by_hand():
    # 8-drive RAID-5: 7 survivors, 30 h degraded, AFR 1.57 %: x = 7 · 30 · 1.80522e-6 =
    # 3.79096e-4; P = 1 − e^−x = x − x²/2 + … = 3.79024e-4.
    assert second_failure_probability(7, 30.0, 0.0157) == pytest.approx(3.79024e-4, rel=1e-5)
    # 4 survivors, 10 h, AFR 2 %: λ = 0.0202027 / 8766 = 2.30467e-6, x = 9.21866e-5.
    assert second_failure_probability(4, 10.0, 0.02) == pytest.approx(9.21824e-5, rel=1e-5)
    assert second_failure_probability(4, 0.0, 0.02) == 0.0
    assert second_failure_probability(4, 10.0, 0.0) == 0.0


def test_ure_probability_by_hand():
    # 7 × 20 TB read = 1.12e15 bits at 1e-15 per bit: 1.12 errors expected, P = 1 − e^−1.12 = 0.67372
    # (the worked example of the rebuild-controls anchors, "≈ 67 %").
    assert ure_probability(7 * 20e12 * 8, 1e-15) == pytest.approx(0.67372, rel=1e-5)
    # Small: 1e12 bits at 1e-15: P = 1 − e^−0.001 = 9.995e-4.
    assert ure_probability(1e12, 1e-15) == pytest.approx(9.995002e-4, rel=1e-6)
    assert ure_probability(0.0, 1e-15) == 0.0


def test_data_loss_probability_by_hand():
    # A 5-drive RAID-5, every rebuild 1 h, AFR 1.57 % (λ = 1.80522e-6 per hour), a year: the
    # first failure comes at 5λ, and one of the 4 others within the hour loses data:
    # P ≈ 8766 · 5λ · (1 − e^(−4λ·1 h)) = 8766 · 5 · 4 · λ² = 5.7134e-7.
    raid5 = {"layout": "raid5", "drives": 5, "fault_tolerance": 1}
    assert data_loss_probability(raid5, 4, 1.0, 0.0157) == pytest.approx(5.7134e-7, rel=1e-3)
    # Twice the mission, twice the risk; a rebuild twice as long, twice the risk.
    assert data_loss_probability(raid5, 4, 1.0, 0.0157, 2 * 8766.0) == pytest.approx(2 * 5.7134e-7, rel=2e-3)
    assert data_loss_probability(raid5, 4, 2.0, 0.0157) == pytest.approx(2 * 5.7134e-7, rel=2e-3)
    # Parity declustering: any two failed drives share a stripe, so the same chain.
    assert data_loss_probability({**raid5, "layout": "declustered"}, 4, 1.0, 0.0157) == \
        data_loss_probability(raid5, 4, 1.0, 0.0157)
    # RAID-6: a third failure while two rebuilds (one at a time) overlap: 8766 · 5λ · 4λ · 3λ ·
    # 1 h² / 2 (the second failure's rebuild waits; the third must come before the first ends).
    raid6 = {"layout": "raid6", "drives": 5, "fault_tolerance": 2}
    lam = hourly_failure_rate(0.0157)
    assert data_loss_probability(raid6, 4, 1.0, 0.0157) == pytest.approx(8766 * 60 * lam ** 3 / 2, rel=1e-3)
    # RAID-1 of three mirror pairs: three independent pairs, 8766 · 2λ · λ · 1 h each.
    raid1 = {"layout": "raid1", "drives": 6, "fault_tolerance": 1}
    assert data_loss_probability(raid1, 1, 1.0, 0.0157) == pytest.approx(3 * 8766 * 2 * lam ** 2, rel=1e-3)
    # What the chain has no model of, or no rebuild time: no figure.
    assert data_loss_probability({"layout": "md_raid10", "drives": 6, "fault_tolerance": 2}, 2, 1.0, 0.0157) is None
    assert data_loss_probability({"drives": 5}, 4, 1.0, 0.0157) is None
    assert data_loss_probability(raid5, 4, None, 0.0157) is None
    assert data_loss_probability(raid5, 4, 1.0, 0.0) == 0.0


def test_afr_of_an_mttf():
    # AFR = 1 − e^(−8766/2.5e6) = 0.35 % (the Exos X20's rated 2.5 M h MTBF), the inverse of λ.
    assert afr_of_mttf(2.5e6) == pytest.approx(0.0035003, rel=1e-4)
    assert 1.0 / hourly_failure_rate(afr_of_mttf(554_000.0)) == pytest.approx(554_000.0, rel=1e-12)


def test_bad_rates_name_the_option():
    for afr in (-0.01, 1.0, 1.5, math.nan):
        with pytest.raises(ConfigError) as caught:
            second_failure_probability(4, 1.0, afr)
        assert caught.value.key == "--afr"
    with pytest.raises(ConfigError) as caught:
        ure_probability(1e9, -1e-15)
    assert caught.value.key == "--ure-per-bit"


# --------------------------------------------------------------------------------------------
# Pareto front and the SLO pick: pure functions of a table
# --------------------------------------------------------------------------------------------


def test_pareto_front():
    times = [100.0, 200.0, 150.0, 300.0, 100.0, None, 50.0]
    p99s = [80.0, 40.0, 60.0, 30.0, 90.0, 10.0, 200.0]
    # 4 is beaten by 0 (same time, higher p99); 5 has no time; the rest trade off.
    assert pareto_front(times, p99s) == [6, 0, 2, 1, 3]
    assert pareto_front([10.0, 10.0], [5.0, 5.0]) == [0, 1]  # equal points beat neither
    assert pareto_front([], []) == []
    assert pareto_front([1.0, 2.0], [1.0, 2.0]) == [0]


def _results() -> pd.DataFrame:
    return pd.DataFrame({
        "candidate": ["a", "b", "c", "d", "e"],
        "rebuild_time_s": [3600.0, 1800.0, 7200.0, 1800.0, float("nan")],
        "p99_ms": [40.0, 90.0, 20.0, 60.0, 5.0],
    })


def test_slo_pick_is_the_fastest_within():
    choice = pick_for_slo(_results(), 60.0)
    assert (choice.within, choice.index, choice.label) == (True, 3, "d")  # d: 1800 s at 60 ms (b is over)
    assert "d" in choice.text and "60" in choice.text
    choice = pick_for_slo(_results(), 45.0)
    assert (choice.within, choice.label) == (True, "a")
    tie = pd.DataFrame({"candidate": ["x", "y"], "rebuild_time_s": [100.0, 100.0], "p99_ms": [30.0, 20.0]})
    assert pick_for_slo(tie, 50.0).label == "y"  # same time: the lower p99


def test_slo_pick_when_none_is_within_names_the_closest():
    choice = pick_for_slo(_results(), 10.0)  # e (5 ms) never finished: it takes no part
    assert (choice.within, choice.label) == (False, "c")
    assert "no candidate" in choice.text and "closest: c" in choice.text
    empty = pick_for_slo(_results().iloc[4:], 10.0)
    assert empty.index is None and not empty.within


def test_slo_must_be_positive():
    for slo in (0.0, -5.0):
        with pytest.raises(ConfigError) as caught:
            pick_for_slo(_results(), slo)
        assert caught.value.key == "--p99-slo-ms"


# --------------------------------------------------------------------------------------------
# Candidates and the base configuration
# --------------------------------------------------------------------------------------------


def test_the_default_set():
    assert len(DEFAULT_CANDIDATES) == 8
    disciplines = [c.discipline("") for c in DEFAULT_CANDIDATES]
    assert disciplines.count("md") == 3 and disciplines.count("mclock") == 3
    assert {"vsm", "pcm"} <= set(disciplines)
    profiles = {c.overrides.get("rebuild.mclock.profile") for c in DEFAULT_CANDIDATES} - {None}
    assert profiles == {"high_client_ops", "balanced", "high_recovery_ops"}
    assert len({c.label for c in DEFAULT_CANDIDATES}) == 8


def test_media_rate_settings():
    quarter = DEFAULT_CANDIDATES[2].resolved(178.5)
    assert quarter["rebuild.md.speed_limit_max_kib_s"] == round(178.5e6 / 4 / 1024)
    assert quarter["rebuild.md.speed_limit_min_kib_s"] == 1000  # the default floor, under the ceiling
    slow = DEFAULT_CANDIDATES[2].resolved(1.6)  # a 1990 drive: a quarter is 391 KiB/s
    assert slow["rebuild.md.speed_limit_min_kib_s"] == slow["rebuild.md.speed_limit_max_kib_s"] == 391
    assert MediaRate(0.5).kib_s(2.048) == 1000


def test_candidates_from_a_table():
    table = {"candidates": [
        {"label": "slow", "rebuild": {"discipline": "rate", "rate_mb_s": 5}},
        {"rebuild.discipline": "pcm", "rebuild.unit": {"tracks": 4}},
    ]}
    first, second = candidates_from_table(table)
    assert first.label == "slow" and first.overrides == {"rebuild.discipline": "rate", "rebuild.rate_mb_s": 5}
    assert second.overrides == {"rebuild.discipline": "pcm", "rebuild.unit": {"tracks": 4}}
    assert second.label.startswith("pcm")
    with pytest.raises(ConfigError) as caught:
        candidates_from_table({"candidates": [{"label": "nothing"}]})
    assert caught.value.key == "rebuild_plan.candidates[0]"
    with pytest.raises(ConfigError) as caught:
        candidates_from_table({"candidate": []})
    assert caught.value.key == "rebuild_plan.candidate"


def test_prepare_base_adds_failure_spare_and_end_run(tmp_path):
    document = {"array": {"layout": "raid5", "drives": 5}, "metrics": {"warmup_s": 30},
                "workload": {"trace": {"path": "t.csv"}},
                "rebuild": {"discipline": "rate", "rate_mb_s": 3.0}}
    base = prepare_base(document, tmp_path)
    assert base.document["failures"] == [{"drive": 0, "at_s": 30.0}]  # at the end of the warm-up
    assert base.document["array"]["spares"] == 1
    assert base.document["rebuild"] == {"discipline": "rate", "end_run": True}
    assert base.discipline == "rate" and base.discipline_settings == {"rebuild.rate_mb_s": 3.0}
    assert base.document["workload"]["trace"]["path"] == str(tmp_path / "t.csv")
    assert document["rebuild"]["rate_mb_s"] == 3.0  # the caller's document is left alone
    kept = prepare_base({"failures": [{"drive": 3, "at_s": 9.0}], "array": {"spares": 2}}, tmp_path)
    assert (kept.fail_drive, kept.fail_at_s, kept.document["array"]["spares"]) == (3, 9.0, 2)
    told = prepare_base({"failures": [{"drive": 3, "at_s": 9.0}], "workload": {"duration_s": 500}}, tmp_path,
                        fail_drive=1)
    assert told.document["failures"] == [{"drive": 1, "at_s": 50.0}]  # a tenth of the workload


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    return path


def test_unknown_discipline_names_the_candidate(tmp_path):
    with pytest.raises(ConfigError) as caught:
        run_plan(_config(tmp_path), tmp_path / "out",
                 candidates=[Candidate("vsm", {"rebuild.discipline": "vsm"}),
                             Candidate("my throttle", {"rebuild.discipline": "no_such_discipline"})])
    assert caught.value.key == "rebuild.discipline"
    assert "'my throttle'" in str(caught.value) and "no_such_discipline" in str(caught.value)
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_a_setting_the_core_refuses_names_the_candidate(tmp_path):
    from raidlab.config import parse_toml

    base = prepare_base(parse_toml(TINY), tmp_path, fail_at_s=5)
    with pytest.raises(ConfigError) as caught:
        check_candidates([Candidate("rate without a rate", {"rebuild.discipline": "rate"})], base, tmp_path, None)
    assert caught.value.key == "rebuild.rate_mb_s" and "'rate without a rate'" in str(caught.value)


@pytest.mark.parametrize("arguments, option", [
    (["--afr", "-0.01"], "--afr"),
    (["--afr", "1"], "--afr"),
    (["--afr", "1.2"], "--afr"),
    (["--p99-slo-ms", "0"], "--p99-slo-ms"),
    (["--p99-slo-ms", "-3"], "--p99-slo-ms"),
    (["--ure-per-bit", "-1e-15"], "--ure-per-bit"),
    (["--mission-years", "0"], "--mission-years"),
    (["--mission-years", "-2"], "--mission-years"),
])
def test_bad_options_are_refused_naming_them(tmp_path, capsys, arguments, option):
    with pytest.raises(SystemExit) as caught:
        main(["rebuild-plan", str(_config(tmp_path)), "-o", str(tmp_path / "out"), *arguments])
    assert caught.value.code == 2
    assert f"argument {option}" in capsys.readouterr().err
    with pytest.raises(ConfigError) as error:
        run_plan(_config(tmp_path), tmp_path / "out", afr=float(arguments[1]) if option == "--afr" else 0.01,
                 p99_slo_ms=float(arguments[1]) if option == "--p99-slo-ms" else None,
                 ure_per_bit=float(arguments[1]) if option == "--ure-per-bit" else 1e-15,
                 mission_years=float(arguments[1]) if option == "--mission-years" else 1.0)
    assert error.value.key == option


@pytest.mark.parametrize("arguments, expected", [
    (["--mttf-hours", "0"], "argument --mttf-hours: expected a drive's mean time to failure"),
    (["--mttf-hours", "-5"], "argument --mttf-hours"),
    (["--mttf-hours", "100"], "argument --mttf-hours: a mean time to failure of 100 h fails every drive"),
    (["--mttf-hours", "1e6", "--afr", "0.01"], "not allowed with argument"),
])
def test_mttf_hours_is_checked_and_excludes_afr(tmp_path, capsys, arguments, expected):
    with pytest.raises(SystemExit) as caught:
        main(["rebuild-plan", str(_config(tmp_path)), "-o", str(tmp_path / "out"), *arguments])
    assert caught.value.code == 2
    assert expected in capsys.readouterr().err


def test_candidates_of_the_configuration_and_of_a_file(tmp_path):
    config = tmp_path / "with-plan.toml"
    config.write_text(TINY + """
[[rebuild_plan.candidates]]
label = "fast"
rebuild.discipline = "pcm"

[[rebuild_plan.candidates]]
label = "mine"
rebuild.discipline = "my_own"
""", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        run_plan(config, tmp_path / "out")
    assert "'mine'" in str(caught.value) and "my_own" in str(caught.value)
    listing = tmp_path / "candidates.toml"
    listing.write_text('[[rebuild_plan.candidates]]\nlabel = "theirs"\n"rebuild.discipline" = "nope"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        run_plan(config, tmp_path / "out", candidates_file=listing)  # the file's candidates win
    assert "'theirs'" in str(caught.value)
    listing.write_text("[other]\nx = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        run_plan(config, tmp_path / "out", candidates_file=listing)
    assert caught.value.key == "rebuild_plan"


@pytest.mark.engine
def test_media_rate_pilot():
    from raidlab.rebuild_plan import measure_media_rate_mb_s

    # The IBM 0661: 1.6-1.7 MB/s sustained over its surface (a 1990 3.5-inch drive).
    assert 1.4 < measure_media_rate_mb_s({"preset": "ibm0661"}) < 1.9
    # A drive smaller than the pilot's reads: the pilot reads less at a time.
    small = {"zero_latency": True, "model": {"rpm": 7200, "surfaces": 1, "zones": [{"cylinders": 40, "sectors_per_track": 96}],
                                             "seek": {"kind": "formula", "a_ms": 1.0, "b_ms": 0.002, "c_ms": 0.25},
                                             "head_switch_ms": 0.3, "command_overhead_ms": 0.2}}
    assert 3.0 < measure_media_rate_mb_s(small) < 6.0  # 48 KiB a revolution at 120 rev/s: 5.9 MB/s at most


def test_unknown_policy_on_the_command_line(tmp_path, capsys):
    status = main(["rebuild-plan", str(_config(tmp_path)), "-o", str(tmp_path / "out"), "--policy", "vsm",
                   "--policy", "warp_speed"])
    assert status == 2
    err = capsys.readouterr().err
    assert "rebuild.discipline" in err and "'warp_speed'" in err


# --------------------------------------------------------------------------------------------
# End to end
# --------------------------------------------------------------------------------------------


@pytest.mark.engine
def test_end_to_end_small_plan(tmp_path, capsys):
    config = _config(tmp_path)
    output = tmp_path / "plan"
    status = main(["rebuild-plan", str(config), "-o", str(output), "--fail-at", "5", "--jobs", "2",
                   "--policy", "vsm", "--policy", "pcm", "--policy", "rate", "--with", "rebuild.rate_mb_s=2",
                   "--p99-slo-ms", "45", "--json"])
    assert status == 0
    answer = json.loads(capsys.readouterr().out)
    rows = {row["candidate"]: row for row in answer["candidates"]}
    assert list(rows) == ["vsm", "pcm", "rate rate_mb_s=2"]
    for row in rows.values():
        assert row["status"] == "done" and row["rebuild_time_s"] > 0
        assert 0 < row["p50_ms"] <= row["p99_ms"]
        assert row["survivors"] == 4 and row["survivor_read_source"] == "measured"
        # Each of the 4 survivors reads the lost member's 19.66 MB once.
        assert row["survivor_read_bytes"] == pytest.approx(4 * 100 * 4 * 96 * 512, rel=0.01)
        assert 0 < row["p_second_failure"] < 1e-6 and 0 < row["p_ure"] < 1e-5
        # Rebuilds of seconds: data loss within a year is a few in 10^9.
        assert row["p_data_loss"] == pytest.approx(data_loss_probability(
            {"layout": "raid5", "drives": 5, "fault_tolerance": 1}, 4, row["degraded_s"] / 3600, 0.0157), rel=1e-9)
        assert 0 < row["p_data_loss"] < 1e-7
    assert answer["mission_years"] == 1.0 and answer["mttf_hours"] == pytest.approx(553_949, rel=1e-5)
    # Fu et al.'s conclusion at their default (B = 64 units, one-track units), which
    # docs/reproduction.md finds raidlab reproduces: VSM rebuilds no slower than PCM under
    # load, and with a lower user response time.
    assert rows["vsm"]["rebuild_time_s"] <= rows["pcm"]["rebuild_time_s"]
    assert rows["vsm"]["p99_ms"] < rows["pcm"]["p99_ms"]
    # The rate limit is a ceiling: the member's 19.66 MB at 2 MB/s per drive takes 9.83 s at
    # least, a little longer under load.
    assert 9.8 <= rows["rate rate_mb_s=2"]["rebuild_time_s"] < 9.83 * 1.25
    assert "vsm" in answer["pareto_front"] and "pcm" not in answer["pareto_front"]
    assert answer["slo"]["within"] and answer["slo"]["candidate"] == "vsm"
    for name in ("plan.csv", "plan.parquet", "plan.json", "pareto.png", "pareto.svg", "base.toml",
                 "summary.parquet", "sweep.toml"):
        assert (output / name).is_file(), name
    table = pd.read_parquet(output / "plan.parquet")
    assert table["candidate"].tolist() == list(rows) and table["pareto"].dtype == bool

    # Deterministic, and content-addressed: the same plan again runs nothing and gives the same table.
    again = run_plan(config, output, fail_at_s=5, candidates=candidates_from_table({"candidates": [
        {"label": "vsm", "rebuild.discipline": "vsm"}, {"label": "pcm", "rebuild.discipline": "pcm"},
        {"label": "rate rate_mb_s=2", "rebuild.discipline": "rate", "rebuild.rate_mb_s": 2}]}), jobs=1)
    assert again.ran == 0 and again.skipped == 3
    pd.testing.assert_frame_equal(again.table, table)


def _has_production_throttles() -> bool:
    from raidlab.catalogue import family

    return {"md", "mclock"} <= set(family("rebuild_disciplines").names)


@pytest.mark.engine
@pytest.mark.skipif(not _has_production_throttles(), reason="this build has no md or mclock discipline")
def test_the_default_set_end_to_end(tmp_path):
    plan = run_plan(_config(tmp_path), tmp_path / "plan", fail_at_s=5, p99_slo_ms=1000)
    table = plan.table
    assert table["candidate"].tolist() == [c.label for c in DEFAULT_CANDIDATES]
    assert (table["status"] == "done").all() and (table["rebuild_time_s"] > 0).all()
    assert plan.slo is not None and plan.slo.within
    # md capped at a quarter of the drive's rate: the member's bytes at that rate at least.
    capped = table.set_index("candidate").loc["md max=media/4"]
    cap_bytes_s = DEFAULT_CANDIDATES[2].resolved(plan.media_rate_mb_s)["rebuild.md.speed_limit_max_kib_s"] * 1024
    assert capped["rebuild_time_s"] >= 0.95 * capped["survivor_read_bytes"] / capped["survivors"] / cap_bytes_s
    assert "speed_limit_max_kib_s" in capped["settings"]


# --------------------------------------------------------------------------------------------
# Issue 34, item 7: what the command says when there is nothing to say
# --------------------------------------------------------------------------------------------


def test_a_candidate_without_a_spare_says_so_not_nan():
    """A run with no rebuild has no outcome: NaN in the sweep's table when another run has one.
    The row says there was no rebuild and why (no spare), never "rebuild nan"."""
    from raidlab.rebuild_plan import plan_rows

    summary = pd.DataFrame([
        {"run_id": "a", "status": "done", "rebuild.outcome": "complete", "rebuild.rebuild_time_s": 30.0,
         "rebuild.ended_at_s": 35.0, "rebuild.failed_at_s": 5.0, "response_ms_by_period.rebuilding.p50": 2.0,
         "response_ms_by_period.rebuilding.p99": 9.0, "capacity_bytes": 4e9},
        {"run_id": "b", "status": "done", "rebuild.outcome": math.nan, "rebuild.rebuild_time_s": math.nan,
         "capacity_bytes": 4e9},
        {"run_id": "c", "status": "done", "rebuild.outcome": None, "capacity_bytes": 4e9},
    ])
    candidates = [Candidate("vsm", {"rebuild.discipline": "vsm"}),
                  Candidate("vsm spares=0", {"rebuild.discipline": "vsm", "array.spares": 0}),
                  Candidate("pcm", {"rebuild.discipline": "pcm"})]
    settings = [dict(c.overrides) for c in candidates]
    resolved = {"array": {"layout": "raid5", "drives": 5, "spares": 1}}
    # A RAID-5 of five members of 1 GB, as the core describes it (_core.layout_facts).
    layout = {"drives": 5, "member_bytes": 10**9, "every_member_examined": True, "same_exposure_count": True,
              "exposure": [{"member": m, "count": 4, "members": [o for o in range(5) if o != m]} for m in range(5)]}
    table = plan_rows(candidates, ["vsm", "vsm", "pcm"], settings, summary, [None] * 3, resolved,
                      layouts=[layout] * 3, afr=0.01, ure_per_bit=1e-15)
    status = table["status"].tolist()
    assert status[0] == "done"
    assert status[1] == "no rebuild: no spare to rebuild onto (array.spares = 0)"
    assert status[2] == "no rebuild"  # a spare, but no rebuild: no reason to give
    assert not any("nan" in str(value).lower() for value in status + table["outcome"].tolist())


@pytest.mark.engine
def test_no_spare_end_to_end_prints_no_rebuild(tmp_path, capsys):
    status = main(["rebuild-plan", str(_config(tmp_path)), "-o", str(tmp_path / "out"), "--fail-at", "5", "-j", "1",
                   "--policy", "vsm", "--with", "array.spares=0"])
    out = capsys.readouterr().out
    assert status == 0
    assert "no spare to rebuild onto" in out and "nan" not in out.lower()


@pytest.mark.engine
@pytest.mark.parametrize("slot", ["5", "6", "-1"])
def test_fail_drive_must_name_a_member_not_a_spare(tmp_path, capsys, slot):
    # TINY has 5 members (slots 0-4); rebuild-plan gives it a spare at slot 5.
    assert main(["rebuild-plan", str(_config(tmp_path)), "-o", str(tmp_path / "out"), "--fail-drive", slot,
                 "--policy", "vsm"]) == 2
    err = capsys.readouterr().err
    assert "--fail-drive" in err and "from 0 to 4" in err and f"not {slot}" in err
    assert not (tmp_path / "out").exists()
    assert prepare_base({"array": {"drives": 5}}, tmp_path, fail_drive=4).fail_drive == 4


def test_a_failure_after_the_workload_is_a_warning_naming_fail_at_and_the_end(tmp_path):
    # TINY's workload issues requests for 200 s.
    document = {"array": {"drives": 5}, "workload": {"duration_s": 200}}
    late = prepare_base(document, tmp_path, fail_at_s=250)
    assert len(late.warnings) == 1
    assert "--fail-at 250 s" in late.warnings[0] and "workload.duration_s = 200 s" in late.warnings[0]
    assert prepare_base(document, tmp_path, fail_at_s=150).warnings == []
    # requests at a Poisson rate end about requests / rate in.
    poisson = {"workload": {"requests": 1000, "arrival": {"process": "poisson", "rate_per_s": 10}}}
    assert "about 100 s" in prepare_base(poisson, tmp_path, fail_at_s=120).warnings[0]
    kept = prepare_base({"workload": {"duration_s": 50}, "failures": [{"drive": 1, "at_s": 60.0}]}, tmp_path)
    assert "configuration's first failure, at 60 s" in kept.warnings[0]


def test_the_warning_is_given_before_anything_runs(tmp_path, monkeypatch):
    import raidlab.experiments.sweep

    heard = []

    class Stop(Exception):
        pass

    def stop(*args, **kwargs):
        assert heard, "the runs started before the warning was given"
        raise Stop

    monkeypatch.setattr(raidlab.experiments.sweep, "run_sweep", stop)
    with pytest.raises(Stop):
        run_plan(_config(tmp_path), tmp_path / "out", fail_at_s=250, warn=heard.append,
                 candidates=[Candidate("vsm", {"rebuild.discipline": "vsm"})])
    assert len(heard) == 1 and "--fail-at 250 s" in heard[0] and "workload.duration_s = 200 s" in heard[0]


def test_a_repeated_candidate_is_left_out_so_the_counts_add_up(tmp_path):
    from raidlab.rebuild_plan import _without_repeats

    candidates = [Candidate("pcm", {"rebuild.discipline": "pcm"}), Candidate("vsm", {"rebuild.discipline": "vsm"}),
                  Candidate("pcm (2)", {"rebuild.discipline": "pcm"})]
    kept, disciplines, settings, repeated = _without_repeats(
        candidates, ["pcm", "vsm", "pcm"], [dict(c.overrides) for c in candidates])
    assert [c.label for c in kept] == ["pcm", "vsm"] and disciplines == ["pcm", "vsm"]
    assert repeated == [("pcm (2)", "pcm")]


@pytest.mark.engine
def test_a_repeated_policy_end_to_end(tmp_path, capsys):
    status = main(["rebuild-plan", str(_config(tmp_path)), "-o", str(tmp_path / "out"), "--fail-at", "5", "-j", "2",
                   "--policy", "pcm", "--policy", "vsm", "--policy", "pcm"])
    captured = capsys.readouterr()
    assert status == 0
    assert "warning: candidate 'pcm (2)' sets the same as 'pcm': left out" in captured.err
    assert "2 candidates: 2 ran, 0 already done, 0 failed" in captured.out
    assert pd.read_parquet(tmp_path / "out" / "plan.parquet")["candidate"].tolist() == ["pcm", "vsm"]


def test_a_rebuild_unit_of_the_wrong_kind_says_what_it_accepts(tmp_path, capsys):
    assert main(["rebuild-plan", str(_config(tmp_path)), "-o", str(tmp_path / "out"), "--policy", "vsm",
                 "--with", "rebuild.unit=7"]) == 2
    err = capsys.readouterr().err
    assert "rebuild.unit" in err and "Config" not in err and "struct" not in err
    assert "expected a table" in err and "{ tracks = 1 }" in err and "{ sectors = 2048 }" in err
    assert main(["rebuild-plan", str(_config(tmp_path)), "-o", str(tmp_path / "out"), "--policy", "vsm",
                 "--set", "rebuild.unit=7"]) == 2
    err = capsys.readouterr().err
    assert "RebuildUnitConfig" not in err and "{ cylinders = 1 }" in err


def test_the_pareto_plot_uses_the_tables_unit_and_keeps_its_labels_inside(tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from raidlab.rebuild_plan import draw_pareto

    table = pd.DataFrame({
        "candidate": ["a candidate with a rather long label", "mid", "mclock high_recovery_ops and a long tail"],
        "rebuild_time_s": [10.0, 40.0, 95.0], "p99_ms": [120.0, 60.0, 20.0]})
    # The table prints these times in seconds (under 2 min); so does the figure's axis.
    svg = [path for path in draw_pareto(table, tmp_path / "pareto") if path.suffix == ".svg"][0]
    assert "rebuild time (s)" in svg.read_text() and "rebuild time (min)" not in svg.read_text()

    from raidlab.rebuild_plan import _duration, pareto_figure, time_unit

    assert time_unit(table["rebuild_time_s"]) == (1.0, "s")
    assert _duration(95.0, time_unit(table["rebuild_time_s"])) == "95.0 s"  # as the table prints it
    figure = pareto_figure(table)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    axes = figure.axes[0]
    assert axes.get_xlabel() == "rebuild time (s)"
    assert axes.get_xlim()[0] < 10.0 and axes.get_xlim()[1] > 95.0  # in seconds, not minutes
    inside, whole = axes.get_window_extent(), figure.bbox
    assert len(axes.texts) == 3
    for text in axes.texts:
        box = text.get_window_extent(renderer=canvas.get_renderer())
        assert inside.x0 - 0.5 <= box.x0 and box.x1 <= inside.x1 + 0.5, text.get_text()
        assert inside.y0 - 0.5 <= box.y0 and box.y1 <= inside.y1 + 0.5, text.get_text()
        assert whole.x0 <= box.x0 and box.x1 <= whole.x1
    # Hours and minutes alike: the axis follows the table's unit.
    assert time_unit([30.0, 300.0]) == (60.0, "min") and time_unit([9000.0]) == (3600.0, "h")
    assert _duration(30.0, (60.0, "min")) == "0.5 min"


# --------------------------------------------------------------------------------------------
# The array's arithmetic comes from the core's layout (_core.layout_facts)
# --------------------------------------------------------------------------------------------


def _with_array(array: str) -> str:
    """TINY with its ``[array]`` lines replaced by ``array``."""
    return TINY.replace('layout = "raid5"\ndrives = 5\n', array)


@pytest.mark.engine
@pytest.mark.parametrize("layout, drives, copies", [("raid0", 3, None), ("raid1", 4, 2), ("raid1", 6, 3),
                                                     ("raid5", 5, None)])
def test_the_cores_layout_facts_are_the_layouts_arithmetic(tmp_path, layout, drives, copies):
    from raidlab import _core
    from raidlab.rebuild_plan import _survivors_at_risk

    array = f'layout = "{layout}"\ndrives = {drives}\n' + (f"copies = {copies}\n" if copies else "")
    facts = _core.layout_facts(_with_array(array), str(tmp_path))
    assert (facts["layout"], facts["drives"]) == (layout, drives)
    # TINY's drive: 100 cylinders × 4 surfaces × 96 sectors, in whole 4 KiB (8-sector) stripe units.
    assert facts["member_sectors"] == 100 * 4 * 96 // 8 * 8
    assert facts["member_bytes"] == facts["member_sectors"] * 512
    assert facts["capacity_bytes"] == facts["capacity_sectors"] * 512
    # Members' worth of user data, failures of one redundancy set survived, and the members
    # sharing a member's redundancy set: striping, mirror sets of `copies`, one parity group.
    data_members, tolerance = {"raid0": (drives, 0), "raid1": (drives // (copies or 1), (copies or 1) - 1),
                               "raid5": (drives - 1, 1)}[layout]
    assert facts["capacity_sectors"] == data_members * facts["member_sectors"]
    assert facts["fault_tolerance"] == tolerance
    assert facts["every_member_examined"] and facts["same_exposure_count"]
    assert [entry["member"] for entry in facts["exposure"]] == list(range(drives))
    for entry in facts["exposure"]:
        member = entry["member"]
        if layout == "raid0":
            group = []  # its failure alone loses data
        elif layout == "raid1":
            group = [o for o in range(drives) if o // copies == member // copies and o != member]
        else:
            group = [o for o in range(drives) if o != member]
        assert entry["members"] == group and entry["count"] == len(group)
        assert _survivors_at_risk(facts, member) == len(group)
    # What rebuild-plan computed for itself before it asked the core: RAID-1 holds drives /
    # copies members' worth, RAID-5 n − 1.
    if layout == "raid1":
        assert facts["member_bytes"] == facts["capacity_bytes"] * copies // drives
    if layout == "raid5":
        assert facts["member_bytes"] == facts["capacity_bytes"] // (drives - 1)


@pytest.mark.engine
def test_the_cores_layout_facts_refuse_a_bad_array_naming_the_key(tmp_path):
    from raidlab import _core

    with pytest.raises(ConfigError) as caught:
        _core.layout_facts(_with_array('layout = "raid1"\ndrives = 5\ncopies = 2\n'), str(tmp_path))
    assert caught.value.key == "array.drives"


@pytest.mark.engine
def test_fail_drive_is_checked_against_each_candidates_members(tmp_path):
    from raidlab.config import parse_toml

    # TINY has 5 members; a candidate of 8 members has a slot 6, the others do not.
    base = prepare_base(parse_toml(TINY), tmp_path, fail_at_s=5, fail_drive=6)
    eight = Candidate("eight drives", {"rebuild.discipline": "vsm", "array.drives": 8})
    _, _, layouts = check_candidates([eight], base, tmp_path, None)
    assert layouts[0]["drives"] == 8
    assert [entry["count"] for entry in layouts[0]["exposure"]] == [7] * 8
    with pytest.raises(ConfigError) as caught:
        check_candidates([eight, Candidate("vsm", {"rebuild.discipline": "vsm"})], base, tmp_path, None)
    assert caught.value.key == "--fail-drive"
    assert "from 0 to 4" in caught.value.message and "not 6" in caught.value.message
    # The plan runs: the candidate's 7 other members are at risk, not the base's 4.
    plan = run_plan(_config(tmp_path), tmp_path / "plan", fail_at_s=5, fail_drive=6, candidates=[eight], jobs=1)
    row = plan.table.iloc[0]
    assert row["status"] == "done" and row["survivors"] == 7
    # A candidate that makes the slot a spare is named.
    base = prepare_base(parse_toml(TINY), tmp_path, fail_at_s=5, fail_drive=4)
    with pytest.raises(ConfigError) as caught:
        check_candidates([Candidate("four drives", {"rebuild.discipline": "vsm", "array.drives": 4})], base,
                         tmp_path, None)
    assert caught.value.key == "--fail-drive"
    assert caught.value.message.startswith("candidate 'four drives': expected a member's slot from 0 to 3 (its ")


@pytest.mark.engine
def test_survivors_of_a_three_copy_mirror_come_from_the_core(tmp_path):
    """A row of a RAID-1 with three copies: the failed member's two other copies are at risk,
    and without the drives table each is read for the member's bytes."""
    from raidlab import _core
    from raidlab.rebuild_plan import plan_rows

    facts = _core.layout_facts(_with_array('layout = "raid1"\ndrives = 6\ncopies = 3\n'), str(tmp_path))
    summary = pd.DataFrame([{"run_id": "a", "status": "done", "rebuild.outcome": "complete",
                             "rebuild.rebuild_time_s": 3600.0, "rebuild.failed_at_s": 0.0, "rebuild.ended_at_s": 7200.0,
                             "rebuild.member": 4}])
    candidate = Candidate("vsm", {"rebuild.discipline": "vsm"})
    table = plan_rows([candidate], ["vsm"], [dict(candidate.overrides)], summary, [None], {}, layouts=[facts],
                      afr=0.02, ure_per_bit=1e-15)
    row = table.iloc[0]
    assert row["survivors"] == 2 and row["survivor_read_source"] == "capacity"
    assert row["survivor_read_bytes"] == 2 * facts["member_bytes"]
    assert row["p_second_failure"] == pytest.approx(second_failure_probability(2, 2.0, 0.02))
    # Two mirror sets of three copies, each rebuild 2 h: a set is lost when its three copies
    # are down at once (the chain of raidlab.exposure, constant rebuilds one at a time).
    from raidlab.exposure import mission_loss_probability

    assert row["p_data_loss"] == pytest.approx(mission_loss_probability(
        "raid1", 6, copies=3, mttf_h=1 / hourly_failure_rate(0.02), repair_h=2.0, mission_h=8766.0,
        repair="constant"), rel=1e-12)
    assert 0 < row["p_data_loss"] < 1e-9


@pytest.mark.engine
@pytest.mark.parametrize("array, tolerance", [('layout = "raid6"\ndrives = 8\n', 2),
                                              ('layout = "declustered"\ndrives = 8\nstripe_width = 4\n', 1)])
def test_data_loss_uses_the_cores_tolerance_of_double_parity_and_declustering(tmp_path, array, tolerance):
    """RAID-6 and parity declustering as the core describes them: the tolerance and the
    members at risk that P(data loss) is computed from."""
    from raidlab import _core
    from raidlab.exposure import constant_repair_loss_probability
    from raidlab.rebuild_plan import _survivors_at_risk

    facts = _core.layout_facts(_with_array(array), str(tmp_path))
    assert facts["fault_tolerance"] == tolerance and _survivors_at_risk(facts, 0) == 7
    expected = constant_repair_loss_probability(8, tolerance, 1 / hourly_failure_rate(0.0157), 3.0, 8766.0)
    assert data_loss_probability(facts, 7, 3.0, 0.0157) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------------------------
# Layouts compared: dRAID's healing, and the stripes at risk over time
# --------------------------------------------------------------------------------------------


def test_distributed_spares_are_the_cores_reading_of_the_draid_spec():
    """Whether a candidate heals comes from the layout the core builds (``layout_facts``'s
    ``distributed_spares``), not from a second reading of ``array.draid``."""
    from raidlab import _core

    def spares(array: str, failures: str = "") -> int:
        config = f"[array]\n{array}\nstripe_unit_kib = 4\n[drive]\npreset = \"ibm0661\"\n[workload]\nrequests = 1\n{failures}"
        return _core.layout_facts(config, ".")["distributed_spares"]

    assert spares('layout = "draid"\ndrives = 12\ndraid = "draid2:8d:2s"') == 2
    assert spares('layout = "draid"\ndrives = 8\ndraid = "draid1:3d:1s"') == 1
    assert spares('layout = "draid"\ndrives = 20\ndraid = "draid1:3d:20c"') == 0  # ZFS's default: none
    assert spares('layout = "draid"\ndrives = 12') == 0
    # Hot spares are not distributed ones (a failure gives them a use, as the core asks).
    assert spares('layout = "raid5"\ndrives = 6\nspares = 2', "[[failures]]\ndrive = 0\nat_s = 1.0\n[rebuild]\n") == 0


def test_stripes_at_risk_of_a_linear_rebuild_by_hand():
    from raidlab.rebuild_plan import stripe_hours_at_risk, stripes_at_risk_curve

    # The lost member's units restored at a steady pace over T = 2 h, sampled every 10 min
    # (c = k/12 at the end of window k): a falls in a straight line from m to 0, and the area
    # under it is m·T/2 = m · 1 h.
    ends = [600.0 * k for k in range(1, 13)]
    fractions = [k / 12 for k in range(1, 13)]
    for m in (1.0, 0.5, 4 / 7):
        times, at_risk = stripes_at_risk_curve(ends, fractions, failed_at_s=0.0, started_at_s=0.0,
                                               ended_at_s=7200.0, member_stripe_fraction=m)
        assert times[0] == 0.0 and at_risk[0] == m and (times[-1], at_risk[-1]) == (7200.0, 0.0)
        assert at_risk[6] == pytest.approx(m / 2)  # half restored at 1 h
        assert stripe_hours_at_risk(times, at_risk) == pytest.approx(m * 1.0, rel=1e-12)
    # The failure 30 min before the rebuild starts (rebuild.delay_s): the whole m meanwhile,
    # m · 0.5 h more. Times count from the failure.
    shifted = [e + 1800.0 for e in ends]
    times, at_risk = stripes_at_risk_curve([600.0, 1200.0, *shifted], [math.nan, math.nan, *fractions],
                                           failed_at_s=0.0, started_at_s=1800.0, ended_at_s=9000.0,
                                           member_stripe_fraction=0.5)
    assert times[:2] == [0.0, 1800.0] and at_risk[:2] == [0.5, 0.5]
    assert stripe_hours_at_risk(times, at_risk) == pytest.approx(0.5 * 0.5 + 0.5 * 1.0, rel=1e-12)


def test_windows_after_the_rebuild_are_not_at_risk():
    from raidlab.rebuild_plan import stripe_hours_at_risk, stripes_at_risk_curve

    # dRAID: the rebuild onto the distributed spare ends at 20.5 s; the healing copy's windows
    # after it (c starting again from 0.02) restore no redundancy and are left out, as are
    # windows before the rebuild started (NaN) and the one that ends with it.
    ends = [5.0, 10.0, 15.0, 20.0, 21.0, 25.0]
    fractions = [math.nan, 0.0, 0.25, 0.75, 0.02, 1.0]
    times, at_risk = stripes_at_risk_curve(ends, fractions, failed_at_s=8.0, started_at_s=8.0, ended_at_s=20.5,
                                           member_stripe_fraction=0.5)
    assert times == [0.0, 2.0, 7.0, 12.0, 12.5]
    assert at_risk == [0.5, 0.5, 0.375, 0.125, 0.0]
    # Trapezoids: 2 · 0.5 + 5 · 0.4375 + 5 · 0.25 + 0.5 · 0.0625 = 4.46875 stripe-seconds.
    assert stripe_hours_at_risk(times, at_risk) == pytest.approx(4.46875 / 3600, rel=1e-12)
    # Without a window inside the rebuild: a straight line from its start to its end.
    times, at_risk = stripes_at_risk_curve([], [], failed_at_s=0.0, started_at_s=0.0, ended_at_s=3600.0,
                                           member_stripe_fraction=1.0)
    assert stripe_hours_at_risk(times, at_risk) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="member_stripe_fraction"):
        stripes_at_risk_curve([], [], failed_at_s=0.0, started_at_s=0.0, ended_at_s=1.0, member_stripe_fraction=2.0)
    with pytest.raises(ValueError, match="started_at_s"):
        stripes_at_risk_curve([], [], failed_at_s=5.0, started_at_s=1.0, ended_at_s=9.0, member_stripe_fraction=1.0)


def test_expected_lost_stripe_fraction_by_hand():
    from raidlab.rebuild_plan import expected_lost_stripe_fraction

    lam = hourly_failure_rate(0.0157)  # 1.80522e-6 per drive-hour
    # RAID-5 of n = 5 drives (W = 5, m = 1), a linear 2 h rebuild: ∫ a = 1 h, and
    # λ (n − 1) · m · T/2 = 4 · 1.80522e-6 · 1 h = 7.22088e-6 of the stripes.
    assert expected_lost_stripe_fraction(1.0, 5, 1, 0.0157) == pytest.approx(7.22088e-6, rel=1e-5)
    assert expected_lost_stripe_fraction(1.0, 5, 1, 0.0157) == pytest.approx(lam * 4 * 1 * 2 / 2, rel=1e-12)
    # Parity declustering, G = 4 over C = 8 (m = 1/2), the same rebuild: λ · 3 · 0.5 h.
    assert expected_lost_stripe_fraction(0.5, 4, 1, 0.0157) == pytest.approx(lam * 3 * 0.5, rel=1e-12)
    # Two or more failures survived: one more loses nothing; no figure.
    assert expected_lost_stripe_fraction(1.0, 6, 2, 0.0157) is None
    assert expected_lost_stripe_fraction(1.0, 5, 1, 0.0) == 0.0
    with pytest.raises(ValueError, match="stripe_hours"):
        expected_lost_stripe_fraction(-1.0, 5, 1, 0.0157)


def test_one_more_failure_loses_w_minus_1_times_the_stripes_at_risk():
    """The (W − 1) of the formula, counted: a layout whose stripes are every 4 of 8 drives (70
    stripes, 35 on each drive: m = 1/2, W = 4). Drive 0 fails; with k of its stripes
    restored, each survivor's failure loses the unrestored stripes holding it and drive 0, and
    the survivors' losses add up to (W − 1) × a of the stripes."""
    from itertools import combinations

    stripes = list(combinations(range(8), 4))
    on_failed = [stripe for stripe in stripes if 0 in stripe]
    assert len(on_failed) / len(stripes) == 0.5
    for restored in (0, 10, 35):
        unrestored = on_failed[restored:]
        a = len(unrestored) / len(stripes)
        lost = sum(sum(1 for stripe in unrestored if survivor in stripe) for survivor in range(1, 8)) / len(stripes)
        assert lost == pytest.approx((4 - 1) * a)


def test_plan_rows_read_the_healing_and_the_rebuilt_fraction(tmp_path):
    """A dRAID row that healed: the healing time and period from the sweep's row, the stripes at
    risk from the run's timeseries; a RAID-5 row beside it has no healing columns."""
    from raidlab.rebuild_plan import plan_rows

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # The rebuild runs 10 s → 30 s, c rising by 0.25 every 5 s; the healing copy after it.
    pd.DataFrame({"window_end_s": [5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0],
                  "rebuilt_fraction": [math.nan, 0.0, 0.25, 0.5, 0.75, 1.0, 0.4]}
                 ).to_parquet(run_dir / "timeseries.parquet")
    common = {"status": "done", "rebuild.outcome": "complete", "rebuild.failed_at_s": 10.0,
              "rebuild.started_at_s": 10.0, "rebuild.ended_at_s": 30.0, "rebuild.rebuild_time_s": 20.0,
              "rebuild.member": 0, "response_ms_by_period.rebuilding.p50": 5.0,
              "response_ms_by_period.rebuilding.p99": 20.0}
    summary = pd.DataFrame([
        {**common, "run_id": "draid", "healing_time_s": 12.5, "response_ms_by_period.healing.p50": 4.0,
         "response_ms_by_period.healing.p99": 15.0},
        {**common, "run_id": "raid5", "healing_time_s": math.nan},
    ])
    exposure = [{"member": m, "count": 7, "members": [o for o in range(8) if o != m]} for m in range(8)]
    draid = {"layout": "draid", "drives": 8, "fault_tolerance": 1, "member_bytes": 10**9, "stripe_width": 4,
             "member_stripe_fraction": 4 / 7, "exposure": exposure}
    raid5 = {"layout": "raid5", "drives": 8, "fault_tolerance": 1, "member_bytes": 10**9, "stripe_width": 8,
             "member_stripe_fraction": 1.0, "exposure": exposure}
    candidates = [Candidate("draid", {"array.layout": "draid"}), Candidate("raid5", {"array.layout": "raid5"})]
    curves = {}
    table = plan_rows(candidates, ["vsm", "vsm"], [dict(c.overrides) for c in candidates], summary,
                      [run_dir, run_dir], {}, layouts=[draid, raid5], afr=0.0157, ure_per_bit=1e-15, curves=curves)
    healed, plain = table.iloc[0], table.iloc[1]
    assert (healed["healing_time_s"], healed["healing_p50_ms"], healed["healing_p99_ms"]) == (12.5, 4.0, 15.0)
    assert pd.isna(plain["healing_time_s"]) and pd.isna(plain["healing_p99_ms"])
    # c linear over the 20 s (the healing's 0.4 at 35 s left out): ∫ a = m · 20 s / 2.
    assert healed["stripe_hours_at_risk"] == pytest.approx(4 / 7 * 10 / 3600, rel=1e-12)
    assert plain["stripe_hours_at_risk"] == pytest.approx(1.0 * 10 / 3600, rel=1e-12)
    lam = hourly_failure_rate(0.0157)
    assert healed["expected_lost_stripe_fraction"] == pytest.approx(lam * 3 * 4 / 7 * 10 / 3600, rel=1e-12)
    assert plain["expected_lost_stripe_fraction"] == pytest.approx(lam * 7 * 10 / 3600, rel=1e-12)
    assert list(curves) == ["draid", "raid5"] and curves["draid"][0] == [0.0, 5.0, 10.0, 15.0, 20.0]


def _layout_candidates() -> str:
    return """\
[[rebuild_plan.candidates]]
label = "raid5"
"array.layout" = "raid5"
"array.drives" = 8

[[rebuild_plan.candidates]]
label = "declustered"
"array.layout" = "declustered"
"array.drives" = 8
"array.stripe_width" = 4

[[rebuild_plan.candidates]]
label = "draid"
"array.layout" = "draid"
"array.drives" = 8
"array.draid" = "draid1:3d:1s"
# TINY's drives hold 19.7 MB: rows of 1 MiB, not ZFS's 16 MiB.
"array.row_kib" = 1024
"""


@pytest.mark.engine
def test_a_draid_candidate_gets_a_spare_drive_for_its_healing(tmp_path):
    from raidlab.config import parse_toml

    # A configuration that says it has no spare drive: the dRAID candidate is given one (its
    # healing copy needs it), the others keep the configuration's none, and a candidate that
    # sets array.spares itself keeps what it sets.
    document = parse_toml(TINY)
    document["array"]["spares"] = 0
    base = prepare_base(document, tmp_path, fail_at_s=5)
    assert "array.spares" not in " ".join(base.notes)
    candidates = candidates_from_table(parse_toml(_layout_candidates())["rebuild_plan"])
    own = Candidate("draid, no spare", {**candidates[2].overrides, "array.spares": 0})
    notes = []
    _, settings, _ = check_candidates([*candidates, own], base, tmp_path, None, notes=notes)
    assert [values.get("array.spares") for values in settings] == [None, None, 1, 0]
    assert notes == ["candidate 'draid': set array.spares = 1 (a spare drive for the healing copy off its "
                     "distributed spare, at hand when the rebuild ends)"]
    # A replacement that arrives, or healing turned off: nothing to add.
    document["failures"] = [{"drive": 0, "at_s": 5.0}, {"kind": "spare_arrives", "at_s": 6.0}]
    notes = []
    check_candidates([candidates[2]], prepare_base(document, tmp_path), tmp_path, None, notes=notes)
    assert notes == []
    off = Candidate("draid, no healing", {**candidates[2].overrides, "rebuild.healing": False})
    check_candidates([off], base, tmp_path, None, notes=notes)
    assert notes == []


@pytest.mark.engine
def test_layouts_end_to_end_healing_and_stripes_at_risk(tmp_path, capsys):
    """RAID-5, parity declustering and dRAID on eight drives. Rebuild reads of one stripe unit
    (rebuild.unit = 8 sectors) make a unit cost about the same whatever the layout, so the
    declustered layout's fewer stripes per member (4/8) show in its stripes at risk. With
    one-track units TINY's small drives rebuild the declustered member about 3 times slower
    than RAID-5's, which more than undoes the factor 1/2: the comparison depends on the
    rebuild as well as on the layout, which is why the plan measures it."""
    from raidlab import load_result

    listing = tmp_path / "layouts.toml"
    listing.write_text(_layout_candidates(), encoding="utf-8")
    output = tmp_path / "plan"
    arguments = ["rebuild-plan", str(_config(tmp_path)), "-o", str(output), "--fail-at", "5", "-j", "2",
                 "--candidates", str(listing), "--set", "rebuild.unit={ sectors = 8 }"]
    assert main([*arguments, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    rows = {row["candidate"]: row for row in answer["candidates"]}
    assert list(rows) == ["raid5", "declustered", "draid"]
    # TINY has no spare drive: rebuild-plan gives every candidate one, dRAID's included.
    assert "added array.spares = 1 (a hot spare to rebuild onto)" in answer["changes"]
    lam = hourly_failure_rate(0.0157)
    for label, row in rows.items():
        assert row["status"] == "done" and row["outcome"] == "complete" and row["rebuild_time_s"] > 0
        # The stripes at risk from the layout's m and the run's own c(t), computed again here.
        m, width = row["member_stripe_fraction"], row["stripe_width"]
        result = load_result(output / "runs" / row["run_id"])
        record = result.summary["rebuilds"][0]
        series = result.timeseries
        inside = series[(series["window_end_s"] > record["started_at_s"]) & (series["window_end_s"] < record["ended_at_s"])
                         & series["rebuilt_fraction"].notna()]
        times = [0.0, record["started_at_s"] - record["failed_at_s"],
                 *(inside["window_end_s"] - record["failed_at_s"]), record["ended_at_s"] - record["failed_at_s"]]
        at_risk = [m, m, *(m * (1 - inside["rebuilt_fraction"])), 0.0]
        area_s = sum((t1 - t0) * (a0 + a1) / 2 for t0, t1, a0, a1 in zip(times, times[1:], at_risk, at_risk[1:]))
        assert row["stripe_hours_at_risk"] == pytest.approx(area_s / 3600, rel=1e-9)
        assert 0 < row["stripe_hours_at_risk"] <= m * row["degraded_s"] / 3600  # a(t) never above m
        assert row["expected_lost_stripe_fraction"] == pytest.approx(lam * (width - 1) * row["stripe_hours_at_risk"],
                                                                     rel=1e-12)
    assert (rows["raid5"]["member_stripe_fraction"], rows["raid5"]["stripe_width"]) == (1.0, 8)
    assert (rows["declustered"]["member_stripe_fraction"], rows["declustered"]["stripe_width"]) == (0.5, 4)
    assert rows["draid"]["member_stripe_fraction"] == pytest.approx(4 / 7) and rows["draid"]["stripe_width"] == 4
    # dRAID rebuilt onto its distributed spare, then copied the member onto the spare drive.
    assert rows["draid"]["healing_time_s"] > 0 and rows["draid"]["healing_p99_ms"] > 0
    assert rows["draid"]["survivor_read_source"] == "measured, with healing"
    for label in ("raid5", "declustered"):
        assert rows[label]["healing_time_s"] is None and rows[label]["healing_p99_ms"] is None
    # Half as many stripes on the failed member, and a rebuild no longer than RAID-5's here
    # (each survivor reads 3 units per lost unit instead of 7): fewer stripe-hours at risk.
    # The declustered area is at most m · its degraded window (a(t) <= m), which is below
    # RAID-5's area.
    assert rows["declustered"]["rebuild_time_s"] <= rows["raid5"]["rebuild_time_s"]
    assert 0.5 * rows["declustered"]["degraded_s"] / 3600 < rows["raid5"]["stripe_hours_at_risk"]
    assert rows["declustered"]["stripe_hours_at_risk"] < rows["raid5"]["stripe_hours_at_risk"]
    for name in ("stripes-at-risk.png", "stripes-at-risk.svg", "pareto.png"):
        assert (output / name).is_file(), name
    table = pd.read_parquet(output / "plan.parquet")
    assert table["healing_time_s"].notna().tolist() == [False, False, True]

    # The printed table has the healing columns when a candidate healed (the runs are done).
    assert main(arguments) == 0
    out = capsys.readouterr().out
    assert "heal p99" in out and "stripe-h at risk" in out and "E[lost]" in out
