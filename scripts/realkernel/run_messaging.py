"""Run ``perf bench sched messaging`` on a real Linux kernel in a QEMU guest,
with and without newidle balancing, and print what ``perf stat``,
``/proc/stat`` and ``/proc/schedstat`` saw.

The kernel is the one ``build.sh`` makes (Debian's 6.1 with the
``NEWIDLE_BALANCE`` and ``NEWIDLE_THROTTLE_38`` sched features of
``patch_sched.py``). The guest's userland is busybox plus the host's own
``perf`` and its libraries, packed into an initramfs; the guest prints
tagged lines on its serial console and powers off.

``--accel tcg`` (the default) emulates the CPUs: the scheduler's decisions
are the real kernel's, but the guest computes several times slower than the
host while its clock and tick run at wall speed, so times are not the
host's; compare the two settings with each other, not with other machines.
``--accel kvm`` needs a KVM that runs ordinary guests.

Example: python run_messaging.py --groups 20 --reps 3 --throttle 3.8
"""

from __future__ import annotations

import argparse
import csv
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

IDLE_TYPES = ("idle", "busy", "newidle")  # enum cpu_idle_type order
LB_FIELDS = (
    "count",
    "balanced",
    "failed",
    "imbalance",
    "gained",
    "hot_gained",
    "nobusyq",
    "nobusyg",
)
APPLETS = "sh mount cat echo seq poweroff sed grep setsid".split()
# The guest's clock must cover this much of the host's over the runs.
CLOCK_MIN_RATIO = 0.8
SETTINGS = {"with": "NEWIDLE_BALANCE", "without": "NO_NEWIDLE_BALANCE"}

INIT = """#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmp /tmp
echo "SLX boot $(cat /proc/sys/kernel/osrelease) cpus=$(grep -c ^processor /proc/cpuinfo)"
. /run.sh
echo SLX end
poweroff -f
"""


def guest_script(a: argparse.Namespace) -> str:
    pre = ["NO_NI_RANDOM", "NEWIDLE_THROTTLE_38"] if a.throttle == "3.8" else []
    flags = f"-g {a.groups} -l {a.loops}"
    flags += " -p" if a.ipc == "pipe" else ""
    flags += " -t" if a.mode == "thread" else ""
    sid = "setsid " if a.setsid else ""  # busybox: no fork when not a group leader
    autogroup = 1 if a.setsid else 0
    feats = " ".join(SETTINGS.values())
    return f"""
for f in {" ".join(pre)}; do echo $f > /sys/kernel/debug/sched/features; done
echo {autogroup} > /proc/sys/kernel/sched_autogroup_enabled
echo "SLX autogroup $(cat /proc/sys/kernel/sched_autogroup_enabled)"
for i in $(seq 1 {a.reps}); do
 for f in {feats}; do
  echo $f > /sys/kernel/debug/sched/features
  cat /proc/schedstat > /tmp/s0; grep '^cpu ' /proc/stat > /tmp/p0; cat /proc/uptime > /tmp/u0
  {sid}perf stat -x, -e task-clock,context-switches,cpu-migrations -o /tmp/ps -- \\
    perf bench sched messaging {flags} > /tmp/out 2>&1
  cat /proc/uptime > /tmp/u1; grep '^cpu ' /proc/stat > /tmp/p1; cat /proc/schedstat > /tmp/s1
  echo "SLX run $i $f"
  for x in out ps u0 u1 p0 p1 s0 s1; do sed "s/^/SLX $x /" /tmp/$x; done
 done
done
"""


def make_initramfs(a: argparse.Namespace, work: Path) -> Path:
    root = work / "initrd"
    if root.exists():
        shutil.rmtree(root)
    for d in ("bin", "proc", "sys", "dev", "tmp", "usr/bin"):
        (root / d).mkdir(parents=True)
    shutil.copy("/bin/busybox", root / "bin/busybox")
    for app in APPLETS:
        (root / "bin" / app).symlink_to("busybox")
    perf = shutil.which("perf")
    if perf is None:
        sys.exit("run_messaging: no perf on the host (apt-get install linux-perf)")
    shutil.copy(perf, root / "usr/bin/perf")
    ldd = subprocess.run(["ldd", perf], capture_output=True, text=True, check=True).stdout
    for word in ldd.split():
        if word.startswith("/"):
            dest = root / word.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(word, dest)
    (root / "init").write_text(INIT)
    (root / "init").chmod(0o755)
    (root / "run.sh").write_text(guest_script(a))
    image = work / "initrd.cpio.gz"
    pack = f"cd {root} && find . | cpio -o -H newc 2>/dev/null | gzip -1 > {image}"
    subprocess.run(pack, shell=True, check=True)
    return image


