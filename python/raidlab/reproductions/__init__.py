"""Paper reproductions, one registry line each.

A reproduction reruns what a paper (or a published data set) measured and reports raidlab's
numbers beside the published ones. It is either

* a **config folder**, ``experiments/<folder>/`` with ``base.toml`` and ``studies.toml``,
  run by :mod:`raidlab.reproductions.reproduce` (Fu et al.'s rebuild study is one); or
* a **module** in this package with ``run(context) -> PaperReport``
  (:mod:`raidlab.reproductions.thesis`, :mod:`raidlab.reproductions.validation`);

plus **one line** in :data:`REPRODUCTIONS` (:mod:`raidlab.reproductions.registry`) naming
it, its title and the heading of its notes in ``docs/reproduction.md``. ``raidlab reproduce
NAME`` runs one; ``raidlab reproduce --all`` runs every one
(:mod:`raidlab.reproductions.runner`) and writes ``report.md`` and a self-contained
``report.html`` (:mod:`raidlab.output.report`) with, per paper, its tables (the paper's
numbers beside raidlab's and the differences), its figures and its notes.
``docs/architecture.md`` has the recipe.

This package's names are those of :mod:`~raidlab.reproductions.context`,
:mod:`~raidlab.reproductions.registry` and :mod:`~raidlab.reproductions.runner`; the
reproductions' modules import :class:`Context` from the first, never the package, so that
nothing they import imports them back.
"""

from raidlab.reproductions.context import Context, repository_root
from raidlab.reproductions.registry import REPRODUCTIONS, Reproduction, entry, names, notes_for, reproduction_notes_path
from raidlab.reproductions.runner import reproduce_all, run_reproduction

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
    "repository_root",
]
