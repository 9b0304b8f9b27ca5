"""Plots of a run, drawn from its result tables (never by rerunning).

Each ``draw_*`` function is a pure function of tables onto a Matplotlib ``Axes``; the
figure-level :func:`plot_run` combines them into the PNG that ``raidlab plot`` writes.
Matplotlib is used through its object-oriented API (``Figure``), so no GUI backend is needed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, List, Sequence, Union

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from raidlab.exceptions import RaidlabIOError
from raidlab.results import Result

__all__ = [
    "CDF_CLASSES",
    "failure_times",
    "data_loss_times",
    "draw_response_over_time",
    "draw_response_cdf",
    "plot_run",
    "save_figure",
]

#: Histogram classes drawn as CDFs, with their legend labels.
CDF_CLASSES = (("read", "reads"), ("write", "writes"), ("degraded_read", "degraded reads"))


def failure_times(result: Result) -> List[float]:
    """Drive failure times in seconds: from the summary's ``failures``, else from the
    ``drives`` table's ``failed_at_s``."""
    failures = result.summary.get("failures") or []
    times = [float(failure["at_s"]) for failure in failures if failure.get("at_s") is not None]
    if not times and "failed_at_s" in result.drives:
        times = [float(t) for t in result.drives["failed_at_s"].dropna()]
    return sorted(times)


def data_loss_times(result: Result) -> List[float]:
    """Times of outcome records whose kind mentions data loss."""
    outcomes = result.outcomes
    if outcomes.empty or "kind" not in outcomes:
        return []
    lost = outcomes[outcomes["kind"].astype(str).str.contains("loss")]
    return sorted(float(t) for t in lost["time_s"])


def draw_response_over_time(
    ax: Axes,
    timeseries: pd.DataFrame,
    failures: Iterable[float] = (),
    losses: Iterable[float] = (),
) -> Axes:
    """R(t): mean response time per window (line, left axis) over arrivals per second
    (bars, right axis), with a vertical line at each drive failure and data loss.
    Returns the bars' axes."""
    start = timeseries["window_start_s"].to_numpy(dtype=float)
    end = timeseries["window_end_s"].to_numpy(dtype=float)
    width = end - start
    with np.errstate(divide="ignore", invalid="ignore"):
        intensity = np.where(width > 0, timeseries["arrivals"].to_numpy(dtype=float) / width, 0.0)

    bars = ax.twinx()
    bars.bar(start, intensity, width=width, align="edge", color="0.85", edgecolor="0.75",
             linewidth=0.5, label="arrivals/s")
    bars.set_ylabel("I/O intensity (arrivals/s)")
    # Draw the line axes above the bars axes.
    ax.set_zorder(bars.get_zorder() + 1)
    ax.patch.set_visible(False)

    midpoints = (start + end) / 2
    ax.plot(midpoints, timeseries["mean_response_ms"].to_numpy(dtype=float), color="C0",
            marker=".", linewidth=1.5, label="mean response time")
    if "read_mean_response_ms" in timeseries:
        ax.plot(midpoints, timeseries["read_mean_response_ms"].to_numpy(dtype=float),
                color="C1", linewidth=1, alpha=0.8, label="mean read response time")
    for index, time in enumerate(failures):
        ax.axvline(time, color="C3", linestyle="--", linewidth=1,
                   label="drive failure" if index == 0 else None)
    for index, time in enumerate(losses):
        ax.axvline(time, color="k", linestyle=":", linewidth=1.5,
                   label="data loss" if index == 0 else None)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("response time (ms)")
    ax.set_title("R(t): response time over time")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize="small")
    return bars


def draw_response_cdf(
    ax: Axes,
    histogram: pd.DataFrame,
    classes: Sequence[tuple] = CDF_CLASSES,
) -> Axes:
    """Cumulative distribution of response time per class, from histogram buckets
    (``class``, ``upper_ms``, ``count``); classes without requests are left out."""
    drawn = 0
    for name, label in classes:
        buckets = histogram[histogram["class"] == name].sort_values("upper_ms")
        upper = buckets["upper_ms"].to_numpy(dtype=float)
        counts = buckets["count"].to_numpy(dtype=float)
        total = counts.sum()
        if total <= 0:
            continue
        cumulative = np.cumsum(counts) / total
        finite = np.isfinite(upper) & (upper > 0)
        # Points at the buckets' upper bounds, joined linearly (uniform within a bucket).
        ax.plot(upper[finite], cumulative[finite], label=f"{label} (n={int(total)})")
        drawn += 1
    ax.set_xscale("log")
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0, 1.02)
    ax.set_title("Response-time CDF")
    ax.grid(True, which="both", alpha=0.3)
    if drawn:
        ax.legend(loc="lower right", fontsize="small")
    else:
        ax.text(0.5, 0.5, "no completed requests", ha="center", va="center", transform=ax.transAxes)
    return ax


def plot_run(result: Result, output: Union[str, "os.PathLike[str]"]) -> Path:
    """Draw R(t) and the response-time CDFs of ``result`` into one PNG at ``output``."""
    figure = Figure(figsize=(10, 8), layout="constrained")
    over_time, cdf = figure.subplots(2, 1, height_ratios=(3, 2))
    draw_response_over_time(over_time, result.timeseries, failure_times(result), data_loss_times(result))
    draw_response_cdf(cdf, result.histogram)
    title = f"raidlab run {result.config_hash[:8]}"
    if result.data_loss:
        title += " — data loss"
    figure.suptitle(title)
    return save_figure(figure, output, dpi=120)


def save_figure(figure: Figure, output: Union[str, "os.PathLike[str]"], dpi: int) -> Path:
    """Save ``figure`` at exactly ``output`` (directories created): in the format its suffix
    names, PNG when it has none (Matplotlib would otherwise append ``.png`` to the name). An
    unknown suffix is a :class:`RaidlabIOError`."""
    path = Path(output)
    suffix = path.suffix[1:].lower()
    if suffix and suffix not in figure.canvas.get_supported_filetypes():
        supported = ", ".join(sorted(figure.canvas.get_supported_filetypes()))
        raise RaidlabIOError(
            f"cannot write a plot as .{suffix}; use .png or one of {supported}", file=str(path)
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi, format=suffix or "png")
    return path
