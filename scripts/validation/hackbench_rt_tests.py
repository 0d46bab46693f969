"""rt-tests' hackbench (the binary LKP runs) against the model: calibrate
the cost model on the ``perf bench sched messaging`` rows only, then predict
the rt-tests rows of the same sitting and print both side by side.

    python scripts/validation/hackbench_rt_tests.py \\
        notebooks/data/hackbench-perfbench-vm2.parquet notebooks/data/hackbench-rt-vm2.parquet

The first frame is ``sl.measure("hackbench", ipc="pipe", mode="thread")``
(what ``sl.calibrate`` fits on); the second is
``scripts/realkernel/measure_hackbench_rt.py`` (both programs, alternating
run by run). The model runs ``sl.workloads.hackbench(groups, 20, loops,
100, "pipe", "thread")`` for each rt-tests configuration: rt-tests'
``hackbench -g G --threads --pipe -l L`` has perf's shape (20 fds, 100-byte
messages, receivers then senders per group, the ready/poll start and the
reap in order).
"""

from __future__ import annotations

import argparse
import statistics

import polars as pl
import schedlab as sl


def compare(
    perf_rows: pl.DataFrame,
    rt_rows: pl.DataFrame,
    seeds: int = 3,
    machine: str = "vm-2",
    fit: tuple[str, ...] = ("pipe", "wakeup_idle"),
) -> tuple[sl.Calibration, pl.DataFrame]:
    cal = sl.calibrate(
        perf_rows,
        machine,
        "v6.18",
        fit=fit,
        train=pl.col("groups") > 0,
        seeds=seeds,
        progress=False,
    )
    rows = []
    for (g, loops), sub in rt_rows.filter(pl.col("prog") == "rt-tests").group_by(
        "groups", "loops", maintain_order=True
    ):
        w = sl.workloads.hackbench(g, 20, loops, 100, "pipe", "thread")
        model = [
            sl.simulate(machine, "v6.18", w, costs=cal.costs, seed=s).metrics
            for s in range(1, seeds + 1)
        ]
        real = sub["elapsed_s"].to_list()
        perf = rt_rows.filter(
            (pl.col("prog") == "perf-bench") & (pl.col("groups") == g) & (pl.col("loops") == loops)
        )
        for metric, real_vals, model_vals, perf_vals in (
            ("elapsed_s", real, [m["elapsed_s"] for m in model], perf["elapsed_s"].to_list()),
            (
                "context_switches",
                sub["context_switches"].to_list(),
                [m["context_switches"] for m in model],
                perf["context_switches"].to_list(),
            ),
            (
                "cpu_migrations",
                sub["cpu_migrations"].to_list(),
                [m["cpu_migrations"] for m in model],
                perf["cpu_migrations"].to_list(),
            ),
        ):
            r, mdl = statistics.median(real_vals), statistics.median(model_vals)
            rows.append(
                {
                    "groups": g,
                    "loops": loops,
                    "metric": metric,
                    "rt_tests_median": r,
                    "rt_tests_min": min(real_vals),
                    "rt_tests_max": max(real_vals),
                    "perf_bench_median": statistics.median(perf_vals),
                    "model": mdl,
                    "error": mdl / r - 1 if r else float("nan"),
                }
            )
    return cal, pl.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("perf_bench", help="sl.measure frame (perf bench rows)")
    ap.add_argument("rt_tests", help="measure_hackbench_rt.py frame")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--fit", nargs="+", default=["pipe", "wakeup_idle"], help="sl.calibrate's factors"
    )
    a = ap.parse_args()
    real = pl.read_parquet(a.perf_bench), pl.read_parquet(a.rt_tests)
    cal, df = compare(*real, a.seeds, fit=tuple(a.fit))
    print(cal, cal.factors)
    pl.Config.set_tbl_rows(100)
    pl.Config.set_tbl_width_chars(200)
    print(df)


if __name__ == "__main__":
    main()
