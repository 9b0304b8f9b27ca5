"""raidlab.cache and ``raidlab cache``: the stand-alone buffer-cache simulator against an
independent LRU, against libCacheSim when it is installed, and its command line."""

from __future__ import annotations

import json
import math
import random
import struct
from collections import Counter, OrderedDict
from pathlib import Path
from typing import List, Sequence

import pytest

from raidlab import _core, cli
from raidlab.cache import parse_size, simulate, summary_rows
from raidlab.exceptions import ConfigError

from conftest import TRACES


def write_oracle_general(path: Path, blocks: Sequence[int], size: int = 4096) -> Path:
    """An ``oracleGeneral`` file: per request u32 time (s), u64 object id, u32 size, i64 next
    access (-1), little-endian."""
    with open(path, "wb") as out:
        for index, block in enumerate(blocks):
            out.write(struct.pack("<IQIq", index // 100, block, size, -1))
    return path


def lru_misses(blocks: Sequence[int], capacity: int) -> int:
    """Misses of an LRU cache of ``capacity`` blocks, by the textbook: an ordered dict whose
    end is the most recently used block."""
    cache: "OrderedDict[int, None]" = OrderedDict()
    misses = 0
    for block in blocks:
        if block in cache:
            cache.move_to_end(block)
            continue
        misses += 1
        if len(cache) == capacity:
            cache.popitem(last=False)
        cache[block] = None
    return misses


def skewed_trace(requests: int, footprint: int, seed: int) -> List[int]:
    rng = random.Random(seed)
    # Two draws' minimum: low numbers are hot; scattered so that hot blocks are not neighbours.
    return [(min(rng.randrange(footprint), rng.randrange(footprint)) * 7919) % 1_000_003 for _ in range(requests)]


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory) -> tuple:
    blocks = skewed_trace(20_000, 3_000, seed=5)
    path = write_oracle_general(tmp_path_factory.mktemp("cache") / "small.oracleGeneral.bin", blocks)
    return path, blocks


# -- LRU misses equal an independent LRU, the definition libCacheSim's LRU implements -----------


@pytest.mark.parametrize("keys, key", [({"sizes": ["x"]}, "sizes"), ({"sizes": [4], "chunk_kib": "a"}, "chunk_kib")])
def test_a_bad_argument_names_its_key_in_plain_words(small_trace, keys, key):
    # The core's table is TOML raidlab writes from the arguments: its line and excerpt, and
    # Rust's "u64", were quoted before.
    path, _ = small_trace
    with pytest.raises(ConfigError) as caught:
        simulate(path, policies=["lru"], failed_drive="none", **keys)
    assert key in caught.value.key
    assert caught.value.message.startswith('invalid type: string'), caught.value.message
    assert "expected a whole number" in caught.value.message
    assert "TOML parse error" not in str(caught.value) and "u64" not in str(caught.value)


def test_lru_misses_equal_an_independent_lru_at_one_and_at_many_sizes(small_trace):
    path, blocks = small_trace
    sizes = [1, 17, 250, 1000, 2999]
    # Several sizes take the one-pass LRU stack; one size alone, the plain LRU cache.
    together = simulate(path, policies=["lru"], sizes=sizes, failed_drive="none")
    assert together is not None
    by_size = {cell["size_blocks"]: cell["total"]["misses"] for cell in together.cells}
    for size in sizes:
        expected = lru_misses(blocks, size)
        alone = simulate(path, policies=["lru"], sizes=[size], failed_drive="none")
        assert alone is not None
        assert by_size[size] == expected == alone.cells[0]["total"]["misses"], size


def test_lru_equals_libcachesim_when_installed(small_trace, tmp_path):
    lcs = pytest.importorskip("libcachesim", reason="libcachesim is not installed (make bench-cache installs it)")
    path, blocks = small_trace
    for size in (64, 512, 2048):
        reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE,
                                 lcs.ReaderInitParam(ignore_obj_size=True))
        miss_ratio, _ = lcs.LRU(cache_size=size).process_trace(reader)
        report = simulate(path, policies=["lru"], sizes=[size], failed_drive="none")
        assert report is not None
        assert report.cells[0]["total"]["misses"] == round(miss_ratio * len(blocks)) == lru_misses(blocks, size)


def test_records_of_size_zero_are_skipped_as_libcachesim_skips_them(tmp_path):
    path = tmp_path / "zero.oracleGeneral"
    with open(path, "wb") as out:
        for index, (block, size) in enumerate([(1, 4096), (2, 0), (1, 4096), (3, 512)]):
            out.write(struct.pack("<IQIq", index, block, size, -1))
    report = simulate(path, policies=["lru"], sizes=[4], failed_drive="none")
    assert report is not None
    assert report.trace["size_zero_skipped"] == 1
    assert (report.trace["requests"], report.cells[0]["total"]["hits"]) == (3, 1)


