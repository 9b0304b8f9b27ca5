"""The ``raidlab`` command's entry point: the console script, ``python -m raidlab`` and
``python -m raidlab.cli`` all run :func:`main`.

:func:`raidlab.cli.commands.main` turns a Ctrl-C into one line and exit status 130 while a
command runs. Loading :mod:`raidlab.cli.commands` itself (argparse, tomllib, dataclasses, ...)
takes tens of milliseconds before that guard exists, so this module imports it inside one
(and :mod:`raidlab.cli`, imported first, imports nothing).
"""

import sys


def main() -> int:
    """Run the ``raidlab`` command with ``sys.argv``; returns the exit status."""
    try:
        from raidlab.cli.commands import main as run_command

        return run_command()
    except KeyboardInterrupt:  # reported as raidlab.cli.commands.main reports it, which may not be loaded
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
