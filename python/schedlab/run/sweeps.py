"""``sweep``: a grid of configurations × replicates, run in parallel, as one
polars DataFrame — locally on a rayon pool, or chunked over any
``concurrent.futures`` executor (Dask, Ray, a process pool). It plans the
runs (``plan.plan_sweep``) and executes them (``execute.execute``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import polars as pl

from .._check import checked_call
from .._progress import ProgressArg
from ..config import CostModel, Kernel, Machine
from ..groups import Group, groups_arg
from ..workloads import Workload, workload_arg
from .execute import execute
from .plan import plan_sweep


@checked_call("sweep")
def sweep(
    machine: Machine | str,
    kernel: Kernel | str,
    workload: Workload,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    replicates: int = 1,
    seed: int = 0,
    threads: int | None = None,
    progress: ProgressArg = True,
    executor: Executor | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    costs: CostModel | None = None,
    duration_s: float | None = None,
    interval_s: float = 0.1,
    chunk_size: int | None = None,
    latency: bool = False,
    memory_limit: int | None = None,
    groups: Sequence[Group] | None = None,
) -> pl.DataFrame:
    """Run ``workload`` over the cartesian product of ``grid`` × ``replicates``.

    Grid keys: any ``Kernel`` field, ``"kernel"`` and ``"machine"`` (preset
    names), any ``CostModel`` field, ``"workload.<param>"`` and, with
    ``groups`` (as ``simulate``'s), ``"group.<name>.<field>"`` (``shares``,
    ``weight``, ``quota_us``, ``period_us``, ``burst_us``, ``idle``: a sweep
    over quotas is one call; each group's counters are the
    ``group.<name>.<counter>`` columns). Returns a
    polars DataFrame, a row per run in (point, replicate) order: ``point``,
    ``replicate``, the configuration columns (every grid key among them),
    ``seed``, ``status`` (``"ok"``, ``"time_limit"``, ``"deadlock"``,
    ``"stalled"``, ``"error"``), ``status_detail``, every metric, and
    ``wall_s`` (the only wall-clock column). A point whose configuration is
    invalid is an ``"error"`` row, one whose overhead leaves its tasks no CPU
    time a ``"stalled"`` row; the others are unaffected.

    Per-run seeds derive from (``seed``, point, replicate), so the frame does
    not depend on ``threads``, chunking or ``executor``. ``threads=None``
    uses every core. ``checkpoint="x.parquet"`` writes finished rows as it
    goes; running the same sweep again resumes it. ``executor`` is any
    ``concurrent.futures.Executor`` (``dask.distributed.Client.get_executor()``,
    a Ray or process pool): the runs are cut into chunks, each a native sweep
    on a worker (``threads`` per chunk, default 1). ``chunk_size``: runs per
    chunk; by default max(4 × cores, runs / 32) locally, and on an executor
    one run per thread at first, then about 0.5 s of runs (from their
    ``wall_s``), so that progress moves from the first run. Ctrl-C stops
    promptly and raises ``SweepInterrupted`` carrying every finished run's
    row (also those of the chunk under way; in ``.partial``, and in the
    checkpoint if given); Ctrl-C or any other exception cancels an
    executor's chunks not started. An exception from user code (the
    ``progress`` callback, the executor, a chunk's future) stops the sweep
    the same way: it raises ``SimulationError`` with the finished rows in
    ``.partial`` (and the checkpoint), the exception as its ``__cause__``;
    so does a chunk result that is not ``run_chunk``'s (a list of outcome
    dicts), named in the message. Runs take no
    periodic vmstat samples (rows carry metrics only), so ``interval_s`` has
    no effect; every number but ``events`` equals ``simulate``'s.
    ``latency=True`` adds the scheduling-delay columns ``latency_count``,
    ``latency_mean_us``, ``latency_p50_us`` / ``_p90_us`` / ``_p99_us``,
    ``latency_max_us`` and the same ``wakeup_latency_*`` (as
    ``simulate(..., latency=True)``'s metrics).

    Before any run, the sweep's peak memory is estimated (the runs under
    way, every finished row held until the frame is built) and a sweep
    above ``memory_limit`` bytes is refused with a ``ConfigError`` naming
    the run count and the estimate; the default is half the memory the
    process may use (RAM, its cgroup's limit, ``RLIMIT_AS``: see
    ``schedlab.run.estimate``). A checkpoint that cannot be written (a full
    disk) raises ``OutputError`` with every finished row in its ``partial``.
    """
    if groups is not None:
        workload = workload_arg(workload).with_groups(groups_arg(groups))
    plan = plan_sweep(
        machine,
        kernel,
        workload,
        grid,
        replicates=replicates,
        seed=seed,
        threads=threads,
        progress=progress,
        executor=executor,
        costs=costs,
        duration_s=duration_s,
        interval_s=interval_s,
        latency=latency,
    )
    return execute(
        plan, plan.nthreads, progress, executor, checkpoint, chunk_size, memory_limit=memory_limit
    )
