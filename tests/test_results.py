"""raidlab.results: the Result class, run directories (save/load) and runs through the core."""

from __future__ import annotations

import array
import json
import re
import math
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import raidlab
from raidlab.exceptions import RaidlabIOError
from raidlab.results import INCOMPLETE_FILE, OPTIONAL_COLUMNS, TABLE_COLUMNS, Result

from conftest import SMALL_CONFIG, interrupt_the_second_table, synthetic_rebuild_result, synthetic_result

RUN_FILES = {"config.toml", "manifest.json", "summary.json"}
#: Requests that keep the small configuration busy for about two seconds.
LONG_RUN_REQUESTS = 1_000_000


def assert_same_result(loaded: Result, original: Result) -> None:
    assert loaded.summary == json.loads(json.dumps(original.summary))
    assert loaded.resolved_config == original.resolved_config
    assert loaded.config_hash == original.config_hash
    assert set(loaded.tables) == set(original.tables)
    for name, frame in original.tables.items():
        assert_frame_equal(loaded.tables[name], frame, check_dtype=True)


# -- without the engine: hand-built results -------------------------------------------------


def core_column(values, format: str) -> memoryview:
    """A numeric column as the binding hands it over: a memoryview of "q" or "d" over bytes."""
    return memoryview(array.array(format, values).tobytes()).cast(format)


def test_from_core_builds_dataframes_from_the_binding_output():
    output = {
        "summary": json.dumps({"seed": 7, "data_loss": True}),
        "resolved_config": "seed = 7\n",
        "config_hash": "feedface" * 4,
        "tables": {
            "drives": {
                "drive": core_column(range(3), "q"),
                "utilization": core_column([0.1, 0.2, 0.3], "d"),
                "failed_at_s": core_column([math.nan, 1.5, math.nan], "d"),
            },
            "outcomes": {"time_s": core_column([1.5], "d"), "kind": ["drive_failure"]},
        },
    }
    result = Result.from_core(output)
    assert result.seed == 7 and result.data_loss and not result.cancelled
    assert list(result.drives.columns) == ["drive", "utilization", "failed_at_s"]
    assert result.drives["drive"].dtype == np.int64 and result.drives["utilization"].dtype == np.float64
    assert result.drives["failed_at_s"].tolist()[1] == 1.5
    assert result.outcomes["kind"].tolist() == ["drive_failure"]
    # A documented table the run did not produce reads as empty, with its columns.
    assert result.timeseries.empty
    assert list(result.timeseries.columns) == TABLE_COLUMNS["timeseries"]
    with pytest.raises(KeyError):
        result.table("nonsense")


def test_save_writes_the_run_directory(tmp_path: Path, synthetic: Result):
    run_dir = synthetic.save(tmp_path / "run", overrides=["array.drives=5"],
                             command_line=["raidlab", "run", "small.toml"])
    names = {path.name for path in run_dir.iterdir()}
    assert names == RUN_FILES | {f"{table}.parquet" for table in TABLE_COLUMNS}
    assert (run_dir / "config.toml").read_text() == SMALL_CONFIG

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["raidlab_version"] == raidlab.__version__
    assert manifest["seed"] == 1
    assert manifest["config_hash"] == synthetic.config_hash
    assert manifest["command_line"] == "raidlab run small.toml"
    assert manifest["overrides"] == ["array.drives=5"]
    assert manifest["created_utc"].endswith("Z")
    assert "git_commit" in manifest  # None outside a git checkout
    assert synthetic.manifest == manifest


def _git(repo: Path, *arguments: str) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org",
                           *arguments], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize("gathered", [False, True], ids=["asked-at-save", "gathered-before"])
