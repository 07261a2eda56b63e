"""The spark-submit entry point's command line (diagnostics/cli/submit.py); a real
spark-submit run is in tests/spark/test_cluster.py."""

from __future__ import annotations

import pytest

from diagnostics.cli.submit import COMMANDS, arguments


def test_inputs_alone_aggregate_as_before() -> None:
    assert arguments(["logs/", "--out", "agg"]) == ["aggregate", "logs/", "--out", "agg"]
    assert arguments([]) == ["aggregate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_is_kept(command: str) -> None:
    assert arguments([command, "x", "--spark"]) == [command, "x", "--spark"]
