"""Runs rendered like ``perf stat -r N`` (``format_perf_stat``)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from .._check import checked_call
from ..exceptions import ConfigError, ConfigTypeError

_PERF_EVENTS = [
    ("task_clock_s", "msec task-clock", 1e3),
    ("context_switches", "context-switches", 1.0),
    ("cpu_migrations", "cpu-migrations", 1.0),
]


@checked_call("format_perf_stat")
def format_perf_stat(df: pl.DataFrame, label: str = "schedlab", *, ok_only: bool = True) -> str:
    """Render runs like ``perf stat -r N``: mean counters with ``( +- x% )``
    (the relative standard error of the mean, as perf prints it), and the
    command's elapsed time. As perf computes them: "seconds time elapsed"
    is the whole command's wall time (``sim_time_s``: a benchmark's start-up
    and reaping included, not only the interval it reports as its own
    ``elapsed_s``), "CPUs utilized" is task-clock over that time, and the
    per-second rates of the other counters are per second of task-clock."""
    if not isinstance(df, pl.DataFrame):
        raise ConfigTypeError(
            f"invalid type for df: got {type(df).__name__}, expected a polars DataFrame"
        )
    if ok_only and "status" in df.columns:
        df = df.filter(pl.col("status") == "ok")
    n = df.height
    if n == 0:
        raise ConfigError("invalid df: no successful runs to summarise")

    def mean_rel(col: str) -> tuple[float, float]:
        x = df[col].cast(pl.Float64).to_numpy()
        mean = float(np.mean(x))
        sem = float(np.std(x, ddof=1) / math.sqrt(n)) if n > 1 else 0.0
        return mean, (100 * sem / abs(mean) if mean else 0.0)

    def rate(per_s: float) -> str:
        if per_s >= 1e6:
            return f"{per_s / 1e6:.3f} M/sec"
        if per_s >= 1e3:
            return f"{per_s / 1e3:.3f} K/sec"
        return f"{per_s:.3f} /sec"

    lines = [f" Performance counter stats for '{label}' ({n} runs):", ""]
    wall_col = "sim_time_s" if "sim_time_s" in df.columns else "elapsed_s"
    elapsed, el_rel = mean_rel(wall_col)
    task_clock = mean_rel("task_clock_s")[0] if "task_clock_s" in df.columns else 0.0
    for col, name, scale in _PERF_EVENTS:
        if col not in df.columns:
            continue
        mean, rel = mean_rel(col)
        v = mean * scale
        num = f"{v:,.2f}" if scale != 1.0 else f"{v:,.0f}"
        if col == "task_clock_s":
            extra = f"#  {mean / elapsed if elapsed else 0:8.3f} CPUs utilized"
        else:
            extra = f"#  {rate(mean / task_clock) if task_clock else '-':>14}"
        lines.append(f"{num:>18}      {name:<24}{extra:<30}( +- {rel:5.2f}% )")
    lines += [
        "",
        f"{elapsed:>18.4f} +- {elapsed * el_rel / 100:.4f} seconds time elapsed"
        f"  ( +- {el_rel:5.2f}% )",
    ]
    return "\n".join(lines)
