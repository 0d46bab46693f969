"""Measure, on this host, the effects of task policy, nice and affinity: perf bench sched
messaging (all four hackbench variants, 2 and 10 groups, 3 reps) plain and
under taskset -c 0, chrt --batch 0, chrt --idle 0, chrt --fifo 1, chrt --rr 1
and chrt --fifo 1 with RT throttling off (kernel.sched_rt_runtime_us=-1).

Needs perf and root (the RT policies and the sysctl). Run it on a quiet
machine: nothing else building or benchmarking beside it.

    python scripts/validation/measure_policy_effects.py -o notebooks/data/policy-effects-vm2.parquet
"""

from __future__ import annotations

import argparse
import time

import polars as pl
import schedlab as sl
from schedlab.host.measurement import metadata

CHANGES = [
    {"name": "taskset -c 0", "affinity": [0]},
    {"name": "chrt --batch 0", "policy": "batch"},
    {"name": "chrt --idle 0", "policy": "idle"},
    {"name": "chrt --fifo 1", "policy": "fifo", "rt_priority": 1},
    {"name": "chrt --rr 1", "policy": "rr", "rt_priority": 1},
    {
        "name": "chrt --fifo 1, no RT throttling",
        "policy": "fifo",
        "rt_priority": 1,
        "rt_runtime_us": -1,
    },
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--groups", default="2,10")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--loops", type=int, default=200)
    a = ap.parse_args()
    t0 = time.time()
    df = sl.measure(
        "hackbench",
        groups=[int(g) for g in a.groups.split(",")],
        loops=a.loops,
        reps=a.reps,
        changes=CHANGES,
    )
    df.write_parquet(a.output, metadata=metadata(df))
    print(f"{df.height} runs in {time.time() - t0:.0f} s -> {a.output}")
    print(
        df.group_by("change", "ipc", "mode", "groups")
        .agg(
            pl.col("elapsed_s").median(),
            pl.col("context_switches").median(),
            pl.col("res_ipis").median(),
        )
        .sort("change", "ipc", "mode", "groups")
    )


if __name__ == "__main__":
    main()
