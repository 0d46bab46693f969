"""simulate(): invariants, kernel arithmetic, determinism, frames, tracing,
GIL release and Ctrl-C."""

import os
import signal
import threading

import numpy as np
import polars as pl
import pytest
import schedlab as sl
from schedlab.workloads import spinners


def shares(r: sl.Result) -> list[float]:
    return r.tasks["cpu_s"].to_list()


@pytest.mark.parametrize("machine", sl.Machine.presets())
@pytest.mark.parametrize("kernel", ["v2.6.36", "v3.8"])
def test_cpu_time_is_conserved(machine, kernel):
    m = sl.Machine.preset(machine)
    n = m.nr_cpus * 2 + 3
    w = spinners(
        nice=[(i % 7) - 3 for i in range(n)],
        run_us=[200 + 37 * i for i in range(n)],
        sleep_us=300,
        yields=[i % 5 == 0 for i in range(n)],
        dist="exp",
    )
    r = sl.simulate(m, kernel, w, duration_s=0.05, seed=7, interval_s=0.01)
    assert r.status == "ok"
    cpus = r.cpus
    total = cpus["user_s"] + cpus["sys_s"] + cpus["idle_s"]
    np.testing.assert_allclose(total.to_numpy(), r.sim_time_s, rtol=0, atol=1e-9)
    assert r.metrics["user_s"] + r.metrics["sys_s"] + r.metrics["idle_s"] == pytest.approx(
        m.nr_cpus * r.sim_time_s, abs=1e-6
    )
    # vmstat covers the run and its percentages add up
    vm = r.vmstat
    assert vm["interval_s"].sum() == pytest.approx(r.sim_time_s)
    np.testing.assert_allclose((vm["us"] + vm["sy"] + vm["id"]).to_numpy(), 100.0)
    assert r.cpu_timeline.shape == (m.nr_cpus, vm.height)
    assert ((r.cpu_timeline >= 0) & (r.cpu_timeline <= 1 + 1e-12)).all()
    # per-CPU run-queue lengths add up to vmstat's r at every sample
    rq = r.runqueue_timeline
    assert rq.shape == (m.nr_cpus, vm.height) and rq.dtype == np.int64
    np.testing.assert_array_equal(rq.sum(axis=0), vm["r"].to_numpy())


def test_runqueue_timeline_shows_pinned_tasks():
    # Three spinners pinned to CPU 0 and one to CPU 1 of vm-2.
    w = spinners(nice=[0, 0, 0, 0], cpus=[0, 0, 0, 1])
    r = sl.simulate("vm-2", "v3.8", w, duration_s=0.05, interval_s=0.01)
    assert r.runqueue_timeline.tolist() == [[3] * 5, [1] * 5]


@pytest.mark.parametrize("other,weight", [(5, 335), (-15, 29154)])
def test_nice_shares_follow_weights(up, other, weight):
    r = sl.simulate(up, "v2.6.36", spinners(nice=[0, other]), duration_s=60)
    got = shares(r)[1] / shares(r)[0]
    assert got == pytest.approx(weight / 1024, rel=0.01)


@pytest.mark.parametrize("compat,lo,hi", [(False, 0.45, 0.55), (True, 0.0, 0.02)])
def test_compat_yield(up, compat, lo, hi):
    k = sl.Kernel.preset("v2.6.36").replace(compat_yield=compat)
    r = sl.simulate(up, k, spinners(nice=[0, 0], yields=[True, False]), duration_s=2)
    s = shares(r)
    assert lo <= s[0] / sum(s) <= hi


def test_same_seed_same_numbers_and_seed_matters():
    w = spinners(nice=[0] * 12, run_us=150, sleep_us=100, dist="exp")
    a = sl.simulate("core2-2s", "v3.8", w, duration_s=0.2, seed=5)
    b = sl.simulate("core2-2s", "v3.8", w, duration_s=0.2, seed=5)
    c = sl.simulate("core2-2s", "v3.8", w, duration_s=0.2, seed=6)
    assert a.metrics == b.metrics
    assert a.tasks.equals(b.tasks) and a.vmstat.equals(b.vmstat)
    assert a.metrics != c.metrics


def test_seed_none_is_drawn_and_recorded():
    r = sl.simulate("vm-2", "v3.8", spinners([0]), duration_s=0.01, seed=None)
    assert isinstance(r.seed, int) and r.to_frame()["seed"][0] == r.seed


