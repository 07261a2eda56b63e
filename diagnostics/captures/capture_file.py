"""One Event Hubs Capture file decoded into columns: the per-file step every reader shares
(the local read, its cache, the Spark replay's tasks).

The records are decoded by DataFusion's Avro reader into Arrow (no Python object per
record), once the file's frame has been walked (:mod:`diagnostics.captures.avro_blocks`): a
file that does not walk cleanly, or that the decoder reads otherwise than its frame says, is
read record by record with fastavro, which names what is wrong with it. The maps become JSON
text and the arrival times epoch milliseconds (:mod:`diagnostics.captures.capture_maps`), the
bodies columns (:mod:`diagnostics.captures.bodies`).
"""

from __future__ import annotations

import dataclasses
import importlib.machinery
import importlib.util
import io
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import polars as pl
import pyarrow as pa

from diagnostics.captures.avro_blocks import field_names, walk
from diagnostics.captures.bodies import Bodies, read_bodies
from diagnostics.captures.capture_maps import (
    ENQUEUED_MS,
    constant,
    map_columns,
    properties_text,
    text_ms,
)
from diagnostics.captures.paths import CaptureFile
from diagnostics.errors import InputError

#: What Capture writes in every record (Body may be null).
REQUIRED_FIELDS = ("SequenceNumber", "Offset", "EnqueuedTimeUtc", "Body")
#: A file's own columns, before its body fields (``Body``: the raw text of the bodies not
#: read as a JSON object).
HEAD = ("SequenceNumber", "Offset", "arrival_ms", "Properties", "SystemProperties", "Body")
_LOCAL = threading.local()


@dataclass(frozen=True, slots=True)
class FileTable:
    """A Capture file's records as columns (:data:`HEAD`), its body fields (``fields``,
    named ``b:<key>``; ``kinds``: the kinds of values each holds; ``values``: the Python
    values, as JSON text, of the fields without one scalar kind, named ``j:<key>``) and
    what the reader counts."""

    head: pl.DataFrame
    fields: pl.DataFrame
    values: pl.DataFrame
    kinds: dict[str, tuple[str, ...]]
    without_json: int
    repeated: int
    from_text: int
    #: for each field some body holds as null, which do (``n:<key>``; absent: false)
    nulls: pl.DataFrame = dataclasses.field(default_factory=pl.DataFrame)

    @property
    def raw(self) -> int:
        """The bodies kept as raw text (not read as a JSON object, not null)."""
        return self.head.height - self.head["Body"].null_count()

    @property
    def records(self) -> int:
        """The file's records."""
        return self.head.height

    def frame(self) -> pl.DataFrame:
        """Every column, as a cache entry holds them."""
        return pl.concat([self.head, self.fields, self.values, self.nulls], how="horizontal")


_ENGINE_LOCK = threading.Lock()
_NAME = "datafusion._internal"


def _engine() -> Any:
    """DataFusion's compiled module (once a process). It is loaded on its own: the
    package's Python layer imports pandas (a second of start-up) for functions the reader
    does not use. ``None`` when it cannot be (the package is used then)."""
    with _ENGINE_LOCK:
        if _NAME in sys.modules:
            return sys.modules[_NAME]
        try:
            spec = importlib.util.find_spec("datafusion")
            folders = spec.submodule_search_locations if spec is not None else None
            found = [p for f in folders or [] for p in sorted(Path(f).glob("_internal*.so"))]
            loader = importlib.machinery.ExtensionFileLoader(_NAME, str(found[0]))
            made = importlib.util.spec_from_loader(_NAME, loader)
            if made is None:
                return None
            module = importlib.util.module_from_spec(made)
            loader.exec_module(module)
        except (ImportError, IndexError, OSError, AttributeError):
            return None
        sys.modules[_NAME] = module  # the package, imported later, takes this one
        return module


def _session() -> Any:
    """This thread's DataFusion session: ``(context, whether it is the compiled one's)``."""
    found = getattr(_LOCAL, "session", None)
    if found is None:
        engine = _engine()
        if engine is not None:
            config = engine.SessionConfig().with_batch_size(1 << 30).with_target_partitions(1)
            found = (engine.SessionContext(config, None), True)
        else:
            import datafusion

            config = datafusion.SessionConfig().with_batch_size(1 << 30).with_target_partitions(1)
            found = (datafusion.SessionContext(config), False)
        _LOCAL.session = found
    return found


def _read_avro(path: str, suffix: str) -> pa.Table:
    context, compiled = _session()
    if compiled:
        try:
            return context.read_avro(path, None, [], suffix).to_arrow_table()
        except TypeError:  # another signature: through the package from now on
            import datafusion

            config = datafusion.SessionConfig().with_batch_size(1 << 30).with_target_partitions(1)
            _LOCAL.session = (datafusion.SessionContext(config), False)
            context = _LOCAL.session[0]
    return context.read_avro(path, file_extension=suffix).to_arrow_table()


def _columnar(file: CaptureFile, data: bytes) -> pa.Table | None:
    """The file's records decoded by DataFusion (``None``: it could not)."""
    try:
        if file.data is None:
            return _read_avro(str(file.path), file.path.suffix)
        with tempfile.NamedTemporaryFile(suffix=".avro") as handle:
            handle.write(data)
            handle.flush()
            return _read_avro(handle.name, ".avro")
    except Exception:
        return None


