"""The documentation's reference tables, built from the installed schedlab.

The docs site generates its reference pages from these at build time
(scripts/dev/gen_docs_pages.py, run by mkdocs-gen-files), so a table cannot
drift from the code: values, defaults and field lists come from the code,
and the prose columns below must name exactly the code's presets and fields
(a missing or stale entry raises, failing ``mkdocs build``).
tests/test_docs_tables.py checks the tables against the code.
"""

from __future__ import annotations

import schedlab as sl

#: Notes column of the machine preset table, one per preset.
MACHINE_NOTES = {
    "vm-2": "like this development VM",
    "quad-4c": "a quad-core desktop, one L3: the idle_balance removal case's box",
    "core2-2s": "Harpertown: L2 shared per core pair, one node (FSB)",
    "nhm-ep": "Nehalem-EP, L3 and node per socket",
    "wsm-4s-40c": 'the AIM7 box (SMT left off: "40 cores")',
    "snb-ep-4s": "Sandy Bridge-EP",
    "skl-sp-2s": "the 0-day Skylake of the RT IPI case",
    "epyc-genoa-2s": "AMD EPYC 9654 (Zen 4): L3 per 8-core CCX (`llc_cores=8`, 12 per socket), "
    "node per socket (NPS1); domains SIBLING, MC (CCX), CPU (socket, 6.x's PKG), NUMA",
    "spr-2s": "Xeon Platinum 8480+ (Sapphire Rapids): L3 and node per socket (SNC off); "
    "SIBLING, MC, NUMA",
    "snb-laptop-4c": "a Core i7-2820QM-class Sandy Bridge laptop (4C/8T): the box of case 3's "
    "v6 watts table; turbo bins and C-states in [the power model](../power-model.md)",
}

#: "Charged as" column of the cost table, one per CostModel field.
COST_DOCS = {
    "context_switch_ns": "system time on the CPU, before the next task runs "
    "(Li et al. 2007: 3.8 µs direct)",
    "syscall_ns": "the `sched_yield()` system call (must be ≥ 1; refused where written)",
    "wakeup_ns": "`try_to_wake_up()`, system time of the waker (or of the timer interrupt)",
    "tick_ns": "`scheduler_tick()` on a busy CPU (0.1 % at HZ=1000; "
    "Tsafrir 2007: 0.5–1.5 % incl. indirect)",
    "ipi_latency_ns": "delay of a reschedule IPI (or a stopper / NOHZ kick) to a remote CPU",
    "ipi_send_ns": "sending an IPI (Pallipadi 2012: 1600–2000 cycles)",
    "ipi_handle_ns": "taking a function-call IPI on the receiver",
    "self_ipi_ns": (
        "an irq_work self-IPI (the push_ipi_rd walk): send + entry on one CPU; "
        "no published figure, default = send + handle"
    ),
    "rq_lock_ns": "an uncontended remote rq lock or rto_lock in RT push/pull",
    "lb_base_ns": "fixed part of one `load_balance()` pass, on the balancing CPU",
    "lb_per_group_ns": "per sched group a pass examines",
    "lb_per_cpu_ns": "per CPU whose statistics a pass reads",
    "lb_per_task_ns": "per task `move_tasks()` examines",
    "migrate_task_ns": "per migrated task, on the balancing CPU and (its lock held) the source CPU",
    "refill_smt_ns": "cache refill a migrated task pays (as extra work) when it moves "
    "between SMT siblings, whether a balancer pull or a wake-up placed it "
    "(metric `migration_refill_s`)",
    "refill_llc_ns": "… within a last-level cache",
    "refill_socket_ns": "… across LLCs of one socket (`core2-2s` charges its other-pair moves "
    "like cross-package ones: no shared L3)",
    "refill_node_ns": "… across sockets of one node",
    "refill_remote_ns": "… across nodes",
    "cache_decay_ns": "the refill fades linearly to 0 for a task that last ran this long ago",
    "mm_switch_ns": "`switch_mm()` between address spaces (not between threads of one process)",
    "fork_ns": "creating a process, on the parent (measured, Calibration)",
    "clone_ns": "creating a thread, on the parent (measured)",
    "exit_ns": "a process's exit (`do_exit()`, the address-space teardown; measured)",
    "exit_thread_ns": "a thread's exit (measured)",
    "reap_ns": "`wait4()` / `pthread_join()` per child (measured)",
    "child_start_ns": "a new hackbench worker process's start-up before `ready()`, system "
    "time of the child: `ret_from_fork` and ~160 copy-on-write faults (measured); "
    "it decides where children fork to (seed case 2)",
    "child_start_thread_ns": "the same for a thread: its stack (measured)",
    "child_start_spread_pct": "each child draws its start-up uniformly within ± this % "
    "(the measured p10–p90); 0 makes it constant; at most 100",
    "pipe_write_ns": "one small pipe write, under `pipe->mutex`",
    "pipe_read_ns": "one small pipe read, under `pipe->mutex`",
    "sock_write_ns": "one AF_UNIX stream write",
    "sock_read_ns": "one AF_UNIX stream read",
    "copy_kib_ns": "copying 1 KiB between user and kernel",
    "tcp_write_ns": "a TCP loopback send (VolanoMark)",
    "tcp_read_ns": "a TCP loopback receive (VolanoMark)",
    "futex_ns": "a futex wake (a Java `notify()` with a waiter)",
    "sys_jitter_pct": "run-to-run noise: every system-call burst × U[1 − p %, 1 + p %] "
    "(0 makes replicates of a non-random workload identical)",
    "xfer_by_distance": "switches on the communication cost by distance: a pipe or socket "
    "read (and VolanoMark's queue hand-off) pays the lines the writer's CPU holds modified "
    "times the per-line latency of the two CPUs' distance (on only for epyc-genoa-2s and spr-2s; "
    "[calibration](../calibration.md))",
    "xfer_smt_ns": "per cache line moved between SMT siblings",
    "xfer_llc_ns": "… within a last-level cache",
    "xfer_socket_ns": "… across LLCs of one socket",
    "xfer_node_ns": "… across sockets of one node",
    "xfer_remote_ns": "… across nodes",
    "turbo": "switches on the frequency model: a package runs at the turbo frequency of its "
    "number of active cores and a task's burst of W ns takes W·base/f ns (off by default; "
    "needs a preset with a power table; [power model](../power-model.md))",
    "cstates": "switches on idle states: an idle CPU enters the C-state a menu-like governor "
    "picks and a wake-up of it waits the state's exit latency (off by default; "
    "[power model](../power-model.md))",
    "xfer_meta_lines": "lines per message besides the data (pipe/socket bookkeeping)",
}


