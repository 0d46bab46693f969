"""A schedule's statistics, computed one way for a real recording and for a
model run, and the two side by side.

A source is either a recording (the text of ``record_schedule``: tracefs's
``trace`` file, ``perf script`` of ``perf sched record``, ``trace-cmd
report``, ``Result.to_ftrace()``; a path or a list of lines) or a
``Result`` simulated with ``trace=True``. Both become one frame of events
(``schedule_events``: ``time_ns``, ``cpu``, ``event``, ``pid``,
``prev_state``, ``next_pid``, ``child_pid``) and everything after that is
the same code:

- **switches_in**: ``sched_switch`` events whose ``next_pid`` is the task
  (what ``perf stat``'s ``context-switches`` counts, seen from the task
  switched to);
- **wakeups**: ``sched_wakeup`` and ``sched_wakeup_new`` of the task;
- **migrations**: ``sched_migrate_task`` of the task (``set_task_cpu()``
  emits it where ``perf stat`` counts ``cpu-migrations``);
- **bursts**: from a switch to the task to the next switch on that CPU,
  when that switch is away from the task (an on-CPU interval);
- **delays**: from a ``sched_wakeup`` (``_new``) of a task that slept (its
  last switch-out was a block, or it was not seen switching yet) to its
  next switch-in; a wake-up of a task on a CPU or preempted, or a second
  one before the switch-in, starts none (the wake-up latency ``perf sched
  latency`` reports, ``latency_wakeup_event()``);
- **preempted_pct**: the share of switch-outs with the task still runnable
  (``prev_state`` ``R`` or ``R+``: preempted or yielded);
- **wakeup_preempt_pct**: of the task's wake-ups done by the task running
  on the CPU it is woken on (the waker: the common pid of the wake-up's
  ``sched_waking``, which fires in the waker's context, else of its
  ``sched_wakeup``; it is the running task of ``target_cpu``; an idle
  CPU's wake-ups are not counted), the share after which the next switch
  on that CPU replaces the still-runnable waker with the wakee — mostly
  ``wakeup_preempt()``'s reschedule landing at the waker's return to user
  space, a tick's too. Only a recording whose wake-up lines print
  ``target_cpu`` gives it;
- **idle_pct** (the whole schedule's row only: ``all``, or the one role's):
  per CPU, the share of the window (the chosen tasks' first switch-in to
  their last switch-out) the CPU ran the idle task (pid 0), averaged over
  the CPUs that switched; a CPU idle at the window's end (no switch after)
  counts as idle to the end.

Which tasks: a recording written by ``record_schedule`` names its
command's pid in its header, and the command and its descendants
(``sched_process_fork``) are taken; otherwise every task but the idle
task, kernel threads and the recording tools (as ``from_trace`` chooses).
A model run's tasks are all its tasks.

Roles: a model task's role is its name up to ``/`` (``sender/3`` →
``sender``). A recording's tasks are given roles by ``roles``: a mapping
from pid to role, a callable ``(pid, comm, fork_index) -> role``, or
``"hackbench"`` — ``perf bench sched messaging`` and hackbench fork, per
group, ``fds`` receivers and then ``fds`` senders (``group()`` in
``tools/perf/bench/sched-messaging.c``), so the command's children in fork
order are receivers and senders by that rule, and the command itself is
``hackbench``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import numpy.typing as npt
import polars as pl

from .._check import checked_call, is_list, need_int, show, type_name
from ..exceptions import ConfigError, ConfigTypeError

if TYPE_CHECKING:
    from ..result import Result

#: The statistics of one role, in the order ``schedule_stats`` gives them.
STATS = (
    "tasks",
    "switches_in",
    "wakeups",
    "migrations",
    "units_per_wakeup",
    "preempted_pct",
    "wakeup_preempt_pct",
    "cpu_s",
    "burst_mean_us",
    "burst_p50_us",
    "burst_p90_us",
    "delay_p50_us",
    "delay_p90_us",
    "delay_p99_us",
    "delay_mean_us",
    "idle_pct",
)
#: Statistics compared by their difference (percentage points), not by a ratio.
POINTS = ("preempted_pct", "wakeup_preempt_pct", "idle_pct")

Roles = Union[str, Mapping[int, str], Callable[[int, str, int], str], None]  # noqa: UP007

_EVENTS = pl.Enum(
    [
        "sched_switch",
        "sched_wakeup",
        "sched_wakeup_new",
        "sched_migrate_task",
        "sched_process_fork",
        "sched_process_exit",
    ]
)
_SCHEMA = {
    "time_ns": pl.Int64(),
    "cpu": pl.Int32(),
    "event": _EVENTS,
    "pid": pl.Int64(),
    "prev_state": pl.String(),
    "next_pid": pl.Int64(),
    "child_pid": pl.Int64(),
    "waker_pid": pl.Int64(),
    "target_cpu": pl.Int32(),
}


class Schedule:
    """A source's events and the tasks chosen, with their roles and names."""

    def __init__(
        self, events: pl.DataFrame, roles: dict[int, str], label: str, units: dict[str, float]
    ) -> None:
        self.events = events
        #: pid -> role of the chosen tasks.
        self.roles = roles
        self.label = label
        #: Work units (messages) per role, where the source knows them.
        self.units = units

    def __repr__(self) -> str:
        return f"<Schedule {self.label}: {len(self.roles)} tasks, {self.events.height} events>"


