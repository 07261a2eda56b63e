"""Watcher tests share the Spark tests' session-scoped local[2] session and table helpers."""

from __future__ import annotations

from tests.spark.conftest import canonical, read_table, samples, spark

__all__ = ["canonical", "read_table", "samples", "spark"]
