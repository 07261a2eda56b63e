"""What was loaded, as the pages name it: the Load page's fields from the loaded job
definition or capture, the sidebar's label and the Overview's job name right after loading,
no internal folder shown, and the loaded work named in the URL so that a reload keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnostics.appdata import loaded, loadform, workdir
from tests.app.conftest import JOBS, SCENARIOS, USER_JOB, user_capture, user_job

pytestmark = pytest.mark.timeout(600)

USER_COLUMNS = ("deviceId", "temperature", "eventTime", "EventEnqueuedUtcTime", "PartitionId")


def test_the_event_time_column_is_found_by_its_name_never_an_arrival_column():
    assert loadform.event_time_column(USER_COLUMNS) == "eventTime"
    assert loadform.event_time_column(["device_id", "event_time", "arrival_time"]) == "event_time"
    assert loadform.event_time_column(["Timestamp", "EventTime"]) == "EventTime"
    assert loadform.event_time_column(["EventEnqueuedUtcTime", "EventProcessedUtcTime"]) is None
    assert loadform.event_time_column(["arrival_time", "value"]) is None


def test_capture_columns_come_from_the_head_of_each_table_kind(tmp_path):
    csv = user_capture(tmp_path)
    assert loadform.capture_columns("readings.csv", csv.read_bytes()) == USER_COLUMNS
    assert loadform.path_columns(csv) == USER_COLUMNS
    line = b'{"deviceId": "d1", "eventTime": "2024-01-01T00:00:00Z", "EventEnqueuedUtcTime": 1}\n'
    assert loadform.capture_columns("r.json", line) == (
        "deviceId",
        "eventTime",
        "EventEnqueuedUtcTime",
    )
    assert loadform.capture_columns("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00") == ()
    capture = SCENARIOS.parent / "captures" / "eventhubs-capture"
    assert "event_time" in loadform.path_columns(capture)
    assert loadform.path_columns(tmp_path / "missing.csv") == ()


def test_a_label_is_kept_in_a_working_folder_only(app_env, tmp_path):
    work = workdir.folder_for(b"some upload")
    work.mkdir(parents=True)
    workdir.mark_complete(work)
    loaded.remember(work, "capture readings.csv")
    assert loaded.url_params(work) == {"work": work.name}
    found = loaded.from_url({"work": work.name})
    assert found == loaded.Loaded(work, "capture readings.csv")
    assert loaded.shown_path(work, None) == "capture readings.csv"
    mine = tmp_path / "mine"
    mine.mkdir()
    loaded.remember(mine, "not kept")
    assert not (mine / loaded.LOADED_FILE).exists()  # a user's folder is never written to
    assert loaded.url_params(mine) == {"folder": str(mine)}
    assert loaded.shown_path(mine, "whatever") == str(mine)
    # names that are not working folders, or folders not complete, load nothing
    assert loaded.from_url({"work": "../../etc"}) is None
    assert loaded.from_url({"work": "0" * 20}) is None
    assert loaded.from_url({}) is None


def _user_files(tmp_path: Path) -> tuple[bytes, bytes]:
    return user_capture(tmp_path).read_bytes(), user_job(tmp_path).read_bytes()


def test_fields_follow_the_loaded_definition_else_the_capture_else_are_empty(open_app, tmp_path):
    capture, job = _user_files(tmp_path)
    at = open_app("Load")
    assert at.text_input(key="cap_ts").value == ""  # nothing loaded: no sample's column
    at.file_uploader(key="uploads").set_value([("readings.csv", capture, "text/csv")]).run()
    assert at.text_input(key="cap_ts").value == "eventTime"  # the capture's event time
    definition = (JOBS / "late_senders.arm.json").read_bytes()
    params = (JOBS / "late_senders.parameters.json").read_bytes()
    at.number_input(key="cap_ooo").set_value(7).run()
    at.file_uploader(key="job_definition").set_value(
        [("late_senders.arm.json", definition, "application/json")]
    ).run()
    at.file_uploader(key="job_params").set_value(
        [("late_senders.parameters.json", params, "application/json")]
    ).run()
    assert not at.error, [e.value for e in at.error]
    # the definition's policy: TIMESTAMP BY event_time, late 5 s, out-of-order 0 s, Adjust
    assert at.text_input(key="cap_ts").value == "event_time"
    assert at.number_input(key="cap_late").value == 5
    assert at.number_input(key="cap_ooo").value == 0
    assert at.radio(key="cap_action").value == "adjust"
    at.file_uploader(key="job_definition").set_value([("mine.json", job, "application/json")]).run()
    assert at.text_input(key="cap_ts").value == "eventTime"


def test_a_users_capture_and_job_are_named_everywhere(open_app, tmp_path):
    capture, job = _user_files(tmp_path)
    at = open_app("Load")
    at.file_uploader(key="job_definition").set_value(
        [(f"{USER_JOB}.json", job, "application/json")]
    ).run()
    at.file_uploader(key="uploads").set_value([("readings.csv", capture, "text/csv")]).run()
    at.button(key="analyse_uploads").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.success[0].value.startswith(f"Loaded capture readings.csv with job {USER_JOB}.")
    # the sidebar follows what was just loaded, in the same run
    sidebar = [c.value for c in at.sidebar.caption]
    assert "Loaded: capture readings.csv" in sidebar
    assert f"Job {USER_JOB}" in sidebar
    work = Path(at.session_state["agg_dir"])
    assert at.query_params["work"] == work.name
    at.sidebar.radio(key="page").set_value("Overview").run()
    assert at.query_params["page"] == "overview"
    header = at.caption[0].value
    assert header.startswith(f"Job {USER_JOB} · capture readings.csv · ")
    shown = " ".join(
        [c.value for c in at.caption]
        + [m.value for m in at.markdown]
        + [m.label for m in at.metric]
    )
    assert str(work) not in shown
    assert "jobs: capture" not in shown.lower()


def _shown(at) -> str:
    """Every text an AppTest run shows (markdown, captions, code, metrics, alerts)."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [c.value for c in at.code] + [f"{m.label} {m.value}" for m in at.metric]
    parts += [e.value for e in (*at.info, *at.success, *at.warning, *at.error)]
    return "\n".join(str(p) for p in parts)