# -- RGR -------------------------------------------------------------------------------------


def test_rgr_of_a_cacheless_trace_follows_the_closed_form(tmp_path):
    """Every request a miss on a drive-balanced trace: RGR = (1/n)(n − 1) + ((n − 1)/n)·1
    = 2(n − 1)/n (the notes' Part B.1)."""
    blocks = list(range(0, 50_000))  # each block once, every drive alike with 4 KiB chunks
    path = write_oracle_general(tmp_path / "scan.oracleGeneral", blocks)
    report = simulate(path, policies=["lru", "vdf-lru"], sizes=[16], drives=[5, 6, 7, 8], chunk_kib=4)
    assert report is not None
    for cell in report.cells:
        n = cell["drives"]
        assert cell["total"]["hits"] == 0
        assert cell["total"]["rgr"] == pytest.approx(2 * (n - 1) / n, abs=1e-3), cell["policy"]


def test_summary_rows_average_failed_drives_and_compare_vdf_with_its_base(small_trace):
    path, _ = small_trace
    report = simulate(path, policies=["lru", "vdf-lru"], sizes=[200], drives=[5], failed_drive="all")
    assert report is not None
    assert len(report.cells) == 2 * 5
    rows = summary_rows(report)
    assert [(row["policy"], row["failed_drive"]) for row in rows] == [("lru", "mean of 5"), ("vdf-lru", "mean of 5")]
    lru, vdf = rows
    mean_rgr = sum(cell["after_warmup"]["rgr"] for cell in report.cells if cell["policy"] == "vdf-lru") / 5
    assert vdf["rgr_after_warmup"] == pytest.approx(mean_rgr)
    assert vdf["rgr_reduction"] == pytest.approx((lru["rgr_after_warmup"] - vdf["rgr_after_warmup"]) / lru["rgr_after_warmup"])
    assert lru["rgr_reduction"] is None
    frame = report.cells_frame()
    assert len(frame) == 10 and {"policy", "after_rgr", "total_hit_ratio"} <= set(frame.columns)


def test_parse_size_takes_binary_suffixes():
    assert [parse_size(text) for text in ("65536", "64Ki", "2Mi", "1gi")] == [65536, 65536, 2 * 2**20, 2**30]
    with pytest.raises(ValueError, match="64Ki or 2Mi"):
        parse_size("64k")


# -- the command -----------------------------------------------------------------------------


def run_cli(*args) -> int:
    return cli.main([str(arg) for arg in args])


def test_command_prints_one_row_per_policy_size_and_drive_count(small_trace, capsys):
    path, _ = small_trace
    assert run_cli("cache", path, "--policy", "lru,vdf-lru", "--size", "100,1Ki", "--drives", "5,6",
                   "--failed-drive", "all", "-q") == 0
    out = capsys.readouterr().out
    assert out.count("vdf-lru") == 4 and "mean of 5" in out and "mean of 6" in out and "1,024" in out
    assert "20,000 block requests from 20,000 records (oracleGeneral)" in out


def test_command_json_has_every_cell_with_its_windows(small_trace, capsys):
    path, blocks = small_trace
    assert run_cli("cache", path, "--policy", "lru", "--size", "300", "--failed-drive", "none", "--window", "5000",
                   "--json") == 0
    report = json.loads(capsys.readouterr().out)
    (cell,) = report["cells"]
    assert cell["total"]["misses"] == lru_misses(blocks, 300)
    assert cell["windows"]["first_request"] == [0, 5000, 10000, 15000]
    assert sum(cell["windows"]["requests"]) == len(blocks)
    assert cell["failed_drive"] is None and cell["total"]["rgr"] == pytest.approx(1 - cell["total"]["hit_ratio"])


def test_block_traces_are_read_in_4k_blocks(capsys):
    sample = TRACES / "msr-cambridge1-sample.csv"
    if not sample.exists():
        pytest.skip(f"{sample} is not here")
    assert run_cli("cache", sample, "--policy", "lru", "--size", "64", "--json", "--writes", "skip") == 0
    report = json.loads(capsys.readouterr().out)
    trace = report["trace"]
    # 1,000 records, 508 of them reads; a request of k blocks is k block requests.
    assert trace["records"] == 1000 and trace["format"] == "auto"
    assert trace["requests"] >= 508 and trace["writes"] == 0 and trace["writes_skipped"] >= 492


def test_mistakes_are_one_line_errors_naming_the_key(small_trace, capsys):
    path, _ = small_trace
    assert run_cli("cache", path, "--policy", "lru,mru", "--size", "10") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --policy: unknown cache policy \"mru\"") and "Traceback" not in err
    assert run_cli("cache", path, "--size", "10", "--drives", "5", "--failed-drive", "7") == 2
    assert capsys.readouterr().err.startswith("error: --failed-drive: drive 7 is not in an array of 5 drives")
    assert run_cli("cache", path.with_name("absent.oracleGeneral"), "--size", "10") == 2
    assert "absent.oracleGeneral" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run_cli("cache", path, "--size", "ten")


