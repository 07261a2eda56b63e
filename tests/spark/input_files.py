"""Captures the Spark commands must read as the local ones do, given the input flags:
a ``;``-separated CSV with decimal commas whose header the detection would misread, and an
Event Hubs Capture folder in a custom path layout."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from diagnostics.captures.capture_writer import write_capture_folder

LATE = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios" / "late_senders"
#: Partition folder, then the day, then the time: ``p3/2024-01-01/00-05-00.avro``.
PATH_FORMAT = "p{PartitionId}/{Year}-{Month}-{Day}/{Hour}-{Minute}-{Second}"


def late_rows(n: int = 300) -> pl.DataFrame:
    """The first ``n`` rows of the late-senders scenario's capture."""
    return pl.read_csv(LATE / "capture.csv").head(n)


def european_csv(path: Path, n: int = 300) -> list[str]:
    """``path`` written ``;``-separated with decimal commas; the last column's name holds as
    many commas as the header has semicolons, so only ``--separator ';'`` reads it. Returns
    the flags that do."""
    frame = late_rows(n).select("event_time", "arrival_time", "partition_id", "value")
    text = pl.col("value").map_elements(
        lambda v: f"{v:.2f}".replace(".", ","), return_dtype=pl.String
    )
    frame.with_columns(text).rename({"value": "value,avg,°C,1m"}).write_csv(path, separator=";")
    return ["--separator", ";", "--decimal-comma"]


def custom_capture(folder: Path, n: int = 300) -> list[str]:
    """An Event Hubs Capture folder under ``folder`` laid out as :data:`PATH_FORMAT` says.
    Returns the flag that reads it."""
    staged = folder.with_name(folder.name + "-default")
    for path in write_capture_folder(late_rows(n), staged, window_s=120):
        parts = path.relative_to(staged).parts  # namespace, hub, partition, Y, M, D, h, m, s
        partition, (year, month, day, hour, minute) = parts[2], parts[3:8]
        second = parts[8].removesuffix(".avro")
        moved = (
            folder / f"p{partition}" / f"{year}-{month}-{day}" / f"{hour}-{minute}-{second}.avro"
        )
        moved.parent.mkdir(parents=True, exist_ok=True)
        path.rename(moved)
    return ["--capture-path-format", PATH_FORMAT]
