"""Record `perf bench sched messaging` here through tracefs and put each
recording's schedule beside the model's (``sl.compare_schedule``), with a
negative control.

For each variant (pipe/socket x process/thread) and group count, ``--reps``
recordings (root: tracefs) and ``--seeds`` model runs of the same shape under
``--kernel`` on ``--machine`` (hackbench's ``parent_wakee_flips``: the
median of ``sl.parent_wakee_flips()`` over the recordings, unless
``--flips`` gives it), and the same under ``--negative`` (a kernel preset,
or ``nowp``: the kernel without wake-up preemption). Writes the long
frame of ``compare_schedule`` with the configuration columns to ``--out``
(Parquet) and prints the headline statistics. The recordings are kept in
``--keep`` (a directory) when given; ``--from`` reads recordings kept so
instead of recording (no root needed).

``--from`` takes the same ``--ipc``, ``--mode``, ``--groups`` and ``--reps`` as
the run that kept them (the file names say these), and the same ``--loops``
(the names do not: a different one compares the model at the wrong size).

``--calibrate FRAME``: the model and the negative control each run with
costs fitted by ``sl.calibrate`` to the elapsed times of a ``perf stat``
frame (``scripts/validation/hackbench_counts.py`` writes one beside its
output, ``*.measured.parquet``), the fit running
``hackbench(parent_wakee_flips=--train-flips)`` at every ipc × mode of the
frame with ``--train-groups`` groups; the compared runs keep their own
flips (``--flips`` or the recordings'). Without it, the preset's costs.

Example (a quiet machine: nothing else running):

    sudo python scripts/realkernel/measure_schedule.py --groups 2 10 --reps 3 \
        --keep recordings --out schedule-vm2.parquet
    python scripts/realkernel/measure_schedule.py --from recordings \
        --calibrate counts.measured.parquet --out schedule-vm2-calibrated.parquet
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import polars as pl
import schedlab as sl

HEAD = ("switches_in", "wakeups", "migrations", "preempted_pct", "wakeup_preempt_pct",
        "burst_mean_us", "delay_p50_us", "delay_p90_us", "idle_pct")  # fmt: skip


def recording_name(ipc: str, mode: str, groups: int, rep: int) -> str:
    """The file a recording is kept in (``--keep``) and read from (``--from``)."""
    return f"messaging-{ipc}-{mode}-g{groups}-r{rep}.txt"


def kernel_of(name: str, base: str) -> sl.Kernel:
    if name == "nowp":
        return sl.Kernel.preset(base).replace(wakeup_preemption=False)
    return sl.Kernel.preset(name)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--groups", type=int, nargs="+", default=[2, 10])
    p.add_argument("--loops", type=int, default=200)
    p.add_argument("--ipc", nargs="+", default=["pipe", "socket"])
    p.add_argument("--mode", nargs="+", default=["process", "thread"])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--machine", default="vm-2")
    p.add_argument("--kernel", default="v6.18")
    p.add_argument("--negative", default="nowp")
    p.add_argument(
        "--flips",
        type=int,
        default=None,
        help="hackbench(parent_wakee_flips=...) for the model; default: read from the recordings",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--keep", type=Path, default=None, help="keep the recordings here")
    where.add_argument(
        "--from",
        dest="source",
        type=Path,
        default=None,
        help="read the recordings from this directory (as --keep wrote them)",
    )
    p.add_argument(
        "--calibrate",
        type=Path,
        default=None,
        help="a perf stat frame to fit the costs to (elapsed time)",
    )
    p.add_argument("--train-groups", type=int, default=2, help="with --calibrate: groups fitted")
    p.add_argument(
        "--train-flips", type=int, default=3, help="with --calibrate: the fit's parent_wakee_flips"
    )
    p.add_argument(
        "--max-evaluations", type=int, default=40, help="with --calibrate: the fit's budget"
    )
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    if a.source is not None:
        keep = a.source
        names = [
            recording_name(ipc, mode, g, rep)
            for ipc in a.ipc
            for mode in a.mode
            for g in a.groups
            for rep in range(a.reps)
        ]
        missing = [n for n in names if not (keep / n).is_file()]
        if missing:
            p.error(
                f"--from {keep}: no {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}"
            )
    else:
        keep = a.keep or Path(tempfile.mkdtemp(prefix="schedlab-sched-"))
        keep.mkdir(parents=True, exist_ok=True)
    k, neg = sl.Kernel.preset(a.kernel), kernel_of(a.negative, a.kernel)
    costs: dict[str, sl.CostModel | None] = {"model": None, "negative": None}
    if a.calibrate is not None:
        try:
            frame = pl.read_parquet(a.calibrate)
        except (OSError, pl.exceptions.PolarsError) as e:
            p.error(f"--calibrate {a.calibrate}: {e}")
        for name, kern in (("model", k), ("negative", neg)):
            try:
                c = sl.calibrate(
                    frame, a.machine, kern, seeds=a.seeds, progress=False,
                    train=[{"groups": a.train_groups}],
                    workload=sl.workloads.hackbench(parent_wakee_flips=a.train_flips),
                    max_evaluations=a.max_evaluations,
                )  # fmt: skip
            except (sl.ConfigError, sl.ConfigTypeError) as e:
                p.error(f"--calibrate {a.calibrate}: {e}")
            costs[name] = c.costs
            factors = ", ".join(f"{f} {v:.2f}" for f, v in c.factors.items())
            print(f"{name} calibrated on groups={a.train_groups}: {factors}")
    frames = []
    for ipc in a.ipc:
        for mode in a.mode:
            for g in a.groups:
                cmd = ["perf", "bench", "sched", "messaging", "-g", str(g), "-l", str(a.loops)]
                cmd += (["-p"] if ipc == "pipe" else []) + (["-t"] if mode == "thread" else [])
                recs = []
                for rep in range(a.reps):
                    path = keep / recording_name(ipc, mode, g, rep)
                    if a.source is None:
                        info = sl.record_schedule(cmd, path, method="tracefs")
                        if info["status"] != 0:
                            print(info["output"], file=sys.stderr)
                            return 1
                    recs.append(str(path))
                flips = a.flips
                if flips is None:
                    flips = int(statistics.median(sl.parent_wakee_flips(r) for r in recs))
                w = sl.workloads.hackbench(
                    groups=g, loops=a.loops, ipc=ipc, mode=mode, parent_wakee_flips=flips
                )
                runs, negs = (
                    [
                        sl.simulate(a.machine, kern, w, seed=s, trace=True, costs=costs[name])
                        for s in range(a.seeds)
                    ]
                    for name, kern in (("model", k), ("negative", neg))
                )
                cmp = sl.compare_schedule(recs, runs, negative=negs).with_columns(
                    ipc=pl.lit(ipc), mode=pl.lit(mode), groups=pl.lit(g), flips=pl.lit(flips)
                )
                frames.append(cmp)
                show = cmp.filter(pl.col("role") == "all", pl.col("statistic").is_in(HEAD))
                print(f"\n{ipc} {mode} -g {g} -l {a.loops} (parent_wakee_flips={flips})")
                cols = ["statistic", "real", "real_min", "real_max", "model", "model_min"]
                print(show.select(*cols, "model_max", "negative", "beats_negative"))
    df = pl.concat(frames)
    df.write_parquet(a.out)
    print(f"\nwrote {a.out} ({df.height} rows); recordings in {keep}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