def boot(a: argparse.Namespace, image: Path, log: Path) -> list[float]:
    """Boot the guest, copying its console to ``log``; return the host's
    clock at each run's ``SLX run`` line (printed as the run ends)."""
    if a.accel == "kvm":
        accel = ["-enable-kvm", "-cpu", "host"]
    else:
        accel = ["-accel", "tcg,thread=multi", "-cpu", "max"]
    cmd = [
        "qemu-system-x86_64",
        *accel,
        "-smp",
        f"{a.smp},sockets=1,cores={a.smp},threads=1",
        "-m",
        a.mem,
        "-kernel",
        str(a.kernel),
        "-initrd",
        str(image),
        "-append",
        "console=ttyS0 quiet loglevel=1 panic=-1 schedstats=enable",
        "-nographic",
        "-no-reboot",
    ]
    ends: list[float] = []
    with (
        log.open("w") as fh,
        subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        ) as p,
    ):
        watchdog = threading.Timer(a.timeout, p.kill)
        watchdog.start()
        try:
            assert p.stdout is not None
            for line in p.stdout:
                fh.write(line)
                if line.startswith("SLX run "):
                    ends.append(time.monotonic())
        finally:
            watchdog.cancel()
    if p.returncode != 0:
        sys.exit(f"run_messaging: QEMU exited with {p.returncode} (killed after --timeout?)")
    return ends


