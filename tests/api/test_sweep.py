"""Sweeps, frames, checkpoints and scale-out."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
import pytest
import schedlab as sl

W = sl.workloads.hackbench(groups=2, loops=15)
GRID = {
    "migration_cost_ns": [0, 500_000],
    "newidle_rearm": [False, True],
    "workload.ipc": ["socket", "pipe"],
}


def no_wall(df: pl.DataFrame) -> pl.DataFrame:
    return df.select([c for c in df.columns if "wall" not in c])


def test_frame_has_a_row_per_run_with_grid_config_and_metrics():
    df = sl.sweep("vm-2", "v3.8", W, GRID, replicates=3, seed=1, progress=False)
    assert df.height == 8 * 3
    assert df["point"].to_list() == [p for p in range(8) for _ in range(3)]
    assert df["replicate"].to_list() == [0, 1, 2] * 8
    for col in (
        "migration_cost_ns",
        "newidle_throttle",
        "workload.ipc",
        "seed",
        "status",
        "status_detail",
        "elapsed_s",
        "throughput",
        "context_switches",
        "wall_s",
    ):
        assert col in df.columns, col
    assert (df["status"] == "ok").all()
    # the grid values are what ran
    assert set(df["migration_cost_ns"]) == {0, 500_000}
    assert df.filter(pl.col("point") == 1)["workload.ipc"].to_list() == ["pipe"] * 3
    # replicates differ (cost noise, own seeds), points repeat exactly
    assert df["seed"].n_unique() == 24
    assert df.filter(pl.col("point") == 0)["elapsed_s"].n_unique() == 3


def test_same_frame_whatever_the_thread_count_and_on_rerun():
    a = sl.sweep("core2-2s", "v3.8", W, GRID, replicates=2, seed=4, threads=1, progress=False)
    b = sl.sweep("core2-2s", "v3.8", W, GRID, replicates=2, seed=4, threads=2, progress=False)
    c = sl.sweep(
        "core2-2s", "v3.8", W, GRID, replicates=2, seed=4, threads=2, progress=False, chunk_size=3
    )
    assert no_wall(a).equals(no_wall(b)) and no_wall(a).equals(no_wall(c))


def test_per_run_seeds_depend_only_on_seed_point_replicate():
    assert sl.derive_seed(1, 2, 3) == sl.derive_seed(1, 2, 3)
    seeds = {sl.derive_seed(1, p, r) for p in range(50) for r in range(20)}
    assert len(seeds) == 1000 and all(0 <= s < 2**63 for s in seeds)
    df = sl.sweep(
        "vm-2", "v3.8", W, {"workload.loops": [5, 6]}, replicates=2, seed=9, progress=False
    )
    assert df["seed"].to_list() == [sl.derive_seed(9, p, r) for p in (0, 1) for r in (0, 1)]


def test_a_failing_point_leaves_the_others_intact():
    grid = {"min_granularity_ns": [750_000, 10**9], "workload.groups": [1, 2]}
    df = sl.sweep("vm-2", "v3.8", W, grid, progress=False)
    bad = df.filter(pl.col("min_granularity_ns") == 10**9)
    good = df.filter(pl.col("min_granularity_ns") == 750_000)
    assert (bad["status"] == "error").all() and bad["status_detail"].str.contains(
        "latency_ns"
    ).all()
    assert (good["status"] == "ok").all() and good["elapsed_s"].is_not_null().all()
    # a run that cannot finish says so
    t = sl.sweep(
        "vm-2",
        "v3.8",
        sl.workloads.hackbench(groups=5, loops=2000),
        {"workload.groups": [1, 5]},
        duration_s=0.01,
        progress=False,
    )
    assert t["status"].to_list() == ["time_limit", "time_limit"]


def test_grid_and_argument_errors_name_the_parameter():
    with pytest.raises(ValueError, match="grid key 'bogus'"):
        sl.sweep("vm-2", "v3.8", W, {"bogus": [1]}, progress=False)
    with pytest.raises(ValueError, match="grid\\['hz'\\]"):
        sl.sweep("vm-2", "v3.8", W, {"hz": 1000}, progress=False)
    with pytest.raises(ValueError, match="replicates=0"):
        sl.sweep("vm-2", "v3.8", W, replicates=0, progress=False)
    with pytest.raises(TypeError, match="executor"):
        sl.sweep("vm-2", "v3.8", W, executor=object(), progress=False)
    with pytest.raises(ValueError, match="workload.<param>"):
        sl.sweep("vm-2", "v3.8", W, {"workload.nope": [1]}, progress=False)


def test_machine_kernel_and_cost_keys_sweep():
    grid = {
        "machine": ["vm-2", "core2-2s"],
        "kernel": ["v2.6.36", "v3.8"],
        "context_switch_ns": [1000, 4000],
    }
    df = sl.sweep("vm-2", "v3.8", W, grid, progress=False)
    assert df.height == 8
    assert df.select("machine", "kernel", "context_switch_ns").unique().height == 8
    assert set(df["nr_cpus"]) == {2, 8}
    dear = df.filter(pl.col("context_switch_ns") == 4000)["sys_s"].mean()
    cheap = df.filter(pl.col("context_switch_ns") == 1000)["sys_s"].mean()
    assert dear > cheap


def test_swept_preset_keeps_the_base_kernels_changes_and_names_the_key():
    # the base's recent_used_cpu=True stays on top of each swept preset; on
    # v2.6.36 (select_idle_sibling="any_idle") it is invalid, and that row's
    # detail names the grid key as well as the base change
    base = sl.Kernel.preset("v4.11").replace(recent_used_cpu=True)
    df = sl.sweep("vm-2", base, W, {"kernel": ["v2.6.36", "v4.11"]}, progress=False)
    bad, good = df.row(0, named=True), df.row(1, named=True)
    assert bad["status"] == "error" and good["status"] == "ok"
    assert "kernel='v2.6.36'" in bad["status_detail"]
    assert "recent_used_cpu=True" in bad["status_detail"]
    # a point's own kernel field wins over the base's change
    df = sl.sweep(
        "vm-2",
        base,
        W,
        {"kernel": ["v2.6.36"], "recent_used_cpu": [False]},
        progress=False,
    )
    assert df["status"].to_list() == ["ok"]


def test_progress_callback_counts_every_run():
    seen = []
    sl.sweep(
        "vm-2",
        "v3.8",
        W,
        {"workload.loops": [3, 4, 5]},
        replicates=2,
        progress=lambda done, total: seen.append((done, total)),
        chunk_size=2,
    )
    assert seen[-1] == (6, 6) and [d for d, _ in seen] == sorted(d for d, _ in seen)


SCRIPT = textwrap.dedent("""
    import sys, schedlab as sl
    w = sl.workloads.hackbench(groups=4, loops=40)
    sl.sweep("core2-2s", "v3.8", w, {"workload.loops": list(range(60, 100))}, replicates=2,
             seed=5, threads=1, chunk_size=2, progress=False, checkpoint=sys.argv[1])
