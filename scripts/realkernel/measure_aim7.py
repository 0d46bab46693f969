"""Run re-aim-7 (OSDL's AIM7, public repository davidlohr/areaim) on this
host under ``perf stat`` and ``strace -c``, and store what it measured as
polars frames: the per-test table ``sl.workloads.aim7``'s costs come from
and the compute mix at several task counts that the model is checked
against (docs/guide/workloads.md, "AIM7 measured here").

Build re-aim-7 first (its source is not part of schedlab); any build will
do, for example ``osdl-aim-7`` configured and made with autotools. Then::

    sudo python scripts/realkernel/measure_aim7.py --reaim /path/to/reaim \\
        --workfile /path/to/workfile.compute --config /path/to/reaim.config \\
        --reps 3 --out notebooks/data/aim7-real-vm2.parquet

Two frames are written: ``OUT`` (one row per reaim run: the per-test runs
at 1 and 2 children, the disk tests' variants and the mix at ``--tasks``)
and ``OUT`` with ``-syscalls`` before the suffix (``strace -f -c -w`` of
each test run alone: calls and wall seconds per system call). Every row
carries the host (``schedlab``'s ``host_info()``: kernel release, CPUs, CPU
model, the date the script started and the load average then). Root is needed for the
``sched:sched_process_fork`` tracepoint and for ``strace``.

Per run: reaim's own figures from its CSV (``parent_tm`` = its "Parent
Time", the wall time from the start signal to the last child's exit;
``childU_tm``/``childS_tm`` = the reaped children's ``tms_cutime``/
``tms_cstime``, which include their own reaped children, the ``sh -c sync``
of the disk tests; JPM, JTI) and ``perf stat``'s counts over the whole
command (task clock, context switches, migrations, forks, page faults). The
whole command includes the driver's ``sleep(1)`` and its forking of the
children; ``blocked_s`` = parent time − children's CPU time is the time the
child (one child) was neither running nor runnable.
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schedlab.host import aim7 as _aim7
from schedlab.host.measurement import host_info

EVENTS = (
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "sched:sched_process_fork",
    "page-faults",
)
CSV_FIELDS = tuple(_aim7.CSV_FIELDS)


def parse_reaim_csv(text: str) -> dict[str, float]:
    """The last load point of reaim's ``<logprefix>.csv`` under its own
    field names (``forked`` for ``Forks``): the library's parser
    (``schedlab.host.aim7.parse_reaim_csv``, which refuses malformed output
    with a ``MeasureError`` naming the line)."""
    got = _aim7.parse_reaim_csv(text)
    out = {"forked": got["children"]}
    for k, col in _aim7.CSV_FIELDS.items():
        out[k] = got[col]
    return out


def perf_events(text: str, events: Sequence[str]) -> dict[str, float]:
    """The ``perf stat -x,`` values of ``events`` found in ``text`` (the
    task clock in seconds); an event perf did not count is an error."""
    out: dict[str, float] = {}
    for raw in text.splitlines():
        f = raw.strip().split(",")
        if len(f) < 3 or f[2] not in events:
            continue
        if f[0].startswith("<"):
            raise ValueError(f"perf stat did not count {f[2]}: {f[0]}")
        v = float(f[0])
        if f[2] == "task-clock":
            v *= {"msec": 1e-3, "usec": 1e-6, "nsec": 1e-9, "sec": 1.0}[f[1] or "msec"]
        out[f[2]] = v
    return out


def parse_perf_stat(text: str) -> dict[str, float]:
    """``perf stat -x,`` counts of ``EVENTS`` (task clock in seconds)."""
    out = perf_events(text, EVENTS)
    missing = [e for e in EVENTS if e not in out]
    if missing:
        raise ValueError(f"perf stat output lacks {', '.join(missing)}")
    return {
        "task_clock_s": out["task-clock"],
        "context_switches": out["context-switches"],
        "cpu_migrations": out["cpu-migrations"],
        "forks": out["sched:sched_process_fork"],
        "page_faults": out["page-faults"],
    }


_STRACE_ROW = re.compile(
    r"^\s*(?P<pct>[\d.]+)\s+(?P<secs>[\d.]+)\s+(?P<usecs>\d+)\s+(?P<calls>\d+)"
    r"(?:\s+(?P<errors>\d+))?\s+(?P<name>[a-z_0-9]+)\s*$"
)


def parse_strace_summary(text: str) -> list[dict[str, Any]]:
    """The rows of ``strace -c`` (``% time seconds usecs/call calls errors
    syscall``); the ``total`` row is left out."""
    rows = []
    for line in text.splitlines():
        m = _STRACE_ROW.match(line)
        if m and m["name"] != "total":
            rows.append(
                {
                    "syscall": m["name"],
                    "calls": int(m["calls"]),
                    "errors": int(m["errors"] or 0),
                    "seconds": float(m["secs"]),
                }
            )
    return rows


def workfile_tests(path: Path) -> list[tuple[int, str]]:
    """The ``hits name`` lines of a re-aim-7 workfile."""
    out = []
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) == 2 and f[0].isdigit():
            out.append((int(f[0]), f[1]))
    return out


def reaim_command(
    reaim: str,
    workfile: Path,
    config: Path,
    tasks: int,
    jobs: int,
    prefix: Path,
    syncs: bool = True,
) -> list[str]:
    """One load point of ``tasks`` children; ``syncs=False`` adds ``-y``
    (the disk tests skip their ``system("sync")``)."""
    return [
        reaim,
        *([] if syncs else ["-y"]),
        f"-s{tasks}",
        f"-e{tasks}",
        f"-j{jobs}",
        "-f",
        str(workfile),
        "-c",
        str(config),
        "-l",
        str(prefix),
    ]


def run_one(
    reaim: str,
    workfile: Path,
    config: Path,
    tasks: int,
    jobs: int,
    work: Path,
    syncs: bool = True,
) -> dict[str, float]:
    prefix = work / "run"
    for p in work.glob("run*"):
        p.unlink()
    cmd = ["perf", "stat", "-x,", "-e", ",".join(EVENTS), "--"]
    cmd += reaim_command(reaim, workfile, config, tasks, jobs, prefix, syncs)
    cp = subprocess.run(cmd, capture_output=True, text=True, cwd=work, check=False)
    if cp.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({cp.returncode}):\n{cp.stderr[-2000:]}")
    row = parse_reaim_csv((work / "run.csv").read_text())
    row.update(parse_perf_stat(cp.stderr))
    return row


def strace_one(
    reaim: str, workfile: Path, config: Path, jobs: int, work: Path
) -> list[dict[str, Any]]:
    out = work / "strace.txt"
    cmd = ["strace", "-f", "-c", "-w", "-o", str(out), "--"]
    cmd += reaim_command(reaim, workfile, config, 1, jobs, work / "st")
    cp = subprocess.run(cmd, capture_output=True, text=True, cwd=work, check=False)
    if cp.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({cp.returncode}):\n{cp.stderr[-2000:]}")
    return parse_strace_summary(out.read_text())


def config_with_poolsize(config: Path, poolsize_kb: int, out: Path) -> Path:
    """A copy of reaim.config with ``POOLSIZE`` set (``0`` = each child's
    files are ``FILESIZE`` only)."""
    lines = [ln for ln in config.read_text().splitlines() if not ln.startswith("POOLSIZE")]
    lines.append(f"POOLSIZE {poolsize_kb}k")
    out.write_text("\n".join(lines) + "\n")
    return out


def jobs_for(parent_tm: float, jobs: int, min_seconds: float, cap: int) -> int:
    """Enough jobs (a multiple of 100, at most ``cap``) for a run of at least
    ``min_seconds`` (reaim's times have 10 ms resolution), from a probe run
    of ``jobs`` that took ``parent_tm``."""
    if parent_tm >= min_seconds:
        return jobs
    n = math.ceil(jobs * min_seconds / max(parent_tm, 0.01) / 100) * 100
    return min(cap, max(jobs, n))


def config_sizes(config: Path) -> tuple[int, int]:
    """``FILESIZE`` and ``POOLSIZE`` of a reaim.config, in KB (``10k``,
    ``1m``, ``0``)."""
    sizes = {"FILESIZE": 0, "POOLSIZE": 0}
    for line in config.read_text().splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in sizes:
            v = f[1].lower()
            mult = {"k": 1, "m": 1024}.get(v[-1], 0)
            if not mult:  # driver.c: a size needs its K or M
                raise ValueError(f"{config}: {f[0]} {f[1]!r} has no K or M")
            sizes[f[0]] = int(v[:-1]) * mult
    return sizes["FILESIZE"], sizes["POOLSIZE"]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reaim", required=True, help="path of a re-aim-7 'reaim' binary")
    ap.add_argument("--workfile", required=True, type=Path, help="its workfile.compute")
    ap.add_argument("--config", required=True, type=Path, help="its reaim.config")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=100, help="reaim -j of the mix runs")
    ap.add_argument("--tasks", type=int, nargs="*", default=[1, 2, 4], help="mix task counts")
    ap.add_argument("--test-children", type=int, nargs="*", default=[1, 2])
    ap.add_argument(
        "--min-seconds",
        type=float,
        default=1.0,
        help="run each test alone with enough jobs to take at least this long",
    )
    ap.add_argument("--max-jobs", type=int, default=20_000)
    ap.add_argument(
        "--poolsize-kb",
        type=int,
        nargs="*",
        default=[0],
        help="also run the disk tests (1 child) with these POOLSIZEs",
    )
    ap.add_argument("--only", nargs="*", help="measure only these tests")
    ap.add_argument("--no-strace", action="store_true")
    ap.add_argument("--out", required=True, type=Path, help="parquet file to write")
    a = ap.parse_args(argv)
    import polars as pl

    tests = workfile_tests(a.workfile)
    if a.only is not None:
        tests = [t for t in tests if t[1] in a.only]
    info = host_info()
    filesize, poolsize = config_sizes(a.config)
    rows: list[dict[str, Any]] = []
    sysrows: list[dict[str, Any]] = []

    def record(test: str, tasks: int, rep: int, jobs: int, r: dict[str, float], **kw: Any) -> None:
        row = {"test": test, "tasks": tasks, "rep": rep, "jobs": jobs, "syncs": True}
        row.update({"filesize_kb": filesize, "poolsize_kb": poolsize, **kw, **r})
        rows.append(row)
        print(f"{row}", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="aim7-") as tmp:
        work = Path(tmp)
        small = {
            kb: config_with_poolsize(a.config, kb, work / f"config-{kb}") for kb in a.poolsize_kb
        }
        # each variant of each test runs enough jobs for min_seconds, sized
        # by a probe of its own (a -y run of a disk test is 10-100x shorter)
        njobs: dict[tuple[str, bool, int], int] = {}

        def sized(name: str, cfg: Path, syncs: bool, kb: int) -> int:
            key = (name, syncs, kb)
            if key not in njobs:
                probe = run_one(a.reaim, work / f"wf-{name}", cfg, 1, 100, work, syncs=syncs)
                njobs[key] = jobs_for(probe["parent_tm"], 100, a.min_seconds, a.max_jobs)
            return njobs[key]

        for _, name in tests:
            (work / f"wf-{name}").write_text(f"10 {name}\n")
            sized(name, a.config, True, poolsize)
            if name.startswith("disk_"):
                sized(name, a.config, False, poolsize)
                for kb, cfg in small.items():
                    sized(name, cfg, True, kb)
                    sized(name, cfg, False, kb)
        for rep in range(a.reps):
            for tasks in a.tasks:
                r = run_one(a.reaim, a.workfile, a.config, tasks, a.jobs, work)
                record("compute", tasks, rep, a.jobs, r)
            for _, name in tests:
                wf = work / f"wf-{name}"
                j = njobs[(name, True, poolsize)]
                for kids in a.test_children:
                    record(name, kids, rep, j, run_one(a.reaim, wf, a.config, kids, j, work))
                if not name.startswith("disk_"):
                    continue
                # without its system("sync") calls (-y): the difference is
                # the cost of the sync helpers; and with smaller files
                j = njobs[(name, False, poolsize)]
                r = run_one(a.reaim, wf, a.config, 1, j, work, syncs=False)
                record(name, 1, rep, j, r, syncs=False)
                for kb, cfg in small.items():
                    for syncs in (True, False):
                        j = njobs[(name, syncs, kb)]
                        r = run_one(a.reaim, wf, cfg, 1, j, work, syncs=syncs)
                        record(name, 1, rep, j, r, syncs=syncs, poolsize_kb=kb)
        if not a.no_strace:
            for _, name in tests:
                wf = work / f"wf-{name}"
                j = njobs[(name, True, poolsize)]
                for s in strace_one(a.reaim, wf, a.config, j, work):
                    sysrows.append({"test": name, "jobs": j, **s})
    df = pl.DataFrame(rows).with_columns(**{k: pl.lit(v) for k, v in info.items()})
    df.write_parquet(a.out)
    if sysrows:
        sdf = pl.DataFrame(sysrows).with_columns(**{k: pl.lit(v) for k, v in info.items()})
        sdf.write_parquet(a.out.with_name(a.out.stem + "-syscalls" + a.out.suffix))
    print(f"wrote {a.out} ({df.height} runs)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
