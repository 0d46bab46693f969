"""A recorded schedule as a workload the model can replay.

Reads the ``sched_*`` tracepoints as text — ``perf script`` output of a
``perf sched record`` (``comm pid[/tid] [cpu] secs.usecs: sched:event:
fields``), the kernel's ftrace text (``comm-pid [cpu] flags secs.usecs:
event: fields``), ``trace-cmd report``'s (the same lines, with
libtraceevent's own layout of ``sched_switch`` and ``sched_wakeup``:
``comm:pid [prio] S ==> comm:pid [prio]``, ``comm:pid [prio] CPU:001``),
and the model's own ``Result.to_ftrace()`` — and turns each task into a
program (``io.script``):

- the CPU time between its switch-in and switch-out is **work**
  (``run``, scaled by ``time_scale``); a preemption (``prev_state=R``)
  does not end it;
- a block (``prev_state`` S, D, I…) ended by a ``sched_waking`` whose
  waker (the event's common pid: ``try_to_wake_up()`` fires it in the
  waker's context) is a replayed task on a CPU becomes a **dependency**:
  the waker posts a token at that point of its own program and the
  sleeper waits for it, so in the model the sleeper wakes when the
  model's waker gets there, not at the recorded instant;
- a block ended by anything else (a timer, an interrupt, a task left
  out) is a **timed sleep** of the recorded length;
- ``sched_process_fork`` of a replayed task by a replayed task is a
  **fork** at that point; a task first seen otherwise starts at its first
  event; ``prev_state`` X or Z is its **exit**;
- ``prio`` gives nice (``prio - 120``) or an RT priority (``99 - prio``,
  as SCHED_FIFO); with ``pid/tid`` (``perf script -F pid,tid``) or
  ftrace's ``(tgid)`` column, threads of one process share an address
  space.

Other lines are skipped (comments, other tracepoints); a line of an event
the replay reads (``READ_EVENTS``) that does not parse is a
``ConfigError`` naming it, as is a trace that gives its tasks more
operations than a script holds (``_core.SCRIPT_MAX_OPS``), refused while
it is read.

Left out by default: the idle task, kernel threads (by name), and the
recording tool (with ``perf sched record -- CMD`` only the command's task,
``perf-exec``, and its descendants are kept; in a tracefs recording of
``record_schedule``, whose first line names the command's pid
(``RECORD_HEADER``), that task and its descendants; otherwise tasks only
ever named ``perf`` or ``trace-cmd``).

Not recorded by these events, so not replayed: the CPU affinity, the
policy of a fair task (SCHED_BATCH/IDLE look like SCHED_OTHER), and the
user/system split of the work (replayed as user time).
"""

from __future__ import annotations

import gc
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import IO, NamedTuple

from .. import _core, inputs
from .._check import error_text
from ..exceptions import ConfigError
from .script import Script, ScriptTask


def _name(group: str, stop: str) -> str:
    """A task name as a pattern's group ``group``: any text, the run of
    characters up to ``stop`` tried first — the same match for a name
    without ``stop`` in it (nearly all), found several times faster than
    by ``.*?`` alone."""
    return rf"(?P<{group}>[^{stop}]*|.*?)"


