"""schbench calibrated in the sitting: run schbench here at several worker
counts (one message thread; 4 and 8 workers oversubscribe a 2-CPU VM), fit
the model's work speed and idle wake-up (``work_pct``, ``ipi_latency_ns``)
on one worker count (``--train``, default 2: a worker per CPU), and predict
the others.

    python scripts/validation/schbench_sitting.py --schbench ~/.cache/schbench/schbench \\
        --workers 1,2,4,8 --runtime 10 --reps 3 --out schbench.parquet
    python scripts/validation/schbench_sitting.py --frame schbench.parquet

Beside the calibrated model it scores the preset's costs as they are and
a deliberately wrong model (``v6.18`` without wake-up preemption, fitted
the same way), so the check is seen to be able to fail. Prints the
measured medians and ranges, and per model the held-out errors: RPS as
|model/real − 1|, wake-up latency p50 and p99 as the factor model/real.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import polars as pl
import schedlab as sl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _sitting  # noqa: E402  (the scripts' shared options)

#: The targets on the held-out configurations.
RPS_TARGET = 0.15
LATENCY_FACTOR = 1.5


def models(
    real: pl.DataFrame, machine: str, kernel: str, seeds: int, train: int
) -> dict[str, sl.Calibration]:
    """The calibrated model and the two it is scored against."""
    kw = {"seeds": seeds, "progress": False, "train": [{"workers": train}]}
    wrong = sl.Kernel.preset(kernel).replace(wakeup_preemption=False)
    return {
        "calibrated": sl.calibrate(real, machine, kernel, **kw),
        "preset costs, not fitted": sl.calibrate(real, machine, kernel, max_evaluations=1, **kw),
        "wrong: no wake-up preemption": sl.calibrate(real, machine, wrong, **kw),
    }


def factor(ratio: float) -> float:
    """A ratio as the factor it is off by (≥ 1), either way."""
    if not ratio or not math.isfinite(ratio):
        return math.inf
    return max(ratio, 1 / ratio)


def table(cals: dict[str, sl.Calibration]) -> pl.DataFrame:
    """Per model and held-out configuration: RPS error, wake-up p50/p99 factors."""
    rows = []
    for name, cal in cals.items():
        rep = cal.report.filter(pl.col("role") == "held_out")
        for w in sorted(set(rep["workers"].to_list())):
            r = {x["metric"]: x for x in rep.filter(pl.col("workers") == w).iter_rows(named=True)}
            rows.append(
                {
                    "model": name,
                    "workers": w,
                    "rps_err": abs(r["rps"]["ratio"] - 1),
                    "wakeup_p50_factor": factor(r["wakeup_p50_us"]["ratio"]),
                    "wakeup_p99_factor": factor(r["wakeup_p99_us"]["ratio"]),
                    "rps_real": r["rps"]["real"],
                    "rps_model": r["rps"]["model"],
                    "p50_real": r["wakeup_p50_us"]["real"],
                    "p50_model": r["wakeup_p50_us"]["model"],
                    "p99_real": r["wakeup_p99_us"]["real"],
                    "p99_model": r["wakeup_p99_us"]["model"],
                }
            )
    return pl.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    _sitting.add_common(ap, "schbench", "schbench", "the schbench binary")
    ap.add_argument("--workers", default="1,2,4,8")
    ap.add_argument("--train", type=int, default=2, help="the workers count fitted on")
    ap.add_argument("--runtime", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    ws = [int(x) for x in a.workers.split(",")]
    real = _sitting.frame_or_measure(
        a,
        lambda: sl.measure(
            "schbench", schbench=a.schbench, workers=ws, runtime_s=a.runtime, reps=a.reps
        ),
    )
    pl.Config.set_tbl_rows(60)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_tbl_width_chars(220)
    cols = ("rps", "wakeup_p50_us", "wakeup_p99_us", "request_p50_us", "request_p99_us")
    print("measured: median (min-max) over reps")
    print(
        real.group_by("workers")
        .agg(
            pl.len().alias("reps"),
            *[pl.col(c).median().alias(c) for c in cols],
            *[pl.col(c).min().alias(f"{c}_min") for c in cols[:3]],
            *[pl.col(c).max().alias(f"{c}_max") for c in cols[:3]],
        )
        .sort("workers")
    )
    cals = models(real, a.machine, a.kernel, a.seeds, a.train)
    t = table(cals)
    print(t)
    summary = t.group_by("model", maintain_order=True).agg(
        pl.col("rps_err").median().alias("rps_err_median"),
        pl.col("wakeup_p50_factor").median().alias("p50_factor_median"),
        pl.col("wakeup_p99_factor").median().alias("p99_factor_median"),
        (pl.col("rps_err") <= RPS_TARGET).sum().alias("rps_met"),
        (pl.col("wakeup_p50_factor") <= LATENCY_FACTOR).sum().alias("p50_met"),
        (pl.col("wakeup_p99_factor") <= LATENCY_FACTOR).sum().alias("p99_met"),
    )
    print(summary)
    for name, cal in cals.items():
        print(name, cal.factors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
