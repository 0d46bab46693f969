"""Task groups from Python: sl.Group and its refusals, simulate/sweep with
groups=, with_tasks(group=), workloads.mix, Result.groups, the cgroup
helpers of measure (pure functions, no root) and the CLI's --change
cgroup.* keys."""

from __future__ import annotations

import polars as pl
import pytest
import schedlab as sl
from schedlab.host import cgroup

W = sl.workloads


def test_group_checks_name_the_parameter():
    for kw, word in [
        ({"shares": 1}, "shares"),
        ({"quota_us": 500}, "quota_us"),
        ({"quota_us": 50_000, "burst_us": 60_000}, "burst_us"),
        ({"period_us": 2_000_000}, "period_us"),
        ({"shares": 512, "weight": 50}, "weight"),
        ({"weight": 0}, "weight"),
    ]:
        with pytest.raises(sl.ConfigError, match=word):
            sl.Group("g", **kw)
    with pytest.raises(sl.ConfigError, match="name"):
        sl.Group("a b")
    with pytest.raises(sl.ConfigTypeError, match="quota_us"):
        sl.Group("g", quota_us="50ms")
    with pytest.raises(sl.ConfigError, match="parent"):
        sl.simulate("vm-2", "v6.18", W.spinners([0]), duration_s=0.1,
                    groups=[sl.Group("c", parent="p"), sl.Group("p")])  # fmt: skip
    assert sl.Group("g", weight=50).to_core()["shares"] == 512


def test_unknown_group_is_refused_before_the_run():
    w = W.spinners([0]).with_tasks(group="nope")
    with pytest.raises(sl.ConfigError, match="group"):
        sl.simulate("vm-2", "v6.18", w, duration_s=0.1)
    with pytest.raises(sl.ConfigError, match='one of "c"'):
        sl.simulate("vm-2", "v6.18", w, duration_s=0.1, groups=[sl.Group("c")])


def test_quota_limits_cpu_and_counts_periods():
    w = W.spinners([0, 0]).with_tasks(group="c")
    r = sl.simulate("vm-2", "v6.18", w, duration_s=2.0, groups=[sl.Group("c", quota_us=30_000)])
    g = r.groups
    assert g.columns == ["group", *sl.groups.GROUP_COUNTERS]
    row = g.row(0, named=True)
    assert row["group"] == "c"
    assert 0.58 < row["cpu_s"] < 0.66  # 0.3 CPUs for 2 s (plus the first quota)
    assert row["nr_periods"] in (19, 20) and row["nr_throttled"] >= 18
    assert r.metrics["group.c.nr_throttled"] == row["nr_throttled"]
    # no groups: an empty frame, no group metrics
    r0 = sl.simulate("vm-2", "v6.18", W.spinners([0]), duration_s=0.1)
    assert r0.groups.height == 0 and not [k for k in r0.metrics if k.startswith("group.")]


def test_mix_runs_parts_side_by_side_and_stops_with_the_finite_one():
    hb = W.hackbench(groups=1, loops=50).with_tasks(group="c")
    w = W.mix([hb, W.spinners([0, 0])])
    r = sl.simulate("vm-2", "v6.18", w, groups=[sl.Group("c", quota_us=20_000)])
    assert r.status == "ok"
    assert r.metrics["elapsed_s"] == r.metrics["hackbench.elapsed_s"]
    assert "spinners.loops" in r.metrics
    with pytest.raises(sl.ConfigError, match="with_tasks"):
        w.with_tasks(nice=1)
    with pytest.raises(sl.ConfigError, match="names"):
        W.mix([W.spinners([0]), W.spinners([0])], names=["a", "a"])
    assert W.mix([W.spinners([0]), W.spinners([1])]).params["names"] == ["spinners", "spinners_2"]


