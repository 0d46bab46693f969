"""A command's whole schedule recorded through tracefs.

``perf sched record`` reads the ``sched:*`` tracepoints through perf's
mmap ring buffers and, on a small VM, loses events (``perf sched latency``
then reports "context switch bugs"). The kernel's own ftrace ring buffer
(``/sys/kernel/tracing``, ``Documentation/trace/ftrace.rst``) records them
in the kernel, per CPU, and says how many it lost: ``per_cpu/cpuN/stats``
counts an ``overrun`` (events overwritten when the buffer was full), a
``commit overrun`` (events dropped when nested events filled it) and
``dropped events`` (with the ``overwrite`` option off).

``record_tracefs`` makes its own tracing instance (``instances/NAME``, so
the global buffer and another tracer's settings are left alone), sizes its
per-CPU buffers, enables ``sched_switch``, ``sched_waking``,
``sched_wakeup``, ``sched_wakeup_new``, ``sched_migrate_task``,
``sched_process_fork`` and ``sched_process_exit`` with the ``record-tgid``
option, runs the command, and writes the instance's ``trace`` text (the
layout ``workloads.from_trace`` and ``compare_schedule`` read) with one
header line naming the command's pid::

    # schedlab record: pid=1234 tracefs=/sys/kernel/tracing lost=0 command=perf bench ...

A recording that lost events is refused (``MeasureError``) unless
``lost_ok=True``; then the count is in the header and the returned dict.
The whole machine is recorded (no pid filter): a statistic of the command's
tasks needs the switches of the tasks that ran beside them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._check import need_int, warn_user
from ..exceptions import MeasureError
from ..io.replay import RECORD_HEADER as HEADER

#: The tracepoints a recording enables (``include/trace/events/sched.h``).
EVENTS = (
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_fork",
    "sched_process_exit",
)
#: Where tracefs is mounted, in the order tried.
ROOTS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")
#: Per-CPU buffer size by default, KiB: hackbench -g 20 -l 200 writes about
#: 10 MB in all here; four times that per CPU leaves room.
BUFFER_KB = 65536


def tracefs_root(root: str | os.PathLike[str] | None = None, *, mount: bool = True) -> Path:
    """The tracefs mount point: ``root`` if given, else the first of
    ``ROOTS`` that holds ``instances``; when none does and ``mount`` is
    true (and we are root), tracefs is mounted at ``/sys/kernel/tracing``.
    ``MeasureError`` says why none is usable."""
    if root is not None:
        p = Path(root)
        if not (p / "instances").is_dir():
            raise MeasureError(f"invalid tracefs={str(root)!r}: no tracefs there (no instances/)")
        return p
    for r in ROOTS:
        if (Path(r) / "instances").is_dir():
            return Path(r)
    if mount and os.geteuid() == 0 and Path(ROOTS[0]).is_dir():
        subprocess.run(
            ["mount", "-t", "tracefs", "nodev", ROOTS[0]], capture_output=True, check=False
        )
        if (Path(ROOTS[0]) / "instances").is_dir():
            return Path(ROOTS[0])
    raise MeasureError(
        "tracefs is not mounted and could not be mounted (needs root: "
        "mount -t tracefs nodev /sys/kernel/tracing)"
    )


def tracefs_writable(root: str | os.PathLike[str] | None = None) -> bool:
    """True when a tracing instance can be made under tracefs here."""
    try:
        r = tracefs_root(root)
    except MeasureError:
        return False
    return os.access(r / "instances", os.W_OK)


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as e:
        raise MeasureError(f"cannot write {value!r} to {path}: {e.strerror or e}") from None


def lost_events(instance: Path) -> dict[int, int]:
    """Events lost per CPU in a tracing instance: ``overrun``, ``commit
    overrun`` and ``dropped events`` of ``per_cpu/cpuN/stats`` (each a
    loss, ``Documentation/trace/ftrace.rst``)."""
    out: dict[int, int] = {}
    for d in sorted((instance / "per_cpu").glob("cpu*")):
        lost = 0
        for line in (d / "stats").read_text().splitlines():
            key, _, val = line.partition(":")
            if key.strip() in ("overrun", "commit overrun", "dropped events"):
                lost += int(val.split()[0])
        out[int(d.name[3:])] = lost
    return out


def record_tracefs(
    command: Sequence[str],
    output: str | os.PathLike[str],
    *,
    buffer_kb: int = BUFFER_KB,
    tracefs: str | os.PathLike[str] | None = None,
    lost_ok: bool = False,
) -> dict[str, Any]:
    """Run ``command`` with the scheduler's tracepoints recorded in a
    tracefs instance of ``buffer_kb`` KiB per CPU and write the ``trace``
    text to ``output``. Returns ``text`` (the path), ``pid`` (the
    command's), ``status`` (its exit status), ``lost`` (events lost, all
    CPUs), ``elapsed_s`` (the command's wall time) and ``output`` (what it
    printed)."""
    if not command or not all(isinstance(c, str) for c in command):
        raise MeasureError(
            f"invalid command={list(command) if command else command!r}: expected a "
            "non-empty list of strings (the program and its arguments)"
        )
    buffer_kb = need_int("buffer_kb", buffer_kb, lo=64, hi=4 << 20)
    if shutil.which(command[0]) is None:
        raise MeasureError(f"invalid command={list(command)!r}: {command[0]!r} not found")
    root = tracefs_root(tracefs)
    inst = root / "instances" / f"schedlab-{os.getpid()}-{time.monotonic_ns()}"
    try:
        inst.mkdir()
    except OSError as e:
        raise MeasureError(f"cannot make a tracing instance {inst}: {e.strerror or e}") from None
    try:
        _write(inst / "buffer_size_kb", str(buffer_kb))
        _write(inst / "trace_clock", "global")
        _write(inst / "options" / "record-tgid", "1")
        for ev in EVENTS:
            _write(inst / "events" / "sched" / ev / "enable", "1")
        _write(inst / "trace", "")
        _write(inst / "tracing_on", "1")
        start = time.perf_counter()
        try:
            p = subprocess.Popen(
                list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
        except OSError as e:
            raise MeasureError(f"cannot run {command[0]!r}: {e.strerror or e}") from None
        printed, _ = p.communicate()
        elapsed = time.perf_counter() - start
        _write(inst / "tracing_on", "0")
        lost = lost_events(inst)
        total = sum(lost.values())
        if total and not lost_ok:
            raise MeasureError(
                f"the recording lost {total} events ({lost} per CPU) with buffer_kb={buffer_kb}: "
                "give a larger buffer_kb, or lost_ok=True to keep it"
            )
        out = Path(output)
        with open(inst / "trace") as src, open(out, "w") as dst:
            dst.write(
                f"{HEADER} pid={p.pid} tracefs={root} lost={total} command={shlex.join(command)}\n"
            )
            shutil.copyfileobj(src, dst, 1 << 20)
    finally:
        try:
            (inst / "tracing_on").write_text("0")
        except OSError:
            pass
        # an instance with its buffers goes with rmdir (its files cannot be removed)
        why = ""
        for _ in range(50):
            try:
                inst.rmdir()
                break
            except OSError as e:
                why = e.strerror or str(e)
                time.sleep(0.05)
        else:
            warn_user(
                f"cannot remove the tracing instance {inst} ({why}); its buffers stay "
                f"allocated until it is removed (rmdir {inst})",
                RuntimeWarning,
            )
    return {
        "text": str(out),
        "pid": p.pid,
        "status": p.returncode,
        "lost": total,
        "elapsed_s": elapsed,
        "output": printed,
    }
