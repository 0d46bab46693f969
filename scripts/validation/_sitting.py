"""What the in-the-sitting scripts (``aim7_sitting.py``, ``schbench_sitting.py``)
share: their common options and reading a stored frame or measuring afresh."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import polars as pl
from schedlab.host.measurement import metadata


def add_common(ap: argparse.ArgumentParser, bench: str, binary: str, what: str) -> None:
    """``--BINARY`` (measure here) or ``--frame``, and ``--seeds``,
    ``--machine``, ``--kernel``, ``--out``."""
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument(f"--{binary}", help=f"{what} (measure here)")
    src.add_argument("--frame", help=f"a stored measure({bench!r}) frame (Parquet)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--machine", default="vm-2")
    ap.add_argument("--kernel", default="v6.18")
    ap.add_argument("--out", help="write the measured frame here (Parquet)")


def frame_or_measure(a: argparse.Namespace, measure: Callable[[], pl.DataFrame]) -> pl.DataFrame:
    """The stored ``--frame``, or ``measure()``'s, written to ``--out``."""
    if a.frame:
        return pl.read_parquet(a.frame)
    real = measure()
    if a.out:
        real.write_parquet(a.out, metadata=metadata(real))
    return real
