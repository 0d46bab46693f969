"""Load balancing: sched domains, periodic/newidle/NOHZ balancing,
the newidle throttles, wake-up placement, schedstat and the Lozi invariant."""

import numpy as np
import polars as pl
import pytest
import schedlab as sl
from schedlab.workloads import spinners

PRESETS = sl.Machine.presets()
SMT = {"nhm-ep", "snb-ep-4s", "skl-sp-2s", "epyc-genoa-2s", "spr-2s"}


def test_presets_fix_every_variant():
    ks = {n: sl.Kernel.preset(n) for n in ["v2.6.36", "v2.6.37-rc1", "v2.6.37", "v3.8", "v3.13"]}
    assert ks["v2.6.36"].newidle_throttle == "avg_idle" and not ks["v2.6.36"].newidle_force
    assert ks["v2.6.37-rc1"].newidle_rearm and ks["v2.6.37-rc1"].newidle_force
    assert ks["v2.6.37"].newidle_throttle == "avg_idle" and ks["v2.6.37"].newidle_clear_stamp
    assert not ks["v2.6.37"].newidle_rearm
    assert ks["v3.8"].lb_cfs_tasks and ks["v3.8"].sd_numa == "numa_levels"
    assert ks["v3.13"].newidle_throttle == "max_lb_cost"

    # only the documented fields differ between neighbours
    def changed(a: str, b: str) -> dict[str, tuple[str, str]]:
        d = ks[a].diff(ks[b])
        return {f: (t, o) for f, t, o in d.select("field", "this", "other").iter_rows()}

    assert changed("v2.6.37-rc1", "v2.6.36") == {
        "newidle_rearm": ("True", "False"),
        "newidle_force": ("True", "False"),
    }
    assert changed("v3.13", "v3.8") == {
        "newidle_throttle": ("max_lb_cost", "avg_idle"),
        "newidle_lb_cost_decay": ("True", "False"),
        "avg_idle_cap": ("max_idle_balance_cost", "migration_cost"),
        "avg_idle_ewma_first": ("True", "False"),
    }
    assert ks["v3.8"].diff("v3.8").height == 0


@pytest.mark.parametrize("machine", PRESETS)
@pytest.mark.parametrize("kernel", ["v2.6.36", "v2.6.37", "v3.8", "v3.13", "v6.18"])
@pytest.mark.parametrize("extra", [1, 2, "half"])
def test_n_plus_k_spinners_end_balanced_and_stay_so(machine, kernel, extra, request):
    m = sl.Machine.preset(machine)
    if kernel == "v6.18" and machine == "epyc-genoa-2s" and extra != "half":
        request.applymarker(
            pytest.mark.xfail(
                strict=True,
                reason="v6.18 on 24 CCXs: balanced at the end, but the surplus task keeps "
                "moving between CCXs (~510 migrations in 10 s) and a CPU sits idle for a "
                "whole 1.25 s sample after 5 s; not checked against a real Genoa",
            )
        )
    if kernel in ("v2.6.36", "v2.6.37") and machine in SMT:
        pytest.skip(
            "2.6.36/2.6.37 leave SMT siblings idle across nodes: their imbalance_pct "
            "test accepts e.g. 60:54 tasks over two 56-thread nodes (see docs/model.md)"
        )
    n = m.nr_cpus
    k = n // 2 if extra == "half" else extra
    # 24 LLCs take longer: under v3.8 epyc-genoa-2s still had 6 idle CPUs at
    # 2 s (the surplus moves one LLC at a time) and none at 10 s.
    # 6.x's sd_init() balances a busy 224-CPU NUMA level every 224 ms x 16:
    # spr-2s's last idle CPUs fill between 2 and 8 s under v6.18.
    slow = machine == "epyc-genoa-2s" or (kernel == "v6.18" and machine == "spr-2s")
    dur = 10.0 if slow else 2.0
    r = sl.simulate(m, kernel, spinners([0] * (n + k)), duration_s=dur, interval_s=dur / 8)
    per_cpu = np.bincount(r.tasks["cpu"].to_numpy(), minlength=n)
    assert per_cpu.max() - per_cpu.min() <= 1, per_cpu
    # the second half: every CPU busy
    assert r.cpu_timeline[:, 4:].min() > 0.99


