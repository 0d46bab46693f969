"""``Result.to_perfetto`` on a large trace: wall time and memory (prints
figures; not a test).

Each repetition runs in a fresh child process: it simulates hackbench on
``skl-sp-2s`` (112 CPUs, v6.18: PELT counters and balancer passes too) with
``trace=True`` — about 5 M trace rows at the default ``--loops`` — builds
``r.trace`` (and the other frames the export reads), then times
``r.to_perfetto()``. Memory: the process's resident set when the export
starts, and its peak during the export (``VmHWM`` of ``/proc/self/status``,
reset just before the export through ``/proc/self/clear_refs``; Linux only),
beside ``ru_maxrss`` (the whole child's peak, the simulation included).

    python scripts/dev/bench_perfetto.py [--loops N] [--reps N] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def child(loops: int, out: Path) -> None:
    import schedlab as sl

    t0 = time.perf_counter()
    r = sl.simulate(
        "skl-sp-2s",
        "v6.18",
        sl.workloads.hackbench(groups=10, loops=loops),
        seed=1,
        trace=True,
        trace_limit=20_000_000,
        interval_s=0.01,
    )
    sim_s = time.perf_counter() - t0
    # the frames the export reads, built before the clock starts
    assert r.trace is not None
    _ = (r.tasks, r.balance_trace, r.pelt_trace, r.vmstat)
    rss_start = _status_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    t0 = time.perf_counter()
    r.to_perfetto(out)
    export_s = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "rows": r.trace.height,
                "truncated": r.trace_truncated,
                "balance_rows": 0 if r.balance_trace is None else r.balance_trace.height,
                "samples": r.vmstat.height,
                "sim_s": sim_s,
                "export_s": export_s,
                "rss_start_mb": rss_start / 1024,
                "export_peak_mb": _status_kb("VmHWM") / 1024,
                "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "file_mb": out.stat().st_size / 2**20,
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loops", type=int, default=10_500, help="hackbench loops (default ~5 M rows)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="where to write (default: a temp dir)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    out_dir = args.out or Path(tempfile.mkdtemp(prefix="bench-perfetto-"))
    out = out_dir / "bench.pftrace"
    if args.child:
        child(args.loops, out)
        return
    for rep in range(args.reps):
        cmd = [
            sys.executable,
            __file__,
            "--child",
            "--loops",
            str(args.loops),
            "--out",
            str(out_dir),
        ]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        d = json.loads(res.stdout.strip().splitlines()[-1])
        print(
            f"rep {rep + 1}: {d['rows']:,} rows ({d['balance_rows']:,} balance passes, "
            f"{d['samples']} samples), simulate {d['sim_s']:.1f} s; to_perfetto "
            f"{d['export_s']:.2f} s, RSS {d['rss_start_mb']:.0f} MB at its start, peak "
            f"{d['export_peak_mb']:.0f} MB during it (child's ru_maxrss {d['maxrss_mb']:.0f} MB); "
            f"file {d['file_mb']:.0f} MiB",
            flush=True,
        )
    if out.exists():
        os.unlink(out)


if __name__ == "__main__":
    main()