def _from_result(r: Result) -> Schedule:
    tr = r.trace
    if tr is None:
        raise ConfigError(
            "invalid result: it has no trace; expected a Result of simulate(..., trace=True)"
        )
    if r.trace_truncated:
        raise ConfigError(
            "invalid result: its trace hit the row limit (trace_truncated); simulate a shorter "
            "run or raise the limit"
        )
    ev = pl.col("event")
    df = tr.filter(ev.cast(pl.String).is_in(_EVENTS.categories.to_list())).select(
        pl.col("time_ns").cast(pl.Int64),
        pl.col("cpu").cast(pl.Int32),
        ev.cast(pl.String).cast(_EVENTS),
        pl.col("pid").cast(pl.Int64),
        pl.col("prev_state"),
        pl.col("next_pid").cast(pl.Int64),
        pl.lit(None, pl.Int64).alias("child_pid"),
        pl.col("waker_pid").cast(pl.Int64),
        pl.col("target_cpu").cast(pl.Int32),
    )
    tasks = r.tasks
    roles = {
        int(p): str(n).split("/", 1)[0]
        for p, n in zip(tasks["task"].to_list(), tasks["name"].to_list(), strict=True)
        if int(p) != 0
    }
    units: dict[str, float] = {}
    cfg = r.config
    if cfg.get("workload") == "hackbench":
        per = float(cfg["workload.groups"]) * cfg["workload.fds"] ** 2 * cfg["workload.loops"]
        units = {"receiver": per, "sender": per}
    label = f"model {cfg.get('kernel', '')} seed {cfg.get('seed', '')}".strip()
    return Schedule(df, roles, label, units)


def _hackbench_roles(fds: int) -> Callable[[int, str, int], str]:
    def role(pid: int, comm: str, index: int) -> str:
        if index < 0:
            return "hackbench"
        return "receiver" if index % (2 * fds) < fds else "sender"

    return role


def _parse_recording(source: Any, expected: str) -> tuple[str | None, Any]:
    """A recording (a path or a list of trace lines) parsed: its path (None
    for lines) and ``replay.parse``'s events."""
    from ..io import replay

    if isinstance(source, (str, os.PathLike)):
        path: str | None = os.fspath(source)
        lines: Iterable[str] = replay.read_text(source)
    elif isinstance(source, (list, tuple)) and all(isinstance(x, str) for x in source):
        path, lines = None, source
    else:
        raise ConfigError(f"invalid recording={type(source).__name__}: expected {expected}")
    return path, replay.parse(lines, path=path)


