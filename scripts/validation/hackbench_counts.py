"""Calibrate on time, predict the counts: `perf bench sched messaging`'s
four variants at several group counts, measured here under `perf stat`,
against the model calibrated on the elapsed time of a few configurations.

1. ``sl.measure("hackbench", groups=..., loops=200, reps=...)`` (or
   ``--frame`` to reuse a saved one): elapsed, task-clock, context
   switches and migrations per rep.
2. Two calibrations on different training configurations (``--train-a``
   and ``--train-b`` group counts, every ipc × mode at that count: 4
   configurations each), fitting only elapsed time, with
   ``workload=hackbench(parent_wakee_flips=--flips)``; and the same two for
   the negative control (``--kernel`` without wake-up preemption).
3. Every configuration predicted by each calibration (``--seeds`` model
   runs): context switches, task-clock, elapsed and migrations, model
   median beside the reps' median and range.
4. ``perf bench sched pipe`` unpinned and under ``taskset -c 0``
   (``sl.measure("pipe")``, measured right after step 1, or ``--pipe-frame``):
   the ratio of their times beside each calibration's prediction of it
   (``pipe_pingpong``, costs calibrated on hackbench alone).

Prints, per calibration, the median |model/real − 1| of each metric over
the configurations it was not trained on (and how many of those the
model's median lies within the reps' min–max), the negative control's
figures beside them, and the two calibrations' context switches against
each other. Writes the long frame to ``--out``.

    python scripts/validation/hackbench_counts.py --reps 5 --seeds 3 \
        --out /tmp/hackbench-counts.parquet

Needs ``perf`` (unless ``--frame``); run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import polars as pl
import schedlab as sl
from schedlab.host import calibration as cal

CONFIG = ["ipc", "mode", "groups", "loops"]
#: measure()'s column, the model's metric
PAIRS = {
    "context_switches": "context_switches",
    "task_clock_s": "task_clock_s",
    "elapsed_s": "elapsed_s",
    "cpu_migrations": "cpu_migrations",
}


def real_summary(frame: pl.DataFrame) -> pl.DataFrame:
    aggs = []
    for m in PAIRS:
        aggs += [
            pl.col(m).median().alias(f"{m}_real"),
            pl.col(m).min().alias(f"{m}_min"),
            pl.col(m).max().alias(f"{m}_max"),
        ]
    return frame.group_by(CONFIG).agg(aggs)


def predict(
    name: str,
    kernel: sl.Kernel,
    frame: pl.DataFrame,
    train: int,
    a: argparse.Namespace,
) -> tuple[pl.DataFrame, sl.CostModel]:
    w = sl.workloads.hackbench(parent_wakee_flips=a.flips)
    c = sl.calibrate(
        frame,
        a.machine,
        kernel,
        seeds=a.seeds,
        progress=False,
        train=[{"groups": train}],
        workload=w,
        max_evaluations=a.max_evaluations,
    )
    configs = frame.select(CONFIG).unique().sort(CONFIG).to_dicts()
    runs = cal.model_runs(
        configs,
        a.machine,
        kernel,
        c.costs,
        seeds=a.seeds,
        metrics=list(PAIRS.values()),
        workload=w,
    )
    med = runs.group_by(CONFIG).agg(
        [pl.col(v).median().alias(f"{k}_model") for k, v in PAIRS.items()]
    )
    factors = ", ".join(f"{k} {v:.2f}" for k, v in c.factors.items())
    print(f"{name}, trained on groups={train}: {factors}")
    out = med.with_columns(
        calibration=pl.lit(name), train_groups=pl.lit(train), held_out=pl.col("groups") != train
    )
    return out, c.costs


def score(df: pl.DataFrame) -> pl.DataFrame:
    out = []
    for m in PAIRS:
        r = pl.col(f"{m}_model") / pl.col(f"{m}_real")
        inside = (pl.col(f"{m}_model") >= pl.col(f"{m}_min")) & (
            pl.col(f"{m}_model") <= pl.col(f"{m}_max")
        )
        out.append(
            df.filter("held_out")
            .group_by("calibration", maintain_order=True)
            .agg(
                pl.lit(m).alias("metric"),
                (r - 1).abs().median().alias("median_abs_rel_err"),
                r.min().alias("ratio_min"),
                r.max().alias("ratio_max"),
                inside.sum().alias("within_reps"),
                pl.len().alias("n"),
            )
        )
    return pl.concat(out)


def pipe_ratio(pipe: pl.DataFrame, costs: dict[str, sl.CostModel], a: argparse.Namespace) -> None:
    t = pipe.group_by("pinned").agg(pl.col("elapsed_s").median())
    by = dict(zip(t["pinned"].to_list(), t["elapsed_s"].to_list(), strict=True))
    real = by[False] / by[True]
    print(f"perf bench sched pipe, unpinned / pinned: real {real:.2f}")
    loops = int(pipe["loops"][0])
    w = sl.workloads.pipe_pingpong(loops=loops)
    for name, c in costs.items():
        un = [sl.simulate(a.machine, a.kernel, w, seed=s, costs=c) for s in range(a.seeds)]
        pn = [
            sl.simulate(a.machine, a.kernel, w.with_tasks(cpus=0), seed=s, costs=c)
            for s in range(a.seeds)
        ]
        # as for the real runs: the median unpinned time over the median pinned one
        mid = statistics.median(u.metrics["elapsed_s"] for u in un) / statistics.median(
            p.metrics["elapsed_s"] for p in pn
        )
        print(f"  {name}: model {mid:.2f} (model / real {mid / real:.2f})")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--groups", type=int, nargs="+", default=[1, 2, 5, 10, 20])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--flips", type=int, default=3)
    p.add_argument("--train-a", type=int, default=5)
    p.add_argument("--train-b", type=int, default=2)
    p.add_argument("--machine", default="vm-2")
    p.add_argument("--kernel", default="v6.18")
    p.add_argument("--max-evaluations", type=int, default=40)
    p.add_argument("--frame", type=Path, default=None, help="a saved measure() frame")
    p.add_argument("--pipe-frame", type=Path, default=None, help="a saved measure('pipe') frame")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    if a.frame is not None:
        frame = pl.read_parquet(a.frame)
    else:
        frame = sl.measure("hackbench", groups=a.groups, loops=200, reps=a.reps)
        frame.write_parquet(a.out.with_suffix(".measured.parquet"))
    pipe = None
    if a.pipe_frame is not None:
        pipe = pl.read_parquet(a.pipe_frame)
    elif a.frame is None:
        pipe = sl.measure("pipe", reps=a.reps)
        pipe.write_parquet(a.out.with_suffix(".pipe.parquet"))
    real = real_summary(frame)
    k = sl.Kernel.preset(a.kernel)
    neg = k.replace(wakeup_preemption=False)
    runs = {
        f"{a.kernel} A": predict(f"{a.kernel} A", k, frame, a.train_a, a),
        f"{a.kernel} B": predict(f"{a.kernel} B", k, frame, a.train_b, a),
        "negative A": predict("negative A", neg, frame, a.train_a, a),
        "negative B": predict("negative B", neg, frame, a.train_b, a),
    }
    df = pl.concat([f for f, _ in runs.values()]).join(real, on=CONFIG)
    df.write_parquet(a.out)
    pl.Config.set_tbl_rows(200)
    pl.Config.set_tbl_cols(20)
    print(score(df))
    both = (
        df.filter(pl.col("calibration").is_in([f"{a.kernel} A", f"{a.kernel} B"]))
        .pivot("calibration", index=CONFIG, values="context_switches_model")
        .with_columns(
            (pl.col(f"{a.kernel} A") / pl.col(f"{a.kernel} B") - 1).abs().alias("cs_a_vs_b")
        )
    )
    print(both.sort(CONFIG))
    print(f"median |cs A / cs B - 1|: {both['cs_a_vs_b'].median():.3f}")
    if pipe is not None:
        pipe_ratio(pipe, {n: c for n, (_, c) in runs.items() if not n.startswith("neg")}, a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
