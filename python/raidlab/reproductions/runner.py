"""Running reproductions: one (:func:`run_reproduction`), or every one with the combined
report (:func:`reproduce_all`). A config-folder reproduction runs through
:mod:`raidlab.reproductions.studies`, a module one through its module's ``run(context)``.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from raidlab.exceptions import RaidlabError
from raidlab.output.report import PaperReport
from raidlab.reproductions.context import Context
from raidlab.reproductions.registry import REPRODUCTIONS, Reproduction, entry, notes_for

__all__ = ["run_reproduction", "reproduce_all"]


def run_reproduction(reproduction: Reproduction, context: Context) -> PaperReport:
    """Run one reproduction and return its report (notes attached). Errors propagate."""
    started = time.monotonic()
    if reproduction.studies is not None:
        from raidlab.reproductions.studies import run_studies

        report = run_studies(reproduction, context)
    else:
        module = importlib.import_module(str(reproduction.module))
        report = module.run(context)
    report.name, report.title = reproduction.name, reproduction.title
    report.notes = notes_for(reproduction) or ""
    report.facts.append(f"wall time {time.monotonic() - started:.1f} s")
    return report


def reproduce_all(
    output: Path,
    *,
    only: Optional[Sequence[str]] = None,
    contexts: Optional[Mapping[str, Mapping[str, Any]]] = None,
    seeds: Optional[int] = None,
    jobs: Optional[int] = None,
    extra: Sequence[str] = (),
    experiments_dir: Optional[Path] = None,
    diskspecs_dir: Optional[Path] = None,
    command_line: str = "",
    progress: Optional[Callable[[str, int, int], None]] = None,
) -> Dict[str, Any]:
    """Run every reproduction (or those named in ``only``), each into ``output/<name>/``,
    then write ``output/report.md`` and ``output/report.html``. A reproduction that fails is
    reported as not run, with its error, and the others go on. ``contexts[name]`` overrides
    the :class:`Context` fields of one reproduction (``options``, ``studies``, ``extra``…).
    Returns ``{"reports", "files", "failed"}``."""
    from raidlab.output.report import write_report

    chosen = [entry(name) for name in only] if only else list(REPRODUCTIONS)
    reports: List[PaperReport] = []
    failed: List[str] = []
    started = time.monotonic()
    for reproduction in chosen:
        fields: Dict[str, Any] = dict(output=Path(output) / reproduction.name, seeds=seeds, jobs=jobs,
                                      extra=tuple(extra), experiments_dir=experiments_dir,
                                      diskspecs_dir=diskspecs_dir, command_line=command_line, progress=progress)
        fields.update((contexts or {}).get(reproduction.name, {}))
        try:
            reports.append(run_reproduction(reproduction, Context(**fields)))
        except RaidlabError as error:
            failed.append(reproduction.name)
            reports.append(PaperReport(name=reproduction.name, title=reproduction.title, error=str(error),
                                       notes=notes_for(reproduction) or ""))
    from raidlab import __version__

    preamble = [f"raidlab {__version__}; command: {command_line or 'raidlab.reproductions.reproduce_all'}; "
                f"{len(reports)} reproduction(s) in {time.monotonic() - started:.1f} s"
                + (f"; not run: {', '.join(failed)}" if failed else "")]
    files = write_report(reports, Path(output), title="raidlab reproductions", preamble=preamble)
    return {"reports": reports, "files": files, "failed": failed}
