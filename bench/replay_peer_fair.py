"""The fair DuckDB peer: ASA's per-event classification as one lean query.

    python bench/replay_peer_fair.py EVENTS.parquet OUT.parquet [LATE_S] [OOO_S] [THREADS]

It reads the capture as it is (timestamp columns are native timestamps: no casts), orders each
partition by arrival time and the file's own row number (``file_row_number``, DuckDB's
stable input index; no ``row_number()`` over the whole input), and writes every input column
plus ``late``, ``early``, ``out_of_order`` and ``system_timestamp`` to Parquet. (DuckDB 2.0
has no arithmetic on nanosecond timestamps: the query compares their ``epoch_ns`` integers, the
cheapest view of the stored values, and writes System.Timestamp as a nanosecond timestamp.)

The classification follows the per-event rules of docs/semantics.md with Adjust: early events
(more than 5 minutes ahead of arrival) are dropped (no System.Timestamp) and never move M;
late events are adjusted to arrival − late; M is the largest System.Timestamp accepted so far
on the partition. Because an out-of-order adjustment never raises M, M is the running maximum
of the late-adjusted times of the earlier non-early events: one window function gives it
exactly. It does *not* compute watermarks, release times, output order or diagnostics —
orderdoc does all of that on top; this is the lower bound a lean SQL engine sets.
"""

from __future__ import annotations

import sys

import duckdb

NS = 1_000_000_000


def query(events: str, late_s: int, ooo_s: int) -> str:
    """The classification query over the Parquet file ``events``."""
    ooo_s = min(ooo_s, late_s)  # late adjustment runs first: the effective tolerance
    late_ns, ooo_ns, early_ns = late_s * NS, ooo_s * NS, 300 * NS
    return f"""
        WITH c AS (
          SELECT *, epoch_ns(event_time) AS e, epoch_ns(arrival_time) AS a
          FROM read_parquet('{events}', file_row_number = true)
        ), d AS (
          SELECT *, e > a + {early_ns} AS early, greatest(e, a - {late_ns}) AS t FROM c
        ), m AS (
          SELECT *,
            max(CASE WHEN NOT early THEN t END) OVER (
              PARTITION BY partition_id ORDER BY arrival_time, file_row_number
              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) - {ooo_ns} AS floor
          FROM d
        )
        SELECT * EXCLUDE (file_row_number, e, a, t, floor, early),
          NOT early AND e < a - {late_ns} AS late,
          early,
          coalesce(NOT early AND t < floor, false) AS out_of_order,
          CASE WHEN NOT early THEN make_timestamp_ns(greatest(t, coalesce(floor, t)))
          END AS system_timestamp
        FROM m
    """


def main(events: str, out: str, late_s: int = 5, ooo_s: int = 0, threads: int = 2) -> None:
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.execute(f"COPY ({query(events, late_s, ooo_s)}) TO '{out}' (FORMAT parquet)")


if __name__ == "__main__":
    main(*sys.argv[1:3], *(int(x) for x in sys.argv[3:6]))
