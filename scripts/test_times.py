"""Sums up a test-times file (tests/timing.py): per worker, per folder, per file, slowest tests.

    ORDERDOC_TEST_TIMES=out/times.jsonl make test-all
    .venv/bin/python scripts/test_times.py out/times.jsonl [--top 30]

The per-worker wall totals show the critical path (the run ends with its longest worker);
CPU totals compare runs on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def totals(rows: list[dict], key: str) -> list[tuple[str, int, float, float]]:
    """(group, tests, wall, cpu) per group, longest wall first."""
    groups: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for row in rows:
        group = groups[row[key]]
        group[0] += 1
        group[1] += row["wall"]
        group[2] += row["cpu"]
    return sorted(
        ((name, int(n), wall, cpu) for name, (n, wall, cpu) in groups.items()),
        key=lambda g: -g[2],
    )


def table(title: str, groups: list[tuple[str, int, float, float]], limit: int | None) -> str:
    lines = [f"{title}", f"{'wall s':>8} {'cpu s':>8} {'tests':>6}  name"]
    for name, n, wall, cpu in groups[:limit]:
        lines.append(f"{wall:8.1f} {cpu:8.1f} {n:6d}  {name}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("times", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    try:
        rows = load(args.times)
    except (OSError, ValueError) as exc:
        print(f"error: {args.times}: {exc}", file=sys.stderr)
        return 2
    for row in rows:
        path = row["test"].split("::", 1)[0]
        row["file"] = path
        row["folder"] = path.rsplit("/", 1)[0] if "/" in path else path
    wall = sum(r["wall"] for r in rows)
    cpu = sum(r["cpu"] for r in rows)
    print(f"{len(rows)} tests, {wall:.0f} s wall summed over workers, {cpu:.0f} s CPU\n")
    print(table("per worker (the longest is the critical path)", totals(rows, "worker"), None))
    print()
    print(table("per folder", totals(rows, "folder"), None))
    print()
    print(table(f"the {args.top} slowest files", totals(rows, "file"), args.top))
    print()
    slowest = sorted(rows, key=lambda r: -r["wall"])[: args.top]
    print(
        table(
            f"the {args.top} slowest tests",
            [(r["test"], 1, r["wall"], r["cpu"]) for r in slowest],
            None,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
