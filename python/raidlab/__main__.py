"""``python -m raidlab`` is the ``raidlab`` command."""

import sys

from raidlab.cli import main

sys.exit(main())