def test_the_manifest_records_the_checkouts_commit_and_tracked_changes(tmp_path: Path, monkeypatch, gathered):
    """The commit is git's HEAD and "dirty" means a tracked file changed (an untracked one does
    not count), whether the facts were gathered on a thread before the save or asked at it."""
    import shutil

    from raidlab import results

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "checkout"
    (repo / "raidlab").mkdir(parents=True)
    _git(repo, "init", "-q")
    monkeypatch.setattr(results, "__file__", str(repo / "raidlab" / "results.py"))
    monkeypatch.setattr(results, "_git_state_reuse_s", 0.0)

    def manifest(name: str) -> dict:
        if gathered:
            results.gather_manifest_facts()
        result = synthetic_result()
        result.save(tmp_path / name)
        return result.manifest or {}

    # No commit yet.
    assert (manifest("none")["git_commit"], manifest("none2")["git_dirty"]) == (None, False)
    (repo / "raidlab" / "module.py").write_text("x = 1\n")
    _git(repo, "add", "raidlab/module.py")
    _git(repo, "commit", "-q", "-m", "first")
    head = _git(repo, "rev-parse", "HEAD")
    clean = manifest("clean")
    assert (clean["git_commit"], clean["git_dirty"]) == (head, False)
    (repo / "untracked.txt").write_text("not part of the checkout\n")
    assert manifest("untracked")["git_dirty"] is False
    (repo / "raidlab" / "module.py").write_text("x = 2\n")
    changed = manifest("changed")
    assert (changed["git_commit"], changed["git_dirty"]) == (head, True)
    assert changed["platform"] and changed["platform"] == clean["platform"]


def test_a_process_that_reuses_the_git_state_asks_git_again_only_after_the_reuse_time(tmp_path, monkeypatch):
    """As a sweep's workers do: within the reuse time a saved run records the state read
    before, even if a tracked file changed since; after it, git is asked again."""
    import shutil

    from raidlab import results

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "checkout"
    (repo / "raidlab").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "raidlab" / "module.py").write_text("x = 1\n")
    _git(repo, "add", "raidlab/module.py")
    _git(repo, "commit", "-q", "-m", "first")
    monkeypatch.setattr(results, "__file__", str(repo / "raidlab" / "results.py"))
    monkeypatch.setattr(results, "_git_state_read", None)
    monkeypatch.setattr(results, "_git_state_reuse_s", 0.0)  # set back after the test
    results.reuse_git_state_for(10.0)
    assert results.git_state()["dirty"] is False
    (repo / "raidlab" / "module.py").write_text("x = 2\n")

    def age_the_answer_by(seconds: float) -> None:
        read_at, state = results._git_state_read
        results._git_state_read = (read_at - seconds, state)

    age_the_answer_by(9.0)
    assert results.git_state()["dirty"] is False
    age_the_answer_by(2.0)
    assert results.git_state()["dirty"] is True


def test_save_then_load_round_trips(tmp_path: Path, synthetic: Result):
    run_dir = synthetic.save(tmp_path / "run")
    loaded = raidlab.load_result(run_dir)
    assert_same_result(loaded, synthetic)
    assert loaded.manifest is not None and loaded.manifest["seed"] == 1


def test_non_finite_summary_values_are_saved_as_null(tmp_path: Path):
    result = synthetic_result()
    result.summary["response_ms"]["degraded_read"] = {"count": 0, "mean": math.nan}
    run_dir = result.save(tmp_path / "run")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["response_ms"]["degraded_read"] == {"count": 0, "mean": None}


def test_load_without_manifest_finds_the_tables(tmp_path: Path, synthetic: Result):
    run_dir = synthetic.save(tmp_path / "run")
    (run_dir / "manifest.json").unlink()
    loaded = Result.load(run_dir)
    assert set(loaded.tables) == set(TABLE_COLUMNS)
    assert loaded.manifest is None


def test_load_of_a_missing_directory_is_a_raidlab_io_error(tmp_path: Path):
    with pytest.raises(RaidlabIOError):
        Result.load(tmp_path / "nothing-here")


def test_load_of_an_incomplete_directory_names_the_missing_file(tmp_path: Path):
    (tmp_path / "run").mkdir()
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(tmp_path / "run")
    assert caught.value.filename.endswith("summary.json")


