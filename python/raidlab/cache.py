"""The buffer cache's stand-alone simulator: ``raidlab cache`` and :func:`simulate`.

A trace (libCacheSim's ``oracleGeneral``, plain or zstd, or any block trace raidlab reads) is
streamed once through every combination of policy, cache size, drive count and failed drive
(the core's ``cache::sim``); each combination is a *cell* with its hit ratio and its RGR, the
surviving-drive I/Os per request of the VDF paper (``docs/cache.md``)::

    raidlab cache TRACE --policy lru,vdf-lru --size 64Ki,128Ki --drives 5,6,7,8 --failed-drive all

This module builds the simulation's configuration, calls the core, and shows the report: a
table (one row per policy, size and drive count; a failed drive of ``all`` is averaged over
the drives, as the notes recommend), JSON, or a plot of RGR over time.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from raidlab import _core
from raidlab.config import to_toml, without_excerpt
from raidlab.exceptions import ConfigError, RaidlabIOError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["CacheReport", "simulate", "parse_size", "summary_rows", "add_arguments", "command"]

#: Binary size suffixes accepted by ``--size`` (blocks of 4 KiB).
_SUFFIXES = {"": 1, "ki": 2**10, "mi": 2**20, "gi": 2**30}

#: The base policy each VDF variant is compared with in the table's last column.
_BASE_OF = {"vdf-lru": "lru", "vdf-lfu": "lfu", "vdf-arc": "arc", "vdf-clock": "clock"}


def parse_size(text: str) -> int:
    """A cache size in blocks: a whole number, optionally with a binary suffix (``64Ki`` =
    65,536, ``2Mi``)."""
    match = re.fullmatch(r"\s*(\d+)\s*([KkMmGg]i)?\s*", text)
    if not match:
        raise ValueError(f"expected a number of blocks such as 65536, 64Ki or 2Mi, not {text!r}")
    return int(match.group(1)) * _SUFFIXES[(match.group(2) or "").lower()]


@dataclass(frozen=True)
class CacheReport:
    """What the core reports: the trace's counts, one entry per cell (``cells``, each with
    ``total`` and ``after_warmup`` tallies and its ``windows`` series) and the miss stream
    written, if any. ``raw`` is the whole report as the core's JSON gave it."""

    raw: Dict[str, Any]

    @property
    def trace(self) -> Dict[str, Any]:
        return dict(self.raw["trace"])

    @property
    def cells(self) -> List[Dict[str, Any]]:
        return list(self.raw["cells"])

    @property
    def miss_trace(self) -> Optional[Dict[str, Any]]:
        return self.raw.get("miss_trace")

    def cells_frame(self) -> Any:
        """One row per cell (pandas): policy, size, drives, failed drive, and the totals and
        after-warm-up counts and ratios as ``total_…`` and ``after_…`` columns."""
        import pandas as pd

        rows = []
        for cell in self.cells:
            row = {key: cell[key] for key in ("policy", "size_blocks", "drives", "failed_drive", "layout",
                                              "warmup_requests")}
            for prefix, tally in (("total", cell["total"]), ("after", cell["after_warmup"])):
                row.update({f"{prefix}_{key}": value for key, value in tally.items()})
            rows.append(row)
        return pd.DataFrame(rows)


def simulate(
    trace: Union[str, Path],
    *,
    policies: Sequence[str],
    sizes: Sequence[int],
    drives: Sequence[int] = (5,),
    failed_drive: Union[int, str] = 0,
    layout: str = "raid5",
    chunk_kib: int = 64,
    writes: str = "access",
    write_penalty: Optional[str] = None,
    fail_at_request: int = 0,
    repair_at_request: Optional[int] = None,
    window_requests: int = 1_000_000,
    miss_trace: Optional[Union[str, Path]] = None,
    trace_format: str = "auto",
    trace_keys: Optional[Mapping[str, Any]] = None,
    progress: Optional[Callable[[float, int], Optional[bool]]] = None,
) -> Optional[CacheReport]:
    """Stream ``trace`` through every policy × size × drive count × failed drive. Keys as in
    ``docs/cache.md``; ``write_penalty`` ``None`` is the layout's default (``paper`` for
    RAID-5, ``direct`` for RAID-6); ``trace_keys`` adds keys of the trace table (``csv``,
    ``max_records``). ``None`` when ``progress`` returned ``False``."""
    config = simulation_config(
        trace, policies=policies, sizes=sizes, drives=drives, failed_drive=failed_drive, layout=layout,
        chunk_kib=chunk_kib, writes=writes, write_penalty=write_penalty, fail_at_request=fail_at_request,
        repair_at_request=repair_at_request, window_requests=window_requests, miss_trace=miss_trace,
        trace_format=trace_format, trace_keys=trace_keys,
    )
    try:
        text = _core.cache_simulate(to_toml(config), str(Path.cwd()), progress)
    except ConfigError as error:
        # The TOML is raidlab's, written from the arguments: the key names the argument, and
        # the line and excerpt of that text would only confuse.
        raise ConfigError(without_excerpt(error.message), key=error.key) from None
    return None if text is None else CacheReport(json.loads(text))


