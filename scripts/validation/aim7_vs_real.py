"""The model's re-aim-7 against the real one on this VM: the compute mix at
each task count of a frame of ``scripts/realkernel/measure_aim7.py``, real
(median, min–max over the repetitions) beside the model (median over seeds)
for the driver's columns: jobs/min, jobs/min/child, real, cpu and JTI.

    python scripts/validation/aim7_vs_real.py notebooks/data/aim7-real-vm2.parquet

The model's per-test costs come from the same frame's per-test runs
(``scripts/dev/aim7_costs.py``); the mix is not fitted, so this is a
prediction of it.
"""

from __future__ import annotations

import argparse
import statistics

import polars as pl
import schedlab as sl

COLUMNS = (
    ("jobs_per_min", "JPM"),
    ("jobs_per_min_per_child", "JPM_C"),
    ("real_s", "parent_tm"),
    ("cpu_s", "cpu"),
    ("jti", "JTI"),
)


def compare(real: pl.DataFrame, seeds: int = 5, machine: str = "vm-2") -> pl.DataFrame:
    mix = real.filter(pl.col("test") == "compute").with_columns(
        cpu=pl.col("childU_tm") + pl.col("childS_tm")
    )
    rows = []
    for tasks in sorted(set(mix["tasks"])):
        rr = mix.filter(pl.col("tasks") == tasks)
        w = sl.workloads.aim7(tasks, jobs=int(rr["jobs"][0]))
        model = [sl.simulate(machine, "v6.18", w, seed=s).metrics for s in range(1, seeds + 1)]
        for metric, col in COLUMNS:
            r = rr[col].to_list()
            m = statistics.median(x[metric] for x in model)
            rows.append(
                {
                    "tasks": tasks,
                    "metric": metric,
                    "real_median": statistics.median(r),
                    "real_min": min(r),
                    "real_max": max(r),
                    "model": m,
                    "error": m / statistics.median(r) - 1 if statistics.median(r) else 0.0,
                }
            )
    return pl.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("real")
    ap.add_argument("--seeds", type=int, default=5)
    a = ap.parse_args()
    pl.Config.set_tbl_rows(100)
    pl.Config.set_tbl_width_chars(200)
    print(compare(pl.read_parquet(a.real), a.seeds))


if __name__ == "__main__":
    main()