@pytest.mark.parametrize(
    "file, content",
    [
        ("timeseries.parquet", b"not parquet"),
        ("histogram.parquet", b""),
        ("summary.json", b"[1, 2]"),
        ("manifest.json", b"[]"),
        ("manifest.json", b'{"files": {"tables": ["timeseries.parquet"]}}'),
        ("manifest.json", b'{"files": {}}'),
        ("summary.json", b"\xff\xfe{}"),
        ("config.toml", b"\xff\xfe"),
    ],
)
def test_load_of_a_corrupt_file_is_a_raidlab_io_error_naming_it(
    tmp_path: Path, synthetic: Result, file: str, content: bytes
):
    run_dir = synthetic.save(tmp_path / "run")
    (run_dir / file).write_bytes(content)
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert caught.value.filename == str(run_dir / file)


@pytest.mark.parametrize(
    "field, value, named",
    [
        ("failures", "drive 2 at 5 s", "failures"),
        ("failures", {"drive": 2, "at_s": 5.0}, "failures"),
        ("failures", [5.0], "failures[0]"),
        ("failures", [{"drive": 2, "at_s": 5.0}, {"drive": 3}], "failures[1].at_s"),
        ("failures", [{"drive": 2, "at_s": "soon"}], "failures[0].at_s"),
        ("failures", [{"drive": 2, "at_s": True}], "failures[0].at_s"),
        ("failures", [{"drive": 2, "at_s": math.inf}], "failures[0].at_s"),
        ("failures", [{"drive": "two", "at_s": 5.0}], "failures[0].drive"),
        ("data_loss", "no", "data_loss"),
        ("cancelled", 1, "cancelled"),
        ("seed", "one", "seed"),
        ("config_hash", 12345, "config_hash"),
    ],
)
def test_load_of_a_malformed_summary_field_names_the_file_and_the_field(
    tmp_path: Path, synthetic: Result, field: str, value: object, named: str
):
    run_dir = synthetic.save(tmp_path / "run")
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text())
    summary[field] = value
    path.write_text(json.dumps(summary))  # json writes inf as Infinity, which json reads back
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert caught.value.filename == str(path)
    assert str(caught.value).startswith(f"{path}: {named}: "), str(caught.value)


@pytest.mark.parametrize("field", ["simulated_seconds", "requests_completed", "response_ms"])
def test_load_of_a_summary_without_a_field_every_run_has_names_it(tmp_path: Path, synthetic: Result, field: str):
    """An emptied or cut summary.json is refused, not read as a run that did nothing."""
    run_dir = synthetic.save(tmp_path / "run")
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text())
    del summary[field]
    path.write_text(json.dumps(summary))
    with pytest.raises(RaidlabIOError, match=f"^{re.escape(str(path))}: {field}: missing"):
        Result.load(run_dir)
    path.write_text("{}")
    with pytest.raises(RaidlabIOError, match="missing"):
        Result.load(run_dir)


def test_load_accepts_a_summary_without_the_optional_fields(tmp_path: Path, synthetic: Result):
    run_dir = synthetic.save(tmp_path / "run")
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text())
    for field in ("failures", "data_loss", "seed"):
        del summary[field]
    path.write_text(json.dumps(summary))
    loaded = Result.load(run_dir)
    assert loaded.seed is None and not loaded.data_loss and not loaded.cancelled


def test_load_of_a_manifest_with_a_malformed_config_hash_names_it(tmp_path: Path, synthetic: Result):
    run_dir = synthetic.save(tmp_path / "run")
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["config_hash"] = ["0123"]
    path.write_text(json.dumps(manifest))
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert str(caught.value).startswith(f"{path}: config_hash: ")


def test_load_of_a_missing_table_says_no_such_file(tmp_path: Path, synthetic: Result):
    run_dir = synthetic.save(tmp_path / "run")
    (run_dir / "histogram.parquet").unlink()
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert str(caught.value) == f"{run_dir / 'histogram.parquet'}: No such file or directory"


def test_load_of_a_table_without_its_documented_columns_names_them(tmp_path: Path, synthetic: Result):
    run_dir = synthetic.save(tmp_path / "run")
    path = run_dir / "timeseries.parquet"
    pd.read_parquet(path).rename(columns={"arrivals": "requests"}).to_parquet(path)
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert caught.value.filename == str(path)
    assert "arrivals" in str(caught.value)