def simulation_config(trace: Union[str, Path], **keys: Any) -> Dict[str, Any]:
    """The core's configuration table for :func:`simulate`'s arguments."""
    trace_table: Dict[str, Any] = {"path": str(trace), "format": keys.pop("trace_format")}
    trace_table.update(dict(keys.pop("trace_keys") or {}))
    config: Dict[str, Any] = {"trace": trace_table}
    miss_trace = keys.pop("miss_trace")
    repair = keys.pop("repair_at_request")
    if keys.get("write_penalty") is None:
        keys.pop("write_penalty", None)  # the layout's default
    config.update({key: (list(value) if isinstance(value, (list, tuple)) else value) for key, value in keys.items()})
    if miss_trace is not None:
        config["miss_trace"] = str(miss_trace)
    if repair is not None:
        config["repair_at_request"] = repair
    return config


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------


def summary_rows(report: CacheReport) -> List[Dict[str, Any]]:
    """One row per policy, size and drive count: hit ratio, RGR and RGR after warm-up, each
    the mean over the cells' failed drives (one cell unless the failed drive was ``all``),
    and for a VDF policy the relative reduction of RGR after warm-up against its base policy
    in the same cells (``None`` when the base was not run)."""
    groups: Dict[tuple, List[Dict[str, Any]]] = {}
    for cell in report.cells:
        groups.setdefault((cell["policy"], cell["size_blocks"], cell["drives"]), []).append(cell)

    def mean(cells: Iterable[Dict[str, Any]], tally: str, key: str) -> Optional[float]:
        values = [cell[tally][key] for cell in cells if cell[tally][key] is not None]
        return sum(values) / len(values) if values else None

    rows = []
    for (policy, size, drives), cells in groups.items():
        failed = sorted({cell["failed_drive"] for cell in cells}, key=lambda d: -1 if d is None else d)
        rows.append({
            "policy": policy,
            "size_blocks": size,
            "drives": drives,
            "failed_drive": failed[0] if len(failed) == 1 else f"mean of {len(failed)}",
            "hit_ratio": mean(cells, "total", "hit_ratio"),
            "rgr": mean(cells, "total", "rgr"),
            "rgr_after_warmup": mean(cells, "after_warmup", "rgr"),
        })
    by_key = {(row["policy"], row["size_blocks"], row["drives"]): row for row in rows}
    for row in rows:
        base = by_key.get((_BASE_OF.get(row["policy"], ""), row["size_blocks"], row["drives"]))
        vdf, ori = row["rgr_after_warmup"], base and base["rgr_after_warmup"]
        row["rgr_reduction"] = (ori - vdf) / ori if base and vdf is not None and ori else None
    return rows


def _ratio(value: Optional[float], percent: bool = False) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value:.1%}" if percent else f"{value:.4f}"


def print_report(console: Console, report: CacheReport) -> None:
    """The table ``raidlab cache`` prints, with the trace's counts under it."""
    from rich.table import Table

    table = Table(title="Buffer cache: hit ratio and RGR (surviving-drive I/Os per request)", title_justify="left")
    for heading, justify in (("policy", "left"), ("size (blocks)", "right"), ("drives", "right"),
                             ("failed drive", "right"), ("hit ratio", "right"), ("RGR", "right"),
                             ("RGR after warm-up", "right"), ("RGR vs base", "right")):
        table.add_column(heading, justify=justify)
    for row in summary_rows(report):
        failed = row["failed_drive"]
        table.add_row(
            row["policy"], f"{row['size_blocks']:,}", str(row["drives"]),
            "none" if failed is None else str(failed),
            _ratio(row["hit_ratio"], percent=True), _ratio(row["rgr"]), _ratio(row["rgr_after_warmup"]),
            "—" if row["rgr_reduction"] is None else f"{-row['rgr_reduction']:+.1%}",
        )
    console.print(table)
    trace = report.trace
    facts = [f"{trace['requests']:,} block requests from {trace['records']:,} records ({trace['format']})"]
    if trace.get("writes_skipped"):
        facts.append(f"{trace['writes_skipped']:,} write requests left out")
    if trace.get("size_zero_skipped"):
        facts.append(f"{trace['size_zero_skipped']:,} records of size 0 skipped")
    console.print(f"{trace['path']}: " + "; ".join(facts), markup=False, highlight=False, soft_wrap=True)
    if report.miss_trace:
        miss = report.miss_trace
        console.print(f"miss stream: {miss['path']} ({miss['lines']:,} lines, {miss['format']} format; "
                      f"replay with workload.trace.path)", markup=False, highlight=False, soft_wrap=True)


