"""The memory a sweep holds per finished row (``schedlab.run.estimate.ROW_BYTES``):
the peak RSS of sweeps of N cheap runs (hackbench on vm-2 for 1 ms of
simulated time, every metric column) above that of a 10-run sweep, each in
a fresh interpreter, divided by the extra rows.

    python scripts/dev/row_memory.py [N ...]     (default: 2000 10000 40000)
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import resource, sys, schedlab as sl
n = int(sys.argv[1])
w = sl.workloads.hackbench(groups=1, loops=1)
df = sl.sweep("vm-2", "v6.18", w, {"migration_cost_ns": list(range(n))},
              duration_s=0.001, progress=False, threads=2)
assert df.height == n
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def peak(n: int) -> int:
    out = subprocess.run([sys.executable, "-c", CHILD, str(n)], check=True, capture_output=True)
    return int(out.stdout.split()[-1])


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [2000, 10000, 40000]
    base = peak(10)
    rows = []
    for n in sizes:
        p = peak(n)
        rows.append({"runs": n, "peak_mb": p / 1e6, "bytes_per_row": (p - base) / (n - 10)})
    print(json.dumps({"base_mb": base / 1e6, "sweeps": rows}, indent=1))


if __name__ == "__main__":
    main()