@pytest.mark.parametrize("table, column", [("timeseries", "arrivals"), ("histogram", "upper_ms"),
                                           ("outcomes", "time_s")])
def test_load_of_a_table_with_text_in_a_numeric_column_names_it(
    tmp_path: Path, synthetic: Result, table: str, column: str
):
    run_dir = synthetic.save(tmp_path / "run")
    path = run_dir / f"{table}.parquet"
    frame = pd.read_parquet(path)
    frame[column] = ["many"] * len(frame)
    frame.to_parquet(path)
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert caught.value.filename == str(path)
    assert f"column {column} " in str(caught.value)


@pytest.mark.parametrize("error, raised", [(KeyboardInterrupt(), KeyboardInterrupt),
                                           (OSError(28, "No space left on device"), RaidlabIOError)])
def test_an_unfinished_save_into_a_new_directory_leaves_no_directory(
    tmp_path: Path, synthetic: Result, monkeypatch, error, raised
):
    interrupt_the_second_table(monkeypatch, error)
    with pytest.raises(raised):
        synthetic.save(tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_an_unfinished_save_over_an_earlier_run_leaves_the_earlier_run_whole(tmp_path: Path, monkeypatch):
    earlier = synthetic_result()
    run_dir = earlier.save(tmp_path / "run")
    later = synthetic_result()
    later.summary["requests_completed"] = 1
    interrupt_the_second_table(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        later.save(run_dir)
    # The later run was written beside it: the earlier one is as it was, and nothing is left over.
    assert Result.load(run_dir).summary["requests_completed"] == earlier.summary["requests_completed"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]

    monkeypatch.undo()
    later.save(run_dir)
    assert Result.load(run_dir).summary["requests_completed"] == 1


def test_a_directory_written_by_an_older_unfinished_save_is_refused_by_load(tmp_path: Path):
    run_dir = synthetic_result().save(tmp_path / "run")
    (run_dir / INCOMPLETE_FILE).write_text("raidlab began saving a run into this directory\n", encoding="utf-8")
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert caught.value.filename == str(run_dir / INCOMPLETE_FILE)
    assert "did not finish" in str(caught.value)


def test_a_save_replaces_an_earlier_run_as_a_whole(tmp_path: Path):
    """Files of an earlier run (a plot, a responses table) do not survive a later save into
    its directory: they would be read as the later run's."""
    run_dir = synthetic_result().save(tmp_path / "run")
    (run_dir / "plot.png").write_bytes(b"an earlier run's plot")
    (run_dir / "responses.parquet").write_bytes(b"an earlier run's responses")
    later = synthetic_result()
    later.summary["requests_completed"] = 7
    later.save(run_dir)
    assert not (run_dir / "plot.png").exists()
    assert not (run_dir / "responses.parquet").exists()
    assert Result.load(run_dir).summary["requests_completed"] == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_directory_that_is_not_a_run_is_refused_unless_forced(tmp_path: Path):
    other = tmp_path / "notes"
    other.mkdir()
    (other / "thesis.tex").write_text("chapter one", encoding="utf-8")
    with pytest.raises(RaidlabIOError) as caught:
        synthetic_result().save(other)
    assert caught.value.filename == str(other)
    assert "not a run directory" in str(caught.value)
    assert (other / "thesis.tex").exists()
    synthetic_result().save(other, force=True)
    assert not (other / "thesis.tex").exists()
    # An empty directory is fine.
    (tmp_path / "empty").mkdir()
    synthetic_result().save(tmp_path / "empty")


def test_the_core_s_tables_are_written_without_pandas_and_read_back_alike(tmp_path: Path):
    """A run's own tables are written by the core, from the binding's memoryviews or from
    NumPy arrays; a DataFrame through pyarrow. All read back with the same values and types."""
    import numpy as np

    def columns(column):
        return {"timeseries": {name: column([0, 1, -2, 3], "q") if name in ("arrivals", "completions")
                               else column([0.5, 1.5, float("nan"), 3.0], "d") for name in TABLE_COLUMNS["timeseries"]},
                "outcomes": {"time_s": column([1.0], "d"), "kind": ["drive_failed"], "drive": column([2], "q"),
                             "detail": ["é"]}}

    # The least summary a saved run has (the tables are what is tested).
    summary = {"config_hash": "ab" * 8, "simulated_seconds": 4.0, "requests_completed": 0, "response_ms": {}}
    loaded = {}
    for how, column in (("memoryview", core_column),
                        ("numpy", lambda values, format: np.array(values, dtype="<i8" if format == "q" else "<f8"))):
        result = Result(summary=summary, tables=columns(column), resolved_config="",
                        config_hash="ab" * 8)
        loaded[how] = Result.load(result.save(tmp_path / how))
    frames = Result(summary=summary, tables=loaded["numpy"].tables, resolved_config="",
                    config_hash="ab" * 8)
    loaded["pyarrow"] = Result.load(frames.save(tmp_path / "frames"))
    for name in ("timeseries", "outcomes"):
        pd.testing.assert_frame_equal(loaded["memoryview"].table(name), loaded["pyarrow"].table(name))
        pd.testing.assert_frame_equal(loaded["numpy"].table(name), loaded["pyarrow"].table(name))
    assert loaded["memoryview"].outcomes["detail"].tolist() == ["é"]
    assert loaded["memoryview"].timeseries["arrivals"].tolist() == [0, 1, -2, 3]
    assert loaded["memoryview"].timeseries["arrivals"].dtype == np.int64


def test_nullable_columns_read_back_value_for_value(tmp_path: Path):
    """write_parquet with nullable=True (a sweep's summary table): nulls anywhere, every kind
    read back by pyarrow with its type. (Runs of nulls across page boundaries: the core's
    unit tests.)"""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from raidlab.results import write_parquet

    columns = {
        "text": ["a", None, "é", None, None, None, "long " * 20, "", None, "z"],
        "flag": [True, False, None, True, True, True, True, True, True, None],
        "count": [None, None, None, None, 5, -(2 ** 62), 0, None, 7, 8],
        "mean": [1.5, None, 2, float("inf"), None, -0.0, None, 3.25, None, 1e300],
        "none": [None] * 10,
    }
    path = tmp_path / "nullable.parquet"
    write_parquet(path, columns, nullable=True)
    table = pq.read_table(path, page_checksum_verification=True)
    assert table.schema.types == [pa.string(), pa.bool_(), pa.int64(), pa.float64(), pa.string()]
    expected = dict(columns, mean=[None if value is None else float(value) for value in columns["mean"]])
    assert table.to_pydict() == expected
    assert [field.nullable for field in table.schema] == [True] * 5
    with pytest.raises(TypeError, match="'mixed'"):
        write_parquet(path, {"mixed": [1, "one"]}, nullable=True)


# -- rebuild onto spares: the columns and summary keys that came with it ---------------------


def test_a_run_with_a_rebuild_round_trips(tmp_path: Path):
    result = synthetic_rebuild_result()
    loaded = Result.load(result.save(tmp_path / "run"))
    assert_same_result(loaded, result)
    assert loaded.rebuilds == result.summary["rebuilds"]
    assert loaded.rebuilds[0]["ended_at_s"] == 16.25
    assert "rebuilt_fraction" in loaded.timeseries
    assert {"user_busy_s", "rebuild_busy_s", "rebuild_mb"} <= set(loaded.drives.columns)
    assert set(loaded.outcomes["kind"]) == {"drive_failed", "spare_arrived", "rebuild_started", "rebuild_complete"}


def test_an_unfinished_rebuild_with_null_times_loads(tmp_path: Path):
    result = synthetic_rebuild_result()
    result.summary["rebuilds"][0].update(outcome="running", ended_at_s=None, rebuild_time_s=None,
                                         target_write_mb_s=None)
    result.summary["rebuild_time_s"] = None
    result.summary["response_ms_by_period"]["after"] = {
        "count": 0, "mean": None, "p50": None, "p90": None, "p99": None, "starts_s": []
    }
    loaded = Result.load(result.save(tmp_path / "run"))
    assert loaded.rebuilds[0]["outcome"] == "running"
    assert loaded.summary["response_ms_by_period"]["after"]["mean"] is None


def test_an_older_run_without_the_rebuild_columns_and_keys_loads(tmp_path: Path):
    run_dir = synthetic_rebuild_result().save(tmp_path / "run")
    for table, columns in OPTIONAL_COLUMNS.items():
        path = run_dir / f"{table}.parquet"
        frame = pd.read_parquet(path)
        # The buffer cache's columns exist only in runs with a cache; this one has none.
        frame.drop(columns=[column for column in columns if column in frame]).to_parquet(path)
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text())
    for key in ("rebuilds", "rebuild_time_s", "response_ms_by_period"):
        del summary[key]
    path.write_text(json.dumps(summary))
    loaded = Result.load(run_dir)
    assert "rebuilt_fraction" not in loaded.timeseries
    assert loaded.rebuilds == []


def test_a_run_without_rebuild_has_no_rebuilds(synthetic: Result):
    assert synthetic.rebuilds == []


@pytest.mark.parametrize(
    "field, value, named",
    [
        ("rebuilds", {"member": 2}, "rebuilds"),
        ("rebuilds", [2], "rebuilds[0]"),
        ("rebuilds", [{"target_slot": 5}], "rebuilds[0].member"),
        ("rebuilds.member", "two", "rebuilds[0].member"),
        ("rebuilds.target_slot", 5.5, "rebuilds[0].target_slot"),
        ("rebuilds.started_at_s", None, "rebuilds[0].started_at_s"),
        ("rebuilds.failed_at_s", "soon", "rebuilds[0].failed_at_s"),
        ("rebuilds.ended_at_s", "later", "rebuilds[0].ended_at_s"),
        ("rebuilds.rebuild_time_s", True, "rebuilds[0].rebuild_time_s"),
        ("rebuilds.outcome", 1, "rebuilds[0].outcome"),
        ("rebuilds.units_by_executor", -3, "rebuilds[0].units_by_executor"),
        ("rebuilds.units", 9.5, "rebuilds[0].units"),
        ("rebuild_time_s", "long", "rebuild_time_s"),
        ("response_ms_by_period", [1, 2], "response_ms_by_period"),
        ("response_ms_by_period.degraded", 5, "response_ms_by_period.degraded"),
        ("response_ms_by_period.degraded.count", "many", "response_ms_by_period.degraded.count"),
        ("response_ms_by_period.after.mean", "fast", "response_ms_by_period.after.mean"),
        ("response_ms_by_period.normal.starts_s", [0.0, "then"], "response_ms_by_period.normal.starts_s"),
    ],
)
def test_load_of_a_malformed_rebuild_field_names_the_file_and_the_field(
    tmp_path: Path, field: str, value: object, named: str
):
    run_dir = synthetic_rebuild_result().save(tmp_path / "run")
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text())
    head, *rest = field.split(".")
    if not rest:
        summary[head] = value
    elif head == "rebuilds":
        summary["rebuilds"][0][rest[0]] = value
    elif len(rest) == 1:
        summary[head][rest[0]] = value
    else:
        summary[head][rest[0]][rest[1]] = value
    path.write_text(json.dumps(summary))
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert caught.value.filename == str(path)
    assert str(caught.value).startswith(f"{path}: {named}: "), str(caught.value)


