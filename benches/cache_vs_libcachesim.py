"""raidlab's buffer-cache simulator against libCacheSim's, side by side (``make bench-cache``).

Generates a Zipf(1.0) trace (by default 10 M requests over 1 M blocks, seeded) in libCacheSim's
``oracleGeneral`` format, then times, in alternating rounds on the same file:

* raidlab's LRU with a 100,000-block cache (``raidlab._core.cache_simulate``, reading the file);
* libCacheSim's LRU with the same cache (``libcachesim``'s ``process_trace``, reading the file),
  as it comes (its hash table sized 2²⁴ buckets) and with the table sized for the cache
  (2^⌈log₂ 2C⌉ buckets, the "tuned" case);
* raidlab's LFU, VDF-LRU and VDF-LFU (8 drives, drive 0 failed for all four policies).

It prints requests per second (best and median of the rounds, wall clock, and from the process's
CPU time), raidlab's LRU against libCacheSim's, and VDF's cost against its base policy; and it
checks that both LRUs miss on the same requests in number. libCacheSim is installed into this
Python's environment from PyPI (``pip install libcachesim``) when it is missing.

    python benches/cache_vs_libcachesim.py [--requests N] [--blocks N] [--size N] [--rounds R] [--json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from raidlab import _core
from raidlab.config import to_toml

#: Where the generated trace is kept between runs (it takes seconds to write).
TRACE_DIR = Path(__file__).resolve().parent.parent / "target" / "bench-cache"

#: The seed of the trace.
SEED = 20261125


def zipf_trace(requests: int, blocks: int, alpha: float = 1.0) -> Path:
    """The Zipf(``alpha``) trace of ``requests`` over ``blocks`` blocks as an oracleGeneral
    file (written once, then reused): rank r drawn with probability ∝ r^-alpha by inverse
    transform, ranks scattered over the block numbers by a fixed permutation (so that hot
    blocks lie on every drive), one request per block, 4096 bytes, ten thousand a second."""
    TRACE_DIR.mkdir(parents=True, exist_ok=True)
    path = TRACE_DIR / f"zipf-{alpha:g}-{requests}-{blocks}-{SEED}.oracleGeneral.bin"
    if path.exists() and path.stat().st_size == 24 * requests:
        return path
    rng = np.random.default_rng(SEED)
    cumulative = np.cumsum(np.arange(1, blocks + 1, dtype=np.float64) ** -alpha)
    cumulative /= cumulative[-1]
    ranks = np.minimum(np.searchsorted(cumulative, rng.random(requests), side="right"), blocks - 1)
    records = np.zeros(requests, dtype=[("time", "<u4"), ("object", "<u8"), ("size", "<u4"), ("next", "<i8")])
    records["time"] = np.arange(requests) // 10_000
    records["object"] = rng.permutation(blocks)[ranks]
    records["size"] = 4096
    records["next"] = -1
    partial = path.with_suffix(".partial")
    records.tofile(partial)
    partial.replace(path)
    return path


def libcachesim() -> Any:
    """The ``libcachesim`` module, installed from PyPI into this environment if missing."""
    try:
        return importlib.import_module("libcachesim")
    except ImportError:
        print("installing libcachesim from PyPI into", sys.prefix, file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "libcachesim"], check=True)
        importlib.invalidate_caches()
        return importlib.import_module("libcachesim")


def timed(run: Callable[[], int]) -> Tuple[float, float, int]:
    """(wall s, CPU s, misses) of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    misses = run()
    return time.perf_counter() - wall, time.process_time() - cpu, misses


def raidlab_run(path: Path, policy: str, size: int) -> Callable[[], int]:
    config = to_toml({
        "trace": {"path": str(path), "format": "oracleGeneral"},
        "policies": [policy],
        "sizes": [size],
        "drives": [8],
        "failed_drive": 0,
        "window_requests": 1 << 40,
    })

    def run() -> int:
        report = json.loads(_core.cache_simulate(config, str(path.parent)))
        return int(report["cells"][0]["total"]["misses"])

    return run


