"""Case 1 — VolanoMark loopback, 2.6.37-rc1 (docs/cases/volanomark.md):
fab476228ba3 made ``pull_task()`` re-arm ``avg_idle`` on both runqueues of
every migration, defeating the ``avg_idle < sysctl_sched_migration_cost``
newidle throttle; b5482cfa1c95 and d5ad140bc150 restored it in 2.6.37.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from .._check import need_bool, need_frame, need_int
from .._progress import progress_bar
from .._table import text_table
from ..config import CostModel, Kernel, Machine
from ..exceptions import ConfigError, ConfigTypeError
from ..result import Result
from ..run.simulation import simulate
from ..workloads import volano

#: The three kernels of case 1, the good one first.
VOLANO_KERNELS = ("v2.6.36", "v2.6.37-rc1", "v2.6.37")

#: The seed's vmstat samples (3 per kernel) and throughput change, as
#: reported on LKML in November 2010 (Core2, JRockit, ``-count 25000 -rooms
#: 10``, ``sched_compat_yield=1``; the thread was not found again, see
#: docs/sources.md). Ranges are (low, high).
VOLANO_SEED: dict[str, dict[str, Any]] = {
    "v2.6.36": {
        "r": (394, 413),
        "in": (5100, 5300),
        "cs": (1_300_000, 1_350_000),
        "us": (38, 38),
        "sy": (62, 62),
        "id": (0, 0),
        "throughput_change_pct": 0.0,
    },
    "v2.6.37-rc1": {
        "r": (210, 373),
        "in": (11_600, 12_000),
        "cs": (900_000, 920_000),
        "us": (35, 36),
        "sy": (64, 64),
        "id": (0, 0),
        "throughput_change_pct": -30.0,
    },
}


class CaseInterrupted(KeyboardInterrupt):
    """Ctrl-C during ``volano_runs``: ``partial`` holds the runs that
    finished, ``{kernel: [Result, ...]}`` (a KeyboardInterrupt, so an
    uncaught one still stops the program)."""

    def __init__(self, partial: dict[str, list[Result]]) -> None:
        super().__init__(f"interrupted after {sum(map(len, partial.values()))} runs")
        self.partial = partial


class CaseRunFailed(ConfigError):
    """A run of the case did not finish (``status`` not ``"ok"``): the message
    names the kernel, the seed and the status; ``partial`` holds the runs
    that finished before it, ``{kernel: [Result, ...]}``, and ``failed`` the
    run that did not."""

    def __init__(self, message: str, partial: dict[str, list[Result]], failed: Result) -> None:
        super().__init__(message)
        self.partial = partial
        self.failed = failed


#: The comparison's columns: (label, metric, frame column). A column named
#: ``<metric>_per_s`` is the metric over the run's ``elapsed_s``.
_COLUMNS = (
    ("throughput", "throughput", "throughput"),
    ("cs/s", "context_switches", "context_switches_per_s"),
    ("in/s", "interrupts", "interrupts_per_s"),
    ("newidle/s", "newidle_balance_calls", "newidle_balance_calls_per_s"),
    ("migrations/s", "cpu_migrations", "cpu_migrations_per_s"),
    ("x-LLC handoffs", "cross_llc_fraction", "cross_llc_fraction"),
)


def volano_runs(
    machine: Machine | str = "core2-2s",
    kernels: Sequence[str] = VOLANO_KERNELS,
    *,
    rooms: int = 10,
    users: int = 20,
    messages: int = 50,
    seeds: Sequence[int] = (1, 2, 3),
    costs: CostModel | None = None,
    interval_s: float = 0.1,
    progress: bool = True,
    **kernel_changes: Any,
) -> dict[str, list[Result]]:
    """Case 1's runs: ``volano(rooms, users, messages)`` on ``machine`` under
    each kernel preset with ``compat_yield=True`` (the seed's
    ``sched_compat_yield = 1``) plus ``kernel_changes``, once per seed.
    Returns ``{kernel: [Result per seed]}`` in the given order; a tqdm bar
    counts the runs unless ``progress=False``. Ctrl-C raises
    ``CaseInterrupted`` carrying the finished runs; a run that does not
    finish raises ``CaseRunFailed`` (a ValueError) carrying them too."""
    need_bool("progress", progress)
    if isinstance(kernels, str) or not isinstance(kernels, Sequence) or not kernels:
        raise ConfigTypeError(
            "invalid type for kernels: expected a non-empty sequence of preset names, "
            f"got {type(kernels).__name__}"
        )
    if isinstance(seeds, str) or not isinstance(seeds, Sequence) or not seeds:
        raise ConfigTypeError(
            "invalid type for seeds: expected a non-empty sequence of ints, "
            f"got {type(seeds).__name__}"
        )
    seeds = [need_int("seeds item", s, lo=0, hi=2**64 - 1) for s in seeds]
    changes = {"compat_yield": True, **kernel_changes}
    ks = [Kernel(k, **changes) for k in kernels]
    w = volano(rooms=rooms, users=users, messages=messages)
    out: dict[str, list[Result]] = {k: [] for k in kernels}
    with progress_bar(
        total=len(ks) * len(seeds), desc="VolanoMark", unit="run", disable=not progress
    ) as bar:
        try:
            for name, k in zip(kernels, ks, strict=True):
                for s in seeds:
                    r = simulate(machine, k, w, costs=costs, seed=s, interval_s=interval_s)
                    if r.status != "ok":
                        raise CaseRunFailed(
                            f"VolanoMark run did not finish: kernel={name!r}, seed={s}: "
                            f"{r.status} ({r.status_detail})",
                            {k: v for k, v in out.items() if v},
                            r,
                        )
                    out[name].append(r)
                    bar.update()
        except KeyboardInterrupt:
            raise CaseInterrupted({k: v for k, v in out.items() if v}) from None
    return out


def runs_frame(runs: dict[str, list[Result]]) -> pl.DataFrame:
    """A row per run: ``kernel``, ``seed`` and every metric, plus the
    per-second rates of the comparison (``<metric>_per_s``)."""
    if not isinstance(runs, dict) or not runs:
        raise ConfigTypeError(
            "invalid type for runs: expected a non-empty dict of kernel -> list of "
            f"schedlab.Result (what volano_runs returns), got {type(runs).__name__}"
            + (" (empty)" if isinstance(runs, dict) else "")
        )
    rows = []
    for k, rs in runs.items():
        if not isinstance(rs, list) or not all(isinstance(r, Result) for r in rs):
            raise ConfigTypeError(
                f"invalid type for runs[{k!r}]: expected a list of schedlab.Result, "
                f"got {type(rs).__name__}"
            )
        for r in rs:
            m = dict(r.metrics)
            el = m["elapsed_s"]
            row: dict[str, Any] = {"kernel": k, "seed": r.seed, **m}
            for _, metric, col in _COLUMNS:
                if col != metric:
                    row[col] = m[metric] / el if el > 0 else float("nan")
            rows.append(row)
    return pl.DataFrame(rows)


def volano_comparison(frame: pl.DataFrame, base: str = "v2.6.36") -> pl.DataFrame:
    """The demo's table from ``runs_frame``: per kernel the mean of
    throughput (messages/s), cs/s, in/s, newidle balance passes/s,
    migrations/s and the fraction of packet handoffs that cross a
    last-level cache, each with its change against ``base`` in percent."""
    cols = [col for _, _, col in _COLUMNS]
    frame = need_frame("frame", frame, ["kernel", *cols], "a frame from runs_frame()")
    kernels = frame["kernel"].unique(maintain_order=True).to_list()
    if base not in kernels:
        raise ConfigError(f"invalid base={base!r}: expected one of the frame's kernels {kernels}")
    means = frame.group_by("kernel", maintain_order=True).agg(
        pl.len().alias("runs"), *[pl.col(c).mean() for c in cols]
    )
    b = means.filter(pl.col("kernel") == base).row(0, named=True)
    return means.with_columns(
        [(100 * (pl.col(c) / b[c] - 1)).alias(c + "_change_pct") for c in cols]
    )


def format_comparison(cmp: pl.DataFrame) -> str:
    """``volano_comparison`` as a compact text table, each value followed by
    its change against the base kernel."""
    header = ["kernel", *[label for label, _, _ in _COLUMNS]]
    rows = []
    for r in cmp.iter_rows(named=True):
        cells = [r["kernel"]]
        for _, m, c in _COLUMNS:
            value = f"{100 * r[c]:.1f}%" if m == "cross_llc_fraction" else f"{r[c]:,.0f}"
            cells.append(f"{value} ({r[c + '_change_pct']:+.0f}%)")
        rows.append(cells)
    return text_table(header, rows)


def seed_vmstat_table() -> pl.DataFrame:
    """The seed's vmstat ranges as a frame (``kernel``, column, low, high)."""
    rows = [
        {"kernel": k, "column": c, "low": float(v[0]), "high": float(v[1])}
        for k, d in VOLANO_SEED.items()
        for c, v in d.items()
        if isinstance(v, tuple)
    ]
    return pl.DataFrame(rows)


__all__ = [
    "VOLANO_KERNELS",
    "CaseInterrupted",
    "CaseRunFailed",
    "VOLANO_SEED",
    "format_comparison",
    "runs_frame",
    "seed_vmstat_table",
    "volano_comparison",
    "volano_runs",
]
