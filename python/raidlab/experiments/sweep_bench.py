"""``make bench-sweep``: how a sweep scales over worker processes, and what the sweep
machinery costs per run.

One 64-run sweep (a RAID-5 with a hot spare losing a drive and rebuilding: four array sizes,
two rebuild disciplines, eight seeds) runs into a fresh directory on a local pool of one
worker process, then of two, and again, interleaved (``--repeat``, default 6), so that work
of other processes on the machine hits both alike; the best wall time of each counts. Six,
not fewer: on a shared machine the walls of one configuration move by a third between
repetitions, and the best of three often found no quiet spell for one of the two.
Reported:

* the wall time of each and the scaling, wall(1) / wall(2);
* the machinery's time per run: on one worker, (wall − the time the runs spent inside the
  core's ``run``) / runs. Everything but the simulation is in it: resolving the 64
  configurations, starting the worker, sending tasks and answers between processes, writing
  each run directory (config, manifest, summary, Parquet tables), collecting the table and
  writing ``summary.parquet``.

``python -m raidlab.experiments.sweep_bench [--requests N] [--repeat N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

__all__ = ["BASE", "SPEC", "measure", "main"]

#: The experiment each run starts from: 4 KiB requests at 30 per second on IBM 0661 drives,
#: drive 2 failing at 5 s and rebuilt onto the spare (VSM or PCM).
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
requests = {requests}
read_fraction = 0.75
size_kib = 4

[workload.arrival]
process = "poisson"
rate_per_s = 30.0

[[failures]]
drive = 2
at_s = 5.0

[rebuild]
executor = "dor"
discipline = "vsm"
unit = {{ tracks = 1 }}
"""

#: 4 x 2 cases x 8 seeds = 64 runs.
SPEC = """\
base = "base.toml"
name = "bench"
seeds = 8

[grid]
array.drives = [5, 6, 7, 8]
rebuild.discipline = ["vsm", "pcm"]
"""


def measure(jobs: int, directory: Path, requests: int) -> Dict[str, Any]:
    """Run the benchmark sweep on ``jobs`` local workers into ``directory`` (fresh)."""
    from raidlab.experiments.sweep import run_sweep

    directory.mkdir(parents=True)
    (directory / "base.toml").write_text(BASE.format(requests=requests), encoding="utf-8")
    (directory / "spec.toml").write_text(SPEC, encoding="utf-8")
    started = time.perf_counter()
    outcome = run_sweep(directory / "spec.toml", directory / "out", jobs=jobs, command_line=["bench-sweep"])
    wall = time.perf_counter() - started
    runs = len(outcome.plan.tasks)
    if outcome.failed or outcome.ran != runs:
        raise RuntimeError(f"the benchmark sweep did not run cleanly: {outcome.ran} ran, {outcome.failed} failed")
    return {"jobs": jobs, "runs": runs, "wall_s": wall, "simulate_s": outcome.simulate_s,
            "machinery_s_per_run": (wall - outcome.simulate_s) / runs if jobs == 1 else None}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m raidlab.experiments.sweep_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=500_000, help="requests per run (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=6, help="interleaved repetitions (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    results: Dict[int, List[Dict[str, Any]]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="raidlab-bench-sweep-") as scratch:
        for repetition in range(max(1, args.repeat)):
            for jobs in (1, 2):
                results[jobs].append(measure(jobs, Path(scratch) / f"{repetition}-jobs-{jobs}", args.requests))
    one = min(results[1], key=lambda r: r["wall_s"])
    two = min(results[2], key=lambda r: r["wall_s"])
    report = {
        "repeat": max(1, args.repeat),
        "walls_1_worker": [round(r["wall_s"], 2) for r in results[1]],
        "walls_2_workers": [round(r["wall_s"], 2) for r in results[2]],
        "runs": one["runs"],
        "requests_per_run": args.requests,
        "cores": os.cpu_count(),
        "wall_s_1_worker": round(one["wall_s"], 3),
        "wall_s_2_workers": round(two["wall_s"], 3),
        "scaling_1_to_2": round(one["wall_s"] / two["wall_s"], 3),
        "simulate_s_per_run": round(one["simulate_s"] / one["runs"], 4),
        "machinery_ms_per_run": round(one["machinery_s_per_run"] * 1000, 1),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['runs']}-run sweep, {args.requests:,} requests per run, {report['cores']} cores, "
          f"best of {report['repeat']} interleaved")
    print(f"  1 worker : {report['wall_s_1_worker']:8.2f} s wall ({report['simulate_s_per_run'] * 1000:.0f} ms "
          f"simulating per run); all: {report['walls_1_worker']}")
    print(f"  2 workers: {report['wall_s_2_workers']:8.2f} s wall; all: {report['walls_2_workers']}")
    print(f"  scaling 1 -> 2 workers: {report['scaling_1_to_2']:.2f}x   (target: at least 1.8x)")
    print(f"  sweep machinery per run: {report['machinery_ms_per_run']:.1f} ms   (target: under 50 ms)")
    if report["load_average"]:
        print(f"  load average at the end: {', '.join(f'{v:.2f}' for v in report['load_average'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