#: The start of an event's line, up to its fields. perf script: ``COMM
#: PID[/TID] [CPU] SECS.USECS: [PERIOD] sched:EVENT:``; ftrace and
#: trace-cmd report: ``COMM-TID [(TGID)] [CPU] [FLAGS] SECS.USECS: EVENT:``
#: (FLAGS: the latency columns, irqs-off, need-resched, … ``d..2.``;
#: trace-cmd pads the event name with spaces). One pattern for both, so a
#: line is matched once whichever tool wrote it; not a comment (``#``).
_HEAD = re.compile(
    r"\s*(?![#\s])" + _name("comm", r"\s")
    + r"(?:-(?P<tid>\d{1,10})(?:\s+\(\s*(?P<tgid>[\d-]{1,10})\))?"  # ftrace
    r"|\s+(?P<pid>-?\d{1,10})(?:/(?P<ptid>-?\d{1,10}))?)"  # perf script (-1: unknown)
    r"\s+\[(?P<cpu>\d{1,5})\]\s+(?:\S{2,8}\s+)?"
    r"(?P<sec>\d{1,12})\.(?P<frac>\d{1,9}):\s+(?:\d+\s+)?(?:\w+:)?(?P<ev>sched_\w+):\s*",
    re.ASCII,
)  # fmt: skip
#: ``sched_switch``'s fields as the kernel prints them (ftrace, perf script) ...
_SWITCH = re.compile(
    "prev_comm=" + _name("pc", " ") + r" prev_pid=(?P<pp>\d{1,10}) prev_prio=(?P<ppr>-?\d{1,4})"
    r" prev_state=(?P<ps>\S+) ==> next_comm=" + _name("nc", " ")
    + r" next_pid=(?P<np>\d{1,10}) next_prio=(?P<npr>-?\d{1,4})",
    re.ASCII,
)  # fmt: skip
#: ... and as trace-cmd report prints them (libtraceevent's
#: plugin_sched_switch.c: ``COMM:PID [PRIO] STATE ==> COMM:PID [PRIO]``,
#: STATE the letters of ``prev_state``'s bits joined by ``|``, ``R`` for none).
_SWITCH_TC = re.compile(
    _name("pc", ":") + r":(?P<pp>\d{1,10}) \[(?P<ppr>-?\d{1,4})\] (?P<ps>\S+) ==> "
    + _name("nc", ":") + r":(?P<np>\d{1,10}) \[(?P<npr>-?\d{1,4})\]",
    re.ASCII,
)  # fmt: skip
#: The woken (migrated) task of ``sched_waking``, ``sched_wakeup``,
#: ``sched_wakeup_new`` (``sched_migrate_task``) as the kernel prints it
#: (``comm=COMM pid=PID prio=PRIO target_cpu=CPU``) ...
_WAKE = re.compile(
    "comm=" + _name("c", " ") + r" pid=(?P<p>\d{1,10}) prio=(?P<pr>-?\d{1,4})"
    r"(?: (?:success=\d )?target_cpu=(?P<t>\d{1,6}))?",
    re.ASCII,
)
#: ... and as trace-cmd report prints ``sched_wakeup`` and
#: ``sched_wakeup_new`` (``COMM:PID [PRIO] [success=1] CPU:CPU``).
_WAKE_TC = re.compile(
    _name("c", ":")
    + r":(?P<p>\d{1,10}) \[(?P<pr>-?\d{1,4})\](?: success=\d)?(?: CPU:(?P<t>\d{1,6}))?",
    re.ASCII,
)
_FORK = re.compile(
    "comm=" + _name("c", " ") + r" pid=(?P<p>\d{1,10}) child_comm=" + _name("cc", " ")
    + r" child_pid=(?P<cp>\d{1,10})",
    re.ASCII,
)  # fmt: skip

_WAKES = ("sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task")
#: The events the replay reads; a line of one whose fields do not parse is
#: refused.
READ_EVENTS = ("sched_switch", *_WAKES, "sched_process_fork")
#: A line that names one of them where an event's name goes (after its
#: timestamp) but whose start did not parse (a counter timestamp, the
#: latency format's CPU column, a line cut short).
_NAMES_READ = re.compile(r"\d:\s+(?:\d+\s+)?(?:\w+:)?(?P<ev>" + "|".join(READ_EVENTS) + r"):")

#: What each part of a line is expected to be, for a refusal.
_EXPECTED = {
    "start": "COMM PID[/TID] [CPU] SECS.USECS: sched:EVENT: FIELDS (perf script) or "
    "COMM-PID [(TGID)] [CPU] [FLAGS] SECS.USECS: EVENT: FIELDS (ftrace, trace-cmd report)",
    "sched_switch": "prev_comm=COMM prev_pid=PID prev_prio=PRIO prev_state=STATE ==> "
    "next_comm=COMM next_pid=PID next_prio=PRIO, or trace-cmd report's "
    "COMM:PID [PRIO] STATE ==> COMM:PID [PRIO]",
    **dict.fromkeys(
        _WAKES[:3],
        "comm=COMM pid=PID prio=PRIO target_cpu=CPU, or trace-cmd report's COMM:PID [PRIO] CPU:CPU",
    ),
    "sched_migrate_task": "comm=COMM pid=PID prio=PRIO orig_cpu=CPU dest_cpu=CPU",
    "sched_process_fork": "comm=COMM pid=PID child_comm=COMM child_pid=PID",
}

