"""A run's schedule as kernel sched events: the model shared by the ftrace
text (``schedlab.io.ftrace``) and the Perfetto export
(``schedlab.io.pftrace``).

``sched_events(r)`` turns ``r.trace``'s rows into the events Linux v6.18's
``include/trace/events/sched.h`` defines, in order, a ``sched_waking``
before each ``sched_wakeup`` (the kernel emits both from
``try_to_wake_up()``); ``TaskTable`` gives each pid its comm (``task->comm``,
cut as ``__set_task_comm()`` cuts it: ``ftrace_comm``), prio and tgid; and
``prev_state_code`` the number ``sched_switch`` records for a prev_state
letter (4.14+: ``TASK_REPORT`` bits). The field conventions are set out in
``schedlab.io.ftrace``'s docstring.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ..result import Result

#: The kernel release whose event formats the exports follow.
KERNEL_RELEASE = "v6.18"
#: ``TASK_COMM_LEN``: a comm holds at most 15 bytes and the NUL.
TASK_COMM_LEN = 16
#: ``p->prio`` of the idle task (``swapper/N``) as ftrace prints it.
IDLE_PRIO = 120
#: prev_state letters → the value ``sched_switch`` records (4.14+:
#: ``TASK_REPORT`` bits, ``TASK_REPORT_MAX`` = 0x100 for a preemption).
PREV_STATE_CODES = {
    "R": 0,
    "S": 0x1,
    "D": 0x2,
    "T": 0x4,
    "t": 0x8,
    "X": 0x10,
    "Z": 0x20,
    "P": 0x40,
    "I": 0x80,
    "R+": 0x100,
}

SWITCH = "sched_switch"
WAKING = "sched_waking"
WAKEUP = "sched_wakeup"
WAKEUP_NEW = "sched_wakeup_new"
MIGRATE = "sched_migrate_task"
EXIT = "sched_process_exit"


class SchedEvent(NamedTuple):
    """One ftrace event. ``pid``, ``a`` and ``b`` by event: ``sched_switch``:
    prev_pid, prev_state (the kernel's number), next_pid; the wake-ups: the
    woken pid, target_cpu, 0; ``sched_migrate_task``: pid, orig_cpu,
    dest_cpu; ``sched_process_exit``: pid, group_dead (0/1), 0."""

    ts: int
    cpu: int
    name: str
    common_pid: int
    pid: int
    a: int
    b: int


def ftrace_comm(name: str) -> str:
    """``name`` as ``task->comm`` would hold it: whitespace as ``_``, cut to
    ``TASK_COMM_LEN - 1`` bytes of UTF-8 without splitting a character."""
    comm = "".join("_" if c.isspace() else c for c in name)
    raw = comm.encode()
    if len(raw) < TASK_COMM_LEN:
        return comm
    return raw[: TASK_COMM_LEN - 1].decode(errors="ignore")


class TaskTable:
    """Each task's comm, prio and tgid (from ``r.tasks``); pid 0 is the idle
    task, ``swapper/<cpu>``."""

    def __init__(self, r: Result) -> None:
        t = r.tasks
        pids = t["task"].to_list()
        self.names: dict[int, str] = dict(zip(pids, t["name"].to_list(), strict=True))
        self.comms = {pid: ftrace_comm(n) for pid, n in self.names.items()}
        self.prios: dict[int, int] = dict(zip(pids, t["prio"].to_list(), strict=True))
        self.tgids: dict[int, int] = dict(zip(pids, t["tgid"].to_list(), strict=True))
        self.processes: dict[int, str] = dict(
            zip(t["tgid"].to_list(), t["process"].to_list(), strict=True)
        )

    def comm(self, pid: int, cpu: int) -> str:
        if pid == 0:
            return f"swapper/{cpu}"
        return self.comms.get(pid, "<...>")

    def prio(self, pid: int) -> int:
        return IDLE_PRIO if pid == 0 else self.prios.get(pid, IDLE_PRIO)


def prev_state_code(state: str | None) -> int:
    """The number ``sched_switch`` records for a prev_state letter."""
    try:
        return PREV_STATE_CODES[state or "R"]
    except KeyError:
        raise ValueError(f"unknown prev_state {state!r} in the trace") from None


def sched_events(r: Result) -> Iterator[SchedEvent]:
    """``r.trace``'s rows as ftrace events, in order, a ``sched_waking``
    before each ``sched_wakeup`` (see the module docstring)."""
    trace = r.trace
    assert trace is not None
    tgid_of = dict(zip(r.tasks["task"].to_list(), r.tasks["tgid"].to_list(), strict=True))
    alive: dict[int, int] = {}
    for tgid in tgid_of.values():
        alive[tgid] = alive.get(tgid, 0) + 1
    cols = (
        "time_ns", "cpu", "event", "pid", "prev_state", "next_pid",
        "target_cpu", "waker_pid", "orig_cpu", "dest_cpu",
    )  # fmt: skip
    for ts, cpu, event, pid, state, nxt, target, waker, orig, dest in trace.select(
        cols
    ).iter_rows():
        if event == SWITCH:
            yield SchedEvent(ts, cpu, SWITCH, pid, pid, prev_state_code(state), nxt)
        elif event == WAKEUP or event == WAKEUP_NEW:
            waker = waker or 0
            if event == WAKEUP:
                yield SchedEvent(ts, cpu, WAKING, waker, pid, target, 0)
            yield SchedEvent(ts, cpu, event, waker, pid, target, 0)
        elif event == MIGRATE:
            yield SchedEvent(ts, cpu, MIGRATE, pid, pid, orig, dest)
        elif event == EXIT:
            tgid = tgid_of.get(pid, pid)
            alive[tgid] = alive.get(tgid, 1) - 1
            yield SchedEvent(ts, cpu, EXIT, pid, pid, int(alive[tgid] <= 0), 0)
        else:
            raise ValueError(f"unknown trace event {event!r}")
