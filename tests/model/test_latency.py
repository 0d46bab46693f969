"""Scheduling delays (``simulate(..., latency=True)``, ``Result.latency``):
against ``perf sched latency``'s algorithm run on the model's own trace,
against numbers worked by hand, and the sweep columns and parsing."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import schedlab as sl
from schedlab.analysis.latency import format_latency
from schedlab.host.sched_latency import measure_latency, parse_sched_latency

DATA = Path(__file__).parents[1] / "data"


def perf_sched_latency(trace: pl.DataFrame) -> dict[int, dict[str, int]]:
    """tools/perf/builtin-sched.c's latency atoms on a trace frame: a task
    waits from its wake-up (if it slept) or from its switch out in state R,
    until its next switch in. Per pid: count, sum and max of the delays, and
    the count of those that began with a wake-up."""
    waiting: dict[int, tuple[int, bool]] = {}
    out: dict[int, dict[str, int]] = {}
    for ev, t, pid, prev_state, nxt in trace.select(
        "event", "time_ns", "pid", "prev_state", "next_pid"
    ).iter_rows():
        if ev == "sched_switch":
            if pid != 0:
                if prev_state == "R":
                    waiting[pid] = (t, False)
                else:
                    waiting.pop(pid, None)
            if nxt != 0 and nxt in waiting:
                since, woken = waiting.pop(nxt)
                d = t - since
                s = out.setdefault(nxt, {"count": 0, "sum": 0, "max": 0, "wakeups": 0})
                s["count"] += 1
                s["sum"] += d
                s["max"] = max(s["max"], d)
                s["wakeups"] += woken
        elif ev in ("sched_wakeup", "sched_wakeup_new") and pid not in waiting:
            waiting[pid] = (t, True)
    return out


CASES = [
    ("v3.8", sl.workloads.hackbench(groups=2, loops=40, ipc="pipe", mode="process")),
    ("v6.18", sl.workloads.hackbench(groups=2, loops=40, ipc="socket", mode="thread")),
    (
        "v6.18",
        sl.workloads.spinners(nice=[0, 0, 5], run_us=[None, 700, 300], sleep_us=[None, 900, 2000]),
    ),
    ("v6.18", sl.workloads.hackbench(groups=1, loops=30).with_tasks(policy="fifo", rt_priority=1)),
]


@pytest.mark.parametrize(("kernel", "w"), CASES)
def test_latency_is_perf_sched_latency_of_the_trace(kernel: str, w: sl.Workload) -> None:
    r = sl.simulate("vm-2", kernel, w, duration_s=0.3, trace=True, latency=True, seed=3)
    assert r.trace is not None and not r.trace_truncated
    want = perf_sched_latency(r.trace)
    lat = r.latency()
    wake = r.latency(kind="wakeup")
    assert lat.height == r.tasks.height
    got = {row["task"]: row for row in lat.iter_rows(named=True)}
    assert sum(s["count"] for s in want.values()) == lat["count"].sum() > 100
    for pid, s in want.items():
        g = got[pid]
        assert g["count"] == s["count"], pid
        assert g["total_s"] == pytest.approx(s["sum"] / 1e9, rel=1e-12), pid
        assert g["max_us"] == pytest.approx(s["max"] / 1e3, rel=1e-12), pid
    assert {row["task"]: row["count"] for row in wake.iter_rows(named=True) if row["count"]} == {
        p: s["wakeups"] for p, s in want.items() if s["wakeups"]
    }
    # the run's metrics are the same delays over every task
    m = r.metrics
    assert m["latency_count"] == lat["count"].sum()
    assert m["wakeup_latency_count"] == wake["count"].sum()
    assert m["latency_max_us"] == pytest.approx(lat["max_us"].max())


def test_latency_changes_no_other_number() -> None:
    w = sl.workloads.hackbench(groups=2, loops=40)
    off = sl.simulate("vm-2", "v6.18", w, seed=5)
    on = sl.simulate("vm-2", "v6.18", w, seed=5, latency=True)
    lat = {k: v for k, v in on.metrics.items() if "latency" in k}
    assert {k: v for k, v in on.metrics.items() if k not in lat} == off.metrics
    assert len(lat) == 12 and not any("latency" in k for k in off.metrics)
    assert on.tasks.equals(off.tasks)
    with pytest.raises(sl.ConfigError, match=r"latency=True"):
        off.latency()
    with pytest.raises(sl.ConfigError, match=r"latency=True"):
        off.latency_histogram()


def hogs(kernel: str, n: int = 2, **kw: Any) -> sl.Result:
    w = sl.workloads.spinners(nice=[0] * n, cpus=[0] * n, **kw)
    return sl.simulate("vm-2", kernel, w, duration_s=1.0, latency=True)


def test_two_hogs_on_one_cpu_wait_one_slice_each() -> None:
    # CFS (3.8, HZ 1000): sched_latency 6 ms x (1 + ilog2(2 CPUs)) = 12 ms
    # per period, 6 ms each; the tick (every 1 ms) preempts at exactly 6 ms,
    # so each waits the other's 6 ms: ~1 s / 12 ms = 83 waits each.
    cfs = hogs("v3.8").latency()
    assert cfs["p50_us"].to_list() == [6000.0, 6000.0]
    assert cfs["max_us"].to_list() == [6000.0, 6000.0]
    assert cfs["count"].to_list() in ([83, 84], [84, 83])
    # EEVDF (6.18, HZ 250): base slice 0.75 ms x 2 = 1.5 ms, but only the
    # tick (every 4 ms) ends a slice of a task no one wakes against, so each
    # runs 4 ms: waits of 4 ms, 125 each.
    eevdf = hogs("v6.18").latency()
    assert eevdf["p50_us"].to_list() == [4000.0, 4000.0]
    assert eevdf["max_us"].to_list() == [4000.0, 4000.0]
    assert eevdf["count"].to_list() == [125, 125]
    # every one a preemption but each task's first run (its sched_wakeup_new)
    assert hogs("v6.18").latency(kind="wakeup")["count"].to_list() == [1, 1]


def test_a_sleeper_among_hogs_cfs_preempts_at_once_eevdf_waits_for_the_tick() -> None:
    kw = {"run_us": [None, None, 1000], "sleep_us": [None, None, 10_000]}
    # CFS 3.8: the sleeper wakes at min_vruntime - sched_latency/2 (6 ms
    # behind, GENTLE_FAIR_SLEEPERS), more than wakeup_granularity (1 ms x 2)
    # behind the running hog, so check_preempt_wakeup() preempts at once:
    # every wake-up delay is 0; it loops every 1 + 10 ms: 91 times in 1 s.
    cfs = hogs("v3.8", 3, **kw).latency(kind="wakeup").row(2, named=True)
    assert (cfs["count"], cfs["max_us"]) == (91, 0.0)
    # EEVDF 6.18: the running hog keeps the CPU while its slice is
    # protected (RUN_TO_PARITY), which only a tick ends at HZ 250: the
    # sleeper waits up to two ticks (8 ms), on average about half of one.
    e = hogs("v6.18", 3, **kw).latency(kind="wakeup").row(2, named=True)
    assert 0 < e["mean_us"] < 4000 and e["max_us"] <= 8000
    # it loops every 11 ms plus its mean wait
    assert e["count"] == pytest.approx(1e6 / (11_000 + e["mean_us"]), abs=1.5)


def test_groupings_and_histogram_agree() -> None:
    w = sl.workloads.hackbench(groups=2, loops=40)
    r = sl.simulate("vm-2", "v6.18", w, latency=True)
    per_task = r.latency()
    roles = r.latency(by="role")
    assert set(roles["role"]) == {"main", "sender", "receiver"}
    for row in roles.iter_rows(named=True):
        sub = per_task.filter(pl.col("role") == row["role"])
        assert row["tasks"] == sub.height
        assert row["count"] == sub["count"].sum()
        assert row["max_us"] == sub["max_us"].max()
        assert row["p50_us"] <= row["p90_us"] <= row["p99_us"] <= row["max_us"]
    run = r.latency(by="run")
    assert run.height == 1 and run["count"][0] == per_task["count"].sum()
    assert run["p99_us"][0] == pytest.approx(r.metrics["latency_p99_us"])
    h = r.latency_histogram()
    assert h["count"].sum() == run["count"][0]
    assert (h["lo_us"] < h["hi_us"]).all()
    # p99 is the upper edge of the bucket holding the 99th percentile rank
    cum = np.cumsum(h["count"].to_numpy())
    i = int(np.searchsorted(cum, np.ceil(0.99 * cum[-1])))
    assert run["p99_us"][0] == pytest.approx(min(h["hi_us"][i] - 1e-3, run["max_us"][0]))
    hr = r.latency_histogram(by="role", kind="wakeup")
    assert hr.columns[0] == "role" and hr["count"].sum() == r.metrics["wakeup_latency_count"]
    text = format_latency(roles)
    assert "sender" in text and "TOTAL:" in text
    with pytest.raises(sl.ConfigError, match=r"invalid by='cpu'"):
        r.latency(by="cpu")
    with pytest.raises(sl.ConfigError, match=r"invalid kind='preempt'"):
        r.latency(kind="preempt")
    with pytest.raises(sl.ConfigTypeError, match=r"latency"):
        sl.simulate("vm-2", "v6.18", w, latency=1)  # type: ignore[arg-type]


def test_sweep_columns_are_simulates_metrics() -> None:
    w = sl.workloads.hackbench(groups=1, loops=30)
    df = sl.sweep("vm-2", "v6.18", w, {"migration_cost_ns": [0, 500_000]}, latency=True)
    df1 = sl.sweep("vm-2", "v6.18", w, {"migration_cost_ns": [0, 500_000]}, latency=True, threads=1)
    assert df.drop("wall_s").equals(df1.drop("wall_s"))
    plain = sl.sweep("vm-2", "v6.18", w, {"migration_cost_ns": [0, 500_000]})
    assert "latency_p99_us" in df.columns and "latency_p99_us" not in plain.columns
    for row in df.iter_rows(named=True):
        r = sl.simulate(
            "vm-2",
            sl.Kernel.preset("v6.18").replace(migration_cost_ns=row["migration_cost_ns"]),
            w,
            seed=row["seed"],
            latency=True,
        )
        for k in ("latency_count", "latency_mean_us", "latency_p99_us", "wakeup_latency_max_us"):
            assert row[k] == r.metrics[k], k


def test_parse_perf_sched_latency() -> None:
    df = parse_sched_latency((DATA / "perf-sched-latency-p.txt").read_text())
    msg = df.filter(pl.col("comm") == "sched-messaging")
    assert msg.height == 26 and msg["pid"].null_count() == 0
    top = df.row(0, named=True)
    assert top == {
        "comm": "sched-messaging",
        "pid": 8184,
        "runtime_ms": 9.727,
        "switches": 3,
        "avg_delay_ms": 74.367,
        "max_delay_ms": 133.045,
        "max_start_s": 41471.127536,
        "max_end_s": 41471.260581,
    }
    merged = parse_sched_latency((DATA / "perf-sched-latency.txt").read_text())
    assert merged.row(0, named=True)["pid"] is None
    assert merged.row(0, named=True)["switches"] == 2853
    with pytest.raises(sl.MeasureError, match="no task table"):
        parse_sched_latency("Total time: 0.4 [sec]\n")


def test_measure_latency_runs_record_then_latency() -> None:
    text = (DATA / "perf-sched-latency-p.txt").read_text()
    calls: list[list[str]] = []

    def runner(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        if cmd[:3] == ["perf", "sched", "record"]:
            return subprocess.CompletedProcess(cmd, 0, "     Total time: 0.431 [sec]\n", "")
        return subprocess.CompletedProcess(cmd, 0, text, "")

    df = measure_latency(ipc="pipe", mode="thread", reps=2, runner=runner, progress=False)
    assert len(calls) == 4
    assert calls[0][calls[0].index("--") + 1 :] == [
        "perf",
        "bench",
        "sched",
        "messaging",
        "-g",
        "2",
        "-l",
        "200",
        "-p",
        "-t",
    ]
    assert calls[1][:4] == ["perf", "sched", "latency", "-p"]
    assert df.height == 2 * 26 and set(df["rep"]) == {0, 1}
    assert (df["elapsed_s"] == 0.431).all() and (df["comm"] == "sched-messaging").all()

    def failing(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(cmd, 1, "", "perf: Permission denied")

    with pytest.raises(sl.MeasureError, match="exited with 1"):
        measure_latency(reps=1, runner=failing, progress=False)
    with pytest.raises(sl.ConfigError, match="invalid ipc"):
        measure_latency(ipc="tcp", runner=runner, progress=False)


def test_plot_latency_draws_one_cdf_per_group() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    r = sl.simulate("vm-2", "v6.18", sl.workloads.hackbench(groups=1, loops=20), latency=True)
    ax = sl.plot.latency(r.latency_histogram(by="role"))
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == [f"role={v}" for v in r.latency(by="role")["role"]]
    for ln in lines:
        y = ln.get_ydata()
        assert np.all(np.diff(y) >= 0) and y[-1] == pytest.approx(1.0)
    with pytest.raises(sl.ConfigError, match="lo_us"):
        sl.plot.latency(r.latency())


def test_latency_is_refused_past_its_task_limit_before_any_allocation() -> None:
    w = sl.workloads.spinners(nice=[0] * 100_001)
    with pytest.raises(
        sl.ConfigError, match=r"invalid latency=True: expected False .*100001 tasks"
    ):
        sl.simulate("vm-2", "v6.18", w, duration_s=0.001, latency=True)


def test_bisect_on_a_latency_metric_names_the_field() -> None:
    # under EEVDF the sleeper among hogs waits for the tick (see above): a
    # coarser tick (HZ 100) makes its wake-up delays longer
    w = sl.workloads.spinners(
        nice=[0, 0, 0], run_us=[None, None, 1000], sleep_us=[None, None, 10_000], cpus=[0, 0, 0]
    )
    good = sl.Kernel.preset("v6.18")
    bad = good.replace(hz=100)
    df = sl.bisect("vm-2", good, bad, w, "wakeup_latency_mean_us", duration_s=0.5, progress=False)
    assert df["field"].to_list() == ["hz"]
    assert df["metric_bad"][0] > df["metric_good"][0] > 0


def test_cli_latency_prints_perfs_table_and_writes_the_frame(tmp_path: Path, capsys: Any) -> None:
    from schedlab.cli import main

    out = tmp_path / "lat.parquet"
    args = ["latency", "--workload", "hackbench", "--param", "groups=1", "--param", "loops=20"]
    assert main([*args, "--kernel", "v6.18", "--by", "role", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Avg delay ms" in text and "receiver" in text and "TOTAL:" in text
    df = pl.read_parquet(out)
    w = sl.workloads.hackbench(groups=1, loops=20)
    assert df.equals(sl.simulate("vm-2", "v6.18", w, latency=True).latency(by="role"))
    assert main([*args, "--sort", "nope"]) == 2
    assert "invalid sort='nope'" in capsys.readouterr().err


def test_cli_measure_sched_latency_refuses_what_it_cannot_record(capsys: Any) -> None:
    from schedlab.cli import main

    assert main(["measure", "pipe", "--sched-latency"]) == 2
    assert "invalid --sched-latency" in capsys.readouterr().err


def test_format_latency_puts_tasks_without_delays_last_and_aligns_total() -> None:
    w = sl.workloads.spinners([0, 0, 0]).with_tasks(policy="fifo", rt_priority=1)
    r = sl.simulate("vm-2", "v6.18", w, latency=True, duration_s=0.1)
    lat = r.latency()
    assert (lat["count"] == 0).any() and (lat["count"] > 0).any()
    rows = [ln for ln in format_latency(lat).splitlines() if ":" in ln and "TOTAL" not in ln]
    counts = [int(ln.split("|")[2]) for ln in rows]
    assert counts[-1] == 0 and counts[0] > 0
    lines = format_latency(lat.head(0)).splitlines()
    assert lines[1].index("|") == lines[-1].index("|")
