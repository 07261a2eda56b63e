"""One alert episode per episode, for every rule of the pack, over any sequence of passes.

Live logs (tests/watch/livelogs.py: several jobs, bursts, a partition idle twice, malformed
lines, watermark metrics) are written in random increments that cut lines in two. After each
increment the tables are those of one aggregate of the complete lines (what a pass leaves:
tests/watch/test_passes.py) and the watcher evaluates the rules at the data's end, records
the alerts and notifies a loopback receiver. At the end, what was told equals the episodes
``orderdoc alerts`` finds on one aggregate of the final files: the same episodes of every
alert, in order, in the same state, resolved at the same time; each told firing once and, when
it is over, resolved once after that; never two open episodes of one alert; and
``orderdoc_alerts_firing`` counts the alerts firing.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from diagnostics.aggregates import write_tables
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.inputs import expand_inputs
from diagnostics.rules.evaluate import evaluate_detailed
from diagnostics.rules.loader import load_rules
from diagnostics.rules.model import Alert, AlertState, RuleSet
from diagnostics.rules.webhook import DeliveryPolicy
from diagnostics.watch.alertstate import AlertStore, Episode
from diagnostics.watch.episodes import Span
from diagnostics.watch.manifest import complete_end
from diagnostics.watch.metrics import WatchMetrics
from diagnostics.watch.runner import EvaluateAt, WatchConfig, Watcher
from tests.watch import livelogs
from tests.watch.servers import receiver

ROOT = Path(__file__).resolve().parents[2]
PACK = load_rules([ROOT / "rules"])
MINUTES = 150
CLOCK = datetime(2024, 6, 1, tzinfo=UTC)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass
class Run:
    """The watcher's evaluation over one state folder, fed one aggregate per increment."""

    logs: Path
    view: Path
    state: Path
    watcher: Watcher
    history_only: set[tuple[str, str]]
    evaluated: bool = False

    def tick(self) -> None:
        """A pass over the complete lines (the tables one aggregate of them gives), then the
        watcher's evaluation, recording and notifying."""
        for path in self.logs.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                target = self.view / path.relative_to(self.logs)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data[: complete_end(data)])
        aggregate(self.view, self.state / "agg")
        problems: list[str] = []
        evaluated_at, *_counts = self.watcher.evaluate(problems)
        assert not [p for p in problems if "rules not evaluated" not in p], problems
        if evaluated_at is None:
            return
        with AlertStore(self.state / "alerts") as store:
            history = store.history()
        open_ = Counter(e.fingerprint for e in history if e.state is not AlertState.RESOLVED)
        assert all(n == 1 for n in open_.values()), f"two open episodes of one alert: {open_}"
        if not self.evaluated:  # the first evaluation: what is over is history, not told
            self.evaluated = True
            self.history_only = {
                (e.fingerprint, e.active_at) for e in history if e.state is AlertState.RESOLVED
            }


def aggregate(folder: Path, out: Path) -> None:
    files = expand_inputs([str(folder)])
    write_tables(aggregate_files(files.logs, files.metrics), out)


def watcher(logs: Path, state: Path, url: str, rules: RuleSet) -> Watcher:
    config = WatchConfig(
        folders=(logs,),
        state=state,
        webhook=url,
        evaluate_at=EvaluateAt.DATA_END,
        delivery=DeliveryPolicy(timeout=5, attempts=1),
    )
    return Watcher(None, config, rules, clock=lambda: CLOCK)  # type: ignore[arg-type]


def episodes_by_alert(items: list[Any]) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for item in items:
        if item.state is not AlertState.PENDING:
            found.setdefault(item.fingerprint, []).append(item)
    for listed in found.values():
        listed.sort(key=lambda e: _time(e.active_at) if isinstance(e, Episode) else e.active_at)
    return found


def span(item: Alert | Episode) -> Span:
    if isinstance(item, Alert):
        return Span(item.active_at, item.ends_at)
    return Span(_time(item.active_at), None if item.ends_at is None else _time(item.ends_at))


