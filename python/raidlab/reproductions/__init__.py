"""Paper reproductions, one registry line each.

A reproduction reruns what a paper (or a published data set) measured and reports raidlab's
numbers beside the published ones. It is either

* a **config folder**, ``experiments/<folder>/`` with ``base.toml`` and ``studies.toml``,
  run by :mod:`raidlab.reproductions.reproduce` (Fu et al.'s rebuild study is one); or
* a **module** in this package with ``run(context) -> PaperReport``
  (:mod:`raidlab.reproductions.thesis`, :mod:`raidlab.reproductions.validation`);

plus **one line** in :data:`REPRODUCTIONS` naming it, its title and the heading of its notes
in ``docs/reproduction.md``. ``raidlab reproduce NAME`` runs one; ``raidlab reproduce --all``
runs every one and writes ``report.md`` and a self-contained ``report.html``
(:mod:`raidlab.output.report`) with, per paper, its tables (the paper's numbers beside raidlab's and
the differences), its figures and its notes. ``docs/architecture.md`` has the recipe.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from raidlab.exceptions import ConfigError, RaidlabError
from raidlab.output.report import PaperReport

__all__ = [
    "Reproduction",
    "REPRODUCTIONS",
    "Context",
    "names",
    "entry",
    "notes_for",
    "run_reproduction",
    "reproduce_all",
    "reproduction_notes_path",
]


@dataclass(frozen=True)
class Reproduction:
    """One registry line: ``name`` for ``raidlab reproduce NAME``; ``title`` for the report;
    ``notes``: the start of its ``## `` heading in ``docs/reproduction.md``; and exactly one
    of ``studies`` (a folder under ``experiments/``) or ``module`` (a module with ``run``)."""

    name: str
    title: str
    notes: str
    studies: Optional[str] = None
    module: Optional[str] = None


#: Every reproduction the project has, in report order. One line each.
REPRODUCTIONS = (
    Reproduction("fu", "Fu et al.: rebuild in RAID-5 with DOR, VSM and PCM",
                 notes="Fu et al. (seed 001): rebuild with VSM and PCM", studies="fu"),
    Reproduction("pro", "PRO: popularity-based reconstruction against DOR (Tables 3-4, Fig. 3)",
                 notes="PRO (seed 000): popularity-based reconstruction", module="raidlab.reproductions.pro"),
    Reproduction("vdf", "VDF: victim-disk-first caching, RGR (Figs. 3-5), reconstruction (Table 3), service rate (Figs. 7-9)",
                 notes="VDF (seed 003): victim disk first", module="raidlab.reproductions.vdf"),
    Reproduction("thesis", "Thesis §3.2: traditional mirroring in normal mode",
                 notes="Thesis (seed 004): traditional mirroring, normal mode", module="raidlab.reproductions.thesis"),
    Reproduction("validation", "DiskSim's validation traces: the drive models against real drives",
                 notes="DiskSim's validation traces", module="raidlab.reproductions.validation"),
)


def names() -> List[str]:
    return [reproduction.name for reproduction in REPRODUCTIONS]


def entry(name: str) -> Reproduction:
    """The registry line ``name``; an unknown name is a :class:`ConfigError` listing them."""
    for reproduction in REPRODUCTIONS:
        if reproduction.name == name:
            return reproduction
    raise ConfigError(f"unknown paper {name!r}; known: {', '.join(names())}")


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
    """The repository this package runs from (``python/raidlab/..``/..)."""
    return Path(__file__).resolve().parent.parent.parent.parent


def reproduction_notes_path() -> Path:
    return repository_root() / "docs" / "reproduction.md"


def notes_for(reproduction: Reproduction, document: Optional[str] = None) -> Optional[str]:
    """The body of the ``## `` section of ``docs/reproduction.md`` whose heading starts with
    ``reproduction.notes`` (up to the next ``## ``), or ``None`` if there is none."""
    if document is None:
        path = reproduction_notes_path()
        if not path.is_file():
            return None
        document = path.read_text(encoding="utf-8")
    lines = document.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("## ") and line[3:].startswith(reproduction.notes):
            body = []
            for following in lines[index + 1:]:
                if following.startswith("## "):
                    break
                body.append(following)
            return "\n".join(body).strip("\n")
    return None


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
