"""diagnostics.appdata without Streamlit: folders, uploads, chart data and their invariants."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.appdata import figures, lateness, overview, partitions, quarantine, store
from diagnostics.appdata.alerts import ALERT_SCHEMA, alert_markers, check_text, load_pack
from diagnostics.appdata.build import UploadKind, build_from_logs, classify
from diagnostics.appdata.insight import (
    CAUSE_KINDS,
    impact_text,
    readable_evidence,
    scalar_evidence,
    select_point,
)
from diagnostics.appdata.workdir import safe_name, save_uploads
from diagnostics.errors import InputError
from tests.app.conftest import ASA, RULES_BAD, RULES_GOOD, SCENARIOS

# --- store ---------------------------------------------------------------------------------


def test_open_aggregate_rejects_what_is_not_one(tmp_path):
    with pytest.raises(
        InputError,
        match=r"no such aggregate folder \(expected the output of 'orderdoc aggregate'\)$",
    ):
        store.open_aggregate(tmp_path / "missing")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        store.open_aggregate(tmp_path / "file.txt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="not an aggregate folder"):
        store.open_aggregate(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "summary.json").write_text("[1, 2]")
    with pytest.raises(InputError, match="must hold a JSON object"):
        store.open_aggregate(tmp_path / "bad")


def test_signature_changes_with_a_file(tmp_path, agg_asa):
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "summary.json").write_text((agg_asa / "summary.json").read_text())
    before = store.signature(copy)
    assert store.signature(copy) == before
    (copy / "summary.json").write_text("{}\n")
    assert store.signature(copy) != before


def test_spark_style_hive_folders_are_read(tmp_path, agg_asa):
    """The Spark job writes TABLE/date=YYYY-MM-DD/part-*.parquet without the date column."""
    frame = pl.read_parquet(agg_asa / "error_rollup" / "part-0.parquet")
    out = tmp_path / "spark"
    for (day,), part in frame.group_by("date"):
        folder = out / "error_rollup" / f"date={day}"
        folder.mkdir(parents=True)
        part.drop("date").write_parquet(folder / "part-00000.snappy.parquet")
    agg = store.open_aggregate(out)
    assert agg.tables == ("error_rollup",)
    table, _ = overview.errors_over_time(agg)
    assert (
        table["event_count"].sum()
        == frame.filter(pl.col("kind") != overview.IDLE_KIND)["event_count"].sum()
    )


# --- build and uploads ---------------------------------------------------------------------


def test_asa_sample_counts_match_its_readme(agg_asa):
    summary = json.loads((agg_asa / "summary.json").read_text())
    assert (
        summary["records_total"],
        summary["records_parsed"],
        summary["records_quarantined"],
    ) == (28, 23, 5)
    assert summary["events_by_kind"] == {
        "EarlyInputEvent": 5,
        "InputPartitionNotProgressing": 8,
        "InvalidInputTimeStamp": 5,
        "LateInputEvent": 82,
        "OutOfOrderEvent": 18,
    }
    agg = store.open_aggregate(agg_asa)
    episodes = partitions.idle_episodes(agg)
    assert episodes.height == 6  # README: 6 episodes
    orders = episodes.filter((pl.col("job") == "ORDERS-JOB") & (pl.col("partition_id") == 2))
    assert orders.select("start", "end", "notices").rows() == [
        (datetime(2024, 3, 5, 10, 5, tzinfo=UTC), datetime(2024, 3, 5, 10, 15, tzinfo=UTC), 2)
    ]
    assert orders["minutes"].to_list() == [10.0]
    # the idle timeline's bars say their length and notices, counted in words
    texts = list(figures.idle_timeline(episodes).data[0].text)
    assert sorted(texts) == ["10 min, 2 notices"] * 2 + ["5 min, 1 notice"] * 4


@pytest.mark.parametrize(
    ("name", "data", "kind"),
    [
        ("PT1H.json", (ASA / "PT1H.json").read_bytes(), UploadKind.LOG),
        ("x.csv", (ASA / "loganalytics-azurediagnostics.csv").read_bytes(), UploadKind.LOG),
        ("x.json.gz", (ASA / "PT1H-archive.json.gz").read_bytes(), UploadKind.LOG),
        ("bare.json", (ASA / "bare-array.json").read_bytes(), UploadKind.LOG),
        ("m.parquet", (ASA / "orderdoc-replay" / "metrics.parquet").read_bytes(), UploadKind.LOG),
        ("c.csv", (SCENARIOS / "healthy" / "capture.csv").read_bytes(), UploadKind.CAPTURE),
        (
            "c.csv.gz",
            gzip.compress((SCENARIOS / "healthy" / "capture.csv").read_bytes()),
            UploadKind.CAPTURE,
        ),
        (
            "o.parquet",
            (SCENARIOS / "healthy" / "outcomes.parquet").read_bytes(),
            UploadKind.CAPTURE,
        ),
        ("e.jsonl", b'{"arrival_time": "2024-01-01T00:00:00Z", "v": 1}\n', UploadKind.CAPTURE),
        (
            "pt.csv",
            b"v,PartitionId,EventEnqueuedUtcTime\n1,0,2024-01-01T00:00:00Z\n",
            UploadKind.CAPTURE,
        ),
        (
            "iot.jsonl",
            b'{"IoTHub": {"EnqueuedTime": "2024-01-01T00:00:00Z"}}\n',
            UploadKind.CAPTURE,
        ),
        ("c.avro", b"Obj\x01 header", UploadKind.CAPTURE),
        ("x.avro", b"not avro", UploadKind.UNKNOWN),
        ("p.png", b"\x89PNG\r\n\x1a\n\x00\x00", UploadKind.UNKNOWN),
        ("z.bin", b"abc\x00def", UploadKind.UNKNOWN),
        ("empty.json", b"  \n\n", UploadKind.UNKNOWN),
        ("t.csv", b"a,b\n1,2\n", UploadKind.UNKNOWN),
        ("junk.parquet", b"PAR1 not really", UploadKind.UNKNOWN),
    ],
)
def test_classify(name, data, kind):
    assert classify(name, data) is kind


@pytest.mark.parametrize(("text", "rejected"), [("hello\n", "1 record"), ("a\nb\n", "2 records")])
def test_logs_without_any_record_are_an_input_error(tmp_path, text, rejected):
    path = tmp_path / "notes.txt"
    path.write_text(text)
    with pytest.raises(
        InputError, match=rf"notes.txt: not an ASA diagnostic log .* {rejected} rejected \("
    ):
        build_from_logs([path], tmp_path / "out")
    assert not (tmp_path / "out" / "summary.json").exists()


def test_alert_markers_count_their_alerts_in_words():
    at = datetime(2024, 1, 1, 0, 0, 30, tzinfo=UTC)
    rows = [
        ("r1", "Late events", "firing", "warning", at, None, 1.0, "", "", ""),
        ("r2", "Quarantine", "resolved", "critical", at, None, 1.0, "", "", ""),
        ("r3", "Idle", "firing", "critical", at, None, 1.0, "p=3", "", ""),
    ]
    alerts = pl.DataFrame(rows, schema=ALERT_SCHEMA, orient="row")
    labels = dict(alert_markers(alerts).select("severity", "label").iter_rows())
    assert labels == {
        "critical": "2 alerts, 1 firing: Idle (p=3); Quarantine",
        "warning": "1 alert, 1 firing: Late events",
    }


def test_uploads_keep_their_names_and_cannot_escape(tmp_path):
    paths = save_uploads(tmp_path, [("../../etc/passwd", b"x"), ("a.json", b"1"), ("a.json", b"2")])
    assert [p.name for p in paths] == ["passwd", "a.json", "a.json"]
    assert all(tmp_path in p.parents for p in paths)
    assert [p.read_bytes() for p in paths] == [b"x", b"1", b"2"]
    assert safe_name(".hidden") == "hidden"
    assert safe_name("C:\\logs\\x y.json") == "x_y.json"


# --- overview ------------------------------------------------------------------------------


def test_the_worst_watermark_delay_says_its_minute_and_the_steady_state(agg_late):
    # late_senders under 5 s: the first minute (the job's start) waits 10 s, the 30 later
    # minutes 5 s but for the last one (4.13 s)
    delay = overview.kpis(store.open_aggregate(agg_late)).watermark
    assert delay is not None
    assert (delay.worst_s, delay.at_start, delay.others) == (10.0, True, 30)
    assert delay.others_median_s == 5.0
    text = overview.watermark_text(delay, lambda s: f"{s:.1f} s")
    assert text == (
        "In the job's first minute (2024-01-01 00:00 UTC, its start); the 30 later minutes: "
        "median 5.0 s."
    )
    later = overview.WatermarkDelay(12.0, "J", delay.minute, False, 5.0, 1)
    assert overview.watermark_text(later, str) == (
        "In the minute 2024-01-01 00:00 UTC; the 1 other minute: median 5.0."
    )
    assert overview.watermark_text(None, str).startswith("No metrics were loaded")


def test_the_time_range_reads_as_words(agg_late):
    k = overview.kpis(store.open_aggregate(agg_late))
    assert k.time_from == "2024-01-01T00:02:00.174000Z"
    assert k.time_range_text == "2024-01-01 00:02:00 → 00:30:00 UTC"
    longer = overview.Kpis(0, 0, 0, time_from=k.time_from, time_to="2024-01-02T01:00:00Z")
    assert longer.time_range_text == "2024-01-01 00:02:00 → 2024-01-02 01:00:00 UTC"
    assert overview.Kpis(0, 0, 0).time_range_text == "? → ? UTC"


def test_kpis_from_tables_equal_the_summary(agg_asa, tmp_path):
    with_summary = overview.kpis(store.open_aggregate(agg_asa))
    bare = tmp_path / "bare"
    for table in ("data_errors", "quarantine", "metrics"):
        (bare / table).mkdir(parents=True)
        src = agg_asa / table / "part-0.parquet"
        (bare / table / "part-0.parquet").write_bytes(src.read_bytes())
    without = overview.kpis(store.open_aggregate(bare))
    assert without.events_by_kind == with_summary.events_by_kind
    assert (without.records_parsed, without.records_quarantined) == (23, 5)
    assert without.watermark == with_summary.watermark
    assert with_summary.watermark is not None
    assert with_summary.watermark.worst_s == 15.0
    assert with_summary.data_errors == 82 + 5 + 18 + 5


def test_errors_over_time_keeps_every_event(agg_late):
    agg = store.open_aggregate(agg_late)
    for buckets in (500, 10, 2):
        table, bucket = overview.errors_over_time(agg, max_buckets=buckets)
        totals = dict(overview.kind_totals(table).iter_rows())
        assert totals == {"LateInputEvent": 513, "OutOfOrderEvent": 270}
        assert table["time"].n_unique() <= buckets + 1  # truncation may straddle one edge
        assert bucket in dict(overview.BUCKETS)


@settings(deadline=None)
@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1)),
    st.integers(min_value=0, max_value=10**9),
    st.integers(min_value=1, max_value=1000),
)
def test_choose_bucket_is_the_narrowest_that_fits(start, seconds, max_buckets):
    start = start.replace(tzinfo=UTC)
    end = start + timedelta(seconds=seconds)
    name = overview.choose_bucket(start, end, max_buckets)
    widths = dict(overview.BUCKETS)
    names = [n for n, _ in overview.BUCKETS]
    if name != names[-1]:
        assert (end - start) / widths[name] <= max_buckets
    i = names.index(name)
    if i > 0:
        assert (end - start) / widths[names[i - 1]] > max_buckets


def test_kinds_by_partition_and_input_events(agg_late):
    agg = store.open_aggregate(agg_late)
    table, _ = overview.kinds_by_partition(agg, ("LateInputEvent",))
    assert table["event_count"].sum() == 513
    events = overview.input_events_by_partition(agg)
    # README, late_senders: input events per partition
    assert dict(events.select("partition_id", "input_events").iter_rows()) == {
        0: 517,
        1: 550,
        2: 464,
        3: 469,
    }
    assert events["share"].sum() == pytest.approx(1.0)


# --- lateness ------------------------------------------------------------------------------

groups = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d"]),
        st.floats(min_value=-1e4, max_value=1e6, allow_nan=False),
        st.integers(min_value=1, max_value=50),
    ),
    min_size=1,
    max_size=300,
)


def _frame(rows):
    return pl.DataFrame(rows, schema=lateness.SCHEMA, orient="row")


@settings(max_examples=60, deadline=None)
@given(groups, st.integers(min_value=1, max_value=4), st.integers(min_value=2, max_value=50))
def test_ecdf_is_monotone_and_ends_at_one(rows, max_groups, points):
    frame = _frame(rows)
    out = lateness.ecdf(frame, max_groups=max_groups, points=points)
    assert out["group"].n_unique() <= max_groups + 1
    for (_,), part in out.group_by("group"):
        share = part["share"].to_numpy()
        values = part["lateness_seconds"].to_numpy()
        assert len(part) <= points
        assert np.all(np.diff(share) >= 0)
        assert np.all(np.diff(values) > 0)
        assert share[-1] == pytest.approx(1.0)


@settings(max_examples=100, deadline=None)
@given(groups, st.booleans(), st.integers(min_value=2, max_value=50))
def test_ecdf_is_each_groups_share_at_or_below_each_value(rows, one_each, points):
    """Every step of a group's ECDF is the share of its weight at or below the step's value
    (ties many, weights one or many), the last one at the largest value of all groups."""
    frame = _frame([(g, round(v, -3), 1 if one_each else w) for g, v, w in rows])
    out = lateness.ecdf(frame, max_groups=8, points=points)
    for (name,), part in out.group_by("group"):
        own = frame.filter(pl.col("group") == name)
        total = own["weight"].sum()
        for value, share in part.select("lateness_seconds", "share").iter_rows():
            below = own.filter(pl.col("lateness_seconds") <= value)["weight"].sum()
            assert share == pytest.approx(below / total)
        assert part["lateness_seconds"].max() == frame["lateness_seconds"].max()


@settings(max_examples=60, deadline=None)
@given(groups, st.floats(min_value=-1e4, max_value=1e6, allow_nan=False))
def test_by_group_counts_every_event_once(rows, tolerance):
    frame = _frame(rows)
    table = lateness.by_group(frame, tolerance, max_groups=8)
    assert table["events"].sum() == frame["weight"].sum()
    beyond = frame.filter(pl.col("lateness_seconds") > tolerance)["weight"].sum()
    assert table["beyond_tolerance"].sum() == beyond
    assert (table["p50_s"] <= table["p95_s"]).all()
    assert (table["p95_s"] <= table["max_s"]).all()


def test_lateness_from_logs_is_weighted_by_event_count(agg_asa):
    frame = lateness.from_aggregate(store.open_aggregate(agg_asa), ("LateInputEvent",))
    # the documented activity-log example: 24 events, 292.704 s late
    close = (pl.col("lateness_seconds") - 292.704).abs() < 1e-6
    assert frame.filter(close)["weight"].to_list() == [24]


def test_device_column():
    frame = pl.DataFrame({"device_id": ["a"], "sensor": ["s"]})
    assert lateness.device_column(frame) == "device_id"
    assert lateness.device_column(frame, ("sensor",)) == "sensor"
    assert lateness.device_column(pl.DataFrame({"x": [1]})) is None


# --- partitions, quarantine, alerts, insight ----------------------------------------------


def test_watermark_delay_series(agg_idle):
    agg = store.open_aggregate(agg_idle)
    delay = partitions.watermark_delay(agg)
    assert set(delay["series"].unique()) == {
        "job",
        "partition 0",
        "partition 1",
        "partition 2",
        "partition 3",
    }
    # merge rule: the job's watermark is the minimum of the partitions' watermarks, so its
    # delay is never below any partition's
    job = delay.filter(pl.col("series") == "job").select("minute", "delay_s")
    parts = delay.filter(pl.col("series") != "job").group_by("minute").agg(pl.col("delay_s").max())
    joined = job.join(parts, on="minute", suffix="_parts")
    assert (joined["delay_s"] >= joined["delay_s_parts"] - 1e-9).all()


def test_quarantine_reasons(agg_asa):
    table = quarantine.records(store.open_aggregate(agg_asa))
    counts = quarantine.reason_counts(table)
    assert counts["records"].sum() == 5
    assert table["raw"].str.len_chars().max() <= quarantine.RAW_SHOWN


def test_rule_pack_keeps_valid_rules_beside_broken_files():
    pack = load_pack([RULES_GOOD, RULES_BAD])
    assert [r.id for r in pack.rules] == ["app-quarantined", "app-late-events"]
    assert [p.rule_id for p in pack.problems] == ["app-bad-severity"]
    assert sorted(f.rule_ids for f in pack.files) == [(), ("app-quarantined", "app-late-events")]
    ids, problems = check_text((RULES_GOOD / "app_rules.yaml").read_text())
    assert (ids, problems) == (("app-quarantined", "app-late-events"), ())
    ids, problems = check_text("rules: [\n")
    assert ids == ()
    assert len(problems) == 1


def test_scalar_evidence_and_select_point():
    table = scalar_evidence(
        {"events": 513, "p95": 118.25, "nested": {"a": 1, "b": [1, 2]}, "xs": [1, 2]}
    )
    assert table.rows() == [("events", "513"), ("p95", "118.25"), ("nested.a", "1")]
    sweep = pl.DataFrame(
        {
            "late_arrival_s": [0.0, 5.0, None],
            "out_of_order_s": [0.0, 0.0, 0.0],
            "pct_adjusted": [9.0, 5.0, 0.0],
        }
    )
    assert select_point(sweep, 4.0, 0.0)["pct_adjusted"] == 5.0
    assert select_point(sweep.clear(), 4.0, 0.0) is None
    assert set(CAUSE_KINDS) >= {"late_arrivals", "out_of_order", "idle_partition"}


def test_readable_evidence_and_impact_speak_words_not_json():
    table = readable_evidence(
        {
            "share_of_events": 0.2565,
            "partitions": {"0": 259, "1": 254},
            "lateness": {"p50_seconds": 61.0, "max_seconds": 120.2, "from": "exact (capture)"},
            "episodes": [
                {"partition_id": 3, "start": "2024-01-01T00:05:59.960000+00:00",
                 "end": "2024-01-01T00:24:01+00:00", "minutes": 18.0, "notices": 3}
            ],
            "empty": [],
        }
    )  # fmt: skip
    assert table.rows() == [
        ("share of all events", "25.7%"),
        ("events per partition", "partition 0: 259, partition 1: 254"),
        ("lateness", "median 61 s, largest 120.2 s, exact (capture)"),
        (
            "silent periods",
            "partition 3 from 2024-01-01 00:05:59 UTC to 2024-01-01 00:24:01 UTC "
            "(18 min, 3 notices)",
        ),
    ]
    text = impact_text(
        {"events_affected": 513, "delay_seconds": 0.0, "fix_adds_release_delay_seconds": 116}
    )
    assert text == (
        "513 events adjusted or dropped. The suggested tolerance adds up to 116 s of release "
        "delay (none with OVER)."
    )
    assert "{" not in text
    assert "_" not in text


def test_figures_carry_their_reference_lines(agg_idle):
    agg = store.open_aggregate(agg_idle)
    fig = figures.watermark_delay(partitions.watermark_delay(agg), 5.0)
    names = [t.name for t in fig.data]
    assert "tolerance" in names
    tol = next(t for t in fig.data if t.name == "tolerance")
    assert list(tol.y) == [5.0, 5.0]
    timeline = figures.idle_timeline(partitions.idle_episodes(agg))
    assert list(timeline.data[0].y) == ["partition 3"] * len(timeline.data[0].y)
    two = partitions.idle_episodes(agg)
    two = pl.concat([two, two.with_columns(pl.lit("OTHER").alias("job"))])
    labels = set(figures.idle_timeline(two).data[0].y)
    assert labels == {"SAMPLE-IDLE_PARTITION / partition 3", "OTHER / partition 3"}


def test_samples_are_offered(tmp_path: Path):
    from diagnostics.appdata import samples

    labels = list(samples.choices())
    assert labels[0] == "scenario: late_senders (event capture)"
    assert samples.ASA_LABEL in labels
    assert samples.CAPTURE_LABEL in labels


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["x.json", "x.csv", "x.parquet", "x.json.gz", "x.bin", "x"]),
    st.binary(max_size=400) | st.text(max_size=400).map(str.encode),
)
def test_any_upload_is_classified_and_aggregated_or_refused(tmp_path_factory, name, data):
    """Bad input never raises anything but an InputError, and a refused upload writes nothing."""
    kind = classify(name, data)
    assert kind in set(UploadKind)
    if kind is not UploadKind.LOG or name.endswith(".parquet"):
        return
    folder = tmp_path_factory.mktemp("any")
    path = folder / name
    path.write_bytes(data)
    try:
        build_from_logs([path], folder / "out")
    except InputError as exc:
        message = str(exc)
    else:
        message = None
    if message is not None:
        assert "not an ASA diagnostic log or an event capture" in message
        assert not (folder / "out" / "summary.json").exists()
    else:
        summary = json.loads((folder / "out" / "summary.json").read_text())
        assert summary["records_parsed"] > 0
        assert (
            summary["records_total"] == summary["records_parsed"] + summary["records_quarantined"]
        )


def test_capture_settings_round_trip():
    from diagnostics.appdata.build import CaptureSettings
    from diagnostics.durations import SECOND
    from diagnostics.engine.columns import EventColumns
    from diagnostics.engine.policy import Action, OrderingPolicy

    settings_ = CaptureSettings(
        OrderingPolicy(
            timestamp_by="ts",
            late_arrival_ns=None,
            out_of_order_ns=3 * SECOND,
            action=Action.DROP,
            partition_by=True,
            over=("device_id",),
        ),
        EventColumns(arrival="enqueued", partition=None),
        job="j",
    )
    assert CaptureSettings.from_dict(json.loads(json.dumps(settings_.to_dict()))) == settings_
    with pytest.raises(InputError, match=r"source\.json"):
        CaptureSettings.from_dict({"job": "j"})


def test_the_capture_folder_sample_builds_through_the_shared_reader(tmp_path: Path):
    from diagnostics.appdata import samples

    sample = samples.choices()[samples.CAPTURE_LABEL]
    out = samples.build(sample, tmp_path / "agg", lambda _f, _m: None)
    info = json.loads((out / "capture" / "source.json").read_text())
    assert info["events"] == 400
    assert info["arrival"] == "EventEnqueuedUtcTime"
    assert info["partition"] == "PartitionId"
    assert info["partitions"] == [0, 1, 2, 3]
    outcomes = pl.read_parquet(out / "capture" / "outcomes.parquet")
    assert int(outcomes["late"].sum()) == 87  # sample_logs/captures: late senders


def test_a_log_sample_lists_the_files_it_skips_as_the_spark_job_does(tmp_path: Path):
    """The app's builder fed from a folder names the files the folder's expansion left out
    (summary ``files_skipped``), as ``orderdoc aggregate`` and the Spark job do."""
    from diagnostics.appdata import samples

    asa = samples.build(samples.choices()[samples.ASA_LABEL], tmp_path / "asa", lambda _f, _m: None)
    summary = json.loads((asa / "summary.json").read_text())
    assert summary["files_skipped"] == [str((ASA / "README.md").resolve())]
    assert summary["files_read"] == 9  # sample_logs/asa/README.md: 8 logs + 1 metrics file

    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "PT1H.json").write_bytes((ASA / "PT1H.json").read_bytes())
    (folder / "notes.md").write_text("not a log\n")
    pl.DataFrame({"x": [1]}).write_parquet(folder / "outcomes.parquet")  # not engine metrics
    sample = samples.Sample(name="logs", path=folder, is_capture=False)
    out = samples.build(sample, tmp_path / "agg", lambda _f, _m: None)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["files_read"] == 1
    assert summary["files_skipped"] == [
        str((folder / name).resolve()) for name in ("notes.md", "outcomes.parquet")
    ]


REAL = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"


def test_uploads_of_every_real_shape_aggregate_as_the_folder_does(tmp_path):
    """Every file of sample_logs/asa-real uploaded at once (the metrics exports included: the
    Azure Monitor JSON and the Log Analytics AzureMetrics CSV) gives the tables `orderdoc
    aggregate` gives for the folder: nothing is refused, nothing quarantined that it reads."""
    from diagnostics.aggregates import TableName, read_summary, scan
    from diagnostics.appdata.build import build_from_uploads
    from diagnostics.logs.aggregate import aggregate_files
    from diagnostics.logs.inputs import expand_inputs

    named = [(p.name, p.read_bytes()) for p in sorted(REAL.iterdir()) if p.name != "README.md"]
    assert {classify(name, data) for name, data in named} == {UploadKind.LOG}
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    paths = []
    for name, data in named:
        (uploads / name).write_bytes(data)
        paths.append(uploads / name)
    out = build_from_uploads(paths, tmp_path / "agg")
    files = expand_inputs([str(REAL)])
    assert len(files.metrics) == 2  # the two metrics exports
    expected = aggregate_files(files.logs, files.metrics)
    summary = read_summary(out)
    for key in ("records_total", "records_parsed", "records_quarantined", "events_by_kind"):
        assert summary[key] == expected.summary[key], key
    for table in TableName:
        got = scan(out, table)
        want = getattr(expected, table.value)
        assert (0 if got is None else got.collect().height) == want.height, table
    assert expected.metrics.height > 0


def test_working_folders_are_not_shown(tmp_path, monkeypatch):
    """A quarantined upload's file and an alert grouped by it read as the uploaded file's name;
    a message naming the working folder reads "the loaded files"."""
    from diagnostics.appdata import workdir
    from diagnostics.appdata.alerts import evaluate_pack
    from diagnostics.appdata.build import build_from_uploads
    from diagnostics.appdata.quarantine import records
    from diagnostics.appdata.store import open_aggregate

    monkeypatch.setenv("ORDERDOC_APP_WORKDIR", str(tmp_path / "work"))
    target = workdir.folder_for(b"x")
    paths = workdir.save_uploads(
        target / "uploads",
        [("PT1H.json", (ASA / "PT1H.json").read_bytes()), ("notes.txt", b"not a record\n")],
    )
    build_from_uploads(paths, target)
    agg = open_aggregate(target)
    assert records(agg)["source_file"].to_list() == ["notes.txt"]
    view = evaluate_pack(load_pack([Path(__file__).resolve().parents[2] / "rules"]), target)
    shown = " ".join([*view.alerts["group"].to_list(), *(r for _, r in view.skipped)])
    assert str(workdir.base()) not in shown
    assert "source_file=notes.txt" in view.alerts["group"].to_list()
    assert workdir.shown(f"table 'metrics' not found in {target}") == (
        "table 'metrics' not found in the loaded files"
    )
    monkeypatch.setenv("ORDERDOC_APP_WORKDIR", r"C:\Temp\orderdoc-app")  # Windows' separators
    assert workdir.shown(r"C:\Temp\orderdoc-app\ab12\uploads\003\a.json") == "a.json"


def test_the_data_error_count_says_what_it_counts(agg_late, agg_asa):
    """With a capture the Overview counts each event once; from logs it sums the kinds'
    counts: the number's help says which, so the two do not read as one number."""
    captured = overview.kpis(store.open_aggregate(agg_late))
    assert captured.distinct_data_errors is not None
    assert captured.distinct_data_errors < captured.data_errors  # late and out of order share
    assert captured.data_errors_help.startswith("Each event once (replayed from the capture)")
    logs = overview.kpis(store.open_aggregate(agg_asa))
    assert logs.distinct_data_errors is None
    assert logs.data_errors_help.startswith("The sum of the logs' event counts over the kinds")


