"""``measure``: run ``perf bench sched messaging`` (hackbench) or ``perf
bench sched pipe`` on this host under ``perf stat`` and return the runs as a
polars DataFrame, in the columns ``calibrate`` fits the model to.

The parsing is a pure function of perf's text (``parse_perf``), tested on
recorded output; only ``measure`` itself runs perf.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import itertools
import math
import numbers
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .. import _core
from .._check import checked_call, is_list, need_bool, need_str, short, show, type_name
from ..exceptions import ConfigError, ConfigTypeError, MeasureError
from . import aim7 as _aim7
from . import cgroup as _cgroup
from . import changes as _changes
from . import schbench as _sb
from .runner import Runner, completed_output, perf_text, run_command, run_one

#: The events ``measure`` counts (``perf stat -e``).
EVENTS = ("task-clock", "context-switches", "cpu-migrations")
BENCHES = ("hackbench", "pipe", "aim7", "schbench")
#: ``measure``'s default group counts (hackbench).
GROUPS = (1, 2, 5, 10, 20)
#: ``measure("aim7")``'s default children counts.
AIM7_CHILDREN = (1, 2, 4)
#: The hackbench variants it runs: the core's names of them.
IPCS = tuple(_core.HACKBENCH_IPCS)
MODES = tuple(_core.HACKBENCH_MODES)
#: The frame's columns, in order (the host columns repeat on every row, so
#: frames of several sessions can be stacked and told apart).
COLUMNS = (
    "bench",
    "ipc",
    "mode",
    "groups",
    "loops",
    "pinned",
    "change",
    *_changes.KEYS,
    "rep",
    "elapsed_s",
    "task_clock_s",
    "context_switches",
    "cpu_migrations",
    *_changes.INTERRUPTS.values(),
    *_cgroup.STAT_COLUMNS.values(),
    "kernel_release",
    "cpus",
    "cpu_model",
    "date",
    "loadavg",
)
#: What perf_event_paranoid must be at most for an unprivileged user.
PARANOID_MAX = 2


#: A number as perf prints it: ASCII digits, an optional point and exponent
#: (float() would also take "nan", "inf", "1_000" and other scripts' digits).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def perf_number(what: str, token: str | None, line: str) -> float:
    """``token`` (a field of perf's ``line``) as a finite number >= 0, or a
    ``MeasureError`` naming ``what`` it was to be, the token and the line."""
    if token is None or not token.strip():
        raise MeasureError(f"perf output: {what} has no value in {line.strip()[:200]!r}")
    tok = token.strip()
    if _NUMBER.fullmatch(tok) is None:
        raise MeasureError(
            f"perf output: {what} is {tok[:60]!r}, not a number, in {line.strip()[:200]!r}"
        )
    v = float(tok)
    if not math.isfinite(v) or v < 0:
        raise MeasureError(
            f"perf output: {what} is {tok[:60]}; expected a finite number >= 0 "
            f"(in {line.strip()[:200]!r})"
        )
    return v


def total_time_s(line: str) -> float:
    """The seconds of ``perf bench``'s ``Total time: N [sec]`` line
    (``perf_number``: a ``MeasureError`` if there is no number)."""
    words = line.split(":", 1)[1].split()
    return perf_number("Total time", words[0] if words else None, line)


def perf_stat_counters(text: str) -> dict[str, float]:
    """The counters of ``EVENTS`` in ``perf stat -x,`` output lines
    (``value,unit,event,...``; other lines are skipped): ``task_clock_s``
    and the others by event name with ``_`` for ``-``. A counter perf did
    not count (``<not counted>``), a value that is not a finite number
    >= 0, or a task-clock in an unknown unit is a ``MeasureError``."""
    out: dict[str, float] = {}
    uncounted: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.count(",") < 2 or line.startswith("#"):
            continue
        # perf stat -x, : value,unit,event,run-time,percent[,metric,name]
        f = line.split(",")
        value, unit, event = f[0], f[1], f[2]
        if event not in EVENTS:
            continue
        if value.startswith("<"):  # <not counted> / <not supported>
            uncounted.append(f"{event} {value}")
            continue
        v = perf_number(event, value, line)
        if event == "task-clock":
            scale = {"msec": 1e-3, "usec": 1e-6, "nsec": 1e-9, "sec": 1.0, "": 1e-9}
            if unit not in scale:
                raise MeasureError(f"perf stat: task-clock in unknown unit {unit[:40]!r}")
            out["task_clock_s"] = v * scale[unit]
        else:
            out[event.replace("-", "_")] = v
    if uncounted:
        raise MeasureError(
            f"perf stat did not count {', '.join(uncounted)}: is perf_event_paranoid too "
            f"high? (sysctl kernel.perf_event_paranoid={PARANOID_MAX}, or run as root)"
        )
    return out


@checked_call("parse_perf")
def parse_perf(text: str | bytes) -> dict[str, float]:
    """The numbers in the output of ``perf stat -x, -e task-clock,
    context-switches,cpu-migrations -- perf bench sched ...`` (stdout and
    stderr together, in any order; ``str``, or ``bytes`` of UTF-8).

    Returns ``elapsed_s`` (the bench's ``Total time``), ``task_clock_s``,
    ``context_switches`` and ``cpu_migrations``; ``usecs_per_op`` too for
    ``perf bench sched pipe``. Raises ``MeasureError`` naming what is
    missing, not counted or not a number: each value must be a finite
    number >= 0 in ASCII digits (``nan``, ``inf``, a negative time or count
    are refused), and bytes must be UTF-8.
    """
    text = perf_text(text)
    out = perf_stat_counters(text)
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("Total time:"):
            out["elapsed_s"] = total_time_s(line)
        elif line.endswith("usecs/op"):
            words = line.split()
            out["usecs_per_op"] = perf_number(
                "usecs/op", words[0] if len(words) > 1 else None, line
            )
    need = ("elapsed_s", "task_clock_s", "context_switches", "cpu_migrations")
    missing = [k for k in need if k not in out]
    if missing:
        raise MeasureError(f"perf output lacks {', '.join(missing)}:\n{text[-2000:]}")
    return out


def bench_command(
    bench: str,
    ipc: str,
    mode: str,
    groups: int,
    loops: int,
    pinned: bool,
    perf: str = "perf",
    change: dict[str, Any] | None = None,
    cgroup: Path | None = None,
) -> list[str]:
    """The command one run executes (``perf stat`` around ``perf bench``);
    ``pinned`` runs it under ``taskset -c 0`` (every task on CPU 0),
    ``change`` (a normalised ``changes`` entry) under ``taskset``/``nice``/
    ``chrt``, ``cgroup`` (a group's directory) inside that cgroup."""
    cmd = [perf, "stat", "-x,", "-e", ",".join(EVENTS), "--"]
    if cgroup is not None:
        cmd += _cgroup.prefix(cgroup)
    if pinned:
        cmd += ["taskset", "-c", "0"]
    if change is not None:
        cmd += _changes.prefix(change)
    if bench == "hackbench":
        cmd += [perf, "bench", "sched", "messaging", "-g", str(groups), "-l", str(loops)]
        if ipc == "pipe":
            cmd.append("-p")
        if mode == "thread":
            cmd.append("-t")
    else:
        cmd += [perf, "bench", "sched", "pipe", "-l", str(loops)]
        if mode == "thread":
            cmd.append("-T")
    return cmd


def check_perf_access(
    paranoid: int | None, euid: int, perf_path: str | None, perf: str = "perf"
) -> None:
    """Refuse, naming the fix, when perf is missing (``perf_path`` None) or
    an unprivileged user may not count events (``perf_event_paranoid`` above
    2). Pure: ``measure`` passes what it found on the host."""
    if perf_path is None:
        raise MeasureError(
            f"perf not found ({perf!r} is not on PATH): install it "
            "(Debian: apt-get install linux-perf; Ubuntu: linux-tools-$(uname -r)) "
            "or pass perf='/path/to/perf'"
        )
    if euid != 0 and paranoid is not None and paranoid > PARANOID_MAX:
        raise MeasureError(
            f"perf may not count events here: /proc/sys/kernel/perf_event_paranoid is "
            f"{paranoid}, at most {PARANOID_MAX} is needed for an unprivileged user; run "
            f"'sudo sysctl kernel.perf_event_paranoid={PARANOID_MAX}' or measure as root"
        )


def host_info(now: _dt.datetime | None = None) -> dict[str, Any]:
    """This host: ``kernel_release`` (uname), ``cpus`` and ``cpu_model``
    (/proc/cpuinfo), ``date`` (UTC, ISO 8601), ``loadavg`` (1-minute load
    average before the run: other work on the host slows it)."""
    model = ""
    cpus = 0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("processor"):
                cpus += 1
            elif line.startswith("model name") and not model:
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    when = now or _dt.datetime.now(_dt.timezone.utc)
    return {
        "kernel_release": platform.release(),
        "cpus": cpus or (os.cpu_count() or 0),
        "cpu_model": model or platform.processor(),
        "date": when.replace(microsecond=0).isoformat(),
        "loadavg": _loadavg(),
    }


def _loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def perf_event_paranoid() -> int | None:
    """/proc/sys/kernel/perf_event_paranoid, None when it cannot be read."""
    try:
        return int(Path("/proc/sys/kernel/perf_event_paranoid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def choice_list(name: str, v: Any, allowed: Sequence[str]) -> list[str]:
    """``v`` (one value or a list) as a list of distinct values of ``allowed``."""
    vals = list(v) if is_list(v) else [v]
    if not vals:
        raise ConfigError(f"invalid {name}=[]: expected one or more of {', '.join(allowed)}")
    for x in vals:
        if not isinstance(x, str):
            raise ConfigTypeError(
                f"invalid type for {name}: got {type_name(x)} {short(x)}, expected one or more "
                f"of {', '.join(allowed)}"
            )
        if x not in allowed:
            raise ConfigError(f"invalid {name}={short(x)}: expected one of {', '.join(allowed)}")
    _distinct(name, vals)
    return [str(x) for x in vals]


def _distinct(name: str, vals: list[Any]) -> None:
    """A value named twice would run (and weigh) its configurations twice."""
    if len(set(vals)) != len(vals):
        raise ConfigError(f"invalid {name}={show(vals)}: a value named twice")


def int_list(name: str, v: Any, lo: int, hi: int) -> list[int]:
    """``v`` (one int or a list; numpy integers too, not bools) as a list
    of distinct ints from lo to hi."""
    vals = list(v) if is_list(v) else [v]
    if not vals:
        raise ConfigError(f"invalid {name}=[]: expected integers from {lo} to {hi}")
    out: list[int] = []
    for x in vals:
        if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Integral):
            raise ConfigTypeError(
                f"invalid type for {name}: got {type_name(x)} {short(x)}, expected int"
            )
        if not lo <= int(x) <= hi:
            raise ConfigError(
                f"invalid {name}={show(int(x))}: expected an integer from {lo} to {hi}"
            )
        out.append(int(x))
    _distinct(name, out)
    return out


def _bools(name: str, v: Any) -> list[bool]:
    vals = list(v) if is_list(v) else [v]
    for x in vals:
        if not isinstance(x, bool | np.bool_):
            raise ConfigTypeError(
                f"invalid type for {name}: got {type_name(x)} {short(x)}, expected bool"
            )
    if not vals:
        raise ConfigError(f"invalid {name}=[]: expected True and/or False")
    out = [bool(x) for x in vals]
    _distinct(name, out)
    return out


def _measure_aim7(
    children: Any, reaim: Any, jobs: Any, nrep: int, progress: bool, runner: Runner | None
) -> pl.DataFrame:
    """``measure("aim7", ...)``: its own arguments checked (``measure``
    checked the shared ones), then ``host.aim7.measure_aim7``."""

    if is_list(jobs):
        raise ConfigTypeError(f"invalid type for jobs: got {type_name(jobs)}, expected int")
    kids = int_list("children", AIM7_CHILDREN if children is None else children, 1, 10_000)
    nj = int_list("jobs", 100 if jobs is None else jobs, 1, 100_000)[0]
    if reaim is None:
        raise ConfigError(
            "invalid reaim=None: bench='aim7' needs the directory of a re-aim-7 build "
            f"(with {', '.join(_aim7.REAIM_FILES)}); schedlab does not ship it"
        )
    user = runner

    def run(cmd: list[str], cwd: Path) -> Any:
        if user is not None:
            return user(cmd)
        return subprocess.run(cmd, capture_output=True, check=False, cwd=cwd)

    return _aim7.measure_aim7(kids, reaim, nj, nrep, progress, run, host_info)


def _measure_schbench(
    binary: Any,
    message_threads: Any,
    workers: Any,
    runtime_s: Any,
    options: Any,
    nrep: int,
    progress: bool,
    runner: Runner | None,
) -> pl.DataFrame:
    """``measure("schbench", ...)``: its own arguments checked (``measure``
    checked the shared ones), then ``host.schbench.measure_schbench``
    (which checks the binary and the options)."""

    if is_list(runtime_s):
        raise ConfigTypeError(
            f"invalid type for runtime_s: got {type_name(runtime_s)}, expected int"
        )
    ms = int_list("message_threads", 1 if message_threads is None else message_threads, 1, 100_000)
    ws = _sb.int_or_none_list("workers", workers)
    rt = int_list("runtime_s", 30 if runtime_s is None else runtime_s, 1, 86_400)[0]
    if binary is None:
        raise ConfigError(
            "invalid schbench=None: bench='schbench' needs the path of a built schbench "
            "(masoncl/schbench); schedlab does not ship it"
        )
    return _sb.measure_schbench(
        binary, ms, ws, rt, options, nrep, progress, runner or run_command, host_info
    )


@checked_call("measure")
def measure(
    bench: str = "hackbench",
    *,
    groups: int | Sequence[int] = GROUPS,
    ipc: str | Sequence[str] = IPCS,
    mode: str | Sequence[str] = MODES,
    loops: int | None = None,
    reps: int = 3,
    pinned: bool | Sequence[bool] | None = None,
    perf: str = "perf",
    progress: bool = True,
    runner: Runner | None = None,
    changes: Sequence[dict[str, Any]] | None = None,
    interrupts: Callable[[], str | None] | None = None,
    sysctl_root: str | Path = "/proc/sys/kernel",
    cgroup_root: str | Path | None = None,
    children: int | Sequence[int] | None = None,
    reaim: str | Path | None = None,
    jobs: int | None = None,
    schbench: str | Path | None = None,
    message_threads: int | Sequence[int] | None = None,
    workers: int | Sequence[int] | None = None,
    runtime_s: int | None = None,
    options: dict[str, Any] | None = None,
) -> pl.DataFrame:
    """Run ``perf bench sched messaging`` (``bench="hackbench"``) or ``perf
    bench sched pipe`` (``bench="pipe"``) on this host under ``perf stat -x,
    -e task-clock,context-switches,cpu-migrations``, ``reps`` times per
    configuration (reps outermost, so slow drift spreads over all configs).

    ``loops`` defaults to 200 for hackbench (``-l``, messages per sender and
    receiver) and 20000 round trips for pipe. ``pinned`` (default False for
    hackbench, both for pipe) runs under ``taskset -c 0``. ``perf bench sched
    pipe`` has no groups or IPC choice: its rows say ``ipc="pipe"``,
    ``groups=1``.

    Returns a polars DataFrame with the columns in ``COLUMNS``: the
    configuration, ``rep``, ``elapsed_s`` (perf's Total time),
    ``task_clock_s``, ``context_switches``, ``cpu_migrations``, and the
    host (``kernel_release``, ``cpus``, ``cpu_model``, ``date``). Raises
    ``MeasureError`` when perf is missing or may not count events.
    ``runner`` replaces ``subprocess.run`` (it gets the command, returns a
    ``CompletedProcess``): for tests and for running perf elsewhere; the
    perf checks are then the runner's business. Its ``stdout`` and
    ``stderr`` may be str, UTF-8 bytes or None; any other result (None,
    binary output) is a ``MeasureError`` naming the command, and so is a
    number perf printed that is not finite and >= 0 (``parse_perf``).
    ``groups``, ``loops``, ``reps`` and ``pinned`` take numpy integers and
    bools too.

    ``changes``: what else to run besides the plain benchmark, each a dict
    of ``policy`` (``chrt --batch 0``, ``--idle 0``, ``--fifo P``, ``--rr
    P``, ``--other 0``), ``rt_priority`` (P, default 1 for fifo/rr),
    ``nice`` (``nice -n``), ``affinity`` (a CPU list, ``taskset -c``), ``rt_runtime_us`` /
    ``rt_period_us`` (``kernel.sched_rt_runtime_us`` / ``_period_us``, set
    for the run and restored after it, also on Ctrl-C and SIGTERM; -1 is no
    RT throttling) and an optional ``name``. The plain run is always
    measured too; within each rep, the plain run and each change alternate
    per configuration. The ``change`` column names each row's change
    (``"plain"`` for none), the change's keys are columns of their own.
    ``res_ipis``, ``cal_ipis`` and ``iwi_ipis`` are the run's deltas of the
    RES, CAL and IWI rows of ``interrupts()`` (default: read
    ``/proc/interrupts``; NaN when it cannot be read), summed over CPUs:
    the whole machine's, as a user reading /proc/interrupts sees them.
    ``sysctl_root``: where the sysctls are written (tests point it at a
    directory). A change this host does not permit (an RT policy without
    the privilege, a sysctl without root) raises ``MeasureError`` saying so.

    A change's ``cgroup`` (a dict of ``schedlab.Group``'s settings:
    ``shares`` or ``weight``, ``quota_us``, ``period_us``, ``burst_us``,
    ``idle``; or a ``Group``) runs the benchmark in a fresh cgroup with
    those settings (cgroup v1 ``cpu`` or v2 ``cpu.max``/``cpu.weight``,
    whichever the host has; made before the run, removed after it), and the
    group's ``cpu.stat`` deltas are the columns ``cg_nr_periods``,
    ``cg_nr_throttled``, ``cg_throttled_s``, ``cg_nr_bursts``,
    ``cg_burst_s`` (NaN for runs without a group). ``cgroup_root``: where
    the groups are made (default the host's ``cpu`` hierarchy; tests give a
    directory).

    ``bench="aim7"`` runs re-aim-7 instead (``host.aim7``): ``reaim`` is the
    directory of its build, holding ``reaim``, ``workfile.compute`` and
    ``reaim.config`` (schedlab does not ship it); each run is one load point
    of the compute mix, ``reaim -sN -eN -i1 -t -jJOBS``, for N in
    ``children`` (default 1, 2, 4) and ``jobs`` jobs per child (default
    100, reaim's own), ``reps`` times (reps outermost). No perf is needed.
    Its frame (``host.aim7.COLUMNS``): ``bench``, ``children``, ``jobs``,
    ``rep``, reaim's own figures ``jobs_per_min``, ``jobs_per_min_per_child``,
    ``jti``, ``real_s`` (parent time), ``cpu_s`` (children's user + system
    time: ``child_user_s`` + ``child_sys_s``), ``std_dev_s``, and the host
    columns. ``runner`` then gets the reaim command (it runs in a fresh
    temporary directory when ``runner`` is None). The hackbench arguments
    (``groups``, ``ipc``, ``mode``, ``loops``, ``pinned``, ``changes``,
    ``perf``, ``interrupts``, ``cgroup_root``) are refused with it, and
    ``children``, ``reaim``, ``jobs`` with the other benches.

    ``bench="schbench"`` runs schbench (``host.schbench``): ``schbench`` is
    the path of a built binary (masoncl/schbench; not shipped), run at each
    ``message_threads`` (``-m``, default 1) × ``workers`` (``-t``; None, the
    default, lets schbench choose) for ``runtime_s`` seconds (``-r``,
    default 30), with ``options`` (a dict of ``host.schbench.OPTIONS``:
    ``warmup_s``, ``operations``, ``sleep_us``, ``requests_per_sec``,
    ``cache_footprint_kb``, ``pipe_bytes``, ``skip_locking``, the model's
    keywords), ``reps`` times. No perf is needed. Its frame
    (``host.schbench.COLUMNS``): the configuration, ``rep``, the report's
    figures under the model's metric names (``rps``, ``wakeup_p50_us`` …,
    ``request_p99_us`` …, ``rps_p50`` …, ``sched_delay_worker_us``) and the
    host columns. The arguments of the other benches are refused with it.
    """
    if not isinstance(bench, str):
        raise ConfigTypeError(
            f"invalid type for bench: got {type_name(bench)} {show(bench)}, expected one of "
            f"{', '.join(BENCHES)}"
        )
    if bench not in BENCHES:
        raise ConfigError(f"invalid bench={show(bench)}: expected one of {', '.join(BENCHES)}")
    # one value each (a list would silently run only its first)
    for name, v in (("loops", loops), ("reps", reps)):
        if is_list(v):
            raise ConfigTypeError(f"invalid type for {name}: got {type_name(v)}, expected int")
    need_bool("progress", progress)
    if runner is not None and not callable(runner):
        raise ConfigTypeError(
            f"invalid type for runner: got {type_name(runner)} {show(runner)}, expected a "
            "callable (command list -> subprocess.CompletedProcess) or None"
        )
    nrep = int_list("reps", reps, 1, 1000)[0]
    aim7_args = {"children": children, "reaim": reaim, "jobs": jobs}
    sb_args = {
        "schbench": schbench,
        "message_threads": message_threads,
        "workers": workers,
        "runtime_s": runtime_s,
        "options": options,
    }
    if bench in ("aim7", "schbench"):
        hb_args = {
            "groups": groups is not GROUPS,
            "ipc": ipc is not IPCS,
            "mode": mode is not MODES,
            "loops": loops is not None,
            "pinned": pinned is not None,
            "changes": changes is not None,
            "perf": perf != "perf",
            "interrupts": interrupts is not None,
            "cgroup_root": cgroup_root is not None,
        }
        own, other = (aim7_args, sb_args) if bench == "aim7" else (sb_args, aim7_args)
        given = [k for k, v in hb_args.items() if v]
        given += [k for k, v in other.items() if v is not None]
        if given:
            raise ConfigError(
                f"invalid {given[0]} for bench={bench!r}: not one of its arguments; it takes "
                f"{', '.join(own)}, reps and progress"
            )
        if bench == "aim7":
            return _measure_aim7(children, reaim, jobs, nrep, progress, runner)
        return _measure_schbench(
            schbench, message_threads, workers, runtime_s, options, nrep, progress, runner
        )
    given = [k for k, v in {**aim7_args, **sb_args}.items() if v is not None]
    if given:
        raise ConfigError(
            f"invalid {given[0]} for bench={bench!r}: it is an argument of "
            f"bench={'aim7' if given[0] in aim7_args else 'schbench'!r}"
        )
    need_str("perf", perf)
    modes = choice_list("mode", mode, MODES)
    if bench == "hackbench":
        ipcs = choice_list("ipc", ipc, IPCS)
        gs = int_list("groups", groups, 1, 10_000)
        lp = int_list("loops", 200 if loops is None else loops, 1, 10_000_000)[0]
        pins = _bools("pinned", False if pinned is None else pinned)
    else:
        ipcs, gs = ["pipe"], [1]
        lp = int_list("loops", 20_000 if loops is None else loops, 1, 100_000_000)[0]
        pins = _bools("pinned", [False, True] if pinned is None else pinned)
    todo = _changes.need_changes(changes)
    if interrupts is not None and not callable(interrupts):
        raise ConfigTypeError(
            f"invalid type for interrupts: got {type_name(interrupts)}, expected a callable "
            "returning /proc/interrupts' text, or None"
        )
    if not isinstance(sysctl_root, str | Path):
        raise ConfigTypeError(
            f"invalid type for sysctl_root: got {type_name(sysctl_root)}, expected a path"
        )
    read_irqs = _changes.read_interrupts if interrupts is None else interrupts
    if any(c["affinity"] is not None for c in todo) and True in pins:
        raise ConfigError(
            "invalid pinned=True with a change that sets affinity: the two tasksets would "
            "nest and the inner one win; measure the pinned run as a change "
            "({'affinity': [0]}) instead"
        )
    if runner is None:
        check_perf_access(perf_event_paranoid(), os.geteuid(), shutil.which(perf), perf)
        runner = run_command
    configs = list(itertools.product(ipcs, modes, gs, pins, range(len(todo))))
    total = nrep * len(configs)
    bar = None
    if progress:
        from .._progress import progress_bar

        bar = progress_bar(total=total, desc=f"perf bench ({bench})", unit="run")
    rows: list[dict[str, Any]] = []
    try:
        for rep in range(nrep):
            for ipc_, mode_, g, pin, ci in configs:
                ch = todo[ci]
                host = host_info()
                root = Path(sysctl_root)
                with contextlib.ExitStack() as stack:
                    cg_path = None
                    if ch["cgroup"] is not None:
                        cg_path = stack.enter_context(
                            _cgroup.make_group(
                                ch["cgroup"],
                                root=None if cgroup_root is None else Path(cgroup_root),
                            )
                        )
                    cmd = bench_command(bench, ipc_, mode_, g, lp, pin, perf, ch, cg_path)
                    with _changes.sysctls(_changes.sysctl_values(ch, root), root):
                        st0 = _cgroup.read_stat(cg_path)
                        before = read_irqs()
                        p = run_one(runner, cmd)
                        after = read_irqs()
                        st1 = _cgroup.read_stat(cg_path)
                code, out, err = completed_output(p, cmd)
                text = out + "\n" + err
                why = _changes.refusal(ch, text)
                if why is not None:
                    raise MeasureError(why)
                if code != 0:
                    low = text.lower()
                    if "paranoid" in low or "permission" in low or "not permitted" in low:
                        check_perf_access(PARANOID_MAX + 1, 1, "perf")
                    raise MeasureError(f"{' '.join(cmd)} exited with {code}:\n{text[-2000:]}")
                nums = parse_perf(text)
                rows.append(
                    {
                        "bench": bench,
                        "ipc": ipc_,
                        "mode": mode_,
                        "groups": g,
                        "loops": lp,
                        "pinned": pin,
                        "change": ch["name"],
                        **{k: _cell(k, ch[k]) for k in _changes.KEYS},
                        "rep": rep,
                        "elapsed_s": nums["elapsed_s"],
                        "task_clock_s": nums["task_clock_s"],
                        "context_switches": nums["context_switches"],
                        "cpu_migrations": nums["cpu_migrations"],
                        **_changes.interrupt_deltas(before, after),
                        **_cgroup.stat_deltas(st0, st1),
                        **host,
                    }
                )
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return frame(rows)


_SCHEMA: dict[str, Any] = {
    "bench": pl.String,
    "ipc": pl.String,
    "mode": pl.String,
    "groups": pl.Int64,
    "loops": pl.Int64,
    "pinned": pl.Boolean,
    "change": pl.String,
    "policy": pl.String,
    "rt_priority": pl.Int64,
    "nice": pl.Int64,
    "affinity": pl.String,
    "rt_runtime_us": pl.Int64,
    "rt_period_us": pl.Int64,
    "cgroup": pl.String,
    "rep": pl.Int64,
    "elapsed_s": pl.Float64,
    "task_clock_s": pl.Float64,
    "context_switches": pl.Float64,
    "cpu_migrations": pl.Float64,
    "res_ipis": pl.Float64,
    "cal_ipis": pl.Float64,
    "iwi_ipis": pl.Float64,
    **dict.fromkeys(_cgroup.STAT_COLUMNS.values(), pl.Float64),
    "kernel_release": pl.String,
    "cpus": pl.Int64,
    "cpu_model": pl.String,
    "date": pl.String,
    "loadavg": pl.Float64,
}


def _cell(key: str, v: Any) -> Any:
    """A change's value as its column holds it (``affinity`` as "0,1")."""
    if key == "affinity" and v is not None:
        return ",".join(map(str, v))
    if key == "cgroup" and v is not None:
        return _cgroup.label(v)
    return v


def frame(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    """Rows as ``measure`` returns them, in ``COLUMNS`` order (columns a row
    lacks, as in frames saved before they existed, are null; ``change`` is
    then ``"plain"``)."""
    df = pl.DataFrame(list(rows), schema=_SCHEMA)
    return df.with_columns(pl.col("change").fill_null(_changes.PLAIN))


def metadata(df: pl.DataFrame) -> dict[str, str]:
    """Parquet key/value metadata for a measured frame: the host and date
    of its first row (``schedlab.host.*``)."""
    if df.height == 0:
        return {}
    r = df.row(0, named=True)
    return {
        f"schedlab.host.{k}": str(r[k]) for k in ("kernel_release", "cpus", "cpu_model", "date")
    }
