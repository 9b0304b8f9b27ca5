"""``raidlab trace synth`` (raidlab.synth): the web-search look-alikes carry the PRO paper's
published characteristics (seed 000 Table 2), are byte-identical for one seed, and replay."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from raidlab import _core, synth
from raidlab.cli import main

#: Seed 000 Table 2: requests, share in the hottest 20 % of the area, mean inter-arrival (ms).
TABLE2 = {
    "websearch1": (842_535, 0.6999, 3.74),
    "websearch2": (999_999, 0.7012, 3.73),
    "websearch3": (999_999, 0.6989, 5.71),
}


def test_profiles_are_table_2():
    assert {name: (p.requests, p.hot_share, p.mean_interarrival_ms) for name, p in synth.PROFILES.items()} == TABLE2


@pytest.mark.parametrize("name", sorted(TABLE2))
def test_a_written_trace_has_the_published_characteristics(name, tmp_path):
    """The whole published prefix, written by the command and read back from the file."""
    path = tmp_path / f"{name}.spc"
    assert main(["trace", "synth", name, "-o", str(path), "--area-gib", "10"]) == 0
    columns = synth.read_spc(path)
    measured = synth.characteristics(columns)
    requests, hot, interarrival_ms = TABLE2[name]
    assert measured["requests"] == requests
    assert measured["read_fraction"] == 1.0  # the paper filtered the writes out
    assert abs(measured["hot_share"] - hot) <= 0.015, measured["hot_share"]
    assert abs(measured["mean_interarrival_ms"] / interarrival_ms - 1) <= 0.02, measured["mean_interarrival_ms"]
    # Every request lies within the area and is one of the chosen sizes, 4 KiB-aligned.
    assert measured["largest_end_sector"] <= 10 * 2**30 // 512
    assert set(np.unique(columns["size_bytes"]).tolist()) <= {k * 1024 for k in synth.SIZES_KIB}
    assert not np.any(columns["lba"] % 8)
    assert np.all(np.diff(columns["time_s"]) >= 0) and columns["time_s"][0] == 0.0


def test_the_core_measures_the_same_hot_share(tmp_path):
    """`raidlab trace info` (the core's own locality figure) agrees with synth.hot_share."""
    path = tmp_path / "w1.spc"
    synth.write(synth.generate("websearch1", seed=5, requests=30_000, area_gib=2), path)
    stats = json.loads(_core.trace_info(f'path = "{path}"\nformat = "spc"\n', str(tmp_path)))
    ours = synth.characteristics(synth.read_spc(path))
    assert stats["requests"] == 30_000 and stats["read_fraction"] == 1.0
    assert abs(stats["locality_hot20"] - ours["hot_share"]) <= max(stats["locality_hot20_error"], 1e-9)
    assert abs(ours["hot_share"] - 0.6999) <= 0.015


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_bytes(tmp_path):
    paths = []
    for number, seed in enumerate((7, 7, 8)):
        path = tmp_path / f"t{number}.spc"
        assert main(["trace", "synth", "websearch2", "-o", str(path), "--seed", str(seed), "--requests", "20000"]) == 0
        paths.append(path.read_bytes())
    assert paths[0] == paths[1]
    assert paths[0] != paths[2]
    gz = [tmp_path / "a.spc.gz", tmp_path / "b.spc.gz"]
    for path in gz:
        synth.write(synth.generate("websearch2", seed=7, requests=20000), path)
    assert gz[0].read_bytes() == gz[1].read_bytes()
    assert synth.characteristics(synth.read_spc(gz[0])) == synth.characteristics(synth.read_spc(tmp_path / "t0.spc"))


def test_the_hot_area_is_made_of_contiguous_regions():
    trace = synth.generate("websearch3", seed=2, requests=50_000, area_gib=5, hot_regions=6)
    assert len(trace.hot_regions) == 6
    ends = [start + blocks for start, blocks in trace.hot_regions]
    assert all(end <= start for end, (start, _) in zip(ends, trace.hot_regions[1:]))  # ordered, disjoint
    block = trace.lba // 8
    inside = np.zeros(block.size, dtype=bool)
    for start, blocks in trace.hot_regions:
        inside |= (block >= start) & (block < start + blocks)
    # About 70 % of the requests land in the regions (plus the cold ones that fall there).
    assert 0.68 <= inside.mean() <= 0.74


@pytest.mark.parametrize("argv, words", [
    (["trace", "synth", "websearch1", "-o", "x.spc", "--area-gib", "0"], "--area-gib"),
    (["trace", "synth", "websearch1", "-o", "x.spc", "--area-gib", "0.001"], "too small"),
])
def test_bad_options_exit_2(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert words in capsys.readouterr().err


@pytest.mark.engine
def test_raidlab_run_replays_a_generated_trace(tmp_path):
    """A small look-alike replayed open loop on a 3-drive RAID-5 of the PRO paper's drive."""
    trace = tmp_path / "w3.spc"
    assert main(["trace", "synth", "websearch3", "-o", str(trace), "--requests", "3000", "--area-gib", "1"]) == 0
    config = tmp_path / "run.toml"
    config.write_text(
        "[array]\nlayout = \"raid5\"\ndrives = 3\nstripe_unit_kib = 64\n"
        "[drive]\npreset = \"st3146807lc\"\ncapacity_sectors = 1048576\n"
        f"[workload.trace]\npath = \"{trace.name}\"\nformat = \"spc\"\nfold = \"reject\"\n"
        "[workload.arrival]\nprocess = \"trace\"\n")
    assert main(["run", str(config), "-o", str(tmp_path / "run"), "--quiet"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["requests_completed"] == 3000
    assert summary["response_ms"]["read"]["count"] == 3000 and summary["response_ms"]["write"]["count"] == 0
    assert summary["capacity_bytes"] == 2**30  # two data drives of 0.5 GiB
    # The trace's span: 2999 gaps of 5.71 ms on average, and the last request's service.
    assert 2999 * 5.71e-3 <= summary["simulated_seconds"] <= 2999 * 5.71e-3 + 1.0