""")


def test_checkpoint_resume_after_a_kill_equals_an_uninterrupted_run(tmp_path):
    ck = tmp_path / "sweep.parquet"
    p = subprocess.Popen([sys.executable, "-c", SCRIPT, str(ck)])
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if pl.read_parquet(ck).height >= 6:
                    break
            except (FileNotFoundError, OSError, pl.exceptions.PolarsError):
                pass  # not written yet, or replaced while we read it
            time.sleep(0.01)
        p.send_signal(signal.SIGKILL)
    finally:
        p.wait()
    partial = pl.read_parquet(ck).height
    assert 6 <= partial < 80, partial
    kw = {"replicates": 2, "seed": 5, "threads": 1, "chunk_size": 2, "progress": False}
    grid = {"workload.loops": list(range(60, 100))}
    w = sl.workloads.hackbench(groups=4, loops=40)
    resumed = sl.sweep("core2-2s", "v3.8", w, grid, checkpoint=ck, **kw)
    fresh = sl.sweep("core2-2s", "v3.8", w, grid, **kw)
    assert no_wall(resumed).equals(no_wall(fresh))
    assert pl.read_parquet_metadata(ck)["schedlab.version"] == sl.__version__
    # a different sweep refuses the checkpoint
    with pytest.raises(ValueError, match="checkpoint"):
        sl.sweep("core2-2s", "v3.8", w, {"workload.loops": [1]}, checkpoint=ck, **kw)


def test_ctrl_c_keeps_finished_rows(tmp_path):
    ck = tmp_path / "ck.parquet"
    w = sl.workloads.hackbench(groups=4, loops=300)
    # The SIGINT comes 0.3 s after the first chunk finished, so it lands while
    # runs are under way (a fixed delay from the start could land in setup on
    # a loaded machine).
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))

    def start_timer(done: int, total: int) -> None:
        if done == 1:
            timer.start()

    try:
        with pytest.raises(sl.SweepInterrupted) as info:
            sl.sweep(
                "core2-2s",
                "v3.8",
                w,
                {"workload.loops": list(range(300, 700))},
                threads=1,
                chunk_size=1,
                progress=start_timer,
                checkpoint=ck,
            )
    finally:
        timer.cancel()
    part = info.value.partial
    assert 0 < part.height < 400 and (part["status"] == "ok").all()
    assert pl.read_parquet(ck).height == part.height


def test_ctrl_c_in_a_single_chunk_keeps_its_finished_runs(tmp_path, monkeypatch):
    # One chunk of many small runs on one thread; the SIGINT comes 1 s after
    # that chunk's run_batch started, so it lands while runs are under way.
    core = sys.modules["schedlab._core"]
    run_batch = core.run_batch
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))

    def timed_run_batch(specs, threads):
        timer.start()
        return run_batch(specs, threads)

    monkeypatch.setattr(core, "run_batch", timed_run_batch)
    ck = tmp_path / "ck.parquet"
    w = sl.workloads.hackbench(groups=2, loops=10)
    loops = [10 + i % 30 for i in range(2000)]
    kw = {"seed": 7, "progress": False}
    try:
        with pytest.raises(sl.SweepInterrupted) as info:
            sl.sweep(
                "core2-2s", "v3.8", w, {"workload.loops": loops},
                threads=1, chunk_size=10_000, checkpoint=ck, **kw,
            )  # fmt: skip
    finally:
        timer.cancel()
    monkeypatch.undo()
    part = info.value.partial
    assert 0 < part.height < len(loops) and (part["status"] == "ok").all()
    # every kept row is the row of an uninterrupted sweep with the same seed
    n = part["point"].max() + 1
    fresh = sl.sweep("core2-2s", "v3.8", w, {"workload.loops": loops[:n]}, **kw)
    kept = fresh.join(part.select("point"), on="point", how="semi")
    assert no_wall(part).equals(no_wall(kept))
    assert no_wall(pl.read_parquet(ck)).equals(no_wall(part))


def test_ctrl_c_cancels_an_executors_pending_chunks():
    w = sl.workloads.hackbench(groups=2, loops=10)
    submitted = []

    class Recording(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            f = super().submit(fn, *args, **kwargs)
            submitted.append(f)
            return f

    def ctrl_c(done: int, total: int) -> None:
        os.kill(os.getpid(), signal.SIGINT)

    with Recording(max_workers=1) as ex:
        with pytest.raises(sl.SweepInterrupted) as info:
            sl.sweep(
                "core2-2s", "v3.8", w, {"workload.loops": list(range(10, 70))},
                seed=3, chunk_size=1, executor=ex, progress=ctrl_c,
            )  # fmt: skip
    assert len(submitted) == 60 and all(f.done() for f in submitted)
    # at most one chunk was running (it finishes); the rest never start
    cancelled = sum(f.cancelled() for f in submitted)
    assert cancelled >= 60 - info.value.partial.height - 1 and cancelled > 0
    part = info.value.partial
    assert part.height >= 1 and (part["status"] == "ok").all()
    fresh = sl.sweep("core2-2s", "v3.8", w, {"workload.loops": list(range(10, 70))}, seed=3,
                     progress=False)  # fmt: skip
    kept = fresh.join(part.select("point"), on="point", how="semi")
    assert no_wall(part).equals(no_wall(kept))


def test_executor_result_equals_local():
    local = sl.sweep("vm-2", "v3.8", W, GRID, replicates=2, seed=2, progress=False)
    with ThreadPoolExecutor(max_workers=2) as ex:
        remote = sl.sweep(
            "vm-2", "v3.8", W, GRID, replicates=2, seed=2, progress=False, executor=ex, chunk_size=3
        )
    assert no_wall(local).equals(no_wall(remote))


def test_dask_local_cluster_result_equals_local():
    distributed = pytest.importorskip("distributed")
    local = sl.sweep("vm-2", "v3.8", W, GRID, replicates=2, seed=3, progress=False)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = sl.sweep(
            "vm-2",
            "v3.8",
            W,
            GRID,
            replicates=2,
            seed=3,
            progress=False,
            executor=client.get_executor(),
            chunk_size=4,
        )
    assert no_wall(local).equals(no_wall(remote))


def synthetic(shift: float, n: int = 12, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = 100 + rng.normal(0, 1.0, n)
    cand = 100 * (1 + shift) + rng.normal(0, 1.0, n)
    return pl.DataFrame(
        {
            "kernel": ["base"] * n + ["cand"] * n,
            "status": ["ok"] * (2 * n),
            "status_detail": [""] * (2 * n),
            "throughput": np.concatenate([base, cand]),
            "elapsed_s": np.concatenate([1 / base, 1 / cand]),
        }
    )


@pytest.mark.parametrize("shift", [-0.10, 0.10])
def test_compare_reports_a_known_shift_and_flags_it(shift):
    cmp = sl.compare(synthetic(shift), by="kernel", baseline="base", metrics=["throughput"])
    row = cmp.row(0, named=True)
    assert row["change_pct"] == pytest.approx(100 * shift, abs=1.5)
    assert row["significant"] and row["p_value"] < 1e-6
    text = sl.format_lkp(cmp)
    assert f"{row['change_pct']:+.1f}%" in text and "throughput" in text
    assert "not significant" not in text


def test_compare_flags_nothing_on_identical_groups():
    df = synthetic(0.0)
    # the candidate runs are the baseline's runs
    same = df.with_columns(
        pl.concat([df["throughput"][:12], df["throughput"][:12]]).alias("throughput")
    )
    cmp = sl.compare(same, by="kernel", baseline="base", metrics=["throughput", "elapsed_s"])
    row = cmp.filter(pl.col("metric") == "throughput").row(0, named=True)
    assert row["change_pct"] == 0 and not row["significant"]
    assert "not significant" in sl.format_lkp(cmp)


def test_summarize_ci_matches_the_t_distribution():
    df = pl.DataFrame(
        {
            "k": ["a"] * 10,
            "status": ["ok"] * 10,
            "status_detail": [""] * 10,
            "x": [float(i) for i in range(10)],
        }
    )
    s = sl.summarize(df, "k", ["x"]).row(0, named=True)
    assert s["n"] == 10 and s["mean"] == 4.5
    assert s["stddev"] == pytest.approx(np.std(range(10), ddof=1))
    # t(0.975, 9) = 2.2622
    assert s["ci95"] == pytest.approx(2.2622 * s["stddev"] / np.sqrt(10), rel=1e-3)
    assert s["pct_stddev"] == pytest.approx(100 * s["stddev"] / 4.5)


def test_format_perf_stat_reads_like_perf():
    df = sl.sweep("vm-2", "v3.8", W, replicates=4, progress=False)
    text = sl.format_perf_stat(df, label="perf bench sched messaging -g 2 -l 15")
    assert "Performance counter stats for 'perf bench sched messaging -g 2 -l 15' (4 runs)" in text
    for what in (
        "task-clock",
        "context-switches",
        "cpu-migrations",
        "CPUs utilized",
        "seconds time elapsed",
        "( +-",
    ):
        assert what in text


def test_plots_render(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    df = sl.sweep(
        "vm-2",
        "v3.8",
        W,
        {"migration_cost_ns": [0, 500_000], "workload.ipc": ["socket", "pipe"]},
        replicates=2,
        progress=False,
    )
    ax = sl.plot.metric_vs(df, "migration_cost_ns", "elapsed_s", hue="workload.ipc")
    assert len(ax.lines) + len(ax.containers) >= 2
    ax = sl.plot.heatmap(df, "migration_cost_ns", "workload.ipc", "elapsed_s")
    ax = sl.plot.bisect(df, "workload.ipc", "socket", "pipe", "elapsed_s")
    ax.figure.savefig(tmp_path / "x.png")
    assert (tmp_path / "x.png").stat().st_size > 1000


SPEC = textwrap.dedent("""
    machine = "vm-2"
    kernel = "v2.6.37"
    replicates = 2
    seed = 3
    [kernel_overrides]
    compat_yield = true
    [workload]
    kind = "hackbench"
    groups = 2
    loops = 20
    [grid]
    migration_cost_ns = [0, 500000]
