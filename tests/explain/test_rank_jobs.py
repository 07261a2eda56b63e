"""Ranking findings of several jobs: every finding exactly once, and a consequence right after
its own job's finding (never another job's)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from diagnostics.explain.model import Cause, Finding
from diagnostics.explain.rank import rank
from diagnostics.kinds import Severity

JOBS = ("BILLING-AGG", "FLEET-TELEMETRY", None)
#: (cause, the cause it may follow)
CAUSES = (
    (Cause.LATE_ARRIVALS, None),
    (Cause.OUT_OF_ORDER, Cause.LATE_ARRIVALS),
    (Cause.HOT_PARTITION, None),
    (Cause.IDLE_PARTITION, Cause.HOT_PARTITION),
    (Cause.EARLY_ARRIVALS, None),
)


@st.composite
def findings(draw: st.DrawFn) -> list[Finding]:
    chosen = draw(
        st.lists(
            st.tuples(st.sampled_from(JOBS), st.sampled_from(range(len(CAUSES)))),
            unique=True,
            max_size=12,
        )
    )
    out = []
    for job, index in chosen:
        cause, follows = CAUSES[index]
        impact: dict[str, object] = {
            "events_affected": draw(st.integers(0, 10_000)),
            "delay_seconds": 0.0,
        }
        if follows is not None and draw(st.booleans()):
            impact["consequence_of"] = follows.value
        severity = draw(st.sampled_from(list(Severity)))
        out.append(Finding(cause, severity, f"{cause} of {job}", "", impact=impact, job=job))  # type: ignore[arg-type]
    return out


@given(findings())
def test_each_finding_once_and_after_its_own_jobs_root(found: list[Finding]) -> None:
    ranked = rank(found)
    assert sorted(map(id, ranked)) == sorted(map(id, found))
    present = {(f.job, f.cause.value) for f in found}
    for i, f in enumerate(ranked):
        root = f.impact.get("consequence_of")
        if (f.job, root) not in present:
            continue
        # right after its root, or after the other consequences of that root
        before = ranked[:i]
        j = max(k for k, g in enumerate(before) if (g.job, g.cause.value) == (f.job, root))
        assert all(
            g.impact.get("consequence_of") == root and g.job == f.job for g in before[j + 1 :]
        )


def test_two_jobs_late_and_out_of_order_are_four_findings() -> None:
    late = {"events_affected": 10, "delay_seconds": 0.0}
    ooo = {"events_affected": 9, "delay_seconds": 0.0, "consequence_of": "late_arrivals"}
    found = [
        Finding(Cause.LATE_ARRIVALS, Severity.CRITICAL, "late", "", impact=late, job=job)  # type: ignore[arg-type]
        for job in ("A", "B")
    ] + [
        Finding(Cause.OUT_OF_ORDER, Severity.CRITICAL, "ooo", "", impact=ooo, job=job)  # type: ignore[arg-type]
        for job in ("A", "B")
    ]
    ranked = rank(found)
    assert [(f.job, f.cause) for f in ranked] == [
        ("A", Cause.LATE_ARRIVALS),
        ("A", Cause.OUT_OF_ORDER),
        ("B", Cause.LATE_ARRIVALS),
        ("B", Cause.OUT_OF_ORDER),
    ]
