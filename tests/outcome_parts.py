"""Test helper: an ``outcomes/`` folder as ``replay --spark`` lays it out, made by cutting a
local ``outcomes.parquet`` into part files (docs/schemas.md, "ASA replay outcomes")."""

from __future__ import annotations

from pathlib import Path

import polars as pl


def split_outcomes(source: Path, folder: Path, sizes: tuple[int, ...] = (1, 7, 500)) -> Path:
    """Write the rows of ``source`` into ``folder/part-NNNNN.parquet``, consecutive runs of
    the given sizes repeated (the last part takes what is left), plus a hidden temporary file
    as a writer leaves it midway; returns ``folder``."""
    frame = pl.read_parquet(source)
    folder.mkdir(parents=True)
    start, index = 0, 0
    while start < frame.height:
        size = sizes[index % len(sizes)]
        frame.slice(start, size).write_parquet(folder / f"part-{index:05d}.parquet")
        start += size
        index += 1
    (folder / ".part-99999.parquet.tmp").write_bytes(b"not yet parquet")
    return folder


def as_folder(replay_dir: Path, name: str = "outcomes.parquet") -> Path:
    """Replace ``replay_dir/outcomes.parquet`` by ``replay_dir/outcomes/`` (the same rows in
    part files); returns the folder."""
    source = replay_dir / name
    folder = split_outcomes(source, replay_dir / "outcomes")
    source.unlink()
    return folder
