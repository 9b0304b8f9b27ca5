"""The reproduction report: every paper's tables, figures and notes, as Markdown and as one
self-contained HTML file.

A reproduction (:mod:`raidlab.reproductions`) returns a :class:`PaperReport`: its tables
(:class:`ReportTable`, the paper's numbers beside raidlab's with the differences), its
figures (PNG files) and its notes (the Markdown of its section of ``docs/reproduction.md``).
:func:`render_markdown` links the figures; :func:`render_html` embeds them (base64 data
URIs) and the notes (rendered with markdown-it, which rich already depends on), so the one
file can be mailed or archived and opens anywhere. Both are pure functions of the reports.
"""

from __future__ import annotations

import base64
import html
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Optional, Sequence

__all__ = [
    "ReportTable",
    "ReportFigure",
    "PaperReport",
    "difference_text",
    "number_text",
    "render_markdown",
    "render_html",
    "write_report",
]


@dataclass
class ReportTable:
    """A table of text cells; ``numeric_from`` is the first right-aligned column."""

    title: str
    columns: List[str]
    rows: List[List[str]]
    note: str = ""
    numeric_from: int = 1


@dataclass
class ReportFigure:
    path: Path
    caption: str


@dataclass
class PaperReport:
    """One paper's part of the report."""

    name: str
    title: str
    tables: List[ReportTable] = field(default_factory=list)
    figures: List[ReportFigure] = field(default_factory=list)
    #: Markdown: the paper's section of docs/reproduction.md.
    notes: str = ""
    #: Facts about the run (command, wall time, simulations), one line each.
    facts: List[str] = field(default_factory=list)
    #: Why the reproduction could not run, if it could not.
    error: Optional[str] = None


def number_text(value: Any, digits: int = 2, suffix: str = "") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{float(value):,.{digits}f}{suffix}"