#: Kernel threads, by the start of their name.
KTHREADS = re.compile(
    r"^(swapper|kworker|ksoftirqd|migration|rcu_|rcuc|rcuo|kthreadd|watchdog|cpuhp|"
    r"idle_inject|irq/|kcompactd|khugepaged|kswapd|jbd2|oom_reaper|kauditd|kblockd|"
    r"kdevtmpfs|khungtaskd|ksmd|writeback|scsi_|kintegrityd|edac|ipv6_addrconf|kstrp|"
    r"napi/|psimon|ext4-|xfs|btrfs|nvme|kthrotld|mm_percpu|inet_frag|netns|kmpath|"
    r"pool_workqueue|ktimers|kvm|vhost|hwrng|khvcd|kaluad|ttm|card\d|zswap|"
    r"oom_|md\d|loop\d|spi\d|i915|nfsd|lockd|rpciod|xprtiod|kpsmoused|cryptd)"
)
#: Tools that record a schedule.
RECORDERS = ("perf", "trace-cmd")
#: The task ``perf record -- CMD`` runs CMD in (tools/perf/util/evlist.c,
#: ``evlist__prepare_workload``: the forked child is named ``perf-exec``
#: until it execs).
PERF_EXEC = "perf-exec"


#: The first line of a recording written by ``record_schedule`` through
#: tracefs: the recorded command's pid (its tasks are it and its
#: descendants) and how many events were lost.
RECORD_HEADER = "# schedlab record:"
_ROOT = re.compile(r"# schedlab record:.*?\bpid=(?P<pid>\d{1,10})\b", re.ASCII)


class Events(list["Event"]):
    """``parse``'s events, with the recorded command's pid when the text
    names it (``RECORD_HEADER``; None otherwise)."""

    root: int | None = None


class Switch(NamedTuple):
    """A ``sched_switch``'s fields."""

    prev_comm: str
    prev_pid: int
    prev_prio: int
    prev_state: str
    next_comm: str
    next_pid: int
    next_prio: int

    def text(self) -> str:
        return (
            f"prev_comm={self.prev_comm} prev_pid={self.prev_pid} prev_prio={self.prev_prio} "
            f"prev_state={self.prev_state} ==> next_comm={self.next_comm} "
            f"next_pid={self.next_pid} next_prio={self.next_prio}"
        )


class Wake(NamedTuple):
    """The task a ``sched_waking``, ``sched_wakeup``, ``sched_wakeup_new``
    wakes (a ``sched_migrate_task`` moves), and the CPU it is woken on
    (``target_cpu``; -1 when the line does not print it)."""

    comm: str
    pid: int
    prio: int
    target_cpu: int = -1

    def text(self) -> str:
        return f"comm={self.comm} pid={self.pid} prio={self.prio}"


class Fork(NamedTuple):
    """A ``sched_process_fork``'s parent and child."""

    comm: str
    pid: int
    child_comm: str
    child_pid: int

    def text(self) -> str:
        return (
            f"comm={self.comm} pid={self.pid} child_comm={self.child_comm} "
            f"child_pid={self.child_pid}"
        )


class Event(NamedTuple):
    """One recorded ``sched_*`` event."""

    ts: int  # ns
    cpu: int
    pid: int  # the common pid (tid): the task running when the event fired; -1 unknown
    tgid: int | None
    comm: str
    ev: str
    #: The fields of an event the replay reads (``READ_EVENTS``), parsed;
    #: None for another ``sched_*`` event.
    fields: Switch | Wake | Fork | None = None

    @property
    def rest(self) -> str:
        """The fields as the kernel prints them (the part the replay reads;
        ``""`` for an event it does not read), whatever tool wrote the line."""
        return "" if self.fields is None else self.fields.text()


class _Shared(dict[str, str]):
    """One ``str`` object for each name (a recording repeats a few names
    millions of times)."""

    def __missing__(self, key: str) -> str:
        self[key] = key
        return key


class _Ints(dict[str, int]):
    """One ``int`` object for each number's text (pids, prios, CPUs)."""

    def __missing__(self, key: str) -> int:
        v = self[key] = int(key)
        return v


#: ns per unit of a timestamp's fraction by its number of digits.
_FRACTION_NS = tuple(10 ** (9 - n) for n in range(10))
#: A line as a refusal shows it.
_SHOWN = 120


def _unparsed(path: str | None, n: int, line: str, ev: str, part: str) -> ConfigError:
    """A refusal of line ``n`` (from 0) of ``path`` (None: item ``n`` of the
    list of lines given as ``path``), an ``ev`` event whose ``part`` (its
    ``"start"`` or its ``"fields"``) does not parse: its place, its text
    (shortened) and what was expected."""
    where = f"path[{n}]" if path is None else f"path={path!r}, line {n + 1}"
    text = line.rstrip("\r\n")
    shown = repr(text) if len(text) <= _SHOWN else f"{text[:_SHOWN]!r}... ({len(text)} characters)"
    expected = _EXPECTED["start" if part == "start" else ev]
    does = "does" if part == "start" else "do"
    return ConfigError(
        f"invalid {where}: {shown}: a {ev} line whose {part} {does} not parse; expected {expected}"
    )


