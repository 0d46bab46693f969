"""``schedlab demo``: the built-in scenario.

Until the VolanoMark case lands, the demo shows the model reproducing
textbook facts against the kernel's own numbers, and the newidle throttle
at work:

1. nice weights: CPU shares on one CPU follow ``prio_to_weight``;
2. ``sched_compat_yield``: the 2.6.23 commit's yield-loop example (50/50
   without it, ~0/100 with it);
3. the 2.6.37-rc1 ``avg_idle`` re-arm against the 2.6.37 throttle on a
   sub-millisecond run/sleep mix (the mechanism of seed case 1);
4. scale: 224 run/sleep tasks on the 112-CPU ``skl-sp-2s``, with the
   simulator's own speed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tqdm.auto import tqdm

from .config import Kernel, Machine
from .result import Result
from .run import simulate
from .workloads import spinners


def _runs(quick: bool) -> list[tuple[str, Callable[[], Result]]]:
    up = Machine(1, 1, 1, name="1-cpu")
    k36 = Kernel.preset("v2.6.36")
    long = 10.0 if quick else 60.0
    skl_s = 0.2 if quick else 1.0

    mix = spinners(nice=[0] * 12, run_us=200, sleep_us=300, dist="exp")
    mix_s = 0.2 if quick else 1.0

    def newidle(kernel: str) -> Callable[[], Result]:
        return lambda: simulate("core2-2s", kernel, mix, duration_s=mix_s, seed=1)

    def rs(kernel: str) -> Callable[[], Result]:
        w = spinners(nice=[0] * 224, run_us=500, sleep_us=500, dist="exp")
        return lambda: simulate("skl-sp-2s", kernel, w, duration_s=skl_s, seed=1)

    return [
        ("nice 0 vs 5", lambda: simulate(up, k36, spinners([0, 5]), duration_s=long)),
        ("nice 0 vs -15", lambda: simulate(up, k36, spinners([0, -15]), duration_s=long)),
        (
            "yield loop, compat_yield=0",
            lambda: simulate(up, k36, spinners([0, 0], yields=[True, False]), duration_s=2.0),
        ),
        (
            "yield loop, compat_yield=1",
            lambda: simulate(
                up,
                k36.replace(compat_yield=True),
                spinners([0, 0], yields=[True, False]),
                duration_s=2.0,
            ),
        ),
        ("newidle v2.6.36", newidle("v2.6.36")),
        ("newidle v2.6.37-rc1", newidle("v2.6.37-rc1")),
        ("newidle v2.6.37", newidle("v2.6.37")),
        ("224 run/sleep on skl-sp-2s, v2.6.36", rs("v2.6.36")),
        ("224 run/sleep on skl-sp-2s, v3.8", rs("v3.8")),
    ]


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(
        h.ljust(w) if i == 0 else h.rjust(w)
        for i, (h, w) in enumerate(zip(header, widths, strict=True))
    )
    out = [line, "-" * len(line)]
    for r in rows:
        out.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    return "\n".join(out)


def run_demo(quick: bool = False, progress: bool = True) -> dict[str, Any]:
    """Run the demo scenario and print its tables; returns the results."""
    runs = _runs(quick)
    results: dict[str, Result] = {}
    walls: dict[str, float] = {}
    for name, fn in tqdm(runs, desc="schedlab demo", unit="run", disable=not progress):
        t0 = time.perf_counter()
        results[name] = fn()
        walls[name] = time.perf_counter() - t0

    def cpu(r: Result) -> list[float]:
        return [float(x) for x in r.tasks["cpu_s"].to_list()]

    print("\n1. CPU shares on one CPU follow prio_to_weight (kernel/sched.c)")
    rows = []
    for name, want in (("nice 0 vs 5", 1024 / 335), ("nice 0 vs -15", 29154 / 1024)):
        c = cpu(results[name])
        got = max(c) / min(c)
        rows.append([name, f"{got:.3f}", f"{want:.3f}", f"{100 * (got / want - 1):+.2f}%"])
    print(_table(rows, ["tasks", "model ratio", "kernel weights", "error"]))

    print("\n2. sched_yield beside a spinner (the 2.6.23 sched_compat_yield commit)")
    rows = []
    for name, expect in (
        ("yield loop, compat_yield=0", "~50%"),
        ("yield loop, compat_yield=1", "~0%"),
    ):
        c = cpu(results[name])
        rows.append([name, f"{100 * c[0] / sum(c):.1f}%", expect])
    print(_table(rows, ["case", "yielder's CPU share", "commit's example"]))

    print("\n3. The newidle throttle: 12 run/sleep tasks (200 µs / 300 µs) on core2-2s")
    rows = []
    for label in ("newidle v2.6.36", "newidle v2.6.37-rc1", "newidle v2.6.37"):
        m = results[label].metrics
        rows.append(
            [
                label.split()[-1],
                f"{m['newidle_balance_calls'] / m['elapsed_s']:,.0f}",
                f"{m['newidle_balance_skipped'] / m['elapsed_s']:,.0f}",
                f"{m['cpu_migrations'] / m['elapsed_s']:,.0f}",
                f"{m['context_switches'] / m['elapsed_s']:,.0f}",
                f"{m['avg_idle_mean_us']:.0f}",
            ]
        )
    print(
        _table(
            rows,
            ["kernel", "newidle/s", "throttled/s", "migrations/s", "cs/s", "avg_idle µs"],
        )
    )

    print("\n4. 224 run/sleep tasks (500 µs / 500 µs, exponential) on skl-sp-2s (112 CPUs)")
    rows = []
    for label, _ in runs[-2:]:
        m = results[label].metrics
        rows.append(
            [
                label.split(", ")[-1],
                f"{m['context_switches'] / m['elapsed_s']:,.0f}",
                f"{m['cpus_utilized']:.1f}",
                f"{m['wait_s'] / m['elapsed_s']:.1f}",
                f"{m['elapsed_s'] / walls[label]:.2f}",
                f"{m['context_switches'] / walls[label]:,.0f}",
            ]
        )
    print(
        _table(
            rows,
            [
                "kernel",
                "cs/s",
                "CPUs utilized",
                "runnable-waiting tasks",
                "sim s / wall s",
                "sim cs / wall s",
            ],
        )
    )
    print(
        "\n(Sections 1-2 are the kernel's arithmetic; 3 is the newidle throttle that "
        "2.6.37-rc1's pull_task() re-arm defeated; 4 is engine speed.)"
    )
    return {"results": results, "wall_s": walls}
