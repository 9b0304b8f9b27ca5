"""raidlab.cli: the `raidlab` command, called in-process through main() and once as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import raidlab
from raidlab import _core, cli

from conftest import (DATA, REPO_ROOT, SMALL_CONFIG, TRACES, interrupt_the_second_table, sigint_at_default,
                      synthetic_rebuild_result, synthetic_result)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_cli(*args: str) -> int:
    return cli.main([str(arg) for arg in args])


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as caught:
        run_cli("--help")
    assert caught.value.code == 0
    out = capsys.readouterr().out
    for command in ("run", "plot", "trace", "bench", "validate", "schema", "docs"):
        assert command in out


def test_version(capsys):
    with pytest.raises(SystemExit):
        run_cli("--version")
    assert raidlab.__version__ in capsys.readouterr().out


def test_unknown_command_is_a_usage_error():
    with pytest.raises(SystemExit) as caught:
        run_cli("frobnicate")
    assert caught.value.code == 2


def _command_helps(parser) -> dict:
    """Each command's whole help (its nested commands' too), as the parser ``parser`` prints it."""
    import argparse

    helps = {}

    def walk(prefix, node):
        for action in node._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    helps[f"{prefix}{name}"] = child.format_help()
                    walk(f"{prefix}{name} ", child)

    walk("", parser)
    return helps


def test_a_command_built_alone_parses_and_helps_as_in_the_whole_parser(monkeypatch):
    """`main` builds only the arguments of the command it runs: built alone, each command (and
    its nested commands) has the help it has in the parser with every command, and its
    arguments leave the same namespace."""
    monkeypatch.setenv("COLUMNS", "100")
    everything = _command_helps(cli.build_parser())
    assert {name for name, _, _ in cli.COMMANDS} <= set(everything)
    for name, _, _ in cli.COMMANDS:
        alone = _command_helps(cli.build_parser(name))
        assert {key: text for key, text in alone.items() if key.split()[0] == name} == \
            {key: text for key, text in everything.items() if key.split()[0] == name}
    line = ["run", "x.toml", "-q", "--set", "array.drives=6"]
    assert vars(cli.build_parser(cli._command_word(line)).parse_args(line)) == vars(cli.build_parser().parse_args(line))
    assert cli._command_word(["--version"]) is None and cli._command_word(["trace", "info", "f"]) == "trace"


def test_no_help_screen_shows_a_doubled_percent_sign(monkeypatch):
    """argparse formats an argument's help with `%`, but a description only when it holds
    `%(prog)`: a `%%` written in a description is printed as it is."""
    monkeypatch.setenv("COLUMNS", "100")
    helps = _command_helps(cli.build_parser())
    assert "trace synth" in helps and "compare" in helps
    doubled = [command for command, text in helps.items() if "%%" in text]
    assert not doubled, f"`%%` printed in the help of {doubled}"


# -- errors: one line, exit 2, no traceback -------------------------------------------------


def test_missing_config_file_exits_2_with_the_file_name(tmp_path, capsys):
    assert run_cli("run", tmp_path / "absent.toml") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "absent.toml" in err
    assert "Traceback" not in err


def test_malformed_override_exits_2_with_the_key(small_config_path, capsys):
    assert run_cli("run", small_config_path, "--set", "failures[7].at_s=1") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: failures[7].at_s: ")


def test_toml_syntax_error_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[array\n")
    assert run_cli("run", bad, "--set", "seed=2") == 2
    assert "invalid TOML" in capsys.readouterr().err


def test_a_core_panic_exits_2_without_a_traceback(monkeypatch, capsys):
    monkeypatch.setattr(_core, "config_schema", lambda: _core._raise_for_test("panic"))
    assert run_cli("schema") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: raidlab-core panicked: deliberate panic for the test")
    assert "Traceback" not in err


def test_user_errors_print_no_traceback_from_a_real_process(tmp_path):
    # The installed console script, end to end, on a missing file.
    completed = subprocess.run(
        [sys.executable, "-m", "raidlab", "run", str(tmp_path / "absent.toml")],
        capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 2
    assert completed.stderr.startswith("error: ")
    assert "Traceback" not in completed.stderr


# -- plot (from a run directory only) ---------------------------------------------------------


def test_plot_writes_a_png_into_the_run_directory(synthetic_run_dir: Path, capsys):
    assert run_cli("plot", synthetic_run_dir) == 0
    png = synthetic_run_dir / "plot.png"
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    assert str(png) in capsys.readouterr().out


def test_plot_to_a_chosen_file(synthetic_run_dir: Path, tmp_path: Path):
    target = tmp_path / "figures" / "run.png"
    assert run_cli("plot", synthetic_run_dir, "-o", target) == 0
    assert target.read_bytes().startswith(PNG_SIGNATURE)


def test_plot_never_runs_the_simulation(synthetic_run_dir: Path, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("plot must not run the simulation")

    monkeypatch.setattr(_core, "run", forbidden)
    assert run_cli("plot", synthetic_run_dir) == 0


def test_plot_of_a_missing_run_directory_exits_2(tmp_path, capsys):
    assert run_cli("plot", tmp_path / "nope") == 2
    assert "nope" in capsys.readouterr().err


def test_plot_to_an_unknown_image_suffix_exits_2(synthetic_run_dir: Path, tmp_path, capsys):
    assert run_cli("plot", synthetic_run_dir, "-o", tmp_path / "plot.txt") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "plot.txt" in err and "Traceback" not in err


def test_validate_to_an_unknown_image_suffix_exits_2(tmp_path, capsys):
    assert run_cli("validate", "ibm0661", IBM18ES_TRACE, "-o", tmp_path / "cdf.txt") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "cdf.txt" in err


def test_plot_of_a_corrupt_table_exits_2_naming_the_file(synthetic_run_dir: Path, capsys):
    (synthetic_run_dir / "timeseries.parquet").write_bytes(b"garbage")
    assert run_cli("plot", synthetic_run_dir) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "timeseries.parquet" in err


def test_plot_of_a_malformed_summary_exits_2_naming_the_file_and_the_field(synthetic_run_dir: Path, capsys):
    summary_path = synthetic_run_dir / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["failures"] = [{"drive": 2, "at_s": "five"}]
    summary_path.write_text(json.dumps(summary))
    assert run_cli("plot", synthetic_run_dir) == 2
    err = capsys.readouterr().err
    assert err == f"error: {summary_path}: failures[0].at_s: expected a number of seconds, found \"five\"\n"
    assert not (synthetic_run_dir / "plot.png").exists()


def test_plot_of_a_table_with_text_for_numbers_exits_2_naming_the_file(synthetic_run_dir: Path, capsys):
    import pandas as pd

    path = synthetic_run_dir / "timeseries.parquet"
    frame = pd.read_parquet(path)
    frame["mean_response_ms"] = "slow"
    frame.to_parquet(path)
    assert run_cli("plot", synthetic_run_dir) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: ") and "mean_response_ms" in err


# -- schema and docs ----------------------------------------------------------------------------


@pytest.fixture
def sample_schema(monkeypatch) -> dict:
    text = (DATA / "config_schema_sample.json").read_text()
    monkeypatch.setattr(_core, "config_schema", lambda: text)
    return json.loads(text)


def test_schema_prints_json(sample_schema, capsys):
    assert run_cli("schema") == 0
    assert json.loads(capsys.readouterr().out) == sample_schema


def test_docs_config_writes_markdown_and_warns_about_undocumented_keys(sample_schema, tmp_path, capsys):
    target = tmp_path / "docs" / "config.md"
    assert run_cli("docs", "config", "-o", target) == 0
    text = target.read_text()
    assert text.startswith("# Configuration reference")
    assert "`array.stripe_unit_kib`" in text
    err = capsys.readouterr().err
    assert "workload.trace.csv.time_column" in err  # the sample has undocumented keys


# -- bench ----------------------------------------------------------------------------------------


@pytest.fixture
def fake_bench(monkeypatch):
    def bench(case: str, requests: int) -> dict:
        return {"case": case, "requests": requests, "disk_ops": 3 * requests, "wall_seconds": 0.5,
                "requests_per_second": requests / 0.5, "disk_ops_per_second": 6 * requests}

    monkeypatch.setattr(_core, "bench", bench)


@pytest.mark.parametrize("requests", ["0", "-5", "1e3", "99999999999999999999999"])
def test_bench_requests_must_be_a_positive_whole_number(fake_bench, requests, capsys):
    with pytest.raises(SystemExit) as caught:
        run_cli("bench", "--requests", requests)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "--requests" in err and "Traceback" not in err


def test_bench_rejects_an_unknown_case_before_running_any(monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(_core, "bench", lambda case, requests: ran.append(case))
    assert run_cli("bench", "--requests", "10", "--case", _core.bench_cases()[0], "--case", "nosuch") == 2
    assert ran == []
    assert "nosuch" in capsys.readouterr().err


def test_bench_prints_a_table(fake_bench, capsys):
    assert run_cli("bench", "--requests", "1000") == 0
    out = capsys.readouterr().out
    for case in _core.bench_cases():
        assert case in out
    assert "2,000" in out  # requests/s


def test_bench_compares_the_cached_ibm18es_case_with_disksim(fake_bench, capsys):
    assert run_cli("bench", "--requests", "353500", "--case", "ibm18es_cached") == 0
    # 353,500 requests in 0.5 s are 707,000 per second: ten times DiskSim's 70,700 (measured
    # on this machine class, docs/performance.md).
    assert "10.0 × DiskSim" in capsys.readouterr().err
    assert run_cli("bench", "--requests", "353500", "--case", "ibm18es_cached", "--case", "raid5",
                   "--case", "ibm18es_cached_trace", "--json") == 0
    cached, raid5, replayed = json.loads(capsys.readouterr().out)
    assert cached["times_disksim"] == pytest.approx(10.0)
    assert replayed["times_disksim"] == pytest.approx(10.0)  # the trace replay is compared too
    assert "times_disksim" not in raid5


def test_bench_json_has_rates_and_peak_memory(fake_bench, capsys):
    assert run_cli("bench", "--requests", "1000", "--case", "raid5", "--json") == 0
    [result] = json.loads(capsys.readouterr().out)
    assert result["case"] == "raid5"
    assert result["disk_ops_per_second"] == 6000
    if sys.platform != "win32":
        assert result["peak_rss_kib"] > 1000  # this Python process uses more than 1 MiB


def test_plot_of_a_run_with_a_rebuild(synthetic_rebuild_run_dir: Path):
    assert run_cli("plot", synthetic_rebuild_run_dir) == 0
    assert (synthetic_rebuild_run_dir / "plot.png").read_bytes().startswith(PNG_SIGNATURE)


# -- the summary `raidlab run` prints (hand-made summaries) ---------------------------------------


def printed(print_function, *args) -> str:
    """What ``print_function(console, *args)`` prints, as plain text."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=200)
    print_function(console, *args)
    return console.file.getvalue()


