"""``orderdoc watch``: bad input is one line and exit code 2, before Spark starts."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from diagnostics.cli import flags, main
from diagnostics.cli.watch import resend_period
from diagnostics.errors import Setting, UsageError
from diagnostics.watch.runner import WatchConfig


def _state(tmp: Path, kind: str) -> Path:
    state = tmp / "state"
    state.mkdir()
    if kind == "manifest":
        (state / "manifest.json").write_text("{not json", encoding="utf-8")
    elif kind == "plan":
        (state / "plan.json").write_text('{"number": "x"}', encoding="utf-8")
    elif kind == "types":
        manifest = {"version": 1, "passes": 1, "metrics": [], "skipped": [], "files": [
            {"path": "/l/PT1H.json", "mode": "lines", "offset": "abc", "line": 1, "size": 3,
             "mtime_ns": 1, "head": "0"}]}  # fmt: skip
        (state / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    elif kind == "file":
        state.rmdir()
        state.write_text("", encoding="utf-8")
    elif kind == "jobs":
        (state / "jobs").mkdir()
        (state / "jobs" / "p00000001.json").write_text('{"sources": {}}', encoding="utf-8")
    elif kind == "compaction":
        (state / "compaction.json").write_text('{"through": "x", "merges": []}', encoding="utf-8")
    elif kind == "alerts":
        (state / "alerts").mkdir()
        (state / "alerts" / "alerts.db").write_bytes(b"garbage" * 200)
    return state


@pytest.mark.parametrize(
    ("extra", "state_kind", "message"),
    [
        (
            ["--webhook", "ftp://host/x"],
            "",
            "webhook URL 'ftp://host/x' is not an http(s) URL with a host",
        ),
        (["--interval", "0s"], "", "argument --interval: '0s' must be more than 0"),
        (
            ["--remote", "sc://127.0.0.1:1"],
            "",
            "Spark Connect server 'sc://127.0.0.1:1' cannot be reached (Connection refused)",
        ),
        ([], "manifest", "manifest.json: corrupt watcher state"),
        ([], "types", "corrupt watcher state (files: 'offset' is 'abc', not a whole number"),
        ([], "file", "is a file, not a folder (use --state)"),
        (
            ["--webhook", "notaurl"],
            "",
            "--webhook: webhook URL 'notaurl' is not an http(s) URL with a host",
        ),
        ([], "plan", "plan.json: corrupt watcher state"),
        ([], "compaction", "compaction.json: corrupt watcher state ('through' is 'x'"),
        ([], "jobs", "jobs/p00000001.json: corrupt watcher state (no field 'applied')"),
        ([], "alerts", "alerts.db: cannot open the alert store (file is not a database)"),
        (["--metrics-port", "70000"], "", "argument --metrics-port: '70000' is not a port"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, extra, state_kind, message) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    state = _state(tmp_path, state_kind) if state_kind else tmp_path / "state"
    try:
        code = main(["watch", str(logs), "--state", str(state), *extra])
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert message in err
    assert "\n" not in err
    assert "Traceback" not in err
    if "--webhook" in extra:  # the flag was given: no hint to use it
        assert "(use --webhook)" not in err


def test_missing_folder_and_state_inside_the_logs(tmp_path, capsys) -> None:
    assert main(["watch", str(tmp_path / "nope"), "--state", str(tmp_path / "s")]) == 2
    assert capsys.readouterr().err.strip().endswith("/nope': no such folder")
    logs = tmp_path / "logs"
    logs.mkdir()
    assert main(["watch", str(logs), "--state", str(logs / "state")]) == 2
    assert "is inside the log folder" in capsys.readouterr().err


def test_library_errors_name_settings_and_the_command_line_adds_the_flag(tmp_path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    with pytest.raises(UsageError) as caught:
        WatchConfig(folders=(logs,), state=tmp_path / "s", interval_s=0)
    assert caught.value.setting is Setting.WATCH_INTERVAL
    assert "--" not in str(caught.value)
    assert flags.message(caught.value).endswith("must be more than 0 (use --interval)")
    with pytest.raises(UsageError) as caught:
        WatchConfig(folders=(logs,), state=logs / "state")
    assert caught.value.setting is Setting.WATCH_STATE
    assert str(caught.value).startswith("state folder ")
    assert "is inside the log folder" in str(caught.value)


def test_a_busy_metrics_port_names_the_setting() -> None:
    pytest.importorskip("prometheus_client")
    from diagnostics.watch.metrics import WatchMetrics

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(UsageError) as caught:
            WatchMetrics().serve(port)
    assert caught.value.setting is Setting.METRICS_PORT
    assert str(caught.value).startswith(f"metrics port {port}: cannot listen on 127.0.0.1:")
    assert flags.message(caught.value).endswith("(use --metrics-port)")


def test_resend_default_for_alertmanager_urls() -> None:
    assert resend_period("http://127.0.0.1:9093/api/v2/alerts", None) == 60.0
    assert resend_period("http://127.0.0.1:9093/api/v2/alerts/", None) == 60.0
    assert resend_period("http://127.0.0.1:9093/api/v2/alerts", 0.0) == 0.0
    assert resend_period("http://127.0.0.1:9093/api/v2/alerts", 15.0) == 15.0
    assert resend_period("http://127.0.0.1:8080/hook", None) == 0.0
    assert resend_period(None, None) == 0.0


def test_the_rules_default_to_orderdoc_rules_as_for_alerts(tmp_path, capsys, monkeypatch) -> None:
    """Without --rules the watcher loads what ORDERDOC_RULES names, as ``alerts`` does (a
    broken file there stops it before Spark starts); --rules wins over the variable."""
    logs = tmp_path / "logs"
    logs.mkdir()
    broken = tmp_path / "team.yaml"
    broken.write_text("groups: []\n", encoding="utf-8")
    monkeypatch.setenv("ORDERDOC_RULES", str(broken))
    args = ["watch", str(logs), "--state", str(tmp_path / "state"), "--once"]
    assert main(args) == 2
    watch_err = capsys.readouterr().err.strip()
    assert watch_err.startswith(f"orderdoc watch: error: {broken}:1: field 'groups'")
    assert main(["alerts", str(tmp_path)]) == 2
    alerts_err = capsys.readouterr().err.strip()
    assert alerts_err.split("error: ", 1)[1] == watch_err.split("error: ", 1)[1]
    assert main([*args, "--rules", str(tmp_path / "absent.yaml")]) == 2
    given = capsys.readouterr().err
    assert "absent.yaml" in given
    assert "team.yaml" not in given


def test_a_watcher_keeps_little_of_spark_s_finished_jobs(tmp_path, monkeypatch) -> None:
    """The watcher's own session keeps few finished jobs, queries and tasks for Spark's status
    pages (a process that runs for weeks); a --conf of the same key wins; a Spark Connect
    server keeps its own settings."""
    from diagnostics.cli import watch
    from diagnostics.spark import session

    logs = tmp_path / "logs"
    logs.mkdir()
    targets = []

    def stop(target):  # type: ignore[no-untyped-def]
        targets.append(target)
        raise UsageError("stopped here")

    monkeypatch.setattr(session, "build_session", stop)
    monkeypatch.setattr(session, "check_reachable", lambda _url: None)
    base = ["watch", str(logs), "--state", str(tmp_path / "state")]
    assert main([*base, "--conf", "spark.sql.ui.retainedExecutions=7"]) == 2
    assert main([*base, "--remote", "sc://127.0.0.1:15002"]) == 2
    conf = dict(targets[0].conf)
    assert conf["spark.ui.retainedJobs"] == "100"
    assert conf["spark.sql.ui.retainedExecutions"] == "7"
    assert dict(watch.WATCH_CONF)["spark.sql.ui.retainedExecutions"] == "50"
    assert targets[1].conf == ()
