"""A fleet's causes told apart (diagnostics.explain.sender_groups, fleet_causes): on data of
the production fleet's shape, the batching gateway, the slow clocks and the fast clocks are
findings of their own, each naming exactly the injected devices (and the gateway), in
explain's report, FIX.md and the app's Findings page; the bundled scenarios get no cause
they do not have."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from diagnostics.appdata import insight
from diagnostics.captures.reader import Capture, read_capture
from diagnostics.cli import main as orderdoc
from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.explain import Cause, Finding, diagnose
from diagnostics.explain.capture import from_capture
from diagnostics.explain.sender_groups import compact, period_of
from diagnostics.generate import GenerateConfig, Scenario, generate
from diagnostics.generate.fleet import FleetConfig, device_name, groups
from diagnostics.generate.fleet_files import write_fleet
from tests.fleet_tables import COLUMNS, TIMESTAMP_BY, fleet_table

#: The fleet job's policy (job.arm.json): late 10 s, out-of-order 3 s, Adjust.
POLICY = OrderingPolicy(
    timestamp_by=TIMESTAMP_BY, late_arrival_ns=10 * SECOND, out_of_order_ns=3 * SECOND
)
PARTITIONS = tuple(range(8))
SMALL = FleetConfig(
    events=30_000, duration_ms=40 * 60_000, silent_from_ms=5 * 60_000, silent_for_ms=10 * 60_000
)
FLEET_CAUSES = (Cause.BATCHING_SENDERS, Cause.SLOW_CLOCKS, Cause.FAST_CLOCKS)


def _names(config: FleetConfig, group: str) -> list[str]:
    return [device_name(d) for d in groups(config)[group]]


def _by_cause(findings: list[Finding]) -> dict[Cause, Finding]:
    found = [f for f in findings if f.cause in FLEET_CAUSES]
    assert len(found) == len({f.cause for f in found}), [f.title for f in found]
    return {f.cause: f for f in found}


def _check_fleet(findings: list[Finding], config: FleetConfig) -> None:
    """Each injected group is one finding naming exactly its devices."""
    found = _by_cause(findings)
    assert set(found) == set(FLEET_CAUSES)
    batching = found[Cause.BATCHING_SENDERS]
    assert batching.evidence["senders"] == _names(config, "batching_gateway")
    assert batching.evidence["gateway"] == {"gatewayId": ["gw-02"]}
    period = config.gateway_period_ms / 1000
    assert abs(batching.evidence["upload_period_seconds"] - period) <= 0.05 * period
    assert "dev-040..dev-059" in batching.title
    assert "gatewayId gw-02" in batching.title
    slow, fast = found[Cause.SLOW_CLOCKS], found[Cause.FAST_CLOCKS]
    assert slow.evidence["senders"] == _names(config, "slow_clocks")
    assert fast.evidence["senders"] == _names(config, "fast_clocks")
    assert "gateway" not in slow.evidence
    assert "gateway" not in fast.evidence
    assert abs(slow.evidence["clock_offset_seconds"] - config.slow_by_ms / 1000) < 1.0
    assert abs(fast.evidence["clock_offset_seconds"] + config.fast_by_ms / 1000) < 1.0
    assert "dev-160..dev-164" in slow.title
    assert "dev-120..dev-124" in fast.title
    # the late events are all the groups': no general late finding is left
    assert Cause.LATE_ARRIVALS not in {f.cause for f in findings}
    # each cause its own fix
    kinds = {c: {s.kind.value for s in f.suggestions} for c, f in found.items()}
    assert {"flush_more_often", "late_arrival_tolerance"} <= kinds[Cause.BATCHING_SENDERS]
    # OVER the device key: proposed, or (the one recommendation without it) said why not
    over = "timestamp_by_over" in kinds[Cause.BATCHING_SENDERS]
    assert over or batching.left_out[0].startswith("OVER deviceId (proposed by a finding)")
    assert {"fix_sender_clocks", "late_arrival_tolerance"} <= kinds[Cause.SLOW_CLOCKS]
    assert kinds[Cause.FAST_CLOCKS] == {"fix_sender_clocks"}
    assert fast.impact["dropped"] == fast.evidence["early_events"] > 0


@pytest.mark.parametrize(
    ("seed", "events", "minutes"),
    [(0, 20_000, 120), (1, 40_000, 120), (2, 60_000, 60), (3, 25_000, 40), (4, 80_000, 120)],
)
def test_each_cause_is_its_own_finding_naming_its_devices(
    seed: int, events: int, minutes: int
) -> None:
    config = FleetConfig(
        events=events,
        seed=seed,
        duration_ms=minutes * 60_000,
        silent_from_ms=minutes * 60_000 // 3,
        silent_for_ms=minutes * 60_000 // 4,
    )
    evidence = from_capture(fleet_table(config), POLICY, columns=COLUMNS, partitions=PARTITIONS)
    assert evidence.senders is not None
    assert evidence.senders.column == "deviceId"
    _check_fleet(diagnose(evidence), config)


def test_other_periods_and_offsets_are_measured() -> None:
    config = FleetConfig(
        events=40_000,
        seed=11,
        gateway_period_ms=60_000,
        slow_by_ms=20_000,
        fast_by_ms=900_000,
        batching_gateway=7,
        fast_first=20,
        slow_first=100,
    )
    found = _by_cause(
        diagnose(from_capture(fleet_table(config), POLICY, columns=COLUMNS, partitions=PARTITIONS))
    )
    assert found[Cause.BATCHING_SENDERS].evidence["senders"] == _names(config, "batching_gateway")
    assert found[Cause.BATCHING_SENDERS].evidence["gateway"] == {"gatewayId": ["gw-07"]}
    assert abs(found[Cause.BATCHING_SENDERS].evidence["upload_period_seconds"] - 60) <= 3
    assert abs(found[Cause.SLOW_CLOCKS].evidence["clock_offset_seconds"] - 20) < 1
    assert abs(found[Cause.FAST_CLOCKS].evidence["clock_offset_seconds"] + 900) < 1


def test_a_fleet_without_causes_has_no_fleet_finding() -> None:
    config = FleetConfig(
        events=30_000, batching_gateway=None, fast_devices=0, slow_devices=0, far_off=0
    )
    evidence = from_capture(fleet_table(config), POLICY, columns=COLUMNS, partitions=PARTITIONS)
    assert evidence.sender_groups == ()
    assert not {f.cause for f in diagnose(evidence)} & set(FLEET_CAUSES)


SCENARIO_POLICY = OrderingPolicy(timestamp_by="event_time")


@pytest.mark.parametrize("seed", [7, 21, 99])
@pytest.mark.parametrize("scenario", list(Scenario))
def test_the_bundled_scenarios_get_only_the_causes_they_have(scenario: Scenario, seed: int) -> None:
    config = GenerateConfig(events=3_000, partitions=4, duration_ms=40 * 60_000, seed=seed)
    capture = generate(scenario, config)
    evidence = from_capture(capture, SCENARIO_POLICY, partitions=(0, 1, 2, 3))
    found = _by_cause(diagnose(evidence))
    if scenario is Scenario.LATE_SENDERS:  # every fifth device sends every 2 minutes
        devices = sorted(
            capture.filter(pl.col("device_id").str.slice(-5).cast(pl.Int64) % 5 == 0)[
                "device_id"
            ].unique()
        )
        assert set(found) == {Cause.BATCHING_SENDERS}
        assert found[Cause.BATCHING_SENDERS].evidence["senders"] == devices
        assert abs(found[Cause.BATCHING_SENDERS].evidence["upload_period_seconds"] - 120) <= 6
    elif scenario is Scenario.CLOCK_SKEW:  # device 0 is 10 minutes fast
        assert set(found) == {Cause.FAST_CLOCKS}
        assert found[Cause.FAST_CLOCKS].evidence["senders"] == ["dev-00000"]
    else:
        assert found == {}


def test_a_burst_period_is_found_and_irregular_arrivals_have_none() -> None:
    rng = np.random.default_rng(0)
    flushes = np.arange(1, 40) * 180e9
    bursts = np.sort(np.repeat(flushes, 30) + rng.uniform(0, 2e9, 39 * 30)).astype(np.int64)
    assert period_of(bursts) == pytest.approx((180.0, 39), abs=1.0)
    poisson = np.sort(rng.uniform(0, 7_200e9, 1_200)).astype(np.int64)
    assert period_of(poisson) is None
    assert period_of(bursts[:8]) is None  # too few to tell


def test_sender_names_are_shown_as_ranges() -> None:
    names = [*(f"dev-{i:03d}" for i in range(40, 60)), "dev-077", "dev-079", "dev-080", "gw"]
    assert compact(names) == "dev-040..dev-059, dev-077, dev-079, dev-080, gw"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Capture]:
    """The small fleet as a Capture folder with its job's ARM template, read back."""
    out = tmp_path_factory.mktemp("fleet") / "fleet"
    write_fleet(out, SMALL)
    return out, read_capture(out / "capture")


