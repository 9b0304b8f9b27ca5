"""Plots of a run, drawn from its result tables (never by rerunning).

Each ``draw_*`` function is a pure function of tables onto a Matplotlib ``Axes``; the
figure-level :func:`plot_run` combines them into the PNG that ``raidlab plot`` writes: R(t)
above the response-time CDFs and, for a run that rebuilt a drive onto a spare, c(t) (the
fraction rebuilt) between them, on R(t)'s time axis.
Matplotlib is used through its object-oriented API (``Figure``), so no GUI backend is needed.
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Union

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure

from raidlab.exceptions import RaidlabIOError
from raidlab.results import Result

__all__ = [
    "CDF_CLASSES",
    "failure_times",
    "data_loss_times",
    "rebuild_times",
    "has_rebuild_progress",
    "draw_event_markers",
    "draw_response_over_time",
    "draw_rebuild_progress",
    "draw_response_cdf",
    "plot_run",
    "run_name",
    "complete_windows",
    "merged_bars",
    "save_figure",
]

#: Histogram classes drawn as CDFs, with their legend labels.
CDF_CLASSES = (("read", "reads"), ("write", "writes"), ("degraded_read", "degraded reads"))

#: Upper bound (ms) of the histogram's bucket of responses of 0 ns, answered at once (the
#: core's histogram is exact below 128 ns: bucket i holds i ns and its upper bound is i + 1 ns).
INSTANT_UPPER_MS = 1e-6 * (1 + 1e-9)

#: Most points of a line drawn with a marker on each: beyond, the markers merge into a band.
MAX_MARKED_POINTS = 300

#: Most bars of I/O intensity drawn: beyond, neighbouring windows are merged into one bar
#: (their arrivals over their combined width), so the bars stay readable and quick to draw.
MAX_BARS = 300

#: Space between a panel's top and its legend above it, in the legend's font sizes.
LEGEND_GAP_FONTSIZES = 0.4

#: Space between the legend above a panel and the panel's title above that, in points.
TITLE_GAP_POINTS = 4.0


def complete_windows(timeseries: pd.DataFrame, simulated_seconds: Optional[float]) -> pd.DataFrame:
    """The windows a run filled: the last one, cut short by the run's end
    (``window_end_s`` past ``simulated_seconds``), is left out, so that its few arrivals over a
    full window's width do not draw a dip, nor its few slow completions a spike."""
    if simulated_seconds is None or timeseries.empty or "window_end_s" not in timeseries:
        return timeseries
    last_end = float(timeseries["window_end_s"].iloc[-1])
    if last_end > float(simulated_seconds) + 1e-9 and len(timeseries) > 1:
        return timeseries.iloc[:-1]
    return timeseries


