"""Figures of many runs, drawn from result tables only (never by running again).

* :func:`draw_metric_against_axis`: a metric of a sweep's summary table against one axis,
  one line per value of another, each point the mean over seeds with its 95 % interval;
* :func:`draw_timeseries_overlay`: R(t) (or c(t), or any timeseries column) of several runs
  or groups of runs on one time axis;
* :func:`draw_cdf_overlay`: the response-time CDFs of several runs or groups from their
  histograms.

Each ``draw_*`` is a pure function of tables onto a Matplotlib ``Axes``; :func:`plot_metrics`
and :func:`save_png_and_svg` write figures as PNG and SVG.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from raidlab.experiments.stats import mean_interval

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "metric_points",
    "draw_metric_against_axis",
    "plot_metrics",
    "mean_timeseries",
    "draw_timeseries_overlay",
    "pooled_cdf",
    "draw_cdf_overlay",
    "save_png_and_svg",
]


def _sort_key(value: Any) -> Any:
    return (0, float(value), "") if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, 0.0, str(value))


def metric_points(table: pd.DataFrame, x: str, metric: str, series: Optional[str] = None) -> pd.DataFrame:
    """Per (series value, x value): the mean of ``metric`` over the finished runs there, the
    half-width of its 95 % t interval (NaN with one run), and the run count. Rows in series
    order, then increasing x."""
    done = table[table["status"] == "done"] if "status" in table else table
    keys = [series, x] if series else [x]
    rows = []
    for group, frame in done.groupby(keys, sort=False, dropna=False):
        group = group if isinstance(group, tuple) else (group,)
        interval = mean_interval(pd.to_numeric(frame[metric], errors="coerce").tolist())
        row = dict(zip(keys, group))
        row.update(mean=interval.mean, half_width=interval.half_width, runs=interval.count)
        rows.append(row)
    points = pd.DataFrame(rows, columns=[*keys, "mean", "half_width", "runs"])
    if points.empty:
        return points
    # Series in the order the table first shows them (the specification's); x increasing.
    first_seen = {value: index for index, value in enumerate(dict.fromkeys(done[series].tolist()))} if series else {}
    order = sorted(range(len(points)), key=lambda i: (
        first_seen.get(points.iloc[i][series], 0) if series else 0, _sort_key(points.iloc[i][x])))
    return points.iloc[order].reset_index(drop=True)


def draw_metric_against_axis(
    ax: "Axes",
    table: pd.DataFrame,
    x: str,
    metric: str,
    series: Optional[str] = None,
) -> "Axes":
    """``metric`` against ``x`` from a summary table (one line per value of ``series``), each
    point the mean over seeds with its 95 % confidence interval as an error bar."""
    points = metric_points(table, x, metric, series)
    groups = [(None, points)] if series is None else [
        (value, points[points[series] == value]) for value in dict.fromkeys(points[series].tolist())]
    numeric = pd.api.types.is_numeric_dtype(points[x]) and not pd.api.types.is_bool_dtype(points[x])
    categories = list(dict.fromkeys(points[x].tolist()))
    for number, (value, group) in enumerate(groups):
        xs = group[x].to_numpy(dtype=float) if numeric else np.array([categories.index(v) for v in group[x]], dtype=float)
        errors = np.nan_to_num(group["half_width"].to_numpy(dtype=float), nan=0.0)
        label = f"{series} = {value}" if series is not None else metric
        ax.errorbar(xs, group["mean"].to_numpy(dtype=float), yerr=errors, marker="o", capsize=3,
                    color=f"C{number % 10}", label=label)
    if not numeric:
        ax.set_xticks(range(len(categories)), [str(c) for c in categories])
    elif 0 < len(categories) <= 12:
        ax.set_xticks(sorted(float(c) for c in categories), [f"{c:g}" for c in sorted(categories)])
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    ax.grid(True, alpha=0.3)
    if len(groups) > 1 or series is not None:
        ax.legend(fontsize="small")
    runs = points["runs"]
    if len(runs):
        seeds = f"{int(runs.min())}" if runs.min() == runs.max() else f"{int(runs.min())}–{int(runs.max())}"
        ax.set_title(f"mean of {seeds} run(s) per point, 95 % interval", fontsize="medium")
    return ax


def plot_metrics(
    table: pd.DataFrame,
    *,
    x: str,
    metrics: Sequence[str],
    series: Optional[str] = None,
    title: Optional[str] = None,
    output_stem: Path,
) -> List[Path]:
    """One figure, one panel per metric (:func:`draw_metric_against_axis`), written as
    ``<output_stem>.png`` and ``.svg``."""
    from matplotlib.figure import Figure

    columns = min(2, len(metrics))
    rows = math.ceil(len(metrics) / columns)
    figure = Figure(figsize=(6.2 * columns, 4.4 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False)
    for index, metric in enumerate(metrics):
        draw_metric_against_axis(axes[index // columns][index % columns], table, x, metric, series)
    for index in range(len(metrics), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    if title:
        figure.suptitle(title)
    return save_png_and_svg(figure, output_stem)


def mean_timeseries(frames: Sequence[pd.DataFrame], column: str) -> pd.DataFrame:
    """``column`` averaged over runs window by window (aligned on the window start), with
    ``window_start_s``, ``window_end_s`` and ``runs`` (how many runs reach each window)."""
    parts = []
    for number, frame in enumerate(frames):
        if column not in frame or frame.empty:
            continue
        part = frame[["window_start_s", "window_end_s", column]].copy()
        part["window_start_s"] = part["window_start_s"].round(9)
        part["run"] = number
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=["window_start_s", "window_end_s", column, "runs"])
    both = pd.concat(parts, ignore_index=True)
    grouped = both.groupby("window_start_s", sort=True)
    return pd.DataFrame({
        "window_start_s": grouped["window_start_s"].first().to_numpy(dtype=float),
        "window_end_s": grouped["window_end_s"].max().to_numpy(dtype=float),
        column: grouped[column].mean().to_numpy(dtype=float),
        "runs": grouped["run"].nunique().to_numpy(dtype=int),
    })


def draw_timeseries_overlay(
    ax: "Axes",
    groups: Mapping[str, Sequence[pd.DataFrame]],
    column: str = "mean_response_ms",
    ylabel: Optional[str] = None,
) -> "Axes":
    """One line per group (label -> the timeseries tables of its runs, averaged window by
    window): R(t) with ``mean_response_ms``, c(t) with ``rebuilt_fraction``. Each value is
    drawn at its window's middle, c(t) at its window's end (the fraction rebuilt by then)."""
    at_end = column == "rebuilt_fraction"
    for number, (label, frames) in enumerate(groups.items()):
        mean = mean_timeseries(frames, column)
        if mean.empty or not np.isfinite(mean[column].to_numpy(dtype=float)).any():
            continue
        start, end = mean["window_start_s"].to_numpy(dtype=float), mean["window_end_s"].to_numpy(dtype=float)
        where = end if at_end else (start + end) / 2
        ax.plot(where, mean[column].to_numpy(dtype=float), color=f"C{number % 10}", linewidth=1.4, label=label)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel(ylabel or column)
    if at_end:
        ax.set_ylim(0, 1.05)
    else:
        ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    return ax


def pooled_cdf(histograms: Sequence[pd.DataFrame], response_class: str = "all") -> pd.DataFrame:
    """The response-time CDF of several runs' histograms pooled (bucket counts summed):
    ``upper_ms`` and ``fraction`` (of the requests at or below it)."""
    parts = [frame[frame["class"] == response_class][["upper_ms", "count"]] for frame in histograms
             if not frame.empty and "class" in frame]
    if not parts:
        return pd.DataFrame(columns=["upper_ms", "fraction"])
    buckets = pd.concat(parts).groupby("upper_ms", sort=True)["count"].sum()
    total = float(buckets.sum())
    if total <= 0:
        return pd.DataFrame(columns=["upper_ms", "fraction"])
    return pd.DataFrame({"upper_ms": buckets.index.to_numpy(dtype=float),
                         "fraction": np.cumsum(buckets.to_numpy(dtype=float)) / total})


def draw_cdf_overlay(
    ax: "Axes",
    groups: Mapping[str, Sequence[pd.DataFrame]],
    response_class: str = "all",
) -> "Axes":
    """One response-time CDF per group (label -> the histogram tables of its runs, pooled),
    on a logarithmic time axis."""
    drawn = 0
    for number, (label, frames) in enumerate(groups.items()):
        cdf = pooled_cdf(frames, response_class)
        upper = cdf["upper_ms"].to_numpy(dtype=float)
        keep = np.isfinite(upper) & (upper > 0)
        if not keep.any():
            continue
        ax.plot(upper[keep], cdf["fraction"].to_numpy(dtype=float)[keep], color=f"C{number % 10}", label=label)
        drawn += 1
    ax.set_xscale("log")
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0, 1.02)
    ax.grid(True, which="both", alpha=0.3)
    if drawn:
        ax.legend(loc="lower right", fontsize="small")
    else:
        ax.text(0.5, 0.5, "no completed requests", ha="center", va="center", transform=ax.transAxes)
    return ax


def save_png_and_svg(figure: "Figure", output_stem: Path, dpi: int = 110) -> List[Path]:
    """Write ``figure`` as ``<output_stem>.png`` and ``<output_stem>.svg``."""
    from raidlab.output.plots import save_figure

    stem = Path(output_stem)
    return [save_figure(figure, stem.with_name(stem.name + ".png"), dpi=dpi),
            save_figure(figure, stem.with_name(stem.name + ".svg"), dpi=dpi)]
