"""``python -m tests.watch.crashing STEP ARGS...``: ``orderdoc ARGS...`` killed with SIGKILL
(kill -9) when the watcher reaches ``STEP`` (planned, written, derived, committed, compaction
planned, compaction merged, recorded, sent; ``none``: never): the crash tests' way to die at
an exact point, with no clean-up of any kind. ``ORDERDOC_TEST_COMPACT_EVERY`` sets how many
passes' files are kept before they are compacted (:data:`diagnostics.watch.compaction.EVERY`)."""

from __future__ import annotations

import os
import signal
import sys

from diagnostics.cli import main
from diagnostics.watch import compaction, runner


def _killer(step: str):  # type: ignore[no-untyped-def]
    def hook(reached: str) -> None:
        if reached == step:
            sys.stderr.write(f"crashing at {step}\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGKILL)

    return hook


if __name__ == "__main__":
    step, *args = sys.argv[1:]
    if os.environ.get("ORDERDOC_TEST_COMPACT_EVERY"):
        compaction.EVERY = int(os.environ["ORDERDOC_TEST_COMPACT_EVERY"])
    original = runner.Watcher.__init__

    def init(self, *a, **k):  # type: ignore[no-untyped-def]
        original(self, *a, **k)
        self.hook = _killer(step)

    runner.Watcher.__init__ = init  # type: ignore[method-assign]
    sys.exit(main(args))
