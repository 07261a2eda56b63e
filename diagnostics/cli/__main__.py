"""``python -m diagnostics.cli`` runs the ``orderdoc`` command line (as ``python -m diagnostics``)."""

import sys

from diagnostics.cli import main

sys.exit(main())
