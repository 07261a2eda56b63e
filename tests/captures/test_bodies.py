"""Bodies read together (diagnostics/captures/bodies.py: a template of the first flat body,
polars' JSON Lines reader with every row checked, Python for the rest) give exactly what
Python's ``json`` gives body by body: the same fields in the same order, each column of
the same type and values, the same raw text for the bodies that are not JSON objects."""

from __future__ import annotations

import json
from typing import Any

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal, assert_series_equal

from diagnostics.captures.bodies import FIELD, field_column, python_body, read_bodies

_KEYS = st.sampled_from(["deviceId", "eventTime", "temp", "n", "ok", "caf\u00e9", 'q"k', ""])
_SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.booleans(),
    st.none(),
)
_VALUES = st.one_of(_SCALARS, st.dictionaries(st.sampled_from("ab"), _SCALARS, max_size=2))
_LAYOUTS = st.sampled_from(
    [
        {"separators": (",", ":")},
        {},
        {"indent": 2},
        {"separators": (", ", ": "), "ensure_ascii": False},
    ]
)


@st.composite
def _body(draw: st.DrawFn, template: dict[str, Any]) -> bytes | None:
    """A body like ``template`` (a device's usual event), or missing a key, with a key
    more or twice, in another layout, not JSON, or none."""
    shape = draw(
        st.sampled_from(["same", "same", "same", "missing", "extra", "twice", "odd", "none"])
    )
    values = {k: draw(_SCALARS) if draw(st.booleans()) else v for k, v in template.items()}
    layout = draw(_LAYOUTS)
    if shape == "none":
        return None
    if shape == "odd":
        return draw(
            st.sampled_from(
                [b"not json {", b"[1, 2]", b'"text"', b"\xff\xfe", b"{}", b'{"a": NaN}']
            )
        )
    if shape == "missing" and values:
        values.pop(next(iter(values)))
    if shape == "extra":
        values[draw(_KEYS)] = draw(_VALUES)
    text = json.dumps(values, **layout)
    if shape == "twice" and values:
        key = next(iter(values))
        text = text[:-1] + ("," if len(values) else "") + json.dumps(key) + ":1}"
    return text.encode("utf-8")


def _reference(bodies: list[bytes | None]) -> tuple[pl.DataFrame, list[str | None]]:
    parsed = [python_body(b) for b in bodies]
    dicts = [p.fields or {} for p in parsed]
    keys = list(dict.fromkeys(k for d in dicts for k in d))
    columns = [field_column(FIELD + k, [d.get(k) for d in dicts]) for k in keys]
    return pl.DataFrame(columns), [p.raw for p in parsed]


@settings(max_examples=120, deadline=None)
@given(st.dictionaries(_KEYS, _SCALARS, min_size=1, max_size=5).flatmap(
    lambda template: st.lists(_body(template), min_size=1, max_size=25)
))  # fmt: skip
def test_bodies_read_as_python_reads_each(bodies: list[bytes | None]) -> None:
    found = read_bodies(pl.Series(bodies, dtype=pl.Binary))
    fields, raw = _reference(bodies)
    assert_frame_equal(found.fields, fields)
    assert_series_equal(found.raw, pl.Series("Body", raw, dtype=pl.String))
    assert found.without_json == sum(python_body(b).fields is None for b in bodies)
    assert found.repeated == sum(python_body(b).repeated for b in bodies)


def test_pretty_printed_bodies_are_read_without_python() -> None:
    """A body written with spaces or indented reads through the template (no fallback)."""
    bodies = [
        json.dumps(
            {"deviceId": f"dev-{i}", "t": i * 0.5, "n": i, "ok": i % 2 == 0}, indent=2
        ).encode()
        for i in range(50)
    ]
    found = read_bodies(pl.Series(bodies, dtype=pl.Binary))
    fields, _ = _reference(bodies)
    assert_frame_equal(found.fields, fields)
    assert found.kinds == {"deviceId": ("str",), "t": ("float",), "n": ("int",), "ok": ("bool",)}
