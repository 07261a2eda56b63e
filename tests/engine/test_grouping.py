"""Timelines grouped by a 16-bit radix sort are grouped in the order of a 64-bit stable
sort (the engine's breakpoints and release searches rely on that order)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from diagnostics.engine.release import grouping


@given(
    hnp.arrays(
        np.int64,
        st.integers(0, 400),
        elements=st.one_of(st.integers(0, 40), st.integers(0, 2**15 + 5), st.integers(-3, 2**40)),
    )
)
def test_grouping_is_the_stable_sort_of_the_ids(ids) -> None:
    assert np.array_equal(grouping(ids), np.argsort(ids, kind="stable"))
