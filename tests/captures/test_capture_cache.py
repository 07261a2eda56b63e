"""The columnar Capture reader and its cache: the same table as the record-by-record reader,
the same outcomes cold (decoded) and warm (read from the cache), only changed files decoded
again, broken entries decoded again, and the flags that choose the cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from diagnostics.captures.avro import read_capture_files
from diagnostics.captures.capture_cache import CaptureCache
from diagnostics.captures.capture_writer import us_time
from diagnostics.captures.paths import capture_files
from diagnostics.captures.reader import read_capture
from diagnostics.cli import build_parser
from diagnostics.generate.fleet import FleetConfig, fleet_events
from diagnostics.generate.fleet_files import write_capture

from .helpers import body, capture_record, run_cli, write_avro
from .reference_reader import reference_frame

SMALL = FleetConfig(
    events=12_000, duration_ms=30 * 60_000, silent_from_ms=5 * 60_000, silent_for_ms=10 * 60_000
)
COMMANDS = ("replay", "whatif", "explain", "impact", "translate", "cti")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small production-shaped Capture (maps, JSON bodies, empty files, bad bodies)."""
    out = tmp_path_factory.mktemp("fleet") / "capture"
    write_capture(fleet_events(SMALL), SMALL, out)
    return out


def _odd_capture(root: Path) -> Path:
    """Maps with bytes, doubles and non-ASCII text, an empty file, bodies that are not JSON
    or repeat a key, a field whose kind differs between files, nested objects, arrivals
    from EnqueuedTimeUtc's text."""
    hub = root / "ns" / "hub"
    first = [
        capture_record(0, body(ts="2024-01-01T00:00:00Z", n=1, deep={"a": 1}), 1_704_067_201_000, ""),
        capture_record(1, b"not json {", None, us_time(1_704_067_202_000)),
        capture_record(2, b'{"ts":"2024-01-01T00:00:02Z","ts":"x"}', 1_704_067_203_000, ""),
        capture_record(3, None, 1_704_067_204_000, ""),
        capture_record(4, body(ts="caf\u00e9", n=2, deep={"a": 2}), 1_704_067_205_000, ""),
    ]  # fmt: skip
    first[0]["Properties"] = {"w": 1.5, "b": b"\xff\x00", "t": '\u00fc"q"', "n": None}
    write_avro(hub / "0" / "2024/01/01/00/00/00.avro", first, "deflate")
    write_avro(hub / "0" / "2024/01/01/00/05/00.avro", [], "deflate")
    second = [
        capture_record(5 + i, body(n=2.5 + i, ts=None), 1_704_067_206_000 + i, "") for i in range(3)
    ]
    write_avro(hub / "1" / "2024/01/01/00/00/00.avro", second, "snappy")
    return root


def _read(root: Path, cache: CaptureCache | None, defer: bool = False) -> pl.DataFrame:
    table = read_capture_files(capture_files(root), cache=cache, defer=defer)
    if table.deferred is None:
        return table.frame
    heavy = table.deferred.frame()
    order = table.deferred.full_order(table.frame.columns)
    return pl.concat([table.frame, heavy], how="horizontal").select(order)


def test_columnar_reader_reads_as_the_record_by_record_reader(tmp_path: Path, fleet: Path) -> None:
    for root in (fleet, _odd_capture(tmp_path / "odd")):
        expected = reference_frame(capture_files(root))
        assert_frame_equal(_read(root, None), expected)
        cache = CaptureCache.open(tmp_path / "cache")
        assert_frame_equal(_read(root, cache, defer=True), expected)  # cold
        warm = CaptureCache.open(tmp_path / "cache")
        assert_frame_equal(_read(root, warm, defer=True), expected)
        assert_frame_equal(_read(root, warm), expected)
        assert warm.hits == 2 * len(capture_files(root))


def _replay(capture: Path, out: Path, *flags: str) -> tuple[dict, pl.DataFrame, str, str]:
    code, stdout, stderr = run_cli(
        "replay", str(capture), "--out", str(out), "--json", "--timestamp-by", "eventTime", *flags
    )
    assert code == 0, stderr
    return (
        json.loads(stdout),
        pl.read_parquet(out / "outcomes.parquet"),
        (out / "diagnostics.jsonl").read_text(),
        stderr,
    )


