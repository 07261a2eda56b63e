"""``python -m diagnostics`` runs the ``orderdoc`` command line."""

import sys

from diagnostics.cli import main

sys.exit(main())
