"""``python scripts/dev/bench.py``: the engine's speed on fixed scenarios, side
by side with the real kernel when ``perf`` is installed (``make bench``).

Each scenario runs in a fresh child process (so its peak memory is its own):
the best of ``--reps`` wall times, and simulated seconds, context switches
and messages per wall second. ``vm-2`` hackbench scenarios also run the real
``perf bench sched messaging`` with the same arguments on this machine and
report real seconds ÷ simulated wall seconds (how many times faster than the
kernel the model simulates it). The sweep row times a 64-point sweep on one
thread and on every core; the memory row runs one sweep run (no vmstat
samples) at two simulated lengths to show that memory does not grow with
simulated time. Prints figures; asserts nothing.

``--compare A,B`` (``make bench`` passes ``v3.8,v6.18``) runs every scenario
under both kernel presets, one after the other, and prints their events per
wall-second side by side with the ratio. With ``--instructions`` (and
valgrind installed) each scenario also runs once per kernel under callgrind,
counting only the instructions inside the engine's event loop
(``Sim::run``): instructions per event, deterministic where wall rates on a
shared VM are not.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from schedlab._table import text_table


@dataclass(frozen=True)
class Scenario:
    name: str
    machine: str
    kernel: str
    workload: str
    params: dict[str, Any]
    kernel_changes: tuple[tuple[str, Any], ...] = ()
    #: ``perf bench sched messaging`` arguments for the real run, if any.
    perf_args: tuple[str, ...] | None = None


def scenarios(quick: bool) -> list[Scenario]:
    loops = 50 if quick else 200
    out = []
    for ipc in ("socket", "pipe"):
        for mode in ("process", "thread"):
            args = ["-g", "10", "-l", str(loops)]
            if ipc == "pipe":
                args.append("-p")
            if mode == "thread":
                args.append("-t")
            out.append(
                Scenario(
                    f"vm-2 hackbench -g 10 -l {loops} {ipc} {mode}",
                    "vm-2",
                    "v3.8",
                    "hackbench",
                    {"groups": 10, "loops": loops, "ipc": ipc, "mode": mode},
                    perf_args=tuple(args),
                )
            )
    out.append(
        Scenario(
            f"core2-2s VolanoMark 10x20x{20 if quick else 100} rc1",
            "core2-2s",
            "v2.6.37-rc1",
            "volano",
            {"rooms": 10, "users": 20, "messages": 20 if quick else 100},
            kernel_changes=(("compat_yield", True),),
        )
    )
    sl_loops = 20 if quick else 100
    out.append(
        Scenario(
            f"skl-sp-2s hackbench -g 56 -l {sl_loops} pipe thread",
            "skl-sp-2s",
            "v3.8",
            "hackbench",
            {"groups": 56, "loops": sl_loops, "ipc": "pipe", "mode": "thread"},
        )
    )
    return out


def _vm_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _child(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one scenario ``reps`` times in this process; report figures."""
    import schedlab as sl

    # each workload kind is made by the sl.workloads function of its name
    w = getattr(sl.workloads, spec["workload"])(**spec["params"])
    k = sl.Kernel(spec["kernel"], **dict(spec["kernel_changes"]))
    base = _vm_kib("VmRSS")
    best = float("inf")
    m: dict[str, float] = {}
    for _ in range(spec["reps"]):
        t0 = time.perf_counter()
        r = sl.simulate(spec["machine"], k, w, seed=1)
        best = min(best, time.perf_counter() - t0)
        if r.status != "ok":
            raise SystemExit(f"{spec['name']}: {r.status} {r.status_detail}")
        m = dict(r.metrics)
    return {
        "wall_s": best,
        "sim_s": m["sim_time_s"],
        "elapsed_s": m["elapsed_s"],
        "cs": m["rq_switches"],
        "messages": m.get("messages", float("nan")),
        "events": m["events"],
        "peak_mib": max(0, _vm_kib("VmHWM") - base) / 1024,
        "tasks": r.tasks.height,
    }


#: The memory-over-time check: a run as a sweep runs it (no periodic
#: vmstat samples), at two simulated lengths.
MEMORY_TASKS = 64
MEMORY_SECONDS = (1.0, 8.0)