def test_one_minute_of_data_draws_a_readable_chart():
    """A single bucket of one or two events: a time axis a few buckets wide, whole-number ticks
    from zero (plotly would otherwise zoom to sub-milliseconds and tick at 0.5)."""
    minute = datetime(2019, 2, 4, 17, 17, tzinfo=UTC)
    frame = pl.DataFrame(
        {"time": [minute], "kind": ["LateInputEvent"], "event_count": [1], "records": [1]}
    )
    fig = figures.errors_over_time(frame, frame.clear(), "1m").to_dict()
    low, high = fig["layout"]["xaxis"]["range"]
    assert (high - low).total_seconds() == 4 * 60
    assert fig["layout"]["yaxis"]["dtick"] == 1
    assert fig["layout"]["yaxis"]["rangemode"] == "tozero"
    counts = pl.DataFrame({"reason": ["not JSON"], "records": [1]})
    bars = figures.reason_bars(counts).to_dict()
    assert bars["layout"]["xaxis"]["dtick"] == 1
    many = frame.with_columns(pl.lit(40).alias("event_count"))
    assert (
        "dtick"
        not in figures.errors_over_time(many, many.clear(), "1m").to_dict()["layout"]["yaxis"]
    )


def test_uploads_are_read_by_content_whatever_their_names(tmp_path):
    """An upload named without an extension (PT1H) is read as the log it is, metrics saved as
    .pq as metrics; a capture whose columns include MetricName stays a capture."""
    from diagnostics.aggregates import TableName
    from diagnostics.appdata.build import build_from_uploads
    from diagnostics.logs.aggregate import aggregate_files

    log = (ASA / "PT1H.json").read_bytes()
    metrics = (REAL / "az-monitor-metrics.json").read_bytes()
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    (uploads / "PT1H").write_bytes(log)
    (uploads / "metrics.export").write_bytes(metrics)
    out = build_from_uploads([uploads / "PT1H", uploads / "metrics.export"], tmp_path / "agg")
    summary = json.loads((out / "summary.json").read_text())
    expected = aggregate_files([ASA / "PT1H.json"], [REAL / "az-monitor-metrics.json"])
    assert summary["records_parsed"] == expected.summary["records_parsed"] > 0
    assert summary["files_skipped"] == []
    assert store.scan(store.open_aggregate(out), TableName.METRICS) is not None
    capture = b"deviceId,MetricName,value,event_time,EventEnqueuedUtcTime\nd1,t,1,2024-01-01T00:00:00Z,2024-01-01T00:00:01Z\n"
    assert classify("readings.csv", capture) is UploadKind.CAPTURE


def test_stacked_counts_and_alert_markers_keep_the_axes_right():
    """Ticks follow the stacks' heights (32 partitions of 4 events is 128, not 4), and an alert
    marker away from the one bucket stays inside the time axis."""
    minute = datetime(2019, 2, 4, 17, 17, tzinfo=UTC)
    parts = pl.DataFrame(
        {"time": [minute] * 32, "partition": [f"partition {p}" for p in range(32)],
         "event_count": [4] * 32}
    )  # fmt: skip
    stacked = figures.kinds_by_partition(parts, "1m", "Late events").to_dict()
    assert "dtick" not in stacked["layout"]["yaxis"]
    frame = pl.DataFrame(
        {"time": [minute], "kind": ["LateInputEvent"], "event_count": [1], "records": [1]}
    )
    later = minute + timedelta(minutes=30)
    markers = pl.DataFrame(
        {"time": [later], "severity": ["critical"], "alerts": [1], "firing": [1], "label": ["x"]}
    )
    fig = figures.errors_over_time(frame, markers, "1m").to_dict()
    assert "range" not in fig["layout"]["xaxis"]  # two times: plotly's own range holds both
