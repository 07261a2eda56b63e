"""The replays of one capture, each made once for the rest of a command or an app session.

``explain --events --write-fix`` replays the capture under the job's policy (the findings),
searches the best setting (the recommendation), then plans the fix: the job as it is, the
recommended setting, each step between them and the written definition, and the query's
windows under both. Many of those are the same replay or the same measured setting. A
:class:`Replays` holds them for one capture (its events, columns and partitions):

- :meth:`Replays.apply`: the events with the columns a policy names (a Capture's deferred
  columns are read from its cache once per set of names, not once per replay);
- :meth:`Replays.result`: the engine's replay under a policy, the last few kept (the first
  one, the job's own policy, for the whole command), the TIMESTAMP BY text parsed once for
  all of them;
- :meth:`Replays.flags`: the few outcome columns a fix's measurement reads, from one run of
  the engine on the capture parsed and sorted once (no outcome frame, no output order);
- :meth:`Replays.once`: any small value worked out from them (a fix's before/after counts,
  the query's windows compared), by a key naming what it is and the policy;
- :attr:`Replays.search`: the recommender's measured settings
  (:class:`SearchStore`), so a second search of the same capture measures only settings
  the first did not.

Every value is what the engine gives when asked again: nothing here changes a number, it
only avoids working the same one out twice.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import ReplayResult, replay
from diagnostics.timestamps import to_utc

if TYPE_CHECKING:
    from diagnostics.captures.reader import Capture
    from diagnostics.whatif.evaluate import Measures, Prepared

T = TypeVar("T")
#: The columns a policy names: TIMESTAMP BY and the OVER keys.
_Names = tuple[str | None, tuple[str, ...]]

#: The outcome columns a fix's measurement reads (:meth:`Replays.flags`).
FLAGS = ("late", "early", "out_of_order", "dropped", "arrival", "release_time")
#: Replays kept besides the first: a fix measures the job as it is, the recommended setting
#: and each step between, each with PARTITION BY beside (the events held back by another
#: partition), then compares the query's windows under the recommended one. Each holds the
#: engine's columns for every event (the input columns are shared with the capture's).
KEEP = 4
#: A fix's measurements kept at least (:meth:`Replays.flags`: five columns per event, about
#: 33 MB each at 2M events): the settings its search measured beside the job's (the steps
#: toward the recommended setting) are read again by its steps.
FLAGS_KEPT = 4


@dataclass
class SearchStore:
    """The recommender's work on one capture: each setting's numbers, and the search's own
    small results (the sender columns, the tolerances its guide lists), for the ``columns``
    and ``partitions`` they were made with, and the capture parsed and sorted once (four
    columns per event: a later search parses no time again). The frames with OVER columns
    are not kept: a later search adds those it needs again."""

    columns: EventColumns
    partitions: tuple[int, ...] | None
    measures: dict[OrderingPolicy, Measures] = field(default_factory=dict)
    #: the search's own small results (the sender columns, the guide's lists)
    values: dict[Hashable, object] = field(default_factory=dict)
    #: a frame's TIMESTAMP BY column read as the engine reads it, when the holder of the
    #: replays has it (:meth:`Replays.parsed`); ``None``: read by ``prepare``
    parse: Callable[[pl.DataFrame, str], pl.Series] | None = field(default=None, compare=False)

    def parsed(self, frame: pl.DataFrame, ts: str) -> pl.Series | None:
        """``frame``'s TIMESTAMP BY text read as the engine reads it, when already known or
        worth keeping (``None``: :func:`~diagnostics.whatif.evaluate.prepare` reads it)."""
        if self.parse is None or ts not in frame.columns or frame[ts].dtype != pl.String:
            return None
        return self.parse(frame, ts)

    def fits(self, columns: EventColumns, partitions: Sequence[int] | None) -> bool:
        """Whether a search with these columns and partitions may use what is stored."""
        given = None if partitions is None else tuple(partitions)
        return self.columns == columns and self.partitions == given

    def once(self, key: Hashable, work: Callable[[], T]) -> T:
        """``work()``, worked out the first time ``key`` is asked for only."""
        if key not in self.values:
            self.values[key] = work()
        return self.values[key]  # type: ignore[return-value]


class Replays:
    """The replays of one capture (a :class:`~diagnostics.captures.reader.Capture` or a
    frame with ``columns``), made once; see the module's text."""

    def __init__(
        self,
        events: Capture | pl.DataFrame,
        *,
        columns: EventColumns | None = None,
        partitions: Sequence[int] | None = None,
        keep: int = KEEP,
        keep_first: bool = True,
    ) -> None:
        from diagnostics.captures.reader import Capture

        self.events = events
        self.columns = events.columns if isinstance(events, Capture) else columns or EventColumns()
        self.partitions = None if partitions is None else tuple(partitions)
        self.keep, self.keep_first = keep, keep_first
        self.search = SearchStore(self.columns, self.partitions, parse=self.parsed)
        self._frames: dict[_Names, tuple[pl.DataFrame, _Names]] = {}
        self._first: tuple[OrderingPolicy, ReplayResult] | None = None
        self._recent: OrderedDict[OrderingPolicy, ReplayResult] = OrderedDict()
        self._flags: OrderedDict[OrderingPolicy, pl.DataFrame] = OrderedDict()
        self._values: dict[Hashable, object] = {}
        #: each frame's TIMESTAMP BY text parsed (the frame kept beside: its id stays its own)
        self._times: dict[tuple[int, str], tuple[pl.DataFrame, pl.Series]] = {}

    def apply(
        self, policy: OrderingPolicy, *, named_by: str | None = None
    ) -> tuple[pl.DataFrame, OrderingPolicy]:
        """The events with the columns ``policy`` names, and ``policy`` naming them as the
        events do (a frame: as it is); see ``Capture.apply``."""
        from diagnostics.captures.reader import Capture

        if not isinstance(self.events, Capture):
            return self.events, policy
        names = (policy.timestamp_by, tuple(policy.over))
        if names not in self._frames:
            frame, mapped = self.events.apply(policy, named_by=named_by)
            as_named = (mapped.timestamp_by, tuple(mapped.over))
            self._frames[names] = self._frames[as_named] = (frame, as_named)
        frame, (timestamp_by, over) = self._frames[names]
        return frame, replace(policy, timestamp_by=timestamp_by, over=over)

    def result(self, policy: OrderingPolicy) -> ReplayResult:
        """The replay under ``policy`` (named as the events name columns: see :meth:`apply`),
        kept for later (the last :attr:`keep` besides the first)."""
        if self._first is not None and self._first[0] == policy:
            return self._first[1]
        if policy in self._recent:
            self._recent.move_to_end(policy)
            return self._recent[policy]
        frame, _ = self.apply(policy)
        ts = policy.timestamp_by
        if ts is None or ts not in frame.columns or frame[ts].dtype != pl.String:
            result = replay(frame, policy, columns=self.columns, partitions=self.partitions)
        else:
            # the time read once for every replay: the engine reads a parsed time as it is,
            # and the outcomes keep the text the capture has
            parsed = frame.with_columns(self.parsed(frame, ts))
            result = replay(parsed, policy, columns=self.columns, partitions=self.partitions)
            kept = frame[ts].alias(result.policy.timestamp_by or ts)
            result = replace(result, outcomes=result.outcomes.with_columns(kept))
        self.put(policy, result)
        return result

    def flags(self, policy: OrderingPolicy) -> pl.DataFrame:
        """The engine's :data:`FLAGS` of every event (input order) under ``policy`` (named
        as the events name columns): those of a kept replay, else of one run of the engine
        on the capture parsed and sorted once (the recommender's, kept in :attr:`search`),
        with no outcome file and no output order: the same values."""
        kept = self._kept(policy)
        frame, _ = self.apply(policy)
        ts = policy.timestamp_by
        if kept is not None or ts is None:
            return (kept or self.result(policy)).outcomes.select(FLAGS)
        if policy in self._flags:  # the last few kept (a step beside PARTITION BY, ...)
            self._flags.move_to_end(policy)
            return self._flags[policy]
        from diagnostics.whatif.evaluate import with_over

        return self._run_flags(with_over(self._prepared(frame, ts), frame, ts, policy.over), policy)

    def evaluate(self, prepared: Prepared, policies: Sequence[OrderingPolicy]) -> list[Measures]:
        """An :class:`~diagnostics.whatif.evaluate.Evaluator` for a search of this capture
        (``prepared`` from :attr:`search`'s): each policy's numbers from one engine run,
        whose :meth:`flags` are kept as well (the last few), so a fix that measures a
        setting its search measured runs the engine once for both."""
        from diagnostics.whatif.evaluate import Measures

        out = []
        for policy in policies:
            flags = self._flags.get(policy)
            if flags is None:
                flags = self._run_flags(prepared, policy)
            out.append(Measures.of_flags(flags))
        return out

    def _prepared(self, frame: pl.DataFrame, ts: str) -> Prepared:
        """The capture parsed and sorted once (the recommender's, kept in :attr:`search`)."""
        from diagnostics.whatif.evaluate import prepare

        return self.search.once(
            ("prepared", ts, frame.height),
            lambda: prepare(
                frame,
                ts,
                columns=self.columns,
                partitions=self.partitions,
                parsed=self.search.parsed(frame, ts),
            ),
        )

    def _run_flags(self, prepared: Prepared, policy: OrderingPolicy) -> pl.DataFrame:
        """:meth:`flags` from one engine run on ``prepared``, kept with the run's numbers
        (a later search measures no setting a fix measured)."""
        from diagnostics.whatif.evaluate import Measures, by_partition, each_unit, run

        row = self.columns.row

        def flags_of(unit: Prepared) -> pl.DataFrame:
            out, release = run(unit, policy)
            released = pl.Series("release_time", np.where(release >= 0, release, 0))
            released = released.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
            return out.select(FLAGS[:-1]).with_columns(
                released.set(pl.Series(release < 0), None), unit.frame[row]
            )

        # each partition on its own when the setting releases it so: the same flags
        units = by_partition(prepared) if policy.partition_by else None
        found = pl.concat(each_unit(units or [prepared], flags_of))
        order = np.argsort(found[row].to_numpy())  # back to input order
        found = self._flags[policy] = found.drop(row)[order]
        self.search.measures.setdefault(policy, Measures.of_flags(found))
        while len(self._flags) > max(self.keep, FLAGS_KEPT):
            self._flags.popitem(last=False)
        return found

    def _kept(self, policy: OrderingPolicy) -> ReplayResult | None:
        if self._first is not None and self._first[0] == policy:
            return self._first[1]
        return self._recent.get(policy)

    def parsed(self, frame: pl.DataFrame, ts: str) -> pl.Series:
        """``frame``'s TIMESTAMP BY text as the engine reads it, worked out once (or taken
        from a replay of the same frame made elsewhere: :meth:`put`)."""
        key = (id(frame), ts)
        if key not in self._times:
            self._times[key] = (frame, to_utc(frame[ts]))
        return self._times[key][1]

    def put(self, policy: OrderingPolicy, result: ReplayResult) -> None:
        """Keep a replay made elsewhere (the first one kept stays for the whole command).
        A replay of the events frame itself also gives its TIMESTAMP BY text as the engine
        read it (the outcomes' application time, event for event), so it is not read
        again, and its numbers as the recommender measures them (its flags: a search
        measures the job as it is without running the engine)."""
        self._times_of(policy, result.outcomes)
        self._measures_of(policy, result)
        if self._first is None and self.keep_first:
            self._first = (policy, result)
            return
        if self._first is not None and self._first[0] == policy:
            return
        self._recent[policy] = result
        self._recent.move_to_end(policy)
        while len(self._recent) > self.keep:
            self._recent.popitem(last=False)

    def _measures_of(self, policy: OrderingPolicy, result: ReplayResult) -> None:
        from diagnostics.whatif.evaluate import Measures

        outcomes = result.outcomes
        if (
            policy.timestamp_by is None
            or policy in self.search.measures
            or not set(FLAGS) <= set(outcomes.columns)
            or any(outcomes[c].dtype != pl.Datetime("ns", "UTC") for c in FLAGS[-2:])
            or result.columns != self.columns
            or (self.partitions is not None and tuple(result.partitions) != self.partitions)
        ):
            return
        self.search.measures[policy] = Measures.of_flags(result.outcomes.select(FLAGS))

    def _times_of(self, policy: OrderingPolicy, outcomes: pl.DataFrame) -> None:
        frame, ts = self.events, policy.timestamp_by
        if (
            not isinstance(frame, pl.DataFrame)
            or ts is None
            or ts not in frame.columns
            or frame[ts].dtype != pl.String
            or (id(frame), ts) in self._times
            or "application_time" not in outcomes.columns
            or outcomes.height != frame.height
            or outcomes["application_time"].dtype != pl.Datetime("ns", "UTC")
        ):
            return
        self._times[(id(frame), ts)] = (frame, outcomes["application_time"].alias(ts))

    def once(self, key: Hashable, work: Callable[[], T]) -> T:
        """``work()``, worked out the first time ``key`` is asked for only."""
        if key not in self._values:
            self._values[key] = work()
        return self._values[key]  # type: ignore[return-value]

    def forget(self) -> None:
        """Let the replays kept besides the first go (their counts, comparisons and the
        search's numbers stay): for a long-lived holder, the app, once a fix is measured."""
        self._recent.clear()
        self._flags.clear()
