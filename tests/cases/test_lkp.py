"""Seed case 4's 0-day side: the v4.11 preset, rt-tests
hackbench as LKP runs it, and the 0-day report's metric names. CI size:
2-8 CPU machines, a few loops."""

from __future__ import annotations

import polars as pl
import pytest
import schedlab as sl

V411 = sl.Kernel.preset("v4.11")


def test_v4_11_is_v3_13_with_the_4x_changes_the_model_has():
    assert "v4.11" in sl.Kernel.presets()
    ps = sl.Kernel.presets()
    assert ps.index("v3.13") < ps.index("v4.11") < ps.index("v6.6")
    d = V411.diff(sl.Kernel.preset("v3.13"))
    assert dict(zip(d["field"], d["this"], strict=True)) == {
        "sd_init": "v3.16",
        "wake_wide": "True",
        "select_idle_sibling": "idle_cpu",
        "rt_push": "push_ipi",
    }
    # what 4.11 still had: CFS, load-based wake_affine, the 3.13 newidle
    # cost budget, the resched-IPI ILB kick, no preemptible-kernel pass
    assert (V411.pick, V411.wake_affine, V411.newidle_throttle) == ("cfs", "load", "max_lb_cost")
    assert (V411.nohz_kick_ipi, V411.preemption, V411.hz) == ("resched", False, 1000)
    assert (V411.pelt, V411.balancer, V411.sis_util, V411.recent_used_cpu) == (
        "off",
        "cpu_load",
        False,
        False,
    )
    assert V411.migration_cost_ns == 500_000 and V411.tunable_scaling == "log"


def test_v4_11_runs_hackbench_and_is_deterministic():
    w = sl.workloads.hackbench_lkp("core2-2s", loops=20)
    a = sl.simulate("core2-2s", "v4.11", w, seed=4)
    b = sl.simulate("core2-2s", V411, w, seed=4)
    assert a.status == "ok" and a.metrics == b.metrics
    assert a.metrics["messages"] == a.metrics["messages_expected"] == 4 * 20 * 20 * 20


def test_sd_init_v3_16_toggle_changes_the_balancer():
    # 4.11's sd_init() (intervals of the span's weight, busy_factor 32) vs
    # the 2.6 tables (1-4 ms) on nhm-ep: the periodic balancer runs less.
    w = sl.workloads.spinners([0] * 17)
    on = sl.simulate("nhm-ep", V411, w, duration_s=0.3, seed=1).metrics
    off = sl.simulate("nhm-ep", V411.replace(sd_init="v2.6"), w, duration_s=0.3, seed=1).metrics
    assert on["load_balance_calls_busy"] < off["load_balance_calls_busy"]


def test_hackbench_lkp_follows_the_job_file():
    # skl-sp-2s, nr_threads 50 %: 56 groups, loops = 30000 * 112 / 56
    w = sl.workloads.hackbench_lkp("skl-sp-2s")
    assert w.kind == "hackbench"
    assert w.params == {**w.params, "groups": 56, "fds": 20, "loops": 60_000, "datasize": 100}
    assert (w.params["mode"], w.params["ipc"]) == ("thread", "pipe")
    w = sl.workloads.hackbench_lkp(sl.Machine.preset("skl-sp-2s"), "1600%", "process", "socket")
    assert (w.params["groups"], w.params["loops"]) == (1792, 1875)
    assert (w.params["mode"], w.params["ipc"]) == ("process", "socket")
    w = sl.workloads.hackbench_lkp("vm-2", 3, loops=7)
    assert (w.params["groups"], w.params["loops"]) == (3, 7)


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"machine": 3}, sl.ConfigTypeError, "machine"),
        ({"machine": "vm-3"}, sl.ConfigError, "vm-3"),
        ({"machine": "vm-2", "nr_threads": "fifty"}, sl.ConfigError, "nr_threads='fifty'"),
        ({"machine": "vm-2", "nr_threads": "10%"}, sl.ConfigError, "no group"),
        ({"machine": "vm-2", "nr_threads": 0}, sl.ConfigError, "nr_threads"),
        ({"machine": "vm-2", "mode": "thread"}, sl.ConfigError, "mode='thread'"),
        ({"machine": "vm-2", "ipc": "tcp"}, sl.ConfigError, 'ipc="tcp".*"pipe", "socket"'),
        ({"machine": "vm-2", "loops": 0}, sl.ConfigError, "loops"),
        ({"machine": "vm-2", "fds": 10}, sl.ConfigTypeError, "fds"),
    ],
)
def test_hackbench_lkp_refuses_bad_input(kwargs, exc, words):
    with pytest.raises(exc, match=words):
        sl.workloads.hackbench_lkp(**kwargs)


def two_kernels() -> pl.DataFrame:
    w = sl.workloads.hackbench_lkp("vm-2", loops=30)
    return sl.sweep(
        "vm-2", "v3.13", w, {"kernel": ["v3.13", "v4.11"]}, replicates=3, seed=2, progress=False
    )


