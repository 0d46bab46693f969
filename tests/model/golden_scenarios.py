"""The golden scenarios: every kernel preset x spinners, hackbench (socket and
pipe) and VolanoMark on three machines. Their metrics were recorded in
tests/golden/presets.json before the Kernel profile was split into one field
per kernel behaviour; tests/model/test_golden.py keeps every preset's
numbers bit-identical to them.

Regenerate only for a change that is meant to move a preset's numbers, and
say so (before and after) in the commit:

    python tests/model/golden_scenarios.py --write
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import schedlab as sl

GOLDEN = Path(__file__).parents[1] / "golden" / "presets.json"
PRESETS = ["v2.6.36", "v2.6.37-rc1", "v2.6.37", "v3.8", "v3.13", "v4.11", "v6.6", "v6.18"]
MACHINES = ["vm-2", "core2-2s", "nhm-ep"]


def workloads() -> dict[str, Any]:
    return {
        "spinners": (
            sl.workloads.spinners(
                nice=[-5, 0, 0, 0, 3, 5, 0, 0, 0, 0, 10, 0],
                run_us=[150, 300, 700, 1200, 200, 90, 400, 2500, 60, 800, 300, 120],
                sleep_us=[200, 100, 900, None, 300, 50, 400, 100, 80, None, 250, 30],
                yields=[i % 4 == 0 for i in range(12)],
                dist="exp",
            ),
            0.2,
        ),
        "hackbench_socket": (
            sl.workloads.hackbench(groups=4, fds=5, loops=60, ipc="socket", mode="process"),
            None,
        ),
        "hackbench_pipe": (
            sl.workloads.hackbench(groups=4, fds=5, loops=60, ipc="pipe", mode="thread"),
            None,
        ),
        "volano": (sl.workloads.volano(rooms=3, users=8, messages=30), None),
    }


def scenarios() -> list[tuple[str, str, str]]:
    return [(k, m, w) for k in PRESETS for m in MACHINES for w in workloads()]


def run(kernel: str, machine: str, workload: str) -> dict[str, float]:
    w, duration = workloads()[workload]
    r = sl.simulate(machine, kernel, w, seed=11, duration_s=duration)
    assert r.status == "ok", (kernel, machine, workload, r.status)
    return {k: float(v) for k, v in sorted(r.metrics.items())}


def key(kernel: str, machine: str, workload: str) -> str:
    return f"{kernel}/{machine}/{workload}"


def record() -> dict[str, dict[str, float]]:
    return {key(*s): run(*s) for s in scenarios()}


if __name__ == "__main__":
    if "--write" not in sys.argv:
        sys.exit("usage: python tests/model/golden_scenarios.py --write")
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
