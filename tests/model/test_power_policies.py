"""Alex Shi's power-aware balance policies (seed case 3) on the
Westmere-EX box of Mike Galbraith's AIM7 table (``wsm-4s-40c``: 4 sockets of
10 cores, one LLC and NUMA node per socket): powersaving packs a few CPU-bound
tasks onto fewer packages than performance, falls back to spreading once the
tasks outnumber what the packages hold, and ``sl.bisect`` names the behaviour
that carries the packing. The PELT the policies read is 3.8's
(``pelt="v3.8"``)."""

from __future__ import annotations

import pytest
import schedlab as sl
from schedlab.workloads import hackbench, spinners

WSM = "wsm-4s-40c"
PERF = sl.Kernel.preset("v3.8")
BEHAVIOURS = {
    "power_fork_exec": True,
    "power_wake": True,
    "power_pack_transitory": True,
    "power_lb": True,
}
POWERSAVING = PERF.replace(balance_policy="powersaving", **BEHAVIOURS)
BALANCE = PERF.replace(balance_policy="balance", **BEHAVIOURS)


def packages_used(r: sl.Result) -> int:
    """Sockets whose CPUs ran user time in the run's second half: where the
    spinners settled (the run's start is the tasks' creation)."""
    cpus = r.cpus
    busy = cpus.filter(cpus["user_s"] > 0)
    return busy["socket"].n_unique()


def sockets_of_tasks(r: sl.Result) -> set[int]:
    socket = dict(zip(r.cpus["cpu"].to_list(), r.cpus["socket"].to_list(), strict=True))
    return {socket[c] for c in r.tasks["cpu"].to_list()}


@pytest.mark.parametrize("n", [2, 4])
def test_powersaving_packs_spinners_onto_fewer_packages(n):
    w = spinners([0] * n)
    perf = sl.simulate(WSM, PERF, w, seed=1, duration_s=0.3)
    ps = sl.simulate(WSM, POWERSAVING, w, seed=1, duration_s=0.3)
    assert len(sockets_of_tasks(perf)) == n  # find_idlest_group() spreads
    assert sockets_of_tasks(ps) == {0}  # one package holds them
    assert packages_used(ps) == 1 < packages_used(perf)
    # Still one task per CPU: packing stops at a group's weight.
    assert ps.tasks["cpu"].n_unique() == n


def test_powersaving_falls_back_to_spreading_when_a_package_is_full():
    # 14 spinners: more than a package's 10 CPUs.
    w = spinners([0] * 14)
    ps = sl.simulate(WSM, POWERSAVING, w, seed=1, duration_s=0.5)
    assert len(sockets_of_tasks(ps)) >= 2
    assert ps.tasks["cpu"].n_unique() == 14  # no CPU runs two


def test_over_the_domain_weight_it_runs_as_performance():
    # 44 spinners on 40 CPUs: the domain is full, every CPU is used.
    w = spinners([0] * 44)
    ps = sl.simulate(WSM, POWERSAVING, w, seed=1, duration_s=0.3)
    assert ps.tasks["cpu"].n_unique() == 40
    assert packages_used(ps) == 4


def test_balance_packs_to_capacity_powersaving_to_weight_on_smt():
    # nhm-ep: 2 sockets x 4 cores x 2 threads. balance fills one thread of a
    # core (capacity 1 per core), powersaving both threads.
    m = sl.Machine.preset("nhm-ep")
    w = spinners([0] * 4)
    cores = {}
    for name, k in (("balance", BALANCE), ("powersaving", POWERSAVING)):
        r = sl.simulate(m, k, w, seed=1, duration_s=0.3)
        cpu_core = {
            c: (s, co)
            for c, s, co in zip(r.cpus["cpu"], r.cpus["socket"], r.cpus["core"], strict=True)
        }
        cores[name] = {cpu_core[c] for c in r.tasks["cpu"].to_list()}
    assert len(cores["balance"]) == 4
    assert len(cores["powersaving"]) == 2


def test_power_balance_gathers_spinners_spread_at_fork():
    # Fork placement left to performance: three packages. At 1.28 s the busy
    # CPUs' NUMA-level balance comes due and the power balance pulls the
    # other packages' tasks into the lowest one (by active balance).
    k = POWERSAVING.replace(power_fork_exec=False)
    w = spinners([0] * 3)
    early = sl.simulate(WSM, k, w, seed=1, duration_s=1.0)
    late = sl.simulate(WSM, k, w, seed=1, duration_s=1.5)
    assert len(sockets_of_tasks(early)) == 3
    assert len(sockets_of_tasks(late)) == 1
    assert late.tasks["cpu"].n_unique() == 3
    assert late.metrics["active_balances"] >= 2
    off = sl.simulate(WSM, k.replace(power_lb=False), w, seed=1, duration_s=1.5)
    assert len(sockets_of_tasks(off)) == 3


def test_performance_policy_reads_no_power_field():
    # Under performance every power_* field is unread: bit-identical metrics.
    w = spinners([0] * 3, run_us=300, sleep_us=700)
    base = sl.simulate(WSM, PERF, w, seed=3, duration_s=0.1).metrics
    flipped = sl.simulate(WSM, PERF.replace(**BEHAVIOURS), w, seed=3, duration_s=0.1).metrics
    assert base == flipped


def test_power_policy_tracks_3_8_pelt():
    w = spinners([0] * 2)
    r = sl.simulate(WSM, PERF.replace(pelt="v3.8"), w, seed=1, duration_s=0.5)
    runnable = r.cpus["runnable_avg"].to_list()
    # Two always-running tasks: two runqueues near 1024, the rest at 0.
    assert sorted(runnable)[-2:] >= [1000.0, 1000.0]
    assert sorted(runnable)[:-2] == [0.0] * 38
    assert r.cpus["util_avg"].is_nan().all()  # 3.8 has no util_avg
    loads = sorted(r.tasks["load_avg"].to_list())
    assert loads[-2:] >= [1000.0, 1000.0]


def test_power_policy_errors_name_the_field():
    with pytest.raises(sl.ConfigError, match="balance_policy"):
        PERF.replace(balance_policy="green")
    with pytest.raises(sl.ConfigError, match="power_burst_threshold_ns"):
        PERF.replace(power_burst_threshold_ns=-1)
    with pytest.raises(sl.ConfigError, match="pelt"):
        PERF.replace(pelt="v3.9")


def test_bisect_names_fork_placement_as_the_packing_behaviour():
    # hackbench -g 1 -f 4 -l 20 forks its 8 tasks from one CPU: packed into
    # that package, its wake-ups stop paying cross-package cache refills.
    # good is the policy with no behaviour on (it runs as performance, bit
    # for bit), so each flip onto it acts alone.
    w = hackbench(groups=1, fds=4, loops=20, ipc="pipe")
    policy_only = PERF.replace(balance_policy="powersaving")
    assert (
        sl.simulate(WSM, policy_only, w, seed=5).metrics
        == sl.simulate(WSM, PERF, w, seed=5).metrics
    )
    df = sl.bisect(
        WSM, policy_only, POWERSAVING, w, "migration_refill_s", replicates=5, progress=False
    )
    top = df.row(0, named=True)
    assert top["field"] == "power_fork_exec"
    assert top["metric_bad"] < 0.5 * top["metric_good"]  # packing cuts the refills
    assert top["change_pct_lo"] > 50
    assert df.filter(df["culprit"])["field"].to_list() == ["power_fork_exec"]
    assert top["culprit_set_pct"] >= 80