def row(text: str, *cells: str) -> bool:
    """Whether one line of ``text`` holds every cell."""
    return any(all(cell in line for cell in cells) for line in text.splitlines())


def period(count: int, mean, p99) -> dict:
    return {"count": count, "mean": mean, "p50": mean, "p90": p99, "p99": p99, "starts_s": [0.0] if count else []}


REBUILD_SUMMARY = {
    "rebuilds": [
        {
            "member": 2, "target_slot": 6, "failed_at_s": 120.0, "started_at_s": 120.0,
            "ended_at_s": 559.25, "rebuild_time_s": 439.25, "outcome": "complete",
            "units": 7_490, "units_by_executor": 7_012, "units_by_user_writes": 478,
            "units_by_piggyback": 0, "target_write_mb_s": 0.73,
        }
    ],
    "rebuild_time_s": 439.25,
    "response_ms_by_period": {
        "normal": period(4_790, 14.5, 61.0),
        "degraded": period(0, None, None),
        "rebuilding": period(17_563, 27.25, 112.5),
        "after": period(13_602, 14.75, 60.5),
    },
}


def test_print_rebuilds_shows_each_rebuild_and_the_response_time_per_period():
    text = printed(cli.print_rebuilds, REBUILD_SUMMARY)
    assert "Rebuilds onto spares" in text
    # member, target slot, failed, started, ended, rebuild time, units, by executor, by user writes
    assert row(text, "2", "6", "120.0", "559.2", "439.2 s", "7,490", "7,012", "478")
    assert "piggyback" not in text  # no piggybacked units: no column
    assert "Response time by period" in text
    assert row(text, "normal", "4,790", "14.50", "61.00")
    assert row(text, "rebuilding", "17,563", "27.25", "112.50")
    assert row(text, "after", "13,602", "14.75", "60.50")
    assert "degraded" not in text  # no request completed in it (the rebuild started at once)


def test_print_rebuilds_of_an_unfinished_and_an_abandoned_rebuild():
    summary = json.loads(json.dumps(REBUILD_SUMMARY))
    first = summary["rebuilds"][0]
    first.update(outcome="abandoned", ended_at_s=300.0, rebuild_time_s=180.0, units_by_piggyback=12)
    summary["rebuilds"].append(dict(first, target_slot=7, started_at_s=300.0, ended_at_s=None,
                                    rebuild_time_s=None, outcome="running", units_by_piggyback=0))
    text = printed(cli.print_rebuilds, summary)
    assert row(text, "abandoned after 180.0 s")
    assert row(text, "7", "300.0", "—", "unfinished")
    assert "by piggyback" in text


