"""Storage URLs and credentials (no server): the three URL forms, what is refused and why,
where the account and the secret come from, and that no secret reaches a message."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.storage.auth import CredentialKind, credentials_for, redact
from diagnostics.storage.hours import hour_of, hour_prefixes, in_range
from diagnostics.storage.urls import StorageUrl, UrlError, is_url, parse_url

LOGS = "resourceId=/SUBSCRIPTIONS/0/STREAMINGJOBS/ORDERS/y=2024/m=03/d=05/h=10/m=00/PT1H.json"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("az://insights-logs-execution/", StorageUrl("az", "insights-logs-execution", "")),
        ("az://capture/hub/0/", StorageUrl("az", "capture", "hub/0")),
        (
            "abfss://capture@myacct.dfs.core.windows.net/ns/hub",
            StorageUrl("abfss", "capture", "ns/hub", "myacct", "core.windows.net"),
        ),
        (
            "abfs://capture@myacct.dfs.core.windows.net/",
            StorageUrl("abfs", "capture", "", "myacct", "core.windows.net"),
        ),
        (
            "https://myacct.blob.core.windows.net/insights-logs-execution/" + LOGS,
            StorageUrl("https", "insights-logs-execution", LOGS, "myacct", "core.windows.net"),
        ),
        (
            "https://myacct.blob.core.chinacloudapi.cn/logs/a%20b/c",
            StorageUrl("https", "logs", "a b/c", "myacct", "core.chinacloudapi.cn"),
        ),
    ],
)
def test_the_three_forms_parse(text: str, expected: StorageUrl) -> None:
    assert is_url(text)
    assert parse_url(text) == expected


def test_forms_print_back_and_give_the_spark_form() -> None:
    url = parse_url("https://myacct.blob.core.windows.net/capture/ns/hub/")
    assert str(url) == "https://myacct.blob.core.windows.net/capture/ns/hub"
    assert url.abfss == "abfss://capture@myacct.dfs.core.windows.net/ns/hub"
    assert (
        url.child("ns/hub/0/x.avro")
        == "https://myacct.blob.core.windows.net/capture/ns/hub/0/x.avro"
    )
    assert parse_url("az://capture/x").abfss is None  # the account is the environment's


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("az://Capture/x", "is not a container name"),
        ("az://ab/x", "is not a container name"),
        ("az:///x", "names no container"),
        ("abfss://capture/x", "expected abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH"),
        ("https://example.com/capture/x", "expected https://ACCOUNT.blob.core.windows.net"),
        ("https://myacct.blob.core.windows.net/", "names no container"),
        ("az://c@acct/x", "names no account"),
    ],
)
def test_bad_urls_say_why(text: str, why: str) -> None:
    with pytest.raises(UrlError, match="^" + text.split("://")[0]) as caught:
        parse_url(text)
    assert why in str(caught.value)


def test_a_sas_in_the_url_is_refused_and_not_shown() -> None:
    text = "https://myacct.blob.core.windows.net/logs/x?sv=2024&sig=SECRETSIG%3D"
    with pytest.raises(UrlError) as caught:
        parse_url(text)
    assert "SECRETSIG" not in str(caught.value)
    assert "AZURE_STORAGE_SAS_TOKEN" in str(caught.value)


def test_local_paths_are_not_urls() -> None:
    for text in (
        "sample_logs/asa",
        "/tmp/x",
        "C:\\logs",
        "file:///tmp/x",
        "s3://bucket/x",
        None,
        3,
    ):
        assert not is_url(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    container=st.from_regex(r"[a-z0-9]{3,20}", fullmatch=True),
    parts=st.lists(st.from_regex(r"[A-Za-z0-9=._-]{1,12}", fullmatch=True), max_size=5),
)
def test_az_urls_round_trip(container: str, parts: list[str]) -> None:
    path = "/".join(p for p in parts if p not in (".", ".."))
    url = parse_url(f"az://{container}/{path}")
    assert parse_url(str(url)) == url
    assert url.path == "/".join(p for p in path.split("/") if p)


KEY = "c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5PT0="


def test_credentials_from_a_connection_string() -> None:
    env = {
        "AZURE_STORAGE_CONNECTION_STRING": f"DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey={KEY};EndpointSuffix=core.windows.net"
    }
    found = credentials_for(parse_url("az://logs/x"), env)
    assert (found.account, found.kind, found.endpoint) == (
        "myacct",
        CredentialKind.KEY,
        "https://myacct.blob.core.windows.net",
    )
    assert KEY not in repr(found)
    assert KEY not in found.describe()
    with pytest.raises(UrlError, match="names account 'other' but") as caught:
        credentials_for(parse_url("abfss://logs@other.dfs.core.windows.net/x"), env)
    assert KEY not in str(caught.value)


def test_credentials_from_account_and_sas_or_key_or_identity() -> None:
    url = parse_url("abfss://logs@myacct.dfs.core.windows.net/x")
    sas = credentials_for(url, {"AZURE_STORAGE_SAS_TOKEN": "?sv=1&sig=abc"})
    assert (sas.account, sas.kind, sas.secret) == ("myacct", CredentialKind.SAS, "sv=1&sig=abc")
    key = credentials_for(
        parse_url("az://logs/x"), {"AZURE_STORAGE_ACCOUNT": "acct2", "AZURE_STORAGE_KEY": KEY}
    )
    assert (key.account, key.kind) == ("acct2", CredentialKind.KEY)
    identity = credentials_for(url, {})
    assert (identity.kind, identity.secret) == (CredentialKind.IDENTITY, None)
    with pytest.raises(UrlError, match="az:// names no storage account: set AZURE_STORAGE_ACCOUNT"):
        credentials_for(parse_url("az://logs/x"), {})


def test_azurite_shorthand_and_bad_connection_strings() -> None:
    dev = credentials_for(
        parse_url("az://logs/"), {"AZURE_STORAGE_CONNECTION_STRING": "UseDevelopmentStorage=true"}
    )
    assert (dev.account, dev.endpoint) == (
        "devstoreaccount1",
        "http://127.0.0.1:10000/devstoreaccount1",
    )
    with pytest.raises(UrlError, match="a part without '='") as caught:
        credentials_for(
            parse_url("az://logs/"),
            {"AZURE_STORAGE_CONNECTION_STRING": f"AccountName=a;{KEY.rstrip('=')}"},
        )
    assert KEY not in str(caught.value)


def test_redact_removes_secrets_and_signed_queries() -> None:
    found = credentials_for(
        parse_url("az://logs/x"), {"AZURE_STORAGE_ACCOUNT": "a1b", "AZURE_STORAGE_KEY": KEY}
    )
    text = f"GET https://a1b.blob.core.windows.net/logs/x?sv=1&sig=XYZ failed; key {KEY}; AccountKey={KEY[:10]}"
    clean = redact(text, found)
    assert "XYZ" not in clean
    assert KEY[:10] not in clean
    assert "https://a1b.blob.core.windows.net/logs/x failed" in clean


def test_hours_of_the_log_layout() -> None:
    assert hour_of(LOGS) == datetime(2024, 3, 5, 10, tzinfo=UTC)
    assert hour_of("capture/ns/hub/0/2024/03/05/10/00/00.avro") is None
    since, until = datetime(2024, 3, 5, 9, 30, tzinfo=UTC), datetime(2024, 3, 5, 11, tzinfo=UTC)
    assert hour_prefixes(since, until) == ["y=2024/m=03/d=05/h=09/", "y=2024/m=03/d=05/h=10/"]
    assert in_range(LOGS, since, until)
    assert not in_range(LOGS, datetime(2024, 3, 5, 11, tzinfo=UTC), None)
    assert not in_range(LOGS, None, datetime(2024, 3, 5, 10, tzinfo=UTC))
    assert in_range("no/hours/here.json", since, until)  # cannot be placed in time: kept


def test_replay_on_a_cluster_gets_the_abfss_form() -> None:
    from argparse import Namespace

    from diagnostics.cli.storage_args import for_cluster

    env = {"AZURE_STORAGE_ACCOUNT": "myacct"}
    cluster = Namespace(spark=True, master="spark://h:7077", remote=None)
    abfss = "abfss://capture@myacct.dfs.core.windows.net/ns/hub"
    assert for_cluster(cluster, "replay", "events", abfss) == abfss
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)
        assert for_cluster(cluster, "replay", "events", "az://capture/ns/hub/") == abfss
    https = "https://myacct.blob.core.windows.net/capture/ns/hub"
    assert for_cluster(cluster, "replay", "events", https) == abfss
    # staged on this machine: no cluster, another command (reads it here), another input
    assert (
        for_cluster(Namespace(spark=True, master=None, remote=None), "replay", "events", abfss)
        is None
    )
    assert for_cluster(cluster, "whatif", "events", abfss) is None
    assert for_cluster(cluster, "replay", "job_definition", abfss) is None
