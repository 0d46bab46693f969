"""A recorded schedule as a workload the model can replay.

Reads the ``sched_*`` tracepoints as text — ``perf script`` output of a
``perf sched record`` (``comm pid[/tid] [cpu] secs.usecs: sched:event:
fields``), the kernel's ftrace / ``trace-cmd report`` text (``comm-pid
[cpu] flags secs.usecs: event: fields``), and the model's own
``Result.to_ftrace()`` — and turns each task into a program
(``io.script``):

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

Left out by default: the idle task, kernel threads (by name), and the
recording tool (with ``perf sched record -- CMD`` only the command's task,
``perf-exec``, and its descendants are kept; otherwise tasks only ever
named ``perf`` or ``trace-cmd``).

Not recorded by these events, so not replayed: the CPU affinity, the
policy of a fair task (SCHED_BATCH/IDLE look like SCHED_OTHER), and the
user/system split of the work (replayed as user time).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._check import error_text
from ..exceptions import ConfigError
from .script import Script, ScriptTask

_PERF = re.compile(
    r"^\s*(?P<comm>.*?)\s+(?P<pid>\d+)(?:/(?P<tid>\d+))?\s+\[(?P<cpu>\d+)\]\s+"
    r"(?P<ts>\d+\.\d+):\s+(?:\d+\s+)?(?:\w+:)?(?P<ev>sched_\w+):\s?(?P<rest>.*)$"
)
_FTRACE = re.compile(
    r"^\s*(?P<comm>.*)-(?P<tid>\d+)\s+(?:\(\s*(?P<pid>[\d-]+)\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?:\S{4,5}\s+)?(?P<ts>\d+\.\d+):\s+(?P<ev>sched_\w+):\s?(?P<rest>.*)$"
)
_SWITCH = re.compile(
    r"prev_comm=(?P<pc>.*?) prev_pid=(?P<pp>\d+) prev_prio=(?P<ppr>-?\d+) "
    r"prev_state=(?P<ps>\S+) ==> next_comm=(?P<nc>.*?) next_pid=(?P<np>\d+) "
    r"next_prio=(?P<npr>-?\d+)"
)
_WAKE = re.compile(r"comm=(?P<c>.*?) pid=(?P<p>\d+) prio=(?P<pr>-?\d+)")
_FORK = re.compile(r"comm=(?P<c>.*?) pid=(?P<p>\d+) child_comm=(?P<cc>.*?) child_pid=(?P<cp>\d+)")

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


def _ns(ts: str) -> int:
    sec, _, frac = ts.partition(".")
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


@dataclass
class Event:
    ts: int
    cpu: int
    pid: int  # the common pid (tid): the task running when the event fired
    tgid: int | None
    comm: str
    ev: str
    rest: str


def parse(lines: Iterable[str]) -> list[Event]:
    """The ``sched_*`` events of a recorded text, in time order (stable)."""
    out: list[Event] = []
    for line in lines:
        if not line or line.lstrip().startswith("#"):
            continue
        m = _PERF.match(line)
        if m is not None:
            tid = m["tid"]
            pid, tgid = (int(tid), int(m["pid"])) if tid is not None else (int(m["pid"]), None)
        else:
            m = _FTRACE.match(line)
            if m is None:
                continue
            pid = int(m["tid"])
            g = m["pid"]
            tgid = int(g) if g and g.strip("-") else None
        out.append(
            Event(_ns(m["ts"]), int(m["cpu"]), pid, tgid, m["comm"].strip(), m["ev"], m["rest"])
        )
    out.sort(key=lambda e: e.ts)
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


def _select(tasks: dict[int, _Task], names: Sequence[str] | None) -> set[int]:
    if names is not None:
        return {p for p, t in tasks.items() if p != 0 and any(c in names for c in t.comms)}
    keep = {p for p, t in tasks.items() if not _kernel_thread(t)}
    roots = [p for p in keep if PERF_EXEC in tasks[p].comms]
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
    events: list[Event],
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
    seen: dict[int, _Task] = {}

    now = 0

    def task(pid: int, comm: str | None = None) -> _Task:
        t = seen.get(pid)
        if t is None:
            t = seen[pid] = _Task(pid, first_ts=now)
        if comm is not None and (not t.comms or t.comms[-1] != comm):
            t.comms.append(comm)
        return t

    have_waking = have_fork = False
    for e in events:
        now = e.ts
        c = task(e.pid, e.comm)
        if e.tgid is not None:
            c.tgid = e.tgid
        if e.ev == "sched_switch":
            m = _SWITCH.match(e.rest)
            if m:
                a, b = task(int(m["pp"]), m["pc"]), task(int(m["np"]), m["nc"])
                a.prio = a.prio if a.prio is not None else int(m["ppr"])
                b.prio = b.prio if b.prio is not None else int(m["npr"])
        elif e.ev in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            have_waking |= e.ev == "sched_waking"
            m = _WAKE.match(e.rest)
            if m:
                t = task(int(m["p"]), m["c"])
                t.prio = t.prio if t.prio is not None else int(m["pr"])
                if e.ev == "sched_wakeup_new" and t.parent is None:
                    t.parent = e.pid
        elif e.ev == "sched_process_fork":
            have_fork = True
            m = _FORK.match(e.rest)
            if m:
                task(int(m["cp"]), m["cc"]).parent = int(m["p"])
    chosen = _select(seen, tasks)
    if not chosen:
        named = sorted({c for t in seen.values() for c in t.comms})[:20]
        raise ConfigError(
            f"invalid tasks={list(tasks) if tasks is not None else None!r}: no task of the "
            f"trace is replayed; its tasks are named {', '.join(named)}"
        )
    wake_ev = "sched_waking" if have_waking else "sched_wakeup"
    # A recorded sleep already holds the kernel's timer slack.
    script = Script(net_costs=net_costs, timer_slack=False)
    t0 = min(e.ts for e in events if e.pid in chosen or _mentions(e, chosen))
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
        if e.ev == "sched_switch":
            m = _SWITCH.match(e.rest)
            if not m:
                continue
            pp, np_ = int(m["pp"]), int(m["np"])
            if pp in chosen:
                a = seen[pp]
                if not a.started:
                    start(a, t0)
                    a.on_cpu = t0
                if a.on_cpu is not None:
                    a.acc += e.ts - a.on_cpu
                    a.on_cpu = None
                st = m["ps"]
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
            m = _WAKE.match(e.rest)
            if not m:
                continue
            p = int(m["p"])
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
            if have_fork:
                m = _FORK.match(e.rest)
                if not m:
                    continue
                parent, child = int(m["p"]), int(m["cp"])
            else:
                m = _WAKE.match(e.rest)
                if not m:
                    continue
                parent, child = e.pid, int(m["p"])
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
            m = _WAKE.match(e.rest)
            if m and int(m["p"]) in chosen:
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
    if e.ev == "sched_switch":
        m = _SWITCH.match(e.rest)
        return m is not None and (int(m["pp"]) in chosen or int(m["np"]) in chosen)
    return False


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


def read_text(path: str | os.PathLike[str]) -> list[str]:
    """A recorded schedule's lines: a text file as it is (or gzipped), a
    ``perf.data`` through ``perf script``."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            head = f.read(8)
    except (OSError, ValueError) as e:  # ValueError: a NUL byte, an unencodable name
        raise ConfigError(
            f"invalid path={str(path)!r}: cannot read it ({error_text(e)}); expected a "
            "perf.data file or a recorded trace's text"
        ) from None
    if head.startswith(b"PERFILE"):
        perf = shutil.which("perf")
        if perf is None:
            raise ConfigError(
                f"invalid path={str(path)!r}: a perf.data file needs `perf script` to read "
                "it, and perf is not installed; convert it elsewhere with "
                f"`perf script -F {PERF_SCRIPT_FIELDS} -i {p.name} > {p.stem}.txt`"
            )
        code, text, err = perf_script(perf, p)
        if code != 0:
            raise ConfigError(
                f"invalid path={str(path)!r}: `perf script` failed: "
                f"{err.strip().splitlines()[-1:] or code}"
            )
        return text.splitlines()
    if head.startswith(b"\x1f\x8b"):
        try:
            return gzip.decompress(p.read_bytes()).decode(errors="replace").splitlines()
        except (OSError, EOFError) as e:
            raise ConfigError(
                f"invalid path={str(path)!r}: not a readable gzip file ({e})"
            ) from None
    return p.read_text(errors="replace").splitlines()


def from_lines(
    lines: Iterable[str],
    *,
    tasks: Sequence[str] | None = None,
    time_scale: float = 1.0,
    net_costs: bool = True,
) -> tuple[Script, Recorded]:
    return build(parse(lines), tasks=tasks, time_scale=time_scale, net_costs=net_costs)
