"""What the app shows of a watcher's state folder (``orderdoc app --watch STATE_DIR``).

The alert history comes from the watcher's alert store (:mod:`diagnostics.watch.alertstate`),
the runbook text from ``docs/runbooks.md`` (shipped as package data). The aggregate tables are
``STATE_DIR/agg``, read like any aggregate folder.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from importlib import resources
from pathlib import Path

import polars as pl

from diagnostics.errors import InputError
from diagnostics.rules.model import AlertState

#: Labels every alert of the default pack carries; the rest tell which job, partition, kind.
COMMON_LABELS = frozenset({"alertname", "severity", "team"})
_HEADING = re.compile(r"^## (.+)$", re.MULTILINE)


def agg_dir(state: Path) -> Path:
    """The aggregate folder of a watcher's state folder (an InputError if it is not one)."""
    if not (state / "manifest.json").is_file() and not (state / "plan.json").is_file():
        msg = f"{state}: not a state folder of 'orderdoc watch' (no manifest.json)"
        raise InputError(msg)
    return state / "agg"


def passes(state: Path) -> int:
    """Passes the watcher has completed (0 when none or unreadable)."""
    try:
        return int(json.loads((state / "manifest.json").read_text(encoding="utf-8"))["passes"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def runbook_sections(text: str | None = None) -> dict[str, str]:
    """The sections of ``docs/runbooks.md`` by anchor (``dropped-events`` -> its Markdown)."""
    if text is None:
        source = resources.files("diagnostics").joinpath("_data", "runbooks.md")
        try:
            text = source.read_text(encoding="utf-8")
        except OSError:
            return {}
    parts = _HEADING.split(text)
    return {
        _slug(title): f"### {title}\n{body.strip()}\n"
        for title, body in zip(parts[1::2], parts[2::2], strict=True)
    }


def runbook_text(annotation: str | None, sections: dict[str, str]) -> str | None:
    """The runbook section a ``runbook`` annotation (``docs/runbooks.md#anchor``) points to."""
    if not annotation or "#" not in annotation:
        return None
    return sections.get(annotation.split("#", 1)[1])


def _duration(start: str, end: str | None, now: datetime) -> str:
    begin = datetime.fromisoformat(start.replace("Z", "+00:00"))
    finish = datetime.fromisoformat(end.replace("Z", "+00:00")) if end else now
    minutes = max(0, int((finish - begin).total_seconds() // 60))
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m"


def alert_history(state: Path, now: datetime) -> pl.DataFrame:
    """Every alert episode the watcher recorded, newest first: rule, state, where, when it
    fired and resolved, how long it lasted (until ``now`` while firing), summary, runbook."""
    from diagnostics.watch.alertstate import AlertStore

    columns = {
        "state": pl.String, "severity": pl.String, "rule": pl.String, "where": pl.String,
        "fired": pl.String, "resolved": pl.String, "lasted": pl.String, "summary": pl.String,
        "runbook": pl.String,
    }  # fmt: skip
    if not (state / "alerts" / "alerts.db").is_file():
        return pl.DataFrame(schema=columns)
    with AlertStore(state / "alerts") as store:
        episodes = store.history()
    rows = [
        {
            "state": e.state.value,
            "severity": e.severity,
            "rule": e.rule_id,
            "where": ", ".join(
                f"{k}={v}" for k, v in sorted(e.labels.items()) if k not in COMMON_LABELS
            ),
            "fired": None if e.state is AlertState.PENDING else e.starts_at,
            "resolved": e.ends_at,
            "lasted": None
            if e.state is AlertState.PENDING
            else _duration(e.starts_at, e.ends_at, now),
            "summary": e.annotations.get("summary"),
            "runbook": e.annotations.get("runbook"),
        }
        for e in episodes
    ]
    return pl.DataFrame(rows, schema=columns)
