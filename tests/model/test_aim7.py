"""sl.workloads.aim7: the re-aim-7 driver's arithmetic, its metrics and the
NUMA shared-state contention charge, at CI size (each run well under 0.1 s)."""

from __future__ import annotations

import math
from pathlib import Path

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
    # cpu_s: the children's user + sys, as times() reports them for reaped
    # children, their own reaped children (the disk tests' `sh -c sync`) included
    kids = r.tasks.filter(r.tasks["name"].str.starts_with("aim7/"))
    assert kids.height == n
    helpers = r.tasks.filter(r.tasks["name"] == "sync")
    assert helpers.height == m["sync_calls"] > 0
    assert m["cpu_s"] == pytest.approx(kids["cpu_s"].sum() + helpers["cpu_s"].sum(), rel=1e-9)
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


#: a hypothesis (vm-2 measured no shared-state excess: AIM7_SHARED_LINES is 0)
LINES = {"page_test": 20_000, "shared_memory": 5_000, "stream_pipe": 5_000}


def test_cpu_grows_with_the_nodes_the_children_span():
    # page_test alone: every job works on shared state at the same time
    spread = run(aim7(8, jobs=5, workfile="page_test", cpus=SPREAD, shared_lines=LINES)).metrics
    one = run(aim7(8, jobs=5, workfile="page_test", cpus=ONE_NODE, shared_lines=LINES)).metrics
    assert one["contention_nodes_mean"] == 1.0
    assert spread["contention_nodes_mean"] > 2.0
    assert spread["contention_s"] > 2 * one["contention_s"] > 0
    assert spread["cpu_s"] > one["cpu_s"]
    # without the contention charge the two cpusets cost the same CPU time
    off = [
        run(
            aim7(8, jobs=5, workfile="page_test", cpus=c, contention=False, shared_lines=LINES)
        ).metrics
        for c in (SPREAD, ONE_NODE)
    ]
    assert off[0]["contention_s"] == off[1]["contention_s"] == 0.0
    assert off[0]["cpu_s"] == pytest.approx(off[1]["cpu_s"], rel=0.01)
    assert spread["cpu_s"] - one["cpu_s"] > off[0]["cpu_s"] - off[1]["cpu_s"]
    # and the compute mix shows the same direction
    mix = [run(aim7(8, jobs=20, cpus=c, shared_lines=LINES)).metrics for c in (SPREAD, ONE_NODE)]
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


def test_the_disk_tests_fork_their_sync_helpers():
    # disk_rd calls system("sync") twice per job (disk1.c); -y removes them
    m = run(aim7(2, jobs=10, workfile="disk_rd"), machine="vm-2").metrics
    assert m["sync_calls"] == 2 * 2 * 10
    assert m["forks"] == 1 + 2 + 40  # driver, children, helpers
    y = run(aim7(2, jobs=10, workfile="disk_rd", syncs=False), machine="vm-2").metrics
    assert y["sync_calls"] == 0 and y["forks"] == 3
    assert y["cpu_s"] < m["cpu_s"] and y["real_s"] < m["real_s"]
    # the compute mix: 1 disk_cp (3 syncs), 4 disk_rd (2), 2 disk_wrt (2) per child
    assert run(aim7(3), machine="vm-2").metrics["sync_calls"] == 3 * (3 + 8 + 4)
    # a longer sync wait lengthens the run, not its CPU time
    slow = run(aim7(2, jobs=10, workfile="disk_rd", sync_io_us=20_000), machine="vm-2").metrics
    # 20 syncs per child, both children in parallel, each 20 ms instead of the
    # ~4 ms measured at this file size: about 0.32 s more
    assert slow["real_s"] > m["real_s"] + 0.28
    assert slow["cpu_s"] == pytest.approx(m["cpu_s"], rel=0.05)
    # no wait at all is allowed (0 µs), and shortens the run
    none = run(aim7(2, jobs=10, workfile="disk_rd", sync_io_us=0), machine="vm-2").metrics
    assert none["real_s"] < m["real_s"]


def test_file_size_follows_the_pool_and_speed_scales_cpu_time():
    # driver.c: each child's files are FILESIZE + POOLSIZE / children KB
    assert run(aim7(4, jobs=2), machine="vm-2").metrics["file_kb"] == 10 + 1024 // 4
    assert run(aim7(1, jobs=2, poolsize_kb=0), machine="vm-2").metrics["file_kb"] == 10
    big = run(aim7(1, jobs=10, workfile="disk_wrt"), machine="vm-2").metrics
    small = run(aim7(1, jobs=10, workfile="disk_wrt", poolsize_kb=0), machine="vm-2").metrics
    assert big["child_sys_s"] > 1.2 * small["child_sys_s"]
    # a CPU twice as fast halves a CPU-bound test's time
    one = run(aim7(1, jobs=20, workfile="add_double"), machine="vm-2").metrics
    two = run(aim7(1, jobs=20, workfile="add_double", speed=2.0), machine="vm-2").metrics
    assert two["child_user_s"] == pytest.approx(one["child_user_s"] / 2, rel=0.01)


#: the targets for the model against the real re-aim-7 (measured on the development VM)
TARGETS = (("jobs_per_min", 0.15), ("real_s", 0.15), ("cpu_s", 0.20))


