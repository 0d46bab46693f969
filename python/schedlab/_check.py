"""Small argument checkers: every refusal names the parameter, the value and
what is allowed."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import polars as pl

from .exceptions import ConfigError, ConfigTypeError

T = TypeVar("T")


def type_name(v: Any) -> str:
    return type(v).__name__


def show(v: Any) -> str:
    """``repr(v)``, shortened for an integer too long to read (10**400)."""
    r = repr(v)
    if isinstance(v, numbers.Integral) and len(r) > 40:
        return f"{r[:12]}...({len(r.lstrip('-'))} digits)"
    return r


def need_instance(param: str, v: Any, cls: type[T], expected: str) -> T:
    """``v`` itself if it is a ``cls``; otherwise a ``ConfigTypeError`` naming
    ``param``, the value and ``expected``."""
    if not isinstance(v, cls):
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(v)} {v!r}, expected {expected}"
        )
    return v


def need_frame(param: str, v: Any, columns: Sequence[str], expected: str) -> pl.DataFrame:
    """``v`` itself if it is a polars DataFrame holding ``columns``;
    otherwise a ``ConfigTypeError`` / ``ConfigError`` naming ``param``, what
    is wrong and ``expected`` (which frame the caller takes)."""
    frame = need_instance(param, v, pl.DataFrame, f"a polars DataFrame ({expected})")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ConfigError(f"invalid {param}: missing columns {missing}; expected {expected}")
    return frame


def is_list(v: Any) -> bool:
    """A list-like of values (a sequence or a 1-D array), not a string."""
    if isinstance(v, str | bytes):
        return False
    return isinstance(v, Sequence) or (isinstance(v, np.ndarray) and v.ndim == 1)


def need_int(param: str, v: Any, *, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Integral):
        raise ConfigTypeError(f"invalid type for {param}: got {type_name(v)} {v!r}, expected int")
    v = int(v)
    assert isinstance(v, int)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"from {lo} to {hi}" if hi is not None else f">= {lo}"
        raise ConfigError(f"invalid {param}={show(v)}: expected an integer {rng}")
    return v


def need_number(param: str, v: Any, *, positive: bool = True) -> float:
    if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real):
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(v)} {v!r}, expected a number"
        )
    what = "a positive finite number" if positive else "a finite number"
    try:
        x = float(v)
    except OverflowError:  # an int beyond float's range (10**400)
        raise ConfigError(f"invalid {param}={show(v)}: expected {what}") from None
    if not math.isfinite(x) or (positive and x <= 0):
        raise ConfigError(f"invalid {param}={show(v)}: expected {what}")
    return x


def need_scaled(
    param: str, v: Any, scale: float, lo: int, hi: int, unit: str, *, or_else: str = ""
) -> int:
    """``v`` (a positive number of ``unit``) times ``scale``, rounded, as an
    int from ``lo`` to ``hi``; out of range (or too large for a float) is a
    ``ConfigError`` naming ``param``, the value and the allowed range
    (followed by ``or_else``, e.g. " or None")."""
    rng = f"a number of {unit} from {lo / scale:g} to {hi / scale:g}{or_else}"
    if isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_) and int(v) > hi:
        # too large even for a float (10**400); scale >= 1, so out of range
        raise ConfigError(f"invalid {param}={show(v)}: expected {rng}")
    x = need_number(param, v)
    if x > hi / scale * (1 + 1e-12):  # checked before scaling: 1e300 * 1e9 is inf
        raise ConfigError(f"invalid {param}={show(v)}: expected {rng}")
    n = round(x * scale)
    if n < lo or n > hi:
        raise ConfigError(f"invalid {param}={show(v)}: expected {rng}")
    return n


def need_bool(param: str, v: Any) -> bool:
    if not isinstance(v, bool | np.bool_):
        raise ConfigTypeError(f"invalid type for {param}: got {type_name(v)} {v!r}, expected bool")
    return bool(v)


def need_str(param: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ConfigTypeError(f"invalid type for {param}: got {type_name(v)} {v!r}, expected str")
    try:
        v.encode()
    except UnicodeEncodeError:  # a lone surrogate ("\ud800") cannot reach the core
        raise ConfigError(
            f"invalid {param}={v!r}: expected text that encodes as UTF-8 (no lone surrogates)"
        ) from None
    return v


def need_choice(param: str, v: Any, choices: list[str]) -> str:
    need_str(param, v)
    if v not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ConfigError(f"invalid {param}={v!r}: expected one of {allowed}")
    return str(v)


#: The longest simulated time a run may cover (2**62 ns, about 146 years).
MAX_NS = 2**62


def seconds_to_ns(param: str, v: Any) -> int:
    return need_scaled(param, v, 1e9, 1, MAX_NS, "seconds")


def interval_to_ns(param: str, v: Any) -> int:
    """A sampling interval: at least 10 µs, so a run's vmstat stays bounded."""
    return need_scaled(param, v, 1e9, 10_000, MAX_NS, "seconds")


def need_output_path(param: str, v: Any, *, force: bool) -> Path:
    """An output file path, checked before any work: a ``str`` or
    ``os.PathLike`` (not an int, which ``open`` would take as a file
    descriptor), not a directory, in an existing writable directory, and not
    an existing file unless ``force``. Refusals name ``param`` and the value."""
    if not isinstance(v, str | os.PathLike) or not isinstance(os.fspath(v), str):
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(v)} {v!r}, expected a str or "
            "os.PathLike file path"
        )
    path = os.fspath(v)
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"invalid {param}={path!r}: a directory; expected a file to write")
    parent = p.parent
    if not parent.is_dir():
        raise ConfigError(f"invalid {param}={path!r}: no such directory {str(parent)!r}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"invalid {param}={path!r}: directory {str(parent)!r} is not writable")
    if p.exists() or p.is_symlink():
        if not force:
            raise ConfigError(
                f"invalid {param}={path!r}: the file exists; pass --force to overwrite it"
            )
        if not os.access(p, os.W_OK):
            raise ConfigError(f"invalid {param}={path!r}: the file is not writable")
    return p