def parse(
    lines: Iterable[str], *, path: str | None = None, tasks: Sequence[str] | None = None
) -> Events:
    """The ``sched_*`` events of a recorded text, in time order (stable).

    ``path``: the file the lines are read from, named in a refusal (None:
    ``lines`` is the list given as ``path``, and a refusal names its item).
    A line of an event the replay reads (``READ_EVENTS``) that does not
    parse is refused; so, once ``lines`` have shown more switches than a
    script has operations, is a trace whose tasks so far (``tasks`` chooses
    them as in ``build``) need more (``_limit_ops``)."""
    collecting = gc.isenabled()
    # Millions of small tuples and no cycles among them: the cyclic garbage
    # collector's passes over them as they pile up would take a quarter to
    # a half of the time.
    gc.disable()
    try:
        return _parse(lines, path, tasks)
    finally:
        if collecting:
            gc.enable()


def _parse(lines: Iterable[str], path: str | None, tasks: Sequence[str] | None) -> Events:
    out = Events()
    names, nums = _Shared(), _Ints()  # one object per repeated name, number
    # tuple.__new__ makes an Event, Switch… without the Python-level
    # __new__ of a NamedTuple (a quarter of the cost of Switch(...)).
    new = tuple.__new__
    head, switch, switch_tc = _HEAD.match, _SWITCH.match, _SWITCH_TC.match
    wake, wake_tc, fork = _WAKE.match, _WAKE_TC.match, _FORK.match
    switches, check_at = 0, _core.SCRIPT_MAX_OPS
    last, ordered = -1, True
    for n, line in enumerate(lines):
        # the header (its command may name sched_something)
        if n < 8 and line.startswith(RECORD_HEADER):
            if r := _ROOT.match(line):
                out.root = int(r["pid"])
            continue
        if "sched_" not in line:
            continue
        m = head(line)
        if m is None:
            bad = _NAMES_READ.search(line)
            if bad is not None and not line.lstrip().startswith("#"):
                raise _unparsed(path, n, line, bad["ev"], "start")
            continue
        comm, tid, tgid, pid, ptid, cpu, sec, frac, ev = m.groups()
        at = m.end()
        fields: Switch | Wake | Fork | None = None
        if ev == "sched_switch":
            f = switch(line, at) or switch_tc(line, at)
            if f is None:
                raise _unparsed(path, n, line, ev, "fields")
            pc, pp, ppr, ps, nc, np_, npr = f.groups()
            fields = new(
                Switch,
                (names[pc], nums[pp], nums[ppr], names[ps], names[nc], nums[np_], nums[npr]),
            )
            switches += 1
        elif ev in _WAKES:
            f = wake(line, at) or (wake_tc(line, at) if ev != "sched_migrate_task" else None)
            if f is None:
                raise _unparsed(path, n, line, ev, "fields")
            c, p, pr, t = f.groups()
            fields = new(Wake, (names[c], nums[p], nums[pr], -1 if t is None else nums[t]))
        elif ev == "sched_process_fork":
            f = fork(line, at)
            if f is None:
                raise _unparsed(path, n, line, ev, "fields")
            c, p, cc, cp = f.groups()
            fields = new(Fork, (names[c], nums[p], names[cc], nums[cp]))
        if tid is not None:  # ftrace: COMM-TID, maybe (TGID)
            common, group = nums[tid], nums[tgid] if tgid and tgid.strip("-") else None
        elif ptid is not None:  # perf script: COMM PID/TID
            common, group = nums[ptid], nums[pid] if pid != "-1" else None
        else:
            common, group = nums[pid], None
        ts = int(sec + frac) * _FRACTION_NS[len(frac)]
        out.append(new(Event, (ts, nums[cpu], common, group, names[comm], names[ev], fields)))
        if ts < last:
            ordered = False
        last = ts
        if switches >= check_at:  # (then at twice as many: the scans cost O(lines))
            # the tasks the lines so far select: in a recording of
            # `perf sched record -- CMD` perf-exec comes first
            seen, _, _ = _scan(out)
            where = f"path[{n}]" if path is None else f"path={path!r} (by line {n + 1:,})"
            _limit_ops(seen, _select(seen, tasks, out.root), where, " so far")
            check_at *= 2
    if not ordered:
        out.sort(key=attrgetter("ts"))
    return out


@dataclass
class _Task:
    pid: int
    index: int = -1
    comms: list[str] = field(default_factory=list)
    tgid: int | None = None
    prio: int | None = None
    parent: int | None = None
    started: bool = False
    exited: bool = False
    on_cpu: int | None = None  # since when it runs
    acc: int = 0
    blocked: int | None = None  # since when it is blocked
    first_ts: int | None = None
    task: ScriptTask | None = None
    #: Blocks it was switched back in from (``_scan``), and whether it is
    #: blocked at the point ``_scan`` reached.
    resumed: int = 0
    in_block: bool = False