@pytest.mark.parametrize("table, column", [("timeseries", "rebuilt_fraction"), ("drives", "rebuild_busy_s")])
def test_load_of_text_in_an_optional_numeric_column_names_it(tmp_path: Path, table: str, column: str):
    run_dir = synthetic_rebuild_result().save(tmp_path / "run")
    path = run_dir / f"{table}.parquet"
    frame = pd.read_parquet(path)
    frame[column] = ["some"] * len(frame)
    frame.to_parquet(path)
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert caught.value.filename == str(path)
    assert f"column {column} " in str(caught.value)


# -- with the engine: real runs --------------------------------------------------------------


@pytest.mark.engine
def test_a_real_run_has_the_documented_summary_and_tables(engine_result: Result):
    summary = engine_result.summary
    assert summary["seed"] == 1
    assert summary["requests_completed"] == 2000
    assert summary["failures"] == [{"drive": 2, "at_s": 5.0, "held": "member 2"}]
    for name in ("all", "read", "write", "degraded_read", "failed_set_read"):
        assert set(summary["response_ms"][name]) >= {"count", "mean", "p50", "p90", "p99", "max"}
    assert summary["response_ms"]["all"]["count"] == 2000
    for name, columns in TABLE_COLUMNS.items():
        assert set(columns) <= set(engine_result.table(name).columns), name
    drives = engine_result.drives
    assert len(drives) == 5
    assert drives.loc[drives["drive"] == 2, "failed_at_s"].item() == 5.0
    assert set(engine_result.histogram["class"]) == {"all", "read", "write", "degraded_read", "failed_set_read"}


