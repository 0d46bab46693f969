"""Sweep benchmark (prints figures; not a test).

1. Speed-up of a 64-point sweep on all cores over one thread.
2. Per-run overhead of the Python layer: tiny runs through ``sl.sweep`` and
   through ``sl.simulate`` against the same runs' engine time.
"""

from __future__ import annotations

import os
import time

import schedlab as sl
from bench import SWEEP_GRID  # scripts/dev/bench.py, beside this script


def timed(fn, reps: int = 3):
    """The best of ``reps`` wall times, and the last call's result."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    w = sl.workloads.hackbench(groups=4, loops=100)
    cores = os.cpu_count() or 1
    print(f"schedlab {sl.__version__} ({sl.build_profile}), {cores} cores")
    one, df = timed(lambda: sl.sweep("core2-2s", "v3.8", w, SWEEP_GRID, threads=1, progress=False))
    alls, _ = timed(lambda: sl.sweep("core2-2s", "v3.8", w, SWEEP_GRID, progress=False))
    engine = df["wall_s"].sum()
    print(
        f"64-point sweep (hackbench -g 4 -l 100 on core2-2s): 1 thread {one:.3f} s, "
        f"{cores} threads {alls:.3f} s, speed-up {one / alls:.2f}x "
        f"(engine time {engine:.3f} s)"
    )

    tiny = sl.workloads.spinners([0, 0], run_us=100, sleep_us=100)
    n = 400
    t_sweep, df = timed(
        lambda: sl.sweep(
            "vm-2",
            "v3.8",
            tiny,
            {"workload.run_us": list(range(100, 100 + n))},
            duration_s=0.0001,
            threads=1,
            progress=False,
        )
    )
    eng = df["wall_s"].sum()
    t_sim, _ = timed(
        lambda: [sl.simulate("vm-2", "v3.8", tiny, duration_s=0.0001) for _ in range(n)]
    )
    print(
        f"tiny runs ({n}, 0.1 ms simulated each): sweep {1e6 * t_sweep / n:.0f} µs/run, "
        f"simulate {1e6 * t_sim / n:.0f} µs/run, engine {1e6 * eng / n:.1f} µs/run "
        f"-> Python overhead {1e6 * (t_sweep - eng) / n:.0f} µs/run in a sweep"
    )


if __name__ == "__main__":
    main()
