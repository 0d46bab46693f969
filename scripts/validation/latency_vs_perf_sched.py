"""The model's scheduling delays against ``perf sched latency``'s, for
``perf bench sched messaging`` (4 variants, 2 groups, 200 loops): calibrate
the cost model on the plain runs of the same sitting, then run each
variant with ``latency=True`` and print, per variant, the model beside the
real runs (the mean over reps, and their spread)::

    python scripts/validation/latency_vs_perf_sched.py \\
        notebooks/data/latency-plain-vm2.parquet notebooks/data/latency-perf-sched-vm2.parquet

Both count every switch-in after a wake-up or a preemption (perf's
``Switches``); the figures are per run over all ``sched-messaging`` tasks
(perf cannot tell senders from receivers): ``count`` (delays), ``mean_ms``
(count-weighted), ``task_max_ms`` (the median over tasks of each task's
largest delay) and ``max_ms`` (the run's largest).
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import polars as pl
import schedlab as sl

FIGURES = ("count", "mean_ms", "task_max_ms", "max_ms")


def real_figures(tasks: pl.DataFrame) -> dict[str, float]:
    """One recorded run's figures from its ``perf sched latency`` rows."""
    n = int(tasks["switches"].sum())
    return {
        "count": float(n),
        "mean_ms": float((tasks["avg_delay_ms"] * tasks["switches"]).sum()) / max(n, 1),
        "task_max_ms": float(tasks["max_delay_ms"].median() or 0.0),
        "max_ms": float(tasks["max_delay_ms"].max() or 0.0),
        "elapsed_s": float(tasks["elapsed_s"][0]),
    }


def model_figures(r: sl.Result) -> dict[str, float]:
    """The same figures from a model run with ``latency=True``."""
    t = r.latency()
    run = r.latency(by="run")
    return {
        "count": float(run["count"][0]),
        "mean_ms": float(run["mean_us"][0]) / 1e3,
        "task_max_ms": float(t["max_us"].median() or 0.0) / 1e3,
        "max_ms": float(run["max_us"][0]) / 1e3,
        "elapsed_s": r.metrics["elapsed_s"],
    }


def compare(
    plain: pl.DataFrame, lat: pl.DataFrame, seeds: int = 3, machine: str = "vm-2"
) -> tuple[sl.Calibration, pl.DataFrame]:
    cal = sl.calibrate(plain, machine, "v6.18", seeds=seeds, progress=False)
    rows: list[dict[str, Any]] = []
    for (ipc, mode, g, loops), sub in lat.group_by(
        "ipc", "mode", "groups", "loops", maintain_order=True
    ):
        real = [real_figures(t) for _, t in sub.group_by("rep", maintain_order=True)]
        w = sl.workloads.hackbench(g, 20, loops, 100, ipc, mode)
        model = [
            model_figures(sl.simulate(machine, "v6.18", w, costs=cal.costs, seed=s, latency=True))
            for s in range(1, seeds + 1)
        ]
        for fig in (*FIGURES, "elapsed_s"):
            rv = [x[fig] for x in real]
            mv = [x[fig] for x in model]
            rm, mm = statistics.mean(rv), statistics.mean(mv)
            rows.append(
                {
                    "ipc": ipc,
                    "mode": mode,
                    "figure": fig,
                    "real": rm,
                    "real_min": min(rv),
                    "real_max": max(rv),
                    "model": mm,
                    "model_over_real": mm / rm if rm else float("nan"),
                }
            )
    return cal, pl.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plain")
    ap.add_argument("latency")
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    cal, df = compare(pl.read_parquet(a.plain), pl.read_parquet(a.latency), a.seeds)
    print(cal)
    print("| variant | figure | real (min-max) | model | model/real |")
    print("|---|---|---|---|---|")
    for r in df.iter_rows(named=True):
        print(
            f"| {r['ipc']}-{r['mode']} | {r['figure']} | {r['real']:.4g} "
            f"({r['real_min']:.4g}-{r['real_max']:.4g}) | {r['model']:.4g} | "
            f"{r['model_over_real']:.2f} |"
        )


if __name__ == "__main__":
    main()