def difference_text(ours: Any, paper: Any) -> str:
    """(raidlab − paper) / paper as a signed percentage, or — when either is missing."""
    try:
        ours, paper = float(ours), float(paper)
    except (TypeError, ValueError):
        return "—"
    if not (math.isfinite(ours) and math.isfinite(paper)) or paper == 0:
        return "—"
    return f"{(ours - paper) / paper * 100:+.1f} %"


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _markdown_table(table: ReportTable) -> List[str]:
    align = ["---:" if i >= table.numeric_from else "---" for i in range(len(table.columns))]
    lines = [f"**{table.title}**", "", "| " + " | ".join(_md_cell(c) for c in table.columns) + " |",
             "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows]
    if table.note:
        lines += ["", table.note]
    return lines


def _relative(path: Path, base: Path) -> str:
    try:
        return os.path.relpath(Path(path).resolve(), base.resolve()).replace(os.sep, "/")
    except ValueError:
        return str(path)


def _shift_headings(markdown: str, by: int) -> str:
    """Notes come with ``##`` headings of their own document: nest them under the paper's."""
    lines = []
    for line in markdown.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("#"):
            level = len(stripped) - len(stripped.lstrip("#"))
            line = "#" * min(6, level + by) + stripped[level:]
        lines.append(line)
    return "\n".join(lines)


def render_markdown(reports: Sequence[PaperReport], base: Path, *, title: str, preamble: Sequence[str] = ()) -> str:
    """The report as Markdown, figures linked relative to ``base`` (the report's directory)."""
    lines = [f"# {title}", ""]
    lines += list(preamble)
    if preamble:
        lines.append("")
    lines += ["Contents: " + ", ".join(f"[{r.title}](#{_anchor(r.name)})" for r in reports), ""]
    for report in reports:
        lines += [f'<a id="{_anchor(report.name)}"></a>', "", f"## {report.title}", ""]
        lines += [f"- {fact}" for fact in report.facts]
        if report.facts:
            lines.append("")
        if report.error:
            lines += [f"**Not run:** {report.error}", ""]
        for table in report.tables:
            lines += _markdown_table(table) + [""]
        for figure in report.figures:
            lines += [f"![{figure.caption}]({_relative(figure.path, base)})", "", f"*{figure.caption}*", ""]
        if report.notes:
            lines += ["### Notes (docs/reproduction.md)", "", _shift_headings(report.notes, 2), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

_STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; margin: 0;
       background: #f6f7f9; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 28px; margin-top: 8px; } h2 { border-bottom: 2px solid #d0d7de; padding-bottom: 4px;
margin-top: 40px; } nav a { margin-right: 14px; }
table { border-collapse: collapse; margin: 10px 0 18px; font-size: 13.5px; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 9px; vertical-align: top; }
th { background: #f0f3f6; } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fafbfc; }
figure { margin: 14px 0 24px; } figure img { max-width: 100%; border: 1px solid #e1e4e8; }
figcaption { color: #57606a; font-size: 13px; }
.facts { color: #57606a; font-size: 13.5px; } .error { background: #fff1f0; border: 1px solid #ffa39e;
padding: 8px 12px; } .notes { border-left: 4px solid #d0d7de; padding-left: 14px; }
code { background: #f0f3f6; padding: 0 3px; border-radius: 3px; }
"""


def _anchor(name: str) -> str:
    return "paper-" + "".join(ch if ch.isalnum() else "-" for ch in name)


def _data_uri(path: Path) -> str:
    suffix = path.suffix.lower()
    kind = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}.get(suffix)
    if kind is None:
        raise ValueError(f"cannot embed {path}: not a PNG, SVG or JPEG image")
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _html_table(table: ReportTable, number: int) -> str:
    escape = html.escape
    head = "".join(f'<th class="{"n" if i >= table.numeric_from else ""}">{escape(c)}</th>'
                   for i, c in enumerate(table.columns))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"n" if i >= table.numeric_from else ""}">{escape(str(c))}</td>'
                         for i, c in enumerate(row)) + "</tr>"
        for row in table.rows)
    note = f'<p class="facts">{escape(table.note)}</p>' if table.note else ""
    return (f'<table class="report-table" id="table-{number}"><caption>{escape(table.title)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}")


def render_html(reports: Sequence[PaperReport], *, title: str, preamble: Sequence[str] = ()) -> str:
    """The report as one HTML file: figures embedded as data URIs, notes rendered from
    Markdown, no external resource."""
    from markdown_it import MarkdownIt

    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    escape = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body><main>",
        f"<h1>{escape(title)}</h1>",
    ]
    parts += [f'<p class="facts">{escape(line)}</p>' for line in preamble]
    parts.append("<nav>" + "".join(f'<a href="#{_anchor(r.name)}">{escape(r.title)}</a>' for r in reports) + "</nav>")
    table_number = 0
    for report in reports:
        parts.append(f'<section class="paper" id="{_anchor(report.name)}"><h2>{escape(report.title)}</h2>')
        if report.facts:
            parts.append('<ul class="facts">' + "".join(f"<li>{escape(f)}</li>" for f in report.facts) + "</ul>")
        if report.error:
            parts.append(f'<p class="error"><strong>Not run:</strong> {escape(report.error)}</p>')
        for table in report.tables:
            parts.append(_html_table(table, table_number))
            table_number += 1
        for figure in report.figures:
            parts.append(f'<figure><img class="report-figure" src="{_data_uri(Path(figure.path))}" '
                         f'alt="{escape(figure.caption)}"><figcaption>{escape(figure.caption)}</figcaption></figure>')
        if report.notes:
            parts.append('<div class="notes"><h3>Notes (docs/reproduction.md)</h3>'
                         + markdown.render(_shift_headings(report.notes, 2)) + "</div>")
        parts.append("</section>")
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


def write_report(reports: Sequence[PaperReport], output: Path, *, title: str, preamble: Sequence[str] = ()) -> List[Path]:
    """Write ``report.md`` and ``report.html`` into ``output``; returns both paths."""
    from raidlab.exceptions import RaidlabIOError

    output = Path(output)
    try:
        output.mkdir(parents=True, exist_ok=True)
        markdown_path, html_path = output / "report.md", output / "report.html"
        markdown_path.write_text(render_markdown(reports, output, title=title, preamble=preamble), encoding="utf-8")
        html_path.write_text(render_html(reports, title=title, preamble=preamble), encoding="utf-8")
    except OSError as error:
        raise RaidlabIOError(error.strerror or str(error), file=str(error.filename or output), errno=error.errno) from None
    return [markdown_path, html_path]
