"""``python tests/app/concurrent_sessions.py APP AGG_DIR PAGE...``: one cold process, a session
per PAGE opened at once (AppTest, each in a thread of its own, as a Streamlit server runs
them), on the aggregate folder; prints one JSON line: whether pandas was imported before the
sessions, the exceptions the sessions showed, and what each page showed.

pandas is made slow to import here (3 s inside ``pandas.core.frame``): the window in which
another session can find it half-initialised, a few milliseconds on a quiet machine (the
report: once in 135 visits), is then wide, so a race the app leaves open is met every run.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
import threading
import time
from types import ModuleType

SLOW_MODULE = "pandas.core.frame"
SLOW_SECONDS = 3.0


class SlowImport(importlib.abc.MetaPathFinder):
    """Finds :data:`SLOW_MODULE` as usual, and runs its body :data:`SLOW_SECONDS` late."""

    def find_spec(
        self, name: str, path: object, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != SLOW_MODULE:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            time.sleep(SLOW_SECONDS)
            run(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def main() -> None:
    app, agg, *pages = sys.argv[1:]
    sys.meta_path.insert(0, SlowImport())
    from streamlit.testing.v1 import AppTest

    cold = "pandas" not in sys.modules
    results: dict[int, dict] = {}

    def session(index: int, page: str) -> None:
        at = AppTest.from_file(app, default_timeout=600)
        at.session_state["agg_dir"] = agg
        at.session_state["source_label"] = "concurrent"
        at.session_state["page"] = page
        at.run()
        results[index] = {
            "page": page,
            "errors": [str(e.value) for e in at.exception],
            "charts": len(at.get("plotly_chart")),
            "subheaders": [s.value for s in at.subheader],
        }

    threads = [threading.Thread(target=session, args=(i, page)) for i, page in enumerate(pages)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"cold": cold, "sessions": [results[i] for i in sorted(results)]}))


if __name__ == "__main__":
    main()