@pytest.mark.engine
def test_the_binding_hands_numeric_columns_over_as_typed_memoryviews():
    """Integers as "q", floats as "d", text as lists; the same values the DataFrame shows."""
    from raidlab import _core

    output = _core.run(SMALL_CONFIG, ".")
    kinds = set()
    for name, columns in output["tables"].items():
        frame = pd.DataFrame(columns)
        for column, values in columns.items():
            if isinstance(values, list):
                assert all(isinstance(value, str) for value in values), (name, column)
                kinds.add("text")
                continue
            assert isinstance(values, memoryview) and values.readonly, (name, column)
            assert values.format in ("q", "d") and values.itemsize == 8, (name, column, values.format)
            assert frame[column].dtype == (np.int64 if values.format == "q" else np.float64)
            np.testing.assert_array_equal(frame[column].to_numpy(), np.asarray(values))
            kinds.add(values.format)
    assert kinds == {"q", "d", "text"}
    drives = output["tables"]["drives"]
    assert drives["drive"].tolist() == [0, 1, 2, 3, 4]
    assert drives["failed_at_s"].tolist()[2] == 5.0


@pytest.mark.engine
def test_a_real_run_round_trips_through_its_run_directory(engine_run_dir: Path, engine_result: Result):
    assert_same_result(Result.load(engine_run_dir), engine_result)