def test_print_rebuilds_says_why_a_rebuild_stopped_and_why_a_member_is_not_rebuilt():
    """The summary's reasons are printed: a run whose failed member was never rebuilt said
    nothing about it (a 3-copy mirror with one spare, its second member waiting)."""
    summary = json.loads(json.dumps(REBUILD_SUMMARY))
    summary["rebuilds"][0].update(outcome="abandoned", reason="its target, slot 6, failed")
    summary["members_not_rebuilt"] = [{"member": 2, "reason": "no spare was left to rebuild it onto"}]
    text = " ".join(printed(cli.print_rebuilds, summary).split())
    assert "member 2's rebuild onto slot 6 was abandoned: its target, slot 6, failed" in text
    assert "member 2 not rebuilt: no spare was left to rebuild it onto" in text


def test_print_rebuilds_marks_a_healing_copy_and_its_period():
    """dRAID's copy of a member out of its distributed spare is a row of its own, marked (the
    member was not lost), and the healing period comes after the rebuild's."""
    summary = json.loads(json.dumps(REBUILD_SUMMARY))
    first = summary["rebuilds"][0]
    summary["rebuilds"][0]["kind"] = "rebuild"
    summary["rebuilds"].append(dict(first, kind="healing", target_slot=9, failed_at_s=559.25, started_at_s=559.25,
                                    ended_at_s=800.0, rebuild_time_s=240.75, outcome="abandoned",
                                    reason="its target, slot 9, failed"))
    summary["response_ms_by_period"]["after"]["starts_s"] = [559.25]
    summary["response_ms_by_period"]["healing"] = dict(period(9_000, 16.0, 70.0), starts_s=[559.25])
    text = printed(cli.print_rebuilds, summary)
    assert row(text, "2 (healing copy)", "9", "559.2", "559.2", "800.0", "abandoned after 240.8 s")
    assert row(text, "2", "6", "120.0", "559.2", "439.2 s")
    assert "member 2's healing copy onto slot 9 was abandoned: its target, slot 9, failed" in " ".join(text.split())
    assert row(text, "healing", "9,000", "16.00", "70.00")
    assert text.index("rebuilding") < text.index("healing   ")


@pytest.mark.parametrize("summary", [{}, {"rebuilds": []}, {"rebuilds": [], "response_ms_by_period": REBUILD_SUMMARY["response_ms_by_period"]}])
def test_print_rebuilds_prints_nothing_for_a_run_without_rebuild(summary):
    assert printed(cli.print_rebuilds, summary) == ""


def test_print_summary_of_a_run_with_a_rebuild_has_the_rebuild_tables():
    text = printed(cli.print_summary, synthetic_rebuild_result())
    assert "Rebuilds onto spares" in text and row(text, "9.8 s", "949", "901", "48")
    assert row(text, "rebuilding", "1,000", "27.90")
    assert "data loss" in text  # the tables it always printed are still there


def test_print_summary_of_a_run_without_rebuild_has_no_rebuild_tables():
    text = printed(cli.print_summary, synthetic_result())
    assert "Rebuild" not in text and "by period" not in text
    assert "degraded reads" in text


def data_loss_summary_result():
    """A RAID-5 of 5 with one hot spare (slot 5): drive 1 fails at 10 s and is being rebuilt
    when drive 2 fails at 13 s and loses data, as the core reports it (failures by slot,
    periods by the array's mode: degraded after the loss)."""
    import pandas as pd

    result = synthetic_result()
    result.summary.update({
        "drives_in_array": 5,
        "requests_completed": 2_404,
        "data_loss": True,
        "data_loss_at_s": 13.0,
        "lost_requests": 910,
        "lost_read_sectors": 11_328,
        "lost_write_sectors": 4_264,
        "failures": [{"drive": 2, "at_s": 13.0}, {"drive": 1, "at_s": 10.0}],
        "rebuilds": [{"member": 1, "target_slot": 5, "failed_at_s": 10.0, "started_at_s": 10.0, "ended_at_s": 13.0,
                      "rebuild_time_s": 3.0, "outcome": "abandoned", "units": 4_167, "units_by_executor": 55,
                      "units_by_user_writes": 0, "units_by_piggyback": 0}],
        "response_ms_by_period": {
            "normal": dict(period(389, 35.22, 154.66), starts_s=[0.0]),
            "degraded": dict(period(991, 22.16, 49.41), starts_s=[10.0, 13.0]),
            "rebuilding": dict(period(114, 62.05, 176.69), starts_s=[10.0]),
            "after": period(0, None, None),
        },
    })
    result.tables["outcomes"] = pd.DataFrame({
        "time_s": [10.0, 10.0, 13.0, 13.0, 13.0], "drive": [1, 1, 2, 1, -1],
        "kind": ["drive_failed", "rebuild_started", "drive_failed", "rebuild_abandoned", "data_loss"],
        "detail": ["", "member 1 onto slot 5", "", "", "failed drives [1, 2] defeat raid5's redundancy"],
    })
    return result


def test_the_summary_of_a_data_loss_run_states_the_lost_requests_and_labels_the_period_after_it():
    text = printed(cli.print_summary, data_loss_summary_result())
    # The lost requests are said, beside the completed ones they are among.
    assert row(text, "requests completed", "2,404")
    assert row(text, "requests lost", "910 of the 2,404 completed", "no response time")
    assert row(text, "11,328 sectors unreadable", "4,264 not stored")
    # The array was degraded only after the loss (it entered degraded and began rebuilding
    # at the same instant): that period is the data loss's, in time order after the rebuild.
    assert row(text, "data loss (from 13 s)", "991", "22.16")
    assert not row(text, "degraded", "991")
    lines = text.splitlines()
    assert [i for i, line in enumerate(lines) if "rebuilding" in line and "114" in line][0] < \
        [i for i, line in enumerate(lines) if "data loss (from 13 s)" in line][0]
    assert row(text, "lost to data loss", "910")
    assert row(text, "data loss", "YES — at 13 s (failed drives [1, 2]") and "event(s)" not in text


def test_the_summary_counts_in_the_singular_for_one():
    result = synthetic_result()
    result.summary["warnings"] = ["ibm18es.diskspecs:12: parameter not modelled"]
    text = printed(cli.print_summary, result)
    assert row(text, "not modelled", "1 configured parameter:") and "(s)" not in text