def test_cold_and_warm_replays_write_the_same_outcomes(tmp_path: Path, fleet: Path) -> None:
    cache = str(tmp_path / "cache")
    cold = _replay(fleet, tmp_path / "cold", "--cache", cache)
    warm = _replay(fleet, tmp_path / "warm", "--cache", cache)
    none = _replay(fleet, tmp_path / "none", "--no-cache")
    files = len(capture_files(fleet))
    assert f"0 of {files} Capture files read from" in cold[3]
    assert f"{files} of {files} Capture files read from" in warm[3]
    assert "not used (--no-cache)" in none[3]
    for other in (warm, none):
        assert_frame_equal(other[1], cold[1])  # column for column, types and values
        assert other[2] == cold[2]  # diagnostics.jsonl, example events included
        assert other[0]["input"] == cold[0]["input"]  # bad bodies, far-off notes
        assert other[0]["counts"] == cold[0]["counts"]
    reference = reference_frame(capture_files(fleet))
    assert_frame_equal(cold[1].select(reference.columns), reference)


def test_odd_capture_reads_the_same_cold_and_warm(tmp_path: Path) -> None:
    root = _odd_capture(tmp_path / "odd")
    cache = CaptureCache.open(tmp_path / "cache")
    cold = read_capture(root, cache=cache)
    warm = read_capture(root, cache=CaptureCache.open(tmp_path / "cache"))
    assert_frame_equal(cold.events, warm.events)
    assert cold.to_dict() == warm.to_dict()
    assert any("3 events have a body that is not a JSON object (1 of them" in n for n in cold.notes)
    assert cold.events["n"].dtype == pl.String  # an int in one file, a float in the other
    assert cold.events["deep"].struct.field("a").to_list()[:5] == [1, None, None, None, 2]


def test_only_changed_added_or_removed_files_are_decoded_again(tmp_path: Path, fleet: Path) -> None:
    root = tmp_path / "capture"
    write_capture(fleet_events(SMALL), SMALL, root)
    files = capture_files(root)
    read_capture_files(files, cache=CaptureCache.open(tmp_path / "cache"))
    changed = files[3].path
    records = [capture_record(0, body(eventTime="2024-06-03T08:00:00Z"), 1_717_401_600_000, "")]
    write_avro(changed, records, "deflate")
    os.utime(changed, ns=(1, 1))
    added = changed.parent.parent / "59" / "00.avro"
    write_avro(added, records, "deflate")
    files[-1].path.unlink()
    now = capture_files(root)
    cache = CaptureCache.open(tmp_path / "cache")
    table = read_capture_files(now, cache=cache)
    assert cache.hits == len(now) - 2
    assert cache.stored == 2
    assert_frame_equal(table.frame, reference_frame(now))


def test_a_broken_entry_is_decoded_again(tmp_path: Path) -> None:
    root = _odd_capture(tmp_path / "odd")
    read_capture(root, cache=CaptureCache.open(tmp_path / "cache"))
    entries = sorted((tmp_path / "cache").rglob("*.parquet"))
    assert len(entries) == 3
    entries[0].write_bytes(b"PAR1 not parquet at all")
    cache = CaptureCache.open(tmp_path / "cache")
    again = read_capture(root, cache=cache)
    assert cache.hits == 2
    assert cache.stored == 1
    assert_frame_equal(again.events, read_capture(root).events)