def plot_rgr(report: CacheReport, path: Union[str, Path]) -> Path:
    """RGR per window over the trace, one line per cell (at most 24), to a PNG. Each window's
    step runs to the next window's first request, the last one's to the trace's end, so a
    trace of one window draws one flat step (a lone point drew nothing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = report.cells[:24]
    end = int(report.trace["requests"])
    figure, axes = plt.subplots(figsize=(9, 4.5))
    for cell in cells:
        windows = cell["windows"]
        if not windows["first_request"]:
            continue
        failed = "none" if cell["failed_drive"] is None else cell["failed_drive"]
        label = f"{cell['policy']} {cell['size_blocks']:,} blocks, {cell['drives']} drives, failed {failed}"
        xs = list(windows["first_request"]) + [max(end, windows["first_request"][-1] + 1)]
        ys = list(windows["rgr"]) + [windows["rgr"][-1]]
        axes.plot(xs, ys, drawstyle="steps-post", label=label)
    axes.set_xlabel("request (4 KiB block)")
    axes.set_ylabel("RGR (surviving-drive I/Os per request)")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    if cells:
        axes.legend(fontsize="small")
    figure.tight_layout()
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(target, dpi=120)
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(target), errno=error.errno) from None
    finally:
        plt.close(figure)
    return target


# ---------------------------------------------------------------------------------------------
# raidlab cache
# ---------------------------------------------------------------------------------------------


def _list_of(parse: Callable[[str], Any], what: str) -> Callable[[str], List[Any]]:
    def parse_list(text: str) -> List[Any]:
        try:
            return [parse(item) for item in text.split(",") if item.strip()]
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{what}: {error}") from None

    return parse_list


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected a whole number, not {text!r}") from None


def _policy_names() -> List[str]:
    from raidlab.catalogue import family

    return family("caches").names


def add_arguments(parser: argparse.ArgumentParser, handler: Callable[..., int]) -> None:
    """Give ``raidlab cache``'s parser its description and arguments, calling ``handler``."""
    parser.description = ("Stream a block trace (any format raidlab reads, or libCacheSim's oracleGeneral, "
                          "plain or zstd) through every policy × size × drive count × failed drive in one pass, "
                          "and report each cache's hit ratio and RGR (surviving-drive I/Os per request, "
                          "VDF paper Eq. 1). See docs/cache.md.")
    parser.add_argument("trace", metavar="TRACE")
    parser.add_argument("--policy", type=_list_of(str, "--policy"), default=["lru"], metavar="A,B",
                        help="policies (default: lru): " + ", ".join(_policy_names()))
    parser.add_argument("--size", type=_list_of(parse_size, "--size"), required=True, metavar="N,M",
                        help="cache sizes in 4 KiB blocks, e.g. 65536 or 64Ki,2Mi")
    parser.add_argument("--drives", type=_list_of(_int, "--drives"), default=[5], metavar="N,M",
                        help="drive counts of the array (default: 5)")
    parser.add_argument("--failed-drive", default="0", metavar="D",
                        help="the failed drive: a number, all (one cell per drive, averaged in the table) "
                             "or none (default: 0)")
    parser.add_argument("--layout", default="raid5", choices=("raid5", "raid6"),
                        help="parity layout of the penalties and the placement (default: raid5)")
    parser.add_argument("--chunk-kib", type=int, default=64, metavar="KIB",
                        help="stripe unit in KiB, a multiple of 4 (default: 64, Linux md's)")
    parser.add_argument("--format", default="auto",
                        help="trace format: oracleGeneral or a block format (spc, msr, …); default: auto")
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                        help="other keys of the simulation, e.g. --set trace.max_records=100000 "
                             "--set write_penalty=direct (as in docs/cache.md)")
    parser.add_argument("--writes", choices=("access", "skip"), default="access",
                        help="writes are cache requests that write through (access, default) or are left "
                             "out (skip, as the paper's simulations)")
    parser.add_argument("--fail-at", type=int, default=0, metavar="REQUEST",
                        help="the request from which the drive is failed (default: 0)")
    parser.add_argument("--repair-at", type=int, default=None, metavar="REQUEST",
                        help="the request from which it counts as rebuilt (default: never)")
    parser.add_argument("--window", type=int, default=1_000_000, metavar="REQUESTS",
                        help="requests per window of the RGR-over-time series (default: 1,000,000)")
    parser.add_argument("--miss-trace", metavar="FILE",
                        help="write the miss stream (after warm-up) of the one cache as an SPC trace "
                             "that raidlab run replays")
    parser.add_argument("--plot", metavar="PNG", help="draw RGR over time, one line per cache")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=handler)


