"""The ``raidlab`` command line: the commands and their parser (:mod:`raidlab.cli.commands`),
the run summary they print (:mod:`raidlab.cli.summary`), the experiments-at-scale commands
(:mod:`raidlab.cli.experiments`), ``raidlab rebuild-plan`` (:mod:`raidlab.cli.rebuild_plan`),
the console (:mod:`raidlab.cli.console`) and the entry point (:mod:`raidlab.cli.__main__`).

Compatibility path: ``raidlab.cli.main``, ``raidlab.cli.build_parser``, ``raidlab.cli.print_summary`` and the rest of what the module ``raidlab.cli`` held are read from those modules when first asked for.

Importing this package imports none of its modules: the entry point imports it before its
Ctrl-C guard exists.
"""

import importlib

#: Where the names of the former module ``raidlab.cli`` are now, looked up in this order.
_MODULES = ("raidlab.cli.commands", "raidlab.cli.summary")


def __getattr__(name: str):
    if not name.startswith("__"):
        for module in _MODULES:
            names = vars(importlib.import_module(module))
            if name in names:
                return names[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
