"""The power model (CostModel.turbo / .cstates, docs/power-model.md): off by default;
turbo frequency falls as more cores of a package are busy and a burst runs W·base/f;
a wake-up of an idle CPU pays its C-state's exit latency; package_power is lower
packed than spread at 2 and 4 busy loops and equal at 8 (case 3's v6 watts table)."""

from __future__ import annotations

import pytest
import schedlab as sl

M = "snb-laptop-4c"  # i7-2820QM class: 2.3 GHz base; 3.4 / 3.3 / 3.1 / 3.1 GHz at 1-4 cores
K = "v3.8"
POWER_KEYS = {"package_power", "avg_freq_ghz", "turbo_residency"}


def costs(**on: bool) -> sl.CostModel:
    return sl.CostModel.preset(M).replace(**on)


def spin(cpus: list[int], **kw) -> sl.Workload:
    return sl.workloads.spinners(nice=[0] * len(cpus), cpus=cpus, **kw)


@pytest.mark.parametrize("machine", sl.Machine.presets())
def test_off_by_default_and_no_power_metrics_when_off(machine):
    c = sl.CostModel.preset(machine)
    assert (c.turbo, c.cstates) == (False, False)
    if machine == M:
        r = sl.simulate(M, K, spin([0]), duration_s=0.01, seed=1)
        assert not POWER_KEYS & set(r.metrics)
        assert not [k for k in r.metrics if k.startswith("cstate_")]


@pytest.mark.parametrize(("cpus", "ghz"), [([0], 3.4), ([0, 2], 3.3), ([0, 2, 4, 6], 3.1)])
def test_turbo_frequency_falls_as_more_cores_get_busy(cpus, ghz):
    r = sl.simulate(M, K, spin(cpus), costs=costs(turbo=True), duration_s=0.05, seed=1)
    assert r.metrics["avg_freq_ghz"] == pytest.approx(ghz)
    assert r.metrics["turbo_residency"] == pytest.approx(1.0)
    # two threads of one core are one active core: the 1-core bin
    r2 = sl.simulate(M, K, spin([0, 1]), costs=costs(turbo=True), duration_s=0.05, seed=1)
    assert r2.metrics["avg_freq_ghz"] == pytest.approx(3.4)


def test_a_burst_of_w_ns_at_base_takes_w_base_over_f():
    # 1 ms of work then a 1 ms sleep, alone on the package: 3.4 GHz against 2.3
    w = spin([0], run_us=1000, sleep_us=1000)
    base = sl.simulate(M, K, w, costs=costs(), duration_s=0.2, seed=1).metrics
    fast = sl.simulate(M, K, w, costs=costs(turbo=True), duration_s=0.2, seed=1).metrics
    period_base = 0.2 / base["loops"]
    period_fast = 0.2 / fast["loops"]
    # the burst part shrinks by 2.3/3.4 (the sleep and the small overheads do not)
    assert period_fast == pytest.approx(period_base - 1e-3 * (1 - 2.3 / 3.4), rel=0.02)
    assert period_fast < period_base


def test_a_wakeup_of_an_idle_cpu_pays_the_exit_latency():
    # 100 µs of work, 1 ms asleep: the menu-like governor predicts ~1 ms of idle,
    # so C7 (target residency 345 µs, exit latency 109 µs on Sandy Bridge)
    w = spin([0], run_us=100, sleep_us=1000)
    off = sl.simulate(M, K, w, costs=costs(turbo=True), duration_s=0.2, seed=1).metrics
    on = sl.simulate(M, K, w, costs=costs(turbo=True, cstates=True), duration_s=0.2, seed=1)
    m = on.metrics
    assert m["cstate_exits"] > 0
    # (nearly) every exit is from C7: 109 µs each
    assert m["cstate_exit_latency_s"] == pytest.approx(m["cstate_exits"] * 109e-6, rel=0.01)
    assert m["cstate_c7"] > 0.5  # most of CPU 0's time and all of the others'
    period_off = 0.2 / off["loops"]
    period_on = 0.2 / m["loops"]
    assert period_on - period_off == pytest.approx(109e-6, rel=0.05)


@pytest.mark.parametrize(
    ("packed", "spread"),
    [([0, 1], [0, 2]), ([0, 1, 2, 3], [0, 2, 4, 6]), (list(range(8)), list(range(8)))],
)
def test_package_power_lower_packed_than_spread_at_2_and_4_equal_at_8(packed, spread):
    c = costs(turbo=True, cstates=True)
    for seed in (1, 2, 3):
        p = sl.simulate(M, K, spin(packed), costs=c, duration_s=0.02, seed=seed).metrics
        s = sl.simulate(M, K, spin(spread), costs=c, duration_s=0.02, seed=seed).metrics
        if len(packed) < 8:
            assert p["package_power"] < s["package_power"]
        else:
            assert p["package_power"] == s["package_power"]


def test_deterministic_with_the_model_on():
    w = sl.workloads.hackbench(groups=1, loops=20)
    c = costs(turbo=True, cstates=True)
    a = sl.simulate(M, K, w, costs=c, seed=4).metrics
    b = sl.simulate(M, K, w, costs=c, seed=4).metrics
    assert a == b
    assert a["cstate_exits"] > 0


def test_bad_values_are_refused():
    with pytest.raises(sl.ConfigTypeError, match="turbo"):
        sl.CostModel(turbo=1)
    with pytest.raises(sl.ConfigTypeError, match="cstates"):
        sl.CostModel(cstates="yes")
    with pytest.raises(sl.ConfigError, match=r"turbo=True.*vm-2.*snb-laptop-4c"):
        sl.simulate("vm-2", K, spin([0]), costs=sl.CostModel(turbo=True), duration_s=0.01)
    with pytest.raises(sl.ConfigError, match=r"cstates=True.*custom"):
        sl.simulate(
            sl.Machine(sockets=1, cores_per_socket=2),
            K,
            spin([0]),
            costs=sl.CostModel(cstates=True),
            duration_s=0.01,
        )
