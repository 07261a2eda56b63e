"""Reading a batch: the typed columns the engine works on, with input errors that name the
column and row. No semantics here: only parsing and partition resolution."""

from __future__ import annotations

import numpy as np
import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError, Setting
from diagnostics.timestamps import ACCEPTED_FORMATS, to_utc


class BatchReader:
    """Turns an input batch into ``__arr`` (arrival ns), ``__pidx`` (partition index) and
    ``__app`` (application ns, null when missing or unparsable)."""

    def __init__(
        self, policy: OrderingPolicy, columns: EventColumns, partitions: tuple[int, ...]
    ) -> None:
        self.policy = policy
        self.columns = columns
        self.partitions = partitions
        self._index = {p: i for i, p in enumerate(partitions)}

    def row_of(self, batch: pl.DataFrame, i: int, first_id: int) -> str:
        """How an error message names row ``i`` of ``batch`` (input row when known)."""
        if self.columns.row in batch.columns:
            return f"row {int(batch[self.columns.row][i]) + 1}"
        return f"event {first_id + i + 1}"

    def input_columns(self, batch: pl.DataFrame) -> str:
        """``batch``'s columns as an error message lists them: the input's, not the
        replay's working columns."""
        working = (self.columns.row, self.columns.parsed_arrival)
        return ", ".join(c for c in batch.columns if c not in working)

    def read(self, batch: pl.DataFrame, first_id: int) -> pl.DataFrame:
        """The working columns of ``batch``; raises :class:`InputError` naming column and row."""
        cols = self.columns
        if cols.parsed_arrival in batch.columns:
            arrival = batch[cols.parsed_arrival]
        elif cols.arrival in batch.columns:
            arrival = to_utc(batch[cols.arrival])
        else:
            msg = (
                f"arrival column '{cols.arrival}' is missing (columns: {self.input_columns(batch)})"
            )
            raise InputError(msg)
        bad = arrival.is_null()
        if bad.any():
            i = int(bad.arg_true()[0])
            value = batch[cols.arrival][i] if cols.arrival in batch.columns else None
            row = self.row_of(batch, i, first_id)
            what = "is empty" if value is None else f"'{value}' is not a timestamp"
            msg = f"arrival column '{cols.arrival}', {row}: {what} (expected {ACCEPTED_FORMATS})"
            raise InputError(msg)
        work = pl.DataFrame({"__arr": arrival.dt.epoch("ns")})
        return work.with_columns(
            self._partition_index(batch, first_id), self._application_ns(batch)
        )

    def _partition_index(self, batch: pl.DataFrame, first_id: int) -> pl.Series:
        name = self.columns.partition
        if name is None or name not in batch.columns:
            if len(self.partitions) != 1:
                msg = f"partition column '{name}' is missing but {len(self.partitions)} partitions are declared"
                raise InputError(msg)
            return pl.Series("__pidx", np.zeros(batch.height, dtype=np.int64))
        values = batch[name].cast(pl.Int64, strict=False)
        bad = values.is_null()
        if bad.any():
            i = int(bad.arg_true()[0])
            row = self.row_of(batch, i, first_id)
            msg = f"partition column '{name}', {row}: '{batch[name][i]}' is not a partition number"
            raise InputError(msg)
        first, count = self.partitions[0], len(self.partitions)
        if self.partitions[-1] - first == count - 1:  # contiguous ids: an offset, no lookup
            mapped = values - first
            mapped = mapped.set((mapped < 0) | (mapped >= count), None)
        else:
            mapped = values.replace_strict(self._index, default=None, return_dtype=pl.Int64)
        unknown = mapped.is_null()
        if unknown.any():
            i = int(unknown.arg_true()[0])
            msg = (
                f"partition column '{name}', {self.row_of(batch, i, first_id)}: partition "
                f"{values[i]} is not among the declared partitions "
                f"{self.partitions[0]}..{self.partitions[-1]}"
            )
            raise InputError(msg)
        return mapped.alias("__pidx")

    def _application_ns(self, batch: pl.DataFrame) -> pl.Series:
        col = self.policy.timestamp_by
        if col is None:
            return pl.repeat(None, batch.height, dtype=pl.Int64, eager=True).alias("__app")
        if col not in batch.columns:
            msg = f"TIMESTAMP BY column '{col}' is missing (columns: {self.input_columns(batch)})"
            raise InputError(msg, Setting.TIMESTAMP_BY)
        return to_utc(batch[col]).dt.epoch("ns").alias("__app")
