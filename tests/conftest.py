"""Shared fixtures.

Tests marked ``engine`` run a real simulation (or another core entry point) and therefore
fail — they are not skipped — while ``raidlab-core``'s entry points are ``todo!()`` stubs.
Everything else tests the Python package and the binding on their own, using hand-built
results (:func:`synthetic_result`) and a sample JSON Schema (``tests/data``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pandas as pd
import pytest

import raidlab
from raidlab.results import Result

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Material shared between the project's worktrees: trace samples, drive specs, papers.
SHARED = REPO_ROOT.parent / "shared"
TRACES = SHARED / "traces"
DATA = Path(__file__).resolve().parent / "data"

#: A small configuration the engine accepts: RAID-5 of five drives, one failure at 5 s.
SMALL_CONFIG = """\
seed = 1

[array]
layout = "raid5"
drives = 5
stripe_unit_kib = 16

[drive]
preset = "ibm0661"

[workload]
requests = 2000
read_fraction = 0.7
size_kib = 4

[workload.arrival]
process = "poisson"
rate_per_s = 100.0

[[failures]]
drive = 2
at_s = 5.0
"""

SMALL_CONFIG_DICT: Dict[str, Any] = {
    "seed": 1,
    "array": {"layout": "raid5", "drives": 5, "stripe_unit_kib": 16},
    "drive": {"preset": "ibm0661"},
    "workload": {
        "requests": 2000,
        "read_fraction": 0.7,
        "size_kib": 4,
        "arrival": {"process": "poisson", "rate_per_s": 100.0},
    },
    "failures": [{"drive": 2, "at_s": 5.0}],
}


@pytest.fixture
def small_config_text() -> str:
    return SMALL_CONFIG


@pytest.fixture
def small_config_dict() -> Dict[str, Any]:
    import copy

    return copy.deepcopy(SMALL_CONFIG_DICT)


@pytest.fixture
def small_config_path(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_CONFIG, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def engine_result() -> Result:
    """A real run of the small configuration (needs the engine)."""
    return raidlab.run(SMALL_CONFIG)


@pytest.fixture(scope="session")
def engine_run_dir(tmp_path_factory: pytest.TempPathFactory, engine_result: Result) -> Path:
    """The small run saved as a run directory (needs the engine)."""
    return engine_result.save(tmp_path_factory.mktemp("engine") / "run")


def synthetic_result() -> Result:
    """A hand-built result with the documented summary keys and table shapes: 20 one-second
    windows, drive 2 failing at 5 s, no data loss."""
    windows = np.arange(20, dtype=float)
    arrivals = np.full(20, 100, dtype=np.int64)
    mean = np.where(windows >= 5, 24.0, 15.0) + windows * 0.1
    timeseries = pd.DataFrame(
        {
            "window_start_s": windows,
            "window_end_s": windows + 1.0,
            "arrivals": arrivals,
            "completions": arrivals,
            "mean_response_ms": mean,
            "read_mean_response_ms": mean - 2.0,
            "throughput_iops": arrivals.astype(float),
            "lost": np.zeros(20, dtype=np.int64),
        }
    )
    upper = np.array([1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, math.inf])
    rows = []
    for name, counts in {
        "all": [0, 10, 200, 700, 800, 250, 38, 2],
        "read": [0, 8, 150, 500, 550, 150, 20, 2],
        "write": [0, 2, 50, 200, 250, 100, 18, 0],
        "degraded_read": [0, 0, 10, 60, 150, 80, 10, 0],
    }.items():
        rows += [(name, u, c) for u, c in zip(upper, counts)]
    histogram = pd.DataFrame(rows, columns=["class", "upper_ms", "count"]).astype({"count": np.int64})
    drives = pd.DataFrame(
        {
            "drive": np.arange(5, dtype=np.int64),
            "utilization": [0.41, 0.43, 0.12, 0.44, 0.40],
            "mean_queue_length": [0.6, 0.7, 0.1, 0.7, 0.6],
            "operations": np.array([900, 920, 260, 930, 880], dtype=np.int64),
            "failed_at_s": [math.nan, math.nan, 5.0, math.nan, math.nan],
        }
    )
    outcomes = pd.DataFrame(
        {"time_s": [5.0], "kind": ["drive_failure"], "drive": np.array([2], dtype=np.int64), "detail": [""]}
    )

    def stats(count: int, mean: float) -> Dict[str, float]:
        return {"count": count, "mean": mean, "p50": mean * 0.9, "p90": mean * 1.8, "p99": mean * 3.1, "max": mean * 6}

    summary = {
        "seed": 1,
        "simulated_seconds": 20.0,
        "requests_completed": 2000,
        "response_ms": {
            "all": stats(2000, 19.5),
            "read": stats(1380, 18.0),
            "write": stats(620, 22.9),
            "degraded_read": stats(310, 27.4),
        },
        "drives": {"mean_utilization": 0.36},
        "data_loss": False,
        "failures": [{"drive": 2, "at_s": 5.0}],
    }
    return Result(
        summary=summary,
        tables={"timeseries": timeseries, "histogram": histogram, "drives": drives, "outcomes": outcomes},
        resolved_config=SMALL_CONFIG,
        config_hash="0123456789abcdef0123456789abcdef",
    )


#: The synthetic rebuild: drive 2 fails at 5 s, its rebuild onto spare slot 5 runs from
#: 6.5 s to 16.25 s.
REBUILD_START_S = 6.5
REBUILD_END_S = 16.25


def synthetic_rebuild_result() -> Result:
    """:func:`synthetic_result` with one hot spare (slot 5) onto which the failed drive 2 is
    rebuilt from :data:`REBUILD_START_S` to :data:`REBUILD_END_S`: c(t) in the timeseries,
    the spare and the busy-time columns in the drives table, the rebuild's outcome records,
    and the summary's ``rebuilds``, ``rebuild_time_s``, ``response_ms_by_period`` and
    ``content`` keys, as the core writes them."""
    result = synthetic_result()
    timeseries = result.tables["timeseries"]
    end = timeseries["window_end_s"].to_numpy()
    progress = np.clip((end - REBUILD_START_S) / (REBUILD_END_S - REBUILD_START_S), 0.0, 1.0)
    # NaN before the rebuild starts; carried at 1.0 after it ends, as the core does.
    timeseries["rebuilt_fraction"] = np.where(end < REBUILD_START_S, math.nan, progress)
    drives = result.tables["drives"]
    spare = pd.DataFrame(
        {"drive": np.array([5], dtype=np.int64), "utilization": [0.3], "mean_queue_length": [0.2],
         "operations": np.array([600], dtype=np.int64), "failed_at_s": [math.nan]}
    )
    drives = pd.concat([drives, spare], ignore_index=True)
    drives["user_busy_s"] = [8.0, 8.4, 1.2, 8.6, 7.9, 1.1]
    drives["rebuild_busy_s"] = [3.1, 3.0, 0.0, 3.2, 3.1, 4.0]
    drives["rebuild_mb"] = [80.0, 80.0, 0.0, 80.0, 80.0, 80.0]
    result.tables["drives"] = drives
    result.tables["outcomes"] = pd.DataFrame(
        {
            "time_s": [5.0, 5.0, REBUILD_START_S, REBUILD_END_S],
            "kind": ["drive_failed", "spare_arrived", "rebuild_started", "rebuild_complete"],
            "drive": np.array([2, 5, 2, 2], dtype=np.int64),
            "detail": ["", "", "member 2 onto slot 5, 949 units", "member 2 now in slot 5"],
        }
    )

    def period(count: int, mean: Any, starts: list) -> Dict[str, Any]:
        p99 = None if mean is None else mean * 3
        p = None if mean is None else mean
        return {"count": count, "mean": mean, "p50": p, "p90": p, "p99": p99, "starts_s": starts}

    rebuild_time = REBUILD_END_S - REBUILD_START_S
    result.summary.update(
        {
            "rebuilds": [
                {
                    "member": 2,
                    "target_slot": 5,
                    "failed_at_s": 5.0,
                    "started_at_s": REBUILD_START_S,
                    "ended_at_s": REBUILD_END_S,
                    "rebuild_time_s": rebuild_time,
                    "outcome": "complete",
                    "units": 949,
                    "units_by_executor": 901,
                    "units_by_user_writes": 48,
                    "units_by_piggyback": 0,
                    "target_write_mb_s": 8.2,
                }
            ],
            "rebuild_time_s": rebuild_time,
            "response_ms_by_period": {
                "normal": period(500, 15.2, [0.0]),
                "degraded": period(150, 23.1, [5.0]),
                "rebuilding": period(1000, 27.9, [REBUILD_START_S]),
                "after": period(350, 16.0, [REBUILD_END_S]),
            },
            "content": {
                "sectors_checked": 1200, "stale_sectors": 0, "stale_reads": 0, "first_stale": None,
                "rebuilt_sectors_checked": 5000, "rebuilt_sectors_wrong": 0, "first_wrong_rebuilt": None,
            },
        }
    )
    return result


@pytest.fixture
def synthetic() -> Result:
    return synthetic_result()


@pytest.fixture
def synthetic_rebuild() -> Result:
    return synthetic_rebuild_result()


@pytest.fixture
def synthetic_run_dir(tmp_path: Path) -> Path:
    return synthetic_result().save(tmp_path / "synthetic-run")


@pytest.fixture
def synthetic_rebuild_run_dir(tmp_path: Path) -> Path:
    return synthetic_rebuild_result().save(tmp_path / "synthetic-rebuild-run")


def interrupt_the_second_table(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """Make saving raise ``error`` (a Ctrl-C, a full disk) after the first table is written."""
    import raidlab.results

    write_table = raidlab.results._write_table
    written = []

    def failing(table, where, *args, **kwargs):
        if written:
            raise error
        written.append(where)
        return write_table(table, where, *args, **kwargs)

    monkeypatch.setattr(raidlab.results, "_write_table", failing)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say plainly when failures come from the core still being a stub."""
    stub_failures = [
        report
        for report in terminalreporter.stats.get("failed", []) + terminalreporter.stats.get("error", [])
        if "not yet implemented" in str(getattr(report, "longrepr", ""))
    ]
    if stub_failures:
        terminalreporter.write_line(
            f"{len(stub_failures)} failure(s) hit a todo!() stub of raidlab-core "
            "(tests marked `engine` wait for the simulation engine)."
        )


def sigint_at_default() -> None:
    """``preexec_fn`` for a child that a test interrupts with SIGINT: a terminal's Ctrl-C
    reaches a process whose SIGINT is at its default, but a test suite started as a
    background job hands its children SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
