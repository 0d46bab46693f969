"""Summaries and comparisons of result or sweep frames, the way kernel
developers read perf stat and the 0-day (LKP) reports: ``summarize`` (mean,
stddev, 95 % interval per group and metric), ``compare`` (each value of a
column against a baseline, Welch's test) and ``metric_columns``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from .._check import checked_call
from ..exceptions import ConfigError, ConfigTypeError
from ..run.frame import is_config_column
from .lkp import LKP_METRICS, lkp_metrics
from .stats import t975, welch_p

#: Columns of a result or sweep frame that are neither configuration nor
#: metrics.
_NOT_METRICS = {"point", "replicate", "seed", "status", "status_detail", "wall_s"}


def metric_columns(df: pl.DataFrame) -> list[str]:
    """The metric columns of a result or sweep frame: its numeric columns
    other than the configuration (chosen by name: ``run.frame.is_config_column``),
    ``point``, ``replicate``, ``seed``, ``status``, ``status_detail`` and
    wall-clock columns — whatever the column order or the first row."""
    return [
        c
        for c in df.columns
        if c not in _NOT_METRICS
        and not is_config_column(c)
        and "wall" not in c
        and df.schema[c].is_numeric()
    ]


def _check(df: pl.DataFrame, by: Sequence[str], metrics: Sequence[str] | None) -> list[str]:
    if not isinstance(df, pl.DataFrame):
        raise ConfigTypeError(
            f"invalid type for df: got {type(df).__name__}, expected a polars DataFrame"
        )
    for c in by:
        if c not in df.columns:
            raise ConfigError(
                f"invalid by={c!r}: not a column; expected one of {', '.join(df.columns)}"
            )
    ms = list(metrics) if metrics is not None else metric_columns(df)
    for c in ms:
        if c not in df.columns:
            raise ConfigError(f"invalid metrics entry {c!r}: not a column of the frame")
    return ms


def _as_list(by: str | Sequence[str]) -> list[str]:
    return [by] if isinstance(by, str) else list(by)


# --- summaries -------------------------------------------------------------


@checked_call("summarize")
def summarize(
    df: pl.DataFrame,
    by: str | Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    *,
    ok_only: bool = True,
) -> pl.DataFrame:
    """Per group of ``by``: ``n``, ``mean``, ``stddev``, ``pct_stddev``
    (100·stddev/mean, perf's "+-") and the 95 % confidence interval of the
    mean (``ci95`` half-width, ``ci95_low``, ``ci95_high``; Student's t) of
    every metric, one row per (group, metric). Only ``status == "ok"`` rows
    count unless ``ok_only=False``."""
    keys = _as_list(by)
    ms = _check(df, keys, metrics)
    if ok_only and "status" in df.columns:
        df = df.filter(pl.col("status") == "ok")
    long = df.select(*keys, *[pl.col(m).cast(pl.Float64) for m in ms]).unpivot(
        index=keys, on=ms, variable_name="metric", value_name="value"
    )
    group = [*keys, "metric"]
    out = (
        long.group_by(group, maintain_order=True)
        .agg(
            n=pl.col("value").drop_nulls().len(),
            mean=pl.col("value").mean(),
            stddev=pl.col("value").std(),
        )
        .with_columns(
            pct_stddev=pl.when(pl.col("mean") != 0)
            .then(100 * pl.col("stddev") / pl.col("mean").abs())
            .otherwise(None)
        )
    )
    tq = pl.Series("t", t975(out["n"].cast(pl.Float64).to_numpy() - 1.0))
    out = out.with_columns(
        ci95=(tq * pl.col("stddev") / pl.col("n").cast(pl.Float64).sqrt())
    ).with_columns(
        ci95_low=pl.col("mean") - pl.col("ci95"),
        ci95_high=pl.col("mean") + pl.col("ci95"),
    )
    return out.sort(group, maintain_order=True) if keys else out


@checked_call("compare")
def compare(
    df: pl.DataFrame,
    by: str,
    baseline: Any,
    metrics: Sequence[str] | None = None,
    *,
    within: str | Sequence[str] = (),
    alpha: float = 0.05,
    names: str | None = None,
) -> pl.DataFrame:
    """LKP-style comparison of every value of ``by`` against ``baseline``.

    One row per (``within`` group, candidate, metric): ``base_mean``,
    ``base_pct_stddev``, ``change_pct`` (100·(candidate − base)/base),
    ``cand_mean``, ``cand_pct_stddev``, ``p_value`` (Welch's t-test) and
    ``significant`` (p < ``alpha``). ``names="lkp"`` compares the 0-day
    report's metrics (``lkp_metrics``: ``hackbench.throughput``,
    ``time.elapsed_time``, …) instead of the model's own; ``metrics`` then
    picks among those names."""
    if not isinstance(by, str):
        raise ConfigTypeError(f"invalid type for by: got {type(by).__name__}, expected str")
    if names is not None:
        if not isinstance(names, str):
            raise ConfigTypeError(
                f"invalid type for names: got {type(names).__name__}, expected str or None"
            )
        if names != "lkp":
            raise ConfigError(f"invalid names={names!r}: expected 'lkp' or None")
        df = lkp_metrics(df)
        if metrics is None:
            metrics = [m for m in LKP_METRICS if df[m].null_count() < df.height]
        else:
            for m in metrics:
                if m not in LKP_METRICS:
                    raise ConfigError(
                        f"invalid metrics entry {m!r} with names='lkp': expected one of "
                        f"{', '.join(LKP_METRICS)}"
                    )
    keys = _as_list(within)
    ms = _check(df, [by, *keys], metrics)
    values = df[by].unique().to_list()
    if baseline not in values:
        raise ConfigError(
            f"invalid baseline={baseline!r}: expected one of the {by!r} values "
            f"{', '.join(map(repr, values))}"
        )
    s = summarize(df, [*keys, by], ms)
    base = (
        s.filter(pl.col(by) == baseline)
        .drop(by)
        .rename(
            {
                "n": "base_n",
                "mean": "base_mean",
                "stddev": "base_stddev",
                "pct_stddev": "base_pct_stddev",
            }
        )
        .select(*keys, "metric", "base_n", "base_mean", "base_stddev", "base_pct_stddev")
    )
    cand = (
        s.filter(pl.col(by) != baseline)
        .rename(
            {
                "n": "cand_n",
                "mean": "cand_mean",
                "stddev": "cand_stddev",
                "pct_stddev": "cand_pct_stddev",
            }
        )
        .select(*keys, by, "metric", "cand_n", "cand_mean", "cand_stddev", "cand_pct_stddev")
    )
    j = cand.join(base, on=[*keys, "metric"], how="inner")
    j = j.with_columns(
        change_pct=pl.when(pl.col("base_mean") != 0)
        .then(100 * (pl.col("cand_mean") - pl.col("base_mean")) / pl.col("base_mean").abs())
        .otherwise(None)
    )
    p = welch_p(
        *(
            j[c].cast(pl.Float64).to_numpy()
            for c in ("base_mean", "base_stddev", "base_n", "cand_mean", "cand_stddev", "cand_n")
        )
    )
    j = j.with_columns(pl.Series("p_value", p, dtype=pl.Float64)).with_columns(
        significant=pl.col("p_value").fill_nan(1.0).fill_null(1.0) < alpha
    )
    if names == "lkp":  # the report's order of its metrics
        order = {m: i for i, m in enumerate(LKP_METRICS)}
        j = (
            j.with_columns(_order=pl.col("metric").replace_strict(order, return_dtype=pl.Int64))
            .sort([*keys, by, "_order"], maintain_order=True)
            .drop("_order")
        )
    return j.select(
        *keys,
        by,
        "metric",
        "base_mean",
        "base_pct_stddev",
        "change_pct",
        "cand_mean",
        "cand_pct_stddev",
        "p_value",
        "significant",
        "base_n",
        "cand_n",
    )
