"""``python -m ccgformat.cli``: the `ccg` command."""

import sys

from . import main

sys.exit(main())
