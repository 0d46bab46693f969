"""A scripted workload's programs as the core runs them (``workload::script``
in the Rust core): tasks with lists of operations, and the timers, mutexes,
condition variables and barriers they share. ``rtapp`` and ``replay`` build
them; ``workloads.rt_app`` and ``workloads.from_trace`` wrap the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import _core
from ..exceptions import ConfigError

#: The operation names, in the core's code order.
OPS: tuple[str, ...] = tuple(_core.SCRIPT_OPS)
#: Each operation's code by name.
CODES = {name: i for i, name in enumerate(OPS)}


@dataclass
class ScriptTask:
    name: str
    nice: int = 0
    policy: str = "normal"
    rt_priority: int | None = None
    cpus: list[int] | None = None
    mm: int | None = None
    start: str = "init"
    delay_ns: int = 0
    loops: int | None = 1
    loop_from: int = 0
    op: list[int] = field(default_factory=list)
    a: list[int] = field(default_factory=list)
    b: list[int] = field(default_factory=list)

    def add(self, name: str, a: int = 0, b: int = 0) -> None:
        self.op.append(CODES[name])
        self.a.append(a)
        self.b.append(b)

    def params(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "nice": self.nice,
            "policy": self.policy,
            "rt_priority": self.rt_priority,
            "cpus": self.cpus,
            "mm": self.mm,
            "start": self.start,
            "delay_ns": self.delay_ns,
            "loops": self.loops,
            "loop_from": self.loop_from,
            "op": self.op,
            "a": self.a,
            "b": self.b,
        }


@dataclass
class Script:
    """Tasks and shared objects; objects are numbered by name on first use."""

    tasks: list[ScriptTask] = field(default_factory=list)
    timers: dict[str, bool] = field(default_factory=dict)  # name -> absolute
    mutexes: dict[str, int] = field(default_factory=dict)
    conds: dict[str, int] = field(default_factory=dict)
    barriers: dict[str, int] = field(default_factory=dict)  # name -> id
    barrier_users: list[int] = field(default_factory=list)
    duration_ns: int | None = None
    net_costs: bool = False
    #: A fair task's timed sleeps end 50 µs late (the kernel's default
    #: timer slack); off for a replay, whose recorded sleeps hold it.
    timer_slack: bool = True

    def timer(self, name: str, absolute: bool) -> int:
        if name not in self.timers:
            self.timers[name] = absolute
        elif self.timers[name] != absolute:
            raise ConfigError(
                f"invalid timer {name!r}: used in both relative and absolute mode; "
                "expected one mode per timer"
            )
        return list(self.timers).index(name)

    def mutex(self, name: str) -> int:
        return self.mutexes.setdefault(name, len(self.mutexes))

    def cond(self, name: str) -> int:
        return self.conds.setdefault(name, len(self.conds))

    def barrier(self, name: str) -> int:
        if name not in self.barriers:
            self.barriers[name] = len(self.barriers)
            self.barrier_users.append(0)
        return self.barriers[name]

    def nr_ops(self) -> int:
        return sum(len(t.op) for t in self.tasks)

    def params(self) -> dict[str, Any]:
        n = self.nr_ops()
        if n > _core.SCRIPT_MAX_OPS:
            raise ConfigError(
                f"invalid workload: {n:,} operations exceed the limit of "
                f"{_core.SCRIPT_MAX_OPS:,} per script (fewer loops, or a shorter trace)"
            )
        return {
            "tasks": [t.params() for t in self.tasks],
            "timers": list(self.timers.values()),
            "mutexes": len(self.mutexes),
            "conds": len(self.conds),
            "barriers": list(self.barrier_users),
            "duration_ns": self.duration_ns,
            "net_costs": self.net_costs,
            "timer_slack": self.timer_slack,
        }
