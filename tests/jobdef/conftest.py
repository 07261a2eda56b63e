"""Job definitions for the tests: the bundled samples and small documents written on the fly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "sample_logs" / "jobs"
SCENARIOS = ROOT / "sample_logs" / "scenarios"


def resource(query: str, *, inputs=None, **props) -> dict:
    """A streamingjobs resource document."""
    return {
        "name": "job-1",
        "type": "Microsoft.StreamAnalytics/streamingjobs",
        "properties": {
            **props,
            "inputs": inputs
            if inputs is not None
            else [{"name": "input", "properties": {"type": "Stream"}}],
            "transformation": {"name": "Transformation", "properties": {"query": query}},
        },
    }


@pytest.fixture
def write_json(tmp_path):
    def write(document, name="job.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(document), encoding="utf-8")
        return path

    return write
