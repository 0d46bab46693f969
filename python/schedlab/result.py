"""``Result``: one run's metrics and tables, as polars DataFrames."""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from . import _core
from ._check import checked_call
from .analysis.latency import latency_histogram, latency_table
from .exceptions import ConfigError
from .groups import GROUP_COUNTERS
from .io.ftrace import write_ftrace
from .io.output import output_errors
from .io.pftrace import write_perfetto

#: Metrics every run reports (workloads add their own, e.g. ``throughput``).
#: The metrics every run reports, in order (``schedlab.metric_info()``
#: documents each).
CORE_METRICS = tuple(name for family, name, *_ in _core.METRIC_INFO if family == "core")


class Result:
    """The outcome of ``simulate``.

    - ``status``: ``"ok"``, ``"time_limit"`` (a finite workload hit
      ``duration_s``), ``"deadlock"``, ``"stalled"`` (the progress watchdog:
      tasks runnable but none ran for 1 s of simulated time, the scheduler
      overhead taking every CPU) or ``"error"``; ``status_detail`` says why
      for the last two.
    - ``metrics``: ``dict[str, float]`` — perf-stat-like counters, CPU time
      split, and the workload's own figures.
    - ``to_frame()``: one row, the configuration columns then the metrics.
    - ``tasks``, ``cpus``, ``vmstat``, ``trace``: polars DataFrames.
    - ``cpu_timeline``: CPUs × intervals numpy array of busy fraction.
    - ``runqueue_timeline``: CPUs × intervals numpy array of run-queue
      lengths at each interval's end.
    """

    def __init__(self, raw: Mapping[str, Any], config: dict[str, Any]) -> None:
        self._raw = raw
        self.config: dict[str, Any] = config
        self.status: str = raw["status"]
        self.status_detail: str = raw["status_detail"]
        self.metrics: dict[str, float] = dict(raw["metrics"])
        #: Simulated time the run covered (fork phase and exit included).
        self.sim_time_s: float = raw["elapsed_ns"] / 1e9
        #: What the benchmark reports (perf's Total time, VolanoMark's elapsed).
        self.elapsed_s: float = self.metrics["elapsed_s"]
        self.seed: int = config["seed"]

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_frame(self) -> pl.DataFrame:
        """One row: configuration columns, ``status``, then every metric."""
        row: dict[str, Any] = dict(self.config)
        row["status"] = self.status
        row["status_detail"] = self.status_detail
        row.update(self.metrics)
        return pl.DataFrame([row])

    @cached_property
    def tasks(self) -> pl.DataFrame:
        """A row per task: task (pid), name, nice, cpu (last), cpu_s, user_s,
        sys_s, wait_s (runnable but not running), voluntary_cs,
        involuntary_cs, migrations, wakeups, exited, tgid (the pid of the
        task's process: tasks sharing an address space are its threads) and
        process (its name as the workload names it), role (its role in the
        workload, ``Workload.roles()``), prio (``p->prio`` as ftrace prints
        it: 120 + nice, or 99 − rt_priority for an RT task); with
        ``Kernel.pelt`` on,
        also load_avg, runnable_avg and util_avg (PELT, at the task's exit or
        the end of the run)."""
        return pl.DataFrame(self._raw["tasks"])

    @cached_property
    def groups(self) -> pl.DataFrame:
        """A row per task group of the run (``simulate(..., groups=)``):
        ``group``, then ``cpu_s`` and ``wait_s`` (CPU time and runqueue wait
        of its tasks, its descendants' included), ``nr_periods``,
        ``nr_throttled``, ``throttled_s``, ``nr_bursts``, ``burst_s`` (its
        ``cpu.stat``; ``throttled_s`` is the throttled time of its runqueues
        summed over CPUs, throttles that ended). Empty without groups. The
        same numbers are the ``group.<name>.<counter>`` metrics."""
        names: list[str] = []
        for k in self.metrics:
            if k.startswith("group.") and k.endswith(".cpu_s"):
                names.append(k[len("group.") : -len(".cpu_s")])
        cols: dict[str, list[Any]] = {"group": names}
        for c in GROUP_COUNTERS:
            vals = [self.metrics[f"group.{n}.{c}"] for n in names]
            cols[c] = [int(v) for v in vals] if c.startswith("nr_") else vals
        schema = {
            "group": pl.String,
            **{c: pl.Int64 if c.startswith("nr_") else pl.Float64 for c in GROUP_COUNTERS},
        }
        return pl.DataFrame(cols, schema=schema)

    @cached_property
    def cpus(self) -> pl.DataFrame:
        """A row per CPU: topology, user_s, sys_s, idle_s, context_switches
        (every switch on that CPU, idle included, as vmstat counts), ticks,
        interrupts; with ``Kernel.pelt`` on, also the runqueue's load_avg,
        runnable_avg and util_avg at the end of the run."""
        return pl.DataFrame(self._raw["cpus"])

    @cached_property
    def vmstat(self) -> pl.DataFrame:
        """A row per sampling interval, like ``vmstat``: ``r`` (runnable tasks at
        the sample), ``in`` and ``cs`` per second, ``us``/``sy``/``id`` in %."""
        return pl.DataFrame(self._raw["vmstat"])

    @cached_property
    def schedstat(self) -> pl.DataFrame:
        """The balancer's own statistics, as ``/proc/schedstat`` names them: a
        row per (cpu, domain) with ``level`` (SIBLING/SMT, MC, CPU, NODE/NUMA),
        ``lb_count``, ``lb_balanced``, ``lb_failed``, ``lb_imbalance``,
        ``lb_gained``, ``lb_hot_gained``, ``lb_nobusyq``, ``lb_nobusyg`` — each
        suffixed ``_idle``, ``_busy`` or ``_newidle`` by idle type — then
        ``alb_count``, ``alb_failed``, ``alb_pushed``, ``ttwu_wake_remote``,
        ``ttwu_move_affine``, ``ttwu_move_balance``."""
        return pl.DataFrame(self._raw["schedstat"])

    @property
    def cpu_timeline(self) -> npt.NDArray[np.float64]:
        """CPUs × intervals busy fraction (0–1), ready for ``imshow``."""
        arr: npt.NDArray[np.float64] = self._raw["timeline"]
        return arr

    @property
    def runqueue_timeline(self) -> npt.NDArray[np.int64]:
        """CPUs × intervals run-queue length (runnable tasks, the running
        one included — vmstat's ``r`` per CPU) at the end of each interval;
        column ``k`` is at ``vmstat["time_s"][k]``. Sample finer with
        ``simulate(..., interval_s=...)``."""
        arr: npt.NDArray[np.int64] = self._raw["runqueue"]
        return arr

    @property
    def trace_truncated(self) -> bool:
        """True when the trace hit its row limit (rows past it were dropped)."""
        tr = self._raw["trace"]
        return bool(tr is not None and tr["dropped"] > 0)

    @cached_property
    def trace(self) -> pl.DataFrame | None:
        """Scheduler events with ftrace's fields, or ``None`` without ``trace=True``.

        Columns: time_ns, cpu, event (``sched_switch``, ``sched_wakeup``,
        ``sched_wakeup_new``, ``sched_migrate_task``, ``sched_process_exit``),
        pid (prev_pid for switches; 0 is idle), prev_state, next_pid,
        target_cpu, waker_pid, orig_cpu, dest_cpu — null where an event has
        no such field. ``waker_pid`` is the task running the wake-up (ftrace's
        ``common_pid`` of ``sched_waking``): the waker, the parent of a new
        task, or whatever runs on the CPU taking a timer interrupt (0: idle).
        """
        tr = self._raw["trace"]
        if tr is None:
            return None
        events = pl.Enum(_core.TRACE_EVENTS)
        # the event names from their codes inside polars (a numpy array of
        # names would take 72 bytes a row)
        df = pl.DataFrame(
            {
                "time_ns": tr["time_ns"],
                "cpu": tr["cpu"],
                "kind": tr["kind"],
                "pid": tr["pid"],
                "a": tr["a"],
                "b": tr["b"],
            }
        ).with_columns(
            pl.col("kind")
            .replace_strict(
                list(range(len(_core.TRACE_EVENTS))), _core.TRACE_EVENTS, return_dtype=events
            )
            .alias("event")
        )
        ev = pl.col("event")
        return df.select(
            "time_ns",
            "cpu",
            "event",
            "pid",
            pl.when(ev == "sched_switch")
            .then(
                pl.col("a").replace_strict(
                    list(range(len(_core.PREV_STATES))), _core.PREV_STATES, default=None
                )
            )
            .alias("prev_state"),
            pl.when(ev == "sched_switch").then(pl.col("b")).alias("next_pid"),
            pl.when(ev.is_in(["sched_wakeup", "sched_wakeup_new"]))
            .then(pl.col("a"))
            .alias("target_cpu"),
            pl.when(ev.is_in(["sched_wakeup", "sched_wakeup_new"]))
            .then(pl.col("b"))
            .alias("waker_pid"),
            pl.when(ev == "sched_migrate_task").then(pl.col("a")).alias("orig_cpu"),
            pl.when(ev == "sched_migrate_task").then(pl.col("b")).alias("dest_cpu"),
        )

    @property
    def balance_trace_truncated(self) -> bool:
        """True when ``balance_trace`` hit the trace's row limit."""
        tr = self._raw["trace"]
        return bool(tr is not None and tr["balance"]["dropped"] > 0)

    @cached_property
    def balance_trace(self) -> pl.DataFrame | None:
        """The balancer's passes, a row each, or ``None`` without ``trace=True``.

        Columns: time_ns (the pass's instant; a pass is instantaneous in the
        model), cpu (the CPU running it), kind (``periodic``: a CPU's own
        ``rebalance_domains()``; ``newidle``: ``idle_balance()`` in
        ``schedule()``; ``nohz``: ``nohz_idle_balance()`` on the kicked idle
        CPU, for itself or another idle CPU; ``active``: the stopper's
        ``active_load_balance_cpu_stop()`` on the busiest CPU), dst_cpu (the
        CPU pulling), domain and level (dst_cpu's sched domain, as in
        ``schedstat``), idle (``idle``/``busy``/``newidle``), outcome
        (``moved``, ``balanced``, ``failed``: a busiest queue but nothing
        moved, ``skipped``: not the group's balance CPU), moved (tasks),
        busiest (the busiest CPU found, null if none), active (the pass
        started an active balance), cost_ns (the pass's modelled CPU time,
        charged to cpu after it). Bounded by ``trace_limit`` like ``trace``.
        """
        tr = self._raw["trace"]
        if tr is None:
            return None
        b = tr["balance"]

        def names(col: str, labels: list[str]) -> pl.Expr:
            return (
                pl.col(col)
                .replace_strict(list(range(len(labels))), labels, return_dtype=pl.Enum(labels))
                .alias(col)
            )

        levels = self.schedstat.select(
            pl.col("cpu").cast(pl.Int32).alias("dst_cpu"),
            pl.col("domain").cast(pl.UInt8),
            "level",
        )
        df = pl.DataFrame({k: v for k, v in b.items() if k != "dropped"})
        return (
            df.with_columns(
                names("kind", _core.BALANCE_KINDS),
                names("idle", _core.IDLE_TYPES),
                names("outcome", _core.BALANCE_OUTCOMES),
                pl.when(pl.col("busiest") >= 0).then(pl.col("busiest")).alias("busiest"),
            )
            .join(levels, on=["dst_cpu", "domain"], how="left", maintain_order="left")
            .select(
                "time_ns",
                "cpu",
                "kind",
                "dst_cpu",
                "domain",
                "level",
                "idle",
                "outcome",
                "moved",
                "busiest",
                "active",
                "cost_ns",
            )
        )

    @property
    def pelt_trace_truncated(self) -> bool:
        """True when ``pelt_trace`` hit the trace's row limit."""
        tr = self._raw["trace"]
        return bool(tr is not None and tr["pelt"]["dropped"] > 0)

    @cached_property
    def pelt_trace(self) -> pl.DataFrame | None:
        """Each CPU's CFS runqueue PELT signals at each vmstat sample, or
        ``None`` without ``trace=True`` or on a kernel without PELT
        (``Kernel.pelt = "off"``).

        Columns: time_s (as ``vmstat["time_s"]``), time_ns, cpu, util_avg,
        load_avg, runnable_avg — the values ``cpu_util_cfs()`` (before its
        clamp to the capacity) and ``cpu_load()`` would read at that instant,
        read without changing the run. A row per CPU and sample, bounded by
        ``trace_limit``; ``simulate(..., interval_s=...)`` sets the spacing.
        """
        tr = self._raw["trace"]
        if tr is None or "util_avg" not in self._raw["cpus"]:
            return None
        p = tr["pelt"]
        df = pl.DataFrame({k: v for k, v in p.items() if k != "dropped"})
        # numpy's division, as vmstat's time_s is computed (polars' may round
        # differently in the last bit)
        return df.with_columns(pl.Series("time_s", p["time_ns"] / 1e9)).select(
            "time_s",
            "time_ns",
            "cpu",
            "util_avg",
            "load_avg",
            "runnable_avg",
        )

    def _latency_raw(self, what: str) -> Mapping[str, Any]:
        raw = self._raw.get("latency")
        if raw is None:
            raise ConfigError(
                f"Result.{what}() needs the run's scheduling delays: run it with "
                "simulate(..., latency=True)"
            )
        return dict(raw)

    def latency(self, by: str = "task", kind: str = "all") -> pl.DataFrame:
        """Scheduling delays as ``perf sched latency`` counts them (each
        switch-in after waiting: since the wake-up, or since the task was
        preempted), a row per group: ``by`` ``"task"`` (default), ``"name"``
        (perf's merge by comm), ``"role"``, ``"process"`` or ``"run"``;
        ``kind`` ``"all"`` (perf's) or ``"wakeup"`` (wake-up delays only).
        Columns: the keys, ``tasks``, ``count``, ``mean_us``, ``p50_us``,
        ``p90_us``, ``p99_us``, ``max_us``, ``total_s``; per task also
        ``max_start_s`` / ``max_end_s``. Percentiles are within 1/16 above
        the true value (``schedlab.analysis.latency``). Needs
        ``simulate(..., latency=True)``."""
        return latency_table(self._latency_raw("latency"), self.tasks, by, kind)

    def latency_histogram(self, by: str = "run", kind: str = "all") -> pl.DataFrame:
        """The scheduling delays' histogram, a row per non-empty bucket and
        group (``by``, ``kind`` as in ``latency()``): ``lo_us``, ``hi_us``,
        ``count``. Needs ``simulate(..., latency=True)``."""
        return latency_histogram(self._latency_raw("latency_histogram"), self.tasks, by, kind)

    def to_perfetto(self, path: str | os.PathLike[str], *, compact: bool = True) -> None:
        """Write the schedule to ``path`` as a Perfetto trace (open it in
        ui.perfetto.dev or Perfetto's trace processor): the trace's switches,
        wake-ups, migrations and exits as ftrace events (``sched_switch``,
        ``sched_waking`` + ``sched_wakeup``, ``sched_wakeup_new``,
        ``sched_migrate_task``, ``sched_process_exit``) in per-CPU ftrace
        event bundles, from which Perfetto builds its CPU scheduling tracks,
        thread states and ``sched`` / ``thread_state`` tables; the tasks as a
        process tree; the run-queue (and PELT) counters and the balancer's
        passes as tracks of their own. ``compact`` (default) writes switches
        and wakings in Perfetto's compact ``sched`` encoding, as its recorder
        does; ``compact=False`` writes every event in full; both decode to
        the same events. An existing file is replaced only once the new one
        is complete; a write that fails (a full disk) raises ``OutputError``.
        Needs ``trace=True`` and Perfetto's Python package
        (``pip install 'schedlab[perfetto]'``). See ``schedlab.io.pftrace``."""
        with output_errors("path", path):
            write_perfetto(self, path, compact=compact)

    def to_ftrace(self, path: str | os.PathLike[str], *, ns: bool = False) -> None:
        """Write the schedule to ``path`` as ftrace text, in the layout of the
        kernel's ``trace`` file (``# tracer: nop``; ``<comm>-<pid> [CPU]
        ..... SECS.USECS: sched_switch: prev_comm=...``) with the event
        formats of Linux v6.18, a text format Perfetto's UI and trace
        processor import. Timestamps are rounded to the microsecond as the kernel prints
        them; ``ns=True`` prints nanoseconds. Needs ``trace=True``. An
        existing file is replaced only once the new one is complete; a write
        that fails raises ``OutputError``. See ``schedlab.io.ftrace``."""
        with output_errors("path", path):
            write_ftrace(self, path, ns=ns)

    def __repr__(self) -> str:
        m = self.metrics
        return (
            f"<schedlab.Result {self.status} {self.config['workload']} on "
            f"{self.config['machine']}/{self.config['kernel']}: "
            f"elapsed {m['elapsed_s']:.4g} s, {m['context_switches']:.0f} cs, "
            f"{m['cpu_migrations']:.0f} migrations, {m['cpus_utilized']:.2f} CPUs utilized>"
        )

    def _repr_html_(self) -> str:
        head = html.escape(
            f"schedlab.Result — {self.config['workload']} on {self.config['machine']} "
            f"({self.config['nr_cpus']} CPUs), kernel {self.config['kernel']}, "
            f"seed {self.seed}: {self.status}"
        )
        rows = "".join(
            f"<tr><td style='text-align:left'>{html.escape(k)}</td>"
            f"<td style='text-align:right'>{v:,.6g}</td></tr>"
            for k, v in self.metrics.items()
        )
        return f"<div><b>{head}</b><table>{rows}</table></div>"


@checked_call("metric_info")
def metric_info() -> pl.DataFrame:
    """Every metric a run can report, one row each: ``family`` (``core``,
    reported by every run; ``trace``, with ``trace=True``; ``power``, with
    ``CostModel.turbo``/``cstates``; ``rt``, with RT tasks
    (``with_tasks(policy=...)`` or ``rt_kthreads``); ``group``, per task
    group; ``latency``, with ``latency=True``),
    ``name`` (a ``<placeholder>`` stands for a C-state or a group's name),
    ``unit``, ``meaning`` and ``source`` (the kernel counter or tool it
    stands for). A workload's own metrics are documented with the
    workload."""
    cols = ("family", "name", "unit", "meaning", "source")
    return pl.DataFrame(
        [dict(zip(cols, row, strict=True)) for row in _core.METRIC_INFO], schema=list(cols)
    )
