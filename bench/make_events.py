"""Generate a realistic event capture for the replay benchmark (Parquet, native timestamps).

N events over P partitions: arrivals at a steady rate per partition; application time =
arrival − a lognormal network/batching delay (median ~0.8 s), with a few late outliers
(minutes late) and a few early ones (device clocks ahead by more than 5 minutes), plus rare
long stragglers (about 10 minutes late) and rare early events (about 7 minutes early).
Two device columns: ``device_id`` (5,000 devices) and ``device_key``, a high-cardinality
string key (up to 1,000,000 distinct values, e.g. ``dev-0012345``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

S = 1_000_000_000
BASE = 1_767_225_600 * S  # 2026-01-01T00:00:00Z


def make(n: int, partitions: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    per_second = 2_000
    arrival = BASE + np.sort(rng.integers(0, n // per_second * S, n, dtype=np.int64))
    part = rng.integers(0, partitions, n, dtype=np.int64)
    delay = (rng.lognormal(mean=-0.2, sigma=0.8, size=n) * S).astype(np.int64)
    outliers = rng.random(n)
    delay = np.where(outliers < 0.002, rng.integers(10, 900, n) * S, delay)  # late outliers
    delay = np.where(outliers > 0.9995, -rng.integers(301, 900, n) * S, delay)  # early outliers
    rare = rng.random(n)
    straggler = rng.integers(590, 611, n) * S  # rare long stragglers, ~10 minutes late
    delay = np.where(rare < 0.0002, straggler, delay)
    early = -rng.integers(415, 426, n) * S  # rare early events, ~7 minutes ahead
    delay = np.where(rare > 0.9998, early, delay)
    device = rng.integers(0, 5_000, n, dtype=np.int64)
    key = rng.integers(0, min(max(n // 10, 1), 1_000_000), n, dtype=np.int64)
    frame = pl.DataFrame(
        {
            "device_id": device,
            "device_key": pl.Series(key).cast(pl.String).str.zfill(7).str.replace(r"^", "dev-"),
            "partition_id": part,
            "event_time": arrival - delay,
            "arrival_time": arrival,
            "value": rng.normal(20, 5, n),
        }
    )
    return frame.with_columns(
        pl.col("event_time", "arrival_time").cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("bench/data/events_10m.parquet"))
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    make(args.events, args.partitions, args.seed).write_parquet(args.out)
    print(f"wrote {args.events:,} events to {args.out}")


if __name__ == "__main__":
    main()
