"""The sweep table as text for the terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from diagnostics.whatif.sweep import SweepResult

if TYPE_CHECKING:
    from diagnostics.whatif.recommend import Recommendation


def _num(value: float | None, digits: int = 2) -> str:
    return "never" if value is None else f"{value:.{digits}f}"


def format_table(result: SweepResult) -> str:
    """One line per setting (``*`` recommended, ``P`` on the Pareto front) and the rule."""
    weighed = "windows_changed" in result.table.columns
    head = (
        f"{'':2} {'late':>10} {'ooo':>7} {'PART BY':>7} {'OVER':>12} {'adjusted%':>10} "
        f"{'dropped%':>9} {'p50 s':>8} {'p95 s':>8} {'max s':>8}"
    ) + (f" {'windows changed':>15} {'off >5%':>8} {'p95 error%':>10}" if weighed else "")
    lines = [f"what-if: {result.table.height} settings on {result.policy.describe()}", head]
    for row in result.table.iter_rows(named=True):
        mark = ("*" if row["recommended"] else " ") + ("P" if row["pareto"] else " ")
        late = "unlimited" if row["late_arrival_s"] is None else f"{row['late_arrival_s']:g}s"
        lines.append(
            f"{mark} {late:>10} {row['out_of_order_s']:>6g}s {('on' if row['partition_by'] else 'off'):>7} "
            f"{row['over'] or '-':>12} {row['pct_adjusted']:>10.3f} {row['pct_dropped']:>9.3f} "
            f"{_num(row['delay_p50_s']):>8} {_num(row['delay_p95_s']):>8} {_num(row['delay_max_s']):>8}"
            + (
                f" {row['windows_changed']:>15} {row['windows_off']:>8} "
                f"{100 * row['p95_relative_error']:>10.1f}"
                if weighed
                else ""
            )
        )
    lines.append(f"rule: {result.rule}")
    line = recommendation(result)
    if line is not None:
        lines.append(line)
    lines += [f"skipped: {s}" for s in result.skipped[:5]]
    if len(result.skipped) > 5:
        lines.append(f"skipped: ... and {len(result.skipped) - 5} more")
    return "\n".join(lines)


def recommendation(result: SweepResult) -> str | None:
    """``recommended: late 5s, out-of-order 0s[, PARTITION BY ...][, ... OVER key]``."""
    best = result.recommended
    if best is None:
        return None
    late = "unlimited" if best["late_arrival_s"] is None else f"{best['late_arrival_s']:g}s"
    weighed = (
        f" (windows changed {best['windows_changed']}; interior windows off by more than 5 %: "
        f"{best['windows_off']}, p95 relative error {100 * best['p95_relative_error']:.1f}%)"
        if best.get("windows_changed") is not None
        else ""
    )
    return (
        f"recommended: late {late}, out-of-order {best['out_of_order_s']:g}s"
        + (", PARTITION BY PartitionId" if best["partition_by"] else "")
        + (f", TIMESTAMP BY ... OVER {best['over']}" if best["over"] else "")
        + (f", {best['action']}" if best.get("action") == "drop" else "")
        + weighed
    )


def _listed(values: tuple[int, ...], most: int = 12) -> str:
    shown = [f"{v}s" for v in values[:most]]
    return ",".join(shown) + (f",... ({len(values)} values)" if len(values) > most else "")


def searched_grid(rec: Recommendation) -> str:
    """The grid the recommender searched, as flags that would measure it again."""
    keys = ", ".join(rec.keys) or "none found"
    late = _listed(rec.late_values_s)
    if rec.table["late_arrival_s"].null_count():  # measured unlimited: say it, as a flag
        late = f"{late},unlimited" if late else "unlimited"
    from diagnostics.whatif.choices import unsaveable_note

    lines = [
        f"searched: {rec.table.height} settings from the capture's own lateness and disorder "
        f"(sender columns tried with OVER: {keys}); late tolerances --late-arrival "
        f"{late}, out-of-order --out-of-order {_listed(rec.ooo_values_s)}"
    ]
    if rec.senders is not None:
        lines.append(f"sender column: {rec.senders.column or 'none'} ({rec.senders.reason})")
    lost = unsaveable_note(rec)
    if lost:
        lines.append(f"not in the budget: {lost}")
    return "\n".join(lines)
