"""Predict the measured policy effects with the model and print both side by
side: ``sl.validate`` on a frame of ``measure_policy_effects.py``.

    python scripts/validation/validate_policy_effects.py notebooks/data/policy-effects-vm2.parquet
"""

from __future__ import annotations

import argparse
import time

import polars as pl
import schedlab as sl


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("real")
    ap.add_argument("--machine", default="vm-2")
    ap.add_argument("--kernel", default="v6.18")
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    real = pl.read_parquet(a.real)
    t0 = time.time()
    v = sl.validate(real, a.machine, a.kernel, seeds=a.seeds, progress=False)
    print(v.calibration, v.calibration.factors)
    pl.Config.set_tbl_rows(400)
    pl.Config.set_tbl_width_chars(200)
    eff = (
        v.effects.filter(
            pl.col("metric").is_in(["elapsed_s", "context_switches", "cpu_migrations", "res_ipis"])
        )
        .group_by("change", "metric", maintain_order=True)
        .agg(
            pl.col("measured").min().alias("measured_min"),
            pl.col("measured").max().alias("measured_max"),
            pl.col("predicted").min().alias("predicted_min"),
            pl.col("predicted").max().alias("predicted_max"),
            pl.col("error").abs().median().alias("median_abs_rel_err"),
            (pl.col("same_direction") == False).sum().alias("direction_misses"),  # noqa: E712
        )
        .sort("change", "metric")
    )
    print(eff)
    print(v.summary)
    print()
    print("| change | metric | measured effect | predicted effect | median relative error |")
    print("|---|---|---|---|---|")
    for r in eff.iter_rows(named=True):
        meas = f"×{r['measured_min']:.2f}–{r['measured_max']:.2f}"
        if r["predicted_min"] is None:
            pred, err = "not modelled", ""
        else:
            pred = f"×{r['predicted_min']:.2f}–{r['predicted_max']:.2f}"
            err = f"{r['median_abs_rel_err']:.0%}"
        print(f"| {r['change']} | {r['metric']} | {meas} | {pred} | {err} |")
    print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
