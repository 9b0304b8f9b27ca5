"""``raidlab reproduce``: the studies of experiments/fu, their expansion into runs and the
sharing of identical runs, the first-order fit, the command end to end on a tiny drive, errors
and Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import sigint_at_default
from raidlab.cli import main
from raidlab.reproduce import (
    ReproduceError,
    expand,
    fit_first_order,
    load_paper,
    mean_timeseries,
    toml_literal,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = REPO_ROOT / "experiments"

#: Table 1 of Fu et al. as printed: B -> rebuild times for N = 9, 19, 29, 39.
TABLE1 = {
    16384: [1604.2, 1622.8, 1631.9, 1632.0],
    64: [2586.3, 2618.9, 2701.4, 2704.5],
    16: [3033.8, 3246.0, 3434.7, 3526.5],
}

#: The small drive of crates/raidlab-core/tests/simulation/common.rs (SMALL_DRIVE) in place of
#: the ibm18es, with the base's drive options: a rebuild of it takes seconds of simulated time.
TINY = [
    'drive={ model = { rpm = 10000, surfaces = 2, zones = [{ cylinders = 30, sectors_per_track = 64 }, '
    '{ cylinders = 20, sectors_per_track = 48 }], seek = { kind = "formula", a_ms = 0.5, b_ms = 0.01, '
    'c_ms = 0.1 }, head_switch_ms = 0.2, command_overhead_ms = 0.1 }, scheduler = "fcfs", '
    'zero_latency = true, host_bus = false }',
    "failures[0].at_s=5",
    "metrics.window_s=1",
]


def _tiny_args() -> list:
    return [arg for override in TINY for arg in ("--set", override)]


def _fake_hash(base, overrides):
    """Stands in for the core's configuration hash: the base with the overrides applied,
    defaults not filled in (so explicit values equal to the base's still match)."""
    import json

    from raidlab.config import apply_overrides, parse_toml

    text = apply_overrides(Path(base).read_text(encoding="utf-8"), list(overrides))
    return json.dumps(parse_toml(text), sort_keys=True)


# -- the fit ----------------------------------------------------------------------------------


@pytest.mark.parametrize("t0, alpha", [(491.0, 1.75), (547.0, 1.5), (1000.0, 0.8)])
def test_the_first_order_fit_recovers_t0_and_alpha_exactly(t0, alpha):
    u = np.array([0.05, 0.1, 0.2, 0.3, 0.4, 0.45])
    fitted_t0, fitted_alpha = fit_first_order(u, t0 / (1 - alpha * u))
    assert fitted_t0 == pytest.approx(t0, rel=1e-10)
    assert fitted_alpha == pytest.approx(alpha, rel=1e-10)


def test_the_fit_needs_two_utilizations():
    with pytest.raises(ValueError):
        fit_first_order([0.3, 0.3], [100.0, 101.0])


# -- the studies ------------------------------------------------------------------------------


def test_the_fu_studies_load_with_their_cases():
    paper = load_paper("fu", EXPERIMENTS)
    assert [s.name for s in paper.studies] == [
        "fig1", "buffer", "unit", "piggyback", "redirection", "table1", "utilization", "operating_point", "regime"]
    counts = {s.name: len(s.cases) for s in paper.studies}
    assert counts == {"fig1": 2, "buffer": 10, "unit": 10, "piggyback": 2, "redirection": 2,
                      "table1": 12, "utilization": 6, "operating_point": 18, "regime": 36}
    seeds = {s.name: s.seeds for s in paper.studies}
    assert seeds.pop("operating_point") == 5 and seeds.pop("regime") == 2
    assert all(n == 10 for n in seeds.values())
    # B = 64 tracks per disk whatever the unit: 64 // k units of k tracks.
    unit = paper.study("unit")
    for case in unit.cases:
        k = case.values["rebuild.unit.tracks"]
        assert case.values["rebuild.buffer_units"] == max(1, 64 // k)


def test_table1_holds_the_papers_numbers():
    table1 = load_paper("fu", EXPERIMENTS).study("table1")
    for case in table1.cases:
        b, n = case.values["rebuild.buffer_units"], case.values["array.drives"]
        value, source = table1.paper_value(case)
        assert value == TABLE1[b][[9, 19, 29, 39].index(n)]
        assert source == "Table 1"


def test_paper_values_do_not_confuse_true_with_1():
    redirection = load_paper("fu", EXPERIMENTS).study("redirection")
    values = {case.values["rebuild.redirect_reads"]: redirection.paper_value(case)[0]
              for case in redirection.cases}
    assert values == {True: 2618.9, False: pytest.approx(3 * 2618.9, abs=0.1)}


def test_expansion_runs_identical_configurations_once():
    paper = load_paper("fu", EXPERIMENTS)
    plan = expand(paper, seeds=3, resolve=_fake_hash)
    assert plan.requested == 3 * sum(len(s.cases) for s in paper.studies)

    def runs(study, **values):
        matches = [c for c in paper.study(study).cases
                   if all(c.values[k.replace("__", ".")] == v for k, v in values.items())]
        assert len(matches) == 1, (study, values)
        return plan.case_runs[(study, matches[0].index)]

    base = runs("fig1", rebuild__discipline="vsm")
    assert len(set(base)) == 3  # seeds 1..3: three different runs
    assert runs("buffer", rebuild__buffer_units=64, rebuild__discipline="vsm") == base
    assert runs("unit", rebuild__unit__tracks=1, rebuild__discipline="vsm") == base
    assert runs("redirection", rebuild__redirect_reads=True) == base
    assert runs("table1", rebuild__buffer_units=64, array__drives=19) == base
    assert runs("utilization", workload__arrival__target_utilization=0.45) == base
    assert runs("buffer", rebuild__buffer_units=64, rebuild__discipline="pcm") == runs(
        "fig1", rebuild__discipline="pcm")
    assert runs("table1", rebuild__buffer_units=16, array__drives=19) == runs(
        "buffer", rebuild__buffer_units=16, rebuild__discipline="vsm")
    assert runs("buffer", rebuild__buffer_units=16, rebuild__discipline="vsm") != base
    # Every run once, the shared ones used by several studies; seeds 1..n, the seed last.
    assert len({spec.key for spec in plan.runs}) == len(plan.runs)
    shared = next(spec for spec in plan.runs if spec.key == base[0])
    assert {study for study, _ in shared.users} == {"fig1", "buffer", "unit", "redirection", "table1",
                                                    "utilization", "operating_point", "regime"}
    assert shared.needs_timeseries  # fig1 and redirection plot R(t)
    assert [spec.overrides[-1] for spec in plan.runs[:3]] == ["seed=1", "seed=2", "seed=3"]


@pytest.mark.engine
def test_the_cores_hash_also_shares_runs_that_differ_only_by_defaults():
    # piggyback off (rebuild.piggyback = false, the default) at u = 0.4 is the utilization
    # study's u = 0.4 run: the core's hash of the resolved configuration sees it.
    paper = load_paper("fu", EXPERIMENTS)
    plan = expand(paper, seeds=1)
    assert len(plan.runs) == 76  # 98 cases, 22 of them the same as one before
    off = next(c for c in paper.study("piggyback").cases if c.values["rebuild.piggyback"] is False)
    u04 = next(c for c in paper.study("utilization").cases
               if c.values["workload.arrival.target_utilization"] == 0.4)
    assert plan.case_runs[("piggyback", off.index)] == plan.case_runs[("utilization", u04.index)]


def test_study_subsets_and_seed_counts():
    paper = load_paper("fu", EXPERIMENTS)
    plan = expand(paper, seeds=2, studies=["table1", "fig1"], resolve=_fake_hash)
    assert [s.name for s in plan.studies] == ["fig1", "table1"]  # the paper's order
    assert plan.requested == 2 * (2 + 12)
    assert len(plan.runs) == 2 * (2 + 11)  # table1's N = 19, B = 64 is fig1's VSM run
    with pytest.raises(Exception, match="unknown study 'nope'.*known: fig1, buffer"):
        expand(paper, studies=["nope"], resolve=_fake_hash)


def test_overrides_are_toml_literals():
    assert toml_literal("vsm") == '"vsm"'
    assert toml_literal(True) == "true"
    assert toml_literal(0.45) == "0.45"
    assert toml_literal({"tracks": 4}) == '{ "tracks" = 4 }'


def test_mean_timeseries_counts_finished_rebuilds_as_complete():
    short = {"window_start_s": [0, 1, 2], "window_end_s": [1, 2, 3],
             "mean_response_ms": [10, 20, 30], "rebuilt_fraction": [np.nan, 0.5, 1.0]}
    long = {"window_start_s": [0, 1, 2, 3], "window_end_s": [1, 2, 3, 4],
            "mean_response_ms": [12, 22, 32, 42], "rebuilt_fraction": [np.nan, 0.25, 0.5, 1.0]}
    mean = mean_timeseries([short, long])
    assert mean["mean_response_ms"].tolist() == [11, 21, 31, 42]
    assert mean["rebuilt_fraction"].tolist()[1:] == [0.375, 0.75, 1.0]
    assert mean["runs"].tolist() == [2, 2, 2, 1]


# -- the command ------------------------------------------------------------------------------


def test_an_unknown_paper_exits_2_listing_the_known_ones(tmp_path, capsys):
    assert main(["reproduce", "nope", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "unknown paper 'nope'" in err and "known: fu" in err
    assert not (tmp_path / "out").exists()


def test_an_unknown_study_exits_2(tmp_path, capsys):
    assert main(["reproduce", "fu", "--studies", "table1,nope", "-o", str(tmp_path / "out")]) == 2
    assert "unknown study 'nope'" in capsys.readouterr().err


def test_another_experiments_directory(tmp_path, capsys):
    assert main(["reproduce", "fu", "--experiments", str(tmp_path)]) == 2
    assert "unknown paper 'fu'" in capsys.readouterr().err


@pytest.mark.engine
def test_reproduce_table1_end_to_end_on_a_tiny_drive(tmp_path, capsys):
    out = tmp_path / "fu"
    status = main(["reproduce", "fu", "--seeds", "1", "--studies", "table1", "--jobs", "1",
                   *_tiny_args(), "-o", str(out)])
    assert status == 0, capsys.readouterr().err
    assert {p.name for p in out.iterdir()} == {"report.md", "table1.csv", "table1.png", "runs.csv"}
    table = pd.read_csv(out / "table1.csv")
    assert len(table) == 12 and (table["seeds"] == 1).all()
    assert table["rebuild_time_s_mean"].gt(0).all()
    for b, row in TABLE1.items():
        for n, value in zip((9, 19, 29, 39), row):
            cell = table[(table["rebuild.buffer_units"] == b) & (table["array.drives"] == n)]
            assert cell["paper_rebuild_time_s"].item() == value
    report = (out / "report.md").read_text(encoding="utf-8")
    for row in TABLE1.values():
        for value in row:
            assert f"{value:.1f}" in report
    assert "raidlab reproduce fu --seeds 1 --studies table1" in report
    assert "wall time" in report and "![table1](table1.png)" in report
    assert len(pd.read_csv(out / "runs.csv")) == 12


@pytest.mark.engine
def test_a_failed_run_stops_with_the_study_and_overrides(tmp_path, capsys):
    # No spare: the rebuild never starts. The run ends with the workload instead.
    status = main(["reproduce", "fu", "--seeds", "1", "--studies", "fig1", "--jobs", "1", *_tiny_args(),
                   "--set", "array.spares=0", "--set", "workload.duration_s=8", "-o", str(tmp_path / "out")])
    assert status == 2
    err = capsys.readouterr().err
    assert "a run failed" in err and "study fig1 (discipline = " in err
    assert "array.spares=0" in err and "seed=1" in err
    assert not (tmp_path / "out" / "report.md").exists()


def _children(pid: int) -> list:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.engine
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_prints_interrupted_exits_130_and_leaves_no_worker(tmp_path):
    # The real drive: runs of a second or more, so Ctrl-C lands while workers simulate. Sent
    # to the whole process group, as a terminal does.
    command = [sys.executable, "-m", "raidlab", "reproduce", "fu", "--seeds", "1", "--studies", "table1",
               "--jobs", "2", "-o", str(tmp_path / "out")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=sigint_at_default,
                               start_new_session=True, cwd=REPO_ROOT)
    workers: list = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(workers) < 3:  # two workers + the resource tracker
        time.sleep(0.2)
        workers = _children(process.pid)
    time.sleep(1.0)  # into the simulations
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert err.strip().endswith("interrupted") and "Traceback" not in err
    assert len(workers) >= 3

    def alive() -> list:
        living = []
        for pid in workers:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state != "Z":
                living.append(pid)
        return living

    deadline = time.monotonic() + 5
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive() == []


def test_a_reproduction_worker_ends_when_the_process_that_started_it_is_gone():
    """The reproductions' pool workers end with the process that started them, as the
    sweep's do (kill -9 left them running as orphans). A worker told that its parent is a
    process that is not its parent (the parent died before it started) exits at once."""
    import subprocess
    import sys

    code = "from raidlab.reproduce import _init_worker; _init_worker(None, parent=1); print('ran on')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "ran on" not in done.stdout, (done.returncode, done.stdout, done.stderr)
    # Its real parent: it runs on.
    code = ("import os; from raidlab.reproduce import _init_worker; "
            "_init_worker(None, parent=os.getppid()); print('ran on')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "ran on" in done.stdout, (done.returncode, done.stdout, done.stderr)


@pytest.mark.engine
def test_the_band_and_the_regime_map_end_to_end_on_a_tiny_drive(tmp_path, capsys):
    """The operating-point band and the VSM/PCM regime map: their tables, their figures, and
    the survivors' columns (blocked share, reads per idle period, the VSM model's time)."""
    out = tmp_path / "fu"
    status = main(["reproduce", "fu", "--seeds", "1", "--studies", "operating_point,regime", "--jobs", "1",
                   *_tiny_args(), "-o", str(out)])
    assert status == 0, capsys.readouterr().err
    assert {"operating_point.png", "regime.png", "operating_point.csv", "regime.csv"} <= {p.name for p in out.iterdir()}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "**The band**" in report and "**Who wins where**" in report
    band = pd.read_csv(out / "operating_point.csv")
    assert len(band) == 18 and band["blocked_share_mean"].between(0, 1).all()
    vsm = pd.read_csv(out / "regime.csv")
    # The model is of VSM's survivor: PCM runs have none.
    assert vsm[vsm["rebuild.discipline"] == "pcm"]["model_rebuild_time_s_mean"].isna().all()
    assert vsm[vsm["rebuild.discipline"] == "vsm"]["reads_per_idle_period_mean"].ge(1).all()


def test_a_regime_cell_within_one_percent_is_a_tie():
    from raidlab.reproductions.reproduce import _winner

    assert _winner(1.005, "vsm", "pcm") == "tie"
    assert _winner(1.2, "vsm", "pcm") == "vsm"
    assert _winner(0.8, "vsm", "pcm") == "pcm"


def test_a_band_or_regime_plot_names_what_it_lacks(tmp_path):
    directory = tmp_path / "x"
    directory.mkdir()
    (directory / "base.toml").write_text("seed = 1\n", encoding="utf-8")
    (directory / "studies.toml").write_text(
        '[[studies]]\nname = "r"\naxes = [{ "a.b" = [1, 2] }]\nplot = { kind = "regime", x = "a.b" }\n',
        encoding="utf-8")
    with pytest.raises(Exception, match="needs plot.y"):
        load_paper("x", tmp_path)
