"""The 0-day (LKP) report's metric names: the model's metrics renamed as the
report names them (``lkp_metrics``; ``LKP_METRICS`` says how each is
computed and what LKP measures; ``LKP_NOT_MODELLED`` what the model cannot
produce, and why), and a ``compare`` frame rendered as the report's table
(``format_lkp``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from .._check import checked_call
from ..exceptions import ConfigError, ConfigTypeError

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


@checked_call("lkp_metrics")
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


@checked_call("format_lkp")
def format_lkp(cmp: pl.DataFrame, by: str | None = None) -> str:
    """Render a ``compare`` frame as the 0-day report's table:
    ``base ± %stddev   %change   candidate ± %stddev   metric``, one block per
    candidate (``by``: the compared column, by default the one just before
    ``metric``). A frame of ``compare(..., within=...)`` gets one block per
    (``within`` group, candidate), each under a label line of the group's
    values (``# workload.groups=5``): the ``within`` columns are the
    frame's other columns before ``metric``. When it holds the report's
    metric names (``compare(..., names="lkp")``), the report's metrics the
    model cannot produce are listed under the table as ``# not modelled:
    name (why)``."""
    if not isinstance(cmp, pl.DataFrame) or not {"change_pct", "metric"} <= set(cmp.columns):
        raise ConfigTypeError("invalid cmp: expected the frame sl.compare() returns")
    cols = cmp.columns[: cmp.columns.index("metric")]
    key = _need_by(by, cols)
    keys = [c for c in cols if c != key]

    def num(x: float | None) -> str:
        if x is None or not math.isfinite(x):
            return "-"
        return f"{x:.4g}" if abs(x) < 1e4 else f"{x:.4e}" if abs(x) >= 1e9 else f"{x:.0f}"

    def pct(x: float | None) -> str:
        if x is None or not math.isfinite(x):
            return "    "
        return f"± {x:2.0f}%"

    out = []
    for values, g in cmp.group_by([*keys, key], maintain_order=True):
        *group, cand = values
        if keys:
            out.append("# " + ", ".join(f"{k}={v}" for k, v in zip(keys, group, strict=True)))
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


def _need_by(by: str | None, cols: Sequence[str]) -> str:
    """The compared column: ``by``, or the column just before ``metric``."""
    if not cols:
        raise ConfigTypeError("invalid cmp: expected the frame sl.compare() returns")
    if by is None:
        return cols[-1]
    if not isinstance(by, str):
        raise ConfigTypeError(f"invalid type for by: got {type(by).__name__}, expected str")
    if by not in cols:
        raise ConfigError(
            f"invalid by={by!r}: not a compared column of cmp; expected one of {', '.join(cols)}"
        )
    return by
