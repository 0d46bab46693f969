"""Measure CostModel's fork_ns / clone_ns, child_start_ns /
child_start_thread_ns, exit_ns / exit_thread_ns and reap_ns on this
machine's kernel.

Records `perf bench sched messaging -g G -l 1 [-t]` with `perf sched record`
and reads `perf sched timehist --state`:

- fork interval: the wall time from the first child's first run to the last
  child's, per child. The parent forks without a break, so this is its CPU
  time per fork (the parent's own run segments span the whole phase, so
  they cannot be cut at its start and end).
- child start-up: a child's run time from its first run to its first sleep
  (the poll() after ready()), i.e. ret_from_fork, the copy-on-write faults
  and the one-byte ready() write.
- exit: a child's last run segment, the one that ends in do_exit() (state
  X; an exiting thread shows as ":-1" in state Z). With -l 1 it also holds
  the child's last few messages, a few tens of microseconds.
- reap: the parent's run time after the last child started, per child
  (reading the ready bytes, waking the workers, wait4() for each).

Needs perf and root. Usage: python scripts/calibration/measure_fork_startup.py [--reps 3]
[--groups 10 20 50]. Tracing adds a few microseconds per scheduler event.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

ROW = re.compile(
    r"\s*([\d.]+)\s+\[(\d+)\]\s+(.+?)\[(-?\d+)(?:/\d+)?\]\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+(\S+)"
)


def _timehist(data: Path) -> list[tuple[float, str, int, float, str]]:
    out = subprocess.run(
        ["perf", "sched", "timehist", "--state", "-i", str(data)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = []
    for line in out.splitlines()[3:]:
        m = ROW.match(line)
        if m:
            t, _cpu, comm, tid, run_ms, state = m.groups()
            rows.append((float(t), comm.strip(), int(tid), float(run_ms) * 1e3, state))
    return rows


def measure(groups: int, thread: bool, tmp: Path) -> dict[str, float]:
    data = tmp / "sched.data"
    cmd = ["perf", "sched", "record", "-q", "-o", str(data), "--"]
    cmd += ["perf", "bench", "sched", "messaging", "-g", str(groups), "-l", "1"]
    if thread:
        cmd.append("-t")
    subprocess.run(cmd, check=True, capture_output=True)
    every = _timehist(data)
    rows = [r for r in every if r[1] == "sched-messaging"]
    parent = min(r[2] for r in rows)
    first: dict[int, float] = {}
    run: dict[int, float] = {}
    start: dict[int, float] = {}
    for t, _comm, tid, run_us, state in rows:
        if tid == parent or tid in start:
            continue
        first.setdefault(tid, t)
        run[tid] = run.get(tid, 0.0) + run_us
        if state in ("S", "D"):
            start[tid] = run[tid]
    v = sorted(start.values())
    n = len(v)
    last: dict[int, tuple[float, str]] = {}
    for _t, _comm, tid, run_us, state in rows:
        if tid != parent:
            last[tid] = (run_us, state)
    exits = [r for r, st in last.values() if st == "X"]
    exits += [r[3] for r in every if r[1] == ":-1" and r[4] == "Z"]
    t_last = max(first.values())
    reap = sum(r[3] for r in rows if r[2] == parent and r[0] - r[3] / 1e6 >= t_last)
    return {
        "children": n,
        "fork_interval_us": 1e6 * (max(first.values()) - min(first.values())) / max(n - 1, 1),
        "start_p10_us": v[n // 10],
        "start_median_us": statistics.median(v),
        "start_p90_us": v[9 * n // 10],
        "exit_median_us": statistics.median(exits) if exits else float("nan"),
        "reap_us": reap / n,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--groups", type=int, nargs="+", default=[10, 20, 50])
    args = ap.parse_args()
    print(
        "mode     groups  children  fork interval us  start-up us p10 / median / p90"
        "  exit us median  reap us"
    )
    with tempfile.TemporaryDirectory() as d:
        for thread in (False, True):
            for g in args.groups:
                for _ in range(args.reps):
                    m = measure(g, thread, Path(d))
                    print(
                        f"{'thread' if thread else 'process':8s} {g:6d} {m['children']:9.0f}"
                        f" {m['fork_interval_us']:17.0f}  {m['start_p10_us']:6.0f} /"
                        f" {m['start_median_us']:6.0f} / {m['start_p90_us']:6.0f}"
                        f" {m['exit_median_us']:15.0f} {m['reap_us']:8.1f}"
                    )


if __name__ == "__main__":
    main()