def domains(lines: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    cpu = ""
    for line in lines:
        f = line.split()
        if f[0].startswith("cpu"):
            cpu = f[0]
        elif f[0].startswith("domain"):
            out[f"{cpu}.{f[0]}"] = [int(x) for x in f[2:]]
    return out


def console(log: Path) -> list[tuple[str, str]]:
    """The guest's tagged console lines, as (tag, rest)."""
    lines = log.read_text(errors="replace").splitlines()
    return [ln[4:].partition(" ")[::2] for ln in lines if ln.startswith("SLX ")]


def parse(said: list[tuple[str, str]]) -> list[dict]:
    """A row per run from the tagged console lines: perf's results and the
    /proc/stat and /proc/schedstat deltas."""
    runs: list[dict] = []
    cur: dict | None = None
    for tag, rest in said:
        if tag == "run":
            rep, feat = rest.split()
            setting = "without" if feat.startswith("NO_") else "with"
            cur = {"rep": int(rep), "newidle": setting, "s0": [], "s1": []}
            runs.append(cur)
        elif cur is None:
            continue
        elif tag == "out" and "Total time" in rest:
            cur["total_s"] = float(rest.split(":")[1].split()[0])
        elif tag == "ps" and rest.count(",") > 2:
            f = rest.split(",")
            cur[f[2]] = float(f[0])
        elif tag in ("u0", "u1"):
            cur[tag] = float(rest.split()[0])
        elif tag in ("p0", "p1"):
            cur[tag] = [int(x) for x in rest.split()[1:]]
        elif tag in ("s0", "s1"):
            cur[tag].append(rest)
    rows = []
    for r in runs:
        dp = [b - c for b, c in zip(r["p1"], r["p0"], strict=True)]
        row = {
            "rep": r["rep"],
            "newidle": r["newidle"],
            "total_s": r.get("total_s"),
            "elapsed_s": round(r["u1"] - r["u0"], 2),
            "uptime_end_s": r["u1"],
            "task_clock_ms": r.get("task-clock"),
            "context_switches": r.get("context-switches"),
            "cpu_migrations": r.get("cpu-migrations"),
            "idle_frac": round((dp[3] + dp[4]) / sum(dp), 4),
        }
        d0, d1 = domains(r["s0"]), domains(r["s1"])
        tot = [0] * 24
        for k, v in d1.items():
            for i in range(24):
                tot[i] += v[i] - d0[k][i]
        for t, kind in enumerate(IDLE_TYPES):
            for i, name in enumerate(LB_FIELDS):
                row[f"lb_{name}_{kind}"] = tot[8 * t + i]
        rows.append(row)
    return rows


SHOW = [
    "total_s",
    "elapsed_s",
    "task_clock_ms",
    "context_switches",
    "cpu_migrations",
    "idle_frac",
    "lb_count_newidle",
    "lb_gained_newidle",
    "lb_nobusyg_newidle",
    "lb_gained_idle",
    "lb_gained_busy",
]


def report(rows: list[dict]) -> None:
    means = {}
    for s in SETTINGS:
        rs = [r for r in rows if r["newidle"] == s]
        known = [k for k in SHOW if all(r[k] is not None for r in rs)]
        means[s] = {k: statistics.mean(r[k] for r in rs) for k in known}
        print(f"newidle {s} ({len(rs)} runs)")
        for r in rs:
            print("   " + "  ".join(f"{k}={r[k]}" for k in SHOW))
    print(f"{'metric':22s} {'with':>12s} {'without':>12s} {'change':>8s}")
    for k in SHOW:
        w, wo = means["with"].get(k), means["without"].get(k)
        if w is None or wo is None:
            continue
        ch = f"{100 * (wo / w - 1):+.1f}%" if w else "n/a"
        print(f"{k:22s} {w:12.4g} {wo:12.4g} {ch:>8s}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--work", type=Path, default=Path("/tmp/schedlab-realkernel"))
    ap.add_argument("--kernel", type=Path, default=None, help="bzImage (default: build.sh's)")
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--loops", type=int, default=100)
    ap.add_argument("--ipc", choices=["socket", "pipe"], default="socket")
    ap.add_argument("--mode", choices=["process", "thread"], default="process")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--mem", default="8G")
    ap.add_argument("--throttle", choices=["6.1", "3.8"], default="6.1", help="newidle throttle")
    ap.add_argument(
        "--setsid",
        action="store_true",
        help="autogroup on and perf in its own session, so in its own task group",
    )
    ap.add_argument("--accel", choices=["tcg", "kvm"], default="tcg")
    ap.add_argument("--timeout", type=int, default=7200, help="seconds for the whole guest run")
    ap.add_argument("--csv", type=Path, default=None, help="write one row per run here")
    a = ap.parse_args()
    a.kernel = a.kernel or a.work / "linux-source-6.1/arch/x86/boot/bzImage"
    if not a.kernel.is_file():
        sys.exit(f"run_messaging: no kernel at {a.kernel}; run build.sh first")
    a.work.mkdir(parents=True, exist_ok=True)
    log = a.work / "guest.log"
    image = make_initramfs(a, a.work)
    t0 = time.monotonic()
    ends = boot(a, image, log)
    wall = time.monotonic() - t0
    said = console(log)
    rows = parse(said)
    if len(rows) != 2 * a.reps:
        sys.exit(f"run_messaging: {len(rows)} runs in {log}, expected {2 * a.reps}")
    failed = [r for r in rows if r["total_s"] is None or r["context_switches"] is None]
    if failed:
        sys.exit(
            f"run_messaging: {len(failed)} of {len(rows)} runs printed no perf result; "
            f"see the 'SLX out' lines in {log}"
        )
    autogroup = next((rest for tag, rest in said if tag == "autogroup"), "?")
    if a.setsid and autogroup != "1":
        sys.exit(f"run_messaging: the guest's sched_autogroup_enabled is {autogroup}, not 1")
    # From the end of the first run to the end of the last, by both clocks.
    host = ends[-1] - ends[0]
    guest = rows[-1]["uptime_end_s"] - rows[0]["uptime_end_s"]
    if guest < CLOCK_MIN_RATIO * host:
        print(
            f"WARNING: runs 2 to {len(rows)} took {guest:.1f} s by the guest's clock but "
            f"{host:.1f} s by the host's: the emulated clock fell behind (seen with pipe IPC "
            "under TCG), so the guest's times and tick-driven balancing are not to be trusted"
        )
    print(
        f"{a.groups} groups x {a.loops} loops, {a.ipc}, {a.mode}, {a.smp} CPUs, "
        f"throttle {a.throttle}, {a.accel}, autogroup {autogroup}: "
        f"guest ran {wall:.0f} s"
    )
    report(rows)
    if a.csv:
        with a.csv.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
