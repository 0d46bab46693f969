"""Run rt-tests' ``hackbench`` (the binary LKP's hackbench job runs) and
``perf bench sched messaging`` of the same shape side by side under ``perf
stat``, alternating run by run, and store the runs as a polars frame.

LKP's command line is ``hackbench -g $groups --threads --pipe -l $loops``
(rt-tests' defaults: 20 fds, 100-byte messages); ``perf bench sched
messaging -g $groups -t -p -l $loops`` has the same defaults. Example::

    python scripts/realkernel/measure_hackbench_rt.py --groups 2 10 \\
        --loops 1000 200 --reps 5 --out notebooks/data/hackbench-rt-vm2.parquet

Columns: ``prog`` (``rt-tests`` or ``perf-bench``), ``groups``, ``loops``,
``rep``, ``elapsed_s`` (rt-tests' ``Time:``, perf's ``Total time``),
``task_clock_s``, ``context_switches``, ``cpu_migrations`` and the host.
Needs perf (and rt-tests' hackbench on PATH or ``--hackbench``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from measure_aim7 import perf_events  # noqa: E402
from schedlab.host.measurement import host_info  # noqa: E402

EVENTS = ("task-clock", "context-switches", "cpu-migrations")


def commands(prog: str, groups: int, loops: int, hackbench: str = "hackbench") -> list[str]:
    """The command one run executes, ``perf stat`` around the benchmark."""
    cmd = ["perf", "stat", "-x,", "-e", ",".join(EVENTS), "--"]
    if prog == "rt-tests":
        return cmd + [hackbench, "-g", str(groups), "--threads", "--pipe", "-l", str(loops)]
    if prog == "perf-bench":
        return (
            cmd
            + ["perf", "bench", "sched", "messaging", "-g", str(groups), "-t", "-p"]
            + [
                "-l",
                str(loops),
            ]
        )
    raise ValueError(f"invalid prog={prog!r}: expected 'rt-tests' or 'perf-bench'")


def parse(text: str) -> dict[str, float]:
    """Elapsed time (``Time: X`` or ``Total time: X [sec]``) and the perf
    stat counts of ``EVENTS`` from one run's output."""
    counts = perf_events(text, EVENTS)
    out = {k.replace("-", "_").replace("task_clock", "task_clock_s"): v for k, v in counts.items()}
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("Time:") or line.startswith("Total time:"):
            out["elapsed_s"] = float(line.split(":", 1)[1].split()[0])
    need = ("elapsed_s", "task_clock_s", "context_switches", "cpu_migrations")
    missing = [k for k in need if k not in out]
    if missing:
        raise ValueError(f"output lacks {', '.join(missing)}:\n{text[-1000:]}")
    return {k: out[k] for k in need}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", type=int, nargs="+", default=[2, 10])
    ap.add_argument("--loops", type=int, nargs="+", default=[1000, 200], help="one per group count")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--hackbench", default="hackbench", help="rt-tests' hackbench binary")
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args(argv)
    if len(a.loops) != len(a.groups):
        ap.error(
            f"--loops has {len(a.loops)} values, --groups {len(a.groups)}: one per group count"
        )
    import polars as pl

    info = host_info()
    rows: list[dict[str, Any]] = []
    for rep in range(a.reps):
        for g, loops in zip(a.groups, a.loops, strict=True):
            for prog in ("rt-tests", "perf-bench"):
                cmd = commands(prog, g, loops, a.hackbench)
                cp = subprocess.run(cmd, capture_output=True, text=True, check=False)
                if cp.returncode != 0:
                    raise RuntimeError(f"{' '.join(cmd)} failed:\n{cp.stderr[-1000:]}")
                r = parse(cp.stdout + "\n" + cp.stderr)
                rows.append({"prog": prog, "groups": g, "loops": loops, "rep": rep, **r})
                print(f"{prog} g={g} rep={rep}: {r}", file=sys.stderr)
    df = pl.DataFrame(rows).with_columns(**{k: pl.lit(v) for k, v in info.items()})
    df.write_parquet(a.out)
    print(f"wrote {a.out} ({df.height} runs)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