@pytest.mark.engine
def test_same_config_and_seed_give_identical_results(engine_result: Result):
    again = raidlab.run(SMALL_CONFIG)
    assert again.summary == engine_result.summary
    for name, frame in engine_result.tables.items():
        assert_frame_equal(again.tables[name], frame)


@pytest.mark.engine
def test_progress_is_reported():
    calls = []

    def progress(fraction: float, completed: int) -> bool:
        calls.append((fraction, completed))
        return True

    # The core reports every ~100 ms of wall time and once at the end.
    raidlab.run(SMALL_CONFIG, overrides=["workload.requests=200000"], progress=progress)
    assert calls[-1] == (1.0, 200000)
    fractions = [fraction for fraction, _ in calls]
    assert fractions == sorted(fractions) and 0.0 <= fractions[0]


@pytest.mark.engine
def test_returning_false_from_progress_cancels_the_run():
    # Long enough (~2 s uncancelled) for the core to ask at least once.
    cancelled = raidlab.run(SMALL_CONFIG, overrides=[f"workload.requests={LONG_RUN_REQUESTS}"],
                            progress=lambda fraction, completed: False)
    assert cancelled.cancelled
    assert cancelled.summary["requests_completed"] < LONG_RUN_REQUESTS


@pytest.mark.engine
def test_the_gil_is_released_while_the_simulation_runs():
    stop = threading.Event()
    outcome = {}

    def simulate() -> None:
        outcome["result"] = raidlab.run(
            SMALL_CONFIG, overrides=[f"workload.requests={LONG_RUN_REQUESTS}"],
            progress=lambda fraction, completed: not stop.is_set(),
        )

    worker = threading.Thread(target=simulate)
    worker.start()
    time.sleep(0.05)  # let the worker get into the core
    longest_gap = 0.0
    last = started = time.monotonic()
    while last - started < 0.3:
        now = time.monotonic()
        longest_gap = max(longest_gap, now - last)
        last = now
    overlapped = worker.is_alive()
    stop.set()
    worker.join()
    assert overlapped, "the run ended before the measurement; make it longer"
    # Holding the GIL would have frozen this loop for the whole run (seconds).
    assert longest_gap < 0.1
    assert outcome["result"].cancelled


