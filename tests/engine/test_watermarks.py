"""Per-minute watermark delay against a brute-force evaluation of its definition (docs/semantics.md, "Watermarks, merge and output release")."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.engine.watermarks import watermark_delay_per_minute

S = 1_000_000_000
MIN = 60 * S
BASE = 1_704_067_200 * S
FIVE = 5 * S


def brute_force(out: pl.DataFrame, late, ooo, partitions, over):
    """max over τ in each minute of τ − wm(τ), sampling every second and just before arrivals."""
    acc = out.filter(~pl.col("dropped"))
    a = acc["arrival"].dt.epoch("ns").to_list()
    t = acc["system_timestamp"].dt.epoch("ns").to_list()
    p = acc["partition"].to_list()
    k = acc["timeline"].to_list()
    all_arr = out["arrival"].dt.epoch("ns").to_list()
    tau0, tau_end = min(all_arr), max(all_arr)

    def wm(part, tau, inclusive):
        seen = [
            (tl, ts)
            for ai, ts, pi, tl in zip(a, t, p, k, strict=True)
            if pi == part and (ai <= tau if inclusive else ai < tau)
        ]
        if not seen:
            return None if late is None else tau - FIVE - late
        per_tl: dict = {}
        for tl, ts in seen:
            per_tl[tl] = max(per_tl.get(tl, ts), ts)
        m = min(per_tl.values()) if over else max(per_tl.values())
        return m - ooo if late is None else max(m - ooo, tau - late)

    samples = set(range(tau0, tau_end + 1, S)) | {tau_end}
    ends = {e for e in range(tau0 // MIN * MIN + MIN, tau_end + 1, MIN) if e > tau0}
    # left limits just before arrivals and minute ends (the supremum within the minute)
    points = [(x, True) for x in samples] + [(x, False) for x in (set(all_arr) | ends) if x > tau0]
    result: dict = {}
    for tau, inclusive in points:
        minute = (tau if inclusive else tau - 1) // MIN * MIN
        for part in partitions:
            w = wm(part, tau, inclusive)
            d = tau - tau0 if w is None else tau - w
            for key in (part, None):
                result[(minute, key)] = max(result.get((minute, key), d), d)
    return result


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(-20, 10), st.integers(0, 150), st.integers(0, 1), st.sampled_from("ab")
        ),
        min_size=1,
        max_size=12,
    ),
    late=st.sampled_from([0, 3, 20, None]),
    ooo=st.sampled_from([0, 2, 10]),
    over=st.booleans(),
)
def test_delay_matches_definition(rows, late, ooo, over):
    frame = pl.DataFrame(
        {
            "ts": [BASE + (a + d) * S for d, a, _, _ in rows],
            "arrival_time": [BASE + a * S for _, a, _, _ in rows],
            "partition_id": [p for *_, p, _ in rows],
            "device": [k for *_, k in rows],
        }
    ).with_columns(pl.col("ts", "arrival_time").cast(pl.Datetime("ns")).dt.replace_time_zone("UTC"))
    policy = OrderingPolicy(
        timestamp_by="ts",
        late_arrival_ns=None if late is None else late * S,
        out_of_order_ns=ooo * S,
        partition_by=over,
        over=("device",) if over else (),
    )
    result = replay(frame, policy, partitions=(0, 1, 2))
    table = watermark_delay_per_minute(result)
    got = {
        (row["time"], row["partition_id"]): round(row["OutputWatermarkDelaySeconds"] * S)
        for row in table.with_columns(pl.col("time").dt.epoch("ns")).iter_rows(named=True)
    }
    expected = brute_force(
        result.outcomes,
        policy.effective_late_ns,
        policy.effective_ooo_ns,
        (0, 1, 2),
        over,
    )
    assert got == expected