@dataclass
class Recorded:
    """What the recording shows for the replayed tasks."""

    #: From the first replayed task's first event to the last one's last.
    elapsed_s: float
    #: Switches away from a replayed task (``voluntary_cs`` +
    #: ``involuntary_cs`` of the model's tasks).
    context_switches: int
    voluntary_cs: int
    involuntary_cs: int
    #: ``sched_migrate_task`` events of replayed tasks.
    migrations: int
    tasks: int
    #: The replayed tasks' CPU time (the program's work before ``time_scale``).
    cpu_s: float
    #: Dependencies (token hand-overs) and timed sleeps in the programs.
    dependencies: int
    timed_sleeps: int

    def as_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.__dict__.items()}


def _kernel_thread(t: _Task) -> bool:
    return t.pid == 0 or any(KTHREADS.match(c) for c in t.comms)


def _select(
    tasks: dict[int, _Task], names: Sequence[str] | None, root: int | None = None
) -> set[int]:
    """The tasks replayed: those named ``names``; else the recorded
    command (``root``, a ``record_schedule`` header's pid, or ``perf
    sched record -- CMD``'s ``perf-exec``) and its descendants; else every
    task but the idle task, kernel threads and the recording tools."""
    if names is not None:
        return {p for p, t in tasks.items() if p != 0 and any(c in names for c in t.comms)}
    keep = {p for p, t in tasks.items() if not _kernel_thread(t)}
    roots = [p for p in keep if PERF_EXEC in tasks[p].comms]
    if root is not None and root in tasks:
        roots = [root]
    if roots:
        chosen = set(roots)
        grew = True
        while grew:
            grew = False
            for p in keep:
                if p not in chosen and tasks[p].parent in chosen:
                    chosen.add(p)
                    grew = True
        return chosen
    return {p for p in keep if not all(c in RECORDERS for c in tasks[p].comms)}


