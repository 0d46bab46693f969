"""Compare simulated hackbench with this machine's kernel.

Runs ``perf bench sched messaging`` (when ``perf`` is installed) and the model
(``vm-2``, kernel preset given by ``--kernel``) for every ipc/mode pair and
group count, and prints Total time, context switches and migrations side by
side: medians of ``--reps`` perf runs and of ``--model-seeds`` model runs.
Used to choose and check the IPC costs in the cost model; see
docs/calibration.md. Not a test: it needs ``perf`` and takes a minute.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess

import schedlab as sl


def real(ipc: str, mode: str, groups: int, loops: int, reps: int) -> dict[str, float] | None:
    if shutil.which("perf") is None:
        return None
    args = [
        "perf",
        "stat",
        "-x,",
        "-e",
        "context-switches,cpu-migrations",
        "--",
        "perf",
        "bench",
        "sched",
        "messaging",
        "-g",
        str(groups),
        "-l",
        str(loops),
    ]
    if ipc == "pipe":
        args.append("-p")
    if mode == "thread":
        args.append("-t")
    runs = []
    for _ in range(reps):
        p = subprocess.run(args, capture_output=True, text=True, check=True)
        out = p.stdout + p.stderr
        row = {}
        for line in out.splitlines():
            if "Total time" in line:
                row["elapsed_s"] = float(line.split()[2])
            elif line.endswith(",context-switches,") or ",context-switches," in line:
                row["cs"] = float(line.split(",")[0])
            elif ",cpu-migrations," in line:
                row["migrations"] = float(line.split(",")[0])
        runs.append(row)
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


MODEL_KEYS = ("elapsed_s", "context_switches", "cpu_migrations")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kernel", default="v3.8")
    ap.add_argument("--loops", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--groups", default="1,5,10,20")
    ap.add_argument("--model-seeds", type=int, default=5)
    a = ap.parse_args()
    print(
        f"{'ipc':6} {'mode':7} {'g':>3} | {'real s':>7} {'sim s':>7} {'ratio':>5} | "
        f"{'real cs':>8} {'sim cs':>8} | {'real mig':>8} {'sim mig':>8}"
    )
    for ipc in ("socket", "pipe"):
        for mode in ("process", "thread"):
            for g in (int(x) for x in a.groups.split(",")):
                w = sl.workloads.hackbench(groups=g, loops=a.loops, ipc=ipc, mode=mode)
                runs = [
                    sl.simulate("vm-2", a.kernel, w, seed=s, duration_s=600).metrics
                    for s in range(a.model_seeds)
                ]
                # medians: few-group runs are bimodal (packed or spread)
                m = {k: statistics.median(r[k] for r in runs) for k in MODEL_KEYS}
                re = real(ipc, mode, g, a.loops, a.reps)
                if re is None:
                    print(
                        f"{ipc:6} {mode:7} {g:>3} | {'-':>7} {m['elapsed_s']:7.3f} {'-':>5} | "
                        f"{'-':>8} {m['context_switches']:8.0f} | {'-':>8} "
                        f"{m['cpu_migrations']:8.0f}"
                    )
                    continue
                print(
                    f"{ipc:6} {mode:7} {g:>3} | {re['elapsed_s']:7.3f} {m['elapsed_s']:7.3f} "
                    f"{m['elapsed_s'] / re['elapsed_s']:5.2f} | {re['cs']:8.0f} "
                    f"{m['context_switches']:8.0f} | {re['migrations']:8.0f} "
                    f"{m['cpu_migrations']:8.0f}"
                )


if __name__ == "__main__":
    main()