#: The option of ``raidlab cache`` each key of the core's configuration comes from.
_OPTION_OF_KEY = {
    "trace": "TRACE", "trace.path": "TRACE", "trace.format": "--format", "policies": "--policy",
    "sizes": "--size", "drives": "--drives", "failed_drive": "--failed-drive", "layout": "--layout",
    "chunk_kib": "--chunk-kib", "writes": "--writes", "fail_at_request": "--fail-at",
    "repair_at_request": "--repair-at", "window_requests": "--window", "miss_trace": "--miss-trace",
}


def _option_error(error: ConfigError, overrides: Sequence[str]) -> ConfigError:
    """``error`` of the core's table, which raidlab wrote from the command line, named by the
    user's option (``--fail-at``, ``--set write_penalty``) and without the line and excerpt
    of that table, which the user never saw."""
    key = error.key[len("cache."):] if error.key.startswith("cache.") else ""
    plain = re.sub(r"\[\d+\]", "", key)
    set_keys = [item.split("=", 1)[0].strip() for item in overrides]
    given = next((name for name in reversed(set_keys) if plain == name or plain.startswith(name + ".")), None)
    if given is not None:
        option = f"--set {given}"
    else:
        option = _OPTION_OF_KEY.get(plain) or _OPTION_OF_KEY.get(plain.split(".")[0]) or (f"--set {plain}" if plain else "")
    return ConfigError(without_excerpt(error.message), key=option)


def _warn(err: Console, message: str) -> None:
    err.print(f"warning: {message}", markup=False, highlight=False, soft_wrap=True)


def _failed_drive(text: str) -> Union[int, str]:
    text = text.strip()
    return int(text) if text.isdigit() else text


def command(args: argparse.Namespace, out: Console, err: Console, reporter: Any) -> int:
    """Run ``raidlab cache`` (``reporter``: the progress callback, closed by the caller)."""
    from raidlab.config import apply_overrides, parse_toml

    config = simulation_config(
        Path(args.trace).resolve(), policies=args.policy, sizes=args.size, drives=args.drives,
        failed_drive=_failed_drive(args.failed_drive), layout=args.layout, chunk_kib=args.chunk_kib,
        writes=args.writes, write_penalty=None, fail_at_request=args.fail_at,
        repair_at_request=args.repair_at, window_requests=args.window,
        miss_trace=Path(args.miss_trace).resolve() if args.miss_trace else None,
        trace_format=args.format, trace_keys=None,
    )
    text = to_toml(config)
    if args.set:
        text = apply_overrides(text, args.set)
    try:
        output = _core.cache_simulate(text, str(Path.cwd()), reporter)
    except ConfigError as error:
        raise _option_error(error, args.set) from None
    if output is None:
        raise KeyboardInterrupt
    report = CacheReport(json.loads(output))
    requests = int(report.trace["requests"])
    failing = any(cell["failed_drive"] is not None for cell in report.cells)
    fail_at = parse_toml(text).get("fail_at_request", 0)  # --fail-at, or --set fail_at_request
    if failing and fail_at > 0 and fail_at >= requests:
        _warn(err, f"--fail-at {fail_at:,} is at or past the trace's end ({requests:,} block requests): no request "
                   "saw the failed drive, so every RGR and hit ratio here is the fault-free array's")
    plotted = False
    if args.plot:
        if requests == 0:
            _warn(err, f"the trace holds no block requests: nothing to plot, {args.plot} not written")
        else:
            if requests <= args.window:
                _warn(err, f"the trace's {requests:,} block requests fill less than one --window of "
                           f"{args.window:,}: each line of {args.plot} is one flat step, the whole run's RGR; "
                           f"give a smaller --window (such as {max(1, requests // 20):,}) to see RGR over time")
            plot_rgr(report, args.plot)
            plotted = True
    if args.json:
        out.print_json(data=report.raw)
    else:
        print_report(out, report)
        if plotted:
            out.print(f"wrote {args.plot}", markup=False, highlight=False, soft_wrap=True)
    return 0