def test_the_table_is_what_the_reader_reads(fleet: tuple[Path, Capture]) -> None:
    _, capture = fleet
    keys = ["PartitionId", "SequenceNumber"]
    read = capture.events.sort(keys)
    built = fleet_table(SMALL).sort(keys)
    same = ["EventEnqueuedUtcTime", "deviceId", "gatewayId", "eventTime", "msgSeq", "battery"]
    assert read.select(keys + same).equals(built.select(keys + same))
    assert set(built.columns) <= set(read.columns)


def test_explain_fix_md_and_the_findings_page_name_the_devices(
    fleet: tuple[Path, Capture], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, capture = fleet
    argv = ["explain", "--events", str(folder / "capture"), "--job-definition",
            str(folder / "job.arm.json")]  # fmt: skip
    assert orderdoc([*argv, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["senders"]["column"] == "deviceId"
    assert "SequenceNumber" in report["senders"]["reason"]
    causes = {f["cause"]: f for f in report["findings"]}
    assert causes["batching_senders"]["evidence"]["senders"] == _names(SMALL, "batching_gateway")
    assert causes["fast_clocks"]["evidence"]["senders"] == _names(SMALL, "fast_clocks")
    assert causes["slow_clocks"]["evidence"]["senders"] == _names(SMALL, "slow_clocks")
    text = json.dumps(report)
    for system in ("OVER SequenceNumber", "OVER Offset", "OVER Body", "OVER Properties"):
        assert system not in text
    # FIX.md: the causes with settings among its reasons, the clocks and the gateway advised
    assert orderdoc([*argv, "--write-fix", str(tmp_path / "fix")]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[2].startswith("sender column: deviceId (chosen on evidence")
    fix_md = (tmp_path / "fix" / "FIX.md").read_text()
    for needle in (
        "deviceId dev-040..dev-059), all those of gatewayId gw-02, upload in batches every",
        "The clocks of 5 senders (deviceId dev-160..dev-164) run about 45 s behind",
        "Synchronise the clocks of 5 senders (deviceId dev-120..dev-124) with NTP",
        "Make gatewayId gw-02 upload more often",
        "- sender column: deviceId (chosen on evidence",
        "no setting can keep, counted apart from the budget",
    ):
        assert needle in fix_md
    # the app's Findings page: the same report and the sender column's line
    page = insight.explain(None, events=capture.events, policy=POLICY, columns=capture.columns,
                           partitions=PARTITIONS)  # fmt: skip
    _check_fleet(page.findings, SMALL)
    assert (insight.senders_line(page) or "").startswith("Sender column: deviceId (chosen on")
