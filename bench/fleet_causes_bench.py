"""Benchmark what issue 39 adds to ``explain --events`` on the production-shaped fleet: the
sender rule (``diagnostics.whatif.senders.choose_senders``), the fleet's sender groups
(``diagnostics.explain.sender_groups``) and the whole capture evidence they are part of
(``diagnostics.explain.capture.from_capture``, the engine replay included), against the
replay alone. Wall and CPU time per step; results go to ``bench/results/fleet_causes.json``
and a Markdown table is printed for ``docs/performance.md``.

    .venv/bin/python bench/fleet_causes_bench.py --events 200000
    .venv/bin/python bench/fleet_causes_bench.py --capture /tmp/fleet-2m/capture

Without ``--capture`` a fleet of ``--events`` readings is generated (``orderdoc generate
fleet``) into ``bench/data/fleet-N`` (git-ignored) and read once.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from diagnostics.captures.reader import read_capture  # noqa: E402
from diagnostics.durations import SECOND  # noqa: E402
from diagnostics.engine.policy import OrderingPolicy  # noqa: E402
from diagnostics.engine.replay import replay  # noqa: E402
from diagnostics.explain.capture import Replayed, from_capture  # noqa: E402
from diagnostics.explain.sender_groups import sender_groups  # noqa: E402
from diagnostics.generate.fleet import FleetConfig  # noqa: E402
from diagnostics.generate.fleet_files import write_fleet  # noqa: E402
from diagnostics.whatif.senders import choose_senders, lateness_seconds  # noqa: E402

RESULTS = HERE / "results" / "fleet_causes.json"
#: The fleet job's policy (job.arm.json).
POLICY = OrderingPolicy(
    timestamp_by="eventTime", late_arrival_ns=10 * SECOND, out_of_order_ns=3 * SECOND
)


def timed(step: str, rows: list[dict[str, Any]], work: Callable[[], Any]) -> Any:
    wall, cpu = time.perf_counter(), time.process_time()
    value = work()
    rows.append(
        {
            "step": step,
            "wall_s": round(time.perf_counter() - wall, 3),
            "cpu_s": round(time.process_time() - cpu, 3),
        }
    )
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--capture", type=Path, default=None)
    args = parser.parse_args()
    capture_dir = args.capture
    if capture_dir is None:
        folder = HERE / "data" / f"fleet-{args.events}"
        if not (folder / "capture").is_dir():
            write_fleet(folder, FleetConfig(events=args.events))
        capture_dir = folder / "capture"
    rows: list[dict[str, Any]] = []
    cap = timed("read the capture", rows, lambda: read_capture(capture_dir))
    events, columns = cap.events, cap.columns
    parts = tuple(range(8))
    result = timed(
        "engine replay",
        rows,
        lambda: replay(events, POLICY, columns=columns, partitions=parts),
    )
    out = result.outcomes
    lateness = lateness_seconds(out["arrival"], out["application_time"])
    exclude = {POLICY.timestamp_by or "", columns.arrival, columns.partition or ""}
    exclude |= {c for c in out.columns if c not in events.columns}
    choice = timed(
        "sender rule (choose_senders)",
        rows,
        lambda: choose_senders(events, lateness, exclude, out["partition"]),
    )
    groups = timed(
        "sender groups (sender_groups)",
        rows,
        lambda: sender_groups(out, choice.column, lateness, exclude),
    )
    replayed = Replayed.of(result)
    timed(
        "capture evidence, replay given (from_capture)",
        rows,
        lambda: from_capture(events, POLICY, columns=columns, partitions=parts, replayed=replayed),
    )
    summary = {
        "events": events.height,
        "sender_column": choice.column,
        "groups": [{"kind": g.kind.value, "senders": len(g.senders)} for g in groups],
        "steps": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"{events.height:,} events; sender column {choice.column}; groups: "
          + ", ".join(f"{g.kind.value} ({len(g.senders)})" for g in groups))  # fmt: skip
    print("| step | wall | CPU |")
    print("|---|---:|---:|")
    for r in rows:
        print(f"| {r['step']} | {r['wall_s']:.2f} s | {r['cpu_s']:.2f} s |")


if __name__ == "__main__":
    main()
