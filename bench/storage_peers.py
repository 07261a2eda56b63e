"""The storage libraries orderdoc could read a storage account with, measured against Azurite
on the same three jobs (docs/performance.md, "Reading a storage account"):

- **list**: the 1,000 blobs under one job's ``resourceId=.../`` prefix (name, size, ETag);
- **capture**: every blob of a Capture folder (the fleet's: 200 blobs, 91 MB), read whole, as
  many at once as the library does well (8 threads, or its own async batch);
- **ranges**: an append blob read by range from the last offset, 200 times (a watcher's tick:
  the bytes appended since the last read, 20 KB each).

Candidates: azure-storage-blob (the official client; threads), adlfs (fsspec over the
official client's async API), obstore (Rust's object_store). DuckDB's azure extension is
version-locked to its DuckDB and cannot load into the installed one (the section says which).
Every figure is a median of ``--runs`` runs, wall seconds; import time is measured in a fresh
interpreter. Used by bench/storage_bench.py, which also uploads the data.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Job:
    """What each library reads: the container, the listed prefix, the capture's blobs, the
    append blob and its ranges."""

    connection_string: str
    endpoint: str
    account: str
    key: str
    container: str
    list_prefix: str
    capture: tuple[str, ...]
    append: str
    ranges: tuple[tuple[int, int], ...]


def _median(runs: int, work: Callable[[], Any]) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def _import_seconds(module: str) -> float:
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def azure_blob(job: Job, runs: int) -> dict[str, float]:
    from azure.storage.blob import ContainerClient

    client = ContainerClient.from_connection_string(job.connection_string, job.container)

    def listing() -> int:
        return sum(1 for _ in client.list_blobs(name_starts_with=job.list_prefix))

    def capture() -> int:
        with ThreadPoolExecutor(8) as pool:
            return sum(pool.map(lambda n: len(client.download_blob(n).readall()), job.capture))

    blob = client.get_blob_client(job.append)

    def ranges() -> int:
        return sum(len(blob.download_blob(offset=a, length=b - a).readall()) for a, b in job.ranges)

    return _three(runs, listing, capture, ranges) | {
        "import": _import_seconds("azure.storage.blob")
    }


def adlfs_fs(job: Job, runs: int) -> dict[str, float]:
    import adlfs

    fs = adlfs.AzureBlobFileSystem(
        connection_string=job.connection_string, skip_instance_cache=True
    )

    def listing() -> int:
        fs.invalidate_cache()
        return len(fs.find(f"{job.container}/{job.list_prefix}", detail=True))

    def capture() -> int:
        got = fs.cat([f"{job.container}/{n}" for n in job.capture])
        return sum(len(v) for v in got.values())

    path = f"{job.container}/{job.append}"

    def ranges() -> int:
        return sum(len(fs.cat_file(path, start=a, end=b)) for a, b in job.ranges)

    return _three(runs, listing, capture, ranges) | {"import": _import_seconds("adlfs")}


def obstore_store(job: Job, runs: int) -> dict[str, float]:
    import obstore
    from obstore.store import AzureStore

    store = AzureStore(
        job.container,
        account_name=job.account,
        account_key=job.key,
        endpoint=job.endpoint,
        client_options={"allow_http": True},
    )

    def listing() -> int:
        return sum(len(batch) for batch in obstore.list(store, prefix=job.list_prefix))

    async def read_all() -> int:
        got = await asyncio.gather(*(obstore.get_async(store, n) for n in job.capture))
        sizes = await asyncio.gather(*(g.bytes_async() for g in got))
        return sum(len(s) for s in sizes)

    def capture() -> int:
        return asyncio.run(read_all())

    def ranges() -> int:
        return sum(len(obstore.get_range(store, job.append, start=a, end=b)) for a, b in job.ranges)

    return _three(runs, listing, capture, ranges) | {"import": _import_seconds("obstore")}


def _three(
    runs: int, listing: Callable[[], int], capture: Callable[[], int], ranges: Callable[[], int]
) -> dict[str, float]:
    listing()  # a first call opens the connections: not measured
    took_list, listed = _median(runs, listing)
    took_capture, read = _median(runs, capture)
    took_ranges, ranged = _median(runs, ranges)
    return {
        "list": took_list,
        "listed": listed,
        "capture": took_capture,
        "capture_bytes": read,
        "ranges": took_ranges,
        "range_bytes": ranged,
    }


PEERS: dict[str, Callable[[Job, int], dict[str, float]]] = {
    "azure-storage-blob": azure_blob,
    "adlfs (fsspec)": adlfs_fs,
    "obstore": obstore_store,
}


def duckdb_azure_note() -> str:
    """Whether DuckDB's azure extension can be had for the installed DuckDB."""
    import duckdb

    try:
        import duckdb_extension_azure  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return (
            f"duckdb {duckdb.__version__}: the PyPI package duckdb-extension-azure (1.5.5) "
            "requires duckdb==1.5.5 and its extension refuses to load into another version"
        )
    return "duckdb-extension-azure installed"
