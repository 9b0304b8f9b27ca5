"""Run functions for the sweep tests, importable by the pool's worker processes (which start
with the parent's ``sys.path``)."""

from __future__ import annotations

import os
from typing import Any, Dict

from raidlab.sweep import RunTask, execute_run


def die_on_seed_2(task: RunTask) -> Dict[str, Any]:
    """Kill the worker process (as the kernel's out-of-memory killer would) for the runs with
    seed 2; run the others normally."""
    if task.config.startswith("seed = 2\n"):
        os._exit(9)
    return execute_run(task)
