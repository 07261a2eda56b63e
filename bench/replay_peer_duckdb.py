"""The DuckDB peer: classify late / early / out-of-order events with one window function.

It does only the classification (no System.Timestamp adjustment, no watermarks, no release
times), reading the same Parquet capture and writing its result to Parquet, as orderdoc does.
"""

from __future__ import annotations

import sys

import duckdb


def main(events: str, out: str, late_s: int = 5, ooo_s: int = 0) -> None:
    duckdb.sql(
        f"""
        COPY (
          SELECT *,
            arrival_time::TIMESTAMPTZ - INTERVAL {late_s} SECOND > event_time::TIMESTAMPTZ AS late,
            event_time::TIMESTAMPTZ - arrival_time::TIMESTAMPTZ > INTERVAL 5 MINUTE AS early,
            event_time::TIMESTAMPTZ < max(event_time::TIMESTAMPTZ) OVER (
              PARTITION BY partition_id ORDER BY arrival_time, rid
              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) - INTERVAL {ooo_s} SECOND AS out_of_order
          FROM (SELECT row_number() OVER () AS rid, * FROM read_parquet('{events}'))
        ) TO '{out}' (FORMAT parquet)
        """
    )


if __name__ == "__main__":
    main(*sys.argv[1:3], *(int(x) for x in sys.argv[3:5]))
