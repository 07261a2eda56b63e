"""The numbers sample_logs/asa/README.md promises, checked with the pure-Python reader."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.inputs import expand_inputs
from diagnostics.logs.reader import read_records
from diagnostics.logs.records import DataError

# file -> (records, parsed, quarantined, events by kind, idle partitions), as in the README
EXPECTED = {
    "PT1H.json": (6, 6, 0, {"LateInputEvent": 29, "EarlyInputEvent": 3, "OutOfOrderEvent": 7, "InputPartitionNotProgressing": 2}, [2]),
    "eventhubs-records.json": (3, 3, 0, {"LateInputEvent": 12, "OutOfOrderEvent": 4, "InputPartitionNotProgressing": 1}, [0]),
    "bare-array.json": (2, 2, 0, {"EarlyInputEvent": 2, "InvalidInputTimeStamp": 5}, []),
    "loganalytics-azurediagnostics.csv": (3, 3, 0, {"LateInputEvent": 8, "InputPartitionNotProgressing": 1, "OutOfOrderEvent": 6}, [1]),
    "activity-log.json": (3, 3, 0, {"LateInputEvent": 24, "InputPartitionNotProgressing": 2}, [2]),
    "PT1H-archive.json.gz": (2, 2, 0, {"LateInputEvent": 3, "InputPartitionNotProgressing": 1}, [3]),
    "mixed-malformed.json": (7, 2, 5, {"LateInputEvent": 2, "OutOfOrderEvent": 1}, []),
    "orderdoc-replay/diagnostics.jsonl": (2, 2, 0, {"LateInputEvent": 4, "InputPartitionNotProgressing": 1}, [1]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_sample_file(samples: Path, name: str) -> None:
    outcomes = list(read_records((samples / name).read_bytes(), name))
    parsed = [o for o in outcomes if isinstance(o, DataError)]
    kinds: Counter[str] = Counter()
    for item in parsed:
        kinds[item.kind] += item.event_count
    idle = sorted({p.partition_id for p in parsed if p.kind == "InputPartitionNotProgressing"})
    total, good, bad, by_kind, partitions = EXPECTED[name]
    assert (len(outcomes), len(parsed), len(outcomes) - len(parsed)) == (total, good, bad)
    assert dict(kinds) == by_kind
    assert idle == partitions


def test_every_sample_shape_is_present_and_small(samples: Path) -> None:
    files = expand_inputs([str(samples)])
    names = {str(Path(p).relative_to(samples)) for p in files.logs}
    assert names == set(EXPECTED)
    assert [Path(p).name for p in files.metrics] == ["metrics.parquet"]
    size = sum(p.stat().st_size for p in samples.rglob("*") if p.is_file())
    assert size < 1_000_000


def test_malformed_sample_quarantine_lines(samples: Path) -> None:
    tables = aggregate_files([str(samples / "mixed-malformed.json")])
    lines = tables.quarantine.sort("source_line")["source_line"].to_list()
    assert lines == [3, 4, 5, 6, 7]


def test_whole_folder_summary(samples: Path) -> None:
    files = expand_inputs([str(samples)])
    tables = aggregate_files(files.logs, files.metrics, skipped=files.skipped)
    assert tables.summary == {
        "records_total": 28,
        "records_parsed": 23,
        "records_quarantined": 5,
        "events_by_kind": {
            "EarlyInputEvent": 5,
            "InputPartitionNotProgressing": 8,
            "InvalidInputTimeStamp": 5,
            "LateInputEvent": 82,
            "OutOfOrderEvent": 18,
        },
        "records_without_count": {},
        "idle_partitions": [0, 1, 2, 3],
        "job_events": 0,
        "jobs": ["ASAjob", "ORDERS-JOB", "PAYMENTS-JOB", "REPLAY"],
        "time_range": {"from": "2019-02-03T20:54:16.000000Z", "to": "2024-03-07T00:07:00.000000Z"},
        "files_read": 9,
        "files_skipped": [str(samples / "README.md")],
    }
    assert tables.metrics.height == 3
    episodes = tables.partition_idle.filter(pl.col("partition_id") == 2).sort("start")
    utc = dt.UTC
    assert episodes.select("job", "start", "end", "notices", "max_idle_minutes").rows() == [
        (None, dt.datetime(2019, 2, 3, 20, 49, 16, tzinfo=utc), dt.datetime(2019, 2, 3, 20, 59, 16, tzinfo=utc), 2, 10),
        ("ORDERS-JOB", dt.datetime(2024, 3, 5, 10, 5, tzinfo=utc), dt.datetime(2024, 3, 5, 10, 15, tzinfo=utc), 2, 10),
    ]  # fmt: skip
    assert tables.partition_idle.height == 6
