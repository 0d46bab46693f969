"""Seed case 4 (docs/cases/rt-push-ipi.md): the 0-day setting --
the v4.11 preset, hackbench as LKP runs it, RT kernel threads -- base
(rt_push="push_ipi") against the 2017 rework ("push_ipi_rd"). tests/model/test_rt.py
pins the mechanism on v3.8 with plain hackbench; this file pins the case's
own configuration and that sl.bisect names rt_push."""

import pytest
import schedlab as sl

MACHINE = "core2-2s"  # 8 CPUs: "50%" is 4 groups of 20 fds, 160 threads
RT = sl.workloads.rt_kthreads(
    irq_threads=24, irq_cpus=2, irq_period_us=1000, irq_run_us=100, watchdog_period_ms=1
)
W = sl.workloads.hackbench_lkp(MACHINE, loops=150).replace(rt_kthreads=RT)
BASE = sl.Kernel.preset("v4.11")
REWORK = BASE.replace(rt_push="push_ipi_rd")


def test_v411_is_the_reports_base():
    assert BASE.rt_push == "push_ipi"
    assert not BASE.rt_pull_skip_only_self and not BASE.rt_rto_skip_self


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_rework_sends_more_function_call_ipis_than_the_base(seed):
    base = sl.simulate(MACHINE, BASE, W, seed=seed)
    rework = sl.simulate(MACHINE, REWORK, W, seed=seed)
    assert base.status == rework.status == "ok"
    b, r = base.metrics, rework.metrics
    assert b["function_call_ipis"] > 0
    assert r["function_call_ipis"] > b["function_call_ipis"], (b, r)
    # the extra IPIs are the walk's self-IPIs, which the chain never sends
    assert b["rt_self_ipis"] == 0 < r["rt_self_ipis"]


def test_bisect_names_rt_push():
    f = sl.bisect(
        MACHINE, BASE, REWORK, W, "function_call_ipis", replicates=5, seed=0, progress=False
    )
    assert f["field"].to_list() == ["rt_push"]  # the only field the two kernels differ in
    row = f.row(0, named=True)
    assert (row["good"], row["bad"]) == ("push_ipi", "push_ipi_rd")
    assert row["metric_bad"] > row["metric_good"]
    assert row["culprit"], row
    assert row["culprit_set_pct"] >= 80
