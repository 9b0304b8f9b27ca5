"""raidlab.plots: pure functions of result tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from matplotlib.figure import Figure

from raidlab.plots import (
    data_loss_times,
    draw_response_cdf,
    draw_response_over_time,
    failure_times,
    plot_run,
)
from raidlab.exceptions import RaidlabIOError

from conftest import synthetic_result

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_failure_times_come_from_the_summary(synthetic):
    assert failure_times(synthetic) == [5.0]


def test_failure_times_fall_back_to_the_drives_table(synthetic):
    synthetic.summary.pop("failures")
    assert failure_times(synthetic) == [5.0]


def test_data_loss_times_come_from_outcomes(synthetic):
    assert data_loss_times(synthetic) == []
    synthetic.tables["outcomes"] = pd.DataFrame(
        {"time_s": [5.0, 7.25], "kind": ["drive_failure", "data_loss"], "drive": [2, 4], "detail": ["", "second failure"]}
    )
    assert data_loss_times(synthetic) == [7.25]


def test_response_over_time_draws_line_bars_and_failure_marker(synthetic):
    ax = Figure().subplots()
    bars = draw_response_over_time(ax, synthetic.timeseries, failures=[5.0])
    assert len(bars.patches) == len(synthetic.timeseries)  # one bar per window
    assert bars.patches[0].get_height() == pytest.approx(100.0)  # arrivals per second
    labels = [line.get_label() for line in ax.get_lines()]
    assert "mean response time" in labels and "drive failure" in labels
    marker = next(line for line in ax.get_lines() if line.get_label() == "drive failure")
    assert list(marker.get_xdata()) == [5.0, 5.0]


def test_cdf_has_one_curve_per_class_with_requests(synthetic):
    ax = Figure().subplots()
    draw_response_cdf(ax, synthetic.histogram)
    lines = ax.get_lines()
    assert [line.get_label().split(" (")[0] for line in lines] == ["reads", "writes", "degraded reads"]
    for line in lines:
        y = line.get_ydata()
        assert all(a <= b for a, b in zip(y, y[1:]))  # non-decreasing
        assert y[-1] <= 1.0
    assert ax.get_xscale() == "log"


def test_cdf_leaves_out_empty_classes(synthetic):
    histogram = synthetic.histogram.copy()
    histogram.loc[histogram["class"] == "degraded_read", "count"] = 0
    ax = Figure().subplots()
    draw_response_cdf(ax, histogram)
    assert len(ax.get_lines()) == 2


def test_cdf_ignores_the_open_last_bucket(synthetic):
    ax = Figure().subplots()
    draw_response_cdf(ax, synthetic.histogram)
    assert all(math.isfinite(x) for line in ax.get_lines() for x in line.get_xdata())


def test_plot_run_writes_a_png(tmp_path):
    path = plot_run(synthetic_result(), tmp_path / "sub" / "plot.png")
    assert path.read_bytes().startswith(PNG_SIGNATURE)


def test_plot_run_copes_with_an_empty_run(tmp_path):
    result = synthetic_result()
    result.tables = {}
    result.summary = {"seed": 1}
    assert plot_run(result, tmp_path / "empty.png").exists()


def test_plot_run_writes_exactly_the_named_file_even_without_a_suffix(tmp_path):
    # Matplotlib alone would write "plot.png" and the caller would report "plot".
    path = plot_run(synthetic_result(), tmp_path / "plot")
    assert path == tmp_path / "plot"
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    assert not (tmp_path / "plot.png").exists()


def test_plot_run_to_an_unknown_image_suffix_is_a_raidlab_io_error(tmp_path):
    with pytest.raises(RaidlabIOError) as caught:
        plot_run(synthetic_result(), tmp_path / "plot.txt")
    assert caught.value.filename == str(tmp_path / "plot.txt")
    assert ".txt" in str(caught.value)
