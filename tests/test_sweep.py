"""Sweeps (raidlab.experiments.sweep, raidlab.results.store): specification checks with
file:line and key, expansion, content-addressed run ids, the local pool against a Dask
LocalCluster, resuming a killed sweep, failed runs recorded while the others go on, and the
``raidlab sweep`` command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from raidlab.results import store
from raidlab.exceptions import ConfigError
from raidlab.cli import main
from raidlab.sweep import SweepSpecError, expand_sweep, extension_digest, load_sweep_spec, run_id, run_sweep

REPO_ROOT = Path(__file__).resolve().parent.parent

#: A small RAID-5 with a hot spare whose drive 2 fails at 2 s: runs of a fraction of a second.
BASE = """\
seed = 1

[array]
layout = "raid5"
drives = 5
stripe_unit_kib = 16
spares = 1

[drive]
preset = "ibm0661"

[workload]
requests = 600
read_fraction = 0.7
size_kib = 4

[workload.arrival]
process = "poisson"
rate_per_s = 60.0

[[failures]]
drive = 2
at_s = 2.0

[rebuild]
discipline = "vsm"
"""

#: 4 x 2 cases, 3 seeds: the 24-run sweep of the issue.
SPEC_24 = """\
base = "base.toml"
seeds = 3

[grid]
array.drives = [4, 5, 6, 7]
rebuild.discipline = ["vsm", "pcm"]
"""


def write(directory: Path, spec: str, base: str = BASE, name: str = "spec.toml") -> Path:
    (directory / "base.toml").write_text(base, encoding="utf-8")
    path = directory / name
    path.write_text(spec, encoding="utf-8")
    return path


def spec_error(tmp_path: Path, spec: str) -> SweepSpecError:
    path = write(tmp_path, spec)
    with pytest.raises(SweepSpecError) as caught:
        expand_sweep(load_sweep_spec(path), tmp_path / "out")
    return caught.value


# -- bad specifications -----------------------------------------------------------------------


@pytest.mark.parametrize("spec, key, line, words", [
    ('base = "base.toml"\nsedes = 5\n', "sedes", 2, "unknown key"),
    ('base = "base.toml"\n\n[grid]\narray.drives = []\n', "grid.array.drives", 4, "empty axis"),
    ('base = "base.toml"\n[[zip]]\n"rebuild.discipline" = []\n', "zip[0].rebuild.discipline", 3, "empty axis"),
    ('base = "base.toml"\n[grid]\narray.drives = [5, "seven"]\n', "grid.array.drives", 3, "type mismatch"),
    ('base = "base.toml"\n[[points]]\narray.drives = 5\n[[points]]\narray.drives = true\n', "points.array.drives",
     3, "type mismatch"),
    ('base = "base.toml"\n\n[[zip]]\narray.drives = [5, 6]\nrebuild.discipline = ["vsm"]\n', "zip[0]", 3,
     "same length: array.drives has 2, rebuild.discipline has 1"),
    ('base = "base.toml"\nseeds = 0\n', "seeds", 2, "at least 1 seed"),
    # Bounded before anything expands: a billion seeds, or axes whose product is too large,
    # are refused at once, not planned until memory runs out.
    ('base = "base.toml"\nseeds = 1000000000\n', "seeds", 2, "at most 100,000 seeds"),
    ('base = "base.toml"\nseeds = 1000\n[grid]\narray.drives = [5, 6]\n"rebuild.unit.sectors" = ' + str(list(range(1, 501)))
     + '\n', "grid.rebuild.unit.sectors", 5, "more than 100,000 runs"),
    # summary.parquet's seed column is a signed 64-bit integer.
    ('base = "base.toml"\nseeds = [1, 18446744073709551615]\n', "seeds", 2, "from 0 to 9223372036854775807"),
    ('base = "missing.toml"\n', "base", 1, "does not exist"),
    ('base = "base.toml"\n[grid]\narray.drives = 5\n', "grid.array.drives", 3, "expected a list"),
    ('base = "base.toml"\n[set]\narray.drives = 5\n[grid]\narray.drives = [5, 6]\n', "grid.array.drives", 5,
     "both fixed"),
])
def test_a_bad_specification_names_the_file_line_and_key(tmp_path, spec, key, line, words):
    error = spec_error(tmp_path, spec)
    assert error.key == key
    assert error.line == line
    assert words in str(error)
    assert str(error).startswith(f"{tmp_path / 'spec.toml'}:{line}: {key}: ")


def test_a_specification_or_base_that_is_not_utf8_names_its_file_and_line(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_bytes(b'base = "base.toml"\n# caf\xe9\n')
    with pytest.raises(SweepSpecError) as caught:
        load_sweep_spec(path)
    assert str(caught.value) == f"{path}:2: not UTF-8 text (byte 0xe9 at column 6)"
    write(tmp_path, 'base = "base.toml"\n')
    (tmp_path / "base.toml").write_bytes(b"seed = 1\n\xff\n")
    with pytest.raises(ConfigError, match=r"base.toml:2: not UTF-8 text \(byte 0xff at column 1\)"):
        expand_sweep(load_sweep_spec(tmp_path / "spec.toml"), tmp_path / "out")


@pytest.mark.parametrize("spec, key, line, words", [
    # An unknown configuration key, and a value of the wrong type for the key: the core says
    # so, and the error points at the specification's line that set it.
    ('base = "base.toml"\n\n[grid]\narray.drivez = [5, 6]\n', "grid.array.drivez", 4, "unknown field `drivez`"),
    ('base = "base.toml"\n[grid]\n"array.drives" = ["five", "six"]\n', "grid.array.drives", 3,
     'invalid type: string "five"'),
    ('base = "base.toml"\n[[points]]\narray.drives = 6\n[[points]]\nrebuild.discipline = "nope"\n',
     "points.rebuild.discipline", 5, 'unknown discipline "nope"'),
    ('base = "base.toml"\n[set]\nworkload.requests = -5\n', "set.workload.requests", 3, "invalid value"),
    # A value where a table is expected: what the key accepts, not the core's type name
    # (serde's "expected struct RebuildUnitConfig").
    ('base = "base.toml"\n[grid]\n"rebuild.unit" = [7, 8]\n', "grid.rebuild.unit", 3,
     "expected a table: `{ tracks = 1 }` (the default), `{ sectors = 2048 }` or `{ cylinders = 1 }`"),
])
def test_values_the_core_rejects_name_the_specification_key(tmp_path, spec, key, line, words):
    error = spec_error(tmp_path, spec)
    assert (error.key, error.line) == (key, line)
    assert words in str(error)
    assert "TOML parse error" not in str(error)  # not the excerpt of the generated configuration
    assert "struct" not in str(error) and "Config" not in str(error)  # no Rust type names


def test_the_command_reports_a_bad_specification_with_status_2(tmp_path, capsys):
    path = write(tmp_path, 'base = "base.toml"\n[grid]\narray.drives = [5, "seven"]\n')
    assert main(["sweep", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"error: {path}:3: grid.array.drives: type mismatch" in err
    assert not (tmp_path / "out").exists()  # nothing ran, nothing written


# -- expansion --------------------------------------------------------------------------------


def test_grid_zip_and_points_cross_in_file_order_with_seeds_innermost(tmp_path):
    path = write(tmp_path, """\
