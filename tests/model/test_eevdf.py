"""EEVDF (``pick="eevdf"``, 6.6+) end to end: runs finish and are deterministic,
and the model shows the policy's known properties. The arithmetic itself
(V, lag, eligibility, deadlines, the pick) is unit-tested in
``src/sched/fair/eevdf.rs``."""

from __future__ import annotations

import polars as pl
import pytest
import schedlab as sl
from schedlab.workloads import hackbench, pipe_pingpong, spinners, volano

UP = sl.Machine(1, 1, 1, name="1-cpu")
CFS = sl.Kernel.preset("v3.13")
EEVDF = CFS.replace(pick="eevdf")


WORKLOADS = {
    "spinners": (lambda: spinners([0, 0, 5, -5, 0]), 0.3),
    "sleepers": (lambda: spinners([0] * 6, run_us=200, sleep_us=300, dist="exp"), 0.3),
    "yielders": (lambda: spinners([0] * 4, run_us=100, yields=True), 0.1),
    "hackbench-socket": (lambda: hackbench(groups=2, fds=5, loops=50), None),
    "hackbench-pipe": (lambda: hackbench(groups=2, fds=5, loops=50, ipc="pipe"), None),
    "pipe-pingpong": (lambda: pipe_pingpong(loops=2000), None),
    "volano": (lambda: volano(rooms=2, users=5, messages=20), None),
}


@pytest.mark.parametrize("name", list(WORKLOADS))
@pytest.mark.parametrize("machine", ["vm-2", "quad-4c"])
def test_eevdf_runs_finish_and_are_deterministic(name, machine):
    make, duration = WORKLOADS[name]
    a = sl.simulate(machine, EEVDF, make(), seed=3, duration_s=duration)
    b = sl.simulate(machine, EEVDF, make(), seed=3, duration_s=duration)
    assert a.metrics == b.metrics
    assert a.tasks.equals(b.tasks)
    assert a.metrics["task_clock_s"] > 0
    if duration is None:
        # A finite workload ran to its end: every task exited.
        assert a.metrics["elapsed_s"] < a.metrics["sim_time_s"] + 1e-9
        assert a.tasks["cpu_s"].min() > 0
    # CPU time is conserved: busy + idle = CPUs x elapsed.
    n = sl.Machine.preset(machine).nr_cpus
    busy = a.metrics["user_s"] + a.metrics["sys_s"] + a.metrics["idle_s"]
    assert busy == pytest.approx(n * a.metrics["sim_time_s"], rel=1e-6)


def test_eevdf_sweep_is_independent_of_the_thread_count():
    grid = {"base_slice_ns": [300_000, 3_000_000], "delay_dequeue": [True, False]}
    w = spinners([0] * 5, run_us=200, sleep_us=300, dist="exp")
    kw = dict(grid=grid, replicates=2, seed=5, progress=False)
    one = sl.sweep("vm-2", EEVDF, w, threads=1, duration_s=0.1, **kw)
    two = sl.sweep("vm-2", EEVDF, w, threads=2, duration_s=0.1, **kw)
    no_wall = [c for c in one.columns if "wall" not in c]
    assert one.select(no_wall).equals(two.select(no_wall))
    # The grid's points differ from each other (the fields are live).
    assert one["context_switches"].n_unique() > 1


def test_equal_weights_get_equal_service_within_a_slice():
    # Four nice-0 hogs on one CPU for 1 s: EEVDF bounds each task's lag by
    # about a request (0.7 ms) plus a tick, so their CPU times differ by
    # less than 2 ms out of 250 ms each.
    r = sl.simulate(UP, EEVDF, spinners([0] * 4), seed=1, duration_s=1.0)
    cpu = r.tasks["cpu_s"]
    assert cpu.sum() == pytest.approx(1.0, abs=0.01)
    assert cpu.max() - cpu.min() < 0.002, cpu.to_list()


def test_nice_weights_share_the_cpu_as_their_weights():
    # nice 0 : nice 5 = 1024 : 335, within 1 %.
    r = sl.simulate(UP, EEVDF, spinners([0, 5]), seed=1, duration_s=2.0)
    a, b = r.tasks["cpu_s"].to_list()
    assert a / b == pytest.approx(1024 / 335, rel=0.01)


