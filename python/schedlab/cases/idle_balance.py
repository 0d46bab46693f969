"""Case 2 — removing ``idle_balance()`` (the RFC of February 2013,
docs/cases/idle-balance.md): without newidle balancing ``perf bench
sched messaging -g 300`` ran 13 % longer (context switches +32 %,
migrations −29 %), while hackbench on Steven Rostedt's machine ran about
50 % faster. The model's ``idle_balance=False`` skips the ``idle_balance()``
call in ``schedule()`` (3.8); periodic, NOHZ and wake-up balancing stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from .._check import need_frame, need_int
from .._table import text_table
from ..analysis.frames import compare
from ..analysis.perf_stat import format_perf_stat
from ..config import CostModel, Kernel, Machine
from ..exceptions import ConfigError, ConfigTypeError
from ..run.sweeps import sweep
from ..workloads import hackbench

#: The seed's ``perf stat -r 10`` of ``perf bench sched messaging -g 300``
#: (v3.8-era kernel, 4 CPUs), keyed by ``idle_balance``: the mean and, where
#: the report gave it, perf's ``( +- x% )``.
IDLE_BALANCE_SEED: dict[bool, dict[str, tuple[float, float | None]]] = {
    True: {
        "sim_time_s": (12.64, 2.3),
        "context_switches": (511_000, 7.0),
        "cpu_migrations": (118_000, 5.0),
        "cpus_utilized": (3.23, None),
    },
    False: {
        "sim_time_s": (14.34, 1.8),
        "context_switches": (673_000, None),
        "cpu_migrations": (83_000, None),
        "cpus_utilized": (2.93, None),
    },
}

#: The comparison's rows: (label, frame column). ``sim_time_s`` is what
#: ``perf stat`` calls "seconds time elapsed" (the whole command: fork,
#: messaging, reaping); ``elapsed_s`` is the benchmark's own Total time.
_ROWS = (
    ("time elapsed (perf stat) [s]", "sim_time_s"),
    ("context switches", "context_switches"),
    ("CPU migrations", "cpu_migrations"),
    ("CPUs utilized", "cpus_utilized"),
    ("Total time (hackbench) [s]", "elapsed_s"),
    ("newidle pulls", "newidle_balance_pulled"),
    ("idle CPU-s", "idle_s"),
    ("idle while overloaded", "lozi_fraction"),
)

#: The counters ``removal_effect`` reports beside the time ratio.
EFFECT_COUNTERS = (
    "context_switches",
    "cpu_migrations",
    "newidle_balance_pulled",
    "mutex_sleeps",
    "reader_blocks",
    "writer_blocks",
    "migration_refill_s",
    "lozi_fraction",
)


def idle_balance_runs(
    machine: Machine | str = "quad-4c",
    kernel: Kernel | str = "v3.8",
    *,
    groups: int = 300,
    loops: int = 100,
    ipc: str = "socket",
    mode: str = "process",
    replicates: int = 10,
    seed: int = 0,
    threads: int | None = None,
    progress: bool = True,
    costs: CostModel | None = None,
) -> pl.DataFrame:
    """Case 2's runs: ``hackbench(groups, loops, ipc, mode)`` (perf bench's
    defaults but for the group count) on ``machine`` under ``kernel`` with
    ``idle_balance`` True and False, ``replicates`` runs each, as one
    ``sl.sweep`` (parallel, a progress bar, Ctrl-C keeps finished rows).
    Returns the sweep's frame: a row per run with an ``idle_balance``
    column. The seed does not give its tick: at the ``v3.8`` preset's
    ``HZ=1000`` the model's removal effect is within the noise, at
    ``Kernel.preset("v3.8").replace(hz=250)`` it is +0.3 % time and
    +11 % context switches over 10 runs (docs: seed case 2; notebook 02)."""
    need_int("replicates", replicates, lo=2)
    w = hackbench(groups=groups, loops=loops, ipc=ipc, mode=mode)
    return sweep(
        machine,
        kernel,
        w,
        {"idle_balance": [True, False]},
        replicates=replicates,
        seed=seed,
        threads=threads,
        progress=progress,
        costs=costs,
        interval_s=1.0,
    )


def _need_frame(frame: Any, columns: Sequence[str], what: str) -> pl.DataFrame:
    df = need_frame("frame", frame, columns, what)
    if df.filter(pl.col("status") == "ok").height == 0:
        raise ConfigError("invalid frame: no run finished (status 'ok')")
    return df


def idle_balance_comparison(frame: pl.DataFrame) -> pl.DataFrame:
    """With against without newidle balancing, from ``idle_balance_runs``:
    a row per counter (``label``, ``metric``) with the model's means, its
    change in percent, Welch's p-value, and the seed's values and change
    where the seed has them."""
    cols = [c for _, c in _ROWS]
    frame = _need_frame(
        frame, ["idle_balance", "status", *cols], "the frame idle_balance_runs() returns"
    )
    if set(frame["idle_balance"].unique().to_list()) != {True, False}:
        raise ConfigError("invalid frame: needs runs with idle_balance True and False")
    cmp = compare(frame, "idle_balance", True, cols)
    by_metric = {r["metric"]: r for r in cmp.iter_rows(named=True)}
    rows = []
    for label, col in _ROWS:
        r = by_metric[col]
        seed_on = IDLE_BALANCE_SEED[True].get(col, (None, None))[0]
        seed_off = IDLE_BALANCE_SEED[False].get(col, (None, None))[0]
        rows.append(
            {
                "label": label,
                "metric": col,
                "with": r["base_mean"],
                "without": r["cand_mean"],
                "change_pct": r["change_pct"],
                "p_value": r["p_value"],
                "seed_with": seed_on,
                "seed_without": seed_off,
                "seed_change_pct": (
                    100 * (seed_off / seed_on - 1) if seed_on and seed_off else None
                ),
            }
        )
    return pl.DataFrame(rows)


def format_idle_balance(cmp: pl.DataFrame) -> str:
    """``idle_balance_comparison`` as a text table, the seed beside the
    model."""
    if not isinstance(cmp, pl.DataFrame) or "seed_change_pct" not in cmp.columns:
        raise ConfigTypeError(
            "invalid cmp: expected the frame cases.idle_balance_comparison() returns"
        )

    def num(x: float | None, col: str) -> str:
        if x is None or x != x:
            return "-"
        if col == "lozi_fraction":
            return f"{100 * x:.2f}%"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.2f}" if col in ("sim_time_s", "elapsed_s", "cpus_utilized") else f"{x:,.1f}"

    def pct(x: float | None) -> str:
        return "-" if x is None or x != x else f"{x:+.1f}%"

    header = ["", "with", "without", "change", "p", "seed with", "seed without", "seed change"]
    rows = [
        [
            r["label"],
            num(r["with"], r["metric"]),
            num(r["without"], r["metric"]),
            pct(r["change_pct"]),
            "-" if r["p_value"] != r["p_value"] else f"{r['p_value']:.3f}",
            num(r["seed_with"], r["metric"]),
            num(r["seed_without"], r["metric"]),
            pct(r["seed_change_pct"]),
        ]
        for r in cmp.iter_rows(named=True)
    ]
    return text_table(header, rows)


def perf_stat_pair(frame: pl.DataFrame, label: str = "perf bench sched messaging") -> str:
    """The two ``perf stat -r N`` blocks, with and without newidle
    balancing, as the seed printed them (``sl.format_perf_stat``)."""
    frame = _need_frame(frame, ["idle_balance", "status"], "the frame idle_balance_runs() returns")
    out = []
    for on in (True, False):
        part = frame.filter(pl.col("idle_balance") == on)
        if part.height:
            tag = "with" if on else "without"
            out.append(format_perf_stat(part, f"{label} ({tag} idle_balance)"))
    return "\n\n".join(out)


def removal_effect(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Per point of ``keys`` (a sweep over them × ``idle_balance``): how
    removing newidle balancing changes the benchmark's time. ``time_ratio``
    is the median time without newidle balancing over the median time with
    it (< 1: removal helps); medians, because few-group pipe runs are
    bimodal (a packed and a spread placement) and one run in the slow mode
    moves a mean by tens of percent. Also ``time_ratio_mean`` (the ratio of
    the means), ``n``, the medians (``elapsed_s_median`` with,
    ``elapsed_s_median_off`` without), and the median of each of
    ``EFFECT_COUNTERS`` present, with (``<counter>``) and without
    (``<counter>_off``). Sorted by ``time_ratio``."""
    if isinstance(keys, str) or not isinstance(keys, Sequence):
        raise ConfigTypeError(
            f"invalid type for keys: expected a sequence of column names, got {type(keys).__name__}"
        )
    keys = list(keys)
    frame = _need_frame(
        frame, ["idle_balance", "status", "elapsed_s", *keys], "a sweep over keys x idle_balance"
    )
    counters = [c for c in EFFECT_COUNTERS if c in frame.columns]
    ok = frame.filter(pl.col("status") == "ok")
    g = ok.group_by([*keys, "idle_balance"], maintain_order=True).agg(
        pl.len().alias("n"),
        pl.col("elapsed_s").median().alias("elapsed_s_median"),
        pl.col("elapsed_s").mean().alias("elapsed_s_mean"),
        *[pl.col(c).median() for c in counters],
    )
    on = g.filter(pl.col("idle_balance")).drop("idle_balance")
    off = g.filter(~pl.col("idle_balance")).drop("idle_balance")
    if on.height == 0 or off.height == 0:
        raise ConfigError("invalid frame: needs finished runs with idle_balance True and False")
    j = on.join(off, on=keys, suffix="_off", how="inner")
    return j.with_columns(
        time_ratio=pl.col("elapsed_s_median_off") / pl.col("elapsed_s_median"),
        time_ratio_mean=pl.col("elapsed_s_mean_off") / pl.col("elapsed_s_mean"),
    ).sort("time_ratio")


__all__ = [
    "EFFECT_COUNTERS",
    "IDLE_BALANCE_SEED",
    "format_idle_balance",
    "idle_balance_comparison",
    "idle_balance_runs",
    "perf_stat_pair",
    "removal_effect",
]
