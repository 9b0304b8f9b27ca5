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
    # Infinite, NaN and overflowing areas: a message naming the option, not an OverflowError.
    (["trace", "synth", "websearch1", "-o", "x.spc", "--area-gib", "inf"], "--area-gib: expected a finite"),
    (["trace", "synth", "websearch1", "-o", "x.spc", "--area-gib", "nan"], "--area-gib: expected a finite"),
    (["trace", "synth", "websearch1", "-o", "x.spc", "--area-gib", "1e300"], "--area-gib: at most"),
    # An output that cannot be written: the path and the cause, not a traceback.
    (["trace", "synth", "websearch1", "-o", "missing/x.spc", "--requests", "10"],
     "missing/x.spc: cannot write the trace: the directory missing does not exist"),
    (["trace", "synth", "websearch1", "-o", ".", "--requests", "10"], "that is a directory"),
    # A compression raidlab neither writes nor reads: refused, not plain text under its name.
    (["trace", "synth", "websearch1", "-o", "x.spc.xz", "--requests", "10"], ".xz is not one of them"),
])
def test_bad_options_exit_2(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_library_rejects_an_infinite_area_with_a_value_error():
    for area in (float("inf"), float("nan"), 1e300):
        with pytest.raises(ValueError, match="area_gib"):
            synth.generate("websearch1", requests=10, area_gib=area)


def _stop_drawing(monkeypatch) -> list:
    """Make drawing a trace stop at its first step (placing the hot regions, before any
    per-request array): a count that is not refused fails the test at once instead of
    allocating terabytes. Returns the list each attempt to draw is recorded in."""
    drawn = []

    def place_regions(*args, **kwargs):
        drawn.append(args)
        raise RuntimeError("the trace was drawn")

    monkeypatch.setattr(synth, "_place_regions", place_regions)
    return drawn


@pytest.mark.parametrize("trace", [["websearch1"], ["--like", "websearch2"], ["financial1"], ["--like", "financial2"]])
def test_a_huge_request_count_is_refused_naming_the_option_and_the_limit(trace, tmp_path, capsys, monkeypatch):
    """`--requests 1000000000000` tried to draw every column whole (7.28 TiB for the first
    one): now it is refused before anything is drawn, with the limit and the reason."""
    monkeypatch.chdir(tmp_path)
    drawn = _stop_drawing(monkeypatch)
    assert main(["trace", "synth", *trace, "-o", "x.spc", "--requests", str(10**12)]) == 2
    err = capsys.readouterr().err
    assert f"--requests: at most {synth.MAX_REQUESTS:,} requests, not 1,000,000,000,000" in err
    assert "drawn whole in memory" in err
    assert "Traceback" not in err
    assert drawn == []
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_request_limit_is_inclusive_and_the_library_keeps_it(monkeypatch):
    """generate() refuses one request more than MAX_REQUESTS with a ValueError naming
    `requests`, before drawing; MAX_REQUESTS itself goes on to be drawn."""
    drawn = _stop_drawing(monkeypatch)
    for name in ("websearch3", "financial2"):
        with pytest.raises(ValueError, match=f"requests: at most {synth.MAX_REQUESTS:,} requests"):
            synth.generate(name, requests=synth.MAX_REQUESTS + 1)
        with pytest.raises(ValueError, match="requests: at most"):
            synth.generate_like(name, requests=synth.MAX_REQUESTS + 1)
        assert drawn == []
        with pytest.raises(RuntimeError, match="the trace was drawn"):
            synth.generate(name, requests=synth.MAX_REQUESTS)
        assert len(drawn) == 1
        drawn.clear()
    # Every published trace, and the look-alikes' defaults, are far inside the limit.
    assert max(p.requests for p in (*synth.PROFILES.values(), *synth.OLTP_PROFILES.values())) * 25 \
        <= synth.MAX_REQUESTS


@pytest.mark.parametrize("suffix, magic", [(".bz2", b"BZh"), (".gz", b"\x1f\x8b")])
def test_a_compressed_name_writes_that_compression_which_raidlab_reads_back(suffix, magic, tmp_path):
    """`-o x.spc.bz2` wrote plain text under a bzip2 name; now the bytes are bzip2 (gzip for
    .gz), and both raidlab's trace reader and synth.read_spc read the same trace back."""
    plain, packed = tmp_path / "t.spc", tmp_path / f"t.spc{suffix}"
    for path in (plain, packed):
        assert main(["trace", "synth", "websearch1", "-o", str(path), "--requests", "2000", "--seed", "3"]) == 0
    assert packed.read_bytes()[:len(magic)] == magic
    assert synth.characteristics(synth.read_spc(packed)) == synth.characteristics(synth.read_spc(plain))
    infos = [json.loads(_core.trace_info(f'path = "{path}"\nformat = "auto"\n', str(tmp_path)))
             for path in (plain, packed)]
    assert infos[1]["requests"] == 2000 and infos[1]["format"] == "spc"
    assert infos[0] == infos[1]


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


# -- the SWO paper's OLTP traces (seed 002 Table I) ---------------------------------------------

#: Seed 002 Table I: write ratio, average request size (KB), average IOPS.
TABLE_I = {"financial1": (0.672, 6.2, 69.0), "financial2": (0.176, 2.2, 125.0)}


def test_oltp_profiles_are_table_i():
    assert {name: (p.write_fraction, p.mean_size_kb, p.iops) for name, p in synth.OLTP_PROFILES.items()} == TABLE_I
    assert set(synth.TRACE_NAMES) == set(TABLE2) | set(TABLE_I)
    # One hour at the published rate (the paper replays each trace for an hour).
    assert synth.OLTP_PROFILES["financial1"].requests == 248_400
    assert synth.OLTP_PROFILES["financial2"].requests == 450_000


@pytest.mark.parametrize("name", sorted(TABLE_I))
def test_an_oltp_look_alike_has_the_published_characteristics(name, tmp_path):
    """A whole hour, written by the command and read back from the file: the write share, the
    mean size and the rate are the published ones; sizes are 512-byte multiples, starts 4 KiB
    aligned, every request inside the 60 GiB volume."""
    path = tmp_path / f"{name}.spc.gz"
    assert main(["trace", "synth", name, "-o", str(path)]) == 0
    columns = synth.read_spc(path)
    measured = synth.characteristics(columns)
    writes, mean_kb, iops = TABLE_I[name]
    requests = int(round(iops * 3600))
    assert measured["requests"] == requests
    assert abs(measured["write_fraction"] - writes) <= 0.5 / requests  # exactly, to a whole request
    assert abs(measured["mean_size_kib"] / mean_kb - 1) <= 0.01, measured["mean_size_kib"]  # 1 KB = 1,024 bytes
    assert abs(measured["iops"] / iops - 1) <= 1e-6, measured["iops"]
    assert np.all(columns["size_bytes"] % 512 == 0) and columns["size_bytes"].min() == 512
    assert not np.any(columns["lba"] % 8)
    assert measured["largest_end_sector"] <= 60 * 2**30 // 512
    assert columns["time_s"][0] == 0.0 and np.all(np.diff(columns["time_s"]) >= 0)
    assert columns["time_s"][-1] < 3600.0
    # Reads and writes are both there, spread through the hour.
    halves = columns["time_s"] < 1800
    assert abs((~columns["is_read"][halves]).mean() - writes) < 0.01
    assert abs((~columns["is_read"][~halves]).mean() - writes) < 0.01


def test_an_oltp_look_alike_rewrites_its_hot_regions():
    """80 % of the requests fall in the hot regions, which hold 2 % of the area (raidlab's
    choice, docs/traces.md): the locality that makes blocks be written again."""
    trace = synth.generate("financial1", seed=4, requests=100_000)
    area_blocks = trace.area_sectors // 8
    assert trace.area_sectors == 60 * 2**30 // 512
    assert len(trace.hot_regions) == synth.OLTP_DEFAULT_HOT_REGIONS
    held = sum(blocks for _, blocks in trace.hot_regions)
    assert abs(held / area_blocks - synth.OLTP_HOT_AREA_SHARE) < 0.001
    ends = [start + blocks for start, blocks in trace.hot_regions]
    assert all(end <= start for end, (start, _) in zip(ends, trace.hot_regions[1:]))
    block = trace.lba // 8
    last = (trace.lba + trace.size_bytes // 512 - 1) // 8
    inside = np.zeros(block.size, dtype=bool)
    for start, blocks in trace.hot_regions:
        inside |= (block >= start) & (last < start + blocks)
    # The hot requests, and the 2 % of the cold ones that land in the regions.
    assert 0.79 <= inside.mean() <= 0.82
    written = block[trace.is_write]
    assert np.unique(written).size < 0.95 * written.size  # blocks are written again


def test_oltp_look_alikes_are_byte_identical_for_one_seed(tmp_path):
    paths = []
    for number, (name, seed) in enumerate((("financial2", 5), ("financial2", 5), ("financial2", 6),
                                           ("financial1", 5))):
        path = tmp_path / f"t{number}.spc.gz"
        assert main(["trace", "synth", name, "-o", str(path), "--seed", str(seed), "--requests", "20000"]) == 0
        paths.append(path.read_bytes())
    assert paths[0] == paths[1]
    assert paths[0] != paths[2] and paths[0] != paths[3]


def test_the_core_reads_an_oltp_look_alike_as_published(tmp_path):
    """`raidlab trace info` (the core's own reader) sees the write share, size and rate."""
    path = tmp_path / "f1.spc"
    synth.write(synth.generate("financial1", seed=2, requests=30_000), path)
    stats = json.loads(_core.trace_info(f'path = "{path}"\nformat = "spc"\n', str(tmp_path)))
    assert stats["requests"] == 30_000
    assert abs(stats["read_fraction"] - (1 - 0.672)) <= 1 / 30_000
    assert abs(stats["mean_size_bytes"] / (6.2 * 1024) - 1) <= 0.02
    assert abs(stats["iops"] / 69 - 1) <= 0.001