def build(
    events: Sequence[Event],
    *,
    tasks: Sequence[str] | None = None,
    time_scale: float = 1.0,
    net_costs: bool = True,
) -> tuple[Script, Recorded]:
    """The replay script of ``events`` and what the recording shows."""
    if not events:
        raise ConfigError(
            "invalid path: the recording has no sched_* events; expected `perf script` output of a "
            "`perf sched record`, ftrace/trace-cmd text, or Result.to_ftrace() output"
        )
    seen, have_waking, have_fork = _scan(events)
    chosen = _select(seen, tasks, getattr(events, "root", None))
    _limit_ops(seen, chosen, "path")
    if not chosen:
        named = sorted({c for t in seen.values() for c in t.comms})[:20]
        raise ConfigError(
            f"invalid tasks={list(tasks) if tasks is not None else None!r}: no task of the "
            f"trace is replayed; its tasks are named {', '.join(named)}"
        )
    wake_ev = "sched_waking" if have_waking else "sched_wakeup"
    # A recorded sleep already holds the kernel's timer slack.
    script = Script(net_costs=net_costs, timer_slack=False)
    # from the first event a replayed task runs in or switches in (else,
    # when the trace shows it only woken or forked by a task left out, as
    # by the idle task: the first event that names it)
    t0 = min(
        (e.ts for e in events if e.pid in chosen or _mentions(e, chosen)),
        default=None,
    )
    if t0 is None:
        t0 = min(e.ts for e in events if _names(e, chosen))
    order = sorted(chosen, key=lambda p: (seen[p].first_ts or 0, p))
    for p in order:
        t = seen[p]
        t.index = len(script.tasks)
        nice, policy, rtp = 0, "normal", None
        if t.prio is not None and 0 <= t.prio < 100:
            policy, rtp = "fifo", min(max(99 - t.prio, 1), 99)
        elif t.prio is not None and 100 <= t.prio <= 139:
            nice = t.prio - 120
        t.task = ScriptTask(
            name=t.comms[-1] if t.comms else str(p),
            nice=nice,
            policy=policy,
            rt_priority=rtp,
            mm=t.tgid if t.tgid is not None else None,
            start="init",
            loops=1,
        )
        script.tasks.append(t.task)
    scale = float(time_scale)
    stats = {"vol": 0, "invol": 0, "mig": 0, "deps": 0, "sleeps": 0, "cpu": 0}

    def flush(t: _Task) -> None:
        if t.acc > 0:
            assert t.task is not None
            t.task.add("run", max(1, round(t.acc * scale)))
            stats["cpu"] += t.acc
            t.acc = 0

    def start(t: _Task, ts: int) -> None:
        if not t.started:
            t.started = True
            assert t.task is not None
            t.task.delay_ns = max(0, ts - t0)

    last_ts = t0
    for e in events:
        if e.pid in chosen or _mentions(e, chosen):
            last_ts = e.ts
        f = e.fields
        if isinstance(f, Switch):
            pp, np_ = f.prev_pid, f.next_pid
            if pp in chosen:
                a = seen[pp]
                if not a.started:
                    start(a, t0)
                    a.on_cpu = t0
                if a.on_cpu is not None:
                    a.acc += e.ts - a.on_cpu
                    a.on_cpu = None
                st = f.prev_state
                if st.startswith("R"):
                    stats["invol"] += 1
                elif st[0] in "XZ":
                    stats["vol"] += 1
                    flush(a)
                    a.exited = True
                else:
                    stats["vol"] += 1
                    flush(a)
                    a.blocked = e.ts
            if np_ in chosen:
                b = seen[np_]
                if not b.started:
                    start(b, e.ts)
                if b.blocked is not None:  # its wake-up was not recorded
                    _sleep(b, e.ts, stats)
                b.on_cpu = e.ts
        elif e.ev == wake_ev:
            assert isinstance(f, Wake)
            p = f.pid
            if p not in chosen:
                continue
            t = seen[p]
            if not t.started:
                start(t, t0)
                t.blocked = t0
            if t.blocked is None:
                continue
            w = seen.get(e.pid)
            if e.pid in chosen and e.pid != p and w is not None and w.on_cpu is not None:
                w.acc += e.ts - w.on_cpu
                w.on_cpu = e.ts
                flush(w)
                assert w.task is not None and t.task is not None
                w.task.add("post", t.index)
                t.task.add("pend", w.index)
                t.blocked = None
                stats["deps"] += 1
            else:
                _sleep(t, e.ts, stats)
        elif e.ev == ("sched_process_fork" if have_fork else "sched_wakeup_new"):
            if isinstance(f, Fork):
                parent, child = f.pid, f.child_pid
            else:
                assert isinstance(f, Wake)
                parent, child = e.pid, f.pid
            if child not in chosen or seen[child].started:
                continue
            c = seen[child]
            pt = seen.get(parent)
            if parent in chosen and pt is not None and pt.on_cpu is not None:
                pt.acc += e.ts - pt.on_cpu
                pt.on_cpu = e.ts
                flush(pt)
                assert pt.task is not None and c.task is not None
                pt.task.add("fork", c.index)
                c.task.start = "fork"
                c.started = True
            else:
                start(c, e.ts)
        elif e.ev == "sched_migrate_task":
            assert isinstance(f, Wake)
            if f.pid in chosen:
                stats["mig"] += 1
    for p in order:
        t = seen[p]
        if t.on_cpu is not None:
            t.acc += last_ts - t.on_cpu
            t.on_cpu = None
        flush(t)
        if not t.started:
            start(t, t0)
    # A task forked by a task left out, or whose first event was its fork,
    # starts at once; one forked by a replayed task waits for the fork.
    rec = Recorded(
        elapsed_s=(last_ts - t0) / 1e9,
        context_switches=stats["vol"] + stats["invol"],
        voluntary_cs=stats["vol"],
        involuntary_cs=stats["invol"],
        migrations=stats["mig"],
        tasks=len(order),
        cpu_s=stats["cpu"] / 1e9,
        dependencies=stats["deps"],
        timed_sleeps=stats["sleeps"],
    )
    return script, rec


def _sleep(t: _Task, ts: int, stats: dict[str, int]) -> None:
    """A recorded block no replayed task ended: a timed sleep of its
    recorded length (``time_scale`` does not apply: the wait was not CPU
    work)."""
    assert t.task is not None and t.blocked is not None
    ns = max(1, ts - t.blocked)
    t.task.add("sleep", ns)
    t.blocked = None
    stats["sleeps"] += 1


def _mentions(e: Event, chosen: set[int]) -> bool:
    f = e.fields
    return isinstance(f, Switch) and (f.prev_pid in chosen or f.next_pid in chosen)


def _names(e: Event, chosen: set[int]) -> bool:
    """Whether ``e``'s fields name a task of ``chosen`` (woken, moved,
    forked or forking, switched)."""
    f = e.fields
    if isinstance(f, Wake):
        return f.pid in chosen
    if isinstance(f, Fork):
        return f.pid in chosen or f.child_pid in chosen
    return _mentions(e, chosen)