def model_and_real(tasks: int) -> tuple[dict[str, float], dict[str, float]]:
    """The model's medians over seeds 1-3 and the stored frame's medians of
    the real mix at ``tasks`` children (notebooks/data/aim7-real-vm2.parquet)."""
    import polars as pl

    frame = Path(__file__).resolve().parents[2] / "notebooks/data/aim7-real-vm2.parquet"
    rr = pl.read_parquet(frame).filter((pl.col("test") == "compute") & (pl.col("tasks") == tasks))
    real = {
        "jobs_per_min": rr["JPM"].median(),
        "real_s": rr["parent_tm"].median(),
        "cpu_s": (rr["childU_tm"] + rr["childS_tm"]).median(),
    }
    got = [sl.simulate("vm-2", "v6.18", aim7(tasks), seed=s).metrics for s in (1, 2, 3)]
    model = {k: sorted(m[k] for m in got)[1] for k, _ in TARGETS}
    return model, real  # type: ignore[return-value]


@pytest.mark.parametrize("tasks", [1, 4])
def test_the_mix_predicts_the_real_re_aim_7_on_this_vm(tasks):
    """The per-test costs come from the per-test runs; the mix at 1, 2 and
    4 children is a prediction, checked against the same sitting's real
    mix (docs/guide/workloads.md, "The model against the real re-aim-7")."""
    model, real = model_and_real(tasks)
    for k, tol in TARGETS:
        assert model[k] == pytest.approx(real[k], rel=tol), (k, model[k], real[k])


@pytest.mark.xfail(
    strict=True,
    reason="at 2 children the real run waits ~60 ms more per child than one child does "
    "(concurrent sync() calls share the writeback; the model's sync wait is per call): "
    "model real_s -16 %, jobs/min +18 % against the frame. docs/guide/workloads.md",
)
def test_the_mix_at_two_children_within_the_targets():
    model, real = model_and_real(2)
    for k, tol in TARGETS:
        assert model[k] == pytest.approx(real[k], rel=tol), (k, model[k], real[k])


@pytest.mark.parametrize("test", ["disk_cp", "disk_rd", "disk_wrt", "page_test", "sieve"])
def test_one_child_runs_give_back_their_measured_times(test):
    """A consistency check of the job's mechanics (the syncs' fork, wait and
    reap included): one child running a test alone spends the wall and CPU
    time the frame measured for that run, within 5 %."""
    import polars as pl

    frame = Path(__file__).resolve().parents[2] / "notebooks/data/aim7-real-vm2.parquet"
    rr = pl.read_parquet(frame).filter(
        (pl.col("test") == test)
        & (pl.col("tasks") == 1)
        & pl.col("syncs")
        & (pl.col("poolsize_kb") == 1024)
    )
    got = [
        sl.simulate("vm-2", "v6.18", aim7(1, jobs=rr["jobs"][0], workfile=test), seed=s).metrics
        for s in (1, 2, 3)
    ]
    real_s = sorted(m["real_s"] for m in got)[1]
    cpu_s = sorted(m["cpu_s"] for m in got)[1]
    assert real_s == pytest.approx(rr["parent_tm"].median(), rel=0.05)
    assert cpu_s == pytest.approx((rr["childU_tm"] + rr["childS_tm"]).median(), rel=0.05)


def test_the_cost_table_is_the_measured_frames():
    """src/workload/aim7_costs.rs and the docs' table are what
    scripts/dev/aim7_costs.py derives from the stored frame."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts/dev/aim7_costs.py"
    spec = importlib.util.spec_from_file_location("aim7_costs", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"tasks": 2, "speed": 0}, r"invalid speed=0: expected a positive finite number"),
        ({"tasks": 2, "speed": 1000.0}, r"invalid speed=1000.*0.1 to 100"),
        ({"tasks": 2, "filesize_kb": 0, "poolsize_kb": 0}, r"invalid filesize_kb=0.*at least 1 KB"),
        ({"tasks": 2, "sync_io_us": float("nan")}, r"invalid sync_io_us=nan"),
        ({"tasks": 2, "sync_io_us": 1e12}, r"invalid sync_io_us=1000000000000.0"),
        ({"tasks": 2, "filesize_kb": -1}, r"invalid filesize_kb=-1"),
        ({"tasks": 2, "poolsize_kb": 2**21}, r"invalid poolsize_kb=2097152"),
        ({"tasks": 2, "sync_io_us": -5}, r"invalid sync_io_us"),
        ({"tasks": 2, "shared_lines": {"fserver": 1}}, r"shared_lines key 'fserver'"),
        ({"tasks": 2, "shared_lines": {"page_test": -1}}, r"shared_lines\['page_test'\]"),
        ({"tasks": 100, "jobs": 100_000}, r"tasks=100.*at most 1000000 tasks.*syncs=False"),
    ],
)
def test_bad_new_arguments_are_refused(kwargs, match):
    with pytest.raises(sl.ConfigError, match=match):
        aim7(**kwargs)


def test_bad_new_types_are_refused():
    with pytest.raises(sl.ConfigTypeError, match="shared_lines"):
        aim7(2, shared_lines=[1, 2])  # type: ignore[arg-type]
    with pytest.raises(sl.ConfigTypeError, match="syncs"):
        aim7(2, syncs=1)  # type: ignore[arg-type]


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
