"""``measure_latency``: record ``perf bench sched messaging`` on this host
with ``perf sched record`` and read each task's scheduling delays with
``perf sched latency -p`` — the real counterpart of ``Result.latency()``
(both count every switch-in after a wake-up or a preemption;
tools/perf/builtin-sched.c).

The parsing is a pure function of perf's text (``parse_sched_latency``),
tested on recorded output; only ``measure_latency`` runs perf.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from .._check import need_bool, need_str, show
from ..exceptions import ConfigTypeError, MeasureError
from .measurement import (
    IPCS,
    MODES,
    Runner,
    check_perf_access,
    choice_list,
    host_info,
    int_list,
    perf_event_paranoid,
    run_command,
)

#: The comm ``perf bench sched messaging`` gives its tasks (the parent too).
MESSAGING_COMM = "sched-messaging"
#: ``perf sched latency``'s per-task columns, as this frame names them.
TASK_COLUMNS = (
    "comm",
    "pid",
    "runtime_ms",
    "switches",
    "avg_delay_ms",
    "max_delay_ms",
    "max_start_s",
    "max_end_s",
)
_LINE = re.compile(
    r"^\s*(?P<comm>.+?):(?P<pid>\d+|\(\d+\))\s*\|\s*(?P<runtime>[\d.]+) ms\s*\|\s*"
    r"(?P<switches>\d+)\s*\|\s*avg:\s*(?P<avg>[\d.]+) ms\s*\|\s*max:\s*(?P<max>[\d.]+) ms"
    r"\s*\|\s*max start:\s*(?P<start>[\d.]+) s\s*\|\s*max end:\s*(?P<end>[\d.]+) s"
)


def parse_sched_latency(text: str) -> pl.DataFrame:
    """The task rows of ``perf sched latency -p`` output: ``comm``, ``pid``
    (null for a row merged over several pids, without ``-p``),
    ``runtime_ms``, ``switches`` (delays counted), ``avg_delay_ms``,
    ``max_delay_ms``, ``max_start_s``, ``max_end_s``. Raises
    ``MeasureError`` when the text holds no task table."""
    rows: list[dict[str, Any]] = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if m is None:
            continue
        pid = m["pid"]
        rows.append(
            {
                "comm": m["comm"].strip(),
                "pid": None if pid.startswith("(") else int(pid),
                "runtime_ms": float(m["runtime"]),
                "switches": int(m["switches"]),
                "avg_delay_ms": float(m["avg"]),
                "max_delay_ms": float(m["max"]),
                "max_start_s": float(m["start"]),
                "max_end_s": float(m["end"]),
            }
        )
    if not rows:
        raise MeasureError(f"perf sched latency printed no task table:\n{text[-2000:]}")
    schema = {
        "comm": pl.String,
        "pid": pl.Int64,
        "runtime_ms": pl.Float64,
        "switches": pl.Int64,
        "avg_delay_ms": pl.Float64,
        "max_delay_ms": pl.Float64,
        "max_start_s": pl.Float64,
        "max_end_s": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema)


def record_command(
    data: str, ipc: str, mode: str, groups: int, loops: int, perf: str = "perf"
) -> list[str]:
    """``perf sched record`` around one ``perf bench sched messaging`` run."""
    cmd = [perf, "sched", "record", "-o", data, "--"]
    cmd += [perf, "bench", "sched", "messaging", "-g", str(groups), "-l", str(loops)]
    if ipc == "pipe":
        cmd.append("-p")
    if mode == "thread":
        cmd.append("-t")
    return cmd


def _elapsed(text: str) -> float:
    for line in text.splitlines():
        if line.strip().startswith("Total time:"):
            try:
                return float(line.split(":", 1)[1].split()[0])
            except (ValueError, IndexError):
                break
    raise MeasureError(f"perf bench printed no 'Total time: N [sec]' line:\n{text[-2000:]}")


def measure_latency(
    *,
    groups: int | Sequence[int] = 2,
    ipc: str | Sequence[str] = IPCS,
    mode: str | Sequence[str] = MODES,
    loops: int = 200,
    reps: int = 3,
    perf: str = "perf",
    progress: bool = True,
    runner: Runner | None = None,
) -> pl.DataFrame:
    """Run ``perf bench sched messaging`` under ``perf sched record`` on
    this host, ``reps`` times per configuration (reps outermost), and read
    each run with ``perf sched latency -p``.

    Returns a row per ``sched-messaging`` task and run: the configuration
    (``ipc``, ``mode``, ``groups``, ``loops``), ``rep``, ``elapsed_s`` (the
    bench's Total time under recording, which slows it), the
    ``TASK_COLUMNS`` and the host columns (``host_info``). Other tasks
    (kernel threads, perf itself) are left out; perf cannot tell senders
    from receivers (one comm), so neither does the frame.
    ``runner`` replaces ``subprocess.run`` as in ``measure``.
    """
    ipcs = choice_list("ipc", ipc, IPCS)
    modes = choice_list("mode", mode, MODES)
    gs = int_list("groups", groups, 1, 100)
    lp = int_list("loops", loops, 1, 1_000_000)[0]
    nrep = int_list("reps", reps, 1, 100)[0]
    need_str("perf", perf)
    need_bool("progress", progress)
    if runner is not None and not callable(runner):
        raise ConfigTypeError(
            f"invalid type for runner: got {show(runner)}, expected a callable or None"
        )
    if runner is None:
        check_perf_access(perf_event_paranoid(), os.geteuid(), shutil.which(perf), perf)
        runner = run_command
    configs = list(itertools.product(ipcs, modes, gs))
    bar = None
    if progress:
        from .._progress import progress_bar

        bar = progress_bar(total=nrep * len(configs), desc="perf sched record", unit="run")
    frames: list[pl.DataFrame] = []
    try:
        with tempfile.TemporaryDirectory(prefix="schedlab-sched-") as tmp:
            data = str(Path(tmp) / "perf.data")
            for rep in range(nrep):
                for ipc_, mode_, g in configs:
                    frames.append(_one(runner, perf, data, ipc_, mode_, g, lp, rep))
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return pl.concat(frames)


def _one(
    runner: Runner, perf: str, data: str, ipc: str, mode: str, groups: int, loops: int, rep: int
) -> pl.DataFrame:
    host = host_info()
    cmd = record_command(data, ipc, mode, groups, loops, perf)
    p = runner(cmd)
    text = p.stdout + "\n" + p.stderr
    if p.returncode != 0:
        raise MeasureError(f"{' '.join(cmd)} exited with {p.returncode}:\n{text[-2000:]}")
    elapsed = _elapsed(text)
    lat_cmd = [perf, "sched", "latency", "-p", "-i", data]
    q = runner(lat_cmd)
    if q.returncode != 0:
        raise MeasureError(
            f"{' '.join(lat_cmd)} exited with {q.returncode}:\n{(q.stdout + q.stderr)[-2000:]}"
        )
    tasks = parse_sched_latency(q.stdout).filter(pl.col("comm") == MESSAGING_COMM)
    return tasks.select(
        pl.lit(ipc).alias("ipc"),
        pl.lit(mode).alias("mode"),
        pl.lit(groups, dtype=pl.Int64).alias("groups"),
        pl.lit(loops, dtype=pl.Int64).alias("loops"),
        pl.lit(rep, dtype=pl.Int64).alias("rep"),
        pl.lit(elapsed).alias("elapsed_s"),
        *TASK_COLUMNS,
        *(pl.lit(v).alias(k) for k, v in host.items()),
    )
