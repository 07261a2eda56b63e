"""The Load page: uploads of every kind, folders, and bad input shown as a message in the page
(never a traceback)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import fastavro
import pytest

from tests.app.conftest import ASA, SCENARIOS, metrics

CAPTURES = SCENARIOS.parent / "captures"
#: sample_logs/captures: the late_senders events replayed under ASA's default policy
LATE_IN_CAPTURE_SAMPLE = 87

pytestmark = pytest.mark.timeout(600)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def _upload(at, *files):
    at.file_uploader(key="uploads").set_value(list(files)).run()
    at.button(key="analyse_uploads").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_an_image_upload_is_refused_with_a_message(open_app):
    at = _upload(open_app("Load"), ("photo.png", PNG, "image/png"))
    assert at.error[0].value.startswith("photo.png: not an ASA diagnostic log or an event capture")
    assert "agg_dir" not in at.session_state


def test_a_text_file_without_records_is_refused_with_a_message(open_app):
    at = _upload(open_app("Load"), ("notes.txt", b"hello\nworld\n", "text/plain"))
    message = at.error[0].value
    assert "notes.txt" in message
    assert "not an ASA diagnostic log or an event capture" in message
    assert "2 records rejected" in message


def test_a_csv_that_is_neither_shape_is_refused(open_app):
    at = _upload(open_app("Load"), ("prices.csv", b"item,price\napple,3\n", "text/csv"))
    assert "prices.csv: not an ASA diagnostic log or an event capture" in at.error[0].value


def test_log_uploads_of_several_shapes_are_aggregated(open_app):
    files = [
        ("PT1H.json", (ASA / "PT1H.json").read_bytes(), "application/json"),
        ("mixed-malformed.json", (ASA / "mixed-malformed.json").read_bytes(), "application/json"),
        ("PT1H-archive.json.gz", (ASA / "PT1H-archive.json.gz").read_bytes(), "application/gzip"),
    ]
    at = _upload(open_app("Load"), *files)
    assert at.success[0].value.startswith("Loaded PT1H.json, mixed-malformed.json")
    at.sidebar.radio(key="page").set_value("Overview").run()
    shown = metrics(at)
    # sample_logs/asa/README.md: LateInputEvent 29 + 2 + 3; 5 quarantined (mixed-malformed)
    assert shown["Late events"] == "34"
    assert shown["Quarantined records"] == "5"


def test_a_capture_upload_is_replayed(open_app):
    data = (SCENARIOS / "clock_skew" / "capture.csv").read_bytes()
    at = open_app("Load")
    at.number_input(key="cap_late").set_value(5).run()
    at = _upload(at, ("capture.csv.gz", gzip.compress(data), "application/gzip"))
    assert at.success[0].value.startswith("Loaded capture capture.csv.gz")
    at.sidebar.radio(key="page").set_value("Overview").run()
    # README, clock_skew: EarlyInputEvent 229 (from the partitions present in the capture)
    assert metrics(at)["Early events"] == "229"


def test_a_capture_without_the_timestamp_column_says_so(open_app):
    at = open_app("Load")
    at.text_input(key="cap_ts").set_value("sent_at").run()
    data = (SCENARIOS / "healthy" / "capture.csv").read_bytes()
    at = _upload(at, ("capture.csv", data, "text/csv"))
    message = at.error[0].value
    assert message.startswith("capture.csv: TIMESTAMP BY column 'sent_at' is missing (columns: ")
    assert message.endswith('(set "TIMESTAMP BY column")')
    assert "__row" not in message


def test_a_capture_with_a_log_is_refused(open_app):
    capture = (SCENARIOS / "healthy" / "capture.csv").read_bytes()
    log = (ASA / "PT1H.json").read_bytes()
    at = _upload(
        open_app("Load"),
        ("capture.csv", capture, "text/csv"),
        ("PT1H.json", log, "application/json"),
    )
    assert at.error[0].value.startswith("Upload one event capture on its own")


def test_opening_an_empty_folder_shows_why(open_app, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    at = open_app("Load")
    at.text_input(key="agg_path").set_value(str(empty)).run()
    at.button(key="open_folder").click().run()
    assert not at.exception
    assert "not an aggregate folder" in at.error[0].value
    at.text_input(key="agg_path").set_value(str(tmp_path / "missing")).run()
    at.button(key="open_folder").click().run()
    assert at.error[0].value.endswith(
        "missing: no such aggregate folder (expected the output of 'orderdoc aggregate')"
    )


def test_opening_an_aggregate_folder(open_app, agg_asa):
    at = open_app("Load")
    at.text_input(key="agg_path").set_value(str(agg_asa)).run()
    at.button(key="open_folder").click().run()
    assert at.success[0].value.startswith(f"Opened {agg_asa}")
    assert at.session_state["agg_dir"] == str(agg_asa)


def test_a_folder_emptied_after_loading_shows_a_message_on_every_page(open_app, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    for page in (
        "Overview",
        "Findings",
        "Lateness",
        "Partitions",
        "What-if",
        "Alerts",
        "Quarantine",
    ):
        at = open_app(page, gone)
        assert "not an aggregate folder" in at.info[0].value


def test_an_event_hubs_capture_avro_upload_is_replayed(open_app):
    first = sorted((CAPTURES / "eventhubs-capture").rglob("*.avro"))[0]
    at = _upload(open_app("Load"), ("00.avro", first.read_bytes(), "application/octet-stream"))
    assert at.success[0].value.startswith("Loaded capture 00.avro")
    with first.open("rb") as handle:
        records = sum(1 for _ in fastavro.reader(handle))
    source = Path(at.session_state["agg_dir"]) / "capture" / "source.json"
    info = json.loads(source.read_text())
    assert info["events"] == records
    assert info["arrival"] == "EventEnqueuedUtcTime"


def test_a_passthrough_capture_upload_needs_no_column_settings(open_app):
    data = (CAPTURES / "passthrough.csv").read_bytes()
    at = _upload(open_app("Load"), ("passthrough.csv", data, "text/csv"))
    assert at.success[0].value.startswith("Loaded capture passthrough.csv")
    at.sidebar.radio(key="page").set_value("Overview").run()
    assert metrics(at)["Late events"] == str(LATE_IN_CAPTURE_SAMPLE)


def test_a_capture_folder_on_this_machine_is_replayed(open_app):
    at = open_app("Load")
    at.text_input(key="capture_path").set_value(str(CAPTURES / "eventhubs-capture")).run()
    at.button(key="replay_path").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.success[0].value.startswith("Loaded capture ")
    at.sidebar.radio(key="page").set_value("Overview").run()
    assert metrics(at)["Late events"] == str(LATE_IN_CAPTURE_SAMPLE)


def test_a_missing_capture_path_shows_a_message(open_app, tmp_path):
    at = open_app("Load")
    at.text_input(key="capture_path").set_value(str(tmp_path / "nope")).run()
    at.button(key="replay_path").click().run()
    assert not at.exception
    assert "no such file or folder" in at.error[0].value


JOBS = SCENARIOS.parent / "jobs"


def test_a_capture_with_its_job_definition_gives_the_corrected_job(open_app):
    definition = (JOBS / "cross_device_disorder.resource.json").read_bytes()
    at = open_app("Load")
    at.text_input(key="cap_ts").set_value("not_used").run()  # the definition wins
    at.file_uploader(key="job_definition").set_value(
        [("job.json", definition, "application/json")]
    ).run()
    assert not at.error, [e.value for e in at.error]
    assert any("Policy from job sample-cross-device-disorder" in c.value for c in at.caption)
    data = (SCENARIOS / "cross_device_disorder" / "capture.csv").read_bytes()
    at = _upload(at, ("capture.csv", data, "text/csv"))
    assert at.success[0].value.startswith("Loaded capture capture.csv")
    at.sidebar.radio(key="page").set_value("Findings").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [h.value for h in at.header] == ["The corrected job"]
    table = at.dataframe[-1].value
    row = table[table["replayed on the capture"] == "out-of-order events"].iloc[0]
    assert (row["now"], row["corrected"]) == ("211", "0")
    codes = [c.value for c in at.code]
    assert any("FROM [telemetry] TIMESTAMP BY event_time\n" in c for c in codes)
    assert any(
        "FROM [telemetry] TIMESTAMP BY event_time OVER device_id PARTITION BY PartitionId" in c
        for c in codes
    )
    assert any("What each change costs and gains" in m.value for m in at.markdown)
    # the findings' suggestions name the job's input, as its query does
    assert any(c.startswith("FROM telemetry TIMESTAMP BY event_time OVER device_id") for c in codes)
    assert not any(c.startswith("FROM input ") for c in codes)
    labels = {b.label for b in at.get("download_button")}
    assert labels >= {"Download job.fixed.json", "Download query.asaql", "Download apply.sh"}


def test_a_bad_job_definition_is_a_message(open_app):
    at = open_app("Load")
    at.file_uploader(key="job_definition").set_value(
        [("job.json", b'{"resources": []}', "application/json")]
    ).run()
    assert not at.exception
    assert at.error[0].value == (
        "job.json: no Microsoft.StreamAnalytics/streamingjobs resource in resources[]"
    )


def _with_query(query: str) -> bytes:
    document = json.loads((JOBS / "cross_device_disorder.resource.json").read_text())
    document["properties"]["transformation"]["properties"]["query"] = query
    return json.dumps(document).encode()


def test_a_definition_error_names_the_pages_own_control(open_app):
    # errors name the Load page's fields, not the command line's flags
    at = open_app("Load")
    at.text_input(key="cap_ts").set_value("").run()
    at.file_uploader(key="job_definition").set_value(
        [("job.json", _with_query("SELECT * INTO o FROM telemetry TIMESTAMP BY CAST(t AS datetime)"), "application/json")]
    ).run()  # fmt: skip
    assert not at.exception
    message = at.error[0].value
    assert message.startswith("job.json: TIMESTAMP BY CAST(t AS datetime) (input telemetry)")
    assert message.endswith('(set "TIMESTAMP BY column")')
    assert "--" not in message
    at.file_uploader(key="job_definition").set_value(
        [("job.json", (JOBS / "late_senders.arm.json").read_bytes(), "application/json")]
    ).run()
    at.text_input(key="job_input").set_value("nope").run()
    assert at.error[0].value.endswith('(inputs: telemetry, devices) (set "Input name")')


def test_the_timestamp_by_column_stands_in_for_a_query_expression(open_app):
    query = "SELECT * INTO o FROM [telemetry] TIMESTAMP BY CAST(event_time AS datetime)"
    at = open_app("Load")
    data = (SCENARIOS / "cross_device_disorder" / "capture.csv").read_bytes()
    # the capture chosen first: its event-time column fills the TIMESTAMP BY field
    at.file_uploader(key="uploads").set_value([("capture.csv", data, "text/csv")]).run()
    assert at.text_input(key="cap_ts").value == "event_time"
    at.file_uploader(key="job_definition").set_value(
        [("job.json", _with_query(query), "application/json")]
    ).run()
    assert not at.error, [e.value for e in at.error]
    caption = next(c.value for c in at.caption if c.value.startswith("Policy from"))
    assert "the TIMESTAMP BY column above, event_time, is used instead" in caption
    at.button(key="analyse_uploads").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.sidebar.radio(key="page").set_value("Findings").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    table = at.dataframe[-1].value
    row = table[table["replayed on the capture"] == "out-of-order events"].iloc[0]
    assert (row["now"], row["corrected"]) == ("211", "0")
    assert any(
        "TIMESTAMP BY CAST(event_time AS datetime) OVER device_id PARTITION BY PartitionId"
        in c.value
        for c in at.code
    )


def test_logs_with_a_job_definition_give_the_corrected_job_as_diffs(open_app):
    # as `orderdoc explain AGG_DIR --job-definition FILE --write-fix DIR`: the job's policy
    # for the findings, the corrected job without a measurement
    at = open_app("Load")
    definition = (JOBS / "idle_partition.az-show.json").read_bytes()
    at.file_uploader(key="job_definition").set_value(
        [("my-job.json", definition, "application/json")]
    ).run()
    assert not at.error, [e.value for e in at.error]
    idle = SCENARIOS / "idle_partition"
    at = _upload(
        at,
        ("diagnostics.jsonl", (idle / "diagnostics.jsonl").read_bytes(), "application/json"),
        ("metrics.parquet", (idle / "metrics.parquet").read_bytes(), "application/octet-stream"),
    )
    assert at.success[0].value.startswith("Loaded diagnostics.jsonl, metrics.parquet")
    at.sidebar.radio(key="page").set_value("Findings").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert [h.value for h in at.header] == ["The corrected job"]
    captions = [c.value for c in at.caption]
    assert any("not measured" in c for c in captions)
    # the impact uses the job's late tolerance; no command-line flag anywhere
    assert any("output held back by the late-arrival tolerance: 5 s" in c for c in captions)
    shown = captions + [m.value for m in at.markdown] + [c.value for c in at.code]
    assert not any("--late-arrival" in t or "--job-definition" in t for t in shown)
    # suggestions carry the command line's labels, not internal kind names
    assert "query: PARTITION BY" in captions
    assert not any(c in ("partition by", "feed all partitions") for c in captions)
    diffs = [c.value for c in at.code if c.language == "diff"]
    assert any("+FROM [telemetry] TIMESTAMP BY event_time PARTITION BY PartitionId" in d for d in diffs)  # fmt: skip
    assert any(d.startswith("--- my-job.json (now)\n+++ my-job.json (corrected)") for d in diffs)
    fix_md = next(m.value for m in at.markdown if m.value.startswith("# Fix for"))
    assert fix_md.startswith("# Fix for job sample-idle-partition (az-show my-job.json,")
    labels = {b.label for b in at.get("download_button")}
    assert labels >= {"Download my-job.fixed.json", "Download query.asaql", "Download FIX.md"}


def test_logs_without_a_definition_name_the_load_page_field(open_app):
    idle = SCENARIOS / "idle_partition"
    at = _upload(
        open_app("Load"),
        ("diagnostics.jsonl", (idle / "diagnostics.jsonl").read_bytes(), "application/json"),
        ("metrics.parquet", (idle / "metrics.parquet").read_bytes(), "application/octet-stream"),
    )
    at.sidebar.radio(key="page").set_value("Findings").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption]
    # (the impact sentence is lower-cased after its first letter by the explainer)
    assert any('on the load page (the "job definition" field)' in c.lower() for c in captions)
    assert not any("--" in c for c in captions)
    assert not at.header  # no corrected job without a definition


CAPTURE_ROOT = CAPTURES / "eventhubs-capture" / "orderdoc"
AVRO = "application/octet-stream"


def _capture_source(at) -> dict:
    return json.loads((Path(at.session_state["agg_dir"]) / "capture" / "source.json").read_text())


def test_a_capture_folder_upload_takes_each_partition_from_its_path(open_app):
    # a folder upload names each file by its path inside the folder chosen (the event hub's)
    files = sorted(CAPTURE_ROOT.rglob("*.avro"))
    at = open_app("Load")
    uploader = at.file_uploader(key="capture_folder")
    assert uploader.accept_directory
    uploader.set_value(
        [(f.relative_to(CAPTURE_ROOT).as_posix(), f.read_bytes(), AVRO) for f in files]
    ).run()
    at.button(key="replay_folder").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.success[0].value.startswith(f"Loaded capture {len(files)} Capture files")
    source = _capture_source(at)
    assert source["partitions"] == [0, 1, 2, 3]
    assert source["arrival"] == "EventEnqueuedUtcTime"
    assert source["events"] == 400
    at.sidebar.radio(key="page").set_value("Overview").run()
    assert metrics(at)["Late events"] == str(LATE_IN_CAPTURE_SAMPLE)


def _one_event_avro(tmp_path: Path, name: str) -> bytes:
    from tests.captures.helpers import body, capture_record, ms, write_avro

    record = capture_record(0, body(event_time="2024-01-01T00:00:00Z"), ms("00:00:01"), "")
    return write_avro(tmp_path / name, [record]).read_bytes()


def test_several_avro_uploads_follow_the_capture_path_format_setting(open_app, tmp_path):
    files = [(name, _one_event_avro(tmp_path, name), AVRO) for name in ("p3-00.avro", "p1-00.avro")]
    at = _upload(open_app("Load"), *files)  # loose files: no path gives their partition
    message = at.error[0].value
    assert message.startswith("p3-00.avro: the path does not follow the capture path format")
    assert "agg_dir" not in at.session_state
    at.text_input(key="cap_path_format").set_value("p{PartitionId}-{Minute}").run()
    at.button(key="analyse_uploads").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.success[0].value.startswith("Loaded capture 2 Capture files")
    assert _capture_source(at)["partitions"] == [1, 3]
