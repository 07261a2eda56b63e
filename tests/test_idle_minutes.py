"""diagnostics.idle_minutes: the union of a partition's idle episodes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from diagnostics.idle_minutes import idle_minutes

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def at(minute: float) -> datetime:
    return T0 + timedelta(minutes=minute)


def test_overlapping_episodes_count_once() -> None:
    # sample_logs/asa-real: 17:07-17:19 and 17:09:16-17:24:16 on partition 3 cover 17 minutes
    episodes = [(3, at(7), at(19)), (3, at(9 + 16 / 60), at(24 + 16 / 60)), (1, at(0), at(5))]
    covered = idle_minutes(episodes)
    assert covered[3] == 17 + 16 / 60
    assert covered[1] == 5
    assert idle_minutes([(0, at(0), at(2)), (0, at(5), at(6))]) == {0: 3}
    assert idle_minutes([(0, None, at(2)), (0, at(3), None)]) == {}


spans = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 600), st.integers(0, 120)), max_size=12
)


@given(spans)
def test_minutes_lie_between_the_longest_episode_and_the_whole_span(raw) -> None:  # type: ignore[no-untyped-def]
    episodes = [(p, at(s), at(s + d)) for p, s, d in raw]
    covered = idle_minutes(episodes)
    assert set(covered) == {p for p, _, _ in raw}
    for partition, minutes in covered.items():
        mine = [(s, s + d) for p, s, d in raw if p == partition]
        longest = max(e - s for s, e in mine)
        span = max(e for _, e in mine) - min(s for s, _ in mine)
        assert longest - 1e-9 <= minutes <= span + 1e-9
        assert minutes <= sum(e - s for s, e in mine) + 1e-9
    assert idle_minutes(reversed(episodes)) == covered  # order does not matter
