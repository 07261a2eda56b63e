"""Arrow glue: whole files in, parsed-record batches out (used by Spark's ``mapInArrow``).

The functions here are plain Python over Arrow, so that Spark executors, the polars peer and
tests run the very same parsing code.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa

from diagnostics.errors import InputError
from diagnostics.logs.metrics import METRICS_SCHEMA, read_metrics
from diagnostics.logs.reader import read_records
from diagnostics.logs.records import to_arrow

#: Outcomes per output batch (bounds executor memory for very large files).
BATCH_ROWS = 20_000


def local_name(path: str) -> str:
    """A Hadoop ``file:`` URI as a plain local path; other strings unchanged."""
    if path.startswith("file://"):
        return path[len("file://") :]
    if path.startswith("file:"):
        return path[len("file:") :]
    return path


def parse_file(data: bytes, name: str) -> Iterator[pa.RecordBatch]:
    """Batches (:data:`PARSED_SCHEMA`) of every record of one file, in file order."""
    chunk: list = []
    for outcome in read_records(data, name):
        chunk.append(outcome)
        if len(chunk) >= BATCH_ROWS:
            yield to_arrow(chunk)
            chunk = []
    if chunk:
        yield to_arrow(chunk)


def parse_path_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: rows of local file ``path`` in, parsed records out (each file is
    read here, by the worker, instead of being shipped to it as one value)."""
    for batch in batches:
        for path in batch.column("path").to_pylist():
            with open(path, "rb") as handle:
                data = handle.read()
            yield from parse_file(data, path)


def metrics_file_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body for engine metrics files: (``path``, ``content``) in, METRICS_SCHEMA out.

    A file that cannot be read as metrics yields no rows (the driver chose these files by their
    Parquet footer, so this only happens if a file changed during the run).
    """
    for batch in batches:
        paths = batch.column("path").to_pylist()
        contents = batch.column("content")
        for index, path in enumerate(paths):
            try:
                table = read_metrics(contents[index].as_py() or b"", local_name(path))
            except InputError:
                continue
            yield from table.cast(METRICS_SCHEMA).to_batches()
