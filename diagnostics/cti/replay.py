"""Whole-capture CTI replay: one input, or two feeding a join or union, through the engine.

A driver around :class:`~diagnostics.cti.engine.CtiEngine`: it reads times and shapes, puts
items in processing order, feeds them in batches (the result does not depend on the batch
size) and assembles the outcome frames, the CTI table and the violation records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from diagnostics.captures.names import Rename, rename_taken, renamed
from diagnostics.cti.engine import CtiEngine
from diagnostics.cti.events import CtiRecord, CtiViolation
from diagnostics.cti.frames import (
    CTI_OUTCOME_COLUMNS,
    CtiColumns,
    cti_frame,
    outcome_frame,
    prepare,
    processing_order,
    read_imported,
)
from diagnostics.cti.policy import CtiPolicy, HoppingWindow, Operator
from diagnostics.errors import Setting, UsageError


@dataclass(frozen=True, slots=True)
class CtiReplayResult:
    """``outcomes``: one frame per input (input order); ``ctis``: every CTI issued (as a
    frame, and as ``cti_records``); ``violations``: in processing order; ``renames``: per
    input, its columns renamed because a CTI outcome column has their name."""

    outcomes: tuple[pl.DataFrame, ...]
    ctis: pl.DataFrame
    violations: tuple[CtiViolation, ...]
    policy: CtiPolicy
    cti_records: tuple[CtiRecord, ...] = ()
    renames: tuple[tuple[Rename, ...], ...] = ()


def _renamed_columns(columns: CtiColumns, renames: Sequence[Rename]) -> CtiColumns:
    def name(column: str | None) -> str | None:
        return None if column is None else renamed(column, renames)

    return CtiColumns(
        start=renamed(columns.start, renames),
        end=name(columns.end),
        edge=name(columns.edge),
        arrival=name(columns.arrival),
    )


def replay_cti(
    inputs: Sequence[pl.DataFrame],
    policy: CtiPolicy,
    columns: CtiColumns,
    *,
    operator: Operator | None = None,
    window: HoppingWindow | None = None,
    imported: pl.DataFrame | None = None,
    import_other: bool = False,
    labels: Sequence[str] | None = None,
    batch_size: int = 100_000,
) -> CtiReplayResult:
    """Replay ``inputs`` (one, or two with ``operator``) under ``policy``.

    ``imported``: another stream's CTIs (a CTI table) for the first input; ``import_other``:
    the first input imports the second input's CTIs instead. Either needs an importing
    policy. Both inputs use the same columns; the second input generates its own CTIs.
    An input column named like a CTI outcome column is kept as ``input_<name>`` (the rule
    of every replay, :func:`diagnostics.captures.names.rename_taken`); ``columns`` name the
    input columns as the input does.
    """
    names = list(labels) if labels is not None else [f"input {i}" for i in range(len(inputs))]
    if (imported is not None or import_other) and not policy.imports:
        msg = "imported CTIs were given but the CTI policy does not import CTIs"
        raise UsageError(msg, Setting.CTI_IMPORT)
    if import_other and len(inputs) != 2:
        msg = "CTIs imported from the other input: only a join or a union has another input"
        raise UsageError(msg, Setting.CTI_IMPORT)
    renamed_inputs = [rename_taken(frame, CTI_OUTCOME_COLUMNS) for frame in inputs]
    renames = tuple(r for _, r in renamed_inputs)
    shapes = [_renamed_columns(columns, r) for r in renames]
    prepared = [
        prepare(frame, shapes[i], i, names[i]) for i, (frame, _) in enumerate(renamed_inputs)
    ]
    items_imported = (
        read_imported(imported, 0, Setting.CTI_IMPORT.value) if imported is not None else ()
    )
    # Only the first input imports; a second input generates its own CTIs.
    policies = [policy]
    if len(inputs) == 2:
        own = policy
        if policy.imports and not policy.generates:
            msg = "the second input of a join/union needs its own CTI frequency"
            raise UsageError(msg, Setting.CTI_EVERY)
        if policy.imports:
            own = CtiPolicy(
                every_events=policy.every_events,
                every_ns=policy.every_ns,
                delay_ns=policy.delay_ns,
                violation=policy.violation,
                flush_at_infinity=policy.flush_at_infinity,
            )
        policies.append(own)
    engine = CtiEngine(policies, operator, window, import_from_other=import_other)
    items = processing_order(prepared, items_imported)
    step = max(1, batch_size)
    for begin in range(0, len(items), step):
        engine.feed(items[begin : begin + step])
    # the query shuts down at the last arrival of any row (invalid rows included)
    lasts = [p.last_arrival_ns for p in prepared if p.last_arrival_ns is not None]
    engine.close(max(lasts) if lasts else None)
    outcomes = engine.outcomes()
    frames = tuple(
        outcome_frame(p, [o for o in outcomes if o.stream == i], shapes[i])
        for i, p in enumerate(prepared)
    )
    records = tuple(engine.ctis())
    violations = tuple(engine.violations())
    return CtiReplayResult(frames, cti_frame(records), violations, policy, records, renames)
