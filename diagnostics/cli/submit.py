"""Entry point for ``spark-submit``:
``spark-submit [--master URL] submit.py [COMMAND] ARGS...``.

The master comes from spark-submit (the job never names one). ``COMMAND`` is ``aggregate``
(the default: ``submit.py INPUT... --out DIR`` aggregates, as it always has) or one of the
commands that run on Spark with ``--spark``: ``replay``, ``whatif``, ``explain``, ``demo``;
their arguments are those of ``orderdoc COMMAND``.
"""

from __future__ import annotations

import sys

from diagnostics.cli import main

#: The commands spark-submit can start (``aggregate`` needs no ``--spark``).
COMMANDS = ("aggregate", "replay", "whatif", "explain", "demo")


def arguments(argv: list[str]) -> list[str]:
    """The orderdoc command line for spark-submit's arguments ``argv``."""
    if argv and argv[0] in COMMANDS:
        return argv
    return ["aggregate", *argv]


if __name__ == "__main__":
    sys.exit(main(arguments(sys.argv[1:])))