def _same_keys(what: str, docs: dict[str, str], names: list[str]) -> None:
    missing = [n for n in names if n not in docs]
    stale = [n for n in docs if n not in names]
    if missing or stale:
        raise SystemExit(
            f"scripts/dev/docs_tables.py: {what} out of step with the code: "
            f"undocumented {missing}, no longer in the code {stale}"
        )


def kernel_fields_table() -> str:
    """Every Kernel field, its value in each preset, and the change it models."""
    presets = sl.Kernel.presets()
    ks = [sl.Kernel.preset(p) for p in presets]
    lines = [
        "| field | " + " | ".join(presets) + " | kernel change | meaning |",
        "|---" * (len(presets) + 3) + "|",
    ]
    for r in sl.Kernel.info().iter_rows(named=True):
        f = r["field"]
        vals = [str(getattr(k, f)) for k in ks]
        if r["commit"]:
            origin = f"{r['commit']} ({r['release']})"
        else:
            origin = r["release"] or r["kind"]
        if r["kind"] == "change" and not r["verified"]:
            origin += " ?"
        lines.append(f"| `{f}` | " + " | ".join(vals) + f" | {origin} | {r['doc']} |")
    return "\n".join(lines) + "\n"


def kernel_presets_table() -> str:
    """Each kernel preset and the fields that differ from the preset before it."""
    presets = sl.Kernel.presets()
    lines = ["| preset | changes against the previous preset |", "|---|---|"]
    prev = None
    for name in presets:
        k = sl.Kernel.preset(name)
        if prev is None:
            changes = "(the base)"
        else:
            d = k.diff(prev)
            changes = ", ".join(
                f"`{f}`: {o} → {t}" for f, t, o in d.select("field", "this", "other").iter_rows()
            )
            changes = changes or "(none)"
        lines.append(f"| `{name}` | {changes} |")
        prev = k
    return "\n".join(lines) + "\n"


def machine_presets_table() -> str:
    """Each machine preset's shape (sockets × cores × threads), CPUs and notes."""
    names = sl.Machine.presets()
    _same_keys("MACHINE_NOTES", MACHINE_NOTES, names)
    lines = [
        "| preset | shape | CPUs | LLC cores | NUMA nodes | notes |",
        "|---|---|---|---|---|---|",
    ]
    for n in names:
        m = sl.Machine.preset(n)
        shape = f"{m.sockets} × {m.cores_per_socket} × {m.threads_per_core}"
        lines.append(
            f"| `{n}` | {shape} | {m.nr_cpus} | {m.llc_cores} | {m.numa_nodes} "
            f"| {MACHINE_NOTES[n]} |"
        )
    return "\n".join(lines) + "\n"


def cost_table() -> str:
    """Every CostModel field, its default, and what it charges."""
    defaults = sl.CostModel()
    names = sl.CostModel.fields()
    _same_keys("COST_DOCS", COST_DOCS, names)
    # what CostModel.preset(machine) (simulate's costs=None) changes, per field
    per_machine: dict[str, list[str]] = {n: [] for n in names}
    for m in sl.Machine.presets():
        c = sl.CostModel.preset(m)
        for n in names:
            if getattr(c, n) != getattr(defaults, n):
                per_machine[n].append(f"`{m}`: {getattr(c, n)}")
    lines = ["| field | default | machine presets | charged as |", "|---|---|---|---|"]
    for n in names:
        pm = ", ".join(per_machine[n])
        lines.append(f"| `{n}` | {getattr(defaults, n)} | {pm} | {COST_DOCS[n]} |")
    return "\n".join(lines) + "\n"
