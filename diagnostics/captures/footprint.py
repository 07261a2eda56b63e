"""How much memory replaying a capture in one process needs, estimated before reading it.

The local replay's peak is a fixed part (the interpreter and its libraries:
:data:`BASE_BYTES`; the Avro decoder's besides for Capture files) plus a part per event (the
capture's columns, its outcome columns and the engine's working arrays: :data:`PER_EVENT`
bytes, by format) plus, for JSON Lines, a part of the text, which is parsed whole. The
figures are measured peaks (docs/performance.md, "The memory check"); tests replay each
format at two sizes in a child process and hold the estimate within 1.5x of its peak. The
event count comes from the file itself without reading all of it: a Parquet footer's row
count; the lines of the first MiB of text (decompressed) scaled to the file's size; the
records in the first blocks of the first Avro file scaled to the files' size.

Reading what the machine has (:func:`available_memory`) is kept apart from the arithmetic,
which tests inject.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import fastavro
import polars as pl
import pyarrow.parquet as pq

from diagnostics.captures.datasets import parquet_files
from diagnostics.captures.paths import DEFAULT_PATH_FORMAT, capture_files
from diagnostics.captures.tables import table_kind
from diagnostics.errors import InputError, OrderdocError
from diagnostics.words import plural

#: The replay's peak memory before any event: Python, polars, pyarrow (docs/performance.md).
BASE_BYTES = 200_000_000
#: ... and for Event Hubs Capture files, with their Avro decoder and its threads.
AVRO_BASE_BYTES = 360_000_000
#: Peak memory per event by format (the capture's columns, outcomes, engine arrays).
PER_EVENT = {"parquet": 800, "csv": 800, "json": 800, "avro": 520}
#: Peak memory per byte of JSON Lines text (it is parsed whole).
JSON_TEXT_FACTOR = 2.4
#: Per event, for a format not listed.
BYTES_PER_EVENT = PER_EVENT["parquet"]
_SAMPLE = 1 << 20  # bytes of text sampled for the line count
_AVRO_BLOCKS = 8  # blocks of the first Avro file sampled for the record size


class CaptureTooLargeError(OrderdocError):
    """The capture needs more memory than the machine has (exit code 2)."""


@dataclass(frozen=True, slots=True)
class Footprint:
    """A capture's estimated size: ``events``, ``text_bytes`` (read whole before parsing)
    and ``needed`` (bytes of memory the local replay takes at its peak)."""

    source: str
    events: int
    text_bytes: int
    kind: str = "parquet"

    @property
    def needed(self) -> int:
        """Peak memory of the local replay in bytes."""
        base = AVRO_BASE_BYTES if self.kind == "avro" else BASE_BYTES
        text = JSON_TEXT_FACTOR * self.text_bytes if self.kind == "json" else 0
        return int(base + self.events * PER_EVENT.get(self.kind, BYTES_PER_EVENT) + text)


def memory_size(size: int) -> str:
    """``"2.8 GB"``, ``"5.7 MB"`` (decimal units, one decimal)."""
    if size >= 1e9:
        return f"{size / 1e9:,.1f} GB"
    return f"{size / 1e6:,.1f} MB"


def _text_sample(path: Path, gz: bool) -> tuple[bytes, float]:
    """The first MiB of the file's text and its size ratio (text bytes per file byte)."""
    with path.open("rb") as handle:
        if not gz:
            return handle.read(_SAMPLE), 1.0
        inflate = zlib.decompressobj(wbits=31)
        text = b""
        used = 0
        while len(text) < _SAMPLE and not inflate.eof:
            chunk = handle.read(1 << 16)
            if not chunk:
                break
            used += len(chunk)
            try:
                text += inflate.decompress(chunk, _SAMPLE - len(text))
            except zlib.error as exc:
                msg = f"{path}: cannot be read as gzip: {exc}"
                raise InputError(msg) from exc
            used -= len(inflate.unconsumed_tail) + len(inflate.unused_data)
            if inflate.unconsumed_tail:
                break
        return text, len(text) / max(used, 1)


