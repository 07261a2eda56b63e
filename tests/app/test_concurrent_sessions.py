"""Several users opening the app at once on a cold server: no session shows a traceback.

The report: five sessions on a freshly started ``orderdoc app``, once in 135 page visits,
``AttributeError: partially initialized module 'pandas' has no attribute 'Series'`` from
plotly's ``add_scatter`` on Findings: one session's page imported pandas while another's
chart looked it up. Here the sessions run at once in one cold process (as a server runs
them, each in a thread), with pandas made slow to import so the race is met every run
(tests/app/concurrent_sessions.py); before the app imported pandas up front, two of five
sessions failed this way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.app.conftest import APP

RUNNER = Path(__file__).resolve().parent / "concurrent_sessions.py"
PAGES = ("Findings", "Overview", "Findings", "Lateness", "Findings")


def test_sessions_opened_at_once_on_a_cold_app_show_no_traceback(
    agg_late: Path, app_env: Path
) -> None:
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(APP), str(agg_late), *PAGES],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["cold"], "pandas was imported before the sessions: not a cold start"
    sessions = result["sessions"]
    assert [s["page"] for s in sessions] == list(PAGES)
    assert [s["errors"] for s in sessions] == [[]] * len(PAGES)
    for session in sessions:  # each drew its page: findings with their evidence, charts
        assert session["charts"] >= 1, session
        if session["page"] == "Findings":
            assert session["subheaders"][0].startswith("1. "), session
