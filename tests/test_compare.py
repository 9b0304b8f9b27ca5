"""Comparison of runs (raidlab.stats, raidlab.compare, ``raidlab compare``): Student's t
against closed forms and tables, interval coverage, paired against Welch intervals, grouping
of replicates, and the command end to end on a sweep."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from raidlab.cli import main
from raidlab.stats import difference_interval, mean_interval, student_t_cdf, student_t_quantile


# -- Student's t ------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995])
def test_t_quantile_matches_the_closed_forms_for_one_and_two_degrees_of_freedom(p):
    assert student_t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)
    assert student_t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9)


@pytest.mark.parametrize("df, t975", [(3, 3.182446305), (5, 2.570581836), (10, 2.228138852), (30, 2.042272456),
                                      (120, 1.979930405)])
def test_t_quantile_matches_the_printed_tables(df, t975):
    assert student_t_quantile(0.975, df) == pytest.approx(t975, abs=1e-8)


def test_t_tends_to_the_normal_and_is_symmetric():
    assert student_t_quantile(0.975, 1e9) == pytest.approx(1.959963985, abs=1e-6)
    assert student_t_quantile(0.025, 7) == pytest.approx(-student_t_quantile(0.975, 7), rel=1e-12)
    assert student_t_cdf(student_t_quantile(0.9, 4.5), 4.5) == pytest.approx(0.9, abs=1e-10)


def test_the_mean_interval_covers_the_true_mean_95_percent_of_the_time():
    rng = np.random.default_rng(20261125)
    trials, covered = 4000, 0
    for _ in range(trials):
        interval = mean_interval(rng.normal(10.0, 3.0, size=4).tolist())
        covered += interval.low <= 10.0 <= interval.high
    # Binomial(4000, 0.95): the standard deviation is 0.34 %; 4 of them either side.
    assert abs(covered / trials - 0.95) < 0.014


def test_paired_intervals_remove_what_replicates_share():
    # Common random numbers: seed by seed, the other group is the reference plus 2.0 with
    # small noise; the seeds' own spread is large.
    reference = [10.0, 50.0, 90.0, 130.0]
    other = [12.1, 51.9, 92.05, 131.95]
    seeds = [1, 2, 3, 4]
    paired = difference_interval(reference, other, reference_seeds=seeds, other_seeds=seeds)
    welch = difference_interval(reference, other)
    assert paired.method == "paired" and welch.method == "welch"
    assert paired.delta == pytest.approx(2.0, abs=1e-12) == welch.delta
    assert paired.half_width < 0.2 < welch.half_width
    # Other seeds in the two groups: not paired.
    assert difference_interval(reference, other, reference_seeds=seeds, other_seeds=[5, 6, 7, 8]).method == "welch"


def test_no_interval_without_replicates():
    difference = difference_interval([3.0], [5.0])
    assert difference.method == "none" and math.isnan(difference.half_width) and difference.delta == 2.0


# -- the command ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_sweep import BASE, write

    from raidlab.sweep import run_sweep

    directory = tmp_path_factory.mktemp("compare")
    spec = write(directory, 'base = "base.toml"\nseeds = 3\n[grid]\nrebuild.discipline = ["vsm", "pcm"]\n', base=BASE)
    outcome = run_sweep(spec, directory / "out", jobs=2)
    assert outcome.failed == 0
    return directory / "out"


@pytest.mark.engine
def test_compare_groups_replicates_and_prints_intervals(sweep_dir, tmp_path, capsys):
    import pandas as pd

    assert main(["compare", str(sweep_dir), "-o", str(tmp_path / "fig"), "--json",
                 "--metric", "response_ms.all.mean", "--metric", "rebuild_time_s"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [group["label"] for group in answer["groups"]] == ["rebuild.discipline=vsm [3 seeds]",
                                                              "rebuild.discipline=pcm [3 seeds]"]
    assert all(sorted(group["seeds"]) == [1, 2, 3] for group in answer["groups"])
    table = pd.read_parquet(sweep_dir / "summary.parquet")
    rows = {(row["metric"], row["group"].split(" ")[0]): row for row in answer["comparison"]}
    for metric in ("response_ms.all.mean", "rebuild_time_s"):
        vsm = table[table["rebuild.discipline"] == "vsm"].sort_values("seed")[metric].to_numpy()
        pcm = table[table["rebuild.discipline"] == "pcm"].sort_values("seed")[metric].to_numpy()
        row = rows[(metric, "rebuild.discipline=pcm")]
        assert row["method"] == "paired"
        assert row["delta"] == pytest.approx(float(np.mean(pcm - vsm)), rel=1e-9)
        half = student_t_quantile(0.975, 2) * float(np.std(pcm - vsm, ddof=1)) / math.sqrt(3)
        assert row["ci_high"] - row["ci_low"] == pytest.approx(2 * half, rel=1e-9)
        assert rows[(metric, "rebuild.discipline=vsm")]["method"] == "reference"
    names = sorted(path.name for path in (tmp_path / "fig").iterdir())
    assert names == ["cdf.png", "cdf.svg", "ct.png", "ct.svg", "rt.png", "rt.svg"]


@pytest.mark.engine
def test_compare_two_run_directories_and_refuse_a_single_configuration(sweep_dir, tmp_path, capsys):
    runs = sorted((sweep_dir / "runs").iterdir())
    import pandas as pd

    table = pd.read_parquet(sweep_dir / "summary.parquet")
    vsm = [sweep_dir / "runs" / r for r in table[table["rebuild.discipline"] == "vsm"]["run_id"]]
    pcm = [sweep_dir / "runs" / r for r in table[table["rebuild.discipline"] == "pcm"]["run_id"]]
    assert main(["compare", str(vsm[0]), str(pcm[0]), "-o", str(tmp_path / "two")]) == 0
    captured = capsys.readouterr()
    assert "reference: rebuild.discipline=vsm" in captured.out and "no interval" in captured.err
    assert main(["compare", *map(str, vsm), "-o", str(tmp_path / "one")]) == 2
    assert "at least two configurations" in capsys.readouterr().err
    assert len(runs) == 6


@pytest.mark.parametrize("damaged, words", [(b"garbage = [", "invalid TOML"), (b"seed = 1\n\xff\n", "not UTF-8")])
def test_compare_names_a_damaged_config_toml(sweep_dir, tmp_path, capsys, damaged, words):
    import shutil

    runs = sorted((sweep_dir / "runs").iterdir())
    copy = tmp_path / "damaged"
    shutil.copytree(runs[0], copy)
    (copy / "config.toml").write_bytes(damaged)
    assert main(["compare", str(runs[1]), str(copy), "-o", str(tmp_path / "figures")]) == 2
    err = capsys.readouterr().err
    assert str(copy / "config.toml") in err and words in err


# -- runs without results, groups without a rebuild -------------------------------------------


@pytest.fixture(scope="module")
def spares_sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep of arrays with one spare and with none (no rebuild), 3 seeds, whose seed-2 runs
    fail (their worker dies)."""
    import sweep_workers
    from test_sweep import BASE, write

    from raidlab.sweep import run_sweep

    directory = tmp_path_factory.mktemp("compare-spares")
    spec = write(directory, 'base = "base.toml"\nseeds = 3\n[grid]\narray.spares = [1, 0]\n', base=BASE)
    outcome = run_sweep(spec, directory / "out", jobs=2, run_function=sweep_workers.die_on_seed_2)
    assert (outcome.ran, outcome.failed) == (4, 2)
    return directory / "out"


