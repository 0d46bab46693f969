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

from .._check import ascii_digits, checked_call, need_bool, need_str, show
from ..exceptions import ConfigTypeError, MeasureError
from .measurement import (
    IPCS,
    MODES,
    check_perf_access,
    choice_list,
    host_info,
    int_list,
    perf_event_paranoid,
    perf_number,
    total_time_s,
)
from .runner import (
    Runner,
    completed_output,
    perf_text,
    run_command,
    run_one,
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
#: A task row: ``comm:pid`` (``comm:(N)`` for N pids merged) and the rest,
#: read field by field (``_FIELDS``) so that a row with a field perf did not
#: write is refused by name rather than skipped.
_ROW = re.compile(
    r"^\s*(?P<comm>.+?):(?P<pid>[0-9]+|\([0-9]+\))\s*\|(?P<rest>.*\|\s*avg:.*)$", re.ASCII
)
_FIELDS = re.compile(
    r"^\s*(?P<runtime>\S+) ms\s*\|\s*(?P<switches>\S+)\s*\|\s*avg:\s*(?P<avg>\S+) ms\s*\|"
    r"\s*max:\s*(?P<max>\S+) ms\s*\|\s*max start:\s*(?P<start>\S+) s\s*\|"
    r"\s*max end:\s*(?P<end>\S+) s",
    re.ASCII,
)


@checked_call("parse_sched_latency")
def parse_sched_latency(text: str | bytes) -> pl.DataFrame:
    """The task rows of ``perf sched latency -p`` output: ``comm``, ``pid``
    (null for a row merged over several pids, without ``-p``),
    ``runtime_ms``, ``switches`` (delays counted), ``avg_delay_ms``,
    ``max_delay_ms``, ``max_start_s``, ``max_end_s``. ``text``: a str, or
    bytes (not UTF-8 in a task's name is read as U+FFFD: a comm may be any
    bytes). Raises ``MeasureError`` when the text holds no task table or a
    task row holds a field that is not a finite number >= 0 (a count not
    an integer)."""
    text = perf_text(text, "perf sched latency output", strict=False)
    rows: list[dict[str, Any]] = []
    for line in text.splitlines():
        m = _ROW.match(line)
        if m is None:
            continue
        f = _FIELDS.match(m["rest"])
        if f is None:
            raise MeasureError(
                f"perf sched latency: a task row without its fields: {line.strip()[:200]!r}"
            )
        pid = m["pid"]
        switches = f["switches"]
        if not ascii_digits(switches, 18):
            raise MeasureError(
                f"perf sched latency: switches is {switches[:40]!r}, not a count, in "
                f"{line.strip()[:200]!r}"
            )
        if not pid.startswith("(") and len(pid) > 18:
            raise MeasureError(f"perf sched latency: pid {pid[:40]}... in {line.strip()[:200]!r}")
        rows.append(
            {
                # a str may hold lone surrogates, which a polars column cannot
                "comm": m["comm"].strip().encode("utf-8", "replace").decode(),
                "pid": None if pid.startswith("(") else int(pid),
                "runtime_ms": perf_number("runtime", f["runtime"], line),
                "switches": int(switches),
                "avg_delay_ms": perf_number("avg delay", f["avg"], line),
                "max_delay_ms": perf_number("max delay", f["max"], line),
                "max_start_s": perf_number("max start", f["start"], line),
                "max_end_s": perf_number("max end", f["end"], line),
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
            return total_time_s(line)
    raise MeasureError(f"perf bench printed no 'Total time: N [sec]' line:\n{text[-2000:]}")


@checked_call("measure_latency")
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
    code, out, err = completed_output(run_one(runner, cmd), cmd)
    text = out + "\n" + err
    if code != 0:
        raise MeasureError(f"{' '.join(cmd)} exited with {code}:\n{text[-2000:]}")
    elapsed = _elapsed(text)
    lat_cmd = [perf, "sched", "latency", "-p", "-i", data]
    code, out, err = completed_output(run_one(runner, lat_cmd), lat_cmd, strict=False)
    if code != 0:
        raise MeasureError(f"{' '.join(lat_cmd)} exited with {code}:\n{(out + err)[-2000:]}")
    tasks = parse_sched_latency(out).filter(pl.col("comm") == MESSAGING_COMM)
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