def test_the_miss_stream_is_a_trace_raidlab_reads(small_trace, tmp_path, capsys):
    path, _ = small_trace
    stream = tmp_path / "misses.spc"
    assert run_cli("cache", path, "--policy", "vdf-lfu", "--size", "500", "--miss-trace", stream, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    cell = report["cells"][0]
    lines = stream.read_text().splitlines()
    # Every miss after warm-up, one 4 KiB read per line, in SPC format.
    assert len(lines) == report["miss_trace"]["lines"] == cell["after_warmup"]["misses"]
    assert all(line.startswith("0,") and ",4096,r," in line for line in lines)
    info = json.loads(_core.trace_info(f'path = "{stream}"\n', str(tmp_path)))
    assert (info["format"], info["requests"]) == ("spc", len(lines))
    # More than one cache: no stream.
    assert run_cli("cache", path, "--size", "10,20", "--miss-trace", stream) == 2
    assert capsys.readouterr().err.startswith("error: --miss-trace: a miss stream is one cache's")


@pytest.mark.engine
def test_raidlab_run_replays_the_miss_stream(small_trace, tmp_path, capsys):
    path, _ = small_trace
    stream = tmp_path / "misses.spc"
    assert run_cli("cache", path, "--policy", "lru", "--size", "1000", "--miss-trace", stream, "-q") == 0
    capsys.readouterr()
    lines = len(stream.read_text().splitlines())
    import raidlab

    config = {
        "seed": 1,
        "array": {"layout": "raid5", "drives": 5, "stripe_unit_kib": 64},
        "drive": {"preset": "ibm0661"},
        "workload": {"trace": {"path": str(stream)}},
    }
    result = raidlab.run(config)
    assert result.summary["requests_completed"] == lines


def test_plot_draws_rgr_over_time(small_trace, tmp_path, capsys):
    path, _ = small_trace
    png = tmp_path / "rgr.png"
    assert run_cli("cache", path, "--policy", "lru,vdf-lru", "--size", "200", "--window", "2000", "--plot", png,
                   "-q") == 0
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


# -- issue 34, item 8: what a demanding user met -----------------------------------------------


@pytest.mark.parametrize("argv, expected", [
    (["--fail-at", "-5"], "error: --fail-at: invalid value: `-5`, expected a whole number, 0 or more"),
    (["--repair-at", "-5"], "error: --repair-at: invalid value"),
    (["--window", "-1"], "error: --window: invalid value"),
    (["--chunk-kib", "-4"], "error: --chunk-kib: invalid value"),
    (["--drives", "-3"], "error: --drives: invalid value"),
    (["--failed-drive", "x"], "error: --failed-drive: expected a drive number, \"all\" or \"none\", not \"x\""),
    (["--set", "trace.max_records=abc"], "error: --set trace.max_records: invalid type: string \"abc\""),
    (["--set", "write_penalty=foo"], "error: --set write_penalty: unknown variant `foo`"),
    (["--set", "nope=1"], "error: --set nope: unknown field `nope`"),
    (["--format", "blktrace"], "error: --format: unknown trace format \"blktrace\""),
])
def test_errors_name_the_option_not_a_line_of_toml_the_user_never_wrote(small_trace, capsys, argv, expected):
    # Before: "cache.fail_at_request: TOML parse error at line 15, column 19" and an excerpt
    # of the table raidlab wrote from the arguments.
    path, _ = small_trace
    assert run_cli("cache", path, "--size", "10", "-q", *argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(expected), err
    assert "TOML" not in err and "line" not in err and len(err.strip().splitlines()) == 1, err


def test_raid6_runs_without_naming_a_write_penalty(small_trace, capsys):
    # Before: "cache.write_penalty: the paper write model does not apply to raid6" unless
    # --set write_penalty=direct; the default is now the layout's (direct for RAID-6).
    path, blocks = small_trace
    assert run_cli("cache", path, "--size", "300", "--layout", "raid6", "--drives", "6", "--json", "-q") == 0
    (cell,) = json.loads(capsys.readouterr().out)["cells"]
    assert cell["layout"] == "raid6" and cell["total"]["misses"] == lru_misses(blocks, 300)
    assert run_cli("cache", path, "--size", "300", "--layout", "raid6", "--drives", "6", "--json", "-q",
                   "--set", "write_penalty=direct") == 0
    assert json.loads(capsys.readouterr().out)["cells"] == [cell]
    # Naming the paper's RAID-5 model for RAID-6 is still refused, by the option given.
    assert run_cli("cache", path, "--size", "300", "--layout", "raid6", "--drives", "6", "-q",
                   "--set", "write_penalty=paper") == 2
    assert capsys.readouterr().err.startswith("error: --set write_penalty: the paper write model does not apply")
    report = simulate(path, policies=["lru"], sizes=[300], drives=[6], layout="raid6")
    assert report.cells[0]["total"] == cell["total"]


@pytest.mark.parametrize("name", ["trace.csv", "trace.oracleGeneral"])
def test_a_text_trace_read_as_oracle_general_is_an_error_naming_the_file(tmp_path, capsys, name):
    # 100 lines of 24 bytes: a whole number of 24-byte records, which were read as binary
    # requests and reported as results.
    text = "".join(f"{index:04d}.5,{index * 8:010d},512,R\n" for index in range(100))
    assert len(text) == 100 * 24
    path = tmp_path / name
    path.write_text(text)
    assert run_cli("cache", path, "--format", "oracleGeneral", "--size", "10", "-q") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:1: not an oracleGeneral trace: its first bytes are text"), err
    assert capsys.readouterr().out == ""


def test_fail_at_past_the_trace_end_is_a_warning_naming_it(small_trace, capsys):
    # Before: the run reported fault-free figures under "failed drive 0", without a word.
    path, _ = small_trace
    assert run_cli("cache", path, "--size", "300", "--fail-at", "1000000", "-q") == 0
    err = capsys.readouterr().err
    assert "warning: --fail-at 1,000,000 is at or past the trace's end (20,000 block requests)" in err
    assert run_cli("cache", path, "--size", "300", "--fail-at", "19999", "-q") == 0
    assert "warning" not in capsys.readouterr().err
    # Not failing any drive: the schedule does not matter, no warning.
    assert run_cli("cache", path, "--size", "300", "--fail-at", "1000000", "--failed-drive", "none", "-q") == 0
    assert "warning" not in capsys.readouterr().err


def test_a_trace_shorter_than_the_window_plots_a_step_and_says_so(small_trace, tmp_path, capsys, monkeypatch):
    # Before: one window per line, one point each, drawn as nothing: an empty figure.
    import matplotlib.figure

    drawn = []
    save = matplotlib.figure.Figure.savefig

    def record(figure, *args, **kwargs):
        drawn.append([(list(line.get_xdata()), list(line.get_ydata())) for line in figure.axes[0].lines])
        return save(figure, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", record)
    path, _ = small_trace
    png = tmp_path / "rgr.png"
    assert run_cli("cache", path, "--policy", "lru,vdf-lru", "--size", "200", "--plot", png, "-q", "--json") == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert "fill less than one --window of 1,000,000" in captured.err
    (lines,) = drawn
    assert len(lines) == 2
    for (xs, ys), cell in zip(lines, report["cells"]):
        # A step from the first request to the trace's end at the run's RGR: a visible line.
        assert xs == [0, 20_000] and ys == [cell["total"]["rgr"]] * 2
    assert png.read_bytes().startswith(b"\x89PNG")
    # Several windows: the last one's step runs to the end too, and no warning.
    drawn.clear()
    assert run_cli("cache", path, "--size", "200", "--window", "8000", "--plot", png, "-q") == 0
    assert "warning" not in capsys.readouterr().err
    (((xs, ys),),) = drawn
    assert xs == [0, 8000, 16000, 20000] and ys[-1] == ys[-2]


def test_trace_info_summarises_an_oracle_general_trace_that_raidlab_cache_reads(small_trace, tmp_path, capsys):
    # Before: "not UTF-8 text" (auto) or "unknown trace format" (--format oracleGeneral).
    path, blocks = small_trace
    unnamed = tmp_path / "unnamed.bin"
    unnamed.write_bytes(path.read_bytes())
    counts = sorted(Counter(blocks).values(), reverse=True)
    hot = sum(counts[:math.ceil(len(counts) / 5)]) / len(blocks)
    for file, argv in ((path, []), (unnamed, ["--format", "oracleGeneral"]), (unnamed, [])):
        assert run_cli("trace", "info", file, "--json", *argv) == 0
        stats = json.loads(capsys.readouterr().out)
        assert stats["format"] == "oracleGeneral"
        assert stats["requests"] == len(blocks) and stats["read_fraction"] == 1.0
        assert stats["mean_size_bytes"] == 4096.0
        assert stats["duration_s"] == (len(blocks) - 1) // 100  # write_oracle_general: index // 100 s
        assert stats["footprint_bytes"] == len(set(blocks)) * 4096 and stats["footprint_exact"]
        assert stats["locality_hot20"] == pytest.approx(hot, abs=1e-12)
    assert run_cli("trace", "info", path) == 0
    out = capsys.readouterr().out
    assert "(oracleGeneral trace detected)" in out and "20,000" in out and "each object counts as one" in out
