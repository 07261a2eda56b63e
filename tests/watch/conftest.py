"""Watcher tests share the Spark tests' sample folder (their session is tests/conftest.py's)."""

from __future__ import annotations

from tests.spark.conftest import samples

__all__ = ["samples"]
