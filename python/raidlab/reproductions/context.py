"""What a reproduction is asked to do (:class:`Context`), and where the repository it runs
from is (:func:`repository_root`). The reproductions' modules import them from here, the
module that imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

__all__ = ["Context", "repository_root"]


@dataclass
class Context:
    """What a reproduction is asked to do.

    ``output``: its own directory. ``seeds``, ``studies``, ``jobs`` and ``extra`` (``--set``
    overrides applied last to every simulation) as ``raidlab reproduce`` takes them; a
    reproduction uses those that apply to it. ``options``: reproduction-specific settings
    (e.g. ``drives`` for the validation). ``progress(label, done, total)`` reports work."""

    output: Path
    seeds: Optional[int] = None
    studies: Optional[Sequence[str]] = None
    jobs: Optional[int] = None
    extra: Sequence[str] = ()
    experiments_dir: Optional[Path] = None
    diskspecs_dir: Optional[Path] = None
    command_line: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    progress: Optional[Callable[[str, int, int], None]] = None

    def report_progress(self, label: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(label, done, total)

    def run_sweep(self, label: str, spec: Any, directory: Path) -> Any:
        """Run sweep ``spec`` into ``directory`` with this context's jobs, ``--set`` overrides
        and command line, reporting finished and failed runs as progress under ``label``;
        returns the sweep's outcome (``raidlab.experiments.sweep.run_sweep``)."""
        from raidlab.experiments.sweep import run_sweep

        def progress(event: str, counts: dict) -> None:
            if event in ("start", "run"):
                self.report_progress(label, counts.get("done", 0) + counts.get("failed", 0), counts["to_run"])

        return run_sweep(spec, directory, jobs=self.jobs, extra=self.extra,
                         command_line=self.command_line.split() if self.command_line else ["raidlab"],
                         progress=progress)


def repository_root() -> Path:
    """The repository this package runs from (``python/raidlab/reproductions/../../..``)."""
    return Path(__file__).resolve().parent.parent.parent.parent
