"""Workloads: the benchmarks the model runs, as task state machines in the
Rust core. Each function here checks and normalises its arguments and returns
a ``Workload`` value for ``simulate``.
"""

from __future__ import annotations

import dataclasses
import numbers
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

import polars as pl

from . import _core
from ._check import (
    ascii_digits,
    checked_call,
    is_list,
    need_bool,
    need_choice,
    need_instance,
    need_int,
    need_number,
    need_scaled,
    need_str,
    short,
    show,
    type_name,
)
from .config import Machine
from .exceptions import ConfigError, ConfigTypeError
from .io import replay as _replay
from .io import rtapp as _rtapp

P = ParamSpec("P")
R = TypeVar("R")

#: CPU numbers run from 0 to the largest machine's last CPU (the core's
#: MAX_CPUS is 4096); the machine a run uses checks them again.
_MAX_CPU = 4095

#: The scheduling policies ``Workload.with_tasks`` names (the core's).
TASK_POLICIES = tuple(_core.TASK_POLICIES)

#: The longest CPU or sleep time of one step, in ns (1e12 µs).
_MAX_STEP_NS = 10**15


@dataclass(frozen=True)
class Workload:
    """A workload kind and its normalised parameters (what the core runs)."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    #: Every argument of the ``schedlab.workloads`` function that made it.
    args: dict[str, Any] = field(default_factory=dict)
    #: The ``with_tasks`` settings, in the order they were made (each a dict
    #: of ``role``, ``policy``, ``rt_priority``, ``nice``, ``cpus``, ``group``).
    tasks: tuple[dict[str, Any], ...] = ()
    #: The run's task groups (``simulate(..., groups=)`` puts them here for
    #: the run; a workload made by a ``schedlab.workloads`` function has none).
    groups: tuple[Any, ...] = ()
    #: What a recording shows of the tasks ``from_trace`` replays
    #: (``elapsed_s``, ``context_switches``, ``migrations``, …); empty for
    #: other workloads.
    recorded: dict[str, float] = field(default_factory=dict, compare=False)

    @checked_call("Workload.replace", fields="the arguments of the workload's function")
    def replace(self, **changes: Any) -> Workload:
        """The same workload with some arguments changed (validated again);
        its ``with_tasks`` settings are kept."""
        factory = _ALL_FACTORIES[self.kind]
        allowed = Workload.parameters(self.kind)
        for k in changes:
            if k not in allowed:
                raise ConfigError(
                    f"unknown {self.kind} parameter {k!r}: expected one of {', '.join(allowed)}"
                )
        w: Workload = factory(**{**self.args, **changes})
        return w._with_entries(self.tasks).with_groups(self.groups)

    @checked_call("Workload.with_tasks")
    def with_tasks(
        self,
        policy: str | None = None,
        rt_priority: int | None = None,
        nice: int | None = None,
        cpus: int | Sequence[int] | None = None,
        role: str | None = None,
        group: str | None = None,
    ) -> Workload:
        """A new workload whose tasks of ``role`` (``None``: every task) get
        these attributes when created — what ``chrt``, ``nice`` and
        ``taskset`` do to a benchmark run under them. ``None`` leaves an
        attribute as it was; a later call overrides an earlier one, field by
        field.

        ``policy``: ``"normal"``, ``"batch"``, ``"idle"``, ``"fifo"`` or
        ``"rr"`` (``TASK_POLICIES``; the last two run in the RT class, ahead
        of every fair task). ``rt_priority`` (1 to 99) only with an RT
        policy, and required by one (``chrt --fifo 1`` is
        ``policy="fifo", rt_priority=1``). ``nice``: -20 to 19 (a SCHED_IDLE
        task's weight is 3 whatever its nice). ``cpus``: a CPU number or a list (the affinity,
        checked against the machine when it runs). ``group``: the name of
        a task group the run defines (``simulate(..., groups=[sl.Group(...)])``,
        docs/groups.md): the tasks are created in it, as a benchmark started
        in a cgroup is. ``role``: one of
        ``roles(kind)`` (docs/tasks.md lists each workload's)."""
        if self.kind == "mix":
            raise ConfigError(
                "invalid with_tasks() on a mix: set task attributes on each workload before "
                "mixing them (workloads.mix([w1.with_tasks(...), w2]))"
            )
        if (
            policy is None
            and rt_priority is None
            and nice is None
            and cpus is None
            and group is None
        ):
            raise ConfigError(
                "invalid with_tasks(): it sets nothing; expected one or more of policy, "
                "rt_priority, nice, cpus, group"
            )
        if group is not None:
            need_str("group", group)
        entry = {
            "role": None if role is None else _plain(role),
            "policy": None if policy is None else _plain(policy),
            "rt_priority": None if rt_priority is None else _plain(rt_priority),
            "nice": None if nice is None else _plain(nice),
            "cpus": _cpuset(cpus),
            "group": None if group is None else _plain(group),
        }
        return self._with_entries((*self.tasks, entry))

    def with_groups(self, groups: tuple[Any, ...]) -> Workload:
        """The same workload carrying the run's task groups (what
        ``simulate(..., groups=)`` does; the groups are checked there)."""
        if tuple(groups) == self.groups:
            return self
        return dataclasses.replace(self, groups=tuple(groups))

    def _with_entries(self, entries: tuple[dict[str, Any], ...]) -> Workload:
        if not entries:
            return self
        params = {k: v for k, v in self.params.items() if k != "with_tasks"}
        params["with_tasks"] = [dict(e) for e in entries]
        _core.workload_check(self.kind, params)  # the core checks every entry
        return Workload(
            self.kind,
            params,
            dict(self.args),
            tuple(dict(e) for e in entries),
            self.groups,
            self.recorded,
        )

    @staticmethod
    def roles(kind: str) -> list[str]:
        """The roles of workload ``kind``'s tasks (what ``with_tasks(role=)``
        takes)."""
        need_str("kind", kind)
        if kind not in _core.WORKLOAD_KINDS:
            raise ConfigError(
                f"invalid workload kind {kind!r}: expected one of {', '.join(_core.WORKLOAD_KINDS)}"
            )
        return list(_core.WORKLOAD_ROLES.get(kind, ()))

    @staticmethod
    def parameters(kind: str) -> list[str]:
        """The parameter names of workload ``kind``."""
        need_str("kind", kind)
        if kind not in _core.WORKLOAD_KINDS:
            raise ConfigError(
                f"invalid workload kind {kind!r}: expected one of {', '.join(_core.WORKLOAD_KINDS)}"
            )
        return [p["arg"] for p in _core.WORKLOAD_PARAMS if p["kind"] == kind]

    def __repr__(self) -> str:
        a = ", ".join(f"{k}={v!r}" for k, v in self.args.items() if v is not None)
        t = "".join(
            ".with_tasks(" + ", ".join(f"{k}={v!r}" for k, v in e.items() if v is not None) + ")"
            for e in self.tasks
        )
        return f"{self.kind}({a}){t}"

    def tasks_label(self) -> str:
        """The ``with_tasks`` settings as one string (``""`` when none), e.g.
        ``"policy=batch; role=sender nice=5"``: the ``workload.tasks`` column
        of a result row."""
        return "; ".join(
            " ".join(f"{k}={v}" for k, v in e.items() if v is not None) for e in self.tasks
        )


def _checked_args(f: Callable[P, R]) -> Callable[P, R]:
    """``f``, refusing an unknown, missing or extra positional argument with
    a ``ConfigTypeError`` that names it and the arguments ``f`` takes
    (rather than Python's plain ``TypeError``)."""
    return checked_call(f"workloads.{f.__name__}")(f)


def _per_task(param: str, v: Any, n: int) -> list[Any]:
    """A scalar broadcast to ``n`` tasks, or a per-task list of length ``n``."""
    if is_list(v):
        if len(v) != n:
            raise ConfigError(
                f"invalid {param}={list(v)!r}: expected a single value or a list of "
                f"{n} (one per task in nice)"
            )
        return list(v)
    return [v] * n


def _us_to_ns(param: str, v: Any) -> int | None:
    if v is None:
        return None
    return need_scaled(param, v, 1000, 1, _MAX_STEP_NS, "µs", or_else=" or None")


def _cpuset(v: Any) -> list[int] | None:
    if v is None:
        return None
    if is_list(v):
        if len(v) == 0:
            raise ConfigError("invalid cpus=[]: expected a CPU number, a list of them, or None")
        return [need_int("cpus", c, lo=0, hi=_MAX_CPU) for c in v]
    if not isinstance(v, bool | str):
        return [need_int("cpus", v, lo=0, hi=_MAX_CPU)]
    raise ConfigTypeError(
        f"invalid type for cpus: got {type_name(v)} {v!r}, "
        "expected None, an int or a list of ints per task"
    )


@_checked_args
def spinners(
    nice: Sequence[int],
    run_us: float | Sequence[float | None] | None = None,
    sleep_us: float | Sequence[float | None] | None = None,
    cpus: Sequence[int | Sequence[int] | None] | None = None,
    yields: bool | Sequence[bool] | None = None,
    dist: str = "fixed",
) -> Workload:
    """Spinning tasks, one per entry of ``nice``.

    - ``run_us=None``: ``while(1);`` (or ``while(1) sched_yield();`` with
      ``yields``); otherwise each loop runs ``run_us`` of CPU, then sleeps
      ``sleep_us`` (a timer) if given.
    - ``run_us``, ``sleep_us``, ``yields``: one value for all tasks, or a list
      with one per task.
    - ``cpus``: ``None`` (any CPU), or per task ``None``, a CPU number or a
      list of allowed CPUs.
    - ``dist``: ``"fixed"`` durations, or ``"exp"`` — exponential with the given
      mean, drawn per loop from the run's seed.

    Spinners never end: ``simulate(..., duration_s=...)`` bounds them.
    """
    if not is_list(nice):
        raise ConfigTypeError(
            f"invalid type for nice: got {type_name(nice)} {nice!r}, expected a list of ints"
        )
    if len(nice) > _core.MAX_TASKS:  # refused before looking at (or copying) the values
        raise ConfigError(
            f"invalid nice=[{len(nice):,} values]: spinners(nice=...) makes one task per value; "
            f"{len(nice):,} tasks exceeds the limit of {_core.MAX_TASKS:,} tasks (about 600 bytes "
            "each; docs, 'Errors and limits')"
        )
    nices = [need_int(f"nice[{i}]", x, lo=-20, hi=19) for i, x in enumerate(nice)]
    n = len(nices)
    if n == 0:
        raise ConfigError("invalid nice=[]: expected a non-empty list of nice values")
    runs = [_us_to_ns("run_us", v) for v in _per_task("run_us", run_us, n)]
    sleeps = [_us_to_ns("sleep_us", v) for v in _per_task("sleep_us", sleep_us, n)]
    for r, s in zip(runs, sleeps, strict=True):
        if s is not None and r is None:
            raise ConfigError(
                "invalid sleep_us: a task with run_us=None never stops running, so it "
                "cannot sleep; give run_us too"
            )
    if cpus is None:
        sets: list[list[int] | None] = [None] * n
    else:
        if not is_list(cpus):
            raise ConfigTypeError(
                f"invalid type for cpus: got {type_name(cpus)} {cpus!r}, "
                "expected None or a list with one entry per task"
            )
        sets = [_cpuset(c) for c in _per_task("cpus", cpus, n)]
    ylist = [False if y is None else need_bool("yields", y) for y in _per_task("yields", yields, n)]
    params = {
        "nice": nices,
        "run_ns": runs,
        "sleep_ns": sleeps,
        "cpus": sets,
        "yields": ylist,
        "dist": _plain(dist),
    }
    _core.workload_check("spinners", params)
    args = {
        "nice": nices,
        "run_us": run_us,
        "sleep_us": sleep_us,
        "cpus": cpus,
        "yields": yields,
        "dist": dist,
    }
    return Workload("spinners", params, args)


#: The ``rt_kthreads`` dict's keys, as the core declares them.
_RT_KTHREADS_KEYS = tuple(p["name"] for p in _core.WORKLOAD_PARAMS if p["kind"] == "rt_kthreads")


@_checked_args
def rt_kthreads(
    watchdog: bool = True,
    *,
    watchdog_period_ms: float = 4000.0,
    watchdog_run_us: float = 10.0,
    irq_threads: int = 0,
    irq_cpus: int = 2,
    irq_prio: int = 50,
    irq_policy: str = "fifo",
    irq_period_us: float = 1000.0,
    irq_run_us: float = 50.0,
) -> dict[str, Any]:
    """The RT kernel threads of a real machine, for a workload's
    ``rt_kthreads=`` (docs/rt.md): one ``watchdog/N`` per CPU (pinned,
    SCHED_FIFO 99, every ``watchdog_period_ms``), and ``irq_threads``
    threaded IRQ handlers (SCHED_FIFO or SCHED_RR ``irq_prio``), each allowed
    on ``irq_cpus`` consecutive CPUs (2 or more lets it migrate, which is
    what makes a CPU RT-overloaded), woken every ``irq_period_us`` on average
    (exponential) for ``irq_run_us``. Returns the normalised parameters."""
    d: dict[str, Any] = {
        "watchdog": need_bool("rt_kthreads.watchdog", watchdog),
        "watchdog_period_ns": _scaled_param(
            "rt_kthreads", "watchdog_period_ms", watchdog_period_ms
        ),
        "watchdog_run_ns": _scaled_param("rt_kthreads", "watchdog_run_us", watchdog_run_us),
        "irq_threads": irq_threads,
        "irq_cpus": irq_cpus,
        "irq_prio": irq_prio,
        "irq_policy": irq_policy,
        "irq_period_ns": _scaled_param("rt_kthreads", "irq_period_us", irq_period_us),
        "irq_run_ns": _scaled_param("rt_kthreads", "irq_run_us", irq_run_us),
    }
    return _rt_check(d)


def _rt_check(d: dict[str, Any]) -> dict[str, Any]:
    """The normalised ``rt_kthreads`` values (ns), checked by the core: types,
    priorities, periods of 10 us to 1 hour, a burst shorter than its period,
    the IRQ thread count; the machine-dependent limits (irq_cpus, IRQ
    threads per CPU, RT demand above the CPU count) are checked at
    simulate/sweep, where the machine is known."""
    out = {k: _plain(v) for k, v in d.items()}
    _core.rt_kthreads_check(out)  # refuses a missing or an unknown key too
    return {k: out[k] for k in _RT_KTHREADS_KEYS}


def _plain(v: Any) -> Any:
    """``v`` as the plain Python value it stands for (a numpy integer as an
    ``int``, a ``str`` subclass such as a str-valued Enum member as its
    ``str``), so a workload's parameters and config rows hold plain values;
    whether the value is allowed is the core's to say."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral | str):
        return v
    return int(v) if isinstance(v, numbers.Integral) else str.__str__(v)


def _rt_param(v: Any) -> dict[str, Any] | None:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise ConfigTypeError(
            f"invalid type for rt_kthreads: got {type_name(v)} {v!r}, expected None or the "
            "dict schedlab.workloads.rt_kthreads() returns"
        )
    return _rt_check(v)


#: Every workload parameter as the core declares it (``_core.WORKLOAD_PARAMS``),
#: by (kind, builder argument).
_DECLARED: dict[tuple[str, str], dict[str, Any]] = {
    (p["kind"], p["arg"]): dict(p) for p in _core.WORKLOAD_PARAMS
}


def _int_param(kind: str, name: str, v: Any) -> int:
    """``v`` checked against the bounds the core declares for ``kind``'s ``name``."""
    p = _DECLARED[(kind, name)]
    return need_int(name, v, lo=p["min"], hi=p["max"])


#: A time argument's unit by its scale to the core's ns.
_TIME_UNITS = {1000: "µs", 1_000_000: "ms"}


def _scaled_param(kind: str, arg: str, v: Any) -> int:
    """``v`` in the builder's unit (µs or ms) as the core's integer ns (``v ×
    scale``), checked against the core's declared bounds before it is scaled
    (1e303 ms is refused rather than overflowing). A component's argument is
    named under it (``rt_kthreads.irq_run_us``)."""
    p = _DECLARED[(kind, arg)]
    shown = arg if kind in _core.WORKLOAD_KINDS else f"{kind}.{arg}"
    return need_scaled(shown, v, p["scale"], p["min"], p["max"], _TIME_UNITS[p["scale"]])


def _declared_range(kind: str, arg: str) -> tuple[Any, Any]:
    """The (min, max) the core declares for ``kind``'s argument ``arg``."""
    p = _DECLARED[(kind, arg)]
    return p["min"], p["max"]


@_checked_args
def hackbench(
    groups: int = 10,
    fds: int = 20,
    loops: int = 100,
    datasize: int = 100,
    ipc: str = "socket",
    mode: str = "process",
    *,
    sndbuf: int = 212992,
    skb_overhead: int = 668,
    parent_wakee_flips: int = 0,
    rt_kthreads: dict[str, Any] | None = None,
) -> Workload:
    """hackbench / ``perf bench sched messaging``.

    ``groups`` groups of ``fds`` senders and ``fds`` receivers; every sender
    writes ``loops`` rounds of one ``datasize``-byte message to each receiver
    of its group, over a pipe (``ipc="pipe"``) or an AF_UNIX socketpair
    (``"socket"``), as processes (``mode="process"``) or threads
    (``"thread"``). Defaults are perf's. Metrics: ``elapsed_s`` (perf's Total
    time), ``throughput`` (LKP KB/s), ``messages``, ``messages_per_s``.
    ``sndbuf`` (net.core.wmem_default) and ``skb_overhead`` (truesize beyond
    the payload) set when socket senders block. ``parent_wakee_flips``: the
    main process's ``wakee_flips`` as it starts forking (the distinct tasks
    it woke just before: perf's output to a pipe reader, RCU, kworkers),
    which every child inherits and ``wake_wide()`` reads: on 4.3+ kernels it
    decides how many of the start-up wake-ups pull workers to the main
    process's CPU, and so where the groups run
    (:func:`schedlab.parent_wakee_flips` reads it from a
    recording; docs/guide/schedule.md). ``rt_kthreads``: RT kernel
    threads running beside it (:func:`rt_kthreads`; docs/rt.md); runs with
    them also report ``irq_work``, ``rt_push_ipis``, ``rt_pulls``,
    ``rt_throttled_s`` and the other ``rt_*`` metrics.
    """
    params: dict[str, Any] = {
        "groups": _int_param("hackbench", "groups", groups),
        "fds": _int_param("hackbench", "fds", fds),
        "loops": _int_param("hackbench", "loops", loops),
        "datasize": _int_param("hackbench", "datasize", datasize),
        "ipc": _plain(ipc),  # the enum-valued parameters are checked by the core
        "mode": _plain(mode),
        "sndbuf": _int_param("hackbench", "sndbuf", sndbuf),
        "skb_overhead": _int_param("hackbench", "skb_overhead", skb_overhead),
        "parent_wakee_flips": _int_param("hackbench", "parent_wakee_flips", parent_wakee_flips),
    }
    size, overhead = params["datasize"], params["skb_overhead"]
    if params["ipc"] == "socket" and params["sndbuf"] < 2 * (size + overhead):
        # the core's own check, with the arguments it depends on named
        raise ConfigError(
            f"invalid sndbuf={params['sndbuf']}: expected at least two messages' truesize, "
            f"2 * (datasize={size} + skb_overhead={overhead}) = {2 * (size + overhead)}, "
            "for ipc='socket'"
        )
    rt = _rt_param(rt_kthreads)
    args = dict(params)
    args["rt_kthreads"] = rt
    if rt is not None:
        params["rt_kthreads"] = rt
    _core.workload_check("hackbench", params)
    return Workload("hackbench", params, args)


#: LKP's tests/hackbench: ``loops = 30000 * nr_cpu / nr_threads``.
LKP_LOOPS_PER_CPU = 30000


@_checked_args
def hackbench_lkp(
    machine: Any,
    nr_threads: str | int = "50%",
    mode: str = "threads",
    ipc: str = "pipe",
    *,
    loops: int | None = None,
) -> Workload:
    """rt-tests hackbench as the 0-day robot (LKP) runs it.

    LKP's job ``hackbench.yaml`` (``nr_threads: 50%``, ``mode: threads``,
    ``ipc: pipe`` for seed case 4) runs ``hackbench -g $nr_threads
    --$mode [--pipe] -l $loops`` with rt-tests' defaults (20 fds, 100-byte
    messages): ``nr_threads`` is the number of **groups**, a percentage of
    the machine's CPUs (``"50%"`` of ``skl-sp-2s``'s 112 is 56 groups, 2240
    threads) or a count; ``loops = 30000 * nr_cpu // nr_threads`` (60 000
    there) unless given. ``machine`` is a ``Machine`` or a preset name;
    ``mode`` is LKP's ``"threads"`` or ``"process"``. The result is
    ``hackbench(groups, 20, loops, 100, ipc, mode)``; its ``throughput``
    metric is LKP's ``hackbench.throughput`` (KB/s, every sender and
    receiver counted: ``sl.lkp_metrics``).
    """
    if isinstance(machine, str):
        machine = Machine.preset(machine)
    if not isinstance(machine, Machine):
        raise ConfigTypeError(
            f"invalid type for machine: got {type_name(machine)} {machine!r}, "
            "expected a Machine or a machine preset name"
        )
    nr_cpu = machine.nr_cpus
    if isinstance(nr_threads, str):
        pct = nr_threads[:-1] if nr_threads.endswith("%") else ""
        if not ascii_digits(pct, 6) or not 0 < int(pct) <= 100_000:
            raise ConfigError(
                f"invalid nr_threads={short(nr_threads)}: expected a percentage of the "
                "machine's CPUs from '1%' to '100000%' (e.g. '50%') or a group count"
            )
        groups = nr_cpu * int(pct) // 100
        derived = f"{pct}% of {machine.name}'s {nr_cpu} CPUs is {groups} groups"
        if groups < 1:
            raise ConfigError(
                f"invalid nr_threads={nr_threads!r}: {pct}% of {nr_cpu} CPUs is no group; "
                "expected a percentage giving at least one"
            )
    else:
        groups = need_int("nr_threads", nr_threads, lo=1, hi=100_000)
        derived = f"{groups} groups"
    try:  # the groups alone, so that a refusal names nr_threads, not groups
        hackbench(groups=groups, fds=20, loops=1, datasize=100)
    except ConfigError as e:
        raise ConfigError(
            f"invalid nr_threads={nr_threads!r}: {derived} of 20 fds, more than "
            f"hackbench runs ({e}); expected a smaller nr_threads"
        ) from None
    lkp_mode = need_choice("mode", mode, ["threads", "process"])
    if loops is None:
        loops = max(1, LKP_LOOPS_PER_CPU * nr_cpu // groups)
    return hackbench(
        groups=groups,
        fds=20,
        loops=loops,
        datasize=100,
        ipc=ipc,
        mode="thread" if lkp_mode == "threads" else "process",
    )


@_checked_args
def pipe_pingpong(loops: int = 100_000, mode: str = "process") -> Workload:
    """``perf bench sched pipe``: two tasks pass a 4-byte token through two
    pipes ``loops`` times. Metrics: ``elapsed_s``, ``usecs_per_op``,
    ``ops_per_s`` (one op is a round trip)."""
    params = {
        "loops": _int_param("pipe_pingpong", "loops", loops),
        "mode": _plain(mode),  # checked by the core
    }
    _core.workload_check("pipe_pingpong", params)
    return Workload("pipe_pingpong", params, dict(params))


@_checked_args
def volano(
    rooms: int = 10,
    users: int = 20,
    messages: int = 100,
    *,
    handle_us: float = 3.0,
    send_us: float = 2.0,
    enqueue_us: float = 0.5,
) -> Workload:
    """VolanoMark loopback: ``rooms`` chat rooms of ``users`` users, four
    threads per user (client and server, receive and send), strict
    turn-taking per room, every chat fanned out to the other ``users - 1``,
    ``sched_yield()`` after each received packet and each send batch.
    ``messages`` is VolanoMark's ``-count`` (chats per user).

    ``handle_us``, ``send_us``, ``enqueue_us``: JVM user time to handle a
    received packet, serialise one for sending, and enqueue one.
    Metrics: ``messages_sent`` (rooms·users·messages), ``messages_received``
    (× (users − 1)), ``messages`` (their sum) and ``throughput`` (messages/s),
    as VolanoMark prints them; ``handoffs`` (packets passed from one thread
    to another through a queue or a socket), ``handoffs_cross_llc`` (those
    the consumer read on a CPU of another last-level cache than the
    producer wrote them on) and ``cross_llc_fraction``.
    """
    params = {
        "rooms": _int_param("volano", "rooms", rooms),
        "users": _int_param("volano", "users", users),
        "messages": _int_param("volano", "messages", messages),
        "handle_ns": _scaled_param("volano", "handle_us", handle_us),
        "send_ns": _scaled_param("volano", "send_us", send_us),
        "enqueue_ns": _scaled_param("volano", "enqueue_us", enqueue_us),
    }
    _core.workload_check("volano", params)
    args = {
        "rooms": rooms,
        "users": users,
        "messages": messages,
        "handle_us": handle_us,
        "send_us": send_us,
        "enqueue_us": enqueue_us,
    }
    return Workload("volano", params, args)


#: The tests of AIM7's compute mix, each a workfile ``aim7`` runs alone
#: (LKP's single-test workfile, ``10 <test>``); ``"compute"`` runs the mix.
#: The core's list (``src/workload/aim7.rs``).
AIM7_TESTS = tuple(w for w in _core.AIM7_WORKFILES if w != "compute")
#: The measured shared cache-line operations per job of each test (0 for
#: every test on the development VM: docs/guide/workloads.md).
AIM7_SHARED_LINES = dict(zip(AIM7_TESTS, _core.AIM7_SHARED_LINES, strict=True))


@_checked_args
def aim7(
    tasks: int,
    jobs: int = 100,
    workfile: str = "compute",
    *,
    cpus: int | Sequence[int] | None = None,
    contention: bool = True,
    filesize_kb: int = 10,
    poolsize_kb: int = 1024,
    speed: float = 1.0,
    sync_io_us: float | None = None,
    syncs: bool = True,
    shared_lines: Mapping[str, int] | None = None,
) -> Workload:
    """AIM7 / re-aim-7, one load point: ``tasks`` children forked by the
    driver, each running the workfile's jobs (101 for ``"compute"`` at
    ``jobs=100``: the per-test quotas ``round(hits / 820 × jobs)``, at least 1)
    in its own random order, after the driver's ready handshake, ``sleep(1)``
    and start signal.

    - ``workfile``: ``"compute"`` (the 26-test compute mix) or one test name
      (``AIM7_TESTS``), as LKP's ``aim7`` runs it.
    - ``cpus``: a cpuset for the driver and every child (a CPU number or a
      list); ``None`` = all CPUs.
    - ``contention``: charge the tests that measured extra system time
      beside a second child the cache-line transfers of state shared with
      the other children (by the distance of their CPUs); ``False`` turns
      it off.
    - ``filesize_kb``, ``poolsize_kb``: reaim.config's ``FILESIZE`` and
      ``POOLSIZE`` (the shipped 10k and 1m by default): each child's disk
      files are ``filesize_kb + poolsize_kb // tasks`` KB, and the disk
      tests' costs follow that size (linear between the two sizes measured).
    - ``speed``: the modelled CPU's speed relative to the host the per-test
      costs were measured on (0.1 to 100); every measured CPU time is
      divided by it (the sync helpers' system time then loses the model's
      own fork/exit/reap charges, which do not scale). Blocked times are kept.
    - ``sync_io_us``: the time each ``system("sync")`` waits for writeback;
      ``None`` = as measured (the development VM's disk).
    - ``syncs``: the disk tests' ``system("sync")`` calls, each a forked
      ``sh -c sync`` the child waits for; ``False`` is reaim's ``-y``.
    - ``shared_lines``: ``{test: lines}``, cache-line operations per job on
      state shared with the other children, in place of the measured ones
      (``sl.workloads.AIM7_SHARED_LINES``: 0 for every test on the
      development VM) — a
      hypothesis to explore, e.g. ``{"page_test": 20_000}``.

    Metrics, as the driver prints them: ``jobs_per_min``,
    ``jobs_per_min_per_child``, ``real_s`` (start signal to last reap, whole
    ms), ``cpu_s`` (children's user + sys; ``child_user_s``,
    ``child_sys_s``), ``std_dev_s`` and ``std_dev_pct`` of the children's
    completion times, ``jti`` (Job Timing Index, an integer); plus
    ``procs_per_user``, ``contention_s``, ``shared_jobs``,
    ``contended_jobs``, ``contention_nodes_mean``, ``sync_calls`` and
    ``file_kb``. The per-test costs were measured on the development VM
    (docs/guide/workloads.md has the table and where each number came from).
    """
    params: dict[str, Any] = {
        "tasks": _int_param("aim7", "tasks", tasks),
        "jobs": _int_param("aim7", "jobs", jobs),
        "workfile": _plain(workfile),  # checked by the core
        "cpus": _cpuset(cpus),
        "contention": need_bool("contention", contention),
        "filesize_kb": _int_param("aim7", "filesize_kb", filesize_kb),
        "poolsize_kb": _int_param("aim7", "poolsize_kb", poolsize_kb),
        "speed": need_number("speed", speed),  # its range: the core's
        "sync_io_ns": _sync_io_ns(sync_io_us),
        "syncs": need_bool("syncs", syncs),
        "shared_lines": _aim7_lines(shared_lines),
    }
    _core.workload_check("aim7", params)
    args = {
        "tasks": tasks,
        "jobs": jobs,
        "workfile": workfile,
        "cpus": cpus,
        "contention": contention,
        "filesize_kb": filesize_kb,
        "poolsize_kb": poolsize_kb,
        "speed": speed,
        "sync_io_us": sync_io_us,
        "syncs": syncs,
        "shared_lines": None if shared_lines is None else dict(shared_lines),
    }
    return Workload("aim7", params, args)


#: One multiply-add of schbench's matrix loop on the development VM, ns
#: (``schbench -C``; docs/guide/workloads.md, "schbench").
SCHBENCH_MAC_NS: float = _core.SCHBENCH_MAC_NS


@_checked_args
def schbench(
    message_threads: int = 1,
    workers: int | None = None,
    runtime_s: int = 30,
    *,
    warmup_s: int = 0,
    operations: int = 5,
    sleep_us: int = 100,
    requests_per_sec: int = 0,
    cache_footprint_kb: int = 256,
    pipe_bytes: int = 0,
    skip_locking: bool = False,
    mac_ns: float = SCHBENCH_MAC_NS,
) -> Workload:
    """schbench (masoncl/schbench): ``message_threads`` message threads
    (``-m``), each waking ``workers`` worker threads (``-t``; None: the
    machine's CPUs divided among the message threads, rounded up, as
    schbench does) through futexes for ``runtime_s`` seconds (``-r``). A
    worker records its wake-up latency, then runs a request: ``usleep(
    sleep_us)`` (``-s``) and ``operations`` (``-n``) multiplications of
    matrices sized to ``cache_footprint_kb`` (``-F``) under the lock of
    the CPU it runs on (``skip_locking``: ``-L``), and records the request
    latency. ``requests_per_sec`` (``-R``) makes the message threads hand
    out that many requests a second instead; ``pipe_bytes`` (``-p``) is
    schbench's pipe mode (a ``memset()`` of that many bytes per wake-up,
    no request work); ``warmup_s`` (``-w``) drops the samples of the first
    seconds (schbench ignores it below 30 s of runtime). ``mac_ns``: one
    multiply-add of the matrix loop (``SCHBENCH_MAC_NS``, measured on the
    development VM), times the cost model's ``work_pct``.

    Metrics as schbench prints them, with its histogram and percentile
    rule: ``wakeup_p50_us``, ``wakeup_p90_us``, ``wakeup_p99_us``,
    ``wakeup_p999_us`` (and ``_p20_``, ``_min_``, ``_max_``,
    ``wakeup_samples``), the same ``request_*``, ``rps`` (its "average
    rps": requests / runtime; also ``throughput``), ``rps_p20``,
    ``rps_p50``, ``rps_p90`` (the once-a-second samples), ``requests``,
    ``workers``, and in pipe mode ``ops_per_sec``. A percentile without
    samples is 0, as schbench prints it. docs/guide/workloads.md describes
    the model and what it leaves out.
    """
    params: dict[str, Any] = {
        "message_threads": _int_param("schbench", "message_threads", message_threads),
        "workers": None if workers is None else _int_param("schbench", "workers", workers),
        "runtime_s": _int_param("schbench", "runtime_s", runtime_s),
        "warmup_s": _int_param("schbench", "warmup_s", warmup_s),
        "operations": _int_param("schbench", "operations", operations),
        "sleep_us": _int_param("schbench", "sleep_us", sleep_us),
        "requests_per_sec": _int_param("schbench", "requests_per_sec", requests_per_sec),
        "cache_footprint_kb": _int_param("schbench", "cache_footprint_kb", cache_footprint_kb),
        "pipe_bytes": _int_param("schbench", "pipe_bytes", pipe_bytes),
        "skip_locking": need_bool("skip_locking", skip_locking),
        "mac_ns": need_number("mac_ns", mac_ns),
    }
    _core.workload_check("schbench", params)
    args = {k: params[k] for k in params}
    return Workload("schbench", params, args)


def _sync_io_ns(v: Any) -> int | None:
    """``sync_io_us`` (µs, 0 allowed) as ns, or None."""
    if v is None:
        return None
    x = need_number("sync_io_us", v, positive=False)
    p = _DECLARED[("aim7", "sync_io_us")]
    lo, hi = p["min"] // p["scale"], p["max"] // p["scale"]
    if not lo <= x <= hi:
        raise ConfigError(
            f"invalid sync_io_us={v!r}: expected a number of µs from {lo} to {hi} or None"
        )
    return round(x * int(p["scale"]))


def _aim7_lines(v: Any) -> list[int] | None:
    """``{test: lines}`` as the core's list of 26, the measured count for
    each test not named."""
    if v is None:
        return None
    if not isinstance(v, Mapping):
        raise ConfigTypeError(
            f"invalid type for shared_lines: got {type_name(v)} {v!r}, expected a dict "
            "{test: lines} or None"
        )
    out = list(_core.AIM7_SHARED_LINES)
    for name, lines in v.items():
        if name not in AIM7_TESTS:
            raise ConfigError(
                f"invalid shared_lines key {name!r}: expected a test of the mix: "
                f"{', '.join(AIM7_TESTS)}"
            )
        out[AIM7_TESTS.index(name)] = need_int(
            f"shared_lines[{name!r}]", lines, lo=0, hi=_core.AIM7_MAX_SHARED_LINES
        )
    return out


@_checked_args
def rt_app(json: Any, *, run_scale: float = 1.0) -> Workload:
    """An rt-app workload description (a path, a JSON string or a dict), as
    rt-app 1.0 runs it: ``tasks`` with ``instance``, ``loop``, ``phases``,
    ``policy``, ``priority``, ``cpus``, ``delay`` and the events
    ``run``, ``runtime``, ``sleep``, ``timer``, ``lock``/``unlock``,
    ``wait``/``signal``/``broad``/``sync``, ``barrier``, ``yield``;
    ``global.duration`` and ``default_policy``. Any other key is refused
    with its name (docs/rt-app.md has the grammar and what each event
    costs in the model).

    Each thread is a task named ``<task>-<instance>``; ``r.tasks`` gets
    rt-app's log figures per thread, means over its phase iterations:
    ``run_us`` (time in run events), ``period_us`` (an iteration's
    length), ``c_run_us`` and ``c_period_us`` (as configured),
    ``wu_lat_us`` (wake-up latency after timers), ``slack_us``,
    ``missed_periods`` (iterations with negative slack), ``log_lines``.
    A description that loops forever with no ``duration`` needs
    ``simulate(..., duration_s=...)``.

    ``run_scale``: the CPU time of a ``run`` event per µs configured. rt-app
    turns ``run`` into loops of its calibrated length (``pLoad``, a whole
    number of ns), so on a real host a run event takes a few percent more
    or less than configured; ``host.rtapp.run_scale_of`` measures it on a
    plain run.
    """
    scale = need_number("run_scale", run_scale)
    lo, hi = _declared_range("rt_app", "run_scale")
    if not lo <= scale <= hi:
        raise ConfigError(
            f"invalid run_scale={run_scale!r}: expected a factor from {lo:g} to {hi:g}"
        )
    script, threads = _rtapp.translate(json, run_scale=scale)
    params = script.params()
    _core.workload_check("rt_app", params)
    # a dict is copied: the caller's later changes must not reach the workload
    src = _rtapp.plain(json) if isinstance(json, Mapping) else json
    src = src if isinstance(src, str | dict) else str(src)
    return Workload("rt_app", params, {"json": src, "run_scale": run_scale})


@_checked_args
def from_trace(
    path: Any,
    *,
    tasks: str | Sequence[str] | None = None,
    time_scale: float = 1.0,
    net_costs: bool = True,
) -> Workload:
    """A recorded schedule replayed in the model: ``path`` is a
    ``perf sched record`` ``perf.data`` (read through ``perf script``), the
    text of ``perf script``, of ftrace / ``trace-cmd report``, or of
    ``Result.to_ftrace()``.

    Each recorded task runs its recorded CPU bursts (times ``time_scale``,
    which scales the work only); a wake-up by another replayed task waits
    for that task's wake-up in the model, a timed sleep keeps its recorded
    length, forks and exits happen where they did (docs/replay.md).
    ``tasks``: the names (comm) of the tasks to replay; by default every
    task but the idle task, kernel threads and the recording tool.
    ``net_costs``: a recorded burst already holds the kernel's work for the
    wake-ups the task made and its switch back in after a block, so the
    model's charge for those events (``wakeup_ns``, ``context_switch_ns``)
    comes off the next burst rather than being paid twice; ``False``
    replays the bursts as recorded. ``Workload.recorded`` holds what the
    recording shows (elapsed_s, context_switches, migrations, …) to compare
    the replay with. A list of lines stays in ``Workload.args`` as an
    ``io.replay.TraceLines``, shown by its length and digest.
    """
    names: list[str] | None
    if tasks is None:
        names = None
    elif isinstance(tasks, str):
        names = [tasks]
    elif is_list(tasks):
        names = [need_str(f"tasks[{i}]", x) for i, x in enumerate(tasks)]
    else:
        raise ConfigTypeError(
            f"invalid type for tasks: got {type_name(tasks)} {short(tasks)}, expected None, "
            "a task name or a list of names"
        )
    scale = need_number("time_scale", time_scale)
    lo, hi = _declared_range("from_trace", "time_scale")
    if not lo <= scale <= hi:
        raise ConfigError(
            f"invalid time_scale={time_scale!r}: expected a factor from {lo:g} to {hi:g}"
        )
    net = need_bool("net_costs", net_costs)
    lines: Iterable[str]
    if isinstance(path, str) and ("\n" in path or "\r" in path):
        raise ConfigError(
            f"invalid path: got text of {len(path.splitlines()):,} lines "
            f"({short(path)}), not a path; expected a path, or the text's lines as a list "
            "(text.splitlines())"
        )
    if isinstance(path, (str, os.PathLike)):
        lines, shown = _replay.read_text(path), str(path)
        src: Any = shown
    elif isinstance(path, _replay.TraceLines):  # a workload's own (Workload.replace)
        src, lines, shown = path, path.lines, None
    elif is_list(path):
        # kept as TraceLines: shown and compared by its digest, not line by line
        src = _replay.TraceLines(_trace_lines(path))
        lines, shown = src.lines, None
    else:
        raise ConfigTypeError(
            f"invalid type for path: got {type_name(path)} {short(path)}, expected a path or "
            "a list of trace lines"
        )
    script, rec = _replay.from_lines(
        lines, tasks=names, time_scale=scale, net_costs=net, path=shown
    )
    params = script.params()
    _core.workload_check("from_trace", params)
    args = {"path": src, "tasks": tasks, "time_scale": time_scale, "net_costs": net_costs}
    return Workload("from_trace", params, args, recorded=rec.as_dict())


def _trace_lines(v: Sequence[Any]) -> tuple[str, ...]:
    """``v``'s items, each checked to be text (``need_str``), a chunk of
    them at a time (a trace is millions of lines)."""
    lines = tuple(v)
    step = 4096
    for i in range(0, len(lines), step):
        chunk = lines[i : i + step]
        try:  # TypeError: an item not a str; UnicodeEncodeError: a lone surrogate
            text = "\n".join(chunk)
            text.encode()
        except (TypeError, UnicodeEncodeError):
            for j, x in enumerate(chunk, i):
                need_str(f"path[{j}]", x)
        if text.count("\n") + text.count("\r") != len(chunk) - 1:
            for j, x in enumerate(chunk, i):
                if "\n" in x or "\r" in x:
                    raise ConfigError(
                        f"invalid path[{j}]: an item of {len(x.splitlines()):,} lines "
                        f"({short(x)}); expected one trace line per item (split a text "
                        "with str.splitlines())"
                    )
    return lines


_FACTORIES: dict[str, Callable[..., Workload]] = {
    "spinners": spinners,
    "hackbench": hackbench,
    "pipe_pingpong": pipe_pingpong,
    "volano": volano,
    "aim7": aim7,
    "schbench": schbench,
    "rt_app": rt_app,
    "from_trace": from_trace,
}

#: The workload kinds, each with the function that makes it (``Workload.kind``
#: -> factory): what the CLI's ``--workload`` and a sweep spec's ``kind`` take.
FACTORIES = _FACTORIES


#: The most workloads one mix runs (the core's limit).
MAX_MIX = 16


@_checked_args
def mix(workloads: Sequence[Workload], names: Sequence[str] | None = None) -> Workload:
    """Several workloads side by side in one run — e.g. hackbench in a
    limited group beside a batch job.

    Each part runs as it would alone (its own task numbering, its
    ``with_tasks`` settings: set them, and each part's ``group``, before
    mixing). Its metrics come out under its name, ``<name>.<metric>``
    (``names`` defaults to each part's kind, numbered when a kind repeats:
    ``spinners``, ``spinners_2``); the run's own ``elapsed_s`` is its first
    finite part's. The mix ends when every finite part is done (endless
    parts such as spinners are stopped then); a mix of endless parts needs
    ``duration_s``. ``r.tasks`` lists every part's tasks in the order
    they were forked (each part's first, at start, in list order).
    """
    if not is_list(workloads):
        raise ConfigTypeError(
            f"invalid type for workloads: got {type_name(workloads)}, expected a list of Workload"
        )
    parts = list(workloads)
    if not 1 <= len(parts) <= MAX_MIX:
        raise ConfigError(
            f"invalid workloads=[{len(parts)} values]: expected 1 to {MAX_MIX} workloads"
        )
    for i, w in enumerate(parts):
        if not isinstance(w, Workload):
            raise ConfigTypeError(
                f"invalid type for workloads[{i}]: got {type_name(w)} {w!r}, expected a "
                "schedlab.workloads.* value"
            )
        if w.kind == "mix":
            raise ConfigError(
                f"invalid workloads[{i}]: a mix inside a mix; list every part in one mix"
            )
    if names is None:
        seen: dict[str, int] = {}
        auto: list[str] = []
        for w in parts:
            seen[w.kind] = seen.get(w.kind, 0) + 1
            auto.append(w.kind if seen[w.kind] == 1 else f"{w.kind}_{seen[w.kind]}")
        names_l = auto
    else:
        if not is_list(names):
            raise ConfigTypeError(
                f"invalid type for names: got {type_name(names)}, expected None or a list of str"
            )
        names_l = [need_str(f"names[{i}]", n) for i, n in enumerate(names)]
        if len(names_l) != len(parts):
            raise ConfigError(
                f"invalid names: {len(names_l)} names for {len(parts)} workloads; expected one each"
            )
    params = {
        "parts": [{"kind": w.kind, "params": w.params} for w in parts],
        "names": names_l,
    }
    _core.workload_check("mix", params)
    return Workload("mix", params, {"workloads": tuple(parts), "names": names})


_ALL_FACTORIES: dict[str, Callable[..., Workload]] = {**_FACTORIES, "mix": mix}

#: The columns of ``workload_info()``.
_INFO_COLS = ("kind", "arg", "type", "default", "required", "allowed", "doc", "name", "scale")


@checked_call("workload_info")
def workload_info() -> pl.DataFrame:
    """Every workload parameter, one row each, as the core declares it
    (``src/workload/params.rs``; the docs' *Workload parameters* reference
    is this table): ``kind`` (``sl.workloads.<kind>``, or the component
    ``rt_kthreads``, which hackbench takes as ``rt_kthreads=``), ``arg`` (the
    builder's argument, in its order), ``type`` (``int``, ``float``,
    ``bool``, ``choice``, ``cpus`` or ``other``), ``default`` (the builder's,
    as text: ``None`` for a ``None`` default, empty when ``required``),
    ``required`` (the builder has no default),
    ``allowed`` (what the core allows, as its errors say it), ``doc``, and
    ``name`` and ``scale``: the core's key and the factor from the builder's
    unit to it (``handle_us`` × 1000 is ``handle_ns``)."""
    rows = []
    for p in _DECLARED.values():
        row = {k: p[k] for k in _INFO_COLS}
        row["default"] = "" if p["required"] else repr(p["default"])
        if p["scale"] != 1 and p["type"] == "int":  # the builder's unit, not the core's
            lo, hi = p["min"] / p["scale"], p["max"] / p["scale"]
            row["type"] = "float"
            row["allowed"] = f"a number from {lo:g} to {hi:g} (times {p['scale']}: {p['name']})"
        if p["default"] is None and not p["required"] and "None" not in row["allowed"]:
            row["allowed"] = f"{row['allowed']}, or None"
        rows.append(row)
    return pl.DataFrame(rows, schema=list(_INFO_COLS))


__all__ = [
    "Workload",
    "aim7",
    "from_trace",
    "hackbench",
    "hackbench_lkp",
    "mix",
    "pipe_pingpong",
    "rt_app",
    "schbench",
    "spinners",
    "volano",
    "workload_info",
]


def workload_arg(w: Workload) -> Workload:
    """``w``, checked to be a ``Workload`` (made by a ``schedlab.workloads``
    function): one built by hand must still have a kind name (str) and its
    parameters as a dict with text keys, which the core reads."""
    w = need_instance("workload", w, Workload, "a schedlab.workloads.* value")
    if not isinstance(w.kind, str) or not isinstance(w.params, dict):
        raise ConfigTypeError(
            f"invalid type for workload: a Workload of kind {type_name(w.kind)} "
            f"{show(w.kind)} with params {type_name(w.params)}; expected one made by a "
            "schedlab.workloads function (kind a str, params a dict)"
        )
    if not all(isinstance(k, str) for k in w.params):
        raise ConfigTypeError(
            "invalid type for workload: its params have keys that are not str; expected one "
            "made by a schedlab.workloads function"
        )
    return w
