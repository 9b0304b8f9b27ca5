"""``python -m raidlab``: the ``raidlab`` command (:mod:`raidlab.cli.__main__`).

Compatibility path: ``raidlab.__main__:main``, the console script's entry point in earlier installs, is :func:`raidlab.cli.__main__.main`.
"""

import sys

from raidlab.cli.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