def _from_recording(source: Any, roles: Roles, fds: int, tasks: Sequence[str] | None) -> Schedule:
    from ..io import replay

    path, events = _parse_recording(
        source, "a path, a list of trace lines or a Result simulated with trace=True"
    )
    if not events:
        raise ConfigError(
            f"invalid recording={path or 'lines'!r}: no sched_* events in it; expected a "
            "record_schedule() text, perf script or ftrace output"
        )
    rows: dict[str, list[Any]] = {k: [] for k in _SCHEMA}
    comms: dict[int, str] = {}
    children: dict[int, list[int]] = {}
    # the task each pending wake-up was done by: sched_waking fires in the
    # waker's context; sched_wakeup may fire on the target CPU, from its
    # wake list (sched_ttwu_pending()), in whatever task runs there
    waking: dict[int, int] = {}
    for e in events:
        f = e.fields
        prev_state = next_pid = child = waker = target = None
        if e.ev == "sched_waking":
            assert isinstance(f, replay.Wake)
            waking[f.pid] = e.pid
            continue
        if e.ev == "sched_switch":
            assert isinstance(f, replay.Switch)
            pid, prev_state, next_pid = f.prev_pid, f.prev_state, f.next_pid
            comms[f.prev_pid] = f.prev_comm
            comms[f.next_pid] = f.next_comm
        elif e.ev in ("sched_wakeup", "sched_wakeup_new", "sched_migrate_task"):
            assert isinstance(f, replay.Wake)
            pid = f.pid
            comms.setdefault(f.pid, f.comm)
            if e.ev != "sched_migrate_task" and f.target_cpu >= 0:
                waker, target = waking.pop(f.pid, e.pid), f.target_cpu
        elif e.ev == "sched_process_fork":
            assert isinstance(f, replay.Fork)
            pid, child = f.pid, f.child_pid
            children.setdefault(pid, []).append(child)
            comms[child] = f.child_comm
        elif e.ev == "sched_process_exit":
            pid = e.pid
        else:
            continue
        rows["time_ns"].append(e.ts)
        rows["cpu"].append(e.cpu)
        rows["event"].append(e.ev)
        rows["pid"].append(pid)
        rows["prev_state"].append(prev_state)
        rows["next_pid"].append(next_pid)
        rows["child_pid"].append(child)
        rows["waker_pid"].append(waker)
        rows["target_cpu"].append(target)
    df = pl.DataFrame(rows, schema=_SCHEMA)
    seen, chosen = replay.chosen_tasks(events, tasks)
    # the command: the recorded root, else the first chosen task; its
    # children in fork order (sched_process_fork, else first appearance)
    firsts = sorted((seen[p].first_ts or 0, p) for p in chosen)
    root = events.root if events.root in chosen else (firsts[0][1] if firsts else None)
    kids = children.get(root, []) if root is not None else []
    if not kids:
        kids = [p for _, p in firsts if seen[p].parent == root]
    index = {c: i for i, c in enumerate(k for k in kids if k in chosen)}
    if roles == "hackbench":
        role_of: Callable[[int, str, int], str] | None = _hackbench_roles(fds)
    elif roles is None:
        role_of = None
    elif callable(roles):
        role_of = roles
    elif isinstance(roles, Mapping):
        role_of = lambda p, c, i: str(roles.get(p, "other"))  # noqa: E731
    else:
        raise ConfigError(
            f"invalid roles={roles!r}: expected 'hackbench', a mapping pid -> role, a callable "
            "(pid, comm, fork_index) -> role, or None"
        )
    out: dict[int, str] = {}
    for p in sorted(chosen):
        i = index.get(p, -1)
        out[p] = "all" if role_of is None else str(role_of(p, comms.get(p, ""), i))
    label = f"recording {path}" if path else "recording"
    return Schedule(df, out, label, {})