""")


def test_cli_sweep_spec_to_parquet(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out.parquet"
    p = subprocess.run(
        [sys.executable, "-m", "schedlab", "sweep", str(spec), "-o", str(out), "--no-progress"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    df = pl.read_parquet(out)
    assert df.height == 4 and (df["status"] == "ok").all() and df["compat_yield"].all()
    assert set(df["migration_cost_ns"]) == {0, 500_000} and (df["kernel"] == "v2.6.37").all()
    assert "schedlab.spec" in pl.read_parquet_metadata(out)


def test_cli_bad_spec_is_a_one_line_error(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text(SPEC.replace("migration_cost_ns = [0, 500000]", "bogus = [1]"))
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "schedlab",
            "sweep",
            str(spec),
            "-o",
            str(tmp_path / "o.parquet"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "bogus" in p.stderr


def test_cli_run_any_workload(capsys):
    from schedlab.cli import main

    rc = main(
        [
            "run",
            "--workload",
            "hackbench",
            "--param",
            "groups=1",
            "--param",
            "loops=10",
            "--param",
            "ipc=pipe",
            "--set",
            "migration_cost_ns=0",
            "--json",
        ]
    )
    import json

    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["messages"] == 1 * 20 * 20 * 10


def test_progress_bar_falls_back_to_text_without_ipywidgets(monkeypatch):
    import importlib.util
    import warnings

    import tqdm.std
    from schedlab._progress import progress_bar

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "ipywidgets" else real(n, *a)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no TqdmWarning about IProgress
        bar = progress_bar(total=2, disable=True)
    assert type(bar) is tqdm.std.tqdm
    bar.update(2)
    bar.close()


def test_a_sweep_row_has_the_numbers_simulate_gives():
    # Sweep runs keep no periodic vmstat samples (memory flat over simulated
    # time); every other number is the one simulate() gives for that seed.
    w = sl.workloads.hackbench(groups=2, loops=20)
    grid = {"migration_cost_ns": [0, 500_000]}
    f = sl.sweep("core2-2s", "v2.6.36", w, grid, progress=False, interval_s=0.001)
    for row in f.iter_rows(named=True):
        k = sl.Kernel("v2.6.36", migration_cost_ns=row["migration_cost_ns"])
        r = sl.simulate("core2-2s", k, w, seed=row["seed"], interval_s=0.001)
        for name, v in r.metrics.items():
            if name != "events":
                assert row[name] == v, name
        assert row["events"] < r.metrics["events"]


def test_format_perf_stat_uses_perfs_definitions():
    # perf stat: CPUs utilized = task-clock / the command's wall time (here
    # sim_time_s, start-up included); other counters per task-clock second.
    df = sl.sweep("vm-2", "v3.8", W, replicates=3, progress=False)
    text = sl.format_perf_stat(df)
    wall = df["sim_time_s"].mean()
    tc = df["task_clock_s"].mean()
    assert f"{tc / wall:8.3f} CPUs utilized" in text
    assert tc / wall <= 2.0  # vm-2 has two CPUs
    cs = df["context_switches"].mean() / tc
    want = f"{cs / 1e3:.3f} K/sec" if cs >= 1e3 else f"{cs:.3f} /sec"
    assert want in text
    assert f"{wall:>18.4f} +- " in text