def test_the_cache_keeps_its_size_bound(tmp_path: Path, fleet: Path) -> None:
    cache = CaptureCache.open(tmp_path / "cache")
    read_capture_files(capture_files(fleet), cache=cache)
    sizes = sorted(p.stat().st_size for p in (tmp_path / "cache").rglob("*.parquet"))
    assert cache.trim(limit=sum(sizes) // 2) == 0  # the read that wrote them still needs them
    later = CaptureCache.open(tmp_path / "cache")  # another command
    freed = later.trim(limit=sum(sizes) // 2)
    left = sum(p.stat().st_size for p in (tmp_path / "cache").rglob("*.parquet"))
    assert freed > 0
    assert left <= sum(sizes) // 2


def test_entries_of_an_older_cache_version_are_removed(tmp_path: Path) -> None:
    old = tmp_path / "cache" / "captures-v1" / "ab"
    old.mkdir(parents=True)
    (old / "entry.parquet").write_bytes(b"x" * 100)
    cache = CaptureCache.open(tmp_path / "cache")
    assert cache.trim() == 100
    assert not (tmp_path / "cache" / "captures-v1").exists()
    assert cache.folder.is_dir()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_capture_command_takes_the_cache_flags(command: str) -> None:
    parser = build_parser(only=command)
    needed = {
        "replay": ["events", "--out", "o"],
        "whatif": ["events"],
        "explain": ["--events", "events"],
        "impact": ["events", "--out", "o"],
        "translate": ["--to", "flink-sql", "--events", "events"],
        "cti": ["events", "--out", "o"],
    }[command]
    args, _ = parser.parse_known_args([command, *needed, "--cache", "/c"])
    assert args.cache == "/c"
    assert not args.no_cache
    args, _ = parser.parse_known_args([command, *needed, "--no-cache"])
    assert args.no_cache
    assert args.cache is None


def test_an_unusable_cache_folder_is_a_one_line_error(tmp_path: Path) -> None:
    root = _odd_capture(tmp_path / "odd")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, _, err = run_cli(
        "replay", str(root), "--out", str(tmp_path / "o"), "--cache", str(blocker)
    )
    assert code == 2
    assert err.count("\n") == 1
    assert "--cache" in err
    assert str(blocker) in err


def test_body_fields_named_like_polars_patterns_stay_in_the_cache_and_come_back(
    tmp_path: Path,
) -> None:
    """Body fields join the outcomes again in place, cold and warm, beside fields named
    like a polars pattern (``*``, ``^x$``: kept as input under ``input_<name>``)."""
    records = [
        capture_record(i, body(**{"eventTime": f"2024-01-01T00:00:0{i}Z", "*": i, "^x$": f"v{i}"}),
                       1_704_067_201_000 + i, "")
        for i in range(5)
    ]  # fmt: skip
    root = tmp_path / "c"
    write_avro(root / "n" / "h" / "0" / "2024/01/01/00/00/00.avro", records, "deflate")
    cache = str(tmp_path / "cache")
    cold = _replay(root, tmp_path / "cold", "--cache", cache)
    warm = _replay(root, tmp_path / "warm", "--cache", cache)
    assert_frame_equal(warm[1], cold[1])
    expected = reference_frame(capture_files(root))
    assert {"input_*", "input_^x$"} <= set(cold[1].columns)
    assert_frame_equal(
        cold[1][:, : expected.width].rename(
            dict(zip(cold[1].columns, expected.columns, strict=False))
        ),
        expected,
    )


def test_the_far_off_senders_column_is_kept_with_the_capture(tmp_path: Path, fleet: Path) -> None:
    """The column naming the senders of far-off application times depends on the capture's
    files alone: worked out once, kept beside the cache entries, and the warm replay names
    the same senders; a changed file is another capture (another kept answer); a temporary
    cache (--no-cache) keeps nothing."""
    root = tmp_path / "capture"
    write_capture(fleet_events(SMALL), SMALL, root)
    cache = tmp_path / "cache"
    cold = _replay(root, tmp_path / "cold", "--cache", str(cache))[0]
    far = cold["far_off_application_times"]
    assert far["device_column"] == "deviceId"
    assert far["devices"]
    kept = sorted(cache.rglob("memo/*.json"))
    assert len(kept) == 1
    assert json.loads(kept[0].read_text()) == {"value": "deviceId"}
    warm = _replay(root, tmp_path / "warm", "--cache", str(cache))[0]
    assert warm["far_off_application_times"] == far
    assert warm["warnings"] == cold["warnings"]
    kept[0].write_text('{"value": "noSuchColumn"}')  # edited by hand: worked out again
    edited = _replay(root, tmp_path / "edited", "--cache", str(cache))[0]
    assert edited["far_off_application_times"] == far
    changed = capture_files(root)[3].path
    records = [capture_record(0, body(eventTime="2024-06-03T08:00:00Z"), 1_717_401_600_000, "")]
    write_avro(changed, records, "deflate")
    _replay(root, tmp_path / "changed", "--cache", str(cache))
    assert len(sorted(cache.rglob("memo/*.json"))) == 2
    temporary = read_capture(root, cache=CaptureCache.temporary(), defer=True)
    more = temporary.more_inputs()
    assert more is not None
    asked: list[int] = []
    for _ in range(2):
        assert more.remember({"k": 1}, lambda: str(asked.append(1) or "deviceId")) == "deviceId"
    assert len(asked) == 2  # a temporary cache (--no-cache) keeps nothing


def test_a_query_reads_its_columns_and_the_unreadable_bodies(tmp_path: Path, fleet: Path) -> None:
    """impact reads the body fields and Body (the text of bodies the input could not read);
    the other passthrough columns stay in the cache unless the query names them."""
    cache = CaptureCache.open(tmp_path / "cache")
    capture = read_capture(fleet, cache=cache, defer=True)
    query = "SELECT deviceId, COUNT(*) FROM hub TIMESTAMP BY eventTime GROUP BY deviceId"
    read = capture.for_query(query)
    assert {"deviceId", "temperature", "eventTime", "Body"} <= set(read.events.columns)
    assert not {"Properties", "SystemProperties", "Offset"} & set(read.events.columns)
    whole = read_capture(fleet, cache=cache)
    assert_frame_equal(read.events["Body"].to_frame(), whole.events["Body"].to_frame())
    named = capture.for_query(query.replace("COUNT(*)", "properties, COUNT(*)"))
    assert "Properties" in named.events.columns
    assert named.events.columns == [c for c in whole.events.columns if c in named.events.columns]
