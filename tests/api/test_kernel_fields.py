"""Every `sl.Kernel` field is live: for each field a small scenario in which
toggling that field alone (base kernel vs. ``base.replace(field=other)``)
changes at least one of a few metrics tied to the field's mechanism.

A field added to `Kernel` without an entry in `FIELD_SCENARIOS` (or, if no
scenario can be found, in `NO_SCENARIO_YET`) fails
`test_every_kernel_field_has_a_scenario`. Runs are deterministic (fixed
seed), so "differs" is an exact comparison; no direction is asserted.

Metric names are keys of `Result.metrics`, or ``schedstat.<column>`` for a
schedstat counter summed over CPUs and domains.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import schedlab as sl
from schedlab.workloads import hackbench, spinners

# (machine, base kernel (preset name or Kernel), other value (None: the
#  negated bool), workload factory, duration_s, metrics that may change)
Scenario = tuple[
    "str | sl.Machine",
    "str | sl.Kernel",
    object,
    Callable[[], sl.workloads.Workload],
    "float | None",
    tuple[str, ...],
]

UP = sl.Machine(1, 1, 1, name="1-cpu")
# migration_cost_ns = 0 disables the avg_idle < migration_cost early return of
# idle_balance(), so the 3.13 per-domain cost throttle becomes the only one.
V313_NO_MIGRATION_COST = sl.Kernel.preset("v3.13").replace(migration_cost_ns=0)
# 3.13 with the EEVDF pick (the EEVDF fields at their 6.18 values), and with
# the 6.12 slice protection.
EEVDF = sl.Kernel.preset("v3.13").replace(pick="eevdf")
EEVDF_612 = EEVDF.replace(run_to_parity_min_slice=False)

NEWIDLE = ("newidle_balance_calls", "newidle_balance_pulled", "tasks_pulled")
PULLS = ("cpu_migrations", "tasks_pulled", "newidle_balance_pulled")
SWITCHES = ("context_switches", "resched_ipis")


def short_sleepers(n: int, run_us: float = 200, sleep_us: float = 300) -> Callable:
    """n nice-0 tasks running/sleeping for exponential times: CPUs go
    newly idle every few hundred microseconds."""
    return lambda: spinners([0] * n, run_us=run_us, sleep_us=sleep_us, dist="exp")


def small_hackbench(ipc: str = "socket") -> Callable:
    """hackbench -g 2 -f 4 -l 50: wake-up preemption and newidle pulls."""
    return lambda: hackbench(groups=2, fds=4, loops=50, ipc=ipc)


# 3.13 with 5.16's newidle balance (no migration-cost test; rd->overload;
# update_newidle_cost()).
V313_LB_COST = sl.Kernel.preset("v3.13").replace(newidle_throttle="lb_cost")
V38_PELT = sl.Kernel.preset("v3.8").replace(pelt="v5.7")
V38_SIS6 = V38_PELT.replace(select_idle_sibling="idle_cpu")
V313_PELT = sl.Kernel.preset("v3.13").replace(pelt="v5.7")

# Alex Shi's power policies (seed case 3): the behaviours on, under each policy.
_POWER = dict(power_fork_exec=True, power_wake=True, power_pack_transitory=True, power_lb=True)
PERF_POWER_FIELDS = sl.Kernel.preset("v3.8").replace(**_POWER)
POWERSAVING = PERF_POWER_FIELDS.replace(balance_policy="powersaving")
# No burst test, so every wake-up goes through the power placement.
POWERSAVING_NO_BURST = POWERSAVING.replace(power_burst_threshold_ns=0)
# Spread at fork by performance, packed by the power balance only.
POWERSAVING_LB_ONLY = POWERSAVING.replace(power_fork_exec=False, power_wake=False)
POWER_METRICS = ("cpu_migrations", "migration_refill_s", "active_balances", "tasks_pulled")


def rt_hackbench() -> sl.workloads.Workload:
    """hackbench -g 2 -f 10 -l 150 (threads, pipe) with RT kthreads: 24
    FIFO-50 threaded IRQs over CPU pairs and 1 ms watchdogs, so CPUs go
    RT-overloaded and the push machinery runs (docs/rt.md)."""
    rt = sl.workloads.rt_kthreads(
        irq_threads=24, irq_cpus=2, irq_period_us=1000, irq_run_us=100, watchdog_period_ms=1
    )
    return hackbench(groups=2, fds=10, loops=150, ipc="pipe", mode="thread", rt_kthreads=rt)


def rt_hog_hackbench() -> sl.workloads.Workload:
    """hackbench under 1 ms watchdogs that want 99 % of each CPU: the RT
    class runs into its sched_rt_runtime_us budget, period after period
    (the benchmark gets on in the throttled windows, about 2 s)."""
    rt = sl.workloads.rt_kthreads(watchdog_period_ms=1, watchdog_run_us=990)
    return hackbench(groups=1, fds=2, loops=30000, ipc="pipe", mode="thread", rt_kthreads=rt)


V38_RT_RD = sl.Kernel.preset("v3.8").replace(rt_push="push_ipi_rd")
RT_IPIS = ("function_call_ipis", "irq_work", "rt_push_ipis", "rt_self_ipis")

FIELD_SCENARIOS: dict[str, Scenario] = {
    # -- RT class (docs/rt.md) -------------------------------------------------
    # RT throttling: no limit, and a longer period at the same runtime.
    "sched_rt_runtime_us": ("vm-2", "v6.18", -1, rt_hog_hackbench, None, ("rt_throttled_s",)),
    "sched_rt_period_us": (
        "vm-2",
        "v6.18",
        2_000_000,
        rt_hog_hackbench,
        None,
        ("rt_throttled_s", "elapsed_s"),
    ),
    # pull -> the 2017 root-domain walk: push IPIs instead of pulls.
    "rt_push": ("core2-2s", "v3.8", "push_ipi_rd", rt_hackbench, None, (*RT_IPIS, "rt_pulls")),
    # An overloaded CPU no longer starts a walk that would only reach itself.
    "rt_pull_skip_only_self": ("core2-2s", V38_RT_RD, None, rt_hackbench, None, RT_IPIS),
    # 94894c9c477e: no self-IPI.
    "rt_rto_skip_self": ("core2-2s", V38_RT_RD, None, rt_hackbench, None, RT_IPIS),
    # 6.8: a CPU whose only migratable RT task is the running one is no
    # longer overloaded, so fewer pulls start a walk.
    "rt_overload_pushable": (
        "core2-2s",
        V38_RT_RD,
        None,
        rt_hackbench,
        None,
        (*RT_IPIS, "rt_pull_calls"),
    ),
    # Three RR hogs on two CPUs: two share one CPU and rotate at the slice.
    "sched_rr_timeslice_ms": (
        "vm-2",
        "v6.18",
        10,
        lambda: spinners([0] * 3).with_tasks(policy="rr", rt_priority=1),
        0.5,
        ("context_switches",),
    ),
    # FIFO receivers woken by fair senders on 4 CPUs: with CPUPRI_IDLE an
    # idle CPU is preferred to one running a sender.
    # A hackbench in a group limited to 20 ms per 100 ms (docs/groups.md).
    "sched_cfs_bandwidth_slice_us": (
        "vm-2",
        "v6.18",
        1000,
        lambda: hackbench(groups=2, loops=100).with_tasks(group="c"),
        None,
        ("elapsed_s", "group.c.throttled_s"),
        [sl.Group("c", quota_us=20_000)],
    ),
    "cfs_throttle": (
        "vm-2",
        "v6.18",
        "cfs_rq",
        lambda: hackbench(groups=2, loops=100).with_tasks(group="c"),
        None,
        ("elapsed_s", "group.c.throttled_s"),
        [sl.Group("c", quota_us=20_000)],
    ),
    "cpupri_idle": (
        "quad-4c",
        "v6.18",
        None,
        lambda: hackbench(groups=2, loops=100).with_tasks(
            policy="fifo", rt_priority=1, role="receiver"
        ),
        0.05,
        ("cpu_migrations", "function_call_ipis"),
    ),
    # -- tunables ------------------------------------------------------------
    # 10x the cache-hot threshold: the avg_idle throttle skips most newidle passes.
    "migration_cost_ns": (
        "quad-4c",
        "v3.8",
        5_000_000,
        short_sleepers(6),
        0.2,
        (*NEWIDLE, "avg_idle_mean_us"),
    ),
    # 2 movable hogs among 10 pinned to CPU 0: a move_tasks() walk of a single
    # task finds a pinned one and pulls nothing.
    "nr_migrate": (
        "vm-2",
        "v3.8",
        1,
        lambda: spinners([0] * 12, cpus=[None] * 2 + [[0]] * 10),
        0.2,
        ("tasks_pulled", "cpu_migrations"),
    ),
    # 3 hogs per CPU: the slice is latency / nr_running, so 4x latency, 1/4 the switches.
    "latency_ns": (
        "vm-2",
        "v3.8",
        24_000_000,
        lambda: spinners([0] * 6),
        0.2,
        ("context_switches",),
    ),
    # 6 hogs per CPU: sched_nr_latency = latency / min_granularity drops to 1.
    "min_granularity_ns": (
        "vm-2",
        "v3.8",
        4_000_000,
        lambda: spinners([0] * 12),
        0.2,
        ("context_switches",),
    ),
    # hackbench wake-ups preempt the sender far less often with a 10 ms granularity.
    "wakeup_granularity_ns": (
        "vm-2",
        "v3.8",
        10_000_000,
        small_hackbench(),
        None,
        SWITCHES,
    ),
    # 4 CPUs: log scaling multiplies the CFS times by 3; none keeps the base slice.
    "tunable_scaling": (
        "quad-4c",
        "v3.8",
        "none",
        lambda: spinners([0] * 8),
        0.2,
        ("context_switches",),
    ),
    # Tick-driven slice expiry and periodic balancing of 6 hogs on 4 CPUs.
    "hz": (
        "quad-4c",
        "v3.8",
        100,
        lambda: spinners([0] * 6),
        0.2,
        ("context_switches", "cpu_migrations"),
    ),
    # The RFC: no idle_balance() in schedule() at all.
    "idle_balance": ("quad-4c", "v3.8", False, short_sleepers(6), 0.2, NEWIDLE),
    # -- newidle balancing ---------------------------------------------------
    # With no migration-cost early return, 3.13 stops the domain walk once
    # avg_idle < cost so far + max_newidle_lb_cost; 3.8's throttle never does.
    "newidle_throttle": (
        "nhm-ep",
        V313_NO_MIGRATION_COST,
        "avg_idle",
        short_sleepers(32, sleep_us=100),
        0.1,
        (*NEWIDLE, "avg_idle_mean_us"),
    ),
    # 2.6.37-rc1's re-arming of avg_idle after a pull defeats the avg_idle throttle.
    "newidle_rearm": (
        "quad-4c",
        "v2.6.37-rc1",
        False,
        short_sleepers(8),
        0.2,
        (*NEWIDLE, "avg_idle_mean_us"),
    ),
    # MC pairs of core2-2s: a newly idle pair with capacity forces a pull from a
    # full pair that 2.6.36's imbalance_pct test calls balanced.
    "newidle_force": (
        "core2-2s",
        "v2.6.36",
        None,
        short_sleepers(16),
        0.2,
        (*PULLS, "active_balances"),
    ),
    # A newidle pull no longer feeds the (short) pull time into avg_idle.
    "newidle_clear_stamp": (
        "quad-4c",
        "v2.6.36",
        None,
        small_hackbench(),
        None,
        ("avg_idle_mean_us", "newidle_balance_calls", "newidle_balance_pulled"),
    ),
    # Past the first second, the decay refreshes rq->max_idle_balance_cost,
    # which (3.13's avg_idle_cap) caps avg_idle; migration_cost 0 keeps the cap
    # at the balancing cost instead of the constant 2 * migration_cost.
    "newidle_lb_cost_decay": (
        "core2-2s",
        V313_NO_MIGRATION_COST,
        None,
        short_sleepers(12),
        1.2,
        ("avg_idle_mean_us", *NEWIDLE),
    ),
    # NI_RANDOM: each domain's newidle pass runs with probability ~(1 +
    # ratio)/1024 (initially about one half), so fewer NEWLY_IDLE passes.
    "newidle_random": (
        "quad-4c",
        V313_LB_COST,
        None,
        short_sleepers(8),
        0.2,
        ("load_balance_calls_newidle", *NEWIDLE),
    ),
    # 4b603f1551a7: the avg_idle sample is taken when the CPU leaves idle
    # (fork placements and pulls included), not at the wake-up.
    "avg_idle_on_move": (
        "quad-4c",
        V313_LB_COST,
        None,
        small_hackbench(),
        None,
        ("avg_idle_mean_us", *NEWIDLE),
    ),
    # The cap: 2 * migration_cost (2.6.36) vs 2 * max_idle_balance_cost
    # (3.13). max_idle_balance_cost is at least migration_cost, so at the
    # default 500 us the two caps coincide; with migration_cost 0 the 3.13
    # cap is the balancing cost itself while 2.6.36's is 0.
    "avg_idle_cap": (
        "core2-2s",
        V313_NO_MIGRATION_COST,
        "migration_cost",
        short_sleepers(16),
        0.2,
        ("avg_idle_mean_us", *NEWIDLE),
    ),
    # abfafa54db9a: the EWMA takes every sample and then clamps, instead of a
    # long idle period resetting avg_idle to the cap; off on v3.13.
    "avg_idle_ewma_first": (
        "core2-2s",
        "v3.13",
        False,
        short_sleepers(16),
        0.2,
        ("avg_idle_mean_us", *NEWIDLE),
    ),
    # -- find_busiest_group() / load_balance() rules -------------------------
    # hackbench wakes tasks on idle CPUs whose IPI is still in flight: counted
    # as busy (3.2) or idle (2.6.36) by the balancer and wake-up placement.
    "idle_cpu_nr_running": ("vm-2", "v3.8", None, small_hackbench(), None, PULLS),
    # 2 short sleepers per CPU: uneven runqueues within MC pairs, so the
    # group_imb test (load spread vs nr_running spread) is evaluated often.
    "group_imb_nr_running": ("core2-2s", "v3.8", None, short_sleepers(16), 0.2, PULLS),
    # 2.6.36 MC carries SD_PREFER_SIBLING, so the CPU level caps remote pairs
    # at capacity 1: the pair {0, 1} with two pinned nice -5 hogs looks
    # overloaded to a full pair of nice-0 hogs, and busy balancing fails on the
    # pinned tasks; with the fix a full local pair leaves the capacity alone.
    "prefer_sibling_local_capacity": (
        "core2-2s",
        "v2.6.36",
        None,
        lambda: spinners([-5] * 2 + [0] * 6, cpus=[[0, 1]] * 2 + [None] * 6),
        0.3,
        ("load_balance_calls_busy", "schedstat.lb_failed_busy", "schedstat.lb_imbalance_busy"),
    ),
    # Short sleepers on 4 MC pairs: an imbalanced pair forces a balance.
    "force_balance_group_imb": ("core2-2s", "v3.8", None, short_sleepers(16), 0.2, PULLS),
    # CPU_IDLE balancing of 32 short sleepers over SMT pairs, sockets and nodes.
    "idle_cpus_balanced": (
        "nhm-ep",
        "v3.8",
        None,
        short_sleepers(32),
        0.2,
        ("load_balance_calls_idle", "tasks_pulled", "active_balances"),
    ),
    # hackbench's many short-running tasks per runqueue: one cfs_tasks walk of
    # min(nr_migrate, nr_running) tasks vs 2.6.36's repeated balance_tasks().
    "lb_cfs_tasks": ("quad-4c", "v2.6.36", None, small_hackbench(), None, PULLS),
    # Failed newidle passes stop counting towards cache_nice_tries, so cache-hot
    # tasks stay put longer.
    "newidle_no_nr_balance_failed": ("quad-4c", "v2.6.36", None, small_hackbench(), None, PULLS),
    # Nice -10 bursts next to pinned tasks: queued tasks too heavy for the newidle
    # imbalance make newidle passes fail, which (2.6.36 counts them) pass
    # cache_nice_tries + 2 and may then start active balancing. Toggled on
    # 2.6.36 because on 3.8 newidle failures do not count and load_balance()
    # resets the count whenever a periodic pass reaches the threshold.
    "newidle_active_balance": (
        "quad-4c",
        "v2.6.36",
        None,
        lambda: spinners(
            [0, 0, 5, 0, -10, 5, 0, 10, 0, -10, 0],
            run_us=[None, 100, 3000, None, 3000, 1000, 300, None, 1000, 100, None],
            sleep_us=[None, 100, 3000, None, 100, 300, 1000, None, 1000, 100, None],
            cpus=[None, [0], None, None, None, None, [2], None, None, None, [3]],
        ),
        0.3,
        ("active_balances",),
    ),
    # 3f130a37c442: balanced newidle passes on vm-2 no longer double the
    # interval of the periodic balance, which then runs more (or less) often.
    "newidle_keep_interval": (
        "vm-2",
        "v6.18",
        None,
        short_sleepers(4),
        0.3,
        ("load_balance_calls_busy", "load_balance_calls_idle"),
    ),
    # CONFIG_PREEMPTION: 16 short sleepers on 4 CPUs leave several queued
    # tasks behind a newly idle CPU; a preemptible build pulls only one.
    "preemption": ("quad-4c", "v6.18", None, short_sleepers(16), 0.05, NEWIDLE),
    # ec73240b1627: on nhm-ep's SMT level a cache-hot task may move to its
    # sibling thread. (-f 10: once the start barrier woke its workers newest
    # first, as the kernel does, toggling the field at -f 4 changed nothing.)
    "smt_ignore_hot": (
        "nhm-ep",
        "v6.18",
        None,
        lambda: hackbench(groups=2, fds=10, loops=50),
        None,
        PULLS + SWITCHES,
    ),
    # -- NOHZ idle load balancing --------------------------------------------
    # Idle CPUs next to CPUs with 2 runnable short sleepers: who gets kicked, and when.
    "nohz_ilb": (
        "quad-4c",
        "v3.8",
        "push",
        short_sleepers(8),
        0.2,
        ("nohz_kicks", "load_balance_calls_idle"),
    ),
    # The same kicks, counted as function-call instead of reschedule IPIs.
    "nohz_kick_ipi": (
        "quad-4c",
        "v3.8",
        "function_call",
        short_sleepers(8),
        0.2,
        ("function_call_ipis", "resched_ipis"),
    ),
    # Kicks also on ticks that raise SCHED_SOFTIRQ.
    "nohz_kick_after_rebalance": (
        "quad-4c",
        "v2.6.36",
        None,
        short_sleepers(8),
        0.2,
        ("nohz_kicks", "function_call_ipis"),
    ),
    # -- wake-up placement and sched domains ---------------------------------
    # hackbench wakees on nhm-ep's 4-core LLCs with SMT siblings.
    "select_idle_sibling": (
        "nhm-ep",
        "v3.8",
        "any_idle",
        small_hackbench(),
        None,
        ("cpu_migrations", "context_switches"),
    ),
    # 9 hogs on core2-2s: busy MC balancing every 1-4 ms instead of 64x that.
    "mc_busy_factor": (
        "core2-2s",
        "v3.8",
        1,
        lambda: spinners([0] * 9),
        0.3,
        ("load_balance_calls_busy", "cpu_migrations"),
    ),
    # SD_PREFER_SIBLING on MC: the CPU level caps each pair at capacity 1.
    "mc_prefer_sibling": ("core2-2s", "v3.8", True, short_sleepers(16), 0.2, PULLS),
    # NUMA machine: one NODE level (8-32 ms) vs per-distance levels.
    "sd_numa": (
        "nhm-ep",
        "v3.8",
        "node",
        lambda: spinners([0] * 17),
        0.3,
        ("load_balance_calls_busy", "load_balance_calls_idle"),
    ),
    # 5.x sd_init(): intervals of the span's weight (8-16 ms at MC, 16-32 at
    # NUMA instead of 1-4 ms), busy_factor 16, imbalance_pct 117.
    "sd_init": (
        "nhm-ep",
        "v3.13",
        "v5",
        lambda: spinners([0] * 17),
        0.3,
        ("load_balance_calls_busy", "load_balance_calls_idle", "cpu_migrations"),
    ),
    # -- CFS pick / yield / buddies ------------------------------------------
    # Yielding short sleepers: yield moves the yielder to the far right.
    "compat_yield": (
        "vm-2",
        "v2.6.36",
        None,
        lambda: spinners([0] * 4, run_us=100, sleep_us=100, yields=True),
        0.1,
        ("context_switches", "yields"),
    ),
    # The same yielders: skip buddy vs yield accounting only the runtime.
    "yield_impl": (
        "vm-2",
        "v3.8",
        "update_curr",
        lambda: spinners([0] * 4, run_us=100, sleep_us=100, yields=True),
        0.1,
        ("context_switches", "yields"),
    ),
    # One CPU, >= sched_nr_latency tasks so a preempted task becomes the last
    # buddy while the preempting wakee is the next buddy; nice-5 hogs are the
    # leftmost, and their wider granularity lets both buddies be picked.
    "next_buddy_over_last": (
        UP,
        "v3.8",
        None,
        lambda: spinners(
            [5] * 8 + [0] * 4, run_us=[None] * 8 + [200] * 4, sleep_us=[None] * 8 + [500] * 4
        ),
        0.2,
        ("context_switches",),
    ),
    # Hackbench wakees preempting their waker become the next buddy. (-f 4
    # -l 100: once the start barrier woke its workers newest first, as the
    # kernel does, toggling the field at -f 10 -l 50 changed nothing.)
    "preempt_sets_next_buddy": (
        "core2-2s",
        "v3.8",
        None,
        lambda: hackbench(groups=2, fds=4, loops=100, ipc="socket"),
        None,
        SWITCHES,
    ),
    # Sleeper credit of latency/2 vs latency: how often hackbench wakees preempt.
    "gentle_fair_sleepers": ("vm-2", "v3.8", None, small_hackbench(), None, SWITCHES),
    # hackbench forks its tasks: START_DEBIT places them a slice to the right.
    "start_debit": ("vm-2", "v3.8", None, small_hackbench(), None, SWITCHES),
    "wakeup_preemption": ("vm-2", "v3.8", None, small_hackbench(), None, SWITCHES),
    # LAST_BUDDY is only set with >= sched_nr_latency (8) runnable tasks: 12
    # short sleepers on one CPU.
    "last_buddy": (UP, "v3.8", None, short_sleepers(12, run_us=300, sleep_us=300), 0.2, SWITCHES),
    # NEXT_BUDDY (off in every preset) marks each hackbench wakee.
    "next_buddy": ("vm-2", "v3.8", None, small_hackbench(), None, SWITCHES),
    # -- PELT and 6.x wake-up placement ----------------------------------------
    # Tracking on: the runqueues' util_avg appears (0 when off).
    "pelt": ("vm-2", "v3.8", "v5.7", lambda: spinners([0, 0]), 0.2, ("pelt.cpu_util_avg",)),
    # 1-group hackbench on vm-2: senders and receivers flip wakees, so
    # wake-ups stop being pulled to the waker's CPU.
    "wake_wide": (
        "vm-2",
        "v3.8",
        None,
        lambda: hackbench(groups=1, fds=20, loops=200, ipc="socket"),
        None,
        ("cpu_migrations", "context_switches"),
    ),
    # WA_IDLE + WA_WEIGHT on PELT load instead of instantaneous weights.
    "wake_affine": (
        "nhm-ep",
        V38_PELT,
        "idle_weight",
        small_hackbench(),
        None,
        ("cpu_migrations", "context_switches", "schedstat.ttwu_move_affine"),
    ),
    # The CPU a wakee used before prev, tried before scanning the LLC.
    "recent_used_cpu": (
        "nhm-ep",
        V38_SIS6,
        None,
        lambda: hackbench(groups=4, fds=8, loops=50, ipc="pipe"),
        None,
        ("cpu_migrations", "context_switches"),
    ),
    # A CPU running only SCHED_IDLE tasks taken as idle by wake-up
    # placement: hackbench with its senders SCHED_IDLE.
    "sched_idle_cpu": (
        "vm-2",
        "v6.18",
        None,
        lambda: hackbench(groups=2, loops=50).with_tasks(policy="idle", role="sender"),
        None,
        ("cpu_migrations", "context_switches"),
    ),
    # Wake-ups onto idle CPUs by the wake list: CAL instead of RES IPIs.
    "ttwu_queue": (
        "vm-2",
        "v6.18",
        "off",
        lambda: hackbench(groups=2, loops=50),
        None,
        ("function_call_ipis", "resched_ipis"),
    ),
    # SCHED_IDLE CPUs balance at the idle interval: hackbench all SCHED_IDLE.
    "sched_idle_balance": (
        "vm-2",
        "v6.18",
        None,
        lambda: hackbench(groups=2, loops=50).with_tasks(policy="idle"),
        None,
        ("cpu_migrations", "context_switches", "schedstat.lb_count_busy"),
    ),
    # The order of check_preempt_wakeup()'s policy tests: batch senders
    # waking onto CPUs running idle-policy receivers (3.8's CFS pick).
    "idle_preempt_non_idle": (
        "vm-2",
        "v3.8",
        None,
        lambda: (
            hackbench(groups=2, loops=50)
            .with_tasks(policy="idle", role="receiver")
            .with_tasks(policy="batch", role="sender")
        ),
        None,
        ("context_switches", "cpu_migrations"),
    ),
    # The LLC scan limited by the summed util: 12 short sleepers keep
    # core2-2s's LLCs busy enough that wake-ups stop scanning them.
    "sis_util": (
        "core2-2s",
        V38_SIS6,
        None,
        short_sleepers(12),
        0.3,
        ("cpu_migrations", "context_switches"),
    ),
    # The 5.5+ balancer: 12 short sleepers on nhm-ep's 16 CPUs; the
    # group-type passes (idle CPUs evened, migrate_task/util on PELT) pull
    # other tasks than cpu_load[]'s avg_load does.
    "balancer": (
        "nhm-ep",
        V313_PELT,
        "group_type",
        short_sleepers(12),
        0.2,
        (*PULLS, "schedstat.lb_balanced_idle", "schedstat.lb_gained_idle"),
    ),
    # -- EEVDF (6.6+) ----------------------------------------------------------
    # 5 hogs on 2 CPUs: CFS slices of latency/nr_running vs EEVDF requests of
    # base_slice (1.4 ms scaled), ended at the next tick.
    "pick": ("vm-2", "v3.13", "eevdf", lambda: spinners([0] * 5), 0.2, SWITCHES),
    # 3 hogs per CPU: a 3 ms request instead of 0.7 ms, fewer switches.
    "base_slice_ns": ("vm-2", EEVDF, 3_000_000, lambda: spinners([0] * 6), 0.2, SWITCHES),
    # Short sleepers: wake-ups placed at V − lag vs at V.
    "place_lag": ("vm-2", EEVDF, None, short_sleepers(6), 0.2, SWITCHES),
    # hackbench forks its tasks: a half-slice first deadline.
    "place_deadline_initial": ("vm-2", EEVDF, None, small_hackbench(), None, (*SWITCHES, *PULLS)),
    # Short sleepers: a protected curr keeps the CPU against wakees.
    "run_to_parity": ("vm-2", EEVDF, None, short_sleepers(6), 0.2, SWITCHES),
    # With the 6.12 protection (no min-slice rework): did_preempt_short()
    # reschedules an unprotected, ineligible curr at update_curr().
    "preempt_short": (
        UP,
        EEVDF_612,
        None,
        lambda: spinners(
            [0, 0, 0], run_us=[None, 300, 300], sleep_us=[None, 2000, 700], dist="exp"
        ),
        0.3,
        ("context_switches", "involuntary_cs"),
    ),
    # Short sleepers that sleep while owing service stay queued (or not).
    "delay_dequeue": ("vm-2", EEVDF, None, short_sleepers(6), 0.2, (*SWITCHES, *PULLS)),
    "delay_zero": ("vm-2", EEVDF, None, short_sleepers(6), 0.2, (*SWITCHES, *PULLS)),
    # hackbench tasks preempted mid-request and pulled keep their deadline.
    "place_rel_deadline": (
        "vm-2",
        EEVDF,
        None,
        lambda: hackbench(groups=2, fds=10, loops=100),
        None,
        (*SWITCHES, *PULLS),
    ),
    # Without RUN_TO_PARITY, 6.17 still protects curr for the unscaled base
    # slice (0.7 ms); 6.6-6.16 not at all.
    "run_to_parity_min_slice": (
        "vm-2",
        EEVDF.replace(run_to_parity=False),
        None,
        short_sleepers(6),
        0.2,
        ("context_switches", "involuntary_cs"),
    ),
    # Yielding loops: forfeit the request vs push the deadline by a slice.
    "yield_forfeit": (
        "vm-2",
        EEVDF,
        None,
        lambda: spinners([0] * 4, run_us=100, yields=True),
        0.2,
        ("context_switches", "yields"),
    ),
    # -- fs/pipe.c ------------------------------------------------------------
    # Pipe hackbench whose receivers fall behind: reads of a full pipe that
    # free no slot wake a writer before 6.14 (aaec5a95d596), not after.
    "pipe_still_full_no_wake": (
        "vm-2",
        "v6.18",
        None,
        lambda: hackbench(groups=2, loops=200, ipc="pipe"),
        None,
        ("context_switches", "wakeups"),
    ),
    # -- Alex Shi's power-aware balance policies (seed case 3) ----------------
    # hackbench forks on wsm-4s-40c: performance spreads the children over the
    # packages, powersaving keeps them in the parent's.
    "balance_policy": (
        "wsm-4s-40c",
        PERF_POWER_FIELDS,
        "powersaving",
        lambda: hackbench(groups=1, fds=4, loops=20, ipc="pipe"),
        None,
        POWER_METRICS,
    ),
    "power_fork_exec": (
        "wsm-4s-40c",
        POWERSAVING,
        None,
        lambda: hackbench(groups=1, fds=4, loops=20, ipc="pipe"),
        None,
        POWER_METRICS,
    ),
    # Short sleepers woken by their timers: placed by the power path.
    "power_wake": (
        "wsm-4s-40c",
        POWERSAVING_NO_BURST,
        None,
        short_sleepers(3),
        0.05,
        POWER_METRICS,
    ),
    "power_burst_threshold_ns": (
        "wsm-4s-40c",
        POWERSAVING,
        0,
        short_sleepers(3),
        0.05,
        POWER_METRICS,
    ),
    "power_pack_transitory": (
        "wsm-4s-40c",
        POWERSAVING_NO_BURST,
        None,
        short_sleepers(3, run_us=50, sleep_us=950),
        0.05,
        POWER_METRICS,
    ),
    # Three spinners spread at fork; the power balance pulls them together.
    # (The busy CPUs' NUMA-level balance first comes due at 1.28 s.)
    "power_lb": (
        "wsm-4s-40c",
        POWERSAVING_LB_ONLY,
        None,
        lambda: spinners([0] * 3),
        1.5,
        POWER_METRICS,
    ),
}

# Fields for which no scenario has been found yet: field -> reason. Each
# needs its best-effort scenario in BEST_EFFORT_SCENARIOS, which an
# xfail(strict=True) test runs, so it turns red once the model changes.
NO_SCENARIO_YET: dict[str, str] = {}
BEST_EFFORT_SCENARIOS: dict[str, Scenario] = {}


def _metrics(r: sl.Result) -> dict[str, float]:
    """`r.metrics` plus every schedstat counter summed as ``schedstat.<column>``."""
    out = dict(r.metrics)
    ss = r.schedstat
    for col in ss.columns:
        if col not in ("cpu", "domain", "level", "span_weight"):
            out[f"schedstat.{col}"] = float(ss[col].sum())
    # PELT's signals (present only when Kernel.pelt tracks them).
    out["pelt.cpu_util_avg"] = (
        float(r.cpus["util_avg"].sum()) if "util_avg" in r.cpus.columns else 0.0
    )
    return out


def _toggle(field: str, scenario: Scenario) -> dict[str, tuple[float, float]]:
    """Run the scenario with the base kernel and with `field` toggled; return
    the listed metrics that differ, as (base, toggled)."""
    machine, base, other, workload, duration_s, metrics, *rest = scenario
    groups = rest[0] if rest else None
    k = sl.Kernel.preset(base) if isinstance(base, str) else base
    if other is None:
        assert isinstance(getattr(k, field), bool), f"{field}: give the other value"
        other = not getattr(k, field)
    assert getattr(k, field) != other, f"{field}: the toggle does not change the field"
    toggled = k.replace(**{field: other})
    a = _metrics(sl.simulate(machine, k, workload(), seed=1, duration_s=duration_s, groups=groups))
    b = _metrics(
        sl.simulate(machine, toggled, workload(), seed=1, duration_s=duration_s, groups=groups)
    )
    unknown = [m for m in metrics if m not in a]
    assert not unknown, f"unknown metrics {unknown}"
    return {m: (a[m], b[m]) for m in metrics if a[m] != b[m]}


def test_every_kernel_field_has_a_scenario():
    fields = set(sl.Kernel.fields())
    assert not set(FIELD_SCENARIOS) & set(NO_SCENARIO_YET)
    assert set(FIELD_SCENARIOS) | set(NO_SCENARIO_YET) == fields, (
        f"without a scenario: {sorted(fields - set(FIELD_SCENARIOS) - set(NO_SCENARIO_YET))}; "
        f"not a field: {sorted((set(FIELD_SCENARIOS) | set(NO_SCENARIO_YET)) - fields)}"
    )
    assert set(BEST_EFFORT_SCENARIOS) == set(NO_SCENARIO_YET)


@pytest.mark.parametrize("field", list(FIELD_SCENARIOS))
def test_toggling_the_field_changes_a_metric(field):
    scenario = FIELD_SCENARIOS[field]
    changed = _toggle(field, scenario)
    assert changed, f"toggling {field} alone changed none of {scenario[-1]}"


@pytest.mark.parametrize(
    "field",
    [
        pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=reason))
        for f, reason in NO_SCENARIO_YET.items()
    ],
)
def test_field_without_scenario_yet(field):
    scenario = BEST_EFFORT_SCENARIOS[field]
    assert _toggle(field, scenario), f"toggling {field} alone changed none of {scenario[-1]}"


def test_preemption_also_stops_the_cpu_load_balancers_newidle_pass():
    """The 2.6.36-3.13 #ifdef CONFIG_PREEMPT in balance_tasks()/move_tasks():
    `preemption` also reaches the cpu_load balancer: toggling it on the old
    presets changes their newidle pulls."""
    wl = short_sleepers(16)
    for base in ("v2.6.36", "v3.13"):
        k = sl.Kernel.preset(base)
        a = _metrics(sl.simulate("quad-4c", k, wl(), seed=1, duration_s=0.05))
        b = _metrics(
            sl.simulate("quad-4c", k.replace(preemption=True), wl(), seed=1, duration_s=0.05)
        )
        assert a["newidle_balance_pulled"] != b["newidle_balance_pulled"], base
