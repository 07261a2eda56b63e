"""The storage tests' Azurite: one Blob service per test worker (session scope), started on
127.0.0.1 by tests/storage/azurite.py and stopped at the end. Without Azurite the tests are
skipped with the reason, except in CI (``CI=true``), where they must run: there a missing
Azurite fails them (scripts/install-azurite.sh, which `make test` runs, installs it)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.storage.azurite import Azurite, available, azurite

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"


@pytest.fixture(scope="session")
def azurite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    """A running Azurite Blob service (skipped outside CI when it cannot run here)."""
    why = available()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Azurite is required in CI: {why}")
        pytest.skip(f"Azurite cannot run: {why}")
    with azurite(tmp_path_factory.mktemp("azurite")) as server:
        yield server


@pytest.fixture
def storage(azurite_server: Azurite, monkeypatch: pytest.MonkeyPatch) -> Azurite:
    """Azurite, its connection string in ``AZURE_STORAGE_CONNECTION_STRING`` (and no other
    storage variable of the machine's)."""
    for name in list(os.environ):
        if name.startswith("AZURE_STORAGE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite_server.connection_string)
    return azurite_server


def container_name(what: str) -> str:
    """A container name of its own for one test (containers outlive tests in a session)."""
    return f"{what}-{uuid.uuid4().hex[:8]}"
