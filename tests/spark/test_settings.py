"""``settings_set``: the Spark replay's and the URI copy's settings hold for their block only
(diagnostics/spark/session.py)."""

from __future__ import annotations

import pytest

from diagnostics.spark.session import settings_set

pytestmark = pytest.mark.spark

SHUFFLE = "spark.sql.shuffle.partitions"
UNSET = "spark.orderdoc.test.unset"


def test_settings_hold_in_the_block_and_are_restored(spark) -> None:
    before = spark.conf.get(SHUFFLE)
    with settings_set(spark, {SHUFFLE: "7", UNSET: "x"}):
        assert spark.conf.get(SHUFFLE) == "7"
        assert spark.conf.get(UNSET) == "x"
    assert spark.conf.get(SHUFFLE) == before
    assert spark.conf.get(UNSET, None) is None


def test_settings_are_restored_after_an_error(spark) -> None:
    before = spark.conf.get(SHUFFLE)
    with pytest.raises(ValueError, match="inside"), settings_set(spark, {SHUFFLE: "5", UNSET: "y"}):
        raise ValueError("inside")
    assert spark.conf.get(SHUFFLE) == before
    assert spark.conf.get(UNSET, None) is None