@checked_call("parent_wakee_flips")
def parent_wakee_flips(recording: Any) -> int:
    """The recorded command's ``wakee_flips`` as it forked its last child,
    by ``record_wakee()``'s rule (kernel/sched/fair.c, 4.3+): one flip each
    time it wakes a task other than the one it woke last (its
    ``sched_waking`` events), halved when a second has passed since the
    last halving. Its children inherit the count (``dup_task_struct()``);
    ``hackbench(parent_wakee_flips=...)`` takes it. Counted from the
    command's start in the recording, so the flips it inherited from
    whatever started it are not seen: a lower bound.

    ``recording``: a ``record_schedule()`` text (path or lines), whose
    header names the command's pid."""
    from ..io import replay

    path, events = _parse_recording(recording, "a path or a list of trace lines")
    root = events.root
    if root is None:
        raise ConfigError(
            f"invalid recording={path or 'lines'!r}: its header names no command pid; "
            "expected a record_schedule() text (first line '# schedlab record: pid=N ...')"
        )
    flips = decay_ts = 0
    last: int | None = None
    at_fork: int | None = None
    for e in events:
        if e.pid != root:
            continue
        if e.ev == "sched_process_fork":
            at_fork = flips
        elif e.ev == "sched_waking":
            assert isinstance(e.fields, replay.Wake)
            if e.ts > decay_ts + 1_000_000_000:
                flips >>= 1
                decay_ts = e.ts
            if e.fields.pid != last:
                last = e.fields.pid
                flips += 1
    if at_fork is None:
        raise ConfigError(
            f"invalid recording={path or 'lines'!r}: the command (pid {root}) forks no "
            "child in it (no sched_process_fork of it)"
        )
    return at_fork


def schedule_events(
    source: Any,
    *,
    roles: Roles = None,
    fds: int = 20,
    tasks: str | Sequence[str] | None = None,
) -> Schedule:
    """The events and chosen tasks of ``source`` (a recording or a
    ``Result`` with a trace); ``roles`` (for a recording) and ``tasks``
    (names to keep, as ``from_trace`` takes them) as the module says."""
    from ..result import Result

    fds = need_int("fds", fds, lo=1, hi=100_000)
    if isinstance(tasks, str):  # one name, as from_trace takes it
        tasks = [tasks]
    if tasks is not None and (not is_list(tasks) or not all(isinstance(t, str) for t in tasks)):
        raise ConfigTypeError(
            f"invalid type for tasks: got {type_name(tasks)} {show(tasks)}, expected a task "
            "name (str), a list of them or None"
        )
    if isinstance(source, Schedule):
        return source
    if isinstance(source, Result):
        return _from_result(source)
    return _from_recording(source, roles, fds, tasks)


def _intervals(df: pl.DataFrame) -> pl.DataFrame:
    """On-CPU intervals from the switches: ``pid``, ``cpu``, ``start``,
    ``end`` (a switch to ``pid`` up to the next switch on that CPU, kept
    when that one switches away from ``pid``)."""
    sw = df.filter(pl.col("event") == "sched_switch").sort(["cpu", "time_ns"], maintain_order=True)
    nxt_t = pl.col("time_ns").shift(-1).over("cpu")
    nxt_prev = pl.col("pid").shift(-1).over("cpu")
    return (
        sw.with_columns(
            end=nxt_t, end_prev=nxt_prev, end_state=pl.col("prev_state").shift(-1).over("cpu")
        )
        .filter(pl.col("end").is_not_null() & (pl.col("end_prev") == pl.col("next_pid")))
        .select(
            pl.col("next_pid").alias("pid"),
            "cpu",
            pl.col("time_ns").alias("start"),
            "end",
            "end_state",
        )
    )


