"""The reproduction registry (raidlab.reproductions), the report (raidlab.report), and
``raidlab reproduce --all``'s HTML report opened in a real browser (Debian's headless
Chromium): every figure loads and every table is there."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from raidlab import reproductions
from raidlab.cli import main
from raidlab.report import PaperReport, ReportFigure, ReportTable, render_html, render_markdown
from raidlab.reproductions import REPRODUCTIONS, notes_for

REPO_ROOT = Path(__file__).resolve().parent.parent
DISKSPECS = REPO_ROOT.parent / "shared" / "diskspecs"


# -- the registry -----------------------------------------------------------------------------


def test_every_registry_line_names_one_runnable_reproduction():
    import importlib

    assert len(set(reproductions.names())) == len(REPRODUCTIONS)
    for reproduction in REPRODUCTIONS:
        assert (reproduction.studies is None) != (reproduction.module is None), reproduction.name
        if reproduction.module:
            assert callable(importlib.import_module(reproduction.module).run)
        else:
            assert (REPO_ROOT / "experiments" / reproduction.studies / "studies.toml").is_file()


def test_every_reproduction_has_its_notes_in_docs():
    for reproduction in REPRODUCTIONS:
        notes = notes_for(reproduction)
        assert notes, f"docs/reproduction.md has no section '## {reproduction.notes}…' for {reproduction.name}"
        assert not notes.lstrip().startswith("## ")


def test_notes_end_at_the_next_section():
    document = "# Log\n\n## Alpha (x)\n\nfirst\n\n### detail\n\nmore\n\n## Beta\n\nsecond\n"
    alpha = reproductions.Reproduction("a", "A", notes="Alpha", module="m")
    assert notes_for(alpha, document) == "first\n\n### detail\n\nmore"
    assert notes_for(reproductions.Reproduction("c", "C", notes="Gamma", module="m"), document) is None


@pytest.mark.parametrize("argv, words", [
    (["reproduce"], "name a paper (fu, pro, vdf, thesis, mirroring, validation, swo, draid) or give --all"),
    (["reproduce", "fu", "--all"], "not both"),
    (["reproduce", "nope"], "unknown paper 'nope'; known: fu, pro, vdf, thesis, mirroring, validation, swo, draid"),
])
def test_reproduce_needs_one_known_name_or_all(argv, words, tmp_path, capsys):
    assert main([*argv, "-o", str(tmp_path / "out")]) == 2
    assert words in capsys.readouterr().err


# -- the report -------------------------------------------------------------------------------


def _png(path: Path) -> Path:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 1.5))
    figure.subplots().plot([0, 1], [1, 0])
    figure.savefig(path, dpi=50)
    return path


def test_markdown_and_html_carry_every_table_figure_and_note(tmp_path):
    report = PaperReport(
        name="p", title="Paper P",
        tables=[ReportTable("T1", ["case", "paper", "raidlab", "difference"], [["a|b", "1.0", "1.1", "+10.0 %"]])],
        figures=[ReportFigure(_png(tmp_path / "f.png"), "figure one")],
        notes="Some **notes**.\n\n| x | y |\n|---|---|\n| 1 | 2 |", facts=["wall time 1 s"])
    markdown = render_markdown([report], tmp_path, title="R")
    assert "| a\\|b | 1.0 | 1.1 | +10.0 % |" in markdown and "![figure one](f.png)" in markdown
    page = render_html([report], title="R")
    assert page.count('<table class="report-table"') == 1 and "<td>a|b</td>" not in page
    assert 'src="data:image/png;base64,' in page
    assert re.search(r'src="(?!data:)', page) is None and "<link" not in page  # nothing outside the file
    assert "<strong>notes</strong>" in page and "<td>2</td>" in page  # the notes' Markdown, rendered


# -- the whole report in a browser ------------------------------------------------------------

#: Appended to a copy of the report: after the page loads, writes what the browser has into
#: the DOM, which --dump-dom prints.
CHECK_SCRIPT = """
<script>
window.addEventListener('load', () => {
  const figures = [...document.querySelectorAll('img.report-figure')].map(image => ({
    alt: image.alt, loaded: image.complete && image.naturalWidth > 0, width: image.naturalWidth,
    shown: image.getBoundingClientRect().width }));
  const tables = [...document.querySelectorAll('table.report-table')].map(table => ({
    caption: table.caption ? table.caption.textContent : '', rows: table.tBodies[0].rows.length,
    height: table.getBoundingClientRect().height }));
  const papers = [...document.querySelectorAll('section.paper h2')].map(heading => heading.textContent);
  const out = document.createElement('pre');
  out.id = 'raidlab-check';
  out.textContent = JSON.stringify({figures, tables, papers});
  document.body.appendChild(out);
});
</script>
"""


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("no chromium on this machine: the report cannot be checked in a browser (Debian's chromium "
                    "package; `make test` installs it when it runs as root with apt-get)")
    return found


def _browser(chromium: str, profile: Path, *arguments: str) -> subprocess.CompletedProcess:
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               f"--user-data-dir={profile}", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"chromium failed ({done.returncode}): {done.stderr[-2000:]}"
    return done


@pytest.mark.engine
def test_the_all_report_renders_in_chromium_with_every_figure_and_table(tmp_path):
    from test_reproduce import TINY

    chromium = _chromium()
    contexts = {
        "fu": {"seeds": 1, "studies": ["table1"], "extra": tuple(TINY)},
        "pro": {"options": {"requests": 3000, "capacity_gib": 0.0625, "arrays": ["raid5-3", "raid1-2"]}},
        "vdf": {"options": {"records": 100_000, "replay_records": 100_000, "area_gib": 4, "drives": [5, 8],
                            "sizes": [4096, 16384], "replay_sizes": [4096, 8192, 16384], "capacity_gib": 0.25}},
        "thesis": {"seeds": 1, "extra": ("workload.requests=20000",)},
        "mirroring": {"seeds": 1, "options": {"quick": True}},
        "validation": {"options": {"drives": ["ibm18es", "hp_c2247a"]}},
        "swo": {"seeds": 1, "options": {"quick": True}},
        "draid": {"seeds": 1, "options": {"capacity_sectors": 4_000_000, "pool_drives": 24, "pool_rate_per_s": 480.0,
                                          "layouts": ["draid2:4d:2s"], "checks": False}},
    }
    done = reproductions.reproduce_all(tmp_path / "all", contexts=contexts, jobs=2,
                                       diskspecs_dir=DISKSPECS, command_line="pytest")
    reports = done["reports"]
    assert [report.name for report in reports] == reproductions.names()
    ran = [report for report in reports if report.error is None]
    assert {report.name for report in ran} >= {"fu", "pro", "vdf", "thesis"}
    if not DISKSPECS.is_dir():
        assert done["failed"] == ["validation"]  # reported as not run, with why
    report_html = tmp_path / "all" / "report.html"
    assert (tmp_path / "all" / "report.md").is_file()

    checked = tmp_path / "checked.html"
    checked.write_text(report_html.read_text(encoding="utf-8").replace("</body>", CHECK_SCRIPT + "</body>"),
                       encoding="utf-8")
    dom = _browser(chromium, tmp_path / "profile", "--virtual-time-budget=20000", "--dump-dom",
                   checked.as_uri()).stdout
    found = re.search(r'<pre id="raidlab-check">(.*?)</pre>', dom, re.S)
    assert found, "the check script did not run in the browser"
    seen = json.loads(html.unescape(found.group(1)))

    expected_figures = [figure.caption for report in reports for figure in report.figures]
    expected_tables = [(table.title, len(table.rows)) for report in reports for table in report.tables]
    assert len(expected_figures) >= 3 and len(expected_tables) >= 3
    assert [figure["alt"] for figure in seen["figures"]] == expected_figures
    assert all(figure["loaded"] and figure["width"] > 100 and figure["shown"] > 100 for figure in seen["figures"]), \
        [figure for figure in seen["figures"] if not figure["loaded"]]
    assert [(table["caption"], table["rows"]) for table in seen["tables"]] == expected_tables
    assert all(table["height"] > 0 for table in seen["tables"])
    assert seen["papers"] == [report.title for report in reports]

    screenshot = tmp_path / "report.png"
    _browser(chromium, tmp_path / "profile", "--window-size=1280,2400", f"--screenshot={screenshot}",
             report_html.as_uri())
    from matplotlib.image import imread

    pixels = imread(screenshot)
    assert pixels.shape[:2] == (2400, 1280)
    assert float(np.std(pixels[..., :3])) > 0.05  # text, tables and plots, not a blank page
