"""Seed case 2, the 2013 idle_balance() removal RFC: the direction of the
perf-bench result (slower without newidle balancing, more context
switches; at HZ=250) and of the hackbench result it seemed to contradict
(pipe hackbench in process mode runs faster without it when nothing is
cache-hot), from the model's mechanism. Fixed seeds; no exact numbers are asserted."""

from __future__ import annotations

import functools

import numpy as np
import polars as pl
import pytest
import schedlab as sl
from schedlab import cases


@pytest.fixture(scope="module")
def perf_bench_g300() -> pl.DataFrame:
    # perf bench sched messaging -g 300 (socket, process), 10 runs each way,
    # at HZ=250 (2013's Debian, Ubuntu and SUSE kernels): with the measured
    # fork, start-up and exit costs the model shows the seed's direction
    # only with a slower tick; at HZ=1000 the change is within the noise.
    # 10 runs, as the seed's perf stat -r 10: at 3 the context switches'
    # change (+3 %, p 0.26) is inside the runs' spread.
    k = sl.Kernel.preset("v3.8").replace(hz=250)
    return cases.idle_balance_runs("quad-4c", k, groups=300, replicates=10, progress=False)


def test_perf_bench_is_slower_without_newidle_balancing(perf_bench_g300):
    cmp = cases.idle_balance_comparison(perf_bench_g300)
    row = {r["metric"]: r for r in cmp.iter_rows(named=True)}
    # The seed: +13 % time, +32 % context switches. The model: +0.3 % time
    # and +11 % context switches, consistent across runs (before the start
    # barrier woke its pollers newest first, as the kernel does: +1.1 %
    # and +56 %).
    assert row["sim_time_s"]["change_pct"] > 0
    assert row["sim_time_s"]["p_value"] < 0.05
    assert row["elapsed_s"]["change_pct"] > 0
    assert row["context_switches"]["change_pct"] > 5
    assert row["context_switches"]["p_value"] < 0.05
    assert row["newidle_balance_pulled"]["with"] > 100
    assert row["newidle_balance_pulled"]["without"] == 0
    assert row["sim_time_s"]["seed_change_pct"] == pytest.approx(13.4, abs=0.1)


def test_perf_stat_pair_and_table_render(perf_bench_g300):
    text = cases.perf_stat_pair(perf_bench_g300, "perf bench sched messaging -g 300")
    assert text.count("Performance counter stats") == 2
    assert "(without idle_balance)" in text and "seconds time elapsed" in text
    table = cases.format_idle_balance(cases.idle_balance_comparison(perf_bench_g300))
    assert "context switches" in table and "511,000" in table and "+31.7%" in table


@functools.cache
def _effect(groups, migration_cost_ns, seed=0, reps=6):
    w = sl.workloads.hackbench(groups=groups, loops=1000, ipc="pipe", mode="process")
    k = sl.Kernel.preset("v3.8").replace(migration_cost_ns=migration_cost_ns)
    df = sl.sweep(
        "quad-4c", k, w, {"idle_balance": [True, False]}, replicates=reps, seed=seed, progress=False
    )
    eff = cases.removal_effect(df, ["migration_cost_ns"])
    assert eff.height == 1
    return eff.row(0, named=True)


def test_cache_hot_protection_holds_newidle_pulls_back():
    # At the default 0.5 ms migration cost pipe partners are cache-hot and
    # the avg_idle throttle skips most passes: newidle balancing pulls a
    # few dozen tasks a run instead of thousands, which is why removing it
    # changes pipe hackbench little there (0.78-1.01x over 20 runs).
    default = _effect(groups=3, migration_cost_ns=500_000)
    none = _effect(groups=3, migration_cost_ns=0)
    assert 0 < default["newidle_balance_pulled"] < 0.1 * none["newidle_balance_pulled"]
    assert default["newidle_balance_pulled_off"] == 0


def test_without_cache_hot_protection_removal_no_longer_helps():
    # migration_cost_ns = 0: no task is cache-hot, nothing throttles
    # newidle balancing, and it pulls thousands of tasks, splitting pipe
    # writers from their readers. The gain of 21-43 % the model showed here
    # came from writers sleeping on pipe->mutex: preempted after their next
    # mutex_lock(), or giving up the spin while the owner still ran. With
    # the return to user space as the preemption point and spinning on the
    # owner's CPU, the lockers spin, sleeps are a few hundred in 600,000
    # messages, and removal leaves the time within 10 %.
    e = _effect(groups=3, migration_cost_ns=0)
    assert e["newidle_balance_pulled"] > 1000
    assert e["cpu_migrations"] > e["cpu_migrations_off"]
    assert e["mutex_sleeps"] < 0.002 * 3 * 20 * 20 * 1000
    assert 0.9 < e["time_ratio"] < 1.1


def test_case_helpers_reject_bad_input():
    with pytest.raises(TypeError, match="frame"):
        cases.idle_balance_comparison({"idle_balance": [True]})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="missing columns"):
        cases.idle_balance_comparison(pl.DataFrame({"idle_balance": [True]}))
    with pytest.raises(ValueError, match="replicates"):
        cases.idle_balance_runs(groups=1, replicates=1, progress=False)
    with pytest.raises(TypeError, match="keys"):
        cases.removal_effect(pl.DataFrame({"a": [1]}), "machine")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cmp"):
        cases.format_idle_balance(pl.DataFrame({"a": [1]}))
    one_side = cases.idle_balance_runs(groups=1, loops=2, replicates=2, progress=False).filter(
        pl.col("idle_balance")
    )
    with pytest.raises(ValueError, match="True and False"):
        cases.idle_balance_comparison(one_side)
    with pytest.raises(ValueError, match="True and False"):
        cases.removal_effect(one_side, ["machine"])


def _start_share_of_two_fullest(child_start_ns: int) -> float:
    """Share of the runnable tasks on the two fullest CPUs 4 ms after
    the start barrier of hackbench -g 20 on quad-4c, forks of 180 us."""
    c = sl.CostModel.preset("quad-4c").replace(fork_ns=180_000, child_start_ns=child_start_ns)
    w = sl.workloads.hackbench(groups=20)
    r = sl.simulate("quad-4c", "v3.8", w, costs=c, seed=1, interval_s=0.002)
    t0 = r.metrics["sim_time_s"] - r.metrics["elapsed_s"]
    k = int(np.searchsorted(r.vmstat["time_s"].to_numpy(), t0 + 0.004))
    q = np.sort(r.runqueue_timeline[:, k])
    return float(q[-2:].sum() / q.sum())


def test_child_start_up_decides_the_start_barrier_pile_up():
    # Children that sleep before the parent's next fork all fork onto the
    # first idle CPU, and the barrier's wake-ups pile them on two CPUs; a
    # child still running at the next fork keeps its CPU busy, so that
    # fork goes elsewhere. The measured start-up (170 us +- 20 %) is close
    # to the measured fork interval (180 us), between the two.
    assert _start_share_of_two_fullest(0) > 0.8
    assert _start_share_of_two_fullest(250_000) < 0.7
