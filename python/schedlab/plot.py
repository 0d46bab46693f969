"""Plots of sweep frames (matplotlib, imported on first use; install
``schedlab[plot]``). Each function returns the matplotlib Axes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from .analysis.frames import summarize
from .exceptions import ConfigError


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(6, 3.5))
    return ax


def _need(df: pl.DataFrame, *cols: str) -> None:
    for c in cols:
        if c not in df.columns:
            raise ConfigError(
                f"invalid column {c!r}: not in the frame; expected one of {', '.join(df.columns)}"
            )


def metric_vs(df: pl.DataFrame, x: str, metric: str, hue: str | None = None, ax: Any = None) -> Any:
    """``metric`` against parameter ``x``: the mean with 95 % confidence
    error bars over replicates, one line per value of ``hue``."""
    _need(df, x, metric, *([hue] if hue else []))
    by = [hue, x] if hue else [x]
    s = summarize(df, by, [metric]).sort(by)
    ax = _axes(ax)
    groups = s.group_by(hue, maintain_order=True) if hue else [((None,), s)]
    for (h,), g in groups:
        ax.errorbar(
            g[x].to_numpy(),
            g["mean"].to_numpy(),
            yerr=np.nan_to_num(g["ci95"].to_numpy()),
            marker="o",
            capsize=3,
            label=None if h is None else f"{hue}={h}",
        )
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    if hue:
        ax.legend()
    return ax


def heatmap(df: pl.DataFrame, x: str, y: str, metric: str, ax: Any = None) -> Any:
    """The mean of ``metric`` over a 2-D grid of ``x`` × ``y``."""
    _need(df, x, y, metric)
    s = summarize(df, [y, x], [metric])
    xs = sorted(s[x].unique().to_list())
    ys = sorted(s[y].unique().to_list())
    grid = np.full((len(ys), len(xs)), np.nan)
    for r in s.iter_rows(named=True):
        grid[ys.index(r[y]), xs.index(r[x])] = r["mean"]
    ax = _axes(ax)
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.figure.colorbar(im, ax=ax, label=metric)
    return ax


def bisect(
    df: pl.DataFrame,
    by: str,
    good: Any,
    bad: Any,
    metric: str | Sequence[str],
    ax: Any = None,
) -> Any:
    """The LKP report's sample plots: every run's ``metric`` for the
    bisect-good (``by == good``, ``+``) and bisect-bad (``by == bad``,
    ``o``) side. With a list of metrics, one panel per metric, as the 0-day
    report draws one plot per changed metric (``ax``: None or as many Axes
    as metrics); returns the list of Axes. A frame from
    ``sl.lkp_metrics`` plots under the report's names
    (``"hackbench.throughput"``, ``"interrupts.CAL:Function_call_interrupts"``)."""
    if isinstance(metric, str):
        _need(df, by, metric)
        return _bisect_one(df, by, good, bad, metric, _axes(ax))
    metrics = list(metric)
    if not metrics or not all(isinstance(m, str) for m in metrics):
        raise ConfigError(
            f"invalid metric={metric!r}: expected a column name or a non-empty list of them"
        )
    _need(df, by, *metrics)
    if ax is None:
        import matplotlib.pyplot as plt

        _, grid = plt.subplots(len(metrics), 1, figsize=(6, 2.6 * len(metrics)), squeeze=False)
        axes = [a for row in grid for a in row]
    else:
        axes = list(np.ravel(ax)) if not isinstance(ax, list) else ax
        if len(axes) != len(metrics):
            raise ConfigError(
                f"invalid ax: got {len(axes)} Axes for {len(metrics)} metrics; "
                "expected one per metric (or ax=None)"
            )
    return [_bisect_one(df, by, good, bad, m, a) for m, a in zip(metrics, axes, strict=True)]


def _bisect_one(df: pl.DataFrame, by: str, good: Any, bad: Any, metric: str, ax: Any) -> Any:
    _need(df, by, metric)
    for value, marker, label in (
        (good, "+", "bisect-good sample"),
        (bad, "o", "bisect-bad sample"),
    ):
        v = df.filter(pl.col(by) == value)[metric].to_numpy()
        if v.size == 0:
            raise ConfigError(f"invalid {by}={value!r}: no runs have it")
        ax.plot(
            np.arange(1, v.size + 1),
            v,
            linestyle="none",
            marker=marker,
            mfc="none",
            label=f"{label} ({by}={value})",
        )
    ax.set_xlabel("run")
    ax.set_ylabel(metric)
    ax.legend()
    return ax


def latency(hist: pl.DataFrame, ax: Any = None, label: str | None = None) -> Any:
    """The scheduling delays' distribution from ``Result.latency_histogram``:
    the fraction of delays at most x (a step per bucket's upper edge, x on a
    log scale in µs), one line per group (the frame's key columns, e.g.
    ``by="role"``); ``label`` names a single group's line (to overlay runs
    on one ``ax``)."""
    _need(hist, "lo_us", "hi_us", "count")
    keys = [c for c in hist.columns if c not in ("lo_us", "hi_us", "count")]
    ax = _axes(ax)
    groups = hist.group_by(keys, maintain_order=True) if keys else [((label,), hist)]
    for key, g in groups:
        g = g.sort("lo_us")
        cum = np.cumsum(g["count"].to_numpy()) / max(int(g["count"].sum()), 1)
        # a delay in [lo, hi) is at most hi: the last bucket's edge is its lo
        hi = g["hi_us"].to_numpy()
        x = np.where(np.isfinite(hi), hi, g["lo_us"].to_numpy())
        x = np.maximum(x, 1e-3)
        name = label if not keys else ", ".join(f"{k}={v}" for k, v in zip(keys, key, strict=True))
        ax.step(x, cum, where="post", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("scheduling delay (µs)")
    ax.set_ylabel("fraction of delays ≤ x")
    ax.set_ylim(0, 1.02)
    if keys or label:
        ax.legend()
    return ax


def schedule_cdf(
    sources: dict[str, Any],
    kind: str = "burst",
    role: str | None = None,
    ax: Any = None,
    **kw: Any,
) -> Any:
    """The CDF of on-CPU bursts (``kind="burst"``) or wake-up delays
    (``"delay"``) of several schedules on one Axes: ``sources`` maps a label
    to a recording or a ``Result`` with a trace (``sl.schedule_samples``
    reads each; ``kw`` goes to it, e.g. ``roles="hackbench"``), ``role``
    keeps one role's tasks. x in µs on a log scale."""
    from .analysis.schedule import schedule_samples

    if kind not in ("burst", "delay"):
        raise ConfigError(f"invalid kind={kind!r}: expected 'burst' or 'delay'")
    if not isinstance(sources, dict) or not sources:
        raise ConfigError(
            f"invalid sources={type(sources).__name__}: expected a non-empty dict label -> "
            "recording or Result"
        )
    ax = _axes(ax)
    for label, src in sources.items():
        s = schedule_samples(src, **kw).filter(pl.col("kind") == kind)
        if role is not None:
            s = s.filter(pl.col("role") == role)
        v = np.sort(s["us"].to_numpy())
        if v.size == 0:
            continue
        ax.step(np.maximum(v, 1e-3), np.arange(1, v.size + 1) / v.size, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel(("on-CPU burst" if kind == "burst" else "wake-up delay") + " (µs)")
    ax.set_ylabel("fraction ≤ x")
    ax.set_ylim(0, 1.02)
    ax.legend()
    return ax