def test_requests_end_at_the_tick_after_the_base_slice():
    # Two hogs on one CPU, HZ=1000: a 0.7 ms request is noticed as used up
    # at the next tick, so each runs ~1 ms per turn (CFS: latency/2 = 3 ms).
    # With base_slice_ns = 2.5 ms, a turn lasts 3 ticks.
    rate = {}
    for name, k in [
        ("eevdf", EEVDF),
        ("eevdf-2.5ms", EEVDF.replace(base_slice_ns=2_500_000)),
        ("cfs", CFS),
    ]:
        r = sl.simulate(UP, k, spinners([0, 0]), seed=1, duration_s=1.0)
        rate[name] = r.metrics["context_switches"]
    assert rate["eevdf"] == pytest.approx(1000, rel=0.02)
    assert rate["eevdf-2.5ms"] == pytest.approx(1000 / 3, rel=0.02)
    assert rate["cfs"] == pytest.approx(1000 / 3, rel=0.02)


def _sleeper_wait_per_wakeup(k: sl.Kernel) -> float:
    """Three hogs and one task running 100 µs every 2 ms on one CPU: the
    sleeper's mean wait per wake-up, in µs."""
    w = spinners([0] * 4, run_us=[None] * 3 + [100], sleep_us=[None] * 3 + [2000])
    t = sl.simulate(UP, k, w, seed=1, duration_s=1.0).tasks.row(3, named=True)
    assert t["voluntary_cs"] > 200
    return t["wait_s"] / t["voluntary_cs"] * 1e6


def test_a_waking_sleeper_waits_at_most_about_one_request():
    # CFS's sleeper credit lets the wakee preempt at once. EEVDF places it at
    # V minus its saved lag (0 or slightly positive after a short run) with a
    # deadline one request away: it waits for the running hog's request to
    # end, on average about half a request (0.7 ms), never a whole period of
    # the three hogs. Without PLACE_LAG it also loses the positive lag it
    # kept and queues behind the hogs' earlier deadlines.
    cfs = _sleeper_wait_per_wakeup(CFS)
    eevdf = _sleeper_wait_per_wakeup(EEVDF)
    no_lag = _sleeper_wait_per_wakeup(EEVDF.replace(place_lag=False))
    assert cfs < 20
    assert 100 < eevdf < 700
    assert no_lag > 2 * eevdf


def test_delayed_dequeue_keeps_negative_lag_sleepers_competing():
    # Short sleepers among hogs: with DELAY_DEQUEUE a task that sleeps while
    # owing CPU time stays queued (counted in nr_running) until it is picked
    # or woken, so the run queue (vmstat's r, sampled every 0.5 ms) is
    # longer on average.
    def mean_r(k: sl.Kernel) -> float:
        w = spinners([0] * 6, run_us=[None] * 2 + [300] * 4, sleep_us=[None] * 2 + [400] * 4)
        r = sl.simulate("vm-2", k, w, seed=2, duration_s=0.5, interval_s=0.0005)
        return float(r.vmstat["r"].mean())

    assert mean_r(EEVDF) > mean_r(EEVDF.replace(delay_dequeue=False))


def test_old_presets_keep_the_cfs_pick_and_ignore_the_eevdf_fields():
    # Under pick="cfs" the EEVDF fields are not read: a run is bit-identical
    # whatever their values.
    w = hackbench(groups=2, fds=4, loops=50)
    base = sl.simulate("vm-2", CFS, w, seed=1)
    other = CFS.replace(
        base_slice_ns=3_000_000,
        place_lag=False,
        run_to_parity=False,
        delay_dequeue=False,
        yield_forfeit=False,
    )
    assert sl.simulate("vm-2", other, w, seed=1).metrics == base.metrics
    # every preset before 6.6 picks by CFS; the 6.x presets by EEVDF
    for name in sl.Kernel.presets():
        expected = "eevdf" if name.startswith("v6.") else "cfs"
        assert sl.Kernel.preset(name).pick == expected, name
    assert [p for p in sl.Kernel.presets() if p.startswith("v6.")] == ["v6.6", "v6.18"]


def test_eevdf_info_names_the_commits():
    info = sl.Kernel.info().filter(pl.col("field") == "pick").row(0, named=True)
    assert info["commit"] == "147f3efaa241"
    assert info["release"] == "v6.6"


def test_eevdf_with_pelt_and_6x_wakeup_placement():
    # The EEVDF pick with the other 6.x fields on (PELT, wake_wide,
    # WA_IDLE/WA_WEIGHT, recent_used_cpu, the idle-CPU search, SIS_UTIL):
    # deterministic, and every hackbench task runs to its end.
    k = EEVDF.replace(
        pelt="v5.7",
        wake_wide=True,
        wake_affine="idle_weight",
        recent_used_cpu=True,
        select_idle_sibling="idle_cpu",
        sis_util=True,
    )
    w = hackbench(groups=2, fds=5, loops=50)
    a = sl.simulate("quad-4c", k, w, seed=4)
    b = sl.simulate("quad-4c", k, w, seed=4)
    assert a.metrics == b.metrics
    assert a.tasks["cpu_s"].min() > 0
    assert a.cpus["util_avg"].sum() > 0
