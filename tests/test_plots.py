"""raidlab.plots: pure functions of result tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import raidlab.output.plots
from raidlab.plots import (
    MAX_BARS,
    complete_windows,
    data_loss_times,
    draw_rebuild_progress,
    draw_response_cdf,
    draw_response_over_time,
    failure_times,
    has_rebuild_progress,
    plot_run,
    rebuild_times,
)
from raidlab.exceptions import RaidlabIOError
from raidlab.results import Result

from conftest import REBUILD_END_S, REBUILD_START_S, synthetic_rebuild_result, synthetic_result

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


# -- rebuild onto a spare: c(t) --------------------------------------------------------------


@pytest.fixture
def drawn_figures(monkeypatch):
    """The figures plot_run draws, kept as they are saved (the file is still written)."""
    figures = []
    save = raidlab.output.plots.save_figure

    def keep(figure, output, dpi):
        figures.append(figure)
        return save(figure, output, dpi)

    monkeypatch.setattr(raidlab.output.plots, "save_figure", keep)
    return figures


def marker_xs(ax, label):
    return [line.get_xdata()[0] for line in ax.get_lines() if line.get_label() == label]


def test_rebuild_times_come_from_the_summary(synthetic_rebuild):
    assert rebuild_times(synthetic_rebuild) == {
        "started": [REBUILD_START_S], "complete": [REBUILD_END_S], "abandoned": []
    }


def test_rebuild_times_fall_back_to_the_outcomes(synthetic_rebuild):
    del synthetic_rebuild.summary["rebuilds"]
    assert rebuild_times(synthetic_rebuild) == {
        "started": [REBUILD_START_S], "complete": [REBUILD_END_S], "abandoned": []
    }


def test_an_unfinished_or_abandoned_rebuild_has_no_end(synthetic_rebuild):
    synthetic_rebuild.summary["rebuilds"][0].update(outcome="running", ended_at_s=None, rebuild_time_s=None)
    assert rebuild_times(synthetic_rebuild)["complete"] == []
    synthetic_rebuild.summary["rebuilds"][0].update(outcome="abandoned", ended_at_s=9.0, rebuild_time_s=2.5)
    assert rebuild_times(synthetic_rebuild) == {"started": [REBUILD_START_S], "complete": [], "abandoned": [9.0]}


def test_a_run_without_rebuild_has_no_rebuild_times_or_progress(synthetic):
    assert rebuild_times(synthetic) == {"started": [], "complete": [], "abandoned": []}
    assert not has_rebuild_progress(synthetic.timeseries)  # an older run: no column
    synthetic.timeseries["rebuilt_fraction"] = math.nan  # a newer run without rebuild
    assert not has_rebuild_progress(synthetic.timeseries)


def test_rebuild_progress_draws_c_of_t_from_zero_at_the_start_with_markers(synthetic_rebuild):
    ax = Figure().subplots()
    rebuilds = rebuild_times(synthetic_rebuild)
    draw_rebuild_progress(ax, synthetic_rebuild.timeseries, failures=[5.0], rebuilds=rebuilds)
    curve = next(line for line in ax.get_lines() if line.get_label().startswith("c(t)"))
    x, y = curve.get_xdata(), curve.get_ydata()
    assert (x[0], y[0]) == (REBUILD_START_S, 0.0)
    known = [value for value in y if not math.isnan(value)]
    assert all(a <= b for a, b in zip(known, known[1:])) and known[-1] == 1.0
    assert marker_xs(ax, "drive failure") == [5.0]
    assert marker_xs(ax, "rebuild start") == [REBUILD_START_S]
    assert marker_xs(ax, "rebuild end") == [REBUILD_END_S]
    assert ax.get_legend() is not None
    assert ax.get_ylim() == (0, 1.05)


def test_plot_run_with_a_rebuild_adds_c_of_t_under_r_of_t(tmp_path, drawn_figures):
    path = plot_run(synthetic_rebuild_result(), tmp_path / "rebuild.png")
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    (figure,) = drawn_figures
    # R(t), its bars' twin, c(t) and the CDF: one more than without a rebuild.
    assert len(figure.axes) == 4
    over_time = next(ax for ax in figure.axes if ax.get_title().startswith("R(t)"))
    progress = next(ax for ax in figure.axes if ax.get_title().startswith("c(t)"))
    cdf = next(ax for ax in figure.axes if ax.get_title().startswith("Response-time CDF"))
    assert progress.get_shared_x_axes().joined(progress, over_time)
    assert not progress.get_shared_x_axes().joined(progress, cdf)
    # c(t) sits under R(t), the CDF under both.
    assert over_time.get_position().y0 > progress.get_position().y0 > cdf.get_position().y0
    for ax in (over_time, progress):
        assert marker_xs(ax, "drive failure") == [5.0]
        assert marker_xs(ax, "rebuild start") == [REBUILD_START_S]
        assert marker_xs(ax, "rebuild end") == [REBUILD_END_S]
        assert ax.get_legend() is not None


def test_plot_run_with_a_cache_adds_its_rgr_under_c_of_t(tmp_path, drawn_figures):
    result = synthetic_rebuild_result()
    windows = len(result.timeseries)
    # RGR 1 before the failure at 5 s, 1.6 after it (a RAID-5 of 5 with no hits).
    start = result.timeseries["window_start_s"].to_numpy(dtype=float)
    result.timeseries["cache_rgr"] = np.where(start >= 5.0, 1.6, 1.0)
    result.timeseries["cache_read_hit_ratio"] = np.zeros(windows)
    plot_run(result, tmp_path / "cache.png")
    (figure,) = drawn_figures
    # R(t) and its twin, c(t), the cache panel and its twin, the CDF.
    assert len(figure.axes) == 6
    progress = next(ax for ax in figure.axes if ax.get_title().startswith("c(t)"))
    cache = next(ax for ax in figure.axes if ax.get_title().startswith("Buffer cache"))
    cdf = next(ax for ax in figure.axes if ax.get_title().startswith("Response-time CDF"))
    assert progress.get_position().y0 > cache.get_position().y0 > cdf.get_position().y0
    assert cache.get_shared_x_axes().joined(cache, progress)
    rgr = next(line for line in cache.get_lines() if line.get_label().startswith("RGR"))
    assert list(rgr.get_ydata()) == list(result.timeseries["cache_rgr"])
    assert marker_xs(cache, "drive failure") == [5.0]
    assert cache.get_xlabel() == "simulated time (s)" and progress.get_xlabel() == ""
    # A run whose cache saw no reads draws no panel for it.
    result.timeseries["cache_rgr"] = math.nan
    plot_run(result, tmp_path / "no-reads.png")
    assert len(drawn_figures[1].axes) == 4


def test_plot_run_without_a_rebuild_keeps_its_layout(tmp_path, drawn_figures):
    result = synthetic_result()
    result.timeseries["rebuilt_fraction"] = math.nan  # a newer run that rebuilt nothing
    for run in (synthetic_result(), result):
        assert plot_run(run, tmp_path / "plain.png").read_bytes().startswith(PNG_SIGNATURE)
    for figure in drawn_figures:
        assert len(figure.axes) == 3  # R(t), its bars' twin, the CDF
        assert tuple(figure.get_size_inches()) == (10, 8)
        titles = [ax.get_title() for ax in figure.axes]
        assert not any(title.startswith("c(t)") for title in titles)
        over_time = next(ax for ax in figure.axes if ax.get_title().startswith("R(t)"))
        labels = [line.get_label() for line in over_time.get_lines()]
        assert "drive failure" in labels and not any(label.startswith("rebuild") for label in labels)


# -- long runs stay readable -------------------------------------------------------------------


def long_result(windows: int = 15_000) -> Result:
    """A run of ``windows`` one-second windows, the last one cut short at 0.25 s, drive 2
    failing at a third of the run."""
    result = synthetic_result()
    start = np.arange(windows, dtype=float)
    arrivals = np.full(windows, 100, dtype=np.int64)
    arrivals[-1] = 3  # the partial window: 3 arrivals in its quarter second
    response = np.full(windows, 20.0)
    response[-1] = 900.0  # a few slow requests finishing in it
    result.tables["timeseries"] = pd.DataFrame({
        "window_start_s": start, "window_end_s": start + 1, "arrivals": arrivals, "completions": arrivals,
        "mean_response_ms": response, "read_mean_response_ms": response, "throughput_iops": arrivals.astype(float),
    })
    result.summary["simulated_seconds"] = windows - 0.75
    result.summary["failures"] = [{"drive": 2, "at_s": windows / 3}]
    return result


def test_a_long_run_draws_no_markers_merged_bars_and_no_partial_window():
    result = long_result()
    timeseries = complete_windows(result.timeseries, result.summary["simulated_seconds"])
    assert len(timeseries) == 14_999  # the partial last window is left out
    ax = Figure().subplots()
    bars = draw_response_over_time(ax, timeseries, failures=[5000.0])
    # Merged into at most MAX_BARS steps of one outline, which keep the arrival rate: 100
    # arrivals a second in every window.
    (steps,) = bars.patches
    values, edges, _ = steps.get_data()
    assert len(values) <= MAX_BARS and edges[0] == 0.0 and edges[-1] == 14_999.0
    assert set(np.round(values, 6)) == {100.0}
    response = next(line for line in ax.get_lines() if line.get_label() == "mean response time")
    assert response.get_marker() in (None, "None", "")
    assert max(response.get_ydata()) == 20.0  # no spike from the partial window
    assert "completion" in ax.get_ylabel()


def test_the_legend_sits_above_the_data_and_the_title_names_the_configuration(tmp_path, drawn_figures):
    result = long_result(600)
    run_dir = result.save(tmp_path / "run", name="failure-study")
    plot_run(Result.load(run_dir), tmp_path / "plot.png")
    (figure,) = drawn_figures
    assert figure.get_suptitle().startswith("failure-study (")
    over_time = next(ax for ax in figure.axes if ax.get_title().startswith("R(t)"))
    legend = over_time.get_legend()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    # Entirely above the plotting area: it hides no line, the failure marker included.
    assert legend.get_window_extent(renderer).y0 >= over_time.get_window_extent(renderer).y1 - 1
    # Without a configuration name, the run directory's name.
    plain = synthetic_result()
    plot_run(Result.load(plain.save(tmp_path / "my-run")), tmp_path / "plain.png")
    assert drawn_figures[-1].get_suptitle().startswith("my-run (")


# -- titles and legends do not overprint each other ---------------------------------------------


def _overlaps(a, b) -> bool:
    """Whether two window extents share any area (touching edges do not count)."""
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def data_loss_rebuild_result() -> Result:
    """:func:`synthetic_rebuild_result` with a second failure that loses data: every marker
    kind, so the R(t) legend takes two rows, and a figure title saying data loss."""
    result = synthetic_rebuild_result()
    result.summary.update(data_loss=True, data_loss_at_s=12.0,
                          failures=[{"drive": 2, "at_s": 5.0}, {"drive": 1, "at_s": 12.0}])
    outcomes = result.tables["outcomes"]
    result.tables["outcomes"] = pd.concat([outcomes, pd.DataFrame(
        {"time_s": [12.0, 12.0], "kind": ["drive_failed", "data_loss"], "drive": np.array([1, 1], dtype=np.int64),
         "detail": ["", "failed drives [1, 2]"]})], ignore_index=True)
    return result


@pytest.mark.parametrize("make", [synthetic_result, synthetic_rebuild_result, data_loss_rebuild_result])
def test_no_title_overprints_a_legend_or_the_figure_title(tmp_path, drawn_figures, make):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    result = make()
    start = result.timeseries["window_start_s"].to_numpy(dtype=float)
    # A cache panel too: its legend takes two rows.
    result.timeseries["cache_rgr"] = np.where(start >= 5.0, 1.6, 1.0)
    result.timeseries["cache_read_hit_ratio"] = np.full(len(start), 0.5)
    plot_run(result, tmp_path / "plot.png")
    (figure,) = drawn_figures
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    texts = [(f"legend of {ax.get_title()!r}", ax.get_legend().get_window_extent(renderer))
             for ax in figure.axes if ax.get_legend() is not None]
    texts += [(f"title {ax.get_title()!r}", ax.title.get_window_extent(renderer))
              for ax in figure.axes if ax.get_title()]
    texts.append(("figure title", figure._suptitle.get_window_extent(renderer)))
    assert sum(name.startswith("legend") for name, _ in texts) >= 3
    for i, (name, box) in enumerate(texts):
        for other, other_box in texts[i + 1:]:
            assert not _overlaps(box, other_box), f"{name} overprints {other}"


def test_cdf_starts_near_the_smallest_response_and_states_the_share_answered_at_once():
    # A buffer cache in front of the array: 70 % of reads and every write answered at once
    # (the core's 0 ns bucket, upper bound 1e-6 ms), the other reads in 2.5 to 40 ms.
    histogram = pd.DataFrame({
        "class": ["read"] * 5 + ["write"],
        "upper_ms": [1e-6, 2.5, 5.0, 10.0, 40.0, 1e-6],
        "count": [700, 100, 100, 50, 50, 400],
    })
    ax = Figure().subplots()
    draw_response_cdf(ax, histogram)
    reads, writes = ax.get_lines()
    # No six decades of flat line: the axis starts within a decade of 2.5 ms.
    left = ax.get_xlim()[0]
    assert 0.25 <= left <= 2.5
    assert min(x for line in (reads, writes) for x in line.get_xdata()) >= left
    # The reads' curve starts at its left edge at the share answered at once, and keeps it
    # until the first response that took time.
    x, y = reads.get_xdata(), reads.get_ydata()
    assert (x[0], y[0]) == (left, pytest.approx(0.7))
    assert y[list(x).index(2.5) - 1] == pytest.approx(0.7) and y[-1] == pytest.approx(1.0)
    assert "70.0% at 0 ms" in reads.get_label() and "n=1,000" in reads.get_label()
    assert "all at 0 ms" in writes.get_label()
    assert list(writes.get_ydata()) == [1.0]
    assert "0 ms" in ax.get_xlabel()
    # Without responses of 0 ms, nothing is said about them.
    ax = Figure().subplots()
    draw_response_cdf(ax, histogram[histogram["upper_ms"] > 1e-6])
    assert "0 ms" not in ax.get_lines()[0].get_label() and "0 ms" not in ax.get_xlabel()


def test_no_rgr_line_where_the_summary_says_the_cache_counted_no_rgr(tmp_path, drawn_figures):
    # A cache in front of a RAID-1: the summary says "rgr": null, the timeseries still has a
    # cache_rgr column (every miss counted as one read), which is not RGR.
    result = synthetic_rebuild_result()
    windows = len(result.timeseries)
    result.timeseries["cache_rgr"] = np.full(windows, 0.3)
    result.timeseries["cache_read_hit_ratio"] = np.full(windows, 0.7)
    result.summary["cache"] = {"policy": "lru", "size_blocks": 64, "read_hit_ratio": 0.7, "rgr": None,
                               "rgr_faulty": None, "destage_writes": 0}
    plot_run(result, tmp_path / "raid1.png")
    result.summary["cache"].update(rgr=0.3, rgr_faulty=0.4)
    plot_run(result, tmp_path / "raid5.png")
    for figure, rgr_drawn in zip(drawn_figures, (False, True)):
        cache = next(ax for ax in figure.axes if ax.get_title().startswith("Buffer cache"))
        labels = [line.get_label() for ax in figure.axes for line in ax.get_lines()]
        assert any(label.startswith("RGR") for label in labels) == rgr_drawn
        hit_ratio = [line for ax in figure.axes for line in ax.get_lines() if line.get_label() == "read hit ratio"]
        assert len(hit_ratio) == 1 and list(hit_ratio[0].get_ydata()) == [0.7] * windows
        assert ("RGR" in cache.get_ylabel()) == rgr_drawn
