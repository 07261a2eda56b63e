"""``orderdoc rules check`` and ``orderdoc alerts``: exit codes, messages, files, webhook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aggtables import write_table
from conftest import HERE, RULES_DIR, Hook
from test_loader import expected_messages

from diagnostics.cli import main

DROP = {"job": "j1", "kind": "EarlyInputEvent", "partition_id": 0, "records": 1}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_rules_check_default_pack_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["rules", "check", str(RULES_DIR)], capsys) == (0, "ok: 7 rules in 7 files\n", "")


def test_rules_check_lists_every_problem_without_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(["rules", "check", str(HERE / "bad")], capsys)
    bad = sorted((HERE / "bad").glob("*.yaml"))
    expected = [m for path in bad for m in expected_messages(path)]
    assert code == 2
    assert out == ""
    assert err.splitlines() == [*expected, f"orderdoc rules check: {len(expected)} problems"]
    assert "Traceback" not in err


def agg_with_drops(agg_dir: Path) -> Path:
    write_table(
        agg_dir,
        "error_rollup",
        [
            {**DROP, "minute": "2024-03-01T10:00:00Z", "event_count": 2},
            {**DROP, "kind": "LateInputEvent", "minute": "2024-03-01T10:30:00Z", "event_count": 1},
        ],
    )
    return agg_dir


def test_alerts_fail_on_critical_exits_1(
    agg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "alerts.jsonl"
    argv = [
        "alerts",
        str(agg_with_drops(agg_dir)),
        "--rules",
        str(RULES_DIR),
        "--out",
        str(out_file),
        "--fail-on",
        "critical",
    ]
    code, out, err = run(argv, capsys)
    assert code == 1
    records = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert sorted((r["rule_id"], r["state"]) for r in records) == [
        ("dropped-events", "resolved"),
        ("early-events", "resolved"),
    ]
    assert out.splitlines()[-1] == (
        "7 rules evaluated at 2024-03-01T10:31:00Z: 0 pending, 0 firing, 2 resolved"
    )
    # tables other than error_rollup are absent: those rules are skipped with a note
    assert "rule 'quarantined-records' skipped: table 'quarantine' not found" in err


def test_alerts_exit_0_when_below_fail_on(
    agg_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_table(
        agg_dir,
        "quarantine",
        [
            {
                "source_file": "a.json",
                "source_line": 1,
                "reason": "bad",
                "raw": "x",
                "raw_bytes": 1,
            },
        ],
    )
    argv = [
        "alerts",
        str(agg_dir),
        "--rules",
        str(RULES_DIR / "quarantine.yaml"),
        "--now",
        "2024-03-01T00:00:00Z",
    ]
    assert run([*argv, "--fail-on", "critical"], capsys)[0] == 0
    code, out, _ = run([*argv, "--fail-on", "warning"], capsys)
    assert code == 1
    assert out.splitlines()[0] == (
        "FIRING   warning  quarantined-records {source_file=a.json} value=1 "
        "since 2024-03-01T00:00:00Z"
    )


def test_rerun_merges_and_does_not_notify_twice(
    agg_dir: Path, tmp_path: Path, ok_hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "alerts.jsonl"
    argv = [
        "alerts",
        str(agg_with_drops(agg_dir)),
        "--rules",
        str(RULES_DIR),
        "--out",
        str(out_file),
        "--webhook",
        ok_hook.url,
        "--now",
        "2024-03-01T10:03:00Z",
    ]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert "webhook: 2 payloads delivered" in out
    first = out_file.read_text()
    assert [json.loads(x)["state"] for x in first.splitlines()] == ["firing", "firing"]
    code, out, _ = run(argv, capsys)  # same data, same time: nothing new to say
    assert "webhook: 0 payloads delivered" in out
    assert out_file.read_text() == first
    later = [*argv[:-1], "2024-03-01T10:40:00Z"]
    code, out, _ = run(later, capsys)  # both resolved since: notified once more
    assert "webhook: 2 payloads delivered" in out
    states = [json.loads(x)["state"] for x in out_file.read_text().splitlines()]
    assert states == ["resolved", "resolved"]
    assert [b["status"] for b in ok_hook.bodies] == ["firing", "firing", "resolved", "resolved"]


def test_one_delivered_payload_is_counted_in_the_singular(
    agg_dir: Path, tmp_path: Path, ok_hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "alerts",
        str(agg_with_drops(agg_dir)),
        "--rules",
        str(RULES_DIR / "dropped_events.yaml"),
        "--out",
        str(tmp_path / "alerts.jsonl"),
        "--webhook",
        ok_hook.url,
        "--now",
        "2024-03-01T10:03:00Z",
    ]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert "webhook: 1 payload delivered\n" in out
    assert len(ok_hook.bodies) == 1


def test_failed_delivery_exits_2_after_writing_alerts(
    agg_dir: Path, tmp_path: Path, failing_hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "alerts.jsonl"
    argv = [
        "alerts",
        str(agg_with_drops(agg_dir)),
        "--rules",
        str(RULES_DIR / "dropped_events.yaml"),
        "--out",
        str(out_file),
        "--webhook",
        failing_hook.url,
        "--webhook-timeout",
        "0.5",
        "--webhook-attempts",
        "2",
        "--now",
        "2024-03-01T10:03:00Z",
    ]
    code, _, err = run(argv, capsys)
    assert code == 2
    assert err == (
        f"orderdoc alerts: error: webhook URL {failing_hook.url}: delivery failed after "
        "2 attempts: HTTP 503 Service Unavailable\n"
    )
    assert len(out_file.read_text().splitlines()) == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--now", "yesterday"], "--now 'yesterday' is not an ISO 8601 time"),
        (["--now", "2024-03-01T10:00:00"], "--now '2024-03-01T10:00:00' has no time zone"),
        (
            ["--webhook", "ftp://x/y"],
            "webhook URL 'ftp://x/y' is not an http(s) URL with a host (use --webhook)",
        ),
        (["--webhook-attempts", "0"], "--webhook-attempts 0 must be at least 1"),
    ],
)
def test_bad_flags_exit_2_with_one_line(
    agg_dir: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        ["alerts", str(agg_with_drops(agg_dir)), "--rules", str(RULES_DIR), *extra], capsys
    )
    assert code == 2
    assert err.startswith(f"orderdoc alerts: error: {message}")
    assert len(err.splitlines()) == 1


def test_missing_agg_dir_and_bad_rules_exit_2(
    tmp_path: Path, agg_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["alerts", str(tmp_path / "none"), "--rules", str(RULES_DIR)], capsys)
    assert code == 2
    assert err == (
        f"orderdoc alerts: error: {tmp_path / 'none'}: no such aggregate folder "
        "(expected the output of 'orderdoc aggregate')\n"
    )
    bad = HERE / "bad" / "unknown_severity.yaml"
    code, _, err = run(["alerts", str(agg_with_drops(agg_dir)), "--rules", str(bad)], capsys)
    assert code == 2
    assert err == f"orderdoc alerts: error: {expected_messages(bad)[0]}\n"


def test_table_missing_a_column_is_an_input_error(
    agg_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import polars as pl

    folder = agg_dir / "error_rollup"
    folder.mkdir()
    pl.DataFrame({"job": ["j1"], "kind": ["EarlyInputEvent"]}).write_parquet(folder / "x.parquet")
    code, _, err = run(
        [
            "alerts",
            str(agg_dir),
            "--rules",
            str(RULES_DIR / "dropped_events.yaml"),
            "--now",
            "2024-03-01T00:00:00Z",
        ],
        capsys,
    )
    assert code == 2
    assert err == (
        f"orderdoc alerts: error: {folder}: column 'event_count' needed by rule "
        "'dropped-events' is missing\n"
    )


def test_end_of_data_spans_every_table_and_empty_rules_are_fine(
    agg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agg_with_drops(agg_dir)  # error_rollup ends at 10:30
    write_table(agg_dir, "metrics", [{"job": "j1", "minute": "2024-03-01T11:00:00Z"}])
    empty = tmp_path / "empty.yaml"
    empty.write_text("rules: []\n", encoding="utf-8")
    code, out, err = run(["alerts", str(agg_dir), "--rules", str(empty)], capsys)
    assert (code, err) == (0, "")
    assert out == "0 rules evaluated at 2024-03-01T11:01:00Z: 0 pending, 0 firing, 0 resolved\n"
