"""The watcher's mirror of a container (no Spark; Azurite): a new blob is read whole, an
append blob that grew is read by range from the mirror's size (only the appended bytes), a
mirror cut short by kill -9 mid-append is completed, a rewritten blob is read whole again,
and a failed read is a warning retried at the next sync."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from diagnostics.storage.client import StorageError
from diagnostics.storage.follow import Mirror
from tests.storage.azurite import Azurite
from tests.storage.conftest import container_name

HOUR = "resourceId=/SUBSCRIPTIONS/0/STREAMINGJOBS/ORDERS/y=2024/m=03/d=05/h={h}/m=00/PT1H.json"


def appender(storage: Azurite, name: str):  # type: ignore[no-untyped-def]
    from azure.storage.blob import ContainerClient

    client = ContainerClient.from_connection_string(storage.connection_string, name)
    client.create_container()
    return client


def test_append_blobs_are_followed_by_range(storage: Azurite, tmp_path: Path) -> None:
    name = container_name("follow")
    client = appender(storage, name)
    blob = client.get_blob_client(HOUR.format(h=10))
    blob.create_append_blob()
    blob.append_block(b'{"n": 1}\n' * 100)
    mirror = Mirror.open(f"az://{name}/resourceId=/", tmp_path / "state" / "storage")
    local = mirror.base / HOUR.format(h=10)

    report = mirror.sync(first=True)
    assert (report.whole, report.appended, report.bytes_read) == (1, 0, 900)
    assert local.read_bytes() == b'{"n": 1}\n' * 100
    assert mirror.folder == mirror.base / "resourceId="

    blob.append_block(b'{"n": 2}\n')
    report = mirror.sync()
    assert (report.whole, report.appended, report.bytes_read) == (0, 1, 9)  # the new bytes only
    assert local.read_bytes().endswith(b'{"n": 1}\n{"n": 2}\n')

    assert mirror.sync().bytes_read == 0  # nothing new: nothing read

    # a new hour's blob, and a mirror cut short mid-append (a kill -9 while writing)
    blob.append_block(b'{"n": 3}\n' * 10)
    nxt = client.get_blob_client(HOUR.format(h=11))
    nxt.create_append_blob()
    nxt.append_block(b'{"n": 4}\n')
    with local.open("ab") as cut:  # part of the appended block written before the kill
        cut.write((b'{"n": 3}\n' * 10)[:25])
    report = Mirror.open(f"az://{name}/resourceId=/", tmp_path / "state" / "storage").sync()
    assert (report.whole, report.appended, report.bytes_read) == (1, 1, 90 - 25 + 9)
    assert local.read_bytes() == blob.download_blob().readall()
    assert (mirror.base / HOUR.format(h=11)).read_bytes() == b'{"n": 4}\n'


def test_a_rewritten_blob_is_read_whole(storage: Azurite, tmp_path: Path) -> None:
    name = container_name("rewrite")
    client = appender(storage, name)
    client.upload_blob("logs/a.json", b'{"v": "old"}\n')
    mirror = Mirror.open(f"az://{name}/logs", tmp_path / "storage")
    mirror.sync(first=True)
    client.upload_blob("logs/a.json", b'{"v": "new, and longer"}\n', overwrite=True)
    report = mirror.sync()
    assert (report.whole, report.appended) == (1, 0)
    assert (mirror.folder / "a.json").read_bytes() == b'{"v": "new, and longer"}\n'


def test_a_failed_read_is_a_warning_then_read_at_the_next_sync(
    storage: Azurite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = container_name("retry")
    client = appender(storage, name)
    client.upload_blob("logs/a.json", b'{"v": 1}\n')
    client.upload_blob("logs/b.json", b'{"v": 2}\n')
    mirror = Mirror.open(f"az://{name}/logs", tmp_path / "storage")
    original = mirror.container.read_range

    def throttled(blob: str, start: int, end: int) -> bytes:
        if blob.endswith("a.json"):
            msg = f"az://{name}/{blob}: the account is throttling requests (try again later)"
            raise StorageError(msg)
        return original(blob, start, end)

    monkeypatch.setattr(mirror.container, "read_range", throttled)
    report = mirror.sync(first=True)
    assert report.whole == 1  # b.json read; a.json not
    assert report.warnings == (
        f"az://{name}/logs/a.json: the account is throttling requests (try again later); "
        "read again at the next tick",
    )
    assert not (mirror.folder / "a.json").exists()
    monkeypatch.setattr(mirror.container, "read_range", original)
    report = mirror.sync()
    assert (report.whole, report.warnings) == (1, ())
    assert (mirror.folder / "a.json").read_bytes() == b'{"v": 1}\n'


def test_the_first_sync_fails_on_a_missing_container(storage: Azurite, tmp_path: Path) -> None:
    mirror = Mirror.open("az://no-such-logs/", tmp_path / "storage")
    with pytest.raises(
        StorageError, match=r"^az://no-such-logs/: not found \(no such container\)$"
    ):
        mirror.sync(first=True)
    later = mirror.sync()  # while watching: a warning
    assert later.warnings == (
        "az://no-such-logs/: not found (no such container); listed again at the next tick",
    )


def test_watch_since_lists_the_hours_from_then_on(storage: Azurite, tmp_path: Path) -> None:
    from diagnostics.cli.watch_storage import follow_urls

    name = container_name("since")
    client = appender(storage, name)
    for hour in ("09", "10", "11"):
        client.upload_blob(HOUR.format(h=hour), f'{{"h": {hour}}}\n'.encode())
    url = f"az://{name}/resourceId=/"
    mirrors, folders = follow_urls(
        [url, str(tmp_path / "local")], tmp_path / "state", "2024-03-05T10:30Z"
    )
    assert folders == [mirrors[0].folder, tmp_path / "local"]
    assert mirrors[0].folder.is_dir()  # there before the watcher checks its folders
    mirrors[0].sync(datetime(2024, 3, 5, 12, tzinfo=UTC), first=True)
    synced = sorted(p.name for p in mirrors[0].base.rglob("h=*"))
    assert synced == ["h=10", "h=11"]  # the hour of --since and after; 09 never listed
