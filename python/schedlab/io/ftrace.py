"""A run's schedule as the kernel's ftrace would record it (``Result.to_ftrace``).

The events follow Linux **v6.18**'s ``include/trace/events/sched.h`` (the
formats below are unchanged since v4.14 except ``sched_process_exit``'s
``group_dead``, added in v6.16 by commit 3e816361e94a, "sched/tracepoints:
Move and extend the sched_process_exit() tracepoint"); the text layout is
that of the kernel's ``trace`` file with the ``nop`` tracer
(``kernel/trace/trace.c``: ``print_func_help_header_irq()``;
``kernel/trace/trace_output.c``: ``trace_print_context()``)::

    # tracer: nop
    #
    # entries-in-buffer/entries-written: 2424/2424   #P:2
    #
    #                                _-----=> irqs-off/BH-disabled
    ...
    #           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
    #              | |         |   |||||     |         |
              <idle>-0       [001] .....     0.000000: sched_switch: prev_comm=swapper/1
                  prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hackbench next_pid=1
                  next_prio=120
          receiver/0-2       [001] .....     0.000002: sched_migrate_task: comm=receiver/0
                  pid=2 prio=120 orig_cpu=1 dest_cpu=0
           hackbench-1       [001] .....     0.000002: sched_wakeup_new: comm=receiver/0
                  pid=2 prio=120 target_cpu=000

(one line per event; wrapped here). The formats:

- ``sched_switch``: ``prev_comm=%s prev_pid=%d prev_prio=%d
  prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d``;
- ``sched_waking``, ``sched_wakeup``, ``sched_wakeup_new``: ``comm=%s
  pid=%d prio=%d target_cpu=%03d``;
- ``sched_migrate_task``: ``comm=%s pid=%d prio=%d orig_cpu=%d
  dest_cpu=%d``;
- ``sched_process_exit``: ``comm=%s pid=%d prio=%d group_dead=%s``
  (``true`` when the task is the last live thread of its process).

Each ``sched_wakeup`` of ``r.trace`` is preceded by a ``sched_waking`` at the
same instant on the same CPU (the kernel emits both from
``try_to_wake_up()``; the model does not separate them in time).

- **common pid** (the ``<comm>-<pid>`` at the start of a line): the
  previous task for a switch; the waker (``r.trace["waker_pid"]``, the parent
  for ``sched_wakeup_new``) for the wake-ups; the task itself for
  migrations and exits (the model does not record which task ran a
  migration). pid 0 is the idle task: ``<idle>-0`` there, and
  ``swapper/N`` (prio 120) in the event fields, as the kernel prints it.
- **prio**: ``r.tasks["prio"]`` (``p->prio``: 120 + nice, 99 −
  rt_priority).
- **prev_state**: the letters of ``TASK_REPORT`` (``R``, ``S``, ``D``,
  ``X``); as a number (the Perfetto export) the kernel's 4.14+ encoding,
  ``1 << (task_state_index - 1)``: R = 0, S = 1 (TASK_INTERRUPTIBLE), D = 2
  (TASK_UNINTERRUPTIBLE), X = 16 (EXIT_DEAD). The model does not tell a
  preemption from a yield, so a running task switched out is ``R``, never
  ``R+``, and an exiting task is ``X`` (a real kernel shows ``Z`` for a
  process its parent has yet to reap).
- **comm**: ``task->comm`` holds ``TASK_COMM_LEN`` = 16 bytes with the NUL,
  so a task's comm is its name (``r.tasks["name"]``) cut to 15 bytes of
  UTF-8 (at a character boundary), as ``__set_task_comm()`` cuts it; and
  its whitespace becomes ``_`` so that the ``key=value`` fields and the
  ``<comm>-<pid>`` prefix split unambiguously (Perfetto's text importer
  splits the fields on spaces). The Perfetto export carries the same comms
  in its ftrace events and the full names in its process tree.
- **flags**: ``.....`` (irqs-off, need-resched, hardirq/softirq,
  preempt-depth, migrate-disable: the model does not track them).
- **timestamps**: ``SECS.USECS``, rounded to the microsecond as the kernel's
  ``ns2usecs()`` rounds; ``ns=True`` prints nine digits (the model's
  nanoseconds) instead.

When the trace hit its row limit (``r.trace_truncated``) the file ends at the
last row kept.

The event model (which events a row becomes, their fields, comms and
prev_state codes) is ``schedlab.io.events``, shared with the Perfetto
export; the file is written atomically (``schedlab.io.atomic``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .atomic import atomic_output
from .events import (
    EXIT,
    MIGRATE,
    PREV_STATE_CODES,
    SWITCH,
    TASK_COMM_LEN,
    SchedEvent,
    TaskTable,
    ftrace_comm,
    sched_events,
)

if TYPE_CHECKING:
    from ..result import Result

__all__ = ["TASK_COMM_LEN", "atomic_output", "ftrace_comm", "timestamp_text", "write_ftrace"]

# --- the text export -------------------------------------------------------

#: The nop tracer's header (``print_event_info()`` and
#: ``print_func_help_header_irq()`` in kernel/trace/trace.c, without tgids).
HEADER = """\
# tracer: nop
#
# entries-in-buffer/entries-written: {entries}/{entries}   #P:{cpus}
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
"""

#: prev_state numbers back to the letters ``sched_switch`` prints.
_STATE_LETTERS = {v: k for k, v in PREV_STATE_CODES.items()}


def timestamp_text(ts_ns: int, ns: bool) -> str:
    """``%5lu.%06lu`` of the microseconds rounded as ``ns2usecs()`` rounds,
    or nine digits of nanoseconds with ``ns``."""
    if ns:
        secs, rem = divmod(ts_ns, 1_000_000_000)
        return f"{secs:5d}.{rem:09d}"
    secs, rem = divmod((ts_ns + 500) // 1000, 1_000_000)
    return f"{secs:5d}.{rem:06d}"


class _Formatter:
    """Lines of the text export, with each task's recurring pieces (its
    line prefix, its ``comm= pid= prio=``) built once per CPU."""

    def __init__(self, tasks: TaskTable, ns: bool) -> None:
        self.tasks = tasks
        self.ns = ns
        self._prefix: dict[tuple[int, int], str] = {}
        self._head: dict[tuple[str, int, int], str] = {}

    def prefix(self, pid: int, cpu: int) -> str:
        """``<comm>-<pid> [CPU] ..... `` as ``trace_print_context()`` pads it."""
        p = self._prefix.get((pid, cpu))
        if p is None:
            who = "<idle>" if pid == 0 else self.tasks.comm(pid, cpu)
            p = self._prefix[(pid, cpu)] = f"{who:>16}-{pid:<7} [{cpu:03d}] ..... "
        return p

    def head(self, pid: int, cpu: int, field: str = "") -> str:
        """``comm=%s pid=%d prio=%d`` of ``pid``, each name after ``field``
        (``prev_``, ``next_``)."""
        key = (field, pid, cpu)
        h = self._head.get(key)
        if h is None:
            t = self.tasks
            h = self._head[key] = (
                f"{field}comm={t.comm(pid, cpu)} {field}pid={pid} {field}prio={t.prio(pid)}"
            )
        return h

    def fields(self, e: SchedEvent) -> str:
        """The event's fields as its ``TP_printk`` prints them."""
        if e.name == SWITCH:
            return (
                f"{self.head(e.pid, e.cpu, 'prev_')} prev_state={_STATE_LETTERS[e.a]} ==> "
                f"{self.head(e.b, e.cpu, 'next_')}"
            )
        if e.name == MIGRATE:
            return f"{self.head(e.pid, e.cpu)} orig_cpu={e.a} dest_cpu={e.b}"
        if e.name == EXIT:
            return f"{self.head(e.pid, e.cpu)} group_dead={'true' if e.a else 'false'}"
        return f"{self.head(e.pid, e.cpu)} target_cpu={e.a:03d}"

    def line(self, e: SchedEvent) -> str:
        return (
            f"{self.prefix(e.common_pid, e.cpu)}{timestamp_text(e.ts, self.ns)}: "
            f"{e.name}: {self.fields(e)}\n"
        )


def write_ftrace(r: Result, path: str | os.PathLike[str], *, ns: bool = False) -> None:
    """Write ``r``'s schedule to ``path`` as ftrace text (see the module
    docstring); an existing file is replaced only once the new one is
    complete."""
    from .._check import need_instance, need_output_path
    from ..exceptions import ConfigError

    path = need_output_path("path", path, force=True)
    need_instance("ns", ns, bool, "a bool")
    if r.trace is None:
        raise ConfigError(
            "Result.to_ftrace: this run has no trace; run simulate(..., trace=True) to record one"
        )
    fmt = _Formatter(TaskTable(r), ns)
    events = list(sched_events(r))
    with atomic_output(path, "w") as f:
        f.write(HEADER.format(entries=len(events), cpus=int(r.config["nr_cpus"])))
        f.writelines(map(fmt.line, events))
