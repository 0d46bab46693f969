"""Seed case 3: the directions the model shows under the power-aware
balance policies (docs/cases/power-policies.md, notebooks/03-power-policies-aim7.ipynb),
and, as strict xfails, the seed's directions it does not show yet.

Shown: powersaving draws less package power than performance for 2 and 4 busy
loops on the v6 laptop (snb-laptop-4c) and the same for 8, with the policies
placing the loops (nothing pinned); under AIM7 compute on wsm-4s-40c (its
per-test costs measured on the development VM) the power policies
keep 1, 5 and 10 children on fewer packages and draw less package power. Not
shown: Mike Galbraith's jobs/min gain and lower cpu column.
"""

from __future__ import annotations

import pytest
import schedlab as sl

SEEDS = (1, 2, 3)
PERF = sl.Kernel.preset("v3.8")
BEHAVIOURS = {
    "power_fork_exec": True,
    "power_wake": True,
    "power_pack_transitory": True,
    "power_lb": True,
}
POLICIES = {
    "performance": PERF,
    "balance": PERF.replace(balance_policy="balance", **BEHAVIOURS),
    "powersaving": PERF.replace(balance_policy="powersaving", **BEHAVIOURS),
}
LAPTOP = "snb-laptop-4c"
WSM = "wsm-4s-40c"


def power_costs(machine: str) -> sl.CostModel:
    return sl.CostModel.preset(machine).replace(turbo=True, cstates=True)


def aim7(policy: str, tasks: int, seed: int) -> sl.Result:
    w = sl.workloads.aim7(tasks, jobs=100)
    return sl.simulate(WSM, POLICIES[policy], w, costs=power_costs(WSM), seed=seed)


def packages_spanned(r: sl.Result) -> int:
    """Sockets whose CPUs ran any user time (the children's compute)."""
    cpus = r.cpus
    return cpus.filter(cpus["user_s"] > 0)["socket"].n_unique()


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


@pytest.mark.parametrize("loops", [2, 4, 8])
def test_v6_watts_direction_under_the_policies(loops):
    # Alex Shi's v6 table: 44.8 vs ~59 W (2 loops), 61.3 vs 66.8 W (4), 72.9 vs 72.7 W (8).
    w = sl.workloads.spinners([0] * loops)
    c = power_costs(LAPTOP)
    for seed in SEEDS:
        ps = sl.simulate(LAPTOP, POLICIES["powersaving"], w, costs=c, seed=seed, duration_s=0.02)
        pf = sl.simulate(LAPTOP, POLICIES["performance"], w, costs=c, seed=seed, duration_s=0.02)
        p_ps, p_pf = ps.metrics["package_power"], pf.metrics["package_power"]
        if loops < 8:
            # packed on SMT siblings: fewer active cores, the rest power-gated
            assert ps.tasks["cpu"].n_unique() == loops
            assert p_ps < 0.9 * p_pf
        else:
            assert p_ps == pytest.approx(p_pf, rel=0.02)


@pytest.mark.parametrize("tasks", [1, 5, 10])
def test_power_policies_span_fewer_packages_under_aim7(tasks):
    for seed in SEEDS:
        perf = aim7("performance", tasks, seed)
        for policy in ("balance", "powersaving"):
            r = aim7(policy, tasks, seed)
            if tasks == 1:
                # performance's fork balancing puts the disk tests' `sh -c sync`
                # on an idle package; the power policies keep it beside the child
                assert packages_spanned(r) == 1 < packages_spanned(perf)
            else:
                assert packages_spanned(r) < packages_spanned(perf)
            assert r.metrics["package_power"] < perf.metrics["package_power"]


@pytest.mark.xfail(
    strict=True,
    reason="seed: balance/powersaving +10-25 % jobs/min at tasks <= cores; with AIM7's costs "
    "measured on the development VM the model has them 8-12 % behind (packing lowers the "
    "Westmere-EX turbo bin and stacks children on wake-up; no shared-state excess was "
    "measurable). docs/cases/power-policies.md",
)
@pytest.mark.parametrize("tasks", [5, 10, 20])
def test_seed_power_policies_ahead_in_jobs_per_min(tasks):
    perf = mean([aim7("performance", tasks, s).metrics["jobs_per_min"] for s in SEEDS])
    for policy in ("balance", "powersaving"):
        jpm = mean([aim7(policy, tasks, s).metrics["jobs_per_min"] for s in SEEDS])
        assert jpm > perf


@pytest.mark.xfail(
    strict=True,
    reason="seed: the cpu column ~4x lower under the power policies at 10 tasks (~11-12 s vs "
    "~40 s); the model's is 5-7 % higher (the same measured work at a lower turbo bin; "
    "nothing shared to save). docs/cases/power-policies.md",
)
@pytest.mark.parametrize("tasks", [5, 10])
def test_seed_cpu_column_lower_under_power_policies(tasks):
    perf = mean([aim7("performance", tasks, s).metrics["cpu_s"] for s in SEEDS])
    for policy in ("balance", "powersaving"):
        cpu = mean([aim7(policy, tasks, s).metrics["cpu_s"] for s in SEEDS])
        assert cpu < perf