def test_frames_have_the_documented_columns():
    r = sl.simulate("nhm-ep", "v3.8", spinners([0] * 20, run_us=500, sleep_us=500), duration_s=0.1)
    row = r.to_frame()
    assert row.height == 1
    for col in (
        "machine",
        "kernel",
        "migration_cost_ns",
        "context_switch_ns",
        "workload",
        "seed",
        "status",
        "elapsed_s",
        "context_switches",
        "cpu_migrations",
        "task_clock_s",
        "cpus_utilized",
        "voluntary_cs",
        "involuntary_cs",
        "interrupts",
        "user_s",
        "sys_s",
        "idle_s",
    ):
        assert col in row.columns, col
    assert r.tasks.columns[:4] == ["task", "name", "nice", "cpu"]
    for col in ("cpu_s", "wait_s", "voluntary_cs", "involuntary_cs", "migrations"):
        assert col in r.tasks.columns
    for col in ("cpu", "user_s", "sys_s", "idle_s", "socket", "node"):
        assert col in r.cpus.columns
    assert r.vmstat.columns == ["time_s", "interval_s", "r", "in", "cs", "us", "sy", "id"]
    # the sums agree with the scalar metrics
    assert r.tasks["voluntary_cs"].sum() == r.metrics["voluntary_cs"]
    assert r.cpus["context_switches"].sum() == r.metrics["rq_switches"]
    assert r.metrics["context_switches"] == r.metrics["voluntary_cs"] + r.metrics["involuntary_cs"]
    assert r.tasks["cpu_s"].sum() == pytest.approx(r.metrics["task_clock_s"])
    assert "<table>" in r._repr_html_() and "schedlab.Result ok" in repr(r)


def test_run_sleep_tasks_block_voluntarily():
    r = sl.simulate("vm-2", "v3.8", spinners([0, 0], run_us=100, sleep_us=900), duration_s=0.5)
    t = r.tasks
    # each loop sleeps once: ~500 loops per task over 0.5 s
    assert (t["voluntary_cs"] > 400).all() and (t["voluntary_cs"] <= 500).all()
    assert r.metrics["cpus_utilized"] == pytest.approx(0.2, rel=0.05)
    assert r.metrics["timer_interrupts"] == pytest.approx(t["voluntary_cs"].sum(), abs=2)


def test_trace_has_ftrace_fields_and_reports_truncation():
    r = sl.simulate(
        "vm-2", "v3.8", spinners([0, 0, 0], run_us=300, sleep_us=200), duration_s=0.05, trace=True
    )
    tr = r.trace
    assert tr is not None and not r.trace_truncated
    assert tr.columns == [
        "time_ns",
        "cpu",
        "event",
        "pid",
        "prev_state",
        "next_pid",
        "target_cpu",
        "waker_pid",
        "orig_cpu",
        "dest_cpu",
    ]
    sw = tr.filter(pl.col("event") == "sched_switch")
    assert sw.height == r.metrics["rq_switches"]
    assert set(sw["prev_state"].unique().to_list()) <= {"R", "S", "X"}
    wk = tr.filter(pl.col("event") == "sched_wakeup")
    assert wk.height == r.metrics["wakeups"] and wk["target_cpu"].null_count() == 0
    assert tr["time_ns"].is_sorted()
    small = sl.simulate(
        "vm-2",
        "v3.8",
        spinners([0, 0, 0], run_us=300, sleep_us=200),
        duration_s=0.05,
        trace=True,
        trace_limit=10,
    )
    assert small.trace is not None and small.trace.height == 10 and small.trace_truncated
    assert small.metrics["trace_dropped"] > 0
    assert sl.simulate("vm-2", "v3.8", spinners([0]), duration_s=0.01).trace is None


def test_pinned_tasks_stay_on_their_cpus():
    w = spinners([0] * 4, cpus=[0, 0, [1], None])
    r = sl.simulate("core2-2s", "v3.8", w, duration_s=0.1)
    busy = (r.cpus["user_s"] + r.cpus["sys_s"]).to_list()
    assert busy[0] == pytest.approx(0.1, rel=1e-3) and busy[1] == pytest.approx(0.1, rel=1e-3)
    assert r.tasks["migrations"].sum() == 0


def test_simulate_releases_the_gil():
    w = spinners([0] * 224, run_us=500, sleep_us=500, dist="exp")
    done = threading.Event()
    out = {}

    def work():
        out["r"] = sl.simulate("skl-sp-2s", "v3.8", w, duration_s=1.0)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    spins = 0
    while not done.is_set():
        spins += 1
    t.join()
    assert out["r"].ok
    assert spins > 10_000, "the main thread could not run while the model ran"


def test_ctrl_c_stops_a_run():
    w = spinners([0] * 224, run_us=500, sleep_us=500, dist="exp")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sl.simulate("skl-sp-2s", "v3.8", w, duration_s=500.0)
    finally:
        timer.cancel()


@pytest.mark.parametrize("shape", [(1, 4096, 1), (16, 128, 2)])
def test_a_4096_cpu_machine_runs(shape):
    # Setup is near-linear in CPUs (it was about cubic: 95 s
    # and 1.15 GB for Machine(1, 4096)); speed is measured by
    # `cargo bench --bench scale`, not here. The domains are the kernel's:
    # one MC level of 4096 single-CPU groups, or SIBLING, MC, NUMA.
    r = sl.simulate(sl.Machine(*shape), "v3.8", spinners([0] * 4), duration_s=1e-3)
    assert r.ok
    assert r.cpus.height == 4096
    levels = ["MC"] if shape[2] == 1 else ["SIBLING", "MC", "NUMA"]
    assert r.schedstat.filter(pl.col("cpu") == 4095)["level"].to_list() == levels
    assert r.schedstat.height == 4096 * len(levels)
