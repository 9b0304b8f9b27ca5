"""Worker processes of a local pool, as the sweeps (:mod:`raidlab.experiments.sweep`) and the
config-folder reproductions (:mod:`raidlab.reproductions.reproduce`) start them: SIGINT
blocked while the workers start (:class:`sigint_blocked`) and ignored in them
(:func:`ignore_sigint`), so that a Ctrl-C reaches only the process that started them, which
cancels their simulations and shuts the pool down (:func:`shutdown`); and each worker ends
with that process, ``kill -9`` included (:func:`end_with_parent`).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

__all__ = ["sigint_blocked", "ignore_sigint", "shutdown", "end_with_parent", "PARENT_POLL_S"]


class sigint_blocked:
    """Block SIGINT in this thread (and so in the processes and threads it starts) for the
    ``with`` block; a SIGINT that arrives meanwhile is delivered when it ends."""

    def __enter__(self) -> None:
        self.previous = None
        if hasattr(signal, "pthread_sigmask"):
            self.previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def __exit__(self, *exc: Any) -> None:
        if self.previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.previous)


def ignore_sigint() -> None:
    """In a worker, which started with SIGINT blocked (see :class:`sigint_blocked`): ignore
    SIGINT, which also drops one pending since, then unblock it."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        pass


def shutdown(executor: Any) -> None:
    """Cancel what has not started and wait for the workers (their simulations see the
    cancel event within about 0.1 s). A second Ctrl-C while waiting terminates them."""
    try:
        executor.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            process.terminate()
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            process.join(timeout=5)
        raise


#: How often a worker without PR_SET_PDEATHSIG looks whether the process that started its pool
#: is still its parent (s).
PARENT_POLL_S = 1.0


def end_with_parent(parent: int) -> None:
    """End this worker process when ``parent``, the process that started its pool, dies,
    however it dies (``kill -9`` included, which leaves it no chance to stop its pool): the
    workers would otherwise run on as orphans, simulating for nobody.

    On Linux the kernel sends the worker SIGKILL when its parent dies
    (``prctl(PR_SET_PDEATHSIG)``, set through ctypes; it is about the thread that started the
    worker, the one that called :func:`~raidlab.experiments.sweep.run_sweep` or
    :func:`~raidlab.reproductions.reproduce.execute`, which outlives its pool). Elsewhere, or if
    that fails, a daemon thread polls ``os.getppid()``. Either way a parent that died before
    this ran is seen at once: the worker's parent is no longer ``parent``."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1  # <linux/prctl.h>
            armed = libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:
        os._exit(1)
    if not armed:
        import threading

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(PARENT_POLL_S)
            os._exit(1)

        threading.Thread(target=watch, name="raidlab-parent-watch", daemon=True).start()
