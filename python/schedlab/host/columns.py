"""Checking a measured frame's columns: what each must hold (``Column``)
and the check itself (``measured_frame``), shared by ``calibrate``,
``rep_noise`` and ``validate``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from .._check import need_frame, show
from ..exceptions import ConfigError, ConfigTypeError


@dataclass(frozen=True)
class Column:
    """What a column of a measured frame must hold: ``kind`` ``"text"``
    (String, Categorical or Enum; read as String), ``"int"`` (any integer
    dtype; read as Int64, within ``lo``..``hi``), ``"number"`` (any integer,
    float or decimal dtype, not Boolean; read as Float64) or ``"bool"``
    (Boolean); ``required`` (else it may be absent); ``nulls`` (else a null
    is refused). An all-null column (dtype Null) passes where nulls do."""

    kind: str
    required: bool = True
    nulls: bool = False
    lo: int | None = None
    hi: int | None = None


_KIND_TEXT = {
    "text": "text (String, Categorical or Enum)",
    "int": "integers",
    "number": "numbers (an integer or float dtype, not Boolean)",
    "bool": "booleans (Boolean)",
}
_CAST = {"text": pl.String, "int": pl.Int64, "number": pl.Float64, "bool": pl.Boolean}


def _dtype_ok(dtype: Any, kind: str) -> bool:
    if kind == "text":
        return dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum)
    if kind == "int":
        return bool(dtype.is_integer())
    if kind == "number":
        return bool(dtype.is_numeric()) and dtype != pl.Boolean
    return bool(dtype == pl.Boolean)


def measured_frame(
    real: Any, columns: Mapping[str, Column], expected: str, param: str = "real"
) -> pl.DataFrame:
    """``real`` checked against ``columns`` (name → ``Column``) and read:
    each column there of its kind's dtype (cast), the others as they are.
    A missing required column is a ``ConfigError`` naming it; a column of
    the wrong dtype a ``ConfigTypeError`` naming the column, its dtype and
    what it must hold; a refused null or a value out of range a
    ``ConfigError`` naming the column. ``expected``: which frame the caller
    takes, for the messages."""
    required = [c for c, spec in columns.items() if spec.required]
    df = need_frame(param, real, required, expected)
    casts = []
    for c, spec in columns.items():
        if c not in df.columns:
            continue
        col = df[c]
        if col.dtype == pl.Null:
            if not spec.nulls and df.height:
                raise ConfigError(
                    f"invalid {param}: column {c!r} is all null; expected {_KIND_TEXT[spec.kind]}"
                )
        elif not _dtype_ok(col.dtype, spec.kind):
            raise ConfigTypeError(
                f"invalid type for {param} column {c!r}: got {col.dtype}, expected "
                f"{_KIND_TEXT[spec.kind]}, as in {expected}"
            )
        nulls = col.null_count()
        if nulls and not spec.nulls and col.dtype != pl.Null:
            raise ConfigError(
                f"invalid {param}: column {c!r} has {nulls} null value{'s' * (nulls != 1)}; "
                f"expected {_KIND_TEXT[spec.kind]} in every row"
            )
        if spec.kind == "int" and col.dtype != pl.Null and nulls < col.len():
            lo_v, hi_v = col.min(), col.max()
            lo, hi = spec.lo, spec.hi
            for v in (lo_v, hi_v):
                assert isinstance(v, int)
                if (lo is not None and v < lo) or (hi is not None and v > hi):
                    raise ConfigError(
                        f"invalid {param}: column {c!r} holds {show(v)}; expected integers "
                        f"from {lo} to {hi}"
                    )
        casts.append(pl.col(c).cast(_CAST[spec.kind]))
    return df.with_columns(casts) if casts else df