def merged_bars(start: np.ndarray, end: np.ndarray, arrivals: np.ndarray, most: int = MAX_BARS):
    """Bars of I/O intensity, at most ``most``: windows merged in runs of ⌈n / most⌉, each bar
    its windows' arrivals over their combined width. Returns (lefts, widths, arrivals/s)."""
    n = len(start)
    group = max(1, -(-n // most))
    edges = np.arange(0, n, group)
    lefts = start[edges]
    rights = end[np.minimum(edges + group, n) - 1]
    totals = np.add.reduceat(arrivals, edges) if n else arrivals
    widths = rights - lefts
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = np.where(widths > 0, totals / widths, 0.0)
    return lefts, widths, rates


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


def rebuild_times(result: Result) -> Dict[str, List[float]]:
    """Times in seconds at which rebuilds onto spares ``started``, were ``complete`` or were
    ``abandoned``: from the summary's ``rebuilds``, else from the ``outcomes`` table's
    ``rebuild_started``, ``rebuild_complete`` and ``rebuild_abandoned`` records. All empty
    for a run without rebuild."""
    times: Dict[str, List[float]] = {"started": [], "complete": [], "abandoned": []}
    rebuilds = result.rebuilds
    if rebuilds:
        for rebuild in rebuilds:
            if rebuild.get("started_at_s") is not None:
                times["started"].append(float(rebuild["started_at_s"]))
            outcome = rebuild.get("outcome")
            if outcome in ("complete", "abandoned") and rebuild.get("ended_at_s") is not None:
                times[outcome].append(float(rebuild["ended_at_s"]))
    else:
        outcomes = result.outcomes
        if not outcomes.empty and "kind" in outcomes:
            kinds = outcomes["kind"].astype(str)
            for name in times:
                times[name] = [float(t) for t in outcomes.loc[kinds == f"rebuild_{name}", "time_s"]]
    return {name: sorted(values) for name, values in times.items()}


def _draw_run_events(ax: Axes, failures: Iterable[float], losses: Iterable[float],
                     rebuilds: Optional[Dict[str, List[float]]]) -> None:
    """:func:`draw_event_markers` for a run's panels, the rebuilds given as
    :func:`rebuild_times` gives them (or None)."""
    rebuilds = rebuilds or {}
    draw_event_markers(ax, failures, losses, rebuilds.get("started", ()), rebuilds.get("complete", ()),
                       rebuilds.get("abandoned", ()))


def has_rebuild_progress(timeseries: pd.DataFrame) -> bool:
    """Whether ``timeseries`` has a ``rebuilt_fraction`` (c(t)) with any value: runs without
    rebuild have it all NaN, runs of raidlab versions before rebuild lack it."""
    if "rebuilt_fraction" not in timeseries:
        return False
    return bool(np.isfinite(timeseries["rebuilt_fraction"].to_numpy(dtype=float)).any())


def draw_event_markers(
    ax: Axes,
    failures: Iterable[float] = (),
    losses: Iterable[float] = (),
    rebuild_starts: Iterable[float] = (),
    rebuild_ends: Iterable[float] = (),
    rebuild_abandons: Iterable[float] = (),
) -> Axes:
    """A vertical line at each drive failure, data loss and rebuild start, end (complete) and
    abandonment, each kind labelled once for the legend. The same styles on every panel, so
    one legend reads for all."""
    kinds = (
        (failures, "drive failure", dict(color="C3", linestyle="--", linewidth=1)),
        (losses, "data loss", dict(color="k", linestyle=":", linewidth=1.5)),
        (rebuild_starts, "rebuild start", dict(color="C2", linestyle="-.", linewidth=1.2)),
        (rebuild_ends, "rebuild end", dict(color="C4", linestyle="-.", linewidth=1.2)),
        (rebuild_abandons, "rebuild abandoned", dict(color="C5", linestyle=":", linewidth=1.5)),
    )
    for times, label, style in kinds:
        for index, time in enumerate(times):
            ax.axvline(time, label=label if index == 0 else None, **style)
    return ax


def draw_response_over_time(
    ax: Axes,
    timeseries: pd.DataFrame,
    failures: Iterable[float] = (),
    losses: Iterable[float] = (),
    rebuilds: Optional[Dict[str, List[float]]] = None,
) -> Axes:
    """R(t): mean response time per window (line, left axis) over arrivals per second
    (bars, right axis), with a vertical line at each drive failure and data loss, and at
    each rebuild's start and end when ``rebuilds`` (see :func:`rebuild_times`) is given.
    Returns the bars' axes."""
    start = timeseries["window_start_s"].to_numpy(dtype=float)
    end = timeseries["window_end_s"].to_numpy(dtype=float)
    lefts, widths, intensity = merged_bars(start, end, timeseries["arrivals"].to_numpy(dtype=float))
    merged = len(lefts) < len(start)

    bars = ax.twinx()
    if merged:
        # One outline for all the merged bars: hundreds of separate rectangles cost most of
        # the drawing of a long run.
        bars.stairs(intensity, np.append(lefts, lefts[-1] + widths[-1]), fill=True, color="0.85",
                    label="arrivals/s")
    else:
        bars.bar(lefts, intensity, width=widths, align="edge", color="0.85", edgecolor="0.75",
                 linewidth=0.5, label="arrivals/s")
    per = f" (per {widths[0]:g} s)" if merged and len(widths) else ""
    bars.set_ylabel(f"I/O intensity (arrivals/s{per})")
    # Draw the line axes above the bars axes.
    ax.set_zorder(bars.get_zorder() + 1)
    ax.patch.set_visible(False)

    midpoints = (start + end) / 2
    marker = "." if len(midpoints) <= MAX_MARKED_POINTS else None
    ax.plot(midpoints, timeseries["mean_response_ms"].to_numpy(dtype=float), color="C0",
            marker=marker, linewidth=1.5 if marker else 0.8, label="mean response time")
    if "read_mean_response_ms" in timeseries:
        ax.plot(midpoints, timeseries["read_mean_response_ms"].to_numpy(dtype=float),
                color="C1", linewidth=1 if marker else 0.6, alpha=0.8, label="mean read response time")
    _draw_run_events(ax, failures, losses, rebuilds)
    ax.set_xlabel("simulated time (s)")
    # A request is counted in the window it completes in: a burst of slow requests shows
    # where they finish, not where they arrived.
    ax.set_ylabel("mean response time (ms),\nby window of completion")
    ax.set_title("R(t): response time over time")
    ax.set_ylim(bottom=0)
    _legend_outside(ax, bars)
    return bars


def _legend_outside(ax: Axes, *others: Axes) -> None:
    """One legend for ``ax`` and ``others`` (twin axes), above the plot, where it hides no
    data (a failure line under the legend went unseen), and ``ax``'s title above the legend:
    the title's pad is set from the legend's height, however many rows it takes (a fixed pad
    left room for one row, and a second row overprinted the title)."""
    handles, labels = ax.get_legend_handles_labels()
    for other in others:
        more_handles, more_labels = other.get_legend_handles_labels()
        handles += more_handles
        labels += more_labels
    if not handles:
        return
    # Anchored at the axes' top with a gap in points, not in a fraction of the axes' height,
    # so that its top is known whatever height the layout gives the axes.
    legend = ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=min(len(labels), 4),
                       fontsize="small", frameon=False, borderaxespad=LEGEND_GAP_FONTSIZES)
    # The legend's size does not depend on where it is: measure it with a renderer of the
    # figure's resolution, without drawing the figure.
    renderer = RendererAgg(1, 1, ax.figure.dpi)
    height_points = legend.get_window_extent(renderer).height * 72.0 / ax.figure.dpi
    gap_points = LEGEND_GAP_FONTSIZES * legend.prop.get_size_in_points()
    ax.set_title(ax.get_title(), pad=gap_points + height_points + TITLE_GAP_POINTS)


def draw_rebuild_progress(
    ax: Axes,
    timeseries: pd.DataFrame,
    failures: Iterable[float] = (),
    losses: Iterable[float] = (),
    rebuilds: Optional[Dict[str, List[float]]] = None,
) -> Axes:
    """c(t): the fraction of the lost drive's rebuild units current on the spare, at each
    window's end (``rebuilt_fraction``; NaN windows, before any rebuild, are left blank),
    with the same event markers as R(t)."""
    end = timeseries["window_end_s"].to_numpy(dtype=float)
    fraction = timeseries["rebuilt_fraction"].to_numpy(dtype=float)
    rebuilds = rebuilds or {}
    starts = list(rebuilds.get("started", ()))
    known = np.isfinite(fraction)
    if starts and known.any() and starts[0] < end[known][0]:
        # The first value is at the end of the window the rebuild started in: begin the
        # curve at 0 at the start itself rather than partway up.
        end = np.concatenate(([starts[0]], end))
        fraction = np.concatenate(([0.0], fraction))
    ax.plot(end, fraction, color="C0", linewidth=1.5, label="c(t): fraction rebuilt")
    _draw_run_events(ax, failures, losses, rebuilds)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("rebuilt fraction")
    ax.set_ylim(0, 1.05)
    ax.set_title("c(t): fraction of the lost drive rebuilt onto the spare")
    ax.grid(True, alpha=0.3)
    _legend_outside(ax)
    return ax


def has_cache_series(timeseries: pd.DataFrame) -> bool:
    """Whether ``timeseries`` has a buffer cache's RGR (``cache_rgr``) with any value: a run
    with ``[cache]`` in front of its array."""
    return "cache_rgr" in timeseries and bool(np.isfinite(timeseries["cache_rgr"].to_numpy(dtype=float)).any())


def cache_reports_rgr(result: Result) -> bool:
    """Whether the run's buffer cache counted RGR: not when the summary's ``cache`` says
    ``"rgr": null`` (RGR counts surviving-drive reads, which only a RAID-5 placement of whole
    4 KiB blocks locates; the timeseries' ``cache_rgr`` then counts every miss as one read,
    and drawing it as RGR contradicts the summary)."""
    cache = result.summary.get("cache")
    return not (isinstance(cache, dict) and "rgr" in cache and cache["rgr"] is None)


def draw_cache_over_time(
    ax: Axes,
    timeseries: pd.DataFrame,
    failures: Iterable[float] = (),
    losses: Iterable[float] = (),
    rebuilds: Optional[Dict[str, List[float]]] = None,
    rgr: bool = True,
) -> Axes:
    """The buffer cache in front of the array, per window: RGR (surviving-drive reads per
    read block, the VDF paper's Eq. 1) on the left axis and the read hit ratio on the right,
    with the same event markers as R(t): RGR rises at a failure and falls as the rebuild
    makes the lost drive's blocks current. With ``rgr`` false (a run whose summary has no
    RGR, see :func:`cache_reports_rgr`), the read hit ratio alone, on the left axis."""
    end = timeseries["window_end_s"].to_numpy(dtype=float)
    hit_ratio = timeseries["cache_read_hit_ratio"].to_numpy(dtype=float) if "cache_read_hit_ratio" in timeseries else None
    if not rgr:
        if hit_ratio is not None:
            ax.plot(end, hit_ratio, color="C2", linewidth=1.0, alpha=0.8, label="read hit ratio")
        _draw_run_events(ax, failures, losses, rebuilds)
        ax.set_ylabel("read hit ratio")
        ax.set_ylim(0, 1.05)
        ax.grid(True, alpha=0.3)
        ax.set_title("Buffer cache in front of the array (no RGR: not a RAID-5 of whole 4 KiB blocks)")
        _legend_outside(ax)
        return ax
    ax.plot(end, timeseries["cache_rgr"].to_numpy(dtype=float), color="C3", linewidth=1.3,
            label="RGR (surviving-drive reads per read block)")
    _draw_run_events(ax, failures, losses, rebuilds)
    ax.set_ylabel("RGR")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    hits = ax.twinx()
    if hit_ratio is not None:
        hits.plot(end, hit_ratio, color="C2", linewidth=1.0, alpha=0.8, label="read hit ratio")
    hits.set_ylabel("read hit ratio")
    hits.set_ylim(0, 1.05)
    ax.set_title("Buffer cache in front of the array")
    _legend_outside(ax, hits)
    return ax


def draw_response_cdf(
    ax: Axes,
    histogram: pd.DataFrame,
    classes: Sequence[tuple] = CDF_CLASSES,
) -> Axes:
    """Cumulative distribution of response time per class, from histogram buckets
    (``class``, ``upper_ms``, ``count``); classes without requests are left out.

    Responses of 0 ms (requests answered at once, as a buffer cache's hits are) have no
    place on a log axis: the axis starts a decade or less below the smallest response that
    is not 0, each curve starts at its left edge at the share answered at once (a marker
    there), and the legend states that share. (Drawn at the 0 ms bucket's upper bound,
    1e-6 ms, they made six decades of flat line.)"""
    curves = []
    for name, label in classes:
        buckets = histogram[histogram["class"] == name].sort_values("upper_ms")
        upper = buckets["upper_ms"].to_numpy(dtype=float)
        counts = buckets["count"].to_numpy(dtype=float)
        total = counts.sum()
        if total <= 0:
            continue
        cumulative = np.cumsum(counts) / total
        instant = upper <= INSTANT_UPPER_MS
        share = counts[instant].sum() / total
        # Points at the buckets' upper bounds, joined linearly (uniform within a bucket).
        timed = np.isfinite(upper) & ~instant & (counts > 0)
        curves.append((label, int(total), share, upper[timed], cumulative[timed]))
    nonzero = [float(x[0]) for *_, x, _ in curves if len(x)]
    # The axis floor: the decade below the smallest response that is not 0.
    floor = 10.0 ** (math.ceil(math.log10(min(nonzero))) - 1) if nonzero else 0.1
    any_instant = False
    for label, total, share, x, y in curves:
        if share > 0:
            any_instant = True
            # Flat at the share answered at once from the left edge up to the first
            # response that took time, then the buckets.
            x = np.concatenate(([floor], x[:1], x))  # x[:1] is empty when every one was at once
            y = np.concatenate(([share], [share] if len(y) else [], y))
            text = "all at 0 ms" if share >= 1.0 else f"{_share_text(share)} at 0 ms"
            ax.plot(x, y, marker="o", markevery=[0], clip_on=False, label=f"{label} (n={total:,}; {text})")
        else:
            ax.plot(x, y, label=f"{label} (n={total:,})")
    ax.set_xscale("log")
    if any_instant:
        ax.set_xlim(left=floor, right=None if nonzero else floor * 100)
        ax.set_xlabel("response time (ms); ● at the left edge: the share answered at once (0 ms)")
    else:
        ax.set_xlabel("response time (ms)")
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0, 1.02)
    ax.set_title("Response-time CDF")
    ax.grid(True, which="both", alpha=0.3)
    if curves:
        ax.legend(loc="lower right", fontsize="small")
    else:
        ax.text(0.5, 0.5, "no completed requests", ha="center", va="center", transform=ax.transAxes)
    return ax


