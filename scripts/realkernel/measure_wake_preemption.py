"""Which wake-ups preempt their waker, here and in the model: two checks of
the EEVDF wake-up path that need no calibration.

1. **A pinned pair.** rt-tests' ``hackbench -p -g 1 -f 1 -l LOOPS`` under
   ``taskset -c 0``: one sender, one receiver, one CPU. Recorded through
   tracefs (root), ``--reps`` times; the model runs
   ``hackbench(groups=1, fds=1, ...).with_tasks(cpus=0)`` for ``--seeds``
   seeds, and the same under ``v6.18`` without wake-up preemption (the
   negative control). Compared: wake-ups, ``wakeup_preempt_pct`` (the
   share of the wake-ups done on the waker's own CPU after which the wakee
   replaced the waker, still runnable: see docs/guide/schedule.md) and
   messages per receiver wake-up.
2. **The session's autogroup.** ``perf bench sched messaging -p -g G -l
   200`` under ``perf stat``, with ``kernel.sched_autogroup_enabled`` 1 and
   0 alternating (restored after, also on Ctrl-C), ``--reps`` times: every
   command started from a login session runs in that session's autogroup
   (kernel/sched/autogroup.c) unless the sysctl is 0. The model runs the
   workload at the root and in one task group of default shares
   (``with_tasks(group=...)``), ``--seeds`` seeds each.

Writes both frames to ``--out`` (``OUT-pair.parquet``,
``OUT-autogroup.parquet``) and prints them. Needs root (tracefs, the
sysctl), perf, rt-tests' hackbench and taskset; run it on a quiet machine.

    sudo python scripts/realkernel/measure_wake_preemption.py --reps 5 \
        --seeds 5 --out /tmp/wake-preemption
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl
import schedlab as sl
from schedlab.host.measurement import parse_perf

AUTOGROUP = Path("/proc/sys/kernel/sched_autogroup_enabled")


def pair_row(src: object, loops: int, **cols: object) -> dict[str, object]:
    st = sl.schedule_stats(src)
    a = st.row(st.height - 1, named=True)
    # the receiver reads `loops` messages; its wake-ups are most of them
    return {
        **cols,
        "wakeups": a["wakeups"],
        "switches_in": a["switches_in"],
        "wakeup_preempt_pct": a["wakeup_preempt_pct"],
        "messages_per_wakeup": loops / a["wakeups"] if a["wakeups"] else None,
    }


def pinned_pair(a: argparse.Namespace, keep: Path) -> pl.DataFrame:
    rows = []
    cmd = ["taskset", "-c", "0", "hackbench", "-p", "-g", "1", "-f", "1", "-l", str(a.loops)]
    for rep in range(a.reps):
        path = keep / f"pair-r{rep}.txt"
        info = sl.record_schedule(cmd, path, method="tracefs")
        if info["status"] != 0:
            raise SystemExit(info["output"])
        rows.append(pair_row(path, a.loops, source="real", rep=rep))
    w = sl.workloads.hackbench(groups=1, fds=1, loops=a.loops, ipc="pipe").with_tasks(cpus=0)
    neg = sl.Kernel.preset(a.kernel).replace(wakeup_preemption=False)
    for name, k in (("model", sl.Kernel.preset(a.kernel)), ("negative", neg)):
        for s in range(a.seeds):
            r = sl.simulate(a.machine, k, w, seed=s, trace=True)
            rows.append(pair_row(r, a.loops, source=name, rep=s))
    return pl.DataFrame(rows)


def perf_stat(cmd: list[str]) -> dict[str, float]:
    """``cmd`` under ``perf stat``, read by the library's own parser
    (``parse_perf``: elapsed_s, task_clock_s, context_switches,
    cpu_migrations; a ``MeasureError`` when one is missing)."""
    events = "task-clock,context-switches,cpu-migrations"
    out = subprocess.run(
        ["perf", "stat", "-x,", "-e", events, *cmd], capture_output=True, text=True, check=True
    )
    return parse_perf(out.stdout + out.stderr)


def autogroup(a: argparse.Namespace) -> pl.DataFrame:
    rows = []
    before = AUTOGROUP.read_text().strip()

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # the finally below restores the sysctl

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    try:
        for rep in range(a.reps):
            for on in (1, 0):
                for g in a.groups:
                    AUTOGROUP.write_text(f"{on}\n")
                    cmd = ["perf", "bench", "sched", "messaging", "-p", "-g", str(g), "-l", "200"]
                    m = perf_stat(cmd)
                    rows.append(
                        {
                            "source": "real",
                            "autogroup": bool(on),
                            "groups": g,
                            "rep": rep,
                            "elapsed_s": m["elapsed_s"],
                            "context_switches": m["context_switches"],
                            "cpu_migrations": m["cpu_migrations"],
                        }
                    )
    finally:
        AUTOGROUP.write_text(before + "\n")
    k = sl.Kernel.preset(a.kernel)
    for g in a.groups:
        flips = a.flips
        w = sl.workloads.hackbench(groups=g, loops=200, ipc="pipe", parent_wakee_flips=flips)
        for on in (True, False):
            wl = w.with_tasks(group="session") if on else w
            groups = [sl.Group("session")] if on else None
            for s in range(a.seeds):
                m = sl.simulate(a.machine, k, wl, seed=s, groups=groups).metrics
                rows.append(
                    {
                        "source": "model",
                        "autogroup": on,
                        "groups": g,
                        "rep": s,
                        "elapsed_s": m["elapsed_s"],
                        "context_switches": m["context_switches"],
                        "cpu_migrations": m["cpu_migrations"],
                    }
                )
    return pl.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loops", type=int, default=20000)
    p.add_argument("--groups", type=int, nargs="+", default=[2, 10])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--flips", type=int, default=3, help="hackbench(parent_wakee_flips=...)")
    p.add_argument("--machine", default="vm-2")
    p.add_argument("--kernel", default="v6.18")
    p.add_argument("--skip", choices=["pair", "autogroup"], default=None)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    keep = Path(tempfile.mkdtemp(prefix="schedlab-wake-"))
    pl.Config.set_tbl_rows(100)
    if a.skip != "pair":
        pair = pinned_pair(a, keep)
        pair.write_parquet(f"{a.out}-pair.parquet")
        print(pair)
        print(
            pair.group_by("source", maintain_order=True).agg(
                pl.col("wakeups").median(),
                pl.col("wakeup_preempt_pct").median(),
                pl.col("wakeup_preempt_pct").min().alias("min"),
                pl.col("wakeup_preempt_pct").max().alias("max"),
                pl.col("messages_per_wakeup").median(),
            )
        )
    if a.skip != "autogroup":
        ag = autogroup(a)
        ag.write_parquet(f"{a.out}-autogroup.parquet")
        print(
            ag.group_by("source", "groups", "autogroup", maintain_order=True).agg(
                pl.len().alias("n"),
                pl.col("context_switches").median().alias("cs"),
                pl.col("context_switches").min().alias("cs_min"),
                pl.col("context_switches").max().alias("cs_max"),
                pl.col("elapsed_s").median(),
                pl.col("cpu_migrations").median(),
            )
        )
    print(f"recordings in {keep}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
