"""``/metrics`` without Spark or Alertmanager: the values of every gauge after a tick, from
tables, an alert store and a manifest made here, scraped over HTTP on 127.0.0.1."""

from __future__ import annotations

import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from diagnostics.appdata.build import build_from_logs
from diagnostics.rules.loader import load_rules
from diagnostics.rules.model import AlertState
from diagnostics.watch.alertstate import AlertStore
from diagnostics.watch.manifest import FileState, ReadMode
from tests.watch.test_alertstate import T0, alert

prometheus = pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from diagnostics.watch.metrics import WatchMetrics  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
JOB = "MYSTREAMINGJOB"
#: The idle notice of sample_logs/asa-real: partition 3, 5 minutes idle, at 17:12.
IDLE_END = datetime(2019, 2, 4, 17, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def agg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("metrics") / "agg"
    build_from_logs(
        [SAMPLES / "asa-real" / "PT1H.json", SAMPLES / "asa" / "mixed-malformed.json"],
        out,
        metrics=[SAMPLES / "asa-real" / "az-monitor-metrics.json"],
    )
    return out


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def series(values: dict, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {labels: value for (got, labels), value in values.items() if got == name}


def test_every_gauge_has_its_value(agg: Path, tmp_path: Path) -> None:
    store_folder = tmp_path / "alerts"
    with AlertStore(store_folder) as store:
        store.apply([alert(AlertState.FIRING, job="ORDERS-JOB")], T0)
        store.apply([alert(AlertState.FIRING, job="ORDERS-JOB"),
                     alert(AlertState.FIRING, job="PAYMENTS-JOB", rule="early-events")],
                    T0 + timedelta(minutes=1))  # fmt: skip
        history = store.history()
    rules = load_rules([ROOT / "rules"])
    logs = tmp_path / "logs"
    written = datetime(2024, 3, 5, 11, 0, tzinfo=UTC)
    files = [
        FileState(str(logs / "h10" / "PT1H.json"), ReadMode.LINES, 1, 2, 1, 0, "0"),
        FileState(
            str(logs / "h11" / "PT1H.json"),
            ReadMode.LINES,
            1,
            2,
            1,
            int(written.timestamp() * 1e9),
            "0",
        ),
    ]
    metrics = WatchMetrics()
    port = metrics.serve(0)
    try:
        tick = written + timedelta(seconds=90)
        metrics.update(
            agg, history, now=tick, passes=3, files=files, folders=[logs], rules=rules,
            evaluated_at=IDLE_END + timedelta(minutes=2), tick_seconds=2.5,
        )  # fmt: skip
        values = scrape(port)
        # idle now: the notice at 17:12 said 5 minutes; at 17:14 a next one would continue it
        idle = (("job", JOB), ("partition", "3"), ("source", "telemetry-eh"))
        assert series(values, "orderdoc_partition_idle") == {idle: 1.0}
        assert series(values, "orderdoc_partition_idle_minutes") == {idle: 5.0}
        delay = series(values, "orderdoc_watermark_delay_max_seconds")
        assert delay[(("job", JOB), ("partition", ""))] == 615.0
        quarantined = series(values, "orderdoc_records_quarantined")
        malformed = str(SAMPLES / "asa" / "mixed-malformed.json")
        assert quarantined == {(("job", "ORDERS-JOB"), ("source_file", malformed)): 5.0}
        firing = series(values, "orderdoc_alerts_firing")
        assert firing[(("alertname", "dropped-events"), ("job", "ORDERS-JOB"),
                       ("partition", ""), ("severity", "critical"))] == 1.0  # fmt: skip
        assert firing[(("alertname", "early-events"), ("job", "PAYMENTS-JOB"),
                       ("partition", ""), ("severity", "critical"))] == 1.0  # fmt: skip
        # every rule of the pack reads 0 while it does not fire
        for rule in rules:
            assert firing[(("alertname", rule.id), ("job", ""), ("partition", ""),
                           ("severity", rule.severity.value))] == 0.0  # fmt: skip
        assert series(values, "orderdoc_watch_lag_seconds") == {(("folder", str(logs)),): 90.0}
        assert series(values, "orderdoc_watch_passes") == {(): 3.0}
        assert series(values, "orderdoc_watch_last_tick_timestamp_seconds") == {
            (): tick.timestamp()
        }
        assert series(values, "orderdoc_watch_tick_seconds") == {(): 2.5}

        # later: the partition has progressed, the alert resolved; the series stay, at 0
        with AlertStore(store_folder) as store:
            store.apply([alert(AlertState.RESOLVED, job="ORDERS-JOB",
                               ends=T0 + timedelta(minutes=20))], T0 + timedelta(minutes=20))  # fmt: skip
            history = store.history()
        metrics.update(
            agg, history, now=tick, passes=4, files=files, folders=[logs], rules=rules,
            evaluated_at=IDLE_END + timedelta(minutes=7),
        )  # fmt: skip
        values = scrape(port)
        assert series(values, "orderdoc_partition_idle") == {idle: 0.0}
        assert series(values, "orderdoc_partition_idle_minutes") == {idle: 5.0}
        firing = series(values, "orderdoc_alerts_firing")
        assert firing[(("alertname", "dropped-events"), ("job", "ORDERS-JOB"),
                       ("partition", ""), ("severity", "critical"))] == 0.0  # fmt: skip
        assert sum(firing.values()) == 0.0
    finally:
        metrics.stop()
