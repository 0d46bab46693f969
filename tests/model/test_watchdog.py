"""Never hang: costs whose overhead leaves the tasks no CPU time
end a run with status "stalled" (the engine's progress watchdog) or are
refused up front, in ``simulate`` and in a sweep alike. No timed assertions:
the point is that these calls return at all."""

import pytest
import schedlab as sl


def hackbench():
    return sl.workloads.hackbench(groups=1, loops=10)


def test_a_tick_that_costs_its_whole_period_is_refused():
    # tick_ns=1 ms at HZ=1000: before the watchdog this run never returned.
    with pytest.raises(sl.ConfigError, match=r"tick_ns=1000000.*1000000 ns \(hz=1000\)"):
        sl.simulate("vm-2", "v3.8", hackbench(), costs=sl.CostModel(tick_ns=1_000_000))


@pytest.mark.parametrize("kernel", ["v3.8", "v2.6.36"])
def test_overhead_that_leaves_no_cpu_time_stalls(kernel):
    # Accepted (each cost under its limit) but tick plus the rest of the
    # overhead fill every CPU: before the watchdog, a hang.
    for costs in (
        sl.CostModel(tick_ns=999_999),
        sl.CostModel(tick_ns=999_000, lb_base_ns=1_000_000),
    ):
        r = sl.simulate("vm-2", kernel, hackbench(), costs=costs)
        assert r.status == "stalled", (kernel, costs, r.status_detail)
        assert not r.ok
        assert r.status_detail.startswith("no task ran for 1.000 s of simulated time")
        assert "livelock on overhead" in r.status_detail
        assert f"tick_ns={costs.tick_ns} per 1000000 ns tick period" in r.status_detail
        assert 1.0 <= r.sim_time_s < 2.0
        assert r.to_frame()["status"].to_list() == ["stalled"]


@pytest.mark.parametrize("field", ["lb_base_ns", "lb_per_group_ns"])
def test_expensive_balancing_on_v2_6_36_returns(field):
    # The other reported hangs. On this model they finish; the
    # watchdog would end them if they did not.
    r = sl.simulate("vm-2", "v2.6.36", hackbench(), costs=sl.CostModel(**{field: 900_000}))
    assert r.status in ("ok", "stalled"), r.status_detail


def test_a_stalled_sweep_point_is_a_row():
    df = sl.sweep("vm-2", "v3.8", hackbench(), {"tick_ns": [1_000, 999_999, 1_000_000]})
    assert df["status"].to_list() == ["ok", "stalled", "error"]
    detail = df["status_detail"].to_list()
    assert detail[1].startswith("no task ran for 1.000 s")
    assert "tick_ns=1000000" in detail[2]


def test_a_sweep_with_a_livelocking_point_still_returns_every_row():
    df = sl.sweep("vm-2", "v2.6.36", hackbench(), {"lb_base_ns": [1_000, 900_000]})
    assert df.height == 2
    assert df["status"][0] == "ok"
    assert df["status"][1] in ("ok", "stalled", "error")


def test_an_ordinary_run_is_unaffected():
    df = sl.sweep("vm-2", "v3.8", hackbench(), {"tick_ns": [1_000]})
    assert df["status"].to_list() == ["ok"]
    r = sl.simulate("vm-2", "v3.8", hackbench(), seed=df["seed"][0])
    assert r.status == "ok"
    assert r.status_detail == ""
    assert df["elapsed_s"][0] == r.elapsed_s
