"""Measure ``perf bench sched messaging`` on this host twice over, in one
sitting: plain runs under ``perf stat`` (``sl.measure``, what
``sl.calibrate`` fits on) and runs under ``perf sched record`` read with
``perf sched latency -p`` (``schedlab.host.sched_latency.measure_latency``),
interleaved rep by rep so slow drift spreads over both. Example::

    python scripts/realkernel/measure_sched_latency.py --reps 3 \\
        --plain notebooks/data/latency-plain-vm2.parquet \\
        --latency notebooks/data/latency-perf-sched-vm2.parquet

Run it on a quiet machine (nothing else building or measuring).
"""

from __future__ import annotations

import argparse

import polars as pl
import schedlab as sl
from schedlab.host.sched_latency import measure_latency


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", type=int, nargs="+", default=[1, 2, 5, 10])
    ap.add_argument("--latency-groups", type=int, nargs="+", default=[2])
    ap.add_argument("--loops", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--plain", required=True, help="Parquet file for the perf stat runs")
    ap.add_argument("--latency", required=True, help="Parquet file for the perf sched rows")
    a = ap.parse_args()
    plain, lat = [], []
    for rep in range(a.reps):
        p = sl.measure("hackbench", groups=a.groups, loops=a.loops, reps=1, progress=False)
        plain.append(p.with_columns(pl.lit(rep, dtype=pl.Int64).alias("rep")))
        q = measure_latency(groups=a.latency_groups, loops=a.loops, reps=1, progress=False)
        lat.append(q.with_columns(pl.lit(rep, dtype=pl.Int64).alias("rep")))
        print(f"rep {rep}: {p.height} plain runs, {q.height} task rows", flush=True)
    pl.concat(plain).write_parquet(a.plain)
    pl.concat(lat).write_parquet(a.latency)
    print(f"wrote {a.plain} and {a.latency}")


if __name__ == "__main__":
    main()