def test_nice_minus_15_forced_newidle_balance_keeps_cpus_busy():
    # nr_cpus spinners, one at nice -15, plus a pinned per-CPU housekeeping
    # thread (20 µs every 10 ms) that makes idle CPUs pass through schedule().
    m = sl.Machine.preset("wsm-4s-40c")
    n = m.nr_cpus
    w = spinners(
        [-15] + [0] * (n - 1) + [0] * n,
        run_us=[None] * n + [20] * n,
        sleep_us=[None] * n + [10_000] * n,
        cpus=[None] * n + list(range(n)),
        dist="exp",
    )
    busy = {}
    for k in ("v2.6.36", "v2.6.37", "v3.8"):
        r = sl.simulate(m, k, w, duration_s=10.0, seed=1, interval_s=1.0)
        # each CPU's busy fraction after the first second
        busy[k] = r.cpu_timeline[:, 1:].mean(axis=1).min()
    assert busy["v2.6.37"] >= 0.95 and busy["v3.8"] >= 0.95
    assert busy["v2.6.36"] < 0.1, "2.6.36 cannot pull to the idle CPU (this_load >> max_load)"


def test_basic_bal1_gives_every_task_its_fair_share():
    # LinSched basic_bal1: nr_cpus + 4 tasks, run 20 ms / sleep 10 ms, on 4 CPUs.
    quad = sl.Machine(1, 4, 1, name="quad")
    for k in ("v2.6.36", "v3.8"):
        r = sl.simulate(quad, k, spinners([0] * 8, run_us=20_000, sleep_us=10_000), duration_s=60.0)
        cpu = r.tasks["cpu_s"]
        assert cpu.max() / cpu.min() <= 1.02, (k, cpu.to_list())
        assert r.metrics["cpus_utilized"] > 3.2


def test_rearm_defeats_the_throttle_and_migration_cost_throttles():
    m = sl.Machine.preset("core2-2s")
    w = spinners([0] * 12, run_us=200, sleep_us=300, dist="exp")
    k = sl.Kernel.preset("v2.6.37")
    calls = {}
    for rearm in (False, True):
        for mc in (0, 250_000, 500_000, 1_000_000, 2_000_000):
            r = sl.simulate(
                m, k.replace(newidle_rearm=rearm, migration_cost_ns=mc), w, duration_s=0.5, seed=1
            )
            calls[rearm, mc] = r.metrics["newidle_balance_calls"]
    assert calls[True, 500_000] > 5 * calls[False, 500_000]
    for rearm in (False, True):
        seq = [calls[rearm, mc] for mc in (0, 250_000, 500_000, 1_000_000, 2_000_000)]
        assert seq[0] > seq[2] > seq[4], (rearm, seq)
    assert calls[False, 2_000_000] < 0.01 * calls[False, 0]


def test_idle_balance_false_removes_newidle_balancing():
    w = spinners([0] * 12, run_us=200, sleep_us=300, dist="exp")
    k = sl.Kernel.preset("v3.8").replace(idle_balance=False)
    r = sl.simulate("core2-2s", k, w, duration_s=0.2)
    assert r.metrics["newidle_balance_calls"] == 0
    assert r.metrics["load_balance_calls_newidle"] == 0
    # periodic balancing remains: here as NOHZ idle balancing on behalf of
    # the tickless CPUs (which also moves last_balance, so busy CPUs find
    # their intervals not yet due)
    assert r.metrics["load_balance_calls_idle"] + r.metrics["load_balance_calls_busy"] > 0