def _text_footprint(path: Path, gz: bool, kind: str) -> Footprint:
    size = path.stat().st_size
    sample, ratio = _text_sample(path, gz)
    text = int(size * ratio)
    lines = sample.count(b"\n") + (0 if sample.endswith(b"\n") or not sample else 1)
    events = int(lines * text / len(sample)) if sample else 0
    # read_table holds the file's bytes and, for .gz, the decompressed text as well
    held = text + (size if gz else 0)
    return Footprint(str(path), events, held, kind)


def _parquet_rows(path: Path) -> int:
    try:
        return int(pq.ParquetFile(path).metadata.num_rows)
    except NotImplementedError:  # e.g. a 128-bit integer column polars wrote: ask polars
        try:
            return int(pl.scan_parquet(path).select(pl.len()).collect().item())
        except (OSError, pl.exceptions.PolarsError) as exc:
            msg = f"{path}: cannot be read as parquet: {str(exc).splitlines()[0]}"
            raise InputError(msg) from exc
    except (OSError, ValueError) as exc:
        msg = f"{path}: cannot be read as parquet: {exc}"
        raise InputError(msg) from exc


def _avro_footprint(path: Path, path_format: str) -> Footprint:
    files = capture_files(path, path_format)
    total = sum(f.path.stat().st_size for f in files)
    records = sampled = 0
    for file in files:
        try:
            with file.path.open("rb") as handle:
                start = handle.tell()
                for n, block in enumerate(fastavro.block_reader(handle)):
                    records += block.num_records
                    if n + 1 == _AVRO_BLOCKS:
                        break
                sampled += handle.tell() - start
        except (OSError, ValueError, StopIteration, EOFError) as exc:
            msg = f"{file.path}: cannot be read as an Event Hubs Capture file: {exc}"
            raise InputError(msg) from exc
        if records:
            break
    events = int(records * total / sampled) if sampled else 0
    return Footprint(str(path), events, 0, "avro")


def estimate(path: str | Path, path_format: str | None = None) -> Footprint:
    """The footprint of the capture at ``path`` (a file, a Capture folder, or several
    Parquet files)."""
    several = parquet_files(path)
    if several is not None:
        return Footprint(str(path), sum(_parquet_rows(p) for p in several), 0)
    path = Path(path)
    if path.is_dir():
        return _avro_footprint(path, path_format or DEFAULT_PATH_FORMAT)
    if not path.is_file():
        msg = f"{path}: no such file or folder"
        raise InputError(msg)
    kind, gz = table_kind(path.name)
    if kind == "avro":
        return _avro_footprint(path, path_format or DEFAULT_PATH_FORMAT)
    if kind == "parquet":
        if gz:
            with gzip.open(path) as handle:
                rows = int(pq.ParquetFile(handle).metadata.num_rows)
            return Footprint(str(path), rows, 2 * path.stat().st_size)
        return Footprint(str(path), _parquet_rows(path), 0)
    return _text_footprint(path, gz, "json" if kind in ("json", "jsonl") else kind)


def check_fits(footprint: Footprint, available: int | None) -> None:
    """A :class:`CaptureTooLargeError` (one line: the estimate, what the machine has, and
    where to replay instead) when the footprint exceeds ``available`` bytes (``None``:
    not known, no check)."""
    if available is None or footprint.needed <= available:
        return
    msg = (
        f"{footprint.source}: replaying about {plural(footprint.events, 'event')} in this "
        f"process needs about {memory_size(footprint.needed)} of memory, more than the "
        f"{memory_size(available)} this machine has available; stopped before reading rather "
        "than be killed for lack of memory"
    )
    raise CaptureTooLargeError(msg)


def available_memory(
    meminfo: Path = Path("/proc/meminfo"), cgroup: Path = Path("/sys/fs/cgroup")
) -> int | None:
    """Bytes this process can still take: the kernel's MemAvailable, capped by the cgroup's
    limit (``memory.max`` less ``memory.current``); ``None`` where neither is readable."""
    found: list[int] = []
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
                break
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = (cgroup / "memory.max").read_text().strip()
        if limit != "max":
            used = int((cgroup / "memory.current").read_text().strip())
            found.append(max(int(limit) - used, 0))
    except (OSError, ValueError):
        pass
    return min(found) if found else None