@pytest.mark.engine
def test_compare_says_which_failed_runs_it_left_out(spares_sweep_dir, tmp_path, capsys):
    import pandas as pd

    table = pd.read_parquet(spares_sweep_dir / "summary.parquet")
    failed = table.loc[table["status"] == "failed", "run_id"].tolist()
    assert main(["compare", str(spares_sweep_dir), "-o", str(tmp_path / "fig")]) == 0
    err = capsys.readouterr().err
    assert "left out 2 run(s) that have no results (2 failed)" in err
    for run_id in failed:
        assert run_id in err
    assert err.count("WorkerDied") == 2 and "seed 2" in err
    assert main(["compare", str(spares_sweep_dir), "-o", str(tmp_path / "fig"), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert sorted(run["run_id"] for run in answer["left_out"]) == sorted(failed)
    assert {run["status"] for run in answer["left_out"]} == {"failed"}


@pytest.mark.engine
def test_compare_says_no_rebuild_where_a_group_has_none(spares_sweep_dir, tmp_path, capsys):
    import re

    assert main(["compare", str(spares_sweep_dir), "-o", str(tmp_path / "fig"), "--metric", "rebuild_time_s",
                 "--metric", "response_ms.all.mean"]) == 0
    captured = capsys.readouterr()
    assert not re.search(r"\bnan\b", captured.out, re.I), captured.out
    rows = [line for line in captured.out.splitlines() if line.startswith("│ rebuild_time_s")]
    assert len(rows) == 2 and "no rebuild" in rows[1]
    # Both groups have two seeds: no word about single runs.
    assert "single run" not in captured.err


# -- labels: values the resolved configuration leaves out -------------------------------------


def _labels(*configs):
    from raidlab.compare import RunRecord, group_runs

    records = [RunRecord(path=Path(f"run{number}"), metrics={}, config=config, seed=1)
               for number, config in enumerate(configs)]
    return [group.label for group in group_runs(records)]


def _config(**tables):
    config = {"seed": 1, "array": {"layout": "raid5", "drives": 5, "stripe_unit_kib": 16.0},
              "workload": {"requests": 600}, "metrics": {"window_s": 1.0}, "content": {"check": False},
              "rebuild": {"discipline": "vsm"}}
    for name, table in tables.items():
        config[name] = table if not isinstance(table, dict) else {**config.get(name, {}), **table}
    return config


def test_a_zero_or_false_the_resolved_configuration_leaves_out_is_labelled_with_its_value():
    """The core writes no `spares = 0`, no false flag and no empty `failures` into a run's
    config.toml: such a group was labelled `array.spares=—`, as if the value were missing."""
    assert _labels(_config(array={"spares": 1}), _config()) == ["array.spares=1", "array.spares=0"]
    assert _labels(_config(), _config(array={"spares": 2})) == ["array.spares=0", "array.spares=2"]
    assert _labels(_config(metrics={"record_responses": True}), _config()) == [
        "metrics.record_responses=true", "metrics.record_responses=false"]
    # A false the configuration does write is shown as TOML writes it, not as Python's False.
    assert _labels(_config(content={"check": True}), _config()) == ["content.check=true", "content.check=false"]
    failed = [{"drive": 2, "at_s": 2.0}]
    assert _labels(_config(failures=failed), _config()) == [f"failures={json.dumps(failed, sort_keys=True)}",
                                                            "failures=[]"]


def test_a_key_of_a_table_the_configuration_has_not_stays_missing():
    """No `[rebuild]` at all is not the default rebuild: its keys have no value to show."""
    without = _config()
    del without["rebuild"]
    assert _labels(_config(rebuild={"discipline": "pcm"}), without) == ["rebuild.discipline=pcm",
                                                                       "rebuild.discipline=—"]


@pytest.mark.engine
def test_compare_labels_a_sweep_of_zero_spares_with_the_zero(spares_sweep_dir, tmp_path, capsys):
    assert main(["compare", str(spares_sweep_dir), "-o", str(tmp_path / "fig"), "--json",
                 "--metric", "response_ms.all.mean"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [group["label"] for group in answer["groups"]] == ["array.spares=1 [2 seeds]", "array.spares=0 [2 seeds]"]