def _scan(events: Iterable[Event]) -> tuple[dict[int, _Task], bool, bool]:
    """Every task ``events`` name (by pid), with its names, tgid, first
    prio, parent and blocks resumed from; whether the events include
    ``sched_waking`` and ``sched_process_fork``."""
    seen: dict[int, _Task] = {}
    get = seen.get
    now = 0

    def task(pid: int, comm: str) -> _Task:
        t = get(pid)
        if t is None:
            t = seen[pid] = _Task(pid, first_ts=now)
        if not t.comms or t.comms[-1] != comm:
            t.comms.append(comm)
        return t

    have_waking = have_fork = False
    for e in events:
        now, _, pid, tgid, comm, ev, f = e
        # (get(pid) first: task()'s call is the slow path, a new task or name)
        if pid >= 0:  # not perf's -1, a task it could not name
            c = get(pid)
            if c is None or c.comms[-1] != comm:
                c = task(pid, comm)
            if tgid is not None:
                c.tgid = tgid
        if ev == "sched_switch":
            assert isinstance(f, Switch)
            a, b = get(f.prev_pid), get(f.next_pid)
            if a is None or a.comms[-1] != f.prev_comm:
                a = task(f.prev_pid, f.prev_comm)
            if b is None or b.comms[-1] != f.next_comm:
                b = task(f.next_pid, f.next_comm)
            if a.prio is None:
                a.prio = f.prev_prio
            if b.prio is None:
                b.prio = f.next_prio
            if b.in_block:
                b.resumed += 1
                b.in_block = False
            if f.prev_state[0] not in "RXZ":  # a block: not a preemption nor an exit
                a.in_block = True
        elif ev == "sched_waking" or ev == "sched_wakeup" or ev == "sched_wakeup_new":
            assert isinstance(f, Wake)
            have_waking |= ev == "sched_waking"
            t = task(f.pid, f.comm)
            if t.prio is None:
                t.prio = f.prio
            if ev == "sched_wakeup_new" and t.parent is None:
                t.parent = pid
        elif ev == "sched_process_fork":
            assert isinstance(f, Fork)
            have_fork = True
            task(f.child_pid, f.child_comm).parent = f.pid
    return seen, have_waking, have_fork


def chosen_tasks(
    events: Sequence[Event], tasks: Sequence[str] | None = None
) -> tuple[dict[int, _Task], set[int]]:
    """Every task ``events`` name (pid → its names, tgid, parent, first
    event) and the pids a replay of them takes (``tasks`` as ``build``
    takes it; a ``record_schedule`` header's command and its descendants)."""
    seen, _, _ = _scan(events)
    return seen, _select(seen, tasks, getattr(events, "root", None))


def _limit_ops(seen: dict[int, _Task], chosen: set[int], where: str, so_far: str = "") -> None:
    """A ``ConfigError`` if the replay of ``chosen`` obviously has more
    operations than a script holds (``_core.SCRIPT_MAX_OPS``): each block
    a replayed task is switched back in from is at least one (the wait for
    its waker's token, or a timed sleep), besides its bursts of work."""
    bound = sum(seen[p].resumed for p in chosen)
    limit = _core.SCRIPT_MAX_OPS
    if bound > limit:
        raise ConfigError(
            f"invalid {where}: the replayed tasks{so_far} block and are switched back in "
            f"{bound:,} times, each at least one operation of the replay, above the limit "
            f"of {limit:,} operations per script; expected a shorter trace (cut it) or "
            "fewer tasks (tasks=[...])"
        )


#: ``perf script`` fields ``from_trace`` asks for (pid/tid gives threads).
PERF_SCRIPT_FIELDS = "comm,pid,tid,cpu,time,event,trace"


def perf_script(perf: str, data: str | os.PathLike[str]) -> tuple[int, str, str]:
    """``perf script`` of a ``perf.data`` with the fields this module reads:
    (exit status, stdout, stderr)."""
    p = subprocess.run(
        [perf, "script", "-F", PERF_SCRIPT_FIELDS, "-i", os.fspath(data)],
        capture_output=True,
        text=True,
        check=False,
    )
    return p.returncode, p.stdout, p.stderr


#: What ``from_trace``'s ``path`` takes, for a refusal.
_EXPECTED_PATH = "a perf.data file or a recorded trace's text"


