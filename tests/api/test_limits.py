"""Memory limits refused up front, the vmstat
cap, lazy sweep planning in bounded memory, the CLI's estimates, and
machine shapes that do not nest."""

import itertools
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import polars as pl
import pytest
import schedlab as sl
from schedlab import _core
from schedlab.cli import main
from schedlab.run import execute as E
from schedlab.run import grid as G
from schedlab.run import plan as P

W = sl.workloads.hackbench(groups=1, fds=2, loops=3)
PLAN_KW = {
    "replicates": 1,
    "seed": 0,
    "threads": None,
    "progress": False,
    "executor": None,
    "costs": None,
    "duration_s": None,
    "interval_s": 0.1,
}


# --- 5. memory limits: refused up front, naming the parameter ----------------


def test_ten_million_spinners_are_refused_without_allocating():
    nice = range(10_000_000)  # a sequence that allocates nothing itself
    tracemalloc.start()
    try:
        with pytest.raises(
            sl.ConfigError, match=r"10,000,000 tasks exceeds the limit of 1,000,000"
        ):
            sl.workloads.spinners(nice=nice)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100_000  # bytes: the values were not even looked at
    assert _core.MAX_TASKS == 1_000_000


def test_the_task_limit_is_the_cores_too():
    # hackbench's 2·groups·fds workers, checked by the core where it is built
    with pytest.raises(sl.ConfigError, match=r"groups\*fds=.*the limit is 1000000 tasks"):
        sl.workloads.hackbench(groups=100_000, fds=1000)
    assert _core.workload_tasks("hackbench", sl.workloads.hackbench(groups=3, fds=4).params) == 24
    assert _core.workload_tasks("volano", sl.workloads.volano(rooms=2, users=5).params) == 40


def test_a_huge_trace_limit_is_refused_before_running():
    w = sl.workloads.spinners(nice=[0])
    with pytest.raises(sl.ConfigError, match=r"trace_limit=1099511627776.*20000000"):
        sl.simulate("vm-2", "v3.8", w, duration_s=0.01, trace=True, trace_limit=2**40)
    r = sl.simulate(
        "vm-2", "v3.8", w, duration_s=0.01, trace=True, trace_limit=_core.MAX_TRACE_ROWS
    )
    assert r.trace is not None and r.trace.height == r.metrics["trace_rows"] > 0
    assert r.trace["event"].dtype == pl.Enum(_core.TRACE_EVENTS)


def test_the_vmstat_cap_is_400_mb_on_one_cpu():
    # One CPU: 64 + 16 bytes a row, so 5 M rows (the old cap of 5e7 values
    # let 50 M rows through, about 3.8 GB), then one last row to the end.
    assert _core.MAX_VMSTAT_BYTES == 400_000_000
    rows = _core.MAX_VMSTAT_BYTES // (64 + 16)
    m = sl.Machine(1, 1)
    w = sl.workloads.spinners(nice=[0])
    r = sl.simulate(m, "v3.8", w, duration_s=(rows + 10) * 1e-5, interval_s=1e-5)
    assert r.metrics["vmstat_truncated"] == 1
    assert r.vmstat.height == rows + 1
    assert r.cpu_timeline.shape == (1, rows + 1)


def test_the_footprint_grows_with_tasks_cpus_vmstat_and_trace():
    f = _core.footprint(
        1000, 8, sampled=True, duration_ns=10**9, interval_ns=10**8, trace_limit=None
    )
    assert f["vmstat"] == 12 * (64 + 16 * 8) and f["trace"] == 0
    g = _core.footprint(
        2000, 8, sampled=False, duration_ns=None, interval_ns=10**8, trace_limit=10**6
    )
    assert g["tasks"] == 2 * f["tasks"] and g["vmstat"] == 64 + 16 * 8 and g["trace"] > 0
    assert f["total"] == f["tasks"] + f["cpus"] + f["vmstat"] + f["trace"]


# --- 10. shapes that do not nest; bounds where the value is written ----------


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"sockets": 1, "cores_per_socket": 4, "llc_cores": 4, "numa_nodes": 2}, "llc_cores=4"),
        ({"sockets": 2, "cores_per_socket": 12, "llc_cores": 4, "numa_nodes": 4}, "llc_cores=4"),
        ({"sockets": 2, "cores_per_socket": 4, "llc_cores": 3}, "llc_cores=3"),
        ({"sockets": 2, "cores_per_socket": 4, "numa_nodes": 3}, "numa_nodes=3"),
    ],
)
def test_shapes_that_do_not_nest_are_refused(kw, match):
    with pytest.raises(sl.ConfigError, match=match):
        sl.Machine(**kw)


def test_a_node_that_splits_a_socket_holds_whole_llcs():
    m = sl.Machine(1, 4, numa_nodes=2)  # the LLC defaults to a node, not the socket
    assert (m.llc_cores, m.numa_nodes) == (2, 2)
    assert sl.Machine(2, 12, llc_cores=3, numa_nodes=4).llc_cores == 3
    cpus = sl.simulate(m, "v3.8", sl.workloads.spinners(nice=[0]), duration_s=0.01).cpus
    assert cpus["llc"].to_list() == cpus["node"].to_list() == [0, 0, 1, 1]


def test_a_zero_syscall_cost_is_refused_by_the_cost_model():
    with pytest.raises(sl.ConfigError, match="syscall_ns=0"):
        sl.CostModel.preset(sl.Machine.preset("vm-2")).replace(syscall_ns=0)


# --- 9. lazy planning ---------------------------------------------------------