def test_max_lb_cost_throttle_limits_newidle_by_measured_cost():
    w = spinners([0] * 24, run_us=200, sleep_us=300, dist="exp")
    base = sl.Kernel.preset("v3.13")
    cheap = sl.simulate("nhm-ep", base, w, duration_s=0.3, seed=2)
    dear = sl.simulate(
        "nhm-ep",
        base,
        w,
        duration_s=0.3,
        seed=2,
        costs=sl.CostModel.preset("nhm-ep").replace(lb_per_cpu_ns=20_000),
    )
    # dearer passes exceed avg_idle budgets sooner: fewer levels visited per call
    per_call = [
        x.metrics["load_balance_calls_newidle"] / max(1, x.metrics["newidle_balance_calls"])
        for x in (cheap, dear)
    ]
    assert per_call[1] < per_call[0]


@pytest.mark.parametrize("machine", PRESETS)
@pytest.mark.parametrize("kernel", ["v2.6.36", "v3.8"])
def test_lozi_invariant_idle_while_overloaded_stays_small(machine, kernel):
    m = sl.Machine.preset(machine)
    n = m.nr_cpus
    spin = sl.simulate(m, kernel, spinners([0] * (n + n // 2 + 1)), duration_s=1.0)
    mix = sl.simulate(
        m,
        kernel,
        spinners([0] * (2 * n), run_us=5000, sleep_us=5000, dist="exp"),
        duration_s=1.0,
        seed=1,
    )
    assert spin.metrics["lozi_fraction"] < 0.025
    assert mix.metrics["lozi_fraction"] < 0.10
    # balancing matters: without it (everything pinned where fork put it) the
    # same mix idles far more while others are overloaded
    pinned = sl.simulate(
        m,
        kernel,
        spinners(
            [0] * (2 * n),
            run_us=5000,
            sleep_us=5000,
            dist="exp",
            cpus=[i % n for i in range(2 * n)],
        ),
        duration_s=1.0,
        seed=1,
    )
    assert pinned.metrics["lozi_fraction"] > mix.metrics["lozi_fraction"]


def test_schedstat_counts_add_up():
    w = spinners([0] * 24, run_us=300, sleep_us=300, dist="exp")
    r = sl.simulate("nhm-ep", "v3.8", w, duration_s=0.3)
    ss = r.schedstat
    assert set(ss["level"].unique()) == {"SIBLING", "MC", "NUMA"}
    assert ss.height == 16 * 3
    for it in ("idle", "busy", "newidle"):
        counted = ss[f"lb_count_{it}"].sum()
        outcomes = (
            ss[f"lb_balanced_{it}"].sum()
            + ss[f"lb_failed_{it}"].sum()
            + (ss[f"lb_gained_{it}"] > 0).sum()
        )
        assert counted >= outcomes - ss[f"lb_gained_{it}"].sum()
        assert counted == r.metrics[f"load_balance_calls_{it}"]
    pulled = ss.select(pl.sum_horizontal(pl.col("^lb_gained_.*$")).sum()).item()
    assert pulled + ss["alb_pushed"].sum() == r.metrics["tasks_pulled"]
    # timer wake-ups placed away from the waking CPU count as remote
    assert ss["ttwu_wake_remote"].sum() > 0


@pytest.mark.parametrize("machine", PRESETS)
def test_fork_balancing_spreads_new_tasks(machine):
    m = sl.Machine.preset(machine)
    r = sl.simulate(m, "v3.8", spinners([0] * m.nr_cpus), duration_s=0.001)
    per_cpu = np.bincount(r.tasks["cpu"].to_numpy(), minlength=m.nr_cpus)
    if m.nr_cpus <= 16:
        assert (per_cpu == 1).all(), per_cpu
    else:
        # find_idlest_group()'s 12 % margin lets a nearly full local group
        # keep the last forks (e.g. 10 vs 9 tasks on a 10-CPU node)
        assert per_cpu.max() <= 2 and (per_cpu == 0).sum() <= -(-m.nr_cpus // 32), per_cpu
    assert r.metrics["cpu_migrations"] == 0


@pytest.mark.parametrize("kernel", ["v2.6.36", "v3.8"])
def test_nohz_idle_balancer_runs_for_idle_cpus(kernel):
    r = sl.simulate(
        "nhm-ep", kernel, spinners([0] * 24, run_us=2000, sleep_us=3000, dist="exp"), duration_s=0.5
    )
    assert r.metrics["nohz_kicks"] > 0 and r.metrics["load_balance_calls_idle"] > 0
    if kernel == "v2.6.36":
        assert r.metrics["function_call_ipis"] == r.metrics["nohz_kicks"]
    else:
        assert r.metrics["function_call_ipis"] == 0


def test_costs_are_charged_and_sweepable():
    w = spinners([0] * 24, run_us=200, sleep_us=300, dist="exp")
    base = sl.CostModel.preset("nhm-ep")
    a = sl.simulate("nhm-ep", "v3.8", w, duration_s=0.3, costs=base)
    b = sl.simulate("nhm-ep", "v3.8", w, duration_s=0.3, costs=base.replace(lb_base_ns=50_000))
    assert b.metrics["newidle_balance_time_s"] > 10 * a.metrics["newidle_balance_time_s"]
    assert b.metrics["sys_s"] > a.metrics["sys_s"]
    assert sl.CostModel.preset("core2-2s").refill_socket_ns == base.refill_node_ns


def test_active_balance_wakes_the_idle_cpu_it_pushes_to():
    # Two CPUs: an unpinned spinner shares CPU 0 with a pinned one; CPU 1's
    # pinned task runs 50 ms and then sleeps. The idle CPU 1 cannot pull
    # the unpinned spinner while it runs, so after repeated failures the
    # stopper on CPU 0 pushes it (active balance). resched_task() must IPI
    # the idle CPU 1: before the fix the pushed task sat on it, never run
    # (0.03 s of CPU in 0.5 s, CPU 1 idle for 0.44 s).
    m = sl.Machine(1, 2, 1)
    w = spinners(
        [0, 0, 0],
        run_us=[None, None, 50_000],
        sleep_us=[None, None, 10_000_000],
        cpus=[None, [0], [1]],
    )
    r = sl.simulate(m, "v2.6.36", w, duration_s=0.5, seed=1)
    assert r.status == "ok", r.status_detail
    assert r.schedstat["alb_pushed"].sum() >= 1
    assert r.tasks["cpu_s"][0] > 0.4
    assert r.metrics["idle_s"] < 0.05


GROUP_TYPE = sl.Kernel.preset("v3.13").replace(pelt="v5.7", balancer="group_type")


@pytest.mark.parametrize("machine", PRESETS)
@pytest.mark.parametrize("extra", [1, 2, "half"])
def test_group_type_balancer_ends_n_plus_k_spinners_balanced(machine, extra):
    # The 5.5+ balancer (docs/balancer.md): n + k spinners end within one task
    # of each other and keep every CPU busy, as under cpu_load above.
    if machine == "epyc-genoa-2s" and extra == "half":
        pytest.skip(
            "576 spinners on 384 CPUs: 10 s of simulated time (18 s of wall time) "
            "is beyond the CI budget, and at 3 s and 10 s a few CPUs still hold 3 "
            "tasks while the group_type balancer moves tasks between LLCs whose "
            "avg_load differs by less than imbalance_pct (docs/balancer.md)"
        )
    m = sl.Machine.preset(machine)
    n = m.nr_cpus
    k = n // 2 if extra == "half" else extra
    dur = 2.0
    r = sl.simulate(m, GROUP_TYPE, spinners([0] * (n + k)), duration_s=dur, interval_s=dur / 8)
    per_cpu = np.bincount(r.tasks["cpu"].to_numpy(), minlength=n)
    assert per_cpu.max() - per_cpu.min() <= 1, per_cpu
    assert r.cpu_timeline[:, 4:].min() > 0.99


def test_group_type_balancer_needs_pelt():
    with pytest.raises(sl.ConfigError, match=r'balancer="group_type".*pelt="v5.7"'):
        sl.Kernel.preset("v3.13").replace(balancer="group_type")
    assert sl.Kernel.preset("v3.13").balancer == "cpu_load"