base = "base.toml"
seeds = [7, 8]

[grid]
array.drives = [5, 6]

[[zip]]
rebuild.buffer_units = [4, 16, 64]
"rebuild.unit" = [{ tracks = 4 }, { tracks = 2 }, { tracks = 1 }]

[[points]]
rebuild.discipline = "vsm"
[[points]]
rebuild.discipline = "pcm"
"workload.arrival.rate_per_s" = 40.0
""")
    spec = load_sweep_spec(path)
    assert [axis.kind for axis in spec.axes] == ["grid", "zip", "points"]
    assert spec.axis_keys == ["array.drives", "rebuild.buffer_units", "rebuild.unit", "rebuild.discipline",
                              "workload.arrival.rate_per_s"]
    plan = expand_sweep(spec, tmp_path / "out")
    assert len(plan.rows) == 2 * 3 * 2 * 2
    first = plan.rows[0]
    assert (first["case"], first["seed"]) == (0, 7)
    assert first["values"] == {"array.drives": 5, "rebuild.buffer_units": 4, "rebuild.unit": {"tracks": 4},
                               "rebuild.discipline": "vsm"}
    assert [row["seed"] for row in plan.rows[:4]] == [7, 8, 7, 8]
    # The last axis varies fastest; zipped keys move together.
    assert [(row["values"]["rebuild.buffer_units"], row["values"]["rebuild.discipline"]) for row in plan.rows[:8:2]] \
        == [(4, "vsm"), (4, "pcm"), (16, "vsm"), (16, "pcm")]
    assert plan.rows[-1]["values"]["array.drives"] == 6
    assert len({row["run_id"] for row in plan.rows}) == len(plan.rows) == len(plan.tasks)
    # The second point's rate reaches its runs only.
    task = next(t for t in plan.tasks if t.run_id == plan.rows[2]["run_id"])
    assert "rate_per_s = 40.0" in task.config and "seed = 7" in task.config


def test_runs_that_resolve_alike_are_one_run(tmp_path):
    # vsm is the base's discipline: the point that names it is the base itself.
    path = write(tmp_path, 'base = "base.toml"\nseeds = 2\n[[points]]\nrebuild.discipline = "vsm"\n'
                           '[[points]]\narray.drives = 5\n')
    plan = expand_sweep(load_sweep_spec(path), tmp_path / "out")
    assert len(plan.rows) == 4
    assert [row["run_id"] for row in plan.rows[:2]] == [row["run_id"] for row in plan.rows[2:]]
    assert len(plan.tasks) == 2


def test_without_seeds_each_case_runs_once_with_the_bases_seed(tmp_path):
    path = write(tmp_path, 'base = "base.toml"\n[grid]\narray.drives = [5, 6]\n')
    plan = expand_sweep(load_sweep_spec(path), tmp_path / "out")
    assert [row["seed"] for row in plan.rows] == [1, 1]


def test_run_ids_change_with_the_configuration_the_directory_and_the_code():
    config = "seed = 1\n[array]\ndrives = 5\n"
    same = run_id(config, "/a", "0.1.0+aaaa")
    assert same == run_id(config, "/a", "0.1.0+aaaa")
    assert same != run_id(config.replace("seed = 1", "seed = 2"), "/a", "0.1.0+aaaa")
    assert same != run_id(config, "/b", "0.1.0+aaaa")
    assert same != run_id(config, "/a", "0.1.0+bbbb")


# -- running ----------------------------------------------------------------------------------


def _same_build(before: str) -> None:
    if extension_digest() != before:
        pytest.skip("the extension was rebuilt while the test ran, which changes every run id")


@pytest.mark.engine
def test_a_24_run_sweep_gives_the_same_table_on_the_local_pool_and_on_dask(tmp_path):
    distributed = pytest.importorskip("distributed")
    build = extension_digest()
    spec = write(tmp_path, SPEC_24)
    local = run_sweep(spec, tmp_path / "local", jobs=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_dask = run_sweep(spec, tmp_path / "dask", client=client)
    _same_build(build)
    assert (local.ran, on_dask.ran, local.failed, on_dask.failed) == (24, 24, 0, 0)
    assert on_dask.executor.startswith("dask tcp://")
    a = pq.read_table(tmp_path / "local" / store.SUMMARY_FILE)
    b = pq.read_table(tmp_path / "dask" / store.SUMMARY_FILE)
    assert a.num_rows == 24 and a.equals(b)
    assert (tmp_path / "local" / store.SUMMARY_FILE).read_bytes() == (tmp_path / "dask" / store.SUMMARY_FILE).read_bytes()
    table = a.to_pandas()
    assert (table["status"] == "done").all()
    seeds = table.groupby(["array.drives", "rebuild.discipline"])["seed"].apply(sorted)
    assert len(seeds) == 8 and all(list(value) == [1, 2, 3] for value in seeds)
    # Each row is its run directory's summary, flattened.
    row = table.iloc[5]
    summary = json.loads((tmp_path / "dask" / store.RUNS_DIR / row["run_id"] / "summary.json").read_text())
    assert row["response_ms.read.p99"] == summary["response_ms"]["read"]["p99"]
    assert row["rebuild.outcome"] == summary["rebuilds"][0]["outcome"]
    assert row["array.drives"] == json.loads(json.dumps(summary["drives_in_array"]))


@pytest.mark.engine
def test_the_summary_is_plain_parquet_that_other_readers_open(tmp_path):
    spec = write(tmp_path, 'base = "base.toml"\nseeds = 2\n[grid]\narray.drives = [5, 6]\n')
    outcome = run_sweep(spec, tmp_path / "out", jobs=1)
    path = outcome.summary_path
    schema = pq.read_schema(path)
    import pyarrow as pa

    for field in schema:
        assert field.type in (pa.int64(), pa.float64(), pa.bool_(), pa.string(), pa.large_string()), field
    assert "__index_level_0__" not in schema.names
    assert pd.read_parquet(path).shape == (4, len(schema.names))
    polars = pytest.importorskip("polars", reason="polars is not installed (optional: reads the table as is)")
    assert polars.read_parquet(path).shape == (4, len(schema.names))


def test_the_summary_written_without_pandas_reads_back_as_the_pandas_table(tmp_path):
    """summary_columns written by the core (what a sweep writes) against
    summary_frame (its DataFrame): the same columns and values; a missing value (None or NaN)
    is null, a column of only missing values is text, integers with a missing value stay
    integers in the file, and pandas is not imported to write it."""
    import math

    import pyarrow as pa

    rows = [
        {"run_id": "a", "status": "done", "case": 0, "array.drives": 5, "seed": 1, "x.mean": 1.5, "n": 3,
         "flag": True, "note": None, "gone": math.nan},
        {"run_id": "b", "status": "failed", "case": 1, "array.drives": 6, "seed": 1, "error_type": "ConfigError",
         "error": "bad"},
        {"run_id": "c", "status": "done", "case": 2, "array.drives": 7, "seed": 2, "x.mean": math.nan, "n": 4,
         "flag": False, "note": None, "gone": None},
    ]
    table = store.summary_columns(rows, ["array.drives"])
    frame = store.summary_frame(rows, ["array.drives"])
    assert list(table) == list(frame.columns)
    assert list(table)[:5] == ["run_id", "status", "case", "array.drives", "seed"]
    path = store.write_summary(tmp_path / store.SUMMARY_FILE, table)
    schema = pq.read_schema(path)
    assert pq.read_table(path).num_rows == 3
    assert schema.field("n").type == pa.int64() and schema.field("x.mean").type == pa.float64()
    assert schema.field("flag").type == pa.bool_()
    assert schema.field("note").type == pa.string() and schema.field("gone").type == pa.string()
    back = pq.read_table(path).to_pylist()
    assert back[1]["n"] is None and back[2]["x.mean"] is None and back[0]["gone"] is None
    assert [row["n"] for row in back] == [3, None, 4] and back[1]["error"] == "bad"
    pd.testing.assert_frame_equal(pd.read_parquet(path), frame, check_dtype=False)
    code = ("import sys\nfrom raidlab.results import store\n"
            f"store.write_summary({str(tmp_path / 'again.parquet')!r}, store.summary_columns({rows!r}, ['array.drives']))\n"
            "print('pandas' in sys.modules, 'pyarrow' in sys.modules)")
    completed = subprocess.run([sys.executable, "-c", code.replace("nan", "float('nan')")], capture_output=True,
                               text=True, timeout=60)
    assert completed.stdout.split() == ["False", "False"], completed.stderr
    assert (tmp_path / "again.parquet").read_bytes() == path.read_bytes()


def test_the_workers_start_while_the_runs_are_resolved_and_stop_when_the_plan_fails(tmp_path, monkeypatch):
    """The local pool starts its workers before the configurations are resolved, no more of
    them than the specification has runs; a plan the core rejects leaves none running."""
    import multiprocessing

    from raidlab.experiments import sweep

    running_at_planning = []
    plan = sweep.expand_sweep

    def counting(*args, **kwargs):
        running_at_planning.append(len(multiprocessing.active_children()))
        return plan(*args, **kwargs)

    monkeypatch.setattr(sweep, "expand_sweep", counting)
    one_run = write(tmp_path, 'base = "base.toml"\n[set]\nworkload.requests = 50\n')
    assert run_sweep(one_run, tmp_path / "one", jobs=2).ran == 1
    bad = write(tmp_path, 'base = "base.toml"\nseeds = 2\n[grid]\narray.drivez = [5, 6]\n', name="bad.toml")
    with pytest.raises(SweepSpecError):
        run_sweep(bad, tmp_path / "bad", jobs=2)
    assert running_at_planning == [1, 2]
    assert multiprocessing.active_children() == []


@pytest.mark.engine
def test_a_second_run_skips_every_finished_run(tmp_path):
    spec = write(tmp_path, 'base = "base.toml"\nseeds = 2\n[grid]\narray.drives = [5, 6]\n')
    build = extension_digest()
    first = run_sweep(spec, tmp_path / "out", jobs=2)
    manifests = {p: p.read_text() for p in (tmp_path / "out" / store.RUNS_DIR).glob("*/manifest.json")}
    again = run_sweep(spec, tmp_path / "out", jobs=2)
    _same_build(build)
    assert (first.ran, first.skipped, again.ran, again.skipped) == (4, 0, 0, 4)
    assert {p: p.read_text() for p in manifests} == manifests  # not rewritten
    pd.testing.assert_frame_equal(first.table, again.table)
    # A new seed only runs the new runs.
    spec.write_text(spec.read_text().replace("seeds = 2", "seeds = 3"))
    third = run_sweep(spec, tmp_path / "out", jobs=2)
    _same_build(build)
    assert (third.ran, third.skipped) == (2, 4)


def _complete(directory: Path) -> set:
    """The run ids with a complete run directory (not a save's temporary directory)."""
    import re

    runs = directory / store.RUNS_DIR
    if not runs.is_dir():
        return set()
    return {p.name for p in runs.iterdir() if re.fullmatch(r"[0-9a-f]{20}", p.name) and store.is_complete_run(p)}


@pytest.mark.engine
def test_a_killed_sweep_runs_only_the_missing_runs_when_started_again(tmp_path):
    spec = write(tmp_path, 'base = "base.toml"\nseeds = 6\n[grid]\narray.drives = [5, 6]\n'
                           '[set]\nworkload.requests = 1500\n')
    out = tmp_path / "out"
    build = extension_digest()
    process = subprocess.Popen([sys.executable, "-m", "raidlab", "sweep", str(spec), "-o", str(out), "--jobs", "1",
                                "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while len(_complete(out)) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)  # the whole sweep, workers included, without warning
    process.communicate(timeout=30)
    finished = _complete(out)
    assert 3 <= len(finished) < 12, "the sweep ended before it could be killed halfway: make its runs longer"
    assert (out / store.LOCK_FILE).exists()  # left behind by the killed sweep
    resumed = run_sweep(spec, out, jobs=2)
    _same_build(build)
    assert resumed.skipped == len(finished)
    assert resumed.ran == 12 - len(finished)
    assert (resumed.table["status"] == "done").all() and len(resumed.table) == 12
    assert _complete(out) == set(resumed.table["run_id"])
    assert not (out / store.LOCK_FILE).exists()


@pytest.mark.engine
def test_a_failed_run_is_recorded_and_the_others_go_on(tmp_path):
    lines = [f"0,{i * 8},4096,r,{i * 0.01:.3f}" for i in range(300)]
    (tmp_path / "good.spc").write_text("\n".join(lines) + "\n")
    lines[200] = "0,oops,4096,r,2.0"
    (tmp_path / "bad.spc").write_text("\n".join(lines) + "\n")
    base = ('seed = 1\n[array]\nlayout = "raid5"\ndrives = 5\nstripe_unit_kib = 16\n[drive]\npreset = "ibm0661"\n'
            '[workload.trace]\npath = "good.spc"\nformat = "spc"\n')
    spec = write(tmp_path, 'base = "base.toml"\n[grid]\n"workload.trace.path" = ["good.spc", "bad.spc"]\n'
                           'array.drives = [4, 5]\n', base=base)
    outcome = run_sweep(spec, tmp_path / "out", jobs=2)
    table = outcome.table
    assert (outcome.ran, outcome.failed) == (2, 2)
    failed = table[table["status"] == "failed"]
    assert set(failed["workload.trace.path"]) == {"bad.spc"}
    assert set(failed["error_type"]) == {"TraceError"}
    assert failed["error"].str.contains("bad.spc:201: bad LBA").all()
    assert table.loc[table["status"] == "done", "requests_completed"].eq(300).all()
    record = store.read_error(tmp_path / "out" / store.RUNS_DIR / failed["run_id"].iloc[0])
    assert record["error_type"] == "TraceError" and any("bad.spc" in o for o in record["overrides"])
    # Failed runs are tried again; finished ones are not.
    again = run_sweep(spec, tmp_path / "out", jobs=2)
    assert (again.ran, again.skipped, again.failed) == (0, 2, 2)


@pytest.mark.engine
def test_a_worker_that_dies_fails_its_run_only(tmp_path):
    import sweep_workers

    spec = write(tmp_path, 'base = "base.toml"\nseeds = 3\n[grid]\narray.drives = [5, 6]\n')
    outcome = run_sweep(spec, tmp_path / "out", jobs=2, run_function=sweep_workers.die_on_seed_2)
    table = outcome.table
    assert (outcome.ran, outcome.failed) == (4, 2)
    assert set(table.loc[table["status"] == "failed", "seed"]) == {2}
    assert set(table.loc[table["status"] == "failed", "error_type"]) == {"WorkerDied"}
    assert set(table.loc[table["status"] == "done", "seed"]) == {1, 3}


#: Points that set `failures` (an array of tables), and one that keeps the base's, 2 seeds.
SPEC_POINTS_FAILURES = """\
base = "base.toml"
seeds = 2

[[points]]
failures = [{ drive = 1, at_s = 1.0 }]

[[points]]
array.drives = 6
failures = [{ drive = 2, at_s = 1.5 }, { drive = 3, at_s = 3.0 }]

[[points]]
array.drives = 4
"""


@pytest.mark.engine
def test_a_points_axis_that_sets_failures_is_stored_as_toml_text_beside_the_runs_count(tmp_path):
    """The axis `failures` and the run's metric `failures` (its count of failures) shared a
    column: the finished rows got the count, the failed ones the TOML text, and writing
    summary.parquet raised "column 'failures' mixes kinds of values". The axis keeps its
    column, as TOML text that parses back to the point's value; the count is `run.failures`."""
    import sweep_workers

    from raidlab.config import parse_toml

    spec = write(tmp_path, SPEC_POINTS_FAILURES)
    outcome = run_sweep(spec, tmp_path / "out", jobs=2, run_function=sweep_workers.die_on_seed_2)
    assert (outcome.ran, outcome.failed) == (3, 3)
    table = store.read_summary(tmp_path / "out")
    assert list(table["status"]) == ["done", "failed"] * 3
    one, two = [{"drive": 1, "at_s": 1.0}], [{"drive": 2, "at_s": 1.5}, {"drive": 3, "at_s": 3.0}]
    assert [None if pd.isna(text) else parse_toml("v = " + text)["v"] for text in table["failures"]] == \
        [one, one, two, two, None, None]
    # The runs' own count: the point's failures, or the base's one; none for a failed run.
    assert table["run.failures"].tolist()[::2] == [1, 2, 1]
    assert table["run.failures"].isna().tolist() == [False, True] * 3
    schema = pq.read_schema(tmp_path / "out" / store.SUMMARY_FILE)
    assert (str(schema.field("failures").type), str(schema.field("run.failures").type)) == ("string", "int64")
    assert outcome.table["failures"].tolist() == table["failures"].tolist()  # the same table in memory


@pytest.mark.engine
def test_a_metric_beside_an_axis_of_its_name_is_plotted_under_its_column(tmp_path):
    """`[[plots]]` may name `run.failures` where an axis sets `failures`, and not elsewhere."""
    from raidlab.sweep import check_plot_metrics

    plot = '\n[[plots]]\nx = "array.drives"\nmetrics = ["run.failures"]\n'
    check_plot_metrics(load_sweep_spec(write(tmp_path, SPEC_POINTS_FAILURES + plot)))
    with pytest.raises(SweepSpecError, match="no metric 'run.failures'"):
        check_plot_metrics(load_sweep_spec(write(tmp_path, SPEC_24 + plot, name="grid.toml")))
    spec = write(tmp_path, SPEC_POINTS_FAILURES.replace("seeds = 2", "seeds = 1") + plot, name="plotted.toml")
    outcome = run_sweep(spec, tmp_path / "out", jobs=2)
    assert sorted(path.name for path in outcome.plots) == ["run.failures-vs-array.drives.png",
                                                           "run.failures-vs-array.drives.svg"]


# -- the commands -----------------------------------------------------------------------------


@pytest.mark.engine
def test_sweep_summary_and_plot_commands(tmp_path, capsys):
    spec = write(tmp_path, """\
base = "base.toml"
seeds = 2

[grid]
array.drives = [5, 6]
rebuild.discipline = ["vsm", "pcm"]

[[plots]]
x = "array.drives"
series = "rebuild.discipline"
metrics = ["response_ms.all.mean", "rebuild_time_s"]
""")
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "-o", str(out), "--jobs", "2", "--set", "workload.requests=300"]) == 0
    printed = capsys.readouterr().out
    assert "8 run(s) for 8 row(s); 8 ran, 0 already done, 0 failed" in printed
    plots = sorted(p.name for p in (out / "plots").iterdir())
    assert plots == ["plot1-vs-array.drives-by-rebuild.discipline.png", "plot1-vs-array.drives-by-rebuild.discipline.svg"]
    manifest = json.loads((out / store.SWEEP_FILE).read_text())
    assert manifest["runs"] == 8 and manifest["done"] == 8 and manifest["extra_overrides"] == ["workload.requests=300"]
    assert (out / store.SPEC_COPY).read_text() == spec.read_text()

    assert main(["summary", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    table = pd.read_parquet(out / store.SUMMARY_FILE)
    assert len(rows) == len(table) == 8
    assert [row["run_id"] for row in rows] == table["run_id"].tolist()
    assert all(row["requests_completed"] == 300 for row in rows)

    assert main(["summary", str(out)]) == 0
    assert "sweep spec: 8 row(s), 8 done" in capsys.readouterr().out
    run_dir = out / store.RUNS_DIR / rows[0]["run_id"]
    assert main(["summary", str(run_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((run_dir / "summary.json").read_text())

    assert main(["plot", str(out), "--x", "rebuild.discipline", "--metric", "drives.mean_utilization",
                 "-o", str(tmp_path / "figures")]) == 0
    assert {p.suffix for p in (tmp_path / "figures").iterdir()} == {".png", ".svg"}
    assert main(["plot", str(out), "--x", "array.drives", "--metric", "nope"]) == 2
    assert "summary.parquet has no column 'nope'" in capsys.readouterr().err

    # Without --x, the specification's [[plots]] again, from the copy in the sweep directory,
    # whose relative base points elsewhere from there: the plots do not need the base.
    for path in (out / "plots").iterdir():
        path.unlink()
    assert not (out / "base.toml").exists()
    assert main(["plot", str(out)]) == 0
    assert sorted(p.name for p in (out / "plots").iterdir()) == plots

    # A damaged sweep.json is an error naming the file and the field, not a traceback or a
    # table without its axes.
    sweep_json = out / store.SWEEP_FILE
    good = sweep_json.read_text()
    for damaged, named in (("{", "not valid JSON"), ("{}", "name: missing"), ('{"name": "x"}', "axes: missing"),
                           ('{"name": "x", "axes": [{"keys": 5}]}', "axes[0].keys: expected a list")):
        sweep_json.write_text(damaged)
        assert main(["summary", str(out)]) == 2
        assert f"{sweep_json}: {named}" in capsys.readouterr().err
    sweep_json.write_text(good)
    assert main(["summary", str(out)]) == 0


def test_summary_of_something_else_is_an_error(tmp_path, capsys):
    assert main(["summary", str(tmp_path)]) == 2
    assert "neither a run directory" in capsys.readouterr().err


def test_the_docs_example_specification_expands(tmp_path):
    """docs/sweeps.md's example, with every kind of axis, as if it sat in experiments/sweeps/."""
    import re

    text = (REPO_ROOT / "docs" / "sweeps.md").read_text(encoding="utf-8")
    example = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    spec = load_sweep_spec(REPO_ROOT / "experiments" / "sweeps" / "docs-example.toml", text=example)
    assert [axis.kind for axis in spec.axes] == ["grid", "grid", "zip", "points"]
    plan = expand_sweep(spec, tmp_path / "out")
    assert len(plan.rows) == 3 * 2 * 3 * 2 * 5
    assert spec.plots[0].metrics == ("rebuild_time_s", "response_ms.all.mean")


def test_the_ready_specifications_expand(tmp_path):
    for path in sorted((REPO_ROOT / "experiments" / "sweeps").glob("*.toml")):
        plan = expand_sweep(load_sweep_spec(path), tmp_path / path.stem)
        assert plan.rows, path


@pytest.mark.engine
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_keeps_the_finished_runs_exits_130_and_leaves_no_worker(tmp_path):
    from conftest import sigint_at_default
    from test_reproduce import _children

    spec = write(tmp_path, 'base = "base.toml"\nseeds = 20\n[set]\nworkload.requests = 20000\n')
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "raidlab", "sweep", str(spec), "-o", str(out), "--jobs", "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=sigint_at_default, start_new_session=True)
    deadline = time.monotonic() + 60
    while len(_complete(out)) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    workers = _children(process.pid)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert err.strip().endswith("interrupted") and "Traceback" not in err
    table = pd.read_parquet(out / store.SUMMARY_FILE)
    finished = _complete(out)
    assert set(table.loc[table["status"] == "done", "run_id"]) == finished
    assert 2 <= len(finished) < 20 and set(table["status"]) <= {"done", "pending"}
    assert json.loads((out / store.SWEEP_FILE).read_text())["interrupted_utc"]
    assert workers
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
              != "Z" for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(Path(f"/proc/{pid}").exists() and
                   Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z" for pid in workers)


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.engine
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")
def test_the_workers_end_when_the_sweep_is_killed(tmp_path):
    """kill -9 of the sweep's process alone (not its process group, as a process manager or
    an out-of-memory kill does): the pool's workers end too, within a few seconds, instead of
    running on as orphans."""
    from test_reproduce import _children

    # Runs of several seconds each: the workers are mid-simulation when the sweep dies.
    spec = write(tmp_path, 'base = "base.toml"\nseeds = 8\n[set]\nworkload.requests = 3000000\n')
    process = subprocess.Popen([sys.executable, "-m", "raidlab", "sweep", str(spec), "-o", str(tmp_path / "out"),
                                "--jobs", "2", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        workers: list = []
        while time.monotonic() < deadline and process.poll() is None:
            workers = [pid for pid in _children(process.pid)
                       if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]
            if len(workers) == 2:
                break
            time.sleep(0.05)
        assert len(workers) == 2, "the sweep's two workers never started"
        time.sleep(1.0)  # into their first runs
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in workers), "workers outlived the killed sweep"
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # whatever is left of the test's processes
        except ProcessLookupError:
            pass


def test_a_misspelt_plot_metric_is_refused_before_any_run(tmp_path):
    spec = write(tmp_path, 'base = "base.toml"\nseeds = 2\n[grid]\narray.drives = [5, 6]\n\n'
                           '[[plots]]\nx = "array.drives"\nmetrics = ["rebuild_time_s"]\n\n'
                           '[[plots]]\nx = "array.drives"\ntitle = "users"\nmetrics = ["response_ms.al.mean"]\n')
    with pytest.raises(SweepSpecError) as caught:
        run_sweep(spec, tmp_path / "out", jobs=1)
    error = caught.value
    assert not (tmp_path / "out").exists()  # nothing ran (it used to, and then refused to draw)
    assert (error.file, error.line, error.key) == (str(spec), 13, "plots[1].metrics")
    message = str(error)
    assert "'response_ms.al.mean'" in message and "'users'" in message
    assert "did you mean 'response_ms.all.mean'" in message
    assert "response_ms.all.{count, max, mean, p50, p90, p99}" in message and "rebuild_time_s" in message
    # Every metric a run can have passes: the summary's fields, a table that is empty in most
    # runs, the axes and seed.
    from raidlab.sweep import check_plot_metrics

    fine = load_sweep_spec(write(tmp_path, 'base = "base.toml"\n[grid]\narray.drives = [5, 6]\n[[plots]]\n'
                                           'x = "array.drives"\nmetrics = ["response_ms_by_period.rebuilding.p99", '
                                           '"cache.read_hit_ratio", "content.first_stale.lba", "rebuild.order.decisions", '
                                           '"seed", "array.drives"]\n', name="fine.toml"))
    check_plot_metrics(fine)