def _memory_child(duration_s: float) -> dict[str, Any]:
    """Peak RSS growth of one sweep run of ``duration_s`` simulated seconds
    (64 run/sleep spinners on core2-2s): it must not grow with the length."""
    import schedlab as sl

    w = sl.workloads.spinners(nice=[0] * MEMORY_TASKS, run_us=200, sleep_us=100, dist="exp")
    # Warm-up: imports and the sweep's own machinery out of the figure.
    sl.sweep("core2-2s", "v3.8", w, {}, duration_s=0.001, threads=1, progress=False)
    base = _vm_kib("VmHWM")
    t0 = time.perf_counter()
    df = sl.sweep("core2-2s", "v3.8", w, {}, duration_s=duration_s, threads=1, progress=False)
    wall = time.perf_counter() - t0
    return {
        "wall_s": wall,
        "events": float(df["events"][0]),
        "peak_mib": max(0, _vm_kib("VmHWM") - base) / 1024,
    }


def _in_child(what: str, *args: str) -> dict[str, Any]:
    """Run this script with ``args`` in a fresh process (so its peak memory
    is its own) and return the JSON line it prints last."""
    p = subprocess.run(
        [sys.executable, os.path.abspath(__file__), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if p.returncode != 0:
        raise SystemExit(f"{what}: child failed: {p.stderr.strip()[-500:]}")
    out: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


def memory_over_time() -> list[tuple[float, dict[str, Any]]]:
    return [
        (secs, _in_child("memory check", "--memory-child", str(secs))) for secs in MEMORY_SECONDS
    ]


def _spec(s: Scenario, reps: int) -> dict[str, Any]:
    return {
        "name": s.name,
        "machine": s.machine,
        "kernel": s.kernel,
        "workload": s.workload,
        "params": s.params,
        "kernel_changes": list(s.kernel_changes),
        "reps": reps,
    }


def _run_child(s: Scenario, reps: int) -> dict[str, Any]:
    return _in_child(s.name, "--child", json.dumps(_spec(s, reps)))


#: callgrind, counting only inside the engine's event loop (the Rust
#: ``schedlab::engine::Sim::run`` in the extension module).
CALLGRIND = [
    "valgrind",
    "--tool=callgrind",
    "--callgrind-out-file=/dev/null",
    "--collect-atstart=no",
    "--toggle-collect=*engine*Sim*run*",
]
_COLLECTED = re.compile(r"Collected\s*:\s*([0-9]+)")


def instructions_per_event(s: Scenario) -> float | None:
    """Instructions per event inside ``Sim::run`` of one run of ``s`` under
    callgrind (deterministic for a given build), or None without valgrind or
    when the run fails or counts nothing (said on stderr)."""
    if shutil.which("valgrind") is None:
        return None
    p = subprocess.run(
        [*CALLGRIND, sys.executable, os.path.abspath(__file__), "--child"]
        + [json.dumps(_spec(s, 1))],
        capture_output=True,
        text=True,
        check=False,
    )
    m = _COLLECTED.search(p.stderr)
    if p.returncode != 0 or m is None or int(m.group(1)) == 0:
        # the row keeps its other figures; "-" in the instructions columns
        why = "nothing counted inside Sim::run" if m is not None else p.stderr.strip()[-500:]
        print(f"{s.name} [{s.kernel}]: callgrind run failed: {why}", file=sys.stderr)
        return None
    events = float(json.loads(p.stdout.strip().splitlines()[-1])["events"])
    return int(m.group(1)) / events


_TOTAL = re.compile(r"Total time:\s*([0-9.]+)")


def real_perf(args: tuple[str, ...], reps: int) -> float | None:
    """Best ``Total time`` of ``perf bench sched messaging`` over ``reps``
    runs, or None when perf is missing or fails."""
    if shutil.which("perf") is None:
        return None
    best = None
    for _ in range(reps):
        p = subprocess.run(
            ["perf", "bench", "sched", "messaging", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        m = _TOTAL.search(p.stdout)
        if p.returncode != 0 or m is None:
            return None
        t = float(m.group(1))
        best = t if best is None else min(best, t)
    return best


#: The 64-point sweep both benchmarks time (also scripts/dev/bench_sweep.py):
#: hackbench -g 4 on core2-2s, v3.8, over this grid.
SWEEP_GRID: dict[str, list[Any]] = {
    "migration_cost_ns": [0, 125_000, 250_000, 500_000, 1_000_000, 2_000_000, 4_000_000, 8_000_000],
    "newidle_rearm": [False, True],
    "workload.ipc": ["socket", "pipe"],
    "workload.mode": ["process", "thread"],
}


def sweep_speedup(quick: bool) -> tuple[float, float, int]:
    import schedlab as sl

    w = sl.workloads.hackbench(groups=4, loops=20 if quick else 100)
    cores = os.cpu_count() or 1
    t0 = time.perf_counter()
    sl.sweep("core2-2s", "v3.8", w, SWEEP_GRID, threads=1, progress=False)
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    sl.sweep("core2-2s", "v3.8", w, SWEEP_GRID, progress=False)
    alls = time.perf_counter() - t0
    return one, alls, cores


def _fmt(x: float, digits: int = 0) -> str:
    return "-" if x != x else f"{x:,.{digits}f}"


def compare(
    quick: bool, reps: int, kernels: tuple[str, str], instructions: bool, no_real: bool
) -> int:
    """Every scenario under both kernels (their child runs one after the
    other, so a drift of the VM's speed hits both alike): events per
    wall-second, their ratio, and with ``instructions`` the instructions per
    event; the ``vm-2`` rows also give the real kernel's time beside each."""
    import schedlab as sl

    ka, kb = kernels
    print(
        f"schedlab {sl.__version__} ({sl.build_profile}), {os.cpu_count()} cores, "
        f"one thread per run, best of {reps}: {ka} against {kb}"
    )
    if instructions and shutil.which("valgrind") is None:
        print("(valgrind is not installed: no instructions per event)")
    header = ["scenario", f"{ka} ev/s", f"{kb} ev/s", "ratio", f"{kb} cs / {ka} cs"]
    if instructions:
        header += [f"{ka} instr/ev", f"{kb} instr/ev", "ratio"]
    header += ["real s", f"real/wall {ka}", f"real/wall {kb}"]
    rows = []
    faster: list[float] = []
    for s in scenarios(quick):
        ra = _run_child(dataclasses.replace(s, kernel=ka), reps)
        rb = _run_child(dataclasses.replace(s, kernel=kb), reps)
        eva, evb = ra["events"] / ra["wall_s"], rb["events"] / rb["wall_s"]
        row = [s.name, _fmt(eva), _fmt(evb), f"{evb / eva:.2f}", f"{rb['cs'] / ra['cs']:.2f}"]
        if instructions:
            ia = instructions_per_event(dataclasses.replace(s, kernel=ka))
            ib = instructions_per_event(dataclasses.replace(s, kernel=kb))
            row += (
                ["-", "-", "-"]
                if ia is None or ib is None
                else [f"{ia:.0f}", f"{ib:.0f}", f"{ib / ia:.2f}"]
            )
        real = None if no_real or s.perf_args is None else real_perf(s.perf_args, reps)
        row += (
            ["-", "-", "-"]
            if real is None
            else [f"{real:.3f}", f"{real / ra['wall_s']:.1f}x", f"{real / rb['wall_s']:.1f}x"]
        )
        if real is not None:
            faster.append(real / rb["wall_s"])
        rows.append(row)
        print(
            f"  {s.name}: {ra['wall_s']:.3f} s / {rb['wall_s']:.3f} s", file=sys.stderr, flush=True
        )
    print(text_table(header, rows))
    if faster:
        print(
            f"slowest against the real kernel under {kb}: {min(faster):.1f}x; "
            f"target at least 5x on every vm-2 row: {'met' if min(faster) >= 5 else 'not met'}"
        )
    print(
        "ev/s: engine events per wall-second (best run); cs: context switches; instr/ev: "
        "instructions per event inside Sim::run (callgrind, one run); real s: perf bench "
        "sched messaging's Total time here (best of reps), real/wall: how many times "
        "faster than it the model simulates the scenario."
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/dev/bench.py", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller scenarios (seconds)")
    ap.add_argument("--reps", type=int, default=3, help="runs per scenario (best is kept)")
    ap.add_argument("--no-real", action="store_true", help="skip the real perf runs")
    ap.add_argument(
        "--kernel",
        help="run every scenario under this kernel preset instead of its own "
        "(e.g. v6.18 against v3.8: events per wall-second of today's model)",
    )
    ap.add_argument(
        "--compare",
        metavar="A,B",
        help="run every scenario under kernel presets A and B and print their "
        "events per wall-second side by side (make bench: v3.8,v6.18)",
    )
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="with --compare: also count instructions per event under callgrind",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--memory-child", type=float, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(json.loads(a.child))))
        return 0
    if a.memory_child is not None:
        print(json.dumps(_memory_child(a.memory_child)))
        return 0
    if a.reps < 1:
        ap.error(f"invalid --reps={a.reps}: expected an integer >= 1")
    import schedlab as sl

    presets = sl.Kernel.presets()
    if a.kernel is not None and a.kernel not in presets:
        ap.error(f"invalid --kernel={a.kernel!r}: expected one of {', '.join(presets)}")
    if a.compare is not None:
        pair = a.compare.split(",")
        if len(pair) != 2 or any(k not in presets for k in pair):
            ap.error(
                f"invalid --compare={a.compare!r}: expected two kernel presets "
                f"separated by a comma, each one of {', '.join(presets)}"
            )
        if a.kernel is not None:
            ap.error("--compare and --kernel cannot be combined")
        return compare(a.quick, a.reps, (pair[0], pair[1]), a.instructions, a.no_real)
    if a.instructions:
        ap.error("--instructions needs --compare A,B")
    print(
        f"schedlab {sl.__version__} ({sl.build_profile}), {os.cpu_count()} cores, "
        + "one thread per run"
        + ("" if a.kernel is None else f", every scenario under {a.kernel}")
    )
    header = [
        "scenario",
        "tasks",
        "sim s",
        "wall s",
        "sim-s/wall-s",
        "sim cs/wall-s",
        "msgs/wall-s",
        "events/wall-s",
        "peak MiB",
        "real s",
        "real/wall",
    ]
    rows = []
    for s in scenarios(a.quick):
        if a.kernel is not None:
            s = dataclasses.replace(s, kernel=a.kernel, name=f"{s.name} [{a.kernel}]")
        r = _run_child(s, a.reps)
        real = None if a.no_real or s.perf_args is None else real_perf(s.perf_args, a.reps)
        w = r["wall_s"]
        rows.append(
            [
                s.name,
                str(r["tasks"]),
                f"{r['sim_s']:.3f}",
                f"{w:.3f}",
                f"{r['sim_s'] / w:.2f}",
                _fmt(r["cs"] / w),
                _fmt(r["messages"] / w),
                _fmt(r["events"] / w),
                f"{r['peak_mib']:.1f}",
                "-" if real is None else f"{real:.3f}",
                "-" if real is None else f"{real / w:.1f}x",
            ]
        )
        print(f"  {s.name}: {w:.3f} s", file=sys.stderr, flush=True)
    print(text_table(header, rows))
    one, alls, cores = sweep_speedup(a.quick)
    print(
        f"\n64-point sweep (hackbench -g 4 on core2-2s): 1 thread {one:.3f} s, "
        f"{cores} threads {alls:.3f} s, speed-up {one / alls:.2f}x"
    )
    mem = memory_over_time()
    print(
        f"\nMemory over simulated time ({MEMORY_TASKS} run/sleep spinners on core2-2s, "
        + "one sweep run, no vmstat samples): "
        + ", ".join(
            f"{secs:g} sim-s {r['events'] / 1e6:.1f} M events peak {r['peak_mib']:.1f} MiB"
            for secs, r in mem
        )
    )
    print(
        "real s: perf bench sched messaging's Total time on this machine (best of reps); "
        "real/wall: how many times faster the model simulates it."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
