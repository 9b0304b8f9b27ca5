"""DiskSim's validation traces: each drive model against the real drive's measured times.

For every drive of :data:`raidlab.experiments.validate.DISKSIM_PUBLISHED` (or ``options["drives"]``),
replays ``<diskspecs>/NAME.trace`` on the drive built from ``NAME.parv``
(:func:`raidlab.experiments.validate.validate`) and reports raidlab's demerit beside DiskSim's published
one, the measured and simulated means, and the CDF plot. The specs and traces are in
``../shared/diskspecs`` (``--diskspecs`` elsewhere); without them the reproduction is
reported as not run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List

from raidlab.exceptions import RaidlabError, RaidlabIOError
from raidlab.output.report import PaperReport, ReportFigure, ReportTable, difference_text, number_text

if TYPE_CHECKING:
    from raidlab.reproductions.context import Context

__all__ = ["run", "default_diskspecs_dir"]


def default_diskspecs_dir() -> Path:
    from raidlab.reproductions.context import repository_root

    return repository_root().parent / "shared" / "diskspecs"


def run(context: "Context") -> PaperReport:
    from raidlab.experiments.validate import DISKSIM_PUBLISHED, plot_validation, validate

    directory = Path(context.diskspecs_dir) if context.diskspecs_dir else default_diskspecs_dir()
    if not directory.is_dir():
        raise RaidlabIOError("the DiskSim specs and traces are not there (give --diskspecs DIR)", file=str(directory))
    chosen = list(context.options.get("drives") or DISKSIM_PUBLISHED)
    unknown = [name for name in chosen if name not in DISKSIM_PUBLISHED]
    if unknown:
        raise RaidlabIOError(f"no published validation for {unknown[0]!r}; known: {', '.join(DISKSIM_PUBLISHED)}",
                             file=str(directory))
    output = Path(context.output)
    report = PaperReport(name="validation", title="")
    rows: List[List[str]] = []
    errors = []
    for number, name in enumerate(chosen):
        context.report_progress("validation", number, len(chosen))
        published = DISKSIM_PUBLISHED[name]
        try:
            result = validate({"diskspec": str((directory / f"{name}.parv").resolve())}, directory / f"{name}.trace",
                              base_dir=directory)
        except RaidlabError as error:
            errors.append(f"{name}: {error}")
            rows.append([name, published.drive, f"{published.requests:,}", number_text(published.measured_mean_ms),
                         "not run", number_text(published.disksim_demerit_ms, 3), "—", "—", "—"])
            continue
        ratio = result.demerit_ms / published.disksim_demerit_ms
        rows.append([name, published.drive, f"{result.request_count:,}", number_text(result.measured_mean_ms),
                     number_text(result.simulated_mean_ms), number_text(published.disksim_demerit_ms, 3),
                     number_text(result.demerit_ms, 3), difference_text(result.demerit_ms, published.disksim_demerit_ms),
                     f"{ratio:.2f}"])
        image = plot_validation(result, output / f"{name}.png", title=f"{name}: {published.drive}")
        report.figures.append(ReportFigure(image, f"{name}: measured and simulated response-time CDFs"))
    context.report_progress("validation", len(chosen), len(chosen))
    report.tables.append(ReportTable(
        title="Demerit (RMS horizontal distance between the response-time CDFs) against DiskSim's published one",
        columns=["trace", "drive", "requests", "measured mean (ms)", "raidlab mean (ms)", "DiskSim demerit (ms)",
                 "raidlab demerit (ms)", "difference", "ratio to DiskSim"],
        rows=rows, numeric_from=2,
        note="DiskSim's figures: DiskSim 4.0's valid/runvalid (see docs/validation.md)."))
    report.facts.append(f"{len(chosen) - len(errors)} of {len(chosen)} drive(s) validated from {directory}")
    if errors:
        report.error = "; ".join(errors)
    return report