def test_sweep_over_quota_is_one_call():
    w = W.hackbench(groups=1, loops=30).with_tasks(group="c")
    df = sl.sweep("vm-2", "v6.18", w, {"group.c.quota_us": [10_000, 50_000, None]},
                  groups=[sl.Group("c", quota_us=50_000)], progress=False)  # fmt: skip
    assert df["status"].to_list() == ["ok"] * 3
    assert df["group.c.quota_us"].to_list() == [10_000, 50_000, None]
    el = df["elapsed_s"].to_list()
    assert el[0] > el[1] > el[2]
    assert df["group.c.nr_throttled"].to_list()[2] == 0
    with pytest.raises(sl.ConfigError, match="group"):
        sl.sweep("vm-2", "v6.18", w, {"group.x.quota_us": [1000]}, progress=False)


def test_same_seed_same_numbers_with_groups():
    w = W.hackbench(groups=1, loops=30, ipc="pipe").with_tasks(group="c", role="sender")
    g = [sl.Group("c", quota_us=20_000, burst_us=10_000)]
    a = sl.simulate("vm-2", "v6.18", w, groups=g, seed=3).metrics
    b = sl.simulate("vm-2", "v6.18", w, groups=g, seed=3).metrics
    assert a == b


def test_cgroup_helpers():
    s = cgroup.settings({"quota_us": 50_000})
    assert cgroup.label(s) == "quota_us=50000"
    assert cgroup.parse_label(cgroup.label(s)) == s
    assert cgroup.writes(s, 1) == [
        ("cpu.shares", "1024"),
        ("cpu.cfs_period_us", "100000"),
        ("cpu.cfs_quota_us", "50000"),
    ]
    assert ("cpu.max", "50000 100000") in cgroup.writes(s, 2)
    v1 = "nr_periods 31\nnr_throttled 30\nthrottled_time 2000000000\nnr_bursts 0\nburst_time 0\n"
    v0 = "nr_periods 1\nnr_throttled 0\nthrottled_time 0\nnr_bursts 0\nburst_time 0\n"
    d = cgroup.stat_deltas(v0, v1)
    assert d["cg_nr_periods"] == 30 and d["cg_throttled_s"] == 2.0
    v2 = "usage_usec 5\nnr_periods 3\nnr_throttled 2\nthrottled_usec 1500\n"
    assert cgroup.parse_cpu_stat(v2)["throttled_time"] == 1_500_000
    with pytest.raises(sl.MeasureError):
        cgroup.parse_cpu_stat("garbage")
    with pytest.raises(sl.ConfigError, match="unknown keys"):
        cgroup.settings({"quota": 1})


def test_measure_runs_in_a_group(tmp_path):
    (tmp_path / "cpu.shares").write_text("1024")
    seen = []

    def runner(cmd):
        import subprocess

        seen.append(cmd)
        err = "0.5,msec,task-clock\n10,,context-switches\n1,,cpu-migrations\n"
        return subprocess.CompletedProcess(cmd, 0, "     Total time: 0.010 [sec]\n", err)

    df = sl.measure("hackbench", groups=1, ipc="pipe", mode="thread", reps=1, runner=runner,
                    progress=False, interrupts=lambda: None,
                    changes=[{"cgroup": {"quota_us": 50_000}}], cgroup_root=tmp_path)  # fmt: skip
    assert df["change"].to_list() == ["plain", "cgroup=(quota_us=50000)"]
    assert df["cgroup"].to_list() == [None, "quota_us=50000"]
    assert "cg_nr_throttled" in df.columns
    grouped = [c for c in seen if "sh" in c]
    assert len(grouped) == 1 and any("cgroup.procs" in w for w in grouped[0])
    made = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert (made[0] / "cpu.cfs_quota_us").read_text() == "50000"


def test_cli_change_takes_cgroup_keys():
    from schedlab.cli import _change

    assert _change("cgroup.quota_us=50000 name=q") == {"cgroup": {"quota_us": 50000}, "name": "q"}
    with pytest.raises(sl.ConfigError, match="cgroup"):
        _change("cgroup.quota=5")


def test_result_groups_frame_types():
    w = W.spinners([0]).with_tasks(group="a")
    r = sl.simulate(
        "vm-2", "v6.18", w, duration_s=0.2, groups=[sl.Group("a"), sl.Group("b", idle=True)]
    )
    assert r.groups["group"].to_list() == ["a", "b"]
    assert r.groups.schema["nr_periods"] == pl.Int64