def _delays(df: pl.DataFrame, chosen: pl.Series) -> pl.DataFrame:
    """Wake-up delays (ns) per ``pid``: a ``sched_wakeup`` (``_new``) of a
    task that slept (switched out blocked, or not yet seen switching), to
    its next switch-in — ``latency_wakeup_event()`` of
    ``tools/perf/builtin-sched.c``, which skips a wake-up of a task on a
    CPU or preempted (already waiting since its switch-out)."""
    ev = pl.col("event")
    sw = df.filter(ev == "sched_switch")
    # kind orders the marks of one instant: out (0), wake-up (1), in (2);
    # after: the task's state after a switch (0 blocked, 2 on a CPU, 3 runnable)
    marks = (
        pl.concat(
            [
                df.filter(ev.is_in(["sched_wakeup", "sched_wakeup_new"])).select(
                    "pid",
                    "time_ns",
                    pl.lit(1, pl.Int8).alias("kind"),
                    pl.lit(None, pl.Int8).alias("after"),
                ),
                sw.select(
                    pl.col("next_pid").alias("pid"),
                    "time_ns",
                    pl.lit(2, pl.Int8).alias("kind"),
                    pl.lit(2, pl.Int8).alias("after"),
                ),
                sw.select(
                    "pid",
                    "time_ns",
                    pl.lit(0, pl.Int8).alias("kind"),
                    pl.when(pl.col("prev_state").str.starts_with("R"))
                    .then(pl.lit(3, pl.Int8))
                    .otherwise(pl.lit(0, pl.Int8))
                    .alias("after"),
                ),
            ]
        )
        .filter(pl.col("pid").is_in(chosen.implode()))
        .sort(["pid", "time_ns", "kind"])
    )
    # state before each mark: after the task's last switch (none yet: asleep)
    last_sw = pl.col("after").forward_fill().shift(1).over("pid").fill_null(0)
    next_in = pl.when(pl.col("kind") == 2).then(pl.col("time_ns")).backward_fill().over("pid")
    return (
        marks.with_columns(state=last_sw, next_in=next_in)
        .filter((pl.col("kind") == 1) & (pl.col("state") == 0) & pl.col("next_in").is_not_null())
        # one delay per wake-up chain: the first wake-up since the task left the CPU
        .unique(subset=["pid", "next_in"], keep="first", maintain_order=True)
        .select("pid", (pl.col("next_in") - pl.col("time_ns")).alias("delay_ns"))
    )


def _wake_preemptions(df: pl.DataFrame) -> pl.DataFrame:
    """A row per ``sched_wakeup`` done by the task running on the CPU it
    wakes on: the wakee's ``pid`` and ``preempt`` (the next switch on that
    CPU puts the waker out, still runnable, for the wakee). Events are
    taken in their order in the frame (the recording's, the trace's), so
    two at one timestamp keep their sequence."""
    ev = pl.col("event")
    seq = df.with_row_index("seq").with_columns(pl.col("seq").cast(pl.Int64))
    sw = seq.filter(ev == "sched_switch")
    wk = seq.filter(
        (ev == "sched_wakeup")
        & (pl.col("target_cpu") == pl.col("cpu"))
        & pl.col("waker_pid").is_not_null()
        & (pl.col("waker_pid") != 0)
    ).select("seq", "cpu", "pid", "waker_pid")
    if wk.height == 0 or sw.height == 0:
        return pl.DataFrame(schema={"pid": pl.Int64, "preempt": pl.Boolean})
    running = sw.select("seq", "cpu", pl.col("next_pid").alias("running"))
    after = sw.select(
        "seq",
        "cpu",
        pl.col("pid").alias("out_pid"),
        pl.col("prev_state").alias("out_state"),
        pl.col("next_pid").alias("in_pid"),
    )
    j = (
        wk.join_asof(running, on="seq", by="cpu", strategy="backward", check_sortedness=False)
        .filter(pl.col("running") == pl.col("waker_pid"))
        .join_asof(after, on="seq", by="cpu", strategy="forward", check_sortedness=False)
    )
    return j.select(
        "pid",
        (
            (pl.col("out_pid") == pl.col("waker_pid"))
            & pl.col("out_state").str.starts_with("R")
            & (pl.col("in_pid") == pl.col("pid"))
        )
        .fill_null(False)
        .alias("preempt"),
    )


