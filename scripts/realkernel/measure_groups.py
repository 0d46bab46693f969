#!/usr/bin/env python3
"""Task groups on this host beside the model, in one sitting (docs/groups.md).

1. shares: two cgroups of two spinners each, all pinned to CPU 0, with
   ``cpu.shares`` A : B; the CPU split over a 3 s window (each spinner's
   ``/proc/<pid>/schedstat`` run time), real and modelled;
2. quota: 1 and 2 unpinned spinners in a fresh group with a quota per
   100 ms period; from the group's creation to 3 s later the CPUs used and
   ``cpu.stat``'s nr_periods / nr_throttled, real and modelled over the same
   span;
3. hackbench (perf bench sched messaging, all four variants, -g 2 and 10,
   -l 200) plain and inside a 50 ms / 100 ms group: ``sl.validate``
   calibrates the model's costs on the plain runs and predicts the group's
   elapsed ratio and nr_throttled.

Needs root (cgroups) and perf. Run on a quiet machine:
``python scripts/realkernel/measure_groups.py [--reps 3] [-o out.json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import schedlab as sl
from schedlab.host import cgroup
from schedlab.host.measurement import host_info

SPIN = ["sh", "-c", "while :; do :; done"]


def runtime_ns(pid: int) -> int:
    """The first field of /proc/<pid>/schedstat: ns on the CPU."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def spawn(path: Path, pin: bool) -> subprocess.Popen[bytes]:
    cmd = cgroup.prefix(path) + (["taskset", "-c", "0"] if pin else []) + SPIN
    return subprocess.Popen(cmd)


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        with contextlib.suppress(ProcessLookupError):
            p.send_signal(signal.SIGKILL)
    for p in procs:
        p.wait()


def real_shares(a: int, b: int, window: float = 3.0) -> float:
    """Group A's share (%) of CPU 0 over ``window`` s."""
    with (
        cgroup.make_group({"shares": a, **_rest()}, name="schedlab-a") as pa,
        cgroup.make_group({"shares": b, **_rest()}, name="schedlab-b") as pb,
    ):
        procs = [spawn(pa, True), spawn(pa, True), spawn(pb, True), spawn(pb, True)]
        try:
            time.sleep(0.5)
            t0 = [runtime_ns(p.pid) for p in procs]
            time.sleep(window)
            t1 = [runtime_ns(p.pid) for p in procs]
        finally:
            stop(procs)
    d = [y - x for x, y in zip(t0, t1, strict=True)]
    return 100.0 * (d[0] + d[1]) / sum(d)


def _rest() -> dict[str, Any]:
    return {"weight": None, "quota_us": None, "period_us": 100_000, "burst_us": 0, "idle": False}


def model_shares(a: int, b: int) -> float:
    spin = sl.workloads.spinners(nice=[0, 0], cpus=[0, 0])
    w = sl.workloads.mix([spin.with_tasks(group="a"), spin.with_tasks(group="b")])
    groups = [sl.Group("a", shares=a), sl.Group("b", shares=b)]
    r = sl.simulate("vm-2", "v6.18", w, duration_s=3.0, groups=groups)
    g = r.groups
    return 100.0 * g["cpu_s"][0] / g["cpu_s"].sum()


def real_quota(quota_ms: int, n: int, span: float = 3.0) -> dict[str, float]:
    s = {**_rest(), "shares": None, "quota_us": quota_ms * 1000}
    with cgroup.make_group(s, name="schedlab-q") as path:
        t0 = time.monotonic()
        procs = [spawn(path, False) for _ in range(n)]
        try:
            time.sleep(span - (time.monotonic() - t0))
            stat = cgroup.parse_cpu_stat((path / "cpu.stat").read_text())
            ran = sum(runtime_ns(p.pid) for p in procs)
            t1 = time.monotonic()
        finally:
            stop(procs)
    return {
        "cpus": ran / 1e9 / (t1 - t0),
        "nr_periods": stat["nr_periods"],
        "nr_throttled": stat["nr_throttled"],
    }


