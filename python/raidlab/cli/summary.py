"""The summary of a run as the ``raidlab`` commands print it: ``raidlab run`` and ``raidlab
summary RUN_DIR`` (:func:`print_summary`: response times, the run's facts, rebuilds, periods,
content checks, the cache, data loss), and the warnings a run prints (:func:`run_warnings`).

Like the rest of the command line, nothing slow is imported at the top of this module: rich
is imported by the functions that draw a table.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

if TYPE_CHECKING:
    from rich.console import Console

    from raidlab.results import Result

__all__ = ["print_summary", "print_rebuilds", "print_periods", "run_warnings", "utilization_while_working"]


#: Response-time classes of the summary, with the labels the summary table shows.
RESPONSE_CLASSES = (
    ("all", "all"),
    ("read", "reads"),
    ("write", "writes"),
    ("degraded_read", "degraded reads"),
    ("failed_set_read", "reads in the failed set"),
)


#: A drive import's warning starts with the spec file and line (``ibm18es.diskspecs:12: …``);
#: the run's own start with a key path.
_DRIVE_IMPORT_WARNING = re.compile(r"^\S+:\d+: ")


def run_warnings(summary: Mapping[str, Any]) -> List[str]:
    """The summary's warnings about the run itself (settings that make little sense, records
    of a trace moved or folded), each printed in full; the drive import's warnings, one per
    DiskSim parameter not modelled, are only counted in the summary table."""
    return [str(w) for w in summary.get("warnings") or [] if not _DRIVE_IMPORT_WARNING.match(str(w))]


def _ms(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{float(value):.2f}"


def print_summary(console: Console, result: Result, run_dir: Optional[Path] = None) -> None:
    """The summary tables ``raidlab run`` prints."""
    from rich.table import Table

    summary = result.summary
    response = summary.get("response_ms") or {}
    table = Table(title="Response time (ms)", title_justify="left")
    table.add_column("class")
    for heading in ("requests", "mean", "p50", "p90", "p99", "max"):
        table.add_column(heading, justify="right")
    for key, label in RESPONSE_CLASSES:
        stats = response.get(key) or {}
        count = int(stats.get("count") or 0)
        if count == 0:
            table.add_row(label, "0", *("—" for _ in range(5)))
        else:
            table.add_row(label, f"{count:,}", *(_ms(stats.get(s)) for s in ("mean", "p50", "p90", "p99", "max")))
    console.print(table)
    print_rebuilds(console, summary)

    facts = Table(show_header=False, title="Run", title_justify="left")
    facts.add_column("what")
    facts.add_column("value")
    if "simulated_seconds" in summary:
        facts.add_row("simulated time", f"{float(summary['simulated_seconds']):.3f} s")
    if "requests_completed" in summary:
        facts.add_row("requests completed", f"{int(summary['requests_completed']):,}")
    lost_requests = int(summary.get("lost_requests") or 0)
    if lost_requests:
        facts.add_row("requests lost", _lost_requests_text(summary))
    working = utilization_while_working(result)
    if working:
        mean = sum(working) / len(working)
        facts.add_row(
            "drive utilization",
            f"{min(working):.1%} – {max(working):.1%} (mean {mean:.1%}; each drive over the time it worked, "
            f"a failed one until it failed)",
        )
    elif "mean_utilization" in (summary.get("drives") or {}):
        facts.add_row("drive utilization", f"mean {float(summary['drives']['mean_utilization']):.1%}")
    facts.add_row("drive failures", ", ".join(_failure_text(f) for f in result.failures) or "none")
    crashed = int(summary.get("crashed_requests") or 0)
    crashes = [float(t) for t in summary.get("crashes_at_s") or []]
    if crashes or crashed:
        at = ", ".join(f"{t:g} s" for t in crashes)
        facts.add_row("controller crashes", f"at {at}: {crashed:,} requests in flight were never answered"
                      if at else f"{crashed:,} requests in flight were never answered")
    facts.add_row("data loss", _data_loss_text(result))
    content = summary.get("content")
    if isinstance(content, Mapping):
        facts.add_row("content check", _content_text(content))
    cache = summary.get("cache")
    if isinstance(cache, Mapping):
        facts.add_row("buffer cache", _cache_text(cache))
        if isinstance(cache.get("content"), Mapping):
            facts.add_row("cache content check", _content_text(cache["content"]))
    if result.cancelled:
        facts.add_row("cancelled", "yes — the run stopped early")
    warnings = summary.get("warnings") or []
    own = run_warnings(summary)
    if len(warnings) > len(own):
        facts.add_row("not modelled",
                      f"{_counted(len(warnings) - len(own), 'configured parameter')}: see \"warnings\" in summary.json")
    if own:
        facts.add_row("warnings", f"{len(own)}, printed above and in \"warnings\" in summary.json")
    if run_dir is not None:
        facts.add_row("run directory", str(run_dir))
    console.print(facts)


def print_rebuilds(console: Console, summary: Mapping[str, Any]) -> None:
    """For a run that rebuilt onto spares (``summary["rebuilds"]`` not empty): each rebuild
    (member, target slot, start, end, rebuild time, units made current by the rebuild
    executor and by user writes), then response time per period of the run (normal,
    degraded, rebuilding, after), leaving out periods without completed requests. Prints
    nothing for other runs."""
    from rich.table import Table

    rebuilds = summary.get("rebuilds") or []
    if rebuilds:
        _print_rebuild_table(console, rebuilds)
    # Why a rebuild stopped or was still running, and why a failed member is not rebuilt.
    for rebuild in rebuilds:
        if rebuild.get("reason"):
            what = "healing copy" if rebuild.get("kind") == "healing" else "rebuild"
            console.print(f"member {rebuild.get('member')}'s {what} onto slot {rebuild.get('target_slot')} "
                          f"{'was abandoned' if rebuild.get('outcome') == 'abandoned' else 'was still running'}: "
                          f"{rebuild['reason']}", highlight=False)
    for waiting in summary.get("members_not_rebuilt") or []:
        console.print(f"member {waiting.get('member')} not rebuilt: {waiting.get('reason')}", highlight=False)
    print_periods(console, summary)


def _print_rebuild_table(console: Console, rebuilds: Sequence[Mapping[str, Any]]) -> None:
    from rich.table import Table

    # Piggybacked units exist only with rebuild.piggyback on: a column of zeros otherwise.
    piggyback = any(int(rebuild.get("units_by_piggyback") or 0) for rebuild in rebuilds)
    table = Table(title="Rebuilds onto spares", title_justify="left")
    table.add_column("member")
    for heading in ("onto slot", "failed (s)", "started (s)", "ended (s)", "rebuild time", "units",
                    "by rebuild I/O", "by user writes", *(("by piggyback",) if piggyback else ())):
        table.add_column(heading, justify="right")
    for rebuild in rebuilds:
        # (A healing copy out of a distributed spare is marked: the member was not lost.)
        row = [
            f"{rebuild.get('member')}{' (healing copy)' if rebuild.get('kind') == 'healing' else ''}",
            str(rebuild.get("target_slot")),
            _seconds(rebuild.get("failed_at_s")),
            _seconds(rebuild.get("started_at_s")),
            _seconds(rebuild.get("ended_at_s")),
            _rebuild_time_text(rebuild),
            _count(rebuild.get("units")),
            _count(rebuild.get("units_by_executor")),
            _count(rebuild.get("units_by_user_writes")),
        ]
        if piggyback:
            row.append(_count(rebuild.get("units_by_piggyback")))
        table.add_row(*row)
    console.print(table)


def print_periods(console: Console, summary: Mapping[str, Any]) -> None:
    """Response time per period of a run that rebuilt onto spares or lost data (normal,
    degraded, rebuilding, after), leaving out periods without completed requests. A period
    that began at or after the data loss is labelled data loss (the core names it by the
    array's mode: degraded), one that went on past it says so, and the requests lost are a
    row of their own: they are in no period's response times."""
    from rich.table import Table

    from raidlab.results import REBUILD_PERIODS

    lost = int(summary.get("lost_requests") or 0)
    if not (summary.get("rebuilds") or summary.get("data_loss")):
        return
    periods = summary.get("response_ms_by_period") or {}
    names = [*REBUILD_PERIODS, *(name for name in periods if name not in REBUILD_PERIODS)]
    shown = [(name, periods[name]) for name in names
             if isinstance(periods.get(name), Mapping) and int(periods[name].get("count") or 0) > 0]
    # In the order the run first spent time in them (after a data loss, a degraded array
    # comes after the rebuild it stopped).
    first = {}
    for start, _, name in _period_stretches(periods):
        first.setdefault(name, start)
    shown.sort(key=lambda item: first.get(item[0], math.inf))
    if not shown and not lost:
        return
    by_period = Table(title="Response time by period (ms)", title_justify="left")
    by_period.add_column("period")
    for heading in ("requests", "mean", "p99"):
        by_period.add_column(heading, justify="right")
    labels = _period_labels(summary)
    for name, stats in shown:
        by_period.add_row(labels.get(name, name.replace("_", " ")), f"{int(stats['count']):,}",
                          _ms(stats.get("mean")), _ms(stats.get("p99")))
    if lost:
        by_period.add_row("lost to data loss (no response time)", f"{lost:,}", "—", "—")
    console.print(by_period)


def _period_labels(summary: Mapping[str, Any]) -> Dict[str, str]:
    """What the period table calls each period: its name, but after a data loss at t, a
    period the array was in only from t on is "data loss (from t s)", and one it was in both
    before and after t is "<name>, data loss from t s"."""
    periods = summary.get("response_ms_by_period") or {}
    labels = {name: name.replace("_", " ") for name in periods}
    loss_at = summary.get("data_loss_at_s")
    if not summary.get("data_loss") or not isinstance(loss_at, (int, float)):
        return labels
    loss_at = float(loss_at)
    before: Dict[str, bool] = {}
    after: Dict[str, bool] = {}
    for start, end, name in _period_stretches(periods):
        if start < loss_at:
            before[name] = True
        if end > loss_at:
            after[name] = True
    for name in after:
        if name == "data_loss":
            continue
        labels[name] = f"{labels[name]}, data loss from {loss_at:g} s" if before.get(name) else f"data loss (from {loss_at:g} s)"
    return labels


def _period_stretches(periods: Mapping[str, Any]) -> List[Tuple[float, float, str]]:
    """The stretches of time (start, end, period) the array spent in each period of
    ``response_ms_by_period``, from their ``starts_s``, in time order, leaving out those it
    left at once (no request arrived in them). At one instant, periods are taken in the order
    a run passes through them (a failure enters degraded, a rebuild starting at once
    rebuilding)."""
    from raidlab.results import REBUILD_PERIODS

    order = {name: index for index, name in enumerate(REBUILD_PERIODS)}
    starts = sorted((float(start), order.get(name, len(order)), name) for name, stats in periods.items()
                    if isinstance(stats, Mapping) for start in stats.get("starts_s") or [])
    stretches = []
    for index, (start, _, name) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else math.inf
        if end > start:
            stretches.append((start, end, name))
    return stretches


def _lost_requests_text(summary: Mapping[str, Any]) -> str:
    """The requests that lost data: counted among those completed, in no response time."""
    lost = int(summary.get("lost_requests") or 0)
    sectors = []
    if int(summary.get("lost_read_sectors") or 0):
        sectors.append(f"{int(summary['lost_read_sectors']):,} sectors unreadable")
    if int(summary.get("lost_write_sectors") or 0):
        sectors.append(f"{int(summary['lost_write_sectors']):,} not stored")
    detail = f"; {', '.join(sectors)}" if sectors else ""
    completed = summary.get("requests_completed")
    among = f" of the {int(completed):,} completed" if isinstance(completed, int) else ""
    return f"{lost:,}{among} (answered with data loss, in no response time above){detail}"


def _failure_text(failure: Mapping[str, Any]) -> str:
    """One drive failure, saying what its slot held (see
    :func:`raidlab.results.failures_in_time_order`): a member in a spare's slot is the
    member's failure, not a spare's."""
    slot, member, holds = failure.get("drive"), failure.get("member"), failure.get("holds")
    at = f"at {float(failure.get('at_s', float('nan'))):g} s"
    if holds == "member in spare slot":
        return f"member {member} (in spare slot {slot}) {at}"
    if holds == "rebuild target":
        return f"spare {slot} (being rebuilt onto for member {member}) {at}"
    if holds == "spare":
        return f"spare {slot} (idle) {at}"
    return f"drive {slot} {at}"


def _seconds(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{float(value):.1f}"


def _count(value: Any) -> str:
    return "—" if value is None else f"{int(value):,}"


def _rebuild_time_text(rebuild: Mapping[str, Any]) -> str:
    """The rebuild's duration, said with its outcome when it did not complete."""
    seconds = rebuild.get("rebuild_time_s")
    outcome = rebuild.get("outcome")
    if seconds is None or outcome == "running":
        return "unfinished"
    if outcome == "complete":
        return f"{float(seconds):.1f} s"
    return f"{outcome} after {float(seconds):.1f} s"


def utilization_while_working(result: Result) -> List[float]:
    """Each drive's utilization from the ``drives`` table, read without pandas: busy time
    over the time the drive worked (the core counts a failed drive until it failed, not its
    dead time after)."""
    values = result.column("drives", "utilization") or []
    return [float(u) for u in values if u is not None and math.isfinite(float(u))]


def _content_text(content: Mapping[str, Any]) -> str:
    """The content model's verdict: every read checked against the value last written, and
    every rebuilt sector against the lost drive's."""
    stale = int(content.get("stale_sectors") or 0)
    wrong = int(content.get("rebuilt_sectors_wrong") or 0)
    checked = int(content.get("sectors_checked") or 0)
    rebuilt = int(content.get("rebuilt_sectors_checked") or 0)
    if stale == 0 and wrong == 0:
        text = f"passed — {checked:,} sectors read, none stale"
        return text + (f"; {rebuilt:,} rebuilt sectors, none wrong" if rebuilt else "")
    reads = int(content.get("stale_reads") or 0)
    parts = []
    if stale:
        parts.append(f"{stale:,} of {checked:,} sectors read were stale, in {reads:,} read{'' if reads == 1 else 's'}")
    if wrong:
        parts.append(f"{wrong:,} of {rebuilt:,} rebuilt sectors were wrong")
    return "FAILED — " + "; ".join(parts)


def _cache_text(cache: Mapping[str, Any]) -> str:
    """The buffer cache in front of the array (``summary["cache"]``): its policy and size,
    the read hit ratio, RGR (surviving-drive reads per block read, the VDF paper's Eq. 1)
    over the run and while the array was faulty, and the write-backs."""
    def ratio(key: str, form: str) -> str:
        value = cache.get(key)
        return "—" if value is None or not math.isfinite(float(value)) else format(float(value), form)

    size = int(cache.get("size_blocks") or 0)
    text = (f"{cache.get('policy')} of {_counted(size, 'block')} ({_bytes_text(size * 4096)}): read hits "
            f"{ratio('read_hit_ratio', '.1%')}")
    if cache.get("rgr") is not None:
        text += f", RGR {ratio('rgr', '.3f')} (faulty {ratio('rgr_faulty', '.3f')})"
    return text + f", {int(cache.get('destage_writes') or 0):,} destage writes"


def _bytes_text(count: int) -> str:
    """A size in bytes in the largest binary unit it fills at least once, to three
    significant figures or all of its whole units (4 KiB, 15.6 MiB, 1.50 GiB)."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            value = count / scale
            if value == int(value):
                return f"{int(value):,} {unit}"
            return f"{value:,.{max(0, 2 - int(math.log10(value)))}f} {unit}"
    return f"{count:,} {'byte' if count == 1 else 'bytes'}"


def _data_loss_text(result: Result) -> str:
    if not result.data_loss:
        return "no"
    kinds = [str(kind) for kind in result.column("outcomes", "kind") or []]
    times = result.column("outcomes", "time_s") or []
    details = result.column("outcomes", "detail") or [""] * len(kinds)
    lost = sorted((float(time), str(detail)) for kind, time, detail in zip(kinds, times, details) if "loss" in kind)
    if not lost:
        return "YES"
    first_time, first_detail = lost[0]
    detail = f" ({first_detail})" if first_detail else ""
    if len(lost) == 1:
        return f"YES — at {first_time:g} s{detail}"
    return f"YES — {len(lost):,} events, first at {first_time:g} s{detail}"


def _counted(count: int, thing: str) -> str:
    """``count`` things, in the singular for one: "1 spare", "2 spares"."""
    return f"{count:,} {thing}" if count == 1 else f"{count:,} {thing}s"
