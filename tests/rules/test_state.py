"""The run-based state machine agrees with a step-by-step Prometheus-style reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.rules.model import AlertState
from diagnostics.rules.state import Episode, Run, episodes


def reference(cond: list[bool], for_: int, keep: int) -> list[Episode]:
    """Evaluate at every instant 0..len-1 as Prometheus' alerting rule does."""
    out: list[Episode] = []
    state: AlertState | None = None
    active = fired = 0
    keep_since: int | None = None
    for t, holds in enumerate(cond):
        if holds:
            keep_since = None
            if state is None:
                state, active = AlertState.PENDING, t
            if state is AlertState.PENDING and t - active >= for_:
                state, fired = AlertState.FIRING, t
        elif state is AlertState.PENDING:
            state = None
        elif state is AlertState.FIRING:
            keep_since = t if keep_since is None else keep_since
            if t - keep_since >= keep:
                out.append(Episode(AlertState.RESOLVED, active, fired, t, None))
                state = None
    if state is AlertState.PENDING:
        out.append(Episode(state, active, active, None, None))
    elif state is AlertState.FIRING:
        out.append(Episode(state, active, fired, None, None))
    return out


def runs_of(cond: list[bool]) -> list[Run]:
    runs: list[Run] = []
    start: int | None = None
    for t, holds in enumerate(cond):
        if holds and start is None:
            start = t
        elif not holds and start is not None:
            runs.append(Run(start, t, None))
            start = None
    if start is not None:
        runs.append(Run(start, None, None))
    return runs


@settings(max_examples=400, deadline=None)
@given(
    cond=st.lists(st.booleans(), min_size=1, max_size=60),
    for_=st.integers(0, 8),
    keep=st.integers(0, 8),
)
def test_runs_state_machine_matches_stepwise_reference(
    cond: list[bool], for_: int, keep: int
) -> None:
    got = episodes(runs_of(cond), for_ns=for_, keep_ns=keep, now=len(cond) - 1)
    assert got == reference(cond, for_, keep)


def test_pending_run_that_clears_is_forgotten() -> None:
    runs = [Run(0, 3, 1.0)]
    assert episodes(runs, for_ns=5, keep_ns=0, now=10) == []


def test_keep_firing_for_bridges_a_gap_and_resolves_after_it() -> None:
    runs = [Run(0, 4, 1.0), Run(6, 8, 2.0)]
    assert episodes(runs, for_ns=1, keep_ns=3, now=20) == [
        Episode(AlertState.RESOLVED, 0, 1, 11, 2.0)
    ]
    # without the grace the second run needs its own `for`
    assert episodes(runs, for_ns=1, keep_ns=0, now=20) == [
        Episode(AlertState.RESOLVED, 0, 1, 4, 1.0),
        Episode(AlertState.RESOLVED, 6, 7, 8, 2.0),
    ]


def test_firing_while_grace_still_running_at_now() -> None:
    assert episodes([Run(0, 4, 1.0)], for_ns=0, keep_ns=10, now=6) == [
        Episode(AlertState.FIRING, 0, 0, None, 1.0)
    ]