def model_quota(quota_ms: int, n: int, span: float = 3.0) -> dict[str, float]:
    w = sl.workloads.spinners(nice=[0] * n).with_tasks(group="q")
    r = sl.simulate(
        "vm-2", "v6.18", w, duration_s=span, groups=[sl.Group("q", quota_us=quota_ms * 1000)]
    )
    g = r.groups.row(0, named=True)
    return {
        "cpus": g["cpu_s"] / span,
        "nr_periods": g["nr_periods"],
        "nr_throttled": g["nr_throttled"],
    }


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} [{min(xs):.3f}, {max(xs):.3f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--skip-hackbench", action="store_true")
    ap.add_argument("-o", "--output", default=None, help="write every figure as JSON here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("measure_groups.py needs root (it makes cgroups)", file=sys.stderr)
        return 1
    out: dict[str, Any] = {"host": host_info()}
    print(f"# {os.uname().release}, {time.strftime('%Y-%m-%d %H:%M:%S')}, reps {args.reps}")
    print("\n## shares: group A's % of CPU 0 (2 + 2 spinners)")
    print("| A : B | real (median [min, max]) | model | model - real (pp) |")
    print("|---|---|---|---|")
    out["shares"] = []
    for a, b in [(1024, 256), (1024, 1024), (2048, 2)]:
        reals = [real_shares(a, b) for _ in range(args.reps)]
        m = model_shares(a, b)
        med = statistics.median(reals)
        print(f"| {a} : {b} | {spread(reals)} | {m:.2f} | {m - med:+.2f} |")
        out["shares"].append({"a": a, "b": b, "real": reals, "model": m})
    print("\n## quota (period 100 ms), from the group's creation to 3 s")
    print(
        "| quota | spinners | real CPUs | model CPUs | error "
        "| real nr_periods / nr_throttled | model |"
    )
    print("|---|---|---|---|---|---|---|")
    out["quota"] = []
    for q in (10, 30, 50, 150):
        for n in (1, 2):
            reals = [real_quota(q, n) for _ in range(args.reps)]
            m = model_quota(q, n)
            cpus = [r["cpus"] for r in reals]
            err = m["cpus"] / statistics.median(cpus) - 1
            per = ", ".join(f"{r['nr_periods']}/{r['nr_throttled']}" for r in reals)
            print(
                f"| {q} ms | {n} | {spread(cpus)} | {m['cpus']:.3f} | {100 * err:+.1f} % | "
                f"{per} | {m['nr_periods']}/{m['nr_throttled']} |"
            )
            out["quota"].append({"quota_ms": q, "n": n, "real": reals, "model": m})
    if not args.skip_hackbench:
        print("\n## hackbench in a 50 ms / 100 ms group (perf bench sched messaging -l 200)")
        real = sl.measure(
            "hackbench",
            groups=[2, 10],
            reps=args.reps,
            changes=[{"name": "quota50", "cgroup": {"quota_us": 50_000}}],
            progress=False,
        )
        real.write_parquet("/tmp/measure_groups_hackbench.parquet")
        v = sl.validate(real, "vm-2", "v6.18", progress=False)
        eff = v.effects.filter(sl_metric_in(["elapsed_s", "cg_nr_throttled", "cg_nr_periods"]))
        print(
            "| ipc | mode | -g | metric | measured [lo, hi] | predicted | error |\n"
            "|---|---|---|---|---|---|---|"
        )
        for r in eff.sort(["metric", "ipc", "mode", "groups"]).iter_rows(named=True):
            pred = "-" if r["predicted"] is None else f"{r['predicted']:.2f}"
            err = "-" if r["error"] is None else f"{100 * r['error']:+.1f} %"
            print(
                f"| {r['ipc']} | {r['mode']} | {r['groups']} | {r['metric']} | "
                f"{r['measured']:.2f} [{r['measured_lo']:.2f}, {r['measured_hi']:.2f}] | "
                f"{pred} | {err} |"
            )
        print("\nplain elapsed (s), real median vs calibrated model:")
        print(v.calibration)
        out["hackbench"] = eff.to_dicts()
    if args.output:
        Path(args.output).write_text(json.dumps(out, indent=1, default=str))
    return 0


def sl_metric_in(names: list[str]) -> Any:
    import polars as pl

    return pl.col("metric").is_in(names)


if __name__ == "__main__":
    sys.exit(main())
