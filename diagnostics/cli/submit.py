"""Entry point for ``spark-submit``: ``spark-submit [--master URL] submit.py INPUT... --out DIR``.

The master comes from spark-submit (the job never names one); the arguments are those of
``orderdoc aggregate``.
"""

from __future__ import annotations

import sys

from diagnostics.cli import main

if __name__ == "__main__":
    sys.exit(main(["aggregate", *sys.argv[1:]]))
