"""A sweep's finished rows, held compactly: a few hundred rows at a time as
dicts, then as polars frames (``FinishedRows``). A finished row used to
stay a dict of every configuration column and metric (~140 entries,
21–38 KB at a sweep's peak); in a frame it takes the bytes of its values.
``frame()`` gives exactly the frame ``build_frame`` makes of the same rows
as dicts: a row per run in (point, replicate) order, the configuration
columns first, then ``status``, ``status_detail`` and the metrics,
``wall_s`` last."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

#: Rows kept as dicts before they are moved into a frame.
_PENDING = 512
#: A run's key in the finished set: point * _KEY + replicate (replicates
#: are at most 10⁶ < 2²⁰); an int in a set takes less than a tuple.
_KEY = 1 << 20


def run_key(point: int, replicate: int) -> int:
    """The finished set's key of run (point, replicate)."""
    return point * _KEY + replicate


class FinishedRows:
    """Finished rows, in any order, each run once: ``add`` a row (a dict, as
    ``Run.result_row`` makes it), ``add_frame`` a frame of them (a
    checkpoint's), ``frame()`` the sweep frame of all of them. Also which
    runs have finished (``in``) and how many (``len``)."""

    def __init__(self) -> None:
        self._frames: list[pl.DataFrame] = []
        self._pending: list[dict[str, Any]] = []
        #: Each distinct column layout (a row's keys, in order) and the
        #: smallest (point, replicate) of a row with it: the column order of
        #: ``build_frame`` depends only on these.
        self._layouts: dict[tuple[str, ...], tuple[int, int]] = {}
        self._keys: set[int] = set()
        self._errors = 0

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, run: tuple[int, int]) -> bool:
        return run_key(*run) in self._keys

    @property
    def non_error(self) -> int:
        """How many of the rows are not "error" rows (runs that ran)."""
        return len(self._keys) - self._errors

    def _layout(self, cols: tuple[str, ...], key: tuple[int, int]) -> None:
        old = self._layouts.get(cols)
        if old is None or key < old:
            self._layouts[cols] = key

    def add(self, row: Mapping[str, Any]) -> None:
        key = (row["point"], row["replicate"])
        self._keys.add(run_key(*key))
        self._errors += row["status"] == "error"
        self._layout(tuple(row), key)
        self._pending.append(dict(row))
        if len(self._pending) >= _PENDING:
            self._flush()

    def extend(self, rows: Iterable[Mapping[str, Any]]) -> None:
        for row in rows:
            self.add(row)

    def add_frame(self, df: pl.DataFrame) -> None:
        """Rows already in a frame (each of its rows has all its columns)."""
        if df.height == 0:
            return
        points = df["point"].to_list()
        reps = df["replicate"].to_list()
        self._keys.update(run_key(p, r) for p, r in zip(points, reps, strict=True))
        self._errors += int((df["status"] == "error").sum())
        self._layout(tuple(df.columns), min(zip(points, reps, strict=True)))
        self._frames.append(df)

    def _flush(self) -> None:
        if self._pending:
            self._frames.append(pl.from_dicts(self._pending, infer_schema_length=None))
            self._pending = []

    def frame(self) -> pl.DataFrame:
        """All the rows as the sweep frame (see the module)."""
        self._flush()
        if not self._frames:
            return pl.DataFrame()
        # The configuration (each layout's columns before "status") first,
        # then status, status_detail and the metrics, wall_s last; each in
        # the order the rows, sorted, first show them.
        head: dict[str, None] = {}
        tail: dict[str, None] = {}
        for cols, _ in sorted(self._layouts.items(), key=lambda kv: kv[1]):
            part = head
            for c in cols:
                if c == "status":
                    part = tail
                if c not in head and c not in tail:
                    part[c] = None
        order = [c for c in [*head, *tail] if c != "wall_s"] + ["wall_s"]
        frames = sorted(self._frames, key=lambda f: (f["point"][0], f["replicate"][0]))
        if len(frames) == 1:
            df = frames[0]
        else:  # without a copy where the frames' columns already agree
            df = pl.concat(frames, how="diagonal_relaxed", rechunk=False)
        if not (df["point"] * _KEY + df["replicate"]).is_sorted():
            df = df.sort(["point", "replicate"])
        df = df.select(order)
        self._frames = [df]
        return df


def build_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """The sweep frame of finished rows (dicts): see the module."""
    held = FinishedRows()
    held.extend(rows)
    return held.frame()
