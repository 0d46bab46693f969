#!/usr/bin/env python3
"""Recorded schedules and rt-app descriptions on this host beside the model,
in one sitting (docs/replay.md, docs/rt-app.md).

1. replay: ``perf bench sched messaging -g 2 -l 200 -p`` (process, pipe)
   recorded with ``perf sched record`` ``--reps`` times, each replayed on
   ``vm-2`` under ``v6.18`` (``workloads.from_trace``): elapsed, context
   switches and migrations, recorded and replayed; then the same benchmark
   recorded under ``taskset -c 0`` and under ``chrt --batch 0``, and the
   plain recording replayed with ``with_tasks(cpus=[0])`` /
   ``with_tasks(policy="batch")``: the change's effect on elapsed, real
   against predicted.
2. rt-app: a plain run (one 20 % periodic thread alone) calibrates
   ``run_scale`` (rt-app's run-loop rounding here), and its rt-app
   calibration (``pLoad``) is used by every later run; three descriptions —
   periodic threads at 20, 50 and 90 % of a CPU; a producer/consumer pair
   with signal/wait; a mutex-contended pair — run by rt-app ``--reps``
   times and by the model (3 seeds): per-thread run time, period and
   wake-up latency, real and modelled.

Needs root (perf sched record), perf and rt-app. Run on a quiet machine:
``python scripts/realkernel/measure_replay.py [--reps 3] [-o out.json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import schedlab as sl
from schedlab.host import rtapp
from schedlab.host.measurement import host_info

BENCH = ["perf", "bench", "sched", "messaging", "-g", "2", "-l", "200", "-p"]
CHANGES = {
    "taskset -c 0": (["taskset", "-c", "0"], {"cpus": [0]}),
    "chrt --batch 0": (["chrt", "--batch", "0"], {"policy": "batch"}),
}

PERIODIC = {
    "tasks": {
        "p20": {"loop": -1, "run": 2000, "timer": {"ref": "unique", "period": 10000}},
        "p50": {"loop": -1, "run": 5000, "timer": {"ref": "unique", "period": 10000}},
        "p90": {"loop": -1, "run": 9000, "timer": {"ref": "unique", "period": 10000}},
    },
    "global": {"duration": 3, "calibration": "CPU0"},
}
PRODUCER_CONSUMER = {
    "tasks": {
        "producer": {
            "loop": -1,
            "run": 1000,
            "lock": "m",
            "signal": "q",
            "unlock": "m",
            "timer": {"ref": "unique", "period": 5000},
        },
        "consumer": {
            "loop": -1,
            "lock": "m",
            "wait": {"ref": "q", "mutex": "m"},
            "unlock": "m",
            "run": 2000,
        },
    },
    "global": {"duration": 3, "calibration": "CPU0"},
}
MUTEX_PAIR = {
    "tasks": {
        "locker": {
            "instance": 2,
            "loop": -1,
            "lock": "m",
            "run": 3000,
            "unlock": "m",
            "timer": {"ref": "unique", "period": 10000},
        }
    },
    "global": {"duration": 3, "calibration": "CPU0"},
}
PLAIN = {
    "tasks": {"solo": {"loop": -1, "run": 2000, "timer": {"ref": "unique", "period": 10000}}},
    "global": {"duration": 3, "calibration": "CPU0"},
}


def with_calibration(d: dict[str, Any], pload: int) -> dict[str, Any]:
    """``d`` with rt-app's calibration set to ``pload`` ns per loop."""
    return {**d, "global": {**d["global"], "calibration": pload}}


def spread(xs: list[float]) -> dict[str, float]:
    return {"mean": statistics.fmean(xs), "min": min(xs), "max": max(xs)}


def replay_part(reps: int, work: Path) -> dict[str, Any]:
    plain: list[sl.Workload] = []
    for i in range(reps):
        rec = rtapp.record_schedule(BENCH, work / f"plain-{i}.txt")
        plain.append(sl.workloads.from_trace(rec["text"]))
    rows = []
    for i, w in enumerate(plain):
        cmp = sl.compare_replay(w, machine="vm-2", kernel="v6.18", seeds=3)
        rows.append({"rep": i, **{r["figure"]: r for r in cmp.iter_rows(named=True)}})
    changes = {}
    for label, (prefix, attrs) in CHANGES.items():
        real = []
        for i in range(reps):
            rec = rtapp.record_schedule(prefix + BENCH, work / f"chg-{i}.txt")
            real.append(sl.workloads.from_trace(rec["text"]).recorded["elapsed_s"])
        model_ratio = []
        for w in plain:
            base = sl.compare_replay(w, seeds=3).filter(figure="elapsed_s")["model"][0]
            chg = sl.compare_replay(w.with_tasks(**attrs), seeds=3)
            model_ratio.append(chg.filter(figure="elapsed_s")["model"][0] / base)
        plain_real = statistics.fmean(w.recorded["elapsed_s"] for w in plain)
        changes[label] = {
            "real_elapsed_s": spread(real),
            "real_ratio": statistics.fmean(real) / plain_real,
            "model_ratio": spread(model_ratio),
        }
    return {"plain": rows, "changes": changes}


def rtapp_part(reps: int) -> dict[str, Any]:
    plain = rtapp.measure_rt_app(PLAIN, reps=reps)
    scale = rtapp.run_scale_of(plain)
    # Every description runs with the plain run's calibration (rt-app's
    # pLoad), so run_scale measured on the plain run applies to them: a
    # calibration of its own per description would carry the VM's speed
    # at that moment into its run times.
    pload = int(plain["calibration_ns"][0])
    out: dict[str, Any] = {"run_scale": scale, "calibration_ns": pload, "plain": plain.to_dicts()}
    for name, d in (
        ("periodic", PERIODIC),
        ("producer_consumer", PRODUCER_CONSUMER),
        ("mutex_pair", MUTEX_PAIR),
    ):
        real = rtapp.measure_rt_app(with_calibration(d, pload), reps=reps)
        cmp = rtapp.compare_rt_app(real, d, run_scale=scale, seeds=3)
        out[name] = {"real": real.to_dicts(), "compare": cmp.to_dicts()}
        print(name, file=sys.stderr)
        print(
            cmp.select(
                "thread",
                *[
                    f"{k}_{s}"
                    for k in ("run_us", "period_us", "wu_lat_us")
                    for s in ("real", "model", "err_pct")
                ],
            ),
            file=sys.stderr,
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument("--only", choices=["replay", "rt-app"], default=None)
    a = ap.parse_args()
    res: dict[str, Any] = {"host": host_info()}
    with tempfile.TemporaryDirectory(prefix="schedlab-replay-") as d:
        if a.only in (None, "replay"):
            res["replay"] = replay_part(a.reps, Path(d))
            print(json.dumps(res["replay"], indent=1, default=str)[:4000], file=sys.stderr)
        if a.only in (None, "rt-app"):
            res["rt_app"] = rtapp_part(a.reps)
    text = json.dumps(res, indent=1, default=str)
    if a.output:
        Path(a.output).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
