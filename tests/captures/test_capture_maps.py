"""Capture's maps written as JSON text by shape (diagnostics/captures/capture_maps.py) are
exactly what ``json.dumps(map, sort_keys=True)`` writes for each record, and the arrival
time is the map's last whole-number ``x-opt-enqueued-time``: every value type Capture's
union holds, keys in any order or twice, non-ASCII and escaped text, empty and null maps,
one shape or more shapes than the vectorised path takes."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.captures.capture_maps import (
    ENQUEUED_MS,
    MAX_SHAPES,
    enqueued_ms,
    map_text,
    properties_text,
)

_CHILDREN = (pa.int64(), pa.float64(), pa.string(), pa.binary(), pa.null())
_UNION = pa.dense_union([pa.field(str(i), t) for i, t in enumerate(_CHILDREN)])

_KEYS = st.sampled_from(["a", "b", ENQUEUED_MS, "x-opt-offset", "caf\u00e9", 'q"k', "t\tab", ""])
_VALUES = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.binary(max_size=4),
    st.none(),
)


def _map_array(records: list[list[tuple[str, Any]] | None]) -> pa.MapArray:
    """Records (lists of entries, keys may repeat; ``None``: no map) as Capture's maps."""
    offsets, keys, codes, value_offsets = [0], [], [], []
    children: list[list[Any]] = [[] for _ in _CHILDREN]
    for record in records:
        for key, value in record or []:
            if isinstance(value, bool) or value is None:
                code = 4
            elif isinstance(value, int):
                code = 0
            elif isinstance(value, float):
                code = 1
            elif isinstance(value, str):
                code = 2
            else:
                code = 3
            keys.append(key)
            codes.append(code)
            value_offsets.append(len(children[code]))
            children[code].append(value)
        offsets.append(offsets[-1] + len(record or []))
    union = pa.UnionArray.from_dense(
        pa.array(codes, type=pa.int8()),
        pa.array(value_offsets, type=pa.int32()),
        [pa.array(values, type=t) for values, t in zip(children, _CHILDREN, strict=True)],
    )
    mask = pa.array([r is None for r in records], type=pa.bool_())
    return pa.MapArray.from_arrays(
        pa.array(offsets, type=pa.int32()), pa.array(keys, type=pa.string()), union, mask=mask
    )


def _expected(records: list[list[tuple[str, Any]] | None]) -> tuple[list[Any], list[Any]]:
    texts, arrivals = [], []
    for record in records:
        as_dict = None if record is None else dict(record)  # a key twice: the last value
        texts.append(properties_text(as_dict))
        value = (as_dict or {}).get(ENQUEUED_MS)
        whole = isinstance(value, int) and not isinstance(value, bool)
        arrivals.append(value if whole and record is not None else None)
    return texts, arrivals


_RECORD = st.lists(st.tuples(_KEYS, _VALUES), max_size=5)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_RECORD, st.none()), max_size=30))
def test_maps_read_as_json_dumps_writes_them(records: list[list[tuple[str, Any]] | None]) -> None:
    maps = _map_array(records)
    texts, arrivals = _expected(records)
    assert map_text(maps, len(records)).to_list() == texts
    assert enqueued_ms(maps, len(records)).to_list() == arrivals


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2**40), st.text(max_size=8)), min_size=1, max_size=4),
    st.integers(1, 200),
)
def test_one_shape_repeated_reads_as_each_record(
    template: list[tuple[int, str]], copies: int
) -> None:
    """Capture's usual case: the same keys in the same order in every record of a file."""
    records: list[list[tuple[str, Any]] | None] = []
    for n in range(copies):
        records.append(
            [
                (ENQUEUED_MS, 1_717_401_600_000 + n),
                *[
                    (f"k{i}", text if i % 2 else number + n)
                    for i, (number, text) in enumerate(template)
                ],
            ]
        )
    texts, arrivals = _expected(records)
    maps = _map_array(records)
    assert map_text(maps, len(records)).to_list() == texts
    assert enqueued_ms(maps, len(records)).to_list() == arrivals


def test_more_shapes_than_the_vectorised_path_takes() -> None:
    records: list[list[tuple[str, Any]] | None] = [
        [(f"key{i}", i), ("shared", "x"), (ENQUEUED_MS, i)] for i in range(MAX_SHAPES + 5)
    ]
    records.append(None)
    records.append([("b", 1), ("a", b"\xff"), ("b", 2)])
    texts, arrivals = _expected(records)
    maps = _map_array(records)
    assert map_text(maps, len(records)).to_list() == texts
    assert enqueued_ms(maps, len(records)).to_list() == arrivals
