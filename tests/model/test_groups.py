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


# --- refusals name the parameter, the value given and the range


def _sweep_groups(grid, groups):
    w = W.spinners([0]).with_tasks(group=groups[0].name)
    df = sl.sweep("vm-2", "v6.18", w, grid, groups=groups, duration_s=0.02, progress=False)
    return df["status"].to_list(), df["status_detail"].to_list()


@pytest.mark.parametrize("param", ["quota_us", "period_us", "burst_us"])
@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["10**400", "-10**400"])
def test_a_huge_group_time_is_a_config_error(param, value):
    rng = r"expected a number of µs from \d+ to 1e\+0\d"
    with pytest.raises(sl.ConfigError, match=rf"invalid {param}=-?1000.*digits\): {rng}") as e:
        sl.Group("box", **{param: value})
    assert isinstance(e.value, ValueError)
    # as a float beyond the range already was
    with pytest.raises(sl.ConfigError, match=rf"invalid {param}=1000000000000000.0: {rng}"):
        sl.Group("box", **{param: 1e15})


def test_shares_and_weight_in_one_grid_point_is_an_error_row():
    for grid in (
        {"group.box.shares": [None, 512], "group.box.weight": [50]},
        {"group.box.weight": [50], "group.box.shares": [None, 512]},
    ):
        status, detail = _sweep_groups(grid, [sl.Group("box")])
        assert status == ["ok", "error"]
        assert "group.box.shares=512" in detail[1] and "group.box.weight=50" in detail[1]
        assert "both given" in detail[1]
    # one of them replaces the other, as Group.replace does
    status, _ = _sweep_groups({"group.box.weight": [50]}, [sl.Group("box", shares=512)])
    assert status == ["ok"]


def test_an_idle_group_takes_no_shares_or_weight():
    for param, v in [("shares", 512), ("weight", 50)]:
        refused = rf"invalid {param}={v} for Group\('g'\) with idle=True: expected None"
        with pytest.raises(sl.ConfigError, match=refused):
            sl.Group("g", idle=True, **{param: v})
    assert sl.Group("g", idle=True, shares=None, weight=None).to_core()["idle"]
    # in a grid: idle=True on a group with shares, and shares on an idle group
    status, detail = _sweep_groups({"group.box.idle": [False, True]}, [sl.Group("box", shares=512)])
    assert status == ["ok", "error"]
    assert detail[1].startswith("grid key group.box.idle=True: invalid shares=512")
    status, detail = _sweep_groups({"group.box.weight": [50]}, [sl.Group("box", idle=True)])
    assert status == ["error"] and "group.box.weight=50" in detail[0]
    assert "invalid weight=50 for Group('box') with idle=True" in detail[0]
    # a point's keys of one group apply together, in either order
    for grid in (
        {"group.box.idle": [False], "group.box.shares": [512]},
        {"group.box.shares": [512], "group.box.idle": [False]},
    ):
        assert _sweep_groups(grid, [sl.Group("box", idle=True)])[0] == ["ok"]
    status, _ = _sweep_groups(
        {"group.box.idle": [True], "group.box.shares": [None]}, [sl.Group("box", shares=512)]
    )
    assert status == ["ok"]


@pytest.mark.parametrize(
    ("field", "value", "word"),
    [
        ("burst_us", 60_000, "burst_us=60000: expected 0 to quota_us (50000)"),
        ("period_us", 2_000_000, "period_us=2000000: expected a number of µs from 1000 to 1e+06"),
        ("quota_us", 500, "quota_us=500: expected a number of µs from 1000 to 1e+09"),
        ("shares", 1, "shares=1: expected 2 to 262144"),
    ],
)
def test_group_error_rows_name_the_grid_key(field, value, word):
    groups = [sl.Group("a", quota_us=50_000), sl.Group("b", quota_us=50_000)]
    status, detail = _sweep_groups({f"group.b.{field}": [value]}, groups)
    assert status == ["error"]
    assert detail[0].startswith(f"grid key group.b.{field}={value}: invalid {word}")


@pytest.mark.parametrize("value", [-1, 10**30, 1, 262_145])
def test_shares_out_of_range_names_the_real_range(value):
    refused = rf"invalid shares={value}: expected 2 to 262144 \(cpu.shares\)$"
    with pytest.raises(sl.ConfigError, match=refused):
        sl.Group("g", shares=value)


def test_a_huge_weight_is_shown_short():
    with pytest.raises(sl.ConfigError, match=r"invalid weight=1000.*digits\): expected 1 to 10000"):
        sl.Group("g", weight=10**400)


def test_a_group_time_refusal_shows_the_value_given():
    for kw, shown in [
        ({"quota_us": 999.6}, r"quota_us=999\.6: "),
        ({"period_us": 999.6}, r"period_us=999\.6: "),
        ({"period_us": 1_000_000.7}, r"period_us=1000000\.7: "),
        (
            {"quota_us": 10_000, "burst_us": 10_000.4},
            r"burst_us=10000\.4: expected 0 to quota_us \(10000\)",
        ),
        ({"burst_us": 0.4}, r"burst_us=0\.4: expected 0 to quota_us \(None\)"),
    ]:
        with pytest.raises(sl.ConfigError, match=shown):
            sl.Group("g", **kw)
    # the values still round to the same ns
    assert sl.Group("g", quota_us=999.9996).to_core()["quota_ns"] == 1_000_000
    assert sl.Group("g", quota_us=10_000, burst_us=0.4).to_core()["burst_ns"] == 400
