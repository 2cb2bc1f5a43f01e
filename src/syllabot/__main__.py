"""``python -m syllabot``: the same as the ``syllabot`` command."""

import sys

from syllabot.cli import main

sys.exit(main())