def read_text(path: str | os.PathLike[str], param: str = "path") -> Iterator[str]:
    """A recorded schedule's lines: a text file as it is (or gzipped), a
    ``perf.data`` through ``perf script``. A file is read as its lines are
    taken, not held whole, within ``inputs.MAX_TRACE_BYTES`` of text (a
    gzipped file's once inflated) and ``inputs.MAX_TRACE_LINE`` characters
    a line. A path that is not a regular file, or that cannot be opened, is
    refused at once (``inputs.open_input``: without blocking); a file that
    cannot be read to its end (a gzip file cut short) or past a bound when
    its reader gets there. ``param``: the parameter named in a refusal."""
    p = inputs.input_path(param, path, _EXPECTED_PATH)
    with inputs.open_input(param, p, _EXPECTED_PATH) as f:
        try:
            head = f.read(8)
        except OSError as e:
            raise ConfigError(
                f"invalid {param}={inputs.shown(p)!r}: cannot read it ({error_text(e)}); "
                f"expected {_EXPECTED_PATH}"
            ) from None
    if head.startswith(b"PERFILE"):
        perf = shutil.which("perf")
        if perf is None:
            raise ConfigError(
                f"invalid {param}={str(path)!r}: a perf.data file needs `perf script` to read "
                "it, and perf is not installed; convert it elsewhere with "
                f"`perf script -F {PERF_SCRIPT_FIELDS} -i {p.name} > {p.stem}.txt`"
            )
        code, text, err = perf_script(perf, p)
        if code != 0:
            raise ConfigError(
                f"invalid {param}={str(path)!r}: `perf script` failed: "
                f"{err.strip().splitlines()[-1:] or code}"
            )
        return _lines(lambda: io.BytesIO(text.encode(errors="replace")), p, param, "")

    def reopen() -> IO[bytes]:
        # opened again where the lines are first taken, checked again
        return inputs.open_input(param, p, _EXPECTED_PATH)

    if head.startswith(b"\x1f\x8b"):
        return _lines(reopen, p, param, "not a readable gzip file", gunzip=True)
    return _lines(reopen, p, param, "cannot read it")


def _lines(
    open_bytes: Callable[[], IO[bytes]],
    path: Path,
    param: str,
    what: str,
    *,
    gunzip: bool = False,
) -> Iterator[str]:
    """The lines of the bytes ``open_bytes`` opens (``gunzip``: inflated),
    as text without their line ends, within the trace's bounds
    (``inputs.text_lines``, which closes them); an error reading them a
    ``ConfigError`` (``what`` the file is then)."""
    try:
        raw = open_bytes()
        src = gzip.GzipFile(fileobj=raw, mode="rb") if gunzip else raw
        yield from inputs.text_lines(
            param,
            path,
            src,
            inputs.MAX_TRACE_BYTES,
            inputs.MAX_TRACE_LINE,
            "a recorded trace's text",
            also_close=raw,
        )
    except (OSError, EOFError, zlib.error) as e:  # EOFError: a gzip file cut short
        raise ConfigError(
            f"invalid {param}={inputs.shown(path)!r}: {what} ({error_text(e)})"
        ) from None


class TraceLines:
    """Trace lines given to ``workloads.from_trace`` as a list, as its
    workload's ``args`` keep them: the lines themselves (``Workload.replace``
    replays them again), shown by their number and digest, equal to the
    same lines."""

    __slots__ = ("_digest", "lines")

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines: tuple[str, ...] = tuple(lines)
        self._digest: str | None = None

    @property
    def digest(self) -> str:
        """The sha256 of the lines, each ended by a newline."""
        if self._digest is None:
            h = hashlib.sha256()
            for i in range(0, len(self.lines), 4096):
                h.update(
                    ("\n".join(self.lines[i : i + 4096]) + "\n").encode(errors="surrogatepass")
                )
            self._digest = h.hexdigest()
        return self._digest

    def __len__(self) -> int:
        return len(self.lines)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TraceLines) and (self is other or self.lines == other.lines)

    def __hash__(self) -> int:
        return hash(self.digest)

    def __repr__(self) -> str:
        return f"<{len(self.lines):,} trace lines, sha256 {self.digest[:16]}>"

    def __reduce__(self) -> tuple[type[TraceLines], tuple[tuple[str, ...]]]:
        return TraceLines, (self.lines,)


def from_lines(
    lines: Iterable[str],
    *,
    tasks: Sequence[str] | None = None,
    time_scale: float = 1.0,
    net_costs: bool = True,
    path: str | None = None,
) -> tuple[Script, Recorded]:
    """The replay of ``lines`` (``path``: the file they come from, named in
    a refusal; None: a list of lines)."""
    events = parse(lines, path=path, tasks=tasks)
    return build(events, tasks=tasks, time_scale=time_scale, net_costs=net_costs)
