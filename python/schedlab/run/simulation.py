"""``simulate``: run one configuration."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from .. import _core
from .._check import checked_call, interval_to_ns, need_bool, need_int, seconds_to_ns
from ..config import CostModel, Kernel, Machine, costs_arg, kernel_arg, machine_arg
from ..groups import Group, groups_arg
from ..result import Result
from ..workloads import Workload, workload_arg
from .frame import config_row

DEFAULT_TRACE_LIMIT = 1_000_000


@checked_call("simulate")
def simulate(
    machine: Machine | str,
    kernel: Kernel | str,
    workload: Workload,
    *,
    seed: int | None = 0,
    duration_s: float | None = None,
    costs: CostModel | None = None,
    trace: bool = False,
    trace_limit: int = DEFAULT_TRACE_LIMIT,
    interval_s: float = 0.1,
    latency: bool = False,
    groups: Sequence[Group] | None = None,
) -> Result:
    """Run ``workload`` on ``machine`` under ``kernel``.

    A finite workload runs to completion; ``duration_s`` bounds simulated
    time (required for endless workloads such as spinners). ``seed=None``
    draws a fresh seed and records it in ``result.seed``. ``trace=True``
    keeps up to ``trace_limit`` scheduler events (``result.trace``; at most
    ``MAX_TRACE_ROWS``, 2·10⁷). A workload of more than ``MAX_TASKS`` (10⁶)
    tasks is refused; vmstat keeps at most 400 MB of rows (docs, "Errors and limits").
    ``interval_s`` is the vmstat / CPU-timeline sampling interval.
    ``latency=True`` keeps every task's scheduling delays as ``perf sched
    latency`` counts them (``result.latency()``, the ``latency_*`` and
    ``wakeup_latency_*`` metrics), in histograms bounded by the task count
    (no trace needed).
    ``groups``: the run's task groups (``schedlab.Group``: cgroup CPU
    shares, CFS bandwidth limits, ``cpu.idle``; docs/groups.md), which
    ``Workload.with_tasks(group=...)`` places tasks in; their CPU time and
    ``cpu.stat`` counters are ``result.groups``.
    The GIL is released while the model runs; Ctrl-C stops it.
    """
    m = machine_arg(machine)
    k = kernel_arg(kernel)
    costs = costs_arg(costs)
    if costs is None:
        costs = CostModel.preset(m)
    workload = workload_arg(workload)
    if groups is not None:
        workload = workload.with_groups(groups_arg(groups))
    if seed is None:
        seed = secrets.randbits(63)
    seed = need_int("seed", seed, lo=0, hi=2**64 - 1)
    duration_ns = None if duration_s is None else seconds_to_ns("duration_s", duration_s)
    need_bool("trace", trace)
    need_bool("latency", latency)
    limit = need_int("trace_limit", trace_limit, lo=1, hi=_core.MAX_TRACE_ROWS)
    interval_ns = interval_to_ns("interval_s", interval_s)
    kf = {k2: v for k2, v in k.to_dict().items() if k2 != "name"}
    raw = _core.simulate(
        m.to_dict(),
        k.name,
        kf,
        costs.to_dict(),
        workload.kind,
        workload.params,
        seed=seed,
        duration_ns=duration_ns,
        trace_limit=limit if trace else None,
        interval_ns=interval_ns,
        latency=latency,
        groups=[g.to_core() for g in workload.groups] or None,
    )
    return Result(raw, config_row(m, k, costs, workload, seed, duration_s))
