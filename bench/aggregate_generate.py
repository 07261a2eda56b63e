"""Generate realistic ASA diagnostic logs for the aggregate benchmark (git-ignored bench/data/).

Layout mimics blob storage: ``bench/data/asa-logs/<job>/y=YYYY/m=MM/d=DD/h=HH/PT1H.json``,
JSON Lines (the current format), properties as objects, every kind of record (late, early,
out of order, invalid timestamps, idle notices) with ASA's messages and example events.
Files are written in a fixed order so that the first N files of the sorted listing form the
smaller benchmark sizes. Deterministic: a seeded RNG and fixed start time.

    .venv/bin/python bench/aggregate_generate.py --gb 1.0
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "asa-logs"
JOBS = [f"JOB-{i:02d}" for i in range(8)]
START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
IDLE = (
    "Input Partition [{p}] does not have additional data for more than [{m}] minute(s). "
    "Partition will not progress until either events arrive or late arrival threshold is met."
)


def ts(value: dt.datetime, z: bool = True) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0" + ("Z" if z else "")


def record(
    rng: random.Random, job: str, now: dt.datetime, partition: int, idle_minutes: int
) -> dict:
    rid = (
        "/SUBSCRIPTIONS/6A9B1D2C-0000-4000-8000-000000000000/RESOURCEGROUPS/RG-STREAMING/"
        f"PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/{job}"
    )
    envelope = {"time": ts(now), "resourceId": rid, "category": "Execution",
                "operationName": "Process Events", "level": "Information"}  # fmt: skip
    if idle_minutes:
        envelope["level"] = "Warning"
        envelope["properties"] = {
            "Source": "telemetry-eh", "Type": "InputPartitionNotProgressing",
            "Message": IDLE.format(p=partition, m=idle_minutes),
        }  # fmt: skip
        return envelope
    kind = rng.choices(
        ["LateInputEvent", "EarlyInputEvent", "OutOfOrderEvent", "InvalidInputTimeStamp"],
        weights=[60, 10, 25, 5],
    )[0]
    first = now - dt.timedelta(seconds=rng.uniform(30, 60))
    last = now - dt.timedelta(seconds=rng.uniform(0, 29))
    arrival = first - dt.timedelta(seconds=rng.uniform(0, 5))
    if kind == "LateInputEvent":
        app = arrival - dt.timedelta(seconds=rng.uniform(6, 900))
        brief = (f"Input event with application timestamp '{ts(app, False)}' and arrival time "
                 f"'{ts(arrival, False)}' was sent later than configured tolerance.")  # fmt: skip
    elif kind == "EarlyInputEvent":
        app = arrival + dt.timedelta(seconds=rng.uniform(301, 1800))
        brief = (f"Input event arrival time '{ts(arrival, False)}' is earlier than input event "
                 f"application timestamp '{ts(app, False)}' by more than 5 minutes.")  # fmt: skip
    elif kind == "OutOfOrderEvent":
        app = arrival - dt.timedelta(seconds=rng.uniform(1, 60))
        brief = "Out of order event(s) received."
    else:
        app = arrival
        brief = "Input event has an invalid or missing timestamp."
    example = {"deviceId": f"dev-{rng.randrange(5000):04d}", "temperature": round(rng.uniform(-5, 40), 2),
               "humidity": rng.randrange(100), "eventTime": ts(app), "PartitionId": partition,
               "EventEnqueuedUtcTime": ts(arrival), "EventProcessedUtcTime": ts(now)}  # fmt: skip
    envelope["properties"] = {
        "Source": "telemetry-eh", "Type": "DataError", "DataErrorType": kind,
        "BriefMessage": brief, "Message": brief, "ExampleEvents": json.dumps([example]),
        "FromTimestamp": ts(first), "ToTimestamp": ts(last), "EventCount": rng.randrange(1, 500),
    }  # fmt: skip
    return envelope


def generate(target_bytes: int, file_bytes: int, out: Path) -> tuple[int, int]:
    """Write files until ``target_bytes``; returns (files, records)."""
    rng = random.Random(20240101)
    written = files = records = 0
    hour = 0
    while written < target_bytes:
        job = JOBS[hour % len(JOBS)]
        when = START + dt.timedelta(hours=hour // len(JOBS))
        folder = out / f"{hour:05d}-{job}" / when.strftime("y=%Y/m=%m/d=%d/h=%H/m=00")
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        size = 0
        idle_since: dict[int, int] = {}
        second = 0
        while size < file_bytes:
            second += rng.randrange(1, 4)
            now = when + dt.timedelta(seconds=second % 3600, microseconds=rng.randrange(10**6))
            partition = rng.randrange(32)
            idle = 0
            if rng.random() < 0.03:
                idle = idle_since.get(partition, 0) + 5
                idle_since[partition] = idle
            line = json.dumps(record(rng, job, now, partition, idle), separators=(",", ":"))
            lines.append(line)
            size += len(line) + 2
        data = ("\r\n".join(lines) + "\r\n").encode()
        (folder / "PT1H.json").write_bytes(data)
        written += len(data)
        files += 1
        records += len(lines)
        hour += 1
    return files, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0, help="total size (default 1.0)")
    parser.add_argument("--file-mb", type=float, default=4.0, help="size of one file")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    files, records = generate(int(args.gb * 1e9), int(args.file_mb * 1e6), args.out)
    print(f"wrote {files} files, {records:,} records, {args.gb} GB to {args.out}")


if __name__ == "__main__":
    main()
