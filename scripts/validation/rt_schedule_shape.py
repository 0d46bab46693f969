"""Where the machine and the model differ on an RT hackbench: the shape of
one schedule, from `perf sched record` on this host and from the model's
trace of the same run.

For each role (receiver, sender) it prints the switch-ins per CPU, the
voluntary and involuntary switches out, and the wake-up-to-run delay
(mean, p50, p90). Needs perf and root (chrt). Run it on a quiet machine.

    python scripts/validation/rt_schedule_shape.py --groups 10 --ipc socket --mode thread

perf bench sched messaging creates, per group, its receivers then its
senders; the script names the threads by that fork order.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import schedlab as sl

ROW = re.compile(r"\s*\[(\d+)\]\s+([\d.]+):\s+(\S+)\s+(.*)")


def _stats(d: list[float]) -> str:
    if not d:
        return "-"
    d = sorted(d)
    return (
        f"mean {sum(d) / len(d):.3f} ms, p50 {d[len(d) // 2]:.3f}, p90 {d[int(len(d) * 0.9)]:.3f}"
    )


def _report(
    title: str, events: list[tuple[int, float, str, dict[str, Any]]], role: dict[int, str]
) -> None:
    """events: (cpu, time_ms, kind, fields) with kind in fork/wake/switch."""
    ins: collections.Counter[tuple[int, str]] = collections.Counter()
    out: collections.Counter[tuple[str, str]] = collections.Counter()
    delay: dict[str, list[float]] = collections.defaultdict(list)
    woke: dict[int, float] = {}
    for cpu, t, kind, f in events:
        if kind == "wake":
            woke[f["pid"]] = t
        elif kind == "switch":
            prev, nxt = f["prev"], f["next"]
            if prev in role:
                out[role[prev], "involuntary" if f["runnable"] else "voluntary"] += 1
            if nxt in role:
                ins[cpu, role[nxt]] += 1
                if nxt in woke:
                    delay[role[nxt]].append(t - woke.pop(nxt))
    print(f"== {title}")
    for r in ("receiver", "sender"):
        cpus = ", ".join(f"CPU{c} {n}" for (c, rr), n in sorted(ins.items()) if rr == r)
        print(
            f"{r:9s} switch-ins: {cpus}; out: voluntary {out[r, 'voluntary']}, "
            f"involuntary {out[r, 'involuntary']}; wake-up to run: {_stats(delay[r])}"
        )


def real(a: argparse.Namespace, workers: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        bench = ["perf", "bench", "sched", "messaging", "-g", str(a.groups), "-l", str(a.loops)]
        if a.ipc == "pipe":
            bench.append("-p")
        if a.mode == "thread":
            bench.append("-t")
        cmd = [
            "chrt",
            f"--{a.policy}",
            str(a.rt_priority),
            "perf",
            "sched",
            "record",
            "-q",
            "-o",
            str(data),
            "--",
            *bench,
        ]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        text = subprocess.run(
            ["perf", "script", "-i", str(data), "-F", "cpu,time,event,trace"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    events: list[tuple[int, float, str, dict[str, Any]]] = []
    forks: list[int] = []
    for line in text.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        cpu, t, ev, rest = int(m.group(1)), float(m.group(2)) * 1e3, m.group(3), m.group(4)
        if ev.startswith("sched:sched_process_fork"):
            forks.append(int(re.search(r"child_pid=(\d+)", rest).group(1)))  # type: ignore[union-attr]
        elif ev.startswith("sched:sched_waking"):
            events.append((cpu, t, "wake", {"pid": int(re.search(r" pid=(\d+)", rest).group(1))}))  # type: ignore[union-attr]
        elif ev.startswith("sched:sched_switch"):
            prev = int(re.search(r"prev_pid=(\d+)", rest).group(1))  # type: ignore[union-attr]
            state = re.search(r"prev_state=(\S+)", rest).group(1)  # type: ignore[union-attr]
            nxt = int(re.search(r"next_pid=(\d+)", rest).group(1))  # type: ignore[union-attr]
            events.append(
                (cpu, t, "switch", {"prev": prev, "next": nxt, "runnable": state.startswith("R")})
            )
    # The benchmark's workers are the last `workers` forks (perf forks first).
    workers_forked = forks[-workers:]
    fds = 20
    role = {
        p: ("receiver" if (i // fds) % 2 == 0 else "sender") for i, p in enumerate(workers_forked)
    }
    _report("real (perf sched record)", events, role)


def model(a: argparse.Namespace) -> None:
    w = sl.workloads.hackbench(groups=a.groups, loops=a.loops, ipc=a.ipc, mode=a.mode)
    w = w.with_tasks(policy=a.policy, rt_priority=a.rt_priority)
    m, k = sl.Machine.preset(a.machine), sl.Kernel.preset(a.kernel)
    costs = None
    if a.real is not None:
        import polars as pl

        frame = pl.read_parquet(a.real).filter(pl.col("change") == "plain")
        costs = sl.calibrate(frame, m, k, progress=False).costs
    r = sl.simulate(m, k, w, costs=costs, seed=1, trace=True)
    names = dict(zip(r.tasks["task"].to_list(), r.tasks["name"].to_list(), strict=True))
    role = {
        t: n.split("/")[0].split("-")[0]
        for t, n in names.items()
        if n.startswith(("receiver", "sender"))
    }
    events: list[tuple[int, float, str, dict[str, Any]]] = []
    assert r.trace is not None
    for row in r.trace.iter_rows(named=True):
        t = row["time_ns"] / 1e6
        if row["event"] == "sched_wakeup":
            events.append((row["cpu"], t, "wake", {"pid": row["pid"]}))
        elif row["event"] == "sched_switch":
            events.append(
                (
                    row["cpu"],
                    t,
                    "switch",
                    {
                        "prev": row["pid"],
                        "next": row["next_pid"],
                        "runnable": row["prev_state"] == 0,
                    },
                )
            )
    _report(
        f"model ({a.machine}, {a.kernel}{', calibrated on ' + a.real if a.real else ''})",
        events,
        role,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--loops", type=int, default=200)
    ap.add_argument("--ipc", choices=["socket", "pipe"], default="socket")
    ap.add_argument("--mode", choices=["process", "thread"], default="thread")
    ap.add_argument("--policy", choices=["fifo", "rr"], default="fifo")
    ap.add_argument("--rt-priority", type=int, default=1)
    ap.add_argument("--machine", default="vm-2")
    ap.add_argument("--kernel", default="v6.18")
    ap.add_argument("--real", help="a measure() frame whose plain rows calibrate the model")
    ap.add_argument("--model-only", action="store_true")
    a = ap.parse_args()
    if not a.model_only:
        real(a, 2 * a.groups * 20)
    model(a)


if __name__ == "__main__":
    main()