def _records(file: CaptureFile, data: bytes) -> list[dict[str, Any]]:
    """The records of one file, read by fastavro; an :class:`InputError` names the file."""
    count = 0
    records: list[dict[str, Any]] = []
    try:
        reader = fastavro.reader(io.BytesIO(data))
        _check_schema(file, reader.writer_schema)
        for record in reader:
            count += 1
            records.append(record)  # type: ignore[arg-type]
    except InputError:
        raise
    except (OSError, EOFError, ValueError, TypeError, KeyError, IndexError, AssertionError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        where = f"after record {count}" if count else "before the first record"
        msg = f"{file.path}: not a readable Avro file ({where}): {detail}; is it truncated?"
        raise InputError(msg) from exc
    return records


def _check_schema(file: CaptureFile, schema: object) -> None:
    missing = [f for f in REQUIRED_FIELDS if f not in field_names(schema)]
    if missing:
        msg = (
            f"{file.path}: not an Event Hubs Capture file: the Avro schema has no field "
            f"{', '.join(missing)}"
        )
        raise InputError(msg)


def _from_records(
    records: list[dict[str, Any]],
) -> tuple[pl.DataFrame, pl.Series, pl.Series, pl.Series]:
    """The columns of records read one by one: (head without arrival, enqueued text, ms,
    bodies)."""
    ms = []
    for record in records:
        value = (record.get("SystemProperties") or {}).get(ENQUEUED_MS)
        ms.append(value if isinstance(value, int) and not isinstance(value, bool) else None)
    texts = [r.get("EnqueuedTimeUtc") for r in records]
    head = pl.DataFrame(
        {
            "SequenceNumber": pl.Series([r.get("SequenceNumber") for r in records], dtype=pl.Int64),
            "Offset": pl.Series(
                [None if r.get("Offset") is None else str(r.get("Offset")) for r in records],
                dtype=pl.String,
            ),
            "Properties": pl.Series(
                [properties_text(r.get("Properties")) for r in records], dtype=pl.String
            ),
            "SystemProperties": pl.Series(
                [properties_text(r.get("SystemProperties")) for r in records], dtype=pl.String
            ),
        }
    )
    text = pl.Series([t if isinstance(t, str) else None for t in texts], dtype=pl.String)
    bodies = pl.Series([r.get("Body") for r in records], dtype=pl.Binary)
    return head, text, pl.Series("ms", ms, dtype=pl.Int64), bodies


def _from_arrow(table: pa.Table) -> tuple[pl.DataFrame, pl.Series, pl.Series, pl.Series]:
    """The same columns from DataFusion's Arrow table."""
    rows = table.num_rows
    names = set(table.column_names)

    def column(name: str) -> Any:
        return table.column(name) if name in names else None

    def plain(name: str, dtype: pl.DataType | type[pl.DataType]) -> pl.Series:
        found = column(name)
        if found is None:
            return constant(None, rows, dtype).alias(name)
        return pl.from_arrow(found).cast(dtype).alias(name)  # type: ignore[union-attr]

    system, ms = map_columns(column("SystemProperties"), rows, int_key=ENQUEUED_MS)
    assert ms is not None
    head = pl.DataFrame(
        [
            plain("SequenceNumber", pl.Int64),
            plain("Offset", pl.String),
            map_columns(column("Properties"), rows)[0].alias("Properties"),
            system.alias("SystemProperties"),
        ]
    )
    return head, plain("EnqueuedTimeUtc", pl.String), ms, plain("Body", pl.Binary)


def decode_file(file: CaptureFile) -> FileTable:
    """The records of ``file`` as columns; an :class:`InputError` names the file (and the
    record without an arrival time)."""
    try:
        data = file.data if file.data is not None else file.path.read_bytes()
    except OSError as exc:
        msg = f"{file.path}: cannot be read: {exc.strerror or exc}"
        raise InputError(msg) from exc
    frame = walk(data)
    table = None
    if frame is not None:
        _check_schema(file, frame.schema)
        table = _columnar(file, data) if frame.records else None
        if table is not None and table.num_rows != frame.records:
            table = None
    if table is not None:
        head, text, ms, body = _from_arrow(table)
    else:
        head, text, ms, body = _from_records(_records(file, data))
    return _finish(file, head, text, ms, body)


def _finish(
    file: CaptureFile, head: pl.DataFrame, text: pl.Series, ms: pl.Series, body: pl.Series
) -> FileTable:
    from_text = ms.is_null()
    arrival = ms
    if bool(from_text.any()):
        at = from_text.arg_true()
        arrival = ms.scatter(at, text_ms(text.gather(at)))
    missing = arrival.is_null()
    if bool(missing.any()):
        i = int(missing.arg_true()[0])
        msg = (
            f"{file.path}, record {i + 1}: no arrival time (no SystemProperties['{ENQUEUED_MS}'] "
            f"and EnqueuedTimeUtc '{text[i]}' is not a time)"
        )
        raise InputError(msg)
    bodies: Bodies = read_bodies(body)
    return FileTable(
        head=pl.DataFrame(
            [
                head["SequenceNumber"],
                head["Offset"],
                arrival.alias("arrival_ms"),
                head["Properties"],
                head["SystemProperties"],
                bodies.raw.alias("Body"),
            ]
        ),
        fields=bodies.fields,
        values=bodies.values,
        kinds=bodies.kinds,
        without_json=bodies.without_json,
        repeated=bodies.repeated,
        from_text=int(from_text.sum()),
        nulls=bodies.nulls,
    )


def cpu_workers() -> int:
    """Threads for decoding files side by side: the cores this process may use, at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))