def libcachesim_run(lcs: Any, path: Path, size: int, requests: int, tuned: bool) -> Callable[[], int]:
    # libCacheSim's own default is 2^24 buckets; sized for the cache, 2^⌈log2 2C⌉.
    hashpower = (2 * size - 1).bit_length() if tuned else 24

    def run() -> int:
        reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE,
                                 lcs.ReaderInitParam(ignore_obj_size=True))
        miss_ratio, _ = lcs.LRU(cache_size=size, hashpower=hashpower).process_trace(reader)
        return round(miss_ratio * requests)

    return run


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000_000)
    parser.add_argument("--blocks", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100_000, help="cache size, blocks")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of every case")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args(argv)

    lcs = libcachesim()
    path = zipf_trace(args.requests, args.blocks)
    cases: Dict[str, Callable[[], int]] = {
        "raidlab lru": raidlab_run(path, "lru", args.size),
        "libCacheSim lru": libcachesim_run(lcs, path, args.size, args.requests, tuned=False),
        "libCacheSim tuned": libcachesim_run(lcs, path, args.size, args.requests, tuned=True),
        "raidlab vdf-lru": raidlab_run(path, "vdf-lru", args.size),
        "raidlab lfu": raidlab_run(path, "lfu", args.size),
        "raidlab vdf-lfu": raidlab_run(path, "vdf-lfu", args.size),
    }
    walls: Dict[str, List[float]] = {name: [] for name in cases}
    cpus: Dict[str, List[float]] = {name: [] for name in cases}
    misses: Dict[str, int] = {}
    for _ in range(args.rounds):
        for name, run in cases.items():
            wall, cpu, missed = timed(run)
            walls[name].append(wall)
            cpus[name].append(cpu)
            misses[name] = missed

    def rate(seconds: float) -> float:
        return args.requests / seconds

    results = {
        name: {
            "misses": misses[name],
            "best_requests_per_s": rate(min(walls[name])),
            "median_requests_per_s": rate(statistics.median(walls[name])),
            "cpu_best_requests_per_s": rate(min(cpus[name])),
            "cpu_median_requests_per_s": rate(statistics.median(cpus[name])),
        }
        for name in cases
    }
    ratios = {
        "raidlab lru / libCacheSim lru (best, wall)":
            results["raidlab lru"]["best_requests_per_s"] / results["libCacheSim lru"]["best_requests_per_s"],
        "raidlab lru / libCacheSim lru (median, wall)":
            results["raidlab lru"]["median_requests_per_s"] / results["libCacheSim lru"]["median_requests_per_s"],
        "raidlab lru / libCacheSim tuned (best, wall)":
            results["raidlab lru"]["best_requests_per_s"] / results["libCacheSim tuned"]["best_requests_per_s"],
        "vdf-lru cost / lru cost (median CPU)":
            statistics.median(cpus["raidlab vdf-lru"]) / statistics.median(cpus["raidlab lru"]),
        "vdf-lfu cost / lfu cost (median CPU)":
            statistics.median(cpus["raidlab vdf-lfu"]) / statistics.median(cpus["raidlab lfu"]),
    }
    same = misses["raidlab lru"] == misses["libCacheSim lru"] == misses["libCacheSim tuned"]
    if args.json:
        print(json.dumps({"trace": str(path), "requests": args.requests, "blocks": args.blocks, "size": args.size,
                          "rounds": args.rounds, "results": results, "ratios": ratios, "lru_misses_equal": same},
                         indent=2))
    else:
        print(f"Zipf(1.0), {args.requests:,} requests over {args.blocks:,} blocks, {args.size:,}-block cache, "
              f"{args.rounds} alternating rounds ({path})")
        print(f"{'case':18} {'misses':>11} {'best M/s':>9} {'median M/s':>11} {'CPU best':>9} {'CPU median':>11}")
        for name, result in results.items():
            print(f"{name:18} {result['misses']:>11,} {result['best_requests_per_s'] / 1e6:>9.2f} "
                  f"{result['median_requests_per_s'] / 1e6:>11.2f} {result['cpu_best_requests_per_s'] / 1e6:>9.2f} "
                  f"{result['cpu_median_requests_per_s'] / 1e6:>11.2f}")
        for label, value in ratios.items():
            print(f"{label}: {value:.2f}")
        print("LRU misses equal libCacheSim's:", "yes" if same else "NO")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