def test_lkp_metrics_are_the_models_metrics_renamed():
    df = sl.lkp_metrics(two_kernels())
    for name, src in [
        ("time.elapsed_time", "sim_time_s"),
        ("time.system_time", "sys_s"),
        ("time.user_time", "user_s"),
        ("time.voluntary_context_switches", "voluntary_cs"),
        ("time.involuntary_context_switches", "involuntary_cs"),
        ("interrupts.CAL:Function_call_interrupts", "function_call_ipis"),
    ]:
        assert df[name].to_list() == df[src].cast(pl.Float64).to_list(), name
    assert df["vmstat.system.cs"].to_list() == (df["rq_switches"] / df["sim_time_s"]).to_list()
    # LKP's KB: 2·groups·fds tasks × loops × 100 bytes >> 10, over hackbench's Time
    kb = (2 * 1 * 20 * 30 * 100) // 1024
    assert df["hackbench.throughput"].to_list() == (kb / df["elapsed_s"]).to_list()
    # the model's own KB/s divides without the floor: within 1 KB per run
    gap = (df["throughput"] - df["hackbench.throughput"]) * df["elapsed_s"]
    assert ((gap >= 0) & (gap < 1)).all()
    with pytest.raises(sl.ConfigTypeError, match="df"):
        sl.lkp_metrics({"sys_s": [1.0]})
    with pytest.raises(sl.ConfigError, match="'rq_switches'"):
        sl.lkp_metrics(df.drop("rq_switches"))


def test_compare_with_lkp_names_reports_them():
    df = two_kernels()
    cmp = sl.compare(df, by="kernel", baseline="v3.13", names="lkp")
    assert cmp["metric"].to_list() == list(sl.LKP_METRICS)
    row = cmp.filter(pl.col("metric") == "time.voluntary_context_switches").row(0, named=True)
    base = df.filter(pl.col("kernel") == "v3.13")["voluntary_cs"].mean()
    cand = df.filter(pl.col("kernel") == "v4.11")["voluntary_cs"].mean()
    assert (row["base_mean"], row["cand_mean"]) == (base, cand)
    text = sl.format_lkp(cmp)
    for name in [*sl.LKP_METRICS, "time.minor_page_faults"]:
        assert name in text
    assert "# not modelled: time.minor_page_faults" in text
    only = sl.compare(df, by="kernel", baseline="v3.13", names="lkp", metrics=["vmstat.system.cs"])
    assert only["metric"].to_list() == ["vmstat.system.cs"]
    with pytest.raises(sl.ConfigError, match="names='perf'"):
        sl.compare(df, by="kernel", baseline="v3.13", names="perf")
    with pytest.raises(sl.ConfigError, match="throughput"):
        sl.compare(df, by="kernel", baseline="v3.13", names="lkp", metrics=["throughput"])


def test_bisect_plot_draws_one_panel_per_lkp_metric():
    import matplotlib

    matplotlib.use("Agg")
    df = sl.lkp_metrics(two_kernels())
    names = ["hackbench.throughput", "interrupts.CAL:Function_call_interrupts"]
    axes = sl.plot.bisect(df, "kernel", "v3.13", "v4.11", names)
    assert [a.get_ylabel() for a in axes] == names
    for a, name in zip(axes, names, strict=True):
        good, bad = a.lines
        assert list(good.get_ydata()) == df.filter(pl.col("kernel") == "v3.13")[name].to_list()
        assert list(bad.get_ydata()) == df.filter(pl.col("kernel") == "v4.11")[name].to_list()
    with pytest.raises(sl.ConfigError, match="one per metric"):
        sl.plot.bisect(df, "kernel", "v3.13", "v4.11", names, ax=[axes[0]])


def _within_frame() -> pl.DataFrame:
    """Two kernels at two group counts; the candidate is 10 % faster at 2
    groups and 30 % faster at 8, so each block's numbers name its group."""
    rows = [
        {"kernel": k, "workload.groups": g, "status": "ok", "status_detail": "",
         "throughput": 100.0 * g * (1 + gain * (k == "v4.11")) + i}
        for g, gain in ((2, 0.1), (8, 0.3))
        for k in ("v3.13", "v4.11")
        for i in range(3)
    ]  # fmt: skip
    return pl.DataFrame(rows)


def test_format_lkp_labels_each_within_block():
    cmp = sl.compare(
        _within_frame(), by="kernel", baseline="v3.13", metrics=["throughput"],
        within="workload.groups",
    )  # fmt: skip
    text = sl.format_lkp(cmp)
    blocks = [b.splitlines() for b in text.strip().split("\n\n")]
    assert [b[0] for b in blocks] == ["# workload.groups=2", "# workload.groups=8"]
    assert "+10.0%" in blocks[0][3] and "+30.0%" in blocks[1][3]
    assert all("v4.11" in b[1] for b in blocks)
    # without within: one block, no label line (as before)
    plain = sl.format_lkp(
        sl.compare(_within_frame().filter(pl.col("workload.groups") == 2), by="kernel",
                   baseline="v3.13", metrics=["throughput"])
    )  # fmt: skip
    assert not plain.startswith("#") and plain.count("v4.11") == 1
    with pytest.raises(sl.ConfigError, match=r"by='nope'.*workload.groups, kernel"):
        sl.format_lkp(cmp, by="nope")