def test_a_ten_million_point_grid_plans_in_bounded_memory():
    grid = {
        "migration_cost_ns": list(range(0, 1_000_000, 1000)),
        "nr_migrate": list(range(1, 101)),
        "workload.loops": list(range(1, 101)),
    }
    tracemalloc.start()
    try:
        plan = P.plan_sweep("vm-2", "v3.8", W, grid, **PLAN_KW)
        assert plan.n_runs == 10_000_000
        first = list(itertools.islice(plan, 200))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The eager planner took ~16 KB a run (160 GB here); the lazy one holds
    # one point at a time.
    assert peak < 5_000_000
    assert [(r.point, r.replicate) for r in first[:2]] == [(0, 0), (1, 0)]
    assert first[1].spec is not None and first[1].spec["workload"]["loops"] == 2
    with pytest.raises(sl.ConfigError, match="at most 10000000"):
        P.plan_sweep("vm-2", "v3.8", W, grid, **{**PLAN_KW, "replicates": 2})


@pytest.mark.parametrize(
    "grid",
    [
        {"migration_cost_ns": [0, -1, "x"], "workload.loops": [2, 3]},
        {"workload.loops": [2, 10**30, 3.5, "x"], "kernel": ["v3.8", "nope"]},
        {"workload.datasize": [10, 5000], "workload.loops": [True, 2], "machine": ["vm-2"]},
        {"workload.loops": [10**30], "nr_migrate": [1, 2]},
        {"nr_migrate": [-1], "workload.loops": [2, 2.5]},
    ],
)
def test_the_lazy_plan_makes_the_eager_plans_runs(grid):
    plan = P.plan_sweep("vm-2", "v3.8", W, grid, **{**PLAN_KW, "replicates": 2, "seed": 3})
    eager = P.plan_runs(
        plan.machine,
        plan.kernel,
        None,
        plan.workload,
        G.grid_points(plan.grid),
        2,
        3,
        None,
        None,
        plan.interval_ns,
    )
    lazy = list(plan)
    assert len(lazy) == plan.n_runs == len(eager)
    for a, b in zip(lazy, eager, strict=True):
        assert (a.point, a.replicate, a.seed, a.row, a.spec, a.error) == (
            b.point,
            b.replicate,
            b.seed,
            b.row,
            b.spec,
            b.error,
        )
    valid = sum(r.error is None for r in eager) // 2
    assert plan.count_valid() == valid


def test_an_executor_keeps_a_bounded_window_and_the_same_rows(monkeypatch):
    monkeypatch.setattr(E, "_WINDOW", 2)
    grid = {"migration_cost_ns": [0, 1000, 2000], "workload.loops": [2, -1]}
    kw = {"replicates": 2, "seed": 1, "progress": False}
    local = sl.sweep("vm-2", "v3.8", W, grid, **kw)
    with ThreadPoolExecutor(2) as ex:
        remote = sl.sweep("vm-2", "v3.8", W, grid, executor=ex, chunk_size=1, **kw)
    cols = [c for c in local.columns if c != "wall_s"]
    assert remote.select(cols).equals(local.select(cols))
    assert local["status"].to_list().count("error") == 6


# --- 9. the CLI prints its estimates ------------------------------------------

SPEC = """\
machine = "vm-2"
kernel = "v3.8"
replicates = 2
[workload]
kind = "hackbench"
groups = 1
fds = 2
loops = 20
[grid]
migration_cost_ns = [0, 250000, 500000]
"""


def test_the_cli_prints_the_run_count_and_estimates_and_runs_everything(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    out, ck = tmp_path / "o.parquet", tmp_path / "c.parquet"
    argv = ["sweep", str(spec), "-o", str(out), "--no-progress", "--checkpoint", str(ck)]
    assert main(argv) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("schedlab: 6 runs (3 points x 2 replicates) to ")
    assert err[1].startswith("schedlab: estimated ") and "MB peak" in err[1]
    assert "3 timed runs" in err[1]
    df = pl.read_parquet(out)
    assert df["status"].to_list() == ["ok"] * 6
    # the calibration runs are the sweep's own: the same rows as a plain sweep
    plain = sl.sweep(
        "vm-2", "v3.8", sl.workloads.hackbench(groups=1, fds=2, loops=20),
        {"migration_cost_ns": [0, 250000, 500000]}, replicates=2, progress=False,
    )  # fmt: skip
    cols = [c for c in plain.columns if c != "wall_s"]
    assert df.select(cols).equals(plain.select(cols))
    # resuming from the finished checkpoint times from its rows, runs nothing
    assert main([*argv, "--force"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert "6 timed runs" in err[1]
    assert pl.read_parquet(out).select(cols).equals(plain.select(cols))


def test_the_cli_estimate_times_valid_points_when_the_evenly_spaced_ones_are_invalid(
    tmp_path, capsys
):
    # 9 points; those at 0, 3 and 6 (the evenly spaced starts) have loops=-1
    spec = tmp_path / "s.toml"
    grid = '[grid]\nwake_affine = ["load", "idle", "idle"]\n"workload.loops" = [-1, 20, 20]'
    spec.write_text(SPEC.replace("[grid]\nmigration_cost_ns = [0, 250000, 500000]", grid))
    out = tmp_path / "o.parquet"
    # exit status 1: some rows are not "ok"
    assert main(["sweep", str(spec), "-o", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert "invalid points: 3" in err[0]
    assert "3 timed runs" in err[1], err[1]
    df = pl.read_parquet(out)
    assert df["status"].to_list() == ["error", "error", "ok", "ok", "ok", "ok"] * 3