@pytest.mark.engine
def test_an_exception_in_the_progress_callback_stops_the_run_and_propagates():
    class Stop(Exception):
        pass

    def progress(fraction: float, completed: int) -> bool:
        raise Stop()

    with pytest.raises(Stop):
        raidlab.run(SMALL_CONFIG, overrides=["workload.requests=20000"], progress=progress)


# -- summary fields of the wrong type are refused, naming the field -----------------------------


@pytest.mark.parametrize("field, value, named", [
    ("simulated_seconds", "long", "simulated_seconds"),
    ("requests_completed", -1, "requests_completed"),
    ("requests_completed", 2.5, "requests_completed"),
    ("response_ms", [], "response_ms"),
    ("response_ms", {"read": {"count": 3, "mean": "fast"}}, "response_ms.read.mean"),
    ("response_ms", {"read": {"count": "three"}}, "response_ms.read.count"),
    ("drives", {"mean_utilization": "high"}, "drives.mean_utilization"),
    ("warnings", "one", "warnings"),
    ("warnings", [1, 2], "warnings"),
    ("content", {"stale_sectors": -4}, "content.stale_sectors"),
    ("lost_requests", True, "lost_requests"),
    ("crashed_requests", -2, "crashed_requests"),
    ("crashes_at_s", ["noon"], "crashes_at_s"),
])
def test_load_refuses_summary_fields_of_the_wrong_type(tmp_path: Path, field, value, named):
    """docs/architecture.md: loading refuses a summary whose fields do not have the types the
    core writes, naming the file and the field (these were read as they were, to fail later
    in whatever used them)."""
    run_dir = synthetic_result().save(tmp_path / "run")
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text())
    summary[field] = value
    path.write_text(json.dumps(summary))
    with pytest.raises(RaidlabIOError) as caught:
        Result.load(run_dir)
    assert caught.value.filename == str(path)
    assert str(caught.value).split(": ")[1] == named, str(caught.value)


@pytest.mark.parametrize("writer", ["raidlab", "pyarrow"])
def test_a_damaged_page_of_a_table_is_an_error_not_wrong_values(tmp_path: Path, writer: str):
    """Each page carries its CRC-32 and the readers verify it: bytes changed inside a page's
    values (which still parse) are an error naming the file."""
    import struct

    import pyarrow as pa
    import pyarrow.parquet as pq

    from raidlab.results import _read_table, write_parquet

    path = tmp_path / "timeseries.parquet"
    values = np.arange(1000, dtype="<f8") + 0.25
    if writer == "raidlab":
        write_parquet(path, {"value": values})
    else:
        pq.write_table(pa.table({"value": values}), path, write_page_checksum=True, compression="none")
    assert _read_table("custom", path)["value"].tolist() == values.tolist()
    data = bytearray(path.read_bytes())
    where = data.index(struct.pack("<d", values[500]))
    data[where:where + 8] = struct.pack("<d", -1.0)
    path.write_bytes(bytes(data))
    assert pd.read_parquet(path)["value"].iloc[500] == -1.0  # unverified, the damage reads as a value
    with pytest.raises(RaidlabIOError) as caught:
        _read_table("custom", path)
    assert caught.value.filename == str(path)


def test_failures_come_in_time_order_with_what_each_slot_held():
    result = synthetic_result()
    result.summary.update(drives_in_array=5, failures=[{"drive": 5, "at_s": 40.0}, {"drive": 2, "at_s": 5.0}],
                          rebuilds=[{"member": 2, "target_slot": 5, "failed_at_s": 5.0, "started_at_s": 5.0,
                                     "ended_at_s": 20.0, "outcome": "complete"}])
    assert [(f["drive"], f["at_s"], f["holds"], f["member"]) for f in result.failures] == [
        (2, 5.0, "member", 2), (5, 40.0, "member in spare slot", 2)]
    # A failure of slot 5 before the rebuild onto it ended: the rebuild's target.
    result.summary["failures"][0]["at_s"] = 12.0
    assert result.failures[1]["holds"] == "rebuild target"