def _share_text(share: float) -> str:
    """A share as a percentage that never reads 0 % or 100 % when it is not."""
    if 0 < share < 0.001:
        return "<0.1%"
    if 0.999 < share < 1:
        return ">99.9%"
    return f"{share:.1%}"


def plot_run(result: Result, output: Union[str, "os.PathLike[str]"]) -> Path:
    """Draw R(t) and the response-time CDFs of ``result`` into one PNG at ``output``; under
    R(t), sharing its time axis: c(t) for a run with rebuild progress
    (:func:`has_rebuild_progress`), with the rebuild's start and end marked, and the buffer
    cache's RGR and hit ratio for a run with a cache in front of the array
    (:func:`has_cache_series`)."""
    failures, losses, rebuilds = failure_times(result), data_loss_times(result), rebuild_times(result)
    seconds = result.summary.get("simulated_seconds")
    timeseries = complete_windows(result.timeseries, float(seconds) if isinstance(seconds, (int, float)) else None)
    panels = [draw_rebuild_progress] if has_rebuild_progress(timeseries) else []
    if has_cache_series(timeseries):
        panels.append(functools.partial(draw_cache_over_time, rgr=cache_reports_rgr(result)))
    if panels:
        figure = Figure(figsize=(10, 8 + 2.5 * len(panels)), layout="constrained")
        grid = figure.add_gridspec(2 + len(panels), 1, height_ratios=(3, *(1.5 for _ in panels), 2))
        over_time = figure.add_subplot(grid[0])
        draw_response_over_time(over_time, timeseries, failures, losses, rebuilds)
        below = [figure.add_subplot(grid[1 + i], sharex=over_time) for i in range(len(panels))]
        for ax, draw in zip(below, panels):
            draw(ax, timeseries, failures, losses, rebuilds)
        # The time axis is labelled once, under the last panel.
        for ax in (over_time, *below[:-1]):
            ax.set_xlabel("")
            ax.tick_params(labelbottom=False)
        below[-1].set_xlabel("simulated time (s)")
        cdf = figure.add_subplot(grid[-1])
    else:
        # Runs without rebuild or cache keep the two-panel layout they always had (and,
        # having no rebuild times, the same markers).
        figure = Figure(figsize=(10, 8), layout="constrained")
        over_time, cdf = figure.subplots(2, 1, height_ratios=(3, 2))
        draw_response_over_time(over_time, timeseries, failures, losses, rebuilds)
    draw_response_cdf(cdf, result.histogram)
    title = f"{run_name(result)} ({result.config_hash[:8]})"
    if result.data_loss:
        title += " — data loss"
    figure.suptitle(title)
    return save_figure(figure, output, dpi=120)


def run_name(result: Result) -> str:
    """What the plot's title calls a run: its configuration's name (the file's stem, kept in
    the manifest), else its run directory's name, else "raidlab run"."""
    manifest = result.manifest or {}
    name = manifest.get("config_name")
    if isinstance(name, str) and name:
        return name
    directory = getattr(result, "directory", None)
    return Path(directory).name if directory else "raidlab run"


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