def test_a_period_that_went_on_past_the_data_loss_says_so():
    result = data_loss_summary_result()
    result.summary.update(rebuilds=[], data_loss_at_s=30.0, lost_requests=581, response_ms_by_period={
        "normal": dict(period(389, 35.2, 154.7), starts_s=[0.0]),
        "degraded": dict(period(1_434, 34.6, 146.3), starts_s=[10.0]),
    })
    text = printed(cli.print_summary, result)
    assert row(text, "degraded, data loss from 30 s", "1,434")
    assert row(text, "normal", "389") and row(text, "lost to data loss", "581")


def test_failures_are_listed_in_time_order_and_a_member_in_a_spare_slot_is_named_as_a_member():
    result = synthetic_result()
    # Two spares (slots 5 and 6): member 3 fails at 10 s and is rebuilt into slot 5 by 24 s,
    # member 1 fails at 30 s and is being rebuilt into slot 6 when slot 6 fails at 35 s, and
    # slot 5, member 3 now, fails at 50 s. The core lists failures by slot.
    rebuild = {"failed_at_s": 10.0, "started_at_s": 10.0, "outcome": "complete", "units": 417,
               "units_by_executor": 417, "units_by_user_writes": 0, "units_by_piggyback": 0}
    result.summary.update({
        "drives_in_array": 5,
        "failures": [{"drive": 1, "at_s": 30.0}, {"drive": 3, "at_s": 10.0}, {"drive": 5, "at_s": 50.0},
                     {"drive": 6, "at_s": 35.0}],
        "rebuilds": [
            dict(rebuild, member=3, target_slot=5, ended_at_s=24.3, rebuild_time_s=14.3),
            dict(rebuild, member=1, target_slot=6, failed_at_s=30.0, started_at_s=30.0, ended_at_s=35.0,
                 rebuild_time_s=5.0, outcome="abandoned"),
        ],
    })
    text = printed(cli.print_summary, result)
    assert row(text, "drive failures", "drive 3 at 10 s, drive 1 at 30 s, spare 6 (being rebuilt onto for member 1) "
                                       "at 35 s, member 3 (in spare slot 5) at 50 s")
    # An idle spare failing is a spare's failure.
    result.summary.update(failures=[{"drive": 6, "at_s": 5.0}], rebuilds=[])
    assert row(printed(cli.print_summary, result), "drive failures", "spare 6 (idle) at 5 s")


@pytest.mark.parametrize("size, said", [(1, "lru of 1 block (4 KiB)"), (2, "lru of 2 blocks (8 KiB)"),
                                        (4_000, "lru of 4,000 blocks (15.6 MiB)"),
                                        (262_144, "lru of 262,144 blocks (1 GiB)")])
def test_the_cache_line_says_its_size_in_words_and_units_that_read(size, said):
    result = synthetic_result()
    result.summary["cache"] = {"policy": "lru", "size_blocks": size, "read_hit_ratio": 0.5, "rgr": None,
                               "destage_writes": 0}
    assert said in printed(cli.print_summary, result)


# -- with the engine -------------------------------------------------------------------------------


@pytest.mark.engine
def test_run_writes_the_run_directory_and_prints_a_summary(small_config_path, tmp_path, capsys):
    run_dir = tmp_path / "out"
    assert run_cli("run", small_config_path, "-o", run_dir, "--set", "seed=3") == 0
    names = {path.name for path in run_dir.iterdir()}
    assert {"config.toml", "manifest.json", "summary.json", "timeseries.parquet",
            "histogram.parquet", "drives.parquet", "outcomes.parquet"} <= names
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["seed"] == 3 and manifest["overrides"] == ["seed=3"]
    assert manifest["command_line"].startswith("raidlab run ")
    out = capsys.readouterr().out
    for label in ("reads", "writes", "degraded reads", "drive utilization", "data loss"):
        assert label in out


@pytest.mark.engine
def test_run_with_a_spare_rebuilds_and_prints_it(small_config_path, tmp_path, capsys):
    from raidlab.results import Result

    run_dir = tmp_path / "out"
    assert run_cli("run", small_config_path, "-o", run_dir, "--set", "array.spares=1",
                   "--set", "rebuild.executor=dor", "--set", "rebuild.discipline=vsm") == 0
    out = capsys.readouterr().out
    assert "Rebuilds onto spares" in out and "rebuilding" in out
    result = Result.load(run_dir)
    (rebuild,) = result.rebuilds
    assert (rebuild["member"], rebuild["target_slot"], rebuild["outcome"]) == (2, 5, "complete")
    assert result.timeseries["rebuilt_fraction"].dropna().iloc[-1] == 1.0
    assert len(result.drives) == 6  # the spare's slot after the members
    assert run_cli("plot", run_dir) == 0


@pytest.mark.engine
def test_run_with_a_cache_in_front_prints_its_line_and_counts_each_request_once(small_config_path, tmp_path, capsys):
    from raidlab.results import Result

    run_dir = tmp_path / "out"
    assert run_cli("run", small_config_path, "-o", run_dir, "--set", "cache.policy=vdf-lfu",
                   "--set", "cache.size_blocks=512", "--set", "content.check=true") == 0
    out = capsys.readouterr().out
    assert "buffer cache" in out and "vdf-lfu of 512 blocks" in out
    assert "cache content check │ passed" in out.replace("  ", "")
    summary = Result.load(run_dir).summary
    cache = summary["cache"]
    # 4 KiB requests at sector-aligned addresses touch one or two blocks each.
    assert summary["requests_completed"] == 2000
    reads = summary["response_ms"]["read"]["count"]
    assert reads <= cache["read_blocks"] <= 2 * reads
    assert cache["content"]["stale_sectors"] == 0 and summary["content"]["stale_sectors"] == 0
    # Drive 2 fails at 5 s of a 20 s run: most reads met a faulty array.
    assert 0 < cache["faulty_read_blocks"] < cache["read_blocks"]


@pytest.mark.engine
def test_the_demo_returns_to_normal_mode_while_requests_still_arrive():
    result = raidlab.run(REPO_ROOT / "experiments" / "demo.toml")
    (rebuild,) = result.rebuilds
    assert rebuild["outcome"] == "complete"
    assert rebuild["ended_at_s"] < 900  # the workload's duration_s
    assert result.summary["response_ms_by_period"]["after"]["count"] > 0


