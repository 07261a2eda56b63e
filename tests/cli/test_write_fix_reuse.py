"""``explain --events --write-fix`` reuses explain's work (issue 38, point 5): the capture is
read once, each policy replayed once, each setting measured once, and the fix written is
the one written when every replay and measurement is made again."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from diagnostics.cli import main
from diagnostics.engine.policy import OrderingPolicy

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "sample_logs" / "jobs"
LATE = ROOT / "sample_logs" / "scenarios" / "late_senders" / "capture.csv"


def _explain_fix(out: Path, *more: str) -> list[str]:
    return [
        "explain", "--events", str(LATE), "--partitions", "4",
        "--job-definition", str(JOBS / "late_senders.arm.json"),
        "--parameters", str(JOBS / "late_senders.parameters.json"),
        "--query", str(JOBS / "late_senders.counts.asaql"),
        "--write-fix", str(out), *more,
    ]  # fmt: skip


def _without_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every replay, comparison and measured setting made again each time it is asked for,
    and the search's settings weighed by the query's results whatever the rule (as before
    the reuse)."""
    from diagnostics.cli import fix_output
    from diagnostics.engine.replay import replay
    from diagnostics.whatif import replays

    def result(self, policy):  # type: ignore[no-untyped-def]
        frame, _ = self.events.apply(policy) if hasattr(self.events, "apply") else (None, None)
        frame = self.events if frame is None else frame
        return replay(frame, policy, columns=self.columns, partitions=self.partitions)

    monkeypatch.setattr(replays.Replays, "result", result)
    monkeypatch.setattr(replays.Replays, "once", lambda self, key, work: work())
    monkeypatch.setattr(replays.SearchStore, "once", lambda self, key, work: work())
    monkeypatch.setattr(replays.SearchStore, "fits", lambda self, columns, partitions: False)
    monkeypatch.setattr(fix_output, "weighed_by", lambda rule, results: results)


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("optimise", ["events", "results"])
def test_the_fix_is_the_one_written_without_reuse(tmp_path, capsys, monkeypatch, optimise):
    reused = tmp_path / "reused"
    assert main(_explain_fix(reused, "--optimise", optimise)) == 0
    said = capsys.readouterr().out
    with monkeypatch.context() as patched:
        _without_reuse(patched)
        again = tmp_path / "again"
        assert main(_explain_fix(again, "--optimise", optimise)) == 0
        said_again = capsys.readouterr().out
    assert _files(reused) == _files(again)
    assert "late_senders.arm.fixed.json" in _files(reused)
    assert said.replace(str(reused), "OUT") == said_again.replace(str(again), "OUT")
    assert "replayed under the written definition: late 513 -> " in said


def test_the_capture_is_read_once_and_each_policy_replayed_once(tmp_path, monkeypatch, capsys):
    from diagnostics.cli import capture_args
    from diagnostics.engine import replay as engine_replay
    from diagnostics.explain import capture as explain_capture
    from diagnostics.whatif import evaluate, replays, results

    reads: list[str] = []
    read = capture_args.capture_from_args

    def counted_read(args):  # type: ignore[no-untyped-def]
        reads.append(args.events)
        return read(args)

    replayed: Counter[OrderingPolicy] = Counter()
    original = engine_replay.replay

    def counted_replay(events, policy, **kwargs):  # type: ignore[no-untyped-def]
        replayed[policy] += 1
        return original(events, policy, **kwargs)

    measured: Counter[tuple[OrderingPolicy, tuple[int, ...]]] = Counter()
    evaluate_one = evaluate.evaluate

    def counted_evaluate(prepared, policy):  # type: ignore[no-untyped-def]
        # per policy and part of the capture (PARTITION BY: partition by partition)
        measured[(policy, prepared.partitions)] += 1
        return evaluate_one(prepared, policy)

    monkeypatch.setattr(capture_args, "capture_from_args", counted_read)
    for module in (engine_replay, replays, results, explain_capture):
        monkeypatch.setattr(module, "replay", counted_replay)
    monkeypatch.setattr(evaluate, "evaluate", counted_evaluate)
    assert main(_explain_fix(tmp_path / "fix")) == 0
    text = capsys.readouterr().out
    assert "windows of the query's results changed by the ordering" in text  # compared too
    assert reads == [str(LATE)]
    assert replayed, "the fix replays the capture"
    assert max(replayed.values()) == 1, [(p.describe(), n) for p, n in replayed.items()]
    assert measured
    assert max(measured.values()) == 1, measured
    # explain's own replay (the job as it is) is among them, and made once
    as_it_is = [
        p
        for p in replayed
        if p.late_arrival_ns == 5_000_000_000 and p.out_of_order_ns == 0 and not p.over
    ]
    assert len([p for p in as_it_is if not p.partition_by]) == 1
