"""Scheduling delays per task, as ``perf sched latency`` reports them
(``Result.latency``, ``Result.latency_histogram``, ``format_latency``).

A *delay* is the time from the moment a task became runnable to the
moment it was switched in: from its ``sched_wakeup`` / ``sched_wakeup_new``
when it had slept (a wake-up delay), from its switch out with ``prev_state``
R when it was preempted. ``perf sched latency`` counts both (its
``Switches``, ``Avg delay`` and ``Max delay`` columns; tools/perf/
builtin-sched.c, ``add_sched_in_event()``); ``kind="wakeup"`` keeps the
wake-up delays only, what schbench and cyclictest measure.

The core keeps them per task in fixed log-linear buckets (exact below
16 ns, then 16 per power of two): counts, means and maxima are exact,
percentiles are the nearest-rank value read as its bucket's upper edge —
at most 1/16 (6.25 %) above the true one below 2³⁶ ns (68.7 s), never
above the maximum (a percentile in the last bucket reads as the maximum).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from .. import _core
from .._check import checked_call, need_frame, need_str, show
from ..exceptions import ConfigError, ConfigTypeError

#: How ``Result.latency`` groups tasks: a row per task, per task name (how
#: ``perf sched latency`` merges tasks by comm), per workload role, per
#: process (tgid), or one row for the run.
BY = ("task", "name", "role", "process", "run")
#: Which delays: ``perf sched latency``'s (wake-up and preempted), or the
#: wake-up delays only.
KINDS = ("all", "wakeup")
#: The quantiles reported, and their columns.
QUANTILES = {"p50_us": 0.5, "p90_us": 0.9, "p99_us": 0.99}
#: The key columns of each grouping (from ``Result.tasks``).
_KEYS = {
    "task": ["task", "name", "role", "process"],
    "name": ["name"],
    "role": ["role"],
    "process": ["tgid", "process"],
    "run": [],
}


def _choice(param: str, v: Any, allowed: tuple[str, ...]) -> str:
    need_str(param, v)
    if v not in allowed:
        raise ConfigError(f"invalid {param}={show(v)}: expected one of {', '.join(allowed)}")
    return str(v)


def _groups(tasks: pl.DataFrame, by: str) -> tuple[pl.DataFrame, npt.NDArray[np.int64]]:
    """The groups' key rows (in first-seen task order) and each task's group."""
    keys = _KEYS[by]
    if not keys:
        return pl.DataFrame(), np.zeros(tasks.height, dtype=np.int64)
    k = tasks.select(keys).with_row_index("_row")
    first = k.group_by(keys, maintain_order=True).agg(pl.col("_row").first())
    first = first.with_row_index("_group")
    idx = k.join(first.drop("_row"), on=keys, how="left", nulls_equal=True).sort("_row")
    return first.drop("_row", "_group"), idx["_group"].to_numpy().astype(np.int64)


def _sum_by(values: npt.NDArray[Any], group: npt.NDArray[np.int64], n: int) -> npt.NDArray[Any]:
    out = np.zeros((n, *values.shape[1:]), dtype=np.uint64)
    np.add.at(out, group, values.astype(np.uint64))
    return out


def latency_table(
    raw: Mapping[str, Any], tasks: pl.DataFrame, by: str = "task", kind: str = "all"
) -> pl.DataFrame:
    """The delays of ``raw`` (a run's ``latency`` arrays) grouped ``by`` one
    of ``BY``, for ``kind`` one of ``KINDS``: the key columns, ``tasks``
    (tasks in the group), ``count``, ``mean_us``, ``p50_us``, ``p90_us``,
    ``p99_us``, ``max_us``, ``total_s`` (the delays' sum); per task also
    ``max_start_s`` / ``max_end_s``, when the largest delay began and ended
    (``kind="all"``, as perf prints them)."""
    by = _choice("by", by, BY)
    k = KINDS.index(_choice("kind", kind, KINDS))
    keys, group = _groups(tasks, by)
    n = max(keys.height, 1)
    hist = _sum_by(raw["hist"][:, k, :], group, n)
    count = _sum_by(raw["count"][:, k], group, n).astype(np.int64)
    total = _sum_by(raw["sum_ns"][:, k], group, n).astype(np.float64)
    mx = np.zeros(n, dtype=np.uint64)
    np.maximum.at(mx, group, raw["max_ns"][:, k].astype(np.uint64))
    q = _core.latency_quantiles(
        np.ascontiguousarray(hist, dtype=np.uint32), mx, list(QUANTILES.values())
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1) / 1e3, np.nan)
    cols: dict[str, Any] = {
        "tasks": np.bincount(group, minlength=n).astype(np.int64),
        "count": count,
        "mean_us": mean,
        **{c: q[:, i] / 1e3 for i, c in enumerate(QUANTILES)},
        "max_us": np.where(count > 0, mx / 1e3, np.nan),
        "total_s": total / 1e9,
    }
    if by == "task" and k == 0:
        start = raw["max_start_ns"].astype(np.float64)
        cols["max_start_s"] = np.where(count > 0, start / 1e9, np.nan)
        cols["max_end_s"] = np.where(count > 0, (start + raw["max_ns"][:, 0]) / 1e9, np.nan)
    return pl.concat([keys, pl.DataFrame(cols)], how="horizontal")


def latency_histogram(
    raw: Mapping[str, Any], tasks: pl.DataFrame, by: str = "run", kind: str = "all"
) -> pl.DataFrame:
    """The delays' histogram grouped ``by`` one of ``BY``: the key columns,
    ``lo_us`` / ``hi_us`` (a bucket's bounds, ``hi_us`` exclusive and
    infinite for the last) and ``count``, a row per non-empty bucket."""
    by = _choice("by", by, BY)
    k = KINDS.index(_choice("kind", kind, KINDS))
    keys, group = _groups(tasks, by)
    n = max(keys.height, 1)
    hist = _sum_by(raw["hist"][:, k, :], group, n)
    lo = np.asarray(_core.LATENCY_BUCKETS, dtype=np.float64)
    hi = np.append(lo[1:], np.inf)
    g, b = np.nonzero(hist)
    out = pl.DataFrame(
        {"lo_us": lo[b] / 1e3, "hi_us": hi[b] / 1e3, "count": hist[g, b].astype(np.int64)}
    )
    if keys.width:
        out = pl.concat([keys[g.tolist()], out], how="horizontal")
    return out


@checked_call("format_latency")
def format_latency(df: pl.DataFrame, sort: str = "max_us") -> str:
    """``latency_table``'s frame as ``perf sched latency`` prints its table:
    a line per row (``name:pid`` for tasks, the group's key otherwise) with
    its total delay in ms, count, average and maximum delay in ms, sorted by
    ``sort`` (descending)."""
    df = need_frame(
        "df",
        df,
        ["count", "mean_us", "max_us", "total_s"],
        "Result.latency()'s frame (latency_table's)",
    )
    for c in ("count", "mean_us", "max_us", "total_s"):
        dt = df.schema[c]
        if not dt.is_numeric() or dt == pl.Boolean:
            raise ConfigTypeError(
                f"invalid type for df: its column {c!r} is {dt}, expected numbers "
                "(Result.latency()'s frame, latency_table's)"
            )
    need_str("sort", sort)
    if sort not in df.columns:
        raise ConfigError(
            f"invalid sort={show(sort)}: expected a column of the frame, one of "
            f"{', '.join(df.columns)}"
        )
    keys = [c for c in ("name", "task", "role", "tgid", "process") if c in df.columns]

    def label(r: Mapping[str, Any]) -> str:
        if "task" in r:
            return f"{r['name']}:{r['task']}"
        return ":".join(str(r[c]) for c in keys) or "all tasks"

    # NaN (a group without delays) sorts last, as null does
    key = pl.col(sort).fill_nan(None) if df.schema[sort].is_float() else pl.col(sort)
    rows = df.sort(key, descending=True, nulls_last=True).iter_rows(named=True)
    lines = [(label(r), r) for r in rows]
    w = max([len("TOTAL:"), *(len(s) for s, _ in lines)])
    bar = "-" * (w + 76)
    out = [
        bar,
        f"  {'Task':<{w}} | {'Delay ms':>11} | {'Count':>8} | {'Avg delay ms':>14} | "
        f"{'Max delay ms':>14} |",
        bar,
    ]

    def ms(v: float | None) -> str:
        return "-" if v is None or v != v else f"{v / 1e3:.3f}"

    for s, r in lines:
        out.append(
            f"  {s:<{w}} | {r['total_s'] * 1e3:>11.3f} | {r['count']:>8} | "
            f"{ms(r['mean_us']):>14} | {ms(r['max_us']):>14} |"
        )
    out.append(bar)
    tot = int(df["count"].sum())
    out.append(f"  {'TOTAL:':<{w}} | {float(df['total_s'].sum()) * 1e3:>11.3f} | {tot:>8} |")
    return "\n".join(out)