@pytest.mark.engine
def test_same_config_and_seed_write_byte_identical_results(small_config_path, tmp_path):
    """Determinism at the file level: two runs of one config and seed write the same bytes
    (the manifest's timestamp and command line are the only per-run fields, and live there)."""
    import pandas as pd

    first, second = tmp_path / "a", tmp_path / "b"
    assert run_cli("run", small_config_path, "-o", first, "--quiet") == 0
    assert run_cli("run", small_config_path, "-o", second, "--quiet") == 0
    for name in ("summary.json", "config.toml"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    for table in ("timeseries", "histogram", "drives", "outcomes"):
        a = pd.read_parquet(first / f"{table}.parquet")
        b = pd.read_parquet(second / f"{table}.parquet")
        pd.testing.assert_frame_equal(a, b)


@pytest.mark.engine
def test_run_defaults_to_runs_stem_hash(small_config_path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run_cli("run", small_config_path, "--quiet") == 0
    printed = capsys.readouterr().out.strip()
    run_dir = Path(printed)
    assert run_dir.parent == Path("runs") and run_dir.name.startswith("small-")
    assert len(run_dir.name) == len("small-") + 8
    assert (tmp_path / run_dir / "summary.json").exists()


@pytest.mark.engine
def test_run_then_plot(small_config_path, tmp_path):
    run_dir = tmp_path / "out"
    assert run_cli("run", small_config_path, "-o", run_dir, "--quiet") == 0
    assert run_cli("plot", run_dir) == 0
    assert (run_dir / "plot.png").read_bytes().startswith(PNG_SIGNATURE)


@pytest.mark.engine
@pytest.mark.parametrize("override, key", [
    ('array.drives="five"', "array.drives"),
    ("array.stripe_unit_kib=-4", "array.stripe_unit_kib"),
])
def test_bad_config_exits_2_with_the_key_path(small_config_path, tmp_path, capsys, override, key):
    assert run_cli("run", small_config_path, "-o", tmp_path / "out", "--set", override) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and key in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.engine
def test_trace_info_of_the_msr_sample(capsys):
    # MSR Cambridge hm_0 excerpt: 1,000 records, 508 reads, 127.2 s (../shared/traces/README.md).
    assert run_cli("trace", "info", TRACES / "msr-cambridge1-sample.csv", "--format", "msr", "--json") == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["requests"] == 1000
    assert stats["read_fraction"] == pytest.approx(0.508)
    assert stats["duration_s"] == pytest.approx(127.2, abs=0.1)


@pytest.mark.engine
def test_trace_info_time_scale_scales_duration_and_rate(capsys):
    sample = TRACES / "msr-cambridge1-sample.csv"
    assert run_cli("trace", "info", sample, "--json") == 0
    recorded = json.loads(capsys.readouterr().out)
    assert run_cli("trace", "info", sample, "--set", "time_scale=0.5", "--json") == 0
    halved = json.loads(capsys.readouterr().out)
    assert halved["duration_s"] == pytest.approx(recorded["duration_s"] / 2)
    assert halved["iops"] == pytest.approx(recorded["iops"] * 2)
    assert run_cli("trace", "info", sample, "--set", "time_scale=0") == 2
    assert "trace.time_scale: expected a positive finite factor" in capsys.readouterr().err


@pytest.mark.engine
def test_trace_info_table(capsys):
    sample = TRACES / "systor17-traces-sample.csv.gz"
    assert run_cli("trace", "info", sample, "--format", "systor") == 0
    assert "999" in capsys.readouterr().out


@pytest.mark.engine
@pytest.mark.parametrize("sample, fmt", [
    ("msr-cambridge1-sample.csv", "msr"),
    ("systor17-traces-sample.csv.gz", "systor"),
    ("tencent-cbs-cloud_storage-sample.bz2", "tencent"),
])
def test_trace_info_tells_the_format_of_every_sample(sample, fmt, capsys):
    assert run_cli("trace", "info", TRACES / sample, "--json") == 0
    detected = json.loads(capsys.readouterr().out)
    assert run_cli("trace", "info", TRACES / sample, "--format", fmt, "--json") == 0
    named = json.loads(capsys.readouterr().out)
    assert detected == named and detected["format"] == fmt
    assert run_cli("trace", "info", TRACES / sample) == 0
    assert f"({fmt} trace detected)" in capsys.readouterr().out


@pytest.mark.engine
def test_trace_info_of_an_unknown_layout_asks_for_the_format(tmp_path, capsys):
    odd = tmp_path / "odd.txt"
    odd.write_text("12.5;read;4096;8\n")
    assert run_cli("trace", "info", odd) == 2
    err = capsys.readouterr().err
    assert "trace.format:" in err and "fit none of the formats" in err and "Traceback" not in err


@pytest.mark.engine
def test_trace_info_of_a_missing_file_exits_2(tmp_path, capsys):
    assert run_cli("trace", "info", tmp_path / "none.csv", "--format", "msr") == 2
    assert "none.csv" in capsys.readouterr().err


@pytest.mark.engine
def test_schema_is_the_cores(capsys):
    assert run_cli("schema") == 0
    schema = json.loads(capsys.readouterr().out)
    assert {"array", "workload"} <= set(schema["properties"])


@pytest.mark.engine
def test_real_bench_runs_every_case(capsys):
    assert run_cli("bench", "--requests", "2000", "--json") == 0
    results = json.loads(capsys.readouterr().out)
    assert [r["case"] for r in results] == list(_core.bench_cases())
    assert all(r["requests"] == 2000 and r["disk_ops"] > 0 for r in results)


def test_console_script_is_installed():
    script = Path(sys.executable).with_name("raidlab")
    assert script.exists() or os.name == "nt"


# -- progress and interruption ----------------------------------------------------------------


def test_progress_bar_waits_for_the_delay_and_copes_with_unknown_fractions():
    from rich.console import Console

    reporter = cli.ProgressReporter(Console(file=open(os.devnull, "w")), delay_s=3600)
    assert reporter(0.5, 10) is True and reporter.progress is None
    reporter.delay_s = 0.0
    assert reporter(0.5, 10) is True and reporter.progress is not None
    assert reporter(float("nan"), 20) is True
    reporter.close()
    assert reporter.progress is None


def test_quiet_disables_the_progress_bar():
    from rich.console import Console

    reporter = cli.ProgressReporter(Console(file=open(os.devnull, "w")), enabled=False, delay_s=0.0)
    assert reporter(0.5, 10) is True and reporter.progress is None


@pytest.mark.engine
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX-specific")
def test_ctrl_c_stops_a_run_cleanly(small_config_path, tmp_path):
    import signal
    import time

    script = (
        "import sys, raidlab.cli\n"
        "sys.stderr.write('ready\\n'); sys.stderr.flush()\n"
        "sys.exit(raidlab.cli.main(sys.argv[1:]))\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, "run", str(small_config_path), "-o", str(tmp_path / "out"),
         "--set", "workload.requests=20000000"],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=sigint_at_default,
    )
    assert process.stderr.readline() == "ready\n"
    time.sleep(0.5)  # into the simulation, which takes many seconds
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "interrupted" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.engine
def test_ctrl_c_while_the_run_directory_is_written_leaves_none(small_config_path, tmp_path, monkeypatch, capsys):
    interrupt_the_second_table(monkeypatch, KeyboardInterrupt())
    assert run_cli("run", small_config_path, "-o", tmp_path / "out", "--quiet") == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert not (tmp_path / "out").exists()


def interrupt_inside(core_function: str, *args: str) -> "tuple[int, str, str]":
    """Run ``raidlab ARGS`` in a child process, send it SIGINT 0.3 s after it enters
    ``raidlab._core.<core_function>`` (so the Ctrl-C lands in the core's loop, not before it),
    and return its exit status, stdout and stderr, checking that it ended within 5 s."""
    import signal
    import time

    script = (
        "import sys, raidlab.cli\n"
        "from raidlab import _core\n"
        f"inner = _core.{core_function}\n"
        "def announced(*args):\n"
        "    sys.stderr.write('entered\\n'); sys.stderr.flush()\n"
        "    return inner(*args)\n"
        f"_core.{core_function} = announced\n"
        "sys.exit(raidlab.cli.main(sys.argv[1:]))\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        preexec_fn=sigint_at_default,
    )
    try:
        assert process.stderr.readline() == "entered\n"
        time.sleep(0.3)
        process.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        out, err = process.communicate(timeout=10)  # the whole call would take minutes or forever
        assert time.monotonic() - interrupted < 5
    finally:
        process.kill()
        process.wait()
    return process.returncode, out, err


@pytest.mark.engine
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX-specific")
def test_ctrl_c_stops_a_bench_case_at_once():
    status, out, err = interrupt_inside("bench", "bench", "--case", "single_drive", "--requests", str(10**9))
    assert status == 130
    assert err == "interrupted\n" and out == ""


@pytest.mark.engine
@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and SIGINT delivery are POSIX-specific")
def test_ctrl_c_stops_trace_info_on_an_endless_trace(tmp_path):
    import threading

    # A named pipe fed the same SPC line for as long as it is read: a trace without an end.
    fifo = tmp_path / "endless.spc"
    os.mkfifo(fifo)

    def feed():
        try:
            with open(fifo, "w") as pipe:
                while True:
                    pipe.write("0,1,512,r,0.0\n" * 4096)
        except OSError:  # the reader went away
            pass

    threading.Thread(target=feed, daemon=True).start()
    status, out, err = interrupt_inside("trace_info", "trace", "info", str(fifo), "--format", "spc")
    assert status == 130
    assert err == "interrupted\n" and out == ""


#: Libraries that take long to import: the command must not load them before main() runs,
#: where a Ctrl-C is caught.
SLOW_IMPORTS = ("numpy", "pandas", "pyarrow", "matplotlib", "rich")


def test_importing_the_command_loads_no_slow_library():
    code = f"import sys, raidlab.cli; print(*[m for m in {SLOW_IMPORTS!r} if m in sys.modules])"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == ""


def test_a_quiet_run_loads_no_slow_library(tmp_path):
    """`raidlab run -q` hands its tables over, writes its run directory and prints one line
    without NumPy, pandas, pyarrow, Matplotlib or rich (their imports took most of a short
    run); a run that prints its summary tables loads rich and nothing else of them."""
    config = tmp_path / "small.toml"
    config.write_text(SMALL_CONFIG)
    for extra, expected in ((["--quiet"], ""), ([], "rich")):
        code = ("import sys\nfrom raidlab.cli import main\n"
                f"status = main(['run', {str(config)!r}, '-o', {str(tmp_path / 'run')!r}, '--force', *{extra!r}])\n"
                f"print('loaded:', *[m for m in {SLOW_IMPORTS!r} if m in sys.modules])\n"
                "sys.exit(status)")
        completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout.splitlines()[-1].removeprefix("loaded:").strip() == expected
        assert (tmp_path / "run" / "timeseries.parquet").exists()
    import pandas as pd

    assert pd.read_parquet(tmp_path / "run" / "drives.parquet")["drive"].tolist() == [0, 1, 2, 3, 4]


@pytest.mark.skipif(sys.platform == "win32", reason="the console script is an .exe there")
@pytest.mark.parametrize("entry", ["console script", "python -m raidlab"])
@pytest.mark.parametrize("library", ["tomli_w", "rich", "pandas"])
def test_ctrl_c_while_the_command_loads_its_libraries_exits_130(synthetic_run_dir, tmp_path, entry, library):
    """A Ctrl-C during the first second, while `raidlab plot` loads raidlab.cli (which imports
    tomli_w) and pandas, or while `raidlab summary` loads rich for its table (`plot` prints
    one plain line and needs no rich): a stand-in module, found before the real one, is
    interrupted as it is imported."""
    stand_in = tmp_path / "stand-ins" / library
    stand_in.mkdir(parents=True)
    (stand_in / "__init__.py").write_text("raise KeyboardInterrupt\n")
    command = ([str(Path(sys.executable).with_name("raidlab"))] if entry == "console script"
               else [sys.executable, "-m", "raidlab"])
    path = os.pathsep.join(filter(None, [str(stand_in.parent), os.environ.get("PYTHONPATH")]))
    subcommand = "summary" if library == "rich" else "plot"
    completed = subprocess.run([*command, subcommand, str(synthetic_run_dir)], capture_output=True, text=True,
                               timeout=120, env={**os.environ, "PYTHONPATH": path})
    assert (completed.returncode, completed.stderr, completed.stdout) == (130, "interrupted\n", "")
    assert not (synthetic_run_dir / "plot.png").exists()


# -- validate, docs validation (DiskSim's real-drive traces) ---------------------------------------

IBM18ES_TRACE = TRACES.parent / "diskspecs" / "ibm18es.trace"


def test_validate_prints_means_and_demerit_and_writes_the_cdf_png(tmp_path, capsys):
    # The wrong drive for the trace is fine for a smoke test: assert structure only.
    target = tmp_path / "cdf.png"
    assert run_cli("validate", "ibm0661", IBM18ES_TRACE, "-o", target) == 0
    captured = capsys.readouterr()
    assert target.read_bytes().startswith(PNG_SIGNATURE)
    for text in ("measured mean (ms)", "simulated mean (ms)", "demerit (ms)", "demerit (% of mean)",
                 "all requests", "10,000", "5.26", f"wrote {target}"):
        assert text in captured.out, text
    assert "beyond the drive's capacity" in captured.err  # ibm0661 is far smaller than the 18ES


def test_validate_json_is_the_summary(tmp_path, capsys):
    assert run_cli("validate", "ibm0661", IBM18ES_TRACE, "-o", tmp_path / "cdf.png", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["requests"] == 10_000
    assert summary["demerit_percent"] == pytest.approx(100 * summary["demerit_ms"] / summary["measured_mean_ms"])
    assert {"measured_mean_ms", "simulated_mean_ms", "read", "write"} <= set(summary)


def test_validate_default_png_is_named_after_the_trace(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run_cli("validate", "ibm0661", IBM18ES_TRACE) == 0
    assert (tmp_path / "ibm18es-validation.png").read_bytes().startswith(PNG_SIGNATURE)


@pytest.mark.parametrize(
    "line, message",
    [
        ("W Hit 2 4 100.0", "expected 6 fields"),
        ("X Hit 2 4 100.0 5", 'unknown operation "X"'),
        ("R Hot 2 4 100.0 5", 'unknown buffer label "Hot"'),
        ("R Hit 2 0 100.0 5", "block count must be positive"),
        ("R Hit 2 4 soon 5", 'bad measured service time "soon"'),
    ],
)
def test_validate_malformed_trace_lines_exit_2_with_file_and_line(tmp_path, capsys, line, message):
    trace = tmp_path / "bad.trace"
    trace.write_text(f"R Hit 1 4 100.0 5\n\n{line}\n")
    assert run_cli("validate", "ibm0661", trace, "-o", tmp_path / "x.png") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {trace}:3: ") and message in err
    assert "Traceback" not in err
    assert not (tmp_path / "x.png").exists()


def test_validate_an_existing_file_is_taken_as_a_diskspec(tmp_path, capsys):
    spec = tmp_path / "drive.parv"
    spec.write_text("# not a real specification\n")
    assert run_cli("validate", spec, IBM18ES_TRACE, "-o", tmp_path / "x.png") == 2
    err = capsys.readouterr().err
    # Without the DiskSim spec import `diskspec` is an unknown key; with it, the file is bad.
    assert "drive.diskspec" in err or str(spec) in err, err
    assert err.startswith("error: ") and "Traceback" not in err


def test_validate_unknown_preset_exits_2(tmp_path, capsys):
    assert run_cli("validate", "ibm9999", IBM18ES_TRACE, "-o", tmp_path / "x.png") == 2
    assert capsys.readouterr().err.startswith("error: drive.preset: unknown drive preset")


def test_validate_a_missing_diskspec_file_exits_2_saying_so(tmp_path, capsys):
    missing = tmp_path / "absent.parv"
    assert run_cli("validate", missing, IBM18ES_TRACE, "-o", tmp_path / "x.png") == 2
    assert capsys.readouterr().err == f"error: {missing}: No such file or directory\n"


def test_docs_validation_of_a_missing_diskspecs_directory_exits_2(tmp_path, capsys):
    report = tmp_path / "validation.md"
    assert run_cli("docs", "validation", "-o", report, "--diskspecs", tmp_path / "absent") == 2
    assert "absent" in capsys.readouterr().err
    assert not report.exists()


def test_docs_validation_writes_the_report_with_every_drive(tmp_path, capsys):
    output = tmp_path / "validation.md"
    assert run_cli("docs", "validation", "-o", output, "--diskspecs", IBM18ES_TRACE.parent) == 0
    text = output.read_text()
    for name in ("atlas_III", "ibm18es", "dec_rz26"):
        assert f"| `{name}` |" in text
    assert f"wrote {output}" in capsys.readouterr().out



@pytest.mark.engine
def test_an_imported_drive_lists_what_it_does_not_model(tmp_path, capsys):
    """DiskSim parameters raidlab does not model are reported, never silently dropped: in
    summary.json with file and line, and counted in the printed summary."""
    from conftest import SHARED

    config = tmp_path / "imported.toml"
    config.write_text(
        f'[array]\nlayout = "raid0"\ndrives = 1\n[drive]\ndiskspec = "{SHARED / "diskspecs" / "ibm18es.parv"}"\n'
        "[workload]\nrequests = 200\n"
    )
    run_dir = tmp_path / "out"
    assert run_cli("run", config, "-o", run_dir) == 0
    summary = json.loads((run_dir / "summary.json").read_text())
    # The import's warnings, each naming its spec file and line; the run's own (200 requests at
    # the default 100/s are more than one 18ES serves) are printed apart.
    warnings = [w for w in summary["warnings"] if w not in cli.run_warnings(summary)]
    assert warnings and all(".parv" in w or ".diskspecs" in w or ".model" in w for w in warnings), warnings[:3]
    assert any("Read directly to buffer" in w for w in warnings)
    assert not any("Read any free blocks" in w for w in warnings)  # modelled
    assert "not modelled" in capsys.readouterr().out


# -- results a user can trust: warnings, refusals, the run directory, plain messages ----------


@pytest.mark.engine
def test_an_existing_output_directory_is_refused_before_the_run_unless_forced(small_config_path, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "plot.png").write_bytes(b"an earlier run's plot")
    (out / "summary.json").write_text("{}", encoding="utf-8")
    assert run_cli("run", small_config_path, "-o", out, "-q") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {out}: exists and holds an earlier run; pass --force"), err
    assert (out / "plot.png").exists()
    # Forced, the directory is replaced as a whole: nothing of the earlier run is left.
    assert run_cli("run", small_config_path, "-o", out, "-q", "--force") == 0
    assert not (out / "plot.png").exists()
    assert raidlab.load_result(out).summary["requests_completed"] == 2000


@pytest.mark.engine
def test_warnings_decided_before_the_run_are_printed_and_saved(small_config_path, tmp_path, capsys):
    # The workload's 2000 requests at 100/s end near 20 s; a failure at 60 s stretches the run.
    assert run_cli("run", small_config_path, "-o", tmp_path / "out", "--set", "failures[0].at_s=60") == 0
    captured = capsys.readouterr()
    assert "warning: failures[0].at_s: drive 2 fails at 60 s, after the workload" in captured.err
    warnings = json.loads((tmp_path / "out" / "summary.json").read_text())["warnings"]
    assert any(w.startswith("failures[0].at_s: drive 2 fails at 60 s") for w in warnings), warnings


def test_refusals_decided_before_the_run_name_the_key(small_config_path, tmp_path, capsys):
    double = ["--set", "failures=[{drive = 2, at_s = 5.0}, {drive = 2, at_s = 9.0}]"]
    assert run_cli("run", small_config_path, "-o", tmp_path / "a", *double) == 2
    assert "error: failures[1].drive: drive 2 already fails at 5 s (failures[0])" in capsys.readouterr().err
    trace_with_mix = ["--set", "workload.trace.path=t.csv", "--set", "workload.requests=10"]
    assert run_cli("run", small_config_path, "-o", tmp_path / "b", *trace_with_mix) == 2
    assert "error: workload.read_fraction: only a synthetic workload uses it" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.engine
def test_the_summary_says_the_content_check_and_utilization_while_working(small_config_path, tmp_path, capsys):
    assert run_cli("run", small_config_path, "-o", tmp_path / "out", "--set", "content.check=true") == 0
    out = capsys.readouterr().out
    assert "content check" in out and "passed — " in out and "none stale" in out
    # Drive 2 fails at 5 s of about 20: its utilization is over those 5 s, and the table says so.
    assert "over the time it worked" in out
    result = raidlab.load_result(tmp_path / "out")
    working = cli.utilization_while_working(result)
    drives = result.drives
    failed = drives["failed_at_s"].notna()
    busy = drives["user_busy_s"] + drives["rebuild_busy_s"]
    length = result.summary["simulated_seconds"]
    assert failed.tolist() == [False, False, True, False, False]
    assert working[2] == pytest.approx(busy[2] / drives["failed_at_s"][2])
    assert working[0] == pytest.approx(busy[0] / length)


def test_a_toml_mistake_names_the_file_line_and_column(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('[array]\nlayout = "raid5"\ndrives = 5\n[workload]\nrequests = 10 x\n', encoding="utf-8")
    assert run_cli("run", path) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:5:"), err
    # The same with an override applied (the text is parsed in Python first).
    assert run_cli("run", path, "--set", "array.drives=6") == 2
    assert capsys.readouterr().err.startswith(f"error: {path}: invalid TOML")


def test_an_override_s_mistake_points_at_the_override_in_plain_words(small_config_path, tmp_path, capsys):
    assert run_cli("run", small_config_path, "-o", tmp_path / "out", "--set", "array.drives=-3") == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: array.drives: invalid value: `-3`, expected a whole number from 0 to 4294967295 "
                   "(from --set array.drives=-3)"), err
    assert "u32" not in err and "line" not in err


@pytest.mark.engine
def test_a_trace_path_given_with_set_starts_from_the_current_directory(small_config_path, tmp_path, monkeypatch):
    # The configuration lives elsewhere; the trace is named from where the command runs.
    here = tmp_path / "here"
    here.mkdir()
    (here / "t.spc").write_text("".join(f"0,{8 * i},4096,r,{i / 100}\n" for i in range(50)), encoding="utf-8")
    config = tmp_path / "configs" / "trace.toml"
    config.parent.mkdir()
    config.write_text('[array]\nlayout = "raid5"\ndrives = 5\n[workload.trace]\npath = "elsewhere.spc"\n',
                      encoding="utf-8")
    monkeypatch.chdir(here)
    assert run_cli("run", config, "-o", tmp_path / "out", "-q", "--set", "workload.trace.path=t.spc") == 0
    saved = (tmp_path / "out" / "config.toml").read_text()
    assert f'path = "{here / "t.spc"}"' in saved
    # The resolved configuration of a trace workload has no synthetic keys.
    assert "read_fraction" not in saved


@pytest.mark.engine
def test_a_trace_replay_warns_about_records_folded_onto_the_array(tmp_path, capsys):
    trace = tmp_path / "far.spc"
    # Half the records lie beyond a 5-drive ibm0661 RAID-5 (about 1.3 GB).
    trace.write_text("".join(f"0,{(i % 2) * 40_000_000_000 // 512 + 8 * i},4096,r,{i / 100}\n" for i in range(40)),
                     encoding="utf-8")
    config = tmp_path / "c.toml"
    config.write_text(f'[array]\nlayout = "raid5"\ndrives = 5\n[workload.trace]\npath = "{trace}"\n', encoding="utf-8")
    assert run_cli("run", config, "-o", tmp_path / "out", "-q") == 0
    err = capsys.readouterr().err
    assert "warning: workload.trace: 20 of 40 records read (50.00 %) lie beyond the array's" in err, err


def test_trace_info_says_which_figures_are_estimates(tmp_path, capsys):
    assert run_cli("trace", "info", TRACES / "tencent-cbs-cloud_storage-sample.bz2") == 0
    out = capsys.readouterr().out
    assert "≈" in out and "estimated" in out
    assert "note: the trace mixes more than 1024 volumes" in out
    assert "note: every timestamp is a whole second" in out
    assert run_cli("trace", "info", TRACES / "msr-cambridge1-sample.csv") == 0
    out = capsys.readouterr().out
    assert "≈" not in out and "note:" not in out


@pytest.mark.parametrize("content, line, column, byte", [
    (b"\xff\xfe[array]\n", 1, 1, "0xff"),       # UTF-16's byte-order mark
    (b"seed = 1\n# caf\xe9\n", 2, 6, "0xe9"),   # Latin-1
])
def test_a_configuration_that_is_not_utf8_exits_2_naming_the_file_line_and_column(tmp_path, capsys, content, line,
                                                                                   column, byte):
    path = tmp_path / "latin.toml"
    path.write_bytes(content)
    assert run_cli("run", path) == 2
    err = capsys.readouterr().err
    assert err == f"error: {path}:{line}: not UTF-8 text (byte {byte} at column {column})\n"


def test_a_failed_content_check_reads_as_a_sentence_and_names_only_what_failed():
    """The FAILED line said "(N stale … (0 reads))" and listed the rebuilt sectors even for
    the cache, which rebuilds none."""
    from raidlab.cli import _content_text
    text = _content_text({"stale_sectors": 8, "sectors_checked": 9240, "stale_reads": 1})
    assert text == "FAILED — 8 of 9,240 sectors read were stale, in 1 read"
    text = _content_text({"stale_sectors": 0, "sectors_checked": 10, "rebuilt_sectors_wrong": 3,
                          "rebuilt_sectors_checked": 40})
    assert text == "FAILED — 3 of 40 rebuilt sectors were wrong"


@pytest.mark.engine
def test_a_crash_is_named_with_the_requests_it_caught(tmp_path):
    """A crash of the controller (`kind = "crash"`) is a row of the run's summary: when, and
    how many requests in flight were never answered, as the core counted them."""
    config = tmp_path / "crash.toml"
    config.write_text(SMALL_CONFIG + '\n[[failures]]\nkind = "crash"\nat_s = 10.0\n', encoding="utf-8")
    result = raidlab.run(config)
    crashed = result.summary["crashed_requests"]
    assert result.summary["requests_completed"] + crashed == 2000
    assert row(printed(cli.print_summary, result), "controller crashes", "at 10 s",
               f"{crashed:,} requests in flight were never answered")
