"""The sensitivity studies of ``raidlab reproduce pro`` and ``raidlab reproduce vdf`` (issue 38):
PRO's gain against load with the paper's points placed by their DOR rebuild time, PRO with read
redirection on and off, VDF's gain against cache size and footprint; and ``--trace`` for the
real WebSearch files. The default tests run reduced studies (a few seconds each);
``RAIDLAB_LONG_TESTS=1`` also runs the full-size studies and checks what docs/reproduction.md
says of them."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from raidlab.cli import main
from raidlab.cli.experiments import _reproduce_traces
from raidlab.exceptions import ConfigError
from raidlab.reproductions import Context, entry, run_reproduction
from raidlab import synth
from raidlab.reproductions import pro, vdf

LONG = pytest.mark.skipif(not os.environ.get("RAIDLAB_LONG_TESTS"),
                          reason="the full-size studies (a few minutes): set RAIDLAB_LONG_TESTS=1")

#: Reduced PRO studies: two arrays, 1/8 GiB drives, 6,000 requests per look-alike, three loads.
PRO_SMALL = {"requests": 6000, "capacity_gib": 0.125, "arrays": ["raid5-3", "raid1-2"],
             "load_arrays": ["raid5-3", "raid1-2"], "load_factors": [0.5, 1, 2]}


def _spc(path: Path, requests: int = 3000, span_gib: float = 2.0, seed: int = 7) -> Path:
    """A small SPC-format read trace (ASU,LBA,Size,Opcode,Timestamp) over ``span_gib`` GiB, more
    than the reduced arrays hold, so the replay must fold its addresses."""
    rng = np.random.default_rng(seed)
    blocks = int(span_gib * 2**30) // 4096
    lba = rng.integers(0, blocks - 8, requests) * 8
    size = rng.choice([8192, 16384, 32768], requests)
    time_s = np.cumsum(rng.exponential(0.00374, requests))
    lines = [f"{i % 3},{a},{s},r,{t:.6f}" for i, (a, s, t) in enumerate(zip(lba, size, time_s))]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


# -- placing the paper's points -----------------------------------------------------------------


def test_a_paper_point_is_placed_where_raidlabs_dor_takes_as_long():
    points = [{"factor": 1.0, "dor": 100.0, "gain_time": 10.0, "gain_response": 4.0},
              {"factor": 2.0, "dor": 300.0, "gain_time": 30.0, "gain_response": 8.0}]
    at = pro.place_by_dor_time(points, 250.0)
    assert at == pytest.approx({"factor": 1.75, "gain_time": 25.0, "gain_response": 7.0})
    assert pro.place_by_dor_time(points, 99.0) is None and pro.place_by_dor_time(points, 301.0) is None
    # A load with no figure (overloaded) is skipped over, not interpolated through.
    gap = [points[0], {"factor": 1.5, "dor": math.nan, "gain_time": math.nan, "gain_response": math.nan}, points[1]]
    assert pro.place_by_dor_time(gap, 250.0) is None


# -- PRO: the studies on reduced arrays ---------------------------------------------------------


@pytest.mark.engine
def test_pro_studies_are_labelled_and_computed_from_their_runs(tmp_path):
    report = run_reproduction(entry("pro"), Context(output=tmp_path / "pro", jobs=2, options=PRO_SMALL,
                                                    studies=["load", "redirection"]))
    assert report.error is None, report.error
    titles = [table.title for table in report.tables]
    assert titles[0] == "PRO's gain against load (sensitivity study, not a fit)"
    assert "sensitivity study, not a fit" in titles[1] and "Table 3" not in " ".join(titles)
    assert [f.path.name for f in report.figures] == ["pro_load.png"] and report.figures[0].path.is_file()
    assert "not a fit" in report.figures[0].caption

    load = pd.read_csv(tmp_path / "pro" / "load.csv")
    runs = pd.read_parquet(tmp_path / "pro" / "load" / "summary.parquet")
    assert len(load) == 6 and len(runs) == 12 and set(runs["status"]) == {"done"}
    assert sorted(set(np.round(1.0 / runs["workload.trace.time_scale"], 9))) == [0.5, 1.0, 2.0]
    for row in load.itertuples():
        cases = runs[(runs["array.layout"] == row.layout) & (runs["array.drives"] == row.drives)
                     & np.isclose(runs["workload.trace.time_scale"], 1.0 / row.load_factor)]
        dor = float(cases[cases["rebuild.order"] == "sequential"]["rebuild_time_s"].iloc[0])
        pro_time = float(cases[cases["rebuild.order"] == "pro"]["rebuild_time_s"].iloc[0])
        assert row.dor_rebuild_s == pytest.approx(dor) and row.pro_rebuild_s == pytest.approx(pro_time)
        assert row.rebuild_gain_pct == pytest.approx(pro.improvement(dor, pro_time))
    # Heavier load, longer DOR rebuild (the placement relies on it).
    for _, rows in load.groupby(["layout", "drives"]):
        assert list(rows.sort_values("load_factor")["dor_rebuild_s"]) == sorted(rows["dor_rebuild_s"])

    placed = report.tables[1]
    assert len(placed.rows) == 6  # two arrays × the paper's three traces
    labels = {label: trace for trace, label in pro.TRACE_LABELS.items()}
    for row in placed.rows:
        array = ("raid5", 3) if row[0] == "RAID-5" else ("raid1", 2)
        dor, pro_time, _ = pro.TABLE3[array][labels[row[2]]]
        assert row[3] == f"{dor:,.1f}" and row[5] == f"{pro.improvement(dor, pro_time):.1f} %"

    redirection = pd.read_csv(tmp_path / "pro" / "redirection.csv")
    runs = pd.read_parquet(tmp_path / "pro" / "redirection" / "summary.parquet")
    assert len(redirection) == 6 and len(runs) == 24 and set(runs["rebuild.redirect_reads"]) == {True, False}
    for row in redirection.itertuples():
        assert row.rebuild_gain_pct_off == pytest.approx(pro.improvement(row.dor_rebuild_s_off, row.pro_rebuild_s_off))
    on = runs[runs["rebuild.redirect_reads"]]
    assert on["rebuild_time_s"].notna().all() and set(runs["rebuild.outcome"]) == {"complete"}


@pytest.mark.engine
def test_pro_default_is_the_tables_alone_and_an_unknown_study_is_refused(tmp_path):
    with pytest.raises(ConfigError) as raised:
        run_reproduction(entry("pro"), Context(output=tmp_path / "pro", options=PRO_SMALL, studies=["loads"]))
    assert raised.value.key == "studies" and "load, redirection" in str(raised.value)
    assert pro.DEFAULT_STUDIES == ("tables",) and vdf.DEFAULT_STUDIES == ("tables",)


# -- --trace for the real WebSearch files ------------------------------------------------------


@pytest.mark.engine
def test_pro_replays_a_given_spc_file_instead_of_the_look_alike(tmp_path):
    trace = _spc(tmp_path / "WebSearch1.spc")
    options = _reproduce_traces([f"websearch1={trace}"], "pro")["pro"]
    assert options == {"trace_files": {"websearch1": str(trace.resolve())}}
    report = run_reproduction(entry("pro"), Context(
        output=tmp_path / "pro", jobs=2,
        options={**options, "arrays": ["raid5-3"], "traces": ["websearch1"], "capacity_gib": 0.125}))
    assert report.error is None, report.error
    runs = pd.read_parquet(tmp_path / "pro" / "sweep" / "summary.parquet")
    assert len(runs) == 2 and set(runs["workload.trace.path"]) == {str(trace.resolve())}
    # Its addresses span 2 GiB, folded onto the 1/4 GiB array; the paper's prefix is the cap.
    assert set(runs["workload.trace.fold"]) == {"modulo"}
    assert set(runs["workload.trace.max_requests"]) == {synth.PROFILES["websearch1"].requests}
    assert set(runs["rebuild.outcome"]) == {"complete"}
    assert not (tmp_path / "pro" / "traces").exists() or not list((tmp_path / "pro" / "traces").iterdir())
    assert any(str(trace.resolve()) in fact for fact in report.facts)
    row = report.tables[0].rows[0]
    assert row[:3] == ["RAID-5", "3", "WT1"] and row[7] != "—" and row[8] != "—"


@pytest.mark.parametrize("argv, words", [
    (["reproduce", "pro", "--trace", "websearch1=missing.spc"], "--trace: no such trace file: missing.spc"),
    (["reproduce", "pro", "--trace", "garbage.spc"], "--trace: pro takes websearch1=FILE"),
    (["reproduce", "pro", "--trace", "websearch2=garbage.spc"], "--trace: cannot read the trace file garbage.spc"),
    (["reproduce", "pro", "--trace", "websearch2=."], "--trace: not a trace file: ."),
    (["reproduce", "vdf", "--trace", "garbage.spc"], "--trace: cannot read the trace file garbage.spc"),
    (["reproduce", "pro", "--studies", "nope"], "studies: unknown study 'nope' of pro"),
    (["reproduce", "vdf", "--studies", "nope"], "studies: unknown study 'nope' of vdf"),
])
def test_a_missing_or_unreadable_trace_is_an_error_naming_the_option_and_the_file(argv, words, tmp_path, capsys,
                                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "garbage.spc").write_text("this is not a trace\nnor is this\n", encoding="ascii")
    assert main([*argv, "-o", str(tmp_path / "out")]) == 2
    assert words in capsys.readouterr().err


# -- VDF: gain against cache size and footprint, reduced ----------------------------------------


@pytest.mark.engine
def test_vdf_cache_study_reports_rgr_and_reconstruction_gains_per_footprint(tmp_path):
    options = {"records": 40_000, "replay_records": 40_000, "footprints_gib": [2, 8], "drives": [5, 8],
               "sizes": [4096, 16384], "cache_replay_sizes": [8192, 1_048_576], "capacity_gib": 1}
    report = run_reproduction(entry("vdf"), Context(output=tmp_path / "vdf", jobs=2, options=options,
                                                    studies=["cache"]))
    assert report.error is None, report.error
    assert [t.title.split(":")[1].strip() for t in report.tables] == [
        "VDF-LRU vs LRU (sensitivity study, not a fit)", "VDF-LFU vs LFU (sensitivity study, not a fit)"]
    assert [f.path.name for f in report.figures] == ["vdf_cache_lru.png", "vdf_cache_lfu.png"]
    frame = pd.read_csv(tmp_path / "vdf" / "cache-study" / "cache_study.csv")
    stored = [json.loads(p.read_text()) for p in (tmp_path / "vdf" / "cache-study").glob("rgr-*.json")]
    assert len(stored) == 2
    grid = {(cell["policy"], cell["size_blocks"], cell["drives"], s["key"]["trace"]): cell["cell"]
            for s in stored for cell in s["cells"]}
    assert set(frame["area_gib"]) == {2.0, 8.0} and set(frame["size_blocks"]) == {4096, 8192, 16384, 1_048_576}
    # Every RGR reduction is the grid's own (base − VDF) / base.
    for row in frame.dropna(subset=["rgr_reduction_pct"]).itertuples():
        matches = [(key, cell) for key, cell in grid.items()
                   if key[0] == row.base and key[1] == row.size_blocks and key[2] == row.drives]
        assert any(row.rgr_reduction_pct == pytest.approx(100 * vdf.rgr_reduction(
            cell["after"], grid[(f"vdf-{row.base}", row.size_blocks, row.drives, key[3])]["after"]))
            for key, cell in matches)
    # The 8,192-block caches fill and are replayed (5 disks); the 1 Mi ones never fill: no replay.
    replayed = frame[frame["rd_gain_pct"].notna()]
    assert set(replayed["size_blocks"]) == {8192} and set(replayed["drives"]) == {5} and len(replayed) == 4
    for row in replayed.itertuples():
        assert row.rd_gain_pct == pytest.approx(100 * vdf.reconstruction_improvement(row.rd_base_s, row.rd_vdf_s))
    assert "never fill the cache" in report.facts[0]


# -- full size, behind the long flag -----------------------------------------------------------


@pytest.mark.engine
@LONG
def test_full_pro_studies_hold_what_the_doc_says(tmp_path):
    report = run_reproduction(entry("pro"), Context(output=tmp_path / "pro", studies=["load", "redirection"]))
    assert report.error is None, report.error
    load = pd.read_csv(tmp_path / "pro" / "load.csv")
    usable = load[~load["overloaded"] & ~load["trace_ended_first"]]
    assert not load["overloaded"].any() and len(usable) == 32
    # PRO gains on both measures at every usable load, and more at a heavier load.
    assert (usable["rebuild_gain_pct"] > 0).all() and (usable["response_gain_pct"] > 0).all()
    for _, rows in usable.groupby(["layout", "drives"]):
        gains = list(rows.sort_values("load_factor")["rebuild_gain_pct"])
        assert gains == sorted(gains)
    placed = pd.read_csv(tmp_path / "pro" / "load_paper_points.csv")
    assert placed["load_factor"].notna().all()
    small = placed[(placed["layout"] == "raid5") & placed["drives"].isin([3, 5])]
    assert ((small["rebuild_gain_pct"] - small["paper_rebuild_gain_pct"]).abs() < 6).all()
    assert (placed[placed["layout"] == "raid1"]["rebuild_gain_pct"] > 20).all()
    redirection = pd.read_csv(tmp_path / "pro" / "redirection.csv")
    # Without redirection PRO is slower than DOR everywhere, by less than 5 %; with it, faster.
    assert ((redirection["rebuild_gain_pct_off"] < 0) & (redirection["rebuild_gain_pct_off"] > -5)).all()
    assert (redirection["rebuild_gain_pct_on"] > 0).all()
    assert (redirection[redirection["layout"] == "raid1"]["rebuild_gain_pct_on"] > 20).all()


@pytest.mark.engine
@LONG
def test_full_vdf_cache_study_holds_what_the_doc_says(tmp_path):
    report = run_reproduction(entry("vdf"), Context(output=tmp_path / "vdf", studies=["cache"]))
    assert report.error is None, report.error
    frame = pd.read_csv(tmp_path / "vdf" / "cache-study" / "cache_study.csv")
    assert set(frame["area_gib"]) == {15.0, 60.0, 240.0}
    replayed = frame.dropna(subset=["rd_gain_pct"])
    # VDF shortens the reconstruction in all 24 replayed cells, by less than 15 %.
    assert len(replayed) == 24 and ((replayed["rd_gain_pct"] > 0) & (replayed["rd_gain_pct"] < 15)).all()
    # VDF-LFU's RGR is higher than LFU's at 524,288 blocks on 5 disks, at every footprint.
    lfu = frame[(frame["base"] == "lfu") & (frame["size_blocks"] == 524_288) & (frame["drives"] == 5)]
    assert len(lfu) == 3 and (lfu["rgr_reduction_pct"] < 0).all()
    # At 2 Mi blocks both VDF policies gain less than 5 % on 5 disks.
    largest = frame[(frame["size_blocks"] == 2_097_152) & (frame["drives"] == 5)]
    assert (largest["rgr_reduction_pct"] < 5).all()
