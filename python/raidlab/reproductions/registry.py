"""The registry of reproductions: one line each (:data:`REPRODUCTIONS`), naming the module
or the config folder of each, and their notes in ``docs/reproduction.md``
(:func:`notes_for`). :mod:`raidlab.reproductions.runner` runs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from raidlab.exceptions import ConfigError
from raidlab.reproductions.context import repository_root

__all__ = [
    "Reproduction",
    "REPRODUCTIONS",
    "names",
    "entry",
    "notes_for",
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
    Reproduction("mirroring", "Thesis §3.2-3.5: mirroring schemes in normal, degraded and rebuild modes",
                 notes="Thesis (seed 004): mirroring schemes in normal, degraded and rebuild modes",
                 module="raidlab.reproductions.mirroring"),
    Reproduction("validation", "DiskSim's validation traces: the drive models against real drives",
                 notes="DiskSim's validation traces", module="raidlab.reproductions.validation"),
    Reproduction("swo", "SWO: log-assisted RAID-5 write schemes (Table II, Figs. 6-8, 10-11)", notes="SWO (seed 002)", module="raidlab.reproductions.swo"),
    Reproduction("draid", "OpenZFS dRAID against RAID-6 groups with a hot spare: 100 18 TB drives, rebuild time and user p99", notes="dRAID: distributed spares against RAID-6 groups with a hot spare", module="raidlab.reproductions.draid"),
)


def names() -> List[str]:
    return [reproduction.name for reproduction in REPRODUCTIONS]


def entry(name: str) -> Reproduction:
    """The registry line ``name``; an unknown name is a :class:`ConfigError` listing them."""
    for reproduction in REPRODUCTIONS:
        if reproduction.name == name:
            return reproduction
    raise ConfigError(f"unknown paper {name!r}; known: {', '.join(names())}")


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
