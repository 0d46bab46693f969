"""sl.workloads.aim7: the re-aim-7 driver's arithmetic, its metrics and the
NUMA shared-state contention charge, at CI size (each run well under 0.1 s)."""

from __future__ import annotations

import math

import pytest
import schedlab as sl
from schedlab.workloads import AIM7_TESTS, aim7

WSM = "wsm-4s-40c"
# two CPUs on each of the four nodes vs eight CPUs of node 0 (wsm-4s-40c
# numbers node n's CPUs 10n .. 10n+9)
SPREAD = [0, 10, 20, 30, 1, 11, 21, 31]
ONE_NODE = list(range(8))


def run(w: sl.Workload, machine: str = WSM, seed: int = 1) -> sl.Result:
    r = sl.simulate(machine, "v3.8", w, seed=seed)
    assert r.status == "ok", r.status_detail
    return r


def test_quotas_give_101_jobs_per_child_at_jobs_100():
    m = run(aim7(1), machine="vm-2").metrics
    assert m["procs_per_user"] == 101
    assert m["jobs"] == 101
    # every test at least once; a single-test workfile runs `jobs` of it
    assert run(aim7(1, jobs=1), machine="vm-2").metrics["procs_per_user"] == 26
    assert run(aim7(2, jobs=7, workfile="sieve"), machine="vm-2").metrics["jobs"] == 14


def test_metrics_are_the_drivers_arithmetic():
    r = run(aim7(6, jobs=20))
    m = r.metrics
    n, ppu, real = 6, m["procs_per_user"], m["real_s"]
    assert m["children"] == n and m["jobs"] == n * ppu
    assert real == pytest.approx(round(real, 3), abs=1e-12)  # whole milliseconds
    assert m["jobs_per_min"] == pytest.approx(ppu * 60 * n / real, rel=1e-12)
    assert m["jobs_per_min_per_child"] == pytest.approx(ppu * 60 / real, rel=1e-12)
    assert m["throughput"] == m["jobs_per_min"]
    # cpu_s: the children's user + sys, as times() reports them for reaped children
    kids = r.tasks.filter(r.tasks["name"].str.starts_with("aim7/"))
    assert kids.height == n
    assert m["cpu_s"] == pytest.approx(kids["cpu_s"].sum(), rel=1e-9)
    assert m["cpu_s"] == pytest.approx(m["child_user_s"] + m["child_sys_s"], rel=1e-12)
    # the last child's reap ends the run: its elapsed time is real_s
    assert m["child_elapsed_max_s"] == pytest.approx(real, abs=1e-9)
    assert m["child_elapsed_min_s"] <= real
    # JTI = int((1 - std_dev / mean) * 100) and std_dev_pct = cov * 100
    assert m["jti"] == int(m["jti"]) and 0 <= m["jti"] <= 100
    assert m["jti"] == math.trunc(100 - m["std_dev_pct"])


def test_one_child_has_jti_100():
    m = run(aim7(1, jobs=10)).metrics
    assert m["jti"] == 100 and m["std_dev_s"] == 0.0 and m["std_dev_pct"] == 0.0


def test_cpu_grows_with_the_nodes_the_children_span():
    # page_test alone: every job works on shared state at the same time
    spread = run(aim7(8, jobs=5, workfile="page_test", cpus=SPREAD)).metrics
    one = run(aim7(8, jobs=5, workfile="page_test", cpus=ONE_NODE)).metrics
    assert one["contention_nodes_mean"] == 1.0
    assert spread["contention_nodes_mean"] > 2.0
    assert spread["contention_s"] > 2 * one["contention_s"] > 0
    assert spread["cpu_s"] > one["cpu_s"]
    # without the contention charge the two cpusets cost the same CPU time
    off = [
        run(aim7(8, jobs=5, workfile="page_test", cpus=c, contention=False)).metrics
        for c in (SPREAD, ONE_NODE)
    ]
    assert off[0]["contention_s"] == off[1]["contention_s"] == 0.0
    assert off[0]["cpu_s"] == pytest.approx(off[1]["cpu_s"], rel=0.01)
    assert spread["cpu_s"] - one["cpu_s"] > off[0]["cpu_s"] - off[1]["cpu_s"]
    # and the compute mix shows the same direction
    mix = [run(aim7(8, jobs=20, cpus=c)).metrics for c in (SPREAD, ONE_NODE)]
    assert mix[0]["contention_s"] > mix[1]["contention_s"]
    assert mix[0]["cpu_s"] > mix[1]["cpu_s"]


def test_deterministic_per_seed():
    w = aim7(5, jobs=10)
    a, b = run(w, seed=3), run(w, seed=3)
    assert a.metrics == b.metrics
    assert a.tasks.equals(b.tasks)
    # another seed draws other job orders: the children finish at other times
    c = run(w, seed=4)
    assert a.tasks["cpu_s"].to_list() != c.tasks["cpu_s"].to_list()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"tasks": 0}, r"invalid tasks=0: expected an integer from 1"),
        ({"tasks": 2, "jobs": 0}, r"invalid jobs=0: expected an integer from 1 to 100000"),
        ({"tasks": 2, "jobs": 100_001}, r"invalid jobs=100001"),
        ({"tasks": 2, "workfile": "fserver"}, r'workfile="fserver".*"compute".*"page_test"'),
        ({"tasks": 2, "cpus": []}, r"invalid cpus=\[\]"),
    ],
)
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(sl.ConfigError, match=match):
        aim7(**kwargs)


def test_bad_types_and_cpus_beyond_the_machine():
    with pytest.raises(sl.ConfigTypeError, match="tasks"):
        aim7("4")  # type: ignore[arg-type]
    with pytest.raises(sl.ConfigTypeError, match="contention"):
        aim7(2, contention="yes")  # type: ignore[arg-type]
    with pytest.raises(sl.ConfigError, match=r"cpus.*CPU numbers from 0 to 1"):
        sl.simulate("vm-2", "v3.8", aim7(2, jobs=1, cpus=[0, 5]))
    assert len(AIM7_TESTS) == 26


def test_a_parallel_sweep_gives_the_same_numbers_as_simulate():
    w = aim7(5, jobs=10)
    df = sl.sweep(WSM, "v3.8", w, grid={"workload.tasks": [3, 5]}, replicates=2, seed=1)
    for row in df.iter_rows(named=True):
        m = run(w.replace(tasks=row["workload.tasks"]), seed=row["seed"]).metrics
        for k in ("jobs_per_min", "real_s", "cpu_s", "jti", "std_dev_s", "contention_s"):
            assert row[k] == m[k], k