def check_told_as_one_shot(run: Run, one_shot: list[Alert], posts: list[list[dict]]) -> None:
    expected = episodes_by_alert(one_shot)
    with AlertStore(run.state / "alerts") as store:
        history = store.history()
        notes = store.notifications()
    stored = episodes_by_alert(history)
    assert sorted(stored) == sorted(expected)
    for fp, wanted in expected.items():
        got = stored[fp]
        shown = [(a.state.value, a.active_at.isoformat(), a.ends_at) for a in wanted]
        assert [e.state for e in got] == [a.state for a in wanted], (fp, shown, got)
        for episode, alert in zip(got, wanted, strict=True):
            assert span(episode).overlaps(span(alert)), (episode, alert)
            if alert.ends_at is not None:
                assert episode.ends_at is not None
                assert _time(episode.ends_at) == alert.ends_at, (episode, alert)
    # every notification was delivered; one firing per episode told, one resolved per
    # resolved episode, posted after its firing; the past of the first evaluation untold
    assert all(n.sent_at is not None for n in notes)
    told = Counter((n.fingerprint, n.active_at, n.status) for n in notes)
    assert all(count == 1 for count in told.values())
    keys = {(e.fingerprint, e.active_at) for e in history if e.state is not AlertState.PENDING}
    assert {(fp, at) for fp, at, _status in told} <= keys
    bodies = [body for post in posts for body in post]
    assert len(bodies) == len(notes)
    order = {
        (tuple(sorted(b["labels"].items())), b["startsAt"], "endsAt" in b): i
        for i, b in enumerate(bodies)
    }
    for episode in history:
        key = (episode.fingerprint, episode.active_at)
        if episode.state is AlertState.PENDING:
            continue
        fired = told[(*key, AlertState.FIRING)]
        resolved = told[(*key, AlertState.RESOLVED)]
        if not fired:
            assert key in run.history_only, episode
            assert not resolved
            continue
        assert resolved == (episode.state is AlertState.RESOLVED), episode
        if resolved:
            labels = tuple(sorted(episode.labels.items()))
            assert (
                order[(labels, episode.starts_at, False)] < order[(labels, episode.starts_at, True)]
            )
    # the gauge counts the alerts firing, by rule, job and partition
    gauges = WatchMetrics()
    gauges.update(run.state / "agg", history, now=CLOCK, passes=0, rules=PACK)
    firing: Counter = Counter()
    for metric in gauges.registry.collect():
        for sample in metric.samples:
            if sample.name == "orderdoc_alerts_firing" and sample.value:
                firing[(sample.labels["alertname"], sample.labels["job"])] += sample.value
    wanted_firing = Counter(
        (a.rule_id, dict(a.labels).get("job", "")) for a in one_shot if a.state is AlertState.FIRING
    )
    assert firing == wanted_firing


def run_increments(seed: int, cuts: list[float], tmp: Path, rules: RuleSet = PACK) -> None:
    lines = livelogs.lines(seed, MINUTES)
    ends: list[int] = []
    total = 0
    for line in lines:
        total += len(line.text)
        ends.append(total)
    logs, view, state = tmp / "logs", tmp / "view", tmp / "state"
    logs.mkdir()
    writer = livelogs.Writer(logs)
    with receiver() as hook:
        run = Run(logs, view, state, watcher(logs, state, hook.url, rules), set())
        done = 0
        for fraction in sorted(cuts):
            position = int(fraction * total)
            upto = next((i for i, end in enumerate(ends) if end >= position), len(lines) - 1)
            if upto < done:
                continue
            cut = position - (ends[upto] - len(lines[upto].text))
            writer.write(lines[done : upto + 1], cut if cut < len(lines[upto].text) else None)
            done = upto + 1
            run.tick()
        writer.write(lines[done:])
        for _ in range(3):  # the final data; then resolved notifications wait a tick
            run.tick()
        aggregate(view, tmp / "one-shot")
        one_shot = list(evaluate_detailed(rules, tmp / "one-shot").alerts)
        check_told_as_one_shot(run, one_shot, hook.received())
    assert {a.rule_id for a in one_shot} == {r.id for r in rules}  # every rule fired


CUTS = st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=10)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(seed=0, cuts=[i / 30 for i in range(30)])  # a tick every 5 minutes of data
@given(seed=st.integers(min_value=0, max_value=10_000), cuts=CUTS)
def test_told_episodes_equal_the_one_shot_episodes(seed: int, cuts: list[float]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_increments(seed, cuts, Path(tmp))


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10_000), cuts=CUTS)
def test_told_episodes_equal_the_one_shot_episodes_more(seed: int, cuts: list[float]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_increments(seed, cuts, Path(tmp))