def test_every_page_shows_the_users_names_and_prose_as_prose(open_app, tmp_path):
    capture, job = _user_files(tmp_path)
    at = open_app("Load")
    at.file_uploader(key="job_definition").set_value(
        [(f"{USER_JOB}.json", job, "application/json")]
    ).run()
    at.file_uploader(key="uploads").set_value([("readings.csv", capture, "text/csv")]).run()
    at.button(key="analyse_uploads").click().run()
    work = at.session_state["agg_dir"]
    policy = "TIMESTAMP BY eventTime, late 5s, out-of-order 0s, adjust"
    expected = {
        "Overview": f"Job {USER_JOB} · capture readings.csv · ",
        "Findings": f"policy: {policy}",
        "Lateness": f"Policy: {policy}.",
        "Partitions": "Without PARTITION BY",
        "What-if": f"Current policy: {policy}",
        "Results": f"Policy: {policy}.",
        "Alerts": "2 valid rules from ",  # the test rule pack (ORDERDOC_RULES)
        "Quarantine": "nothing is quarantined",
    }
    for page, words in expected.items():
        at.sidebar.radio(key="page").set_value(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        shown = _shown(at)
        assert words in shown, page
        assert work not in shown, page
        assert "event_time" not in shown, page  # no sample's column name anywhere
        assert f"Job {USER_JOB}" in [c.value for c in at.sidebar.caption], page
        if page == "Findings":
            advice = (
                "Check the producers writing to partition 3: send with a partition key spread "
                "over all partitions (or none, for round-robin) so that no partition goes silent"
            )
            # 27.1: the sentence as text, whole; query text in code, naming the user's input
            assert advice in [m.value for m in at.markdown]
            codes = [c.value for c in at.code]
            assert not any("Check the producers" in c for c in codes)
            # one FROM clause per finding, keeping the job's TIMESTAMP BY (the idle
            # partition's PARTITION BY within the recommendation's clause)
            clauses = [c for c in codes if c.startswith("FROM ")]
            assert any(c.endswith("PARTITION BY PartitionId") for c in clauses)
            assert all(c.startswith("FROM telemetry TIMESTAMP BY eventTime") for c in clauses)


def test_a_new_session_on_the_pages_url_shows_the_loaded_work(open_app, tmp_path):
    capture, job = _user_files(tmp_path)
    at = open_app("Load")
    at.file_uploader(key="job_definition").set_value(
        [(f"{USER_JOB}.json", job, "application/json")]
    ).run()
    at.file_uploader(key="uploads").set_value([("readings.csv", capture, "text/csv")]).run()
    at.button(key="analyse_uploads").click().run()
    work = at.query_params["work"]

    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    # a reload: a new session with the URL's query parameters only
    again = AppTest.from_file(str(APP), default_timeout=120)
    again.query_params["work"] = work
    again.query_params["page"] = "findings"
    again.run()
    assert not again.exception, [e.value for e in again.exception]
    assert again.sidebar.radio(key="page").value == "Findings"
    assert "Loaded: capture readings.csv" in [c.value for c in again.sidebar.caption]
    assert f"Job {USER_JOB}" in [c.value for c in again.sidebar.caption]
    assert again.session_state["agg_dir"] == str(workdir.base() / work)


def test_a_folder_opened_from_disk_is_named_in_the_url_and_reopened(open_app, agg_asa):
    at = open_app("Load")
    at.text_input(key="agg_path").set_value(str(agg_asa)).run()
    at.button(key="open_folder").click().run()
    assert at.query_params["folder"] == str(agg_asa)
    assert "work" not in at.query_params

    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    again = AppTest.from_file(str(APP), default_timeout=120)
    again.query_params["folder"] = str(agg_asa)
    again.query_params["page"] = "overview"
    again.run()
    assert not again.exception, [e.value for e in again.exception]
    assert again.session_state["agg_dir"] == str(agg_asa)
    # a folder the user opened is named by its path (it is theirs, not the app's); the
    # Overview shows the job the sidebar chose (the folder holds several)
    scoped = again.sidebar.selectbox(key="job_scope").value
    assert again.caption[0].value.startswith(f"Job {scoped} · ")
    assert str(agg_asa) in again.caption[0].value
