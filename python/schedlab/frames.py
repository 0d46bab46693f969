"""Summaries and comparisons of result frames, the way kernel developers read
perf stat and the 0-day (LKP) reports."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from .exceptions import ConfigError, ConfigTypeError
from .run.frame import is_config_column
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


# --- the 0-day (LKP) report's metric names ---------------------------------

#: The 0-day report's metrics the model produces: LKP name -> (how the model
#: computes it, what LKP measures). Order: the report's.
LKP_METRICS: dict[str, tuple[str, str]] = {
    "hackbench.throughput": (
        "(2·groups·fds·loops·datasize >> 10) / elapsed_s, hackbench rows only",
        "lkp-tests stats/hackbench: KB = tasks × messages × bytes >> 10 with tasks "
        "from hackbench's '(== T tasks)' line (senders and receivers), over its "
        "'Time:' seconds",
    ),
    "time.elapsed_time": ("sim_time_s", "/usr/bin/time's elapsed seconds of the job"),
    "time.system_time": (
        "sys_s",
        "/usr/bin/time's system seconds (the model: the CPUs' kernel time, which "
        "in a benchmark run is nearly all the benchmark's)",
    ),
    "time.user_time": (
        "user_s",
        "/usr/bin/time's user seconds (0 for the model's hackbench, which charges "
        "all its work as system time: its user-space loop is not modelled)",
    ),
    "time.voluntary_context_switches": ("voluntary_cs", "/usr/bin/time's ru_nvcsw"),
    "time.involuntary_context_switches": ("involuntary_cs", "/usr/bin/time's ru_nivcsw"),
    "vmstat.system.cs": (
        "rq_switches / sim_time_s",
        "vmstat's cs column (Σ rq->nr_switches per second), averaged over the run",
    ),
    "interrupts.CAL:Function_call_interrupts": (
        "function_call_ipis",
        "the CAL line of /proc/interrupts, summed over CPUs, over the run",
    ),
}

#: Metrics of the 0-day hackbench report the model cannot produce, and why.
LKP_NOT_MODELLED: dict[str, str] = {
    "time.minor_page_faults": "the model has no memory management, so no page faults",
    "time.file_system_inputs": "no file I/O is modelled",
    "time.file_system_outputs": "no file I/O is modelled",
    "time.maximum_resident_set_size": "no memory is modelled",
    "time.percent_of_cpu_this_job_got": "not computed; it would be user_s + sys_s over sim_time_s",
}

_LKP_SOURCES = ("sim_time_s", "sys_s", "user_s", "voluntary_cs", "involuntary_cs")


def lkp_metrics(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` (a result or sweep frame) with the 0-day report's metrics added
    as columns named as LKP names them (``LKP_METRICS``: name -> how the
    model computes it, what LKP measures). ``hackbench.throughput`` is null
    on rows of other workloads. What the model cannot produce
    (``LKP_NOT_MODELLED``) is not invented."""
    if not isinstance(df, pl.DataFrame):
        raise ConfigTypeError(
            f"invalid type for df: got {type(df).__name__}, expected a polars DataFrame"
        )
    need = [*_LKP_SOURCES, "rq_switches", "function_call_ipis", "elapsed_s"]
    for c in need:
        if c not in df.columns:
            raise ConfigError(
                f"invalid df: no {c!r} column (lkp_metrics needs a result or sweep frame "
                "with the model's metrics)"
            )
    hb_cols = ["workload", "workload.groups", "workload.fds", "workload.loops"]
    if all(c in df.columns for c in hb_cols):
        size = pl.col("workload.datasize") if "workload.datasize" in df.columns else pl.lit(100)
        kb = (
            2
            * pl.col("workload.groups").cast(pl.Int64)
            * pl.col("workload.fds").cast(pl.Int64)
            * pl.col("workload.loops").cast(pl.Int64)
            * size.cast(pl.Int64)
        ) // 1024
        hb = (
            pl.when((pl.col("workload") == "hackbench") & (pl.col("elapsed_s") > 0))
            .then(kb.cast(pl.Float64) / pl.col("elapsed_s"))
            .otherwise(None)
        )
    else:
        hb = pl.lit(None, dtype=pl.Float64)
    sim = pl.col("sim_time_s").cast(pl.Float64)
    return df.with_columns(
        hb.alias("hackbench.throughput"),
        sim.alias("time.elapsed_time"),
        pl.col("sys_s").cast(pl.Float64).alias("time.system_time"),
        pl.col("user_s").cast(pl.Float64).alias("time.user_time"),
        pl.col("voluntary_cs").cast(pl.Float64).alias("time.voluntary_context_switches"),
        pl.col("involuntary_cs").cast(pl.Float64).alias("time.involuntary_context_switches"),
        pl.when(sim > 0)
        .then(pl.col("rq_switches").cast(pl.Float64) / sim)
        .otherwise(None)
        .alias("vmstat.system.cs"),
        pl.col("function_call_ipis")
        .cast(pl.Float64)
        .alias("interrupts.CAL:Function_call_interrupts"),
    )


# --- text renderers ----------------------------------------------------------

_PERF_EVENTS = [
    ("task_clock_s", "msec task-clock", 1e3),
    ("context_switches", "context-switches", 1.0),
    ("cpu_migrations", "cpu-migrations", 1.0),
]


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


def format_lkp(cmp: pl.DataFrame, by: str | None = None) -> str:
    """Render a ``compare`` frame as the 0-day report's table:
    ``base ± %stddev   %change   candidate ± %stddev   metric``. When it
    holds the report's metric names (``compare(..., names="lkp")``), the
    report's metrics the model cannot produce are listed under the table as
    ``# not modelled: name (why)``."""
    if not isinstance(cmp, pl.DataFrame) or "change_pct" not in cmp.columns:
        raise ConfigTypeError("invalid cmp: expected the frame sl.compare() returns")
    key = by or cmp.columns[cmp.columns.index("metric") - 1]

    def num(x: float | None) -> str:
        if x is None or not math.isfinite(x):
            return "-"
        return f"{x:.4g}" if abs(x) < 1e4 else f"{x:.4e}" if abs(x) >= 1e9 else f"{x:.0f}"

    def pct(x: float | None) -> str:
        if x is None or not math.isfinite(x):
            return "    "
        return f"± {x:2.0f}%"

    out = []
    for (cand,), g in cmp.group_by(key, maintain_order=True):
        out.append(f"{'base':>16} {'%change':>10} {str(cand):>16}")
        out.append(f"{'-' * 16} {'-' * 10} {'-' * 16}")
        for r in g.iter_rows(named=True):
            ch = r["change_pct"]
            chs = "" if ch is None or not math.isfinite(ch) else f"{ch:+.1f}%"
            note = "" if r["significant"] else "  (not significant)"
            out.append(
                f"{num(r['base_mean']):>10} {pct(r['base_pct_stddev'])} {chs:>10} "
                f"{num(r['cand_mean']):>10} {pct(r['cand_pct_stddev'])}  "
                f"{r['metric']}{note}"
            )
        out.append("")
    if any(m in LKP_METRICS for m in cmp["metric"].unique().to_list()):
        for m, why in LKP_NOT_MODELLED.items():
            out.append(f"# not modelled: {m} ({why})")
    return "\n".join(out).rstrip() + "\n"
