"""S3's packed ``flags`` (diagnostics/spark/replay_flags.py): lossless for every combination
of the flags and every status, and the bit layout the Spark view (``with_flags``) reads."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.engine.columns import FLAG_COLUMNS
from diagnostics.engine.outcomes import STATUS_DTYPE
from diagnostics.kinds import EventStatus
from diagnostics.spark.replay_flags import STATUS_SHIFT, pack, unpack

ROW = st.tuples(
    st.tuples(*(st.booleans() for _ in FLAG_COLUMNS)),
    st.sampled_from([s.value for s in EventStatus]),
)


def frame(rows: list[tuple[tuple[bool, ...], str]]) -> pl.DataFrame:
    columns: dict[str, pl.Series] = {
        name: pl.Series(name, [flags[i] for flags, _ in rows], dtype=pl.Boolean)
        for i, name in enumerate(FLAG_COLUMNS)
    }
    columns["status"] = pl.Series("status", [status for _, status in rows], dtype=STATUS_DTYPE)
    return pl.DataFrame(columns)


@settings(deadline=None)  # polars' first calls compile: a deadline would measure the load
@given(st.lists(ROW, max_size=50))
def test_unpack_gives_back_what_was_packed(rows: list[tuple[tuple[bool, ...], str]]) -> None:
    given_frame = frame(rows)
    flags = pack(given_frame)
    assert flags.dtype == pl.Int64
    assert flags.null_count() == 0
    back = pl.DataFrame(unpack(flags)).select(*FLAG_COLUMNS, "status")
    assert back.schema == given_frame.schema
    assert back.equals(given_frame)


def test_bit_layout() -> None:
    """Bit i is the i-th flag; the status's index among EventStatus sits from STATUS_SHIFT
    up (what the Spark view's bit tests and S7 read)."""
    statuses = [s.value for s in EventStatus]
    one = frame([(tuple(i == 2 for i in range(len(FLAG_COLUMNS))), statuses[-1])])
    assert pack(one).to_list() == [(1 << 2) + ((len(statuses) - 1) << STATUS_SHIFT)]
    assert len(FLAG_COLUMNS) <= STATUS_SHIFT
