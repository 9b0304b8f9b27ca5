"""A config-folder reproduction (``experiments/<folder>/studies.toml``) as a report part.

:func:`raidlab.reproductions.reproduce.reproduce` runs the studies and writes their CSVs, figures and
``report.md`` into the reproduction's directory; this module turns its per-study tables into
:class:`~raidlab.output.report.ReportTable` rows: the varied values, raidlab's mean ± standard
deviation over seeds, and where the paper has a number, the paper's number and the
difference.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Mapping

from raidlab.output.report import PaperReport, ReportFigure, ReportTable, difference_text, number_text

if TYPE_CHECKING:
    from raidlab.reproductions.reproduce import StudyResult
    from raidlab.reproductions.context import Context
    from raidlab.reproductions.registry import Reproduction

__all__ = ["run_studies", "study_table"]


def _mean_std(mean: Any, std: Any, digits: int) -> str:
    if mean is None or not math.isfinite(float(mean)):
        return "—"
    if std is None or not math.isfinite(float(std)):
        return f"{float(mean):,.{digits}f}"
    return f"{float(mean):,.{digits}f} ± {float(std):,.{digits}f}"


def study_table(result: "StudyResult", labels: Mapping[str, str]) -> ReportTable:
    """One row per case of a study: its values, rebuild time (and the paper's with the
    difference, where the study has paper numbers), response time while rebuilding and in
    normal mode."""
    from raidlab.reproductions.reproduce import show_value

    study, table = result.study, result.table
    keys = study.keys
    has_paper = "paper_rebuild_time_s" in table and table["paper_rebuild_time_s"].notna().any()
    columns = [labels.get(key, key) for key in keys] + ["rebuild time (s), raidlab"]
    if has_paper:
        columns += ["paper (s)", "difference"]
    columns += ["R rebuilding (ms)", "R normal (ms)"]
    rows: List[List[str]] = []
    for _, row in table.iterrows():
        cells = [show_value(row[key]) for key in keys]
        cells.append(_mean_std(row["rebuild_time_s_mean"], row["rebuild_time_s_std"], 1))
        if has_paper:
            paper = row.get("paper_rebuild_time_s")
            cells += [number_text(paper, 1), difference_text(row["rebuild_time_s_mean"], paper)]
        cells.append(_mean_std(row["response_rebuilding_ms_mean"], row["response_rebuilding_ms_std"], 2))
        cells.append(_mean_std(row["response_normal_ms_mean"], row["response_normal_ms_std"], 2))
        rows.append(cells)
    seeds = int(table["seeds"].min()) if len(table) else 0
    note = f"Mean ± standard deviation over {seeds} seed(s) per case."
    if result.fit:
        note += (f" First-order fit T(u) = T0 / (1 − αu): T0 = {result.fit['T0']:.1f} s, α = {result.fit['alpha']:.3f}"
                 + (f" (paper: α ≈ {result.fit['paper_alpha']:g})" if "paper_alpha" in result.fit else "") + ".")
    if result.ratio:
        note += (f" Ratio of rebuild times: {result.ratio['ratio']:.2f}"
                 + (f" (paper: {result.ratio['paper']:g})" if math.isfinite(result.ratio.get("paper", math.nan)) else "")
                 + ".")
    return ReportTable(title=f"{study.name}: {study.title}", columns=columns, rows=rows, note=note,
                       numeric_from=len(keys))


def run_studies(reproduction: "Reproduction", context: "Context") -> PaperReport:
    """Run the studies of ``experiments/<reproduction.studies>`` into ``context.output``."""
    from raidlab.reproductions.reproduce import reproduce

    total = {"runs": 0}

    def on_plan(plan: Any) -> None:
        total["runs"] = len(plan.runs)
        context.report_progress(reproduction.name, 0, len(plan.runs))

    def on_done(done: int, count: int) -> None:
        context.report_progress(reproduction.name, done, count)

    plan, results, files = reproduce(
        str(reproduction.studies),
        output=Path(context.output),
        experiments_dir=context.experiments_dir,
        seeds=context.seeds,
        studies=context.studies,
        jobs=context.jobs,
        extra=context.extra,
        command_line=context.command_line or None,
        on_plan=on_plan,
        on_done=on_done,
    )
    labels = plan.paper.labels
    figures = {path.stem: path for path in files if path.suffix == ".png"}
    report = PaperReport(name=reproduction.name, title=reproduction.title)
    report.facts.append(f"{len(plan.runs)} simulations ({plan.requested} requested by {len(plan.studies)} "
                        f"studies); outputs in {context.output}")
    for result in results:
        report.tables.append(study_table(result, labels))
        if result.study.name in figures:
            report.figures.append(ReportFigure(figures[result.study.name], f"{result.study.name}: {result.study.title}"))
    return report