def _idle(sw: pl.DataFrame, t0: int, t1: int) -> pl.DataFrame:
    """The idle task's intervals per ``cpu`` within ``[t0, t1]``: from a
    switch to it up to the CPU's next switch, or to ``t1`` if none follows;
    before a CPU's first switch its ``prev_pid`` ran since ``t0``."""
    by_cpu = sw.sort(["cpu", "time_ns"], maintain_order=True)
    runs = pl.concat(
        [
            by_cpu.group_by("cpu", maintain_order=True)
            .first()
            .select(
                "cpu", "pid", pl.lit(t0, pl.Int64).alias("start"), pl.col("time_ns").alias("end")
            ),
            by_cpu.select(
                "cpu",
                pl.col("next_pid").alias("pid"),
                pl.col("time_ns").alias("start"),
                pl.col("time_ns").shift(-1).over("cpu").fill_null(t1).alias("end"),
            ),
        ]
    )
    return runs.filter(pl.col("pid") == 0).with_columns(
        pl.col("start").clip(t0, t1), pl.col("end").clip(t0, t1)
    )


def _q(v: npt.NDArray[Any], q: float) -> float:
    return float(np.quantile(v, q)) if v.size else math.nan


@checked_call("schedule_samples")
def schedule_samples(
    source: Any,
    *,
    roles: Roles = None,
    fds: int = 20,
    tasks: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """The samples behind the distributions: a row per burst and per
    wake-up delay of a chosen task — ``role``, ``pid``, ``kind``
    (``burst``, ``delay``) and ``us``. Keyword arguments as
    ``schedule_events``."""
    s = schedule_events(source, roles=roles, fds=fds, tasks=tasks)
    chosen = pl.Series("pid", list(s.roles), dtype=pl.Int64)
    role = pl.col("pid").replace_strict(s.roles, default="other", return_dtype=pl.String)
    iv = _intervals(s.events).filter(pl.col("pid").is_in(chosen.implode()))
    d = _delays(s.events, chosen)
    return pl.concat(
        [
            iv.select(
                role.alias("role"),
                "pid",
                pl.lit("burst").alias("kind"),
                ((pl.col("end") - pl.col("start")) / 1e3).alias("us"),
            ),
            d.select(
                role.alias("role"),
                "pid",
                pl.lit("delay").alias("kind"),
                (pl.col("delay_ns") / 1e3).alias("us"),
            ),
        ]
    )


@checked_call("schedule_stats")
def schedule_stats(
    source: Any,
    *,
    roles: Roles = None,
    fds: int = 20,
    tasks: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """A row per role (and ``all``) of ``source``'s schedule: ``STATS``.
    Keyword arguments as ``schedule_events``."""
    s = schedule_events(source, roles=roles, fds=fds, tasks=tasks)
    df = s.events
    chosen = pl.Series("pid", list(s.roles), dtype=pl.Int64)
    ev = pl.col("event")
    iv = _intervals(df)
    mine = iv.filter(pl.col("pid").is_in(chosen.implode()))
    delays = _delays(df, chosen)
    wake_pre = _wake_preemptions(df)
    sw = df.filter(ev == "sched_switch")
    # the window: the chosen tasks' first switch-in to their last switch-out
    if mine.height:
        t0, t1 = int(mine["start"].min()), int(mine["end"].max())  # type: ignore[arg-type]
    else:
        t0 = t1 = 0
    # per CPU that switched (0 for one never idle), the idle share of the window
    idle_ns = _idle(sw, t0, t1).group_by("cpu").agg((pl.col("end") - pl.col("start")).sum())
    per_cpu = dict(zip(idle_ns["cpu"].to_list(), idle_ns["end"].to_list(), strict=True))
    cpus = sorted(set(sw["cpu"].to_list()))
    idle_share = [per_cpu.get(c, 0) / (t1 - t0) for c in cpus] if t1 > t0 else []
    by_role: dict[str, list[int]] = {}
    for p, r in s.roles.items():
        by_role.setdefault(r, []).append(p)
    groups = sorted(by_role.items())
    if len(groups) > 1:
        groups.append(("all", list(s.roles)))
    # the row of the whole schedule (a single role's, or "all")
    whole = groups[-1][0] if groups else "all"
    rows = []
    for role, pids in groups:
        ps = pl.Series(pids, dtype=pl.Int64).implode()
        b = mine.filter(pl.col("pid").is_in(ps))
        bursts = (b["end"] - b["start"]).to_numpy() / 1e3
        dl = delays.filter(pl.col("pid").is_in(ps))["delay_ns"].to_numpy() / 1e3
        outs = sw.filter(pl.col("pid").is_in(ps))
        n_out = outs.height
        pre = outs.filter(pl.col("prev_state").str.starts_with("R")).height
        wakeups = df.filter(
            ev.is_in(["sched_wakeup", "sched_wakeup_new"]) & pl.col("pid").is_in(ps)
        ).height
        units = s.units.get(role) if role != "all" else None
        wp = wake_pre.filter(pl.col("pid").is_in(ps))["preempt"]
        rows.append(
            {
                "role": role,
                "tasks": len(pids),
                "switches_in": sw.filter(pl.col("next_pid").is_in(ps)).height,
                "wakeups": wakeups,
                "migrations": df.filter(
                    (ev == "sched_migrate_task") & pl.col("pid").is_in(ps)
                ).height,
                "units_per_wakeup": units / wakeups if units and wakeups else None,
                "preempted_pct": 100.0 * pre / n_out if n_out else None,
                "wakeup_preempt_pct": 100.0 * float(wp.mean()) if wp.len() else None,  # type: ignore[arg-type]
                "cpu_s": float(bursts.sum()) / 1e6,
                "burst_mean_us": float(bursts.mean()) if bursts.size else None,
                "burst_p50_us": _q(bursts, 0.5) if bursts.size else None,
                "burst_p90_us": _q(bursts, 0.9) if bursts.size else None,
                "delay_p50_us": _q(dl, 0.5) if dl.size else None,
                "delay_p90_us": _q(dl, 0.9) if dl.size else None,
                "delay_p99_us": _q(dl, 0.99) if dl.size else None,
                "delay_mean_us": float(dl.mean()) if dl.size else None,
                "idle_pct": 100.0 * float(np.mean(idle_share))
                if role == whole and idle_share
                else None,
            }
        )
    schema = {
        "role": pl.String,
        "tasks": pl.Int64,
        "switches_in": pl.Int64,
        "wakeups": pl.Int64,
        "migrations": pl.Int64,
        **{k: pl.Float64 for k in STATS[4:]},
    }
    return pl.DataFrame(rows, schema=schema).with_columns(pl.lit(s.label).alias("source"))


def _many(x: Any) -> list[Any]:
    """The sources of ``x``: one (a ``Result``, a path, a list of trace
    lines) or a list of them (a list of strings is of paths when each
    names a file)."""
    from ..result import Result

    if isinstance(x, (Result, Schedule, str, os.PathLike)):
        return [x]
    if isinstance(x, (list, tuple)) and x:
        if not all(isinstance(v, str) for v in x):
            return list(x)
        if all("\n" not in v and os.path.isfile(v) for v in x):
            return list(x)
    return [x]


def _summary(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Median, min and max of each statistic over repetitions, per role."""
    long = pl.concat(
        [
            f.drop("source")
            .with_columns(pl.col(c).cast(pl.Float64) for c in STATS)
            .unpivot(index="role", variable_name="statistic")
            for f in frames
        ]
    )
    return long.group_by(["role", "statistic"], maintain_order=True).agg(
        pl.col("value").median().alias("median"),
        pl.col("value").min().alias("min"),
        pl.col("value").max().alias("max"),
    )


@checked_call("compare_schedule")
def compare_schedule(
    recorded: Any,
    result: Any,
    *,
    negative: Any = None,
    roles: Roles = "auto",
    fds: int | None = None,
) -> pl.DataFrame:
    """The schedule of ``recorded`` (a recording, or a list of them: the
    repetitions, as paths or as lists of lines) beside the model's (a
    ``Result`` with a trace, or a list: the seeds), a row per role and
    statistic (``STATS``): ``real`` (median over repetitions) with
    ``real_min``/``real_max``, ``model`` (median over seeds) with
    ``model_min``/``model_max``, and ``error``: ``model / real - 1`` for a
    count or a time, ``model - real`` in points for a share (``POINTS``).
    ``negative``: the same for a deliberately wrong model (a ``Result`` or
    a list), adding ``negative``, ``negative_error`` and ``beats_negative``
    (the model's |error| strictly smaller).

    ``roles="auto"``: a hackbench model run gives a recording the
    hackbench roles with the model's ``fds`` (``perf bench sched
    messaging``'s fork order), and the model's message counts give
    ``units_per_wakeup`` on both sides; otherwise every task is ``all``."""
    if isinstance(result, (list, tuple)) and not result:
        raise ConfigError("invalid result=[]: expected a Result simulated with trace=True")
    sources = _many(result)
    cfg = sources[0].config if hasattr(sources[0], "config") else {}
    if roles == "auto":
        roles = "hackbench" if cfg.get("workload") == "hackbench" else None
    if fds is None:
        fds = int(cfg.get("workload.fds", 20))

    def models_of(x: Any) -> list[Schedule]:
        # without roles, a model's tasks are one role too
        out = [schedule_events(r) for r in _many(x)]
        if roles is None:
            out = [Schedule(m.events, dict.fromkeys(m.roles, "all"), m.label, m.units) for m in out]
        return out

    models = models_of(result)
    reals = [schedule_events(rec, roles=roles, fds=fds) for rec in _many(recorded)]
    if roles == "hackbench":  # the model's message counts, for both sides
        reals = [Schedule(s.events, s.roles, s.label, dict(models[0].units)) for s in reals]
    real = _summary([schedule_stats(s) for s in reals])
    model = _summary([schedule_stats(m) for m in models])
    out = real.join(model, on=["role", "statistic"], how="full", coalesce=True, suffix="_m")
    out = out.select(
        "role",
        "statistic",
        pl.col("median").alias("real"),
        pl.col("min").alias("real_min"),
        pl.col("max").alias("real_max"),
        pl.col("median_m").alias("model"),
        pl.col("min_m").alias("model_min"),
        pl.col("max_m").alias("model_max"),
    )

    def err(col: str) -> pl.Expr:
        pts = pl.col("statistic").is_in(list(POINTS))
        return (
            pl.when(pts)
            .then(pl.col(col) - pl.col("real"))
            .when(pl.col("real") != 0)
            .then(pl.col(col) / pl.col("real") - 1.0)
            .otherwise(None)
        )

    out = out.with_columns(err("model").alias("error"))
    if negative is not None:
        neg = _summary([schedule_stats(m) for m in models_of(negative)]).select(
            "role", "statistic", pl.col("median").alias("negative")
        )
        out = out.join(neg, on=["role", "statistic"], how="left").with_columns(
            err("negative").alias("negative_error")
        )
        out = out.with_columns(
            (pl.col("error").abs() < pl.col("negative_error").abs()).alias("beats_negative")
        )
    order = {s: i for i, s in enumerate(STATS)}
    return out.sort(
        pl.col("role"), pl.col("statistic").replace_strict(order, return_dtype=pl.Int32)
    ).filter(pl.col("real").is_not_null() | pl.col("model").is_not_null())
