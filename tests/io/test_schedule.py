"""A schedule's statistics (analysis.schedule: schedule_stats,
schedule_samples, compare_schedule), one code path for a recording and a
model run: a hand-written ftrace text whose every figure is worked out
below, the model's own trace against the run's metrics and against its
text export, the real recording in tests/data/schedule, and the recording
side (host.tracefs, record_schedule) on a fake tracefs. No tracefs, perf
or root needed: nothing here touches /sys/kernel/tracing."""

from __future__ import annotations

import math
import os
import shlex
import time
import types
from pathlib import Path

import polars as pl
import pytest
import schedlab as sl
from schedlab.analysis import schedule as S
from schedlab.host import tracefs as tf
from schedlab.io import replay
from test_replay import _switch as _sw

W = sl.workloads
RECORDING = Path(__file__).parents[1] / "data" / "schedule" / "messaging-g1-l10-pipe.txt.gz"
HEADER = "# schedlab record: pid=100 tracefs=/fake lost=0 command=cmd -x"

# --- a hand-written recording ---------------------------------------------------------


def _ev(comm: str, pid: int, cpu: int, us: int, ev: str, rest: str) -> str:
    """A line of the kernel's ``trace`` file with the record-tgid column."""
    tgid = "-------" if pid == 0 else f"{pid:>7}"
    head = f"{comm + '-' + str(pid):>22} ({tgid}) [{cpu:03d}] d..2."
    return f"{head} {us // 10**6}.{us % 10**6:06d}: {ev}: {rest}"


def _wake(comm: str, pid: int, cpu: int) -> str:
    return f"comm={comm} pid={pid} prio=120 target_cpu={cpu:03d}"


T = 1_000_000  # µs: 1.000000 s


def _lines(header: bool = True) -> list[str]:
    """Two CPUs; ``cmd`` (100, the recorded command) forks ``a`` (101) and
    ``b`` (102); ``other`` (200) is outside its tree. Times in µs after T:

    cpu0: cmd 0-50, b 50-90, a 90-150, idle 150-170, cmd 170-200, idle;
    cpu1: idle -30, a 30-70 (preempted), other 70-100, idle 100-120,
    b 120-180 (exits), idle.
    """
    ln = [
        _ev("<idle>", 0, 0, T + 0, "sched_switch", _sw("swapper/0", 0, "R", "cmd", 100)),
        _ev(
            "cmd",
            100,
            0,
            T + 10,
            "sched_process_fork",
            "comm=cmd pid=100 child_comm=a child_pid=101",
        ),
        _ev("cmd", 100, 0, T + 11, "sched_wakeup_new", _wake("a", 101, 1)),
        _ev(
            "cmd",
            100,
            0,
            T + 20,
            "sched_process_fork",
            "comm=cmd pid=100 child_comm=b child_pid=102",
        ),
        _ev("cmd", 100, 0, T + 21, "sched_wakeup_new", _wake("b", 102, 0)),
        _ev("<idle>", 0, 1, T + 30, "sched_switch", _sw("swapper/1", 0, "R", "a", 101)),
        _ev("cmd", 100, 0, T + 50, "sched_switch", _sw("cmd", 100, "S", "b", 102)),
        # b wakes a, which is on CPU 1: no delay starts
        _ev("b", 102, 0, T + 60, "sched_waking", _wake("a", 101, 1)),
        _ev("b", 102, 0, T + 60, "sched_wakeup", _wake("a", 101, 1)),
        _ev("a", 101, 1, T + 65, "sched_wakeup", _wake("other", 200, 1)),
        _ev("a", 101, 1, T + 70, "sched_switch", _sw("a", 101, "R+", "other", 200)),
        _ev(
            "b",
            102,
            0,
            T + 80,
            "sched_migrate_task",
            "comm=a pid=101 prio=120 orig_cpu=1 dest_cpu=0",
        ),
        # a was preempted, not woken: its switch-in is no wake-up delay
        _ev("b", 102, 0, T + 90, "sched_switch", _sw("b", 102, "S", "a", 101)),
        _ev("other", 200, 1, T + 100, "sched_switch", _sw("other", 200, "S", "swapper/1", 0)),
        _ev(
            "a",
            101,
            0,
            T + 105,
            "sched_migrate_task",
            "comm=other pid=200 prio=120 orig_cpu=1 dest_cpu=0",
        ),
        # two wake-ups of b before it runs: one delay, from the first
        _ev("a", 101, 0, T + 110, "sched_wakeup", _wake("b", 102, 1)),
        _ev("a", 101, 0, T + 112, "sched_wakeup", _wake("b", 102, 1)),
        _ev("<idle>", 0, 1, T + 120, "sched_switch", _sw("swapper/1", 0, "R", "b", 102)),
        _ev("a", 101, 0, T + 150, "sched_switch", _sw("a", 101, "S", "swapper/0", 0)),
        _ev("b", 102, 1, T + 160, "sched_wakeup", _wake("cmd", 100, 0)),
        _ev("<idle>", 0, 0, T + 170, "sched_switch", _sw("swapper/0", 0, "R", "cmd", 100)),
        _ev("b", 102, 1, T + 180, "sched_switch", _sw("b", 102, "X", "swapper/1", 0)),
        _ev("cmd", 100, 0, T + 200, "sched_switch", _sw("cmd", 100, "S", "swapper/0", 0)),
    ]
    head = [HEADER, "# tracer: nop", "#"] if header else ["# tracer: nop", "#"]
    return head + ln


# By hand, per task (µs):
#   switches in: cmd 0, 170; a 30, 90; b 50, 120            -> 2 each, 6
#   wake-ups: cmd 160; a 11 (new), 60; b 21 (new), 110, 112  -> 1, 2, 3; 6
#   migrations: a at 80 (other's at 105 is outside)          -> a 1
#   switch-outs: cmd S, S; a R+, S; b S, X                   -> 1 of 6 preempted
#   bursts: cmd 50, 30; a 40, 60; b 40, 60                   -> 280 µs
#   delays: a 11->30 = 19 (the wake-up at 60 finds a on CPU 1; its switch-in
#           at 90 follows a preemption); b 21->50 = 29, 110->120 = 10 (112 is
#           the second wake-up); cmd 160->170 = 10
#   window 0..200: cpu0 idle 150-170 = 20 (10 %); cpu1 idle 0-30, 100-120,
#           180-200 = 70 (35 %); idle_pct 22.5
HAND = {
    "hackbench": dict(
        tasks=1,
        switches_in=2,
        wakeups=1,
        migrations=0,
        preempted_pct=0.0,
        cpu_s=80e-6,
        burst_mean_us=40.0,
        burst_p50_us=40.0,
        burst_p90_us=48.0,
        delay_p50_us=10.0,
        delay_mean_us=10.0,
    ),
    "receiver": dict(
        tasks=1,
        switches_in=2,
        wakeups=2,
        migrations=1,
        preempted_pct=50.0,
        cpu_s=100e-6,
        burst_mean_us=50.0,
        burst_p50_us=50.0,
        burst_p90_us=58.0,
        delay_p50_us=19.0,
        delay_mean_us=19.0,
    ),
    "sender": dict(
        tasks=1,
        switches_in=2,
        wakeups=3,
        migrations=0,
        preempted_pct=0.0,
        cpu_s=100e-6,
        burst_mean_us=50.0,
        burst_p50_us=50.0,
        delay_p50_us=19.5,
        delay_mean_us=19.5,
    ),
    "all": dict(
        tasks=3,
        switches_in=6,
        wakeups=6,
        migrations=1,
        preempted_pct=100 / 6,
        cpu_s=280e-6,
        burst_mean_us=280 / 6,
        burst_p50_us=45.0,  # of 30 40 40 50 60 60
        burst_p90_us=60.0,
        delay_p50_us=14.5,  # of 10 10 19 29 (numpy's linear quantile)
        delay_p90_us=26.0,
        delay_p99_us=28.7,
        delay_mean_us=17.0,
        idle_pct=22.5,
    ),
}


def _rows(df: pl.DataFrame) -> dict[str, dict[str, object]]:
    return {r["role"]: r for r in df.iter_rows(named=True)}


def test_hand_written_recording_gives_the_hand_computed_statistics():
    st = sl.schedule_stats(_lines(), roles="hackbench", fds=1)
    assert st.columns == ["role", *S.STATS, "source"]
    assert st["role"].to_list() == ["hackbench", "receiver", "sender", "all"]
    got = _rows(st)
    for role, want in HAND.items():
        for k, v in want.items():
            assert got[role][k] == pytest.approx(v, rel=1e-9, abs=1e-12), (role, k)
    # every wake-up of a chosen task here is done from another CPU
    assert all(r["wakeup_preempt_pct"] is None for r in got.values())
    # only the whole schedule has an idle share; a recording has no units
    assert got["receiver"]["idle_pct"] is None and got["all"]["units_per_wakeup"] is None
    assert got["sender"]["burst_p90_us"] == pytest.approx(58.0)


def test_wakeup_preempt_pct_counts_the_wake_ups_that_put_their_waker_out():
    # s runs on CPU 0 throughout; every wake-up below but the last two is
    # done by s on CPU 0, where it runs:
    #   r1 woken, s switched out runnable for r1              -> preempted
    #   r2 woken, r3 woken, s switched out runnable for r3   -> r2 no, r3 yes
    #   r4 woken, s blocks (S) for r4                         -> no
    #   r1 woken at one timestamp with the switch to it       -> yes (line order)
    #   r5 woken on CPU 1 (not s's CPU), r6 by the idle task   -> not counted
    # so 3 of 5
    sw, wk = "sched_switch", "sched_wakeup"
    ln = [
        _ev("<idle>", 0, 0, T, sw, _sw("swapper/0", 0, "R", "s", 10)),
        _ev("s", 10, 0, T + 1, wk, _wake("r1", 11, 0)),
        _ev("s", 10, 0, T + 2, sw, _sw("s", 10, "R", "r1", 11)),
        _ev("r1", 11, 0, T + 3, sw, _sw("r1", 11, "S", "s", 10)),
        _ev("s", 10, 0, T + 4, wk, _wake("r2", 12, 0)),
        _ev("s", 10, 0, T + 5, wk, _wake("r3", 13, 0)),
        _ev("s", 10, 0, T + 6, sw, _sw("s", 10, "R+", "r3", 13)),
        _ev("r3", 13, 0, T + 7, sw, _sw("r3", 13, "S", "r2", 12)),
        _ev("r2", 12, 0, T + 8, sw, _sw("r2", 12, "S", "s", 10)),
        _ev("s", 10, 0, T + 9, wk, _wake("r4", 14, 0)),
        _ev("s", 10, 0, T + 10, sw, _sw("s", 10, "S", "r4", 14)),
        _ev("r4", 14, 0, T + 11, sw, _sw("r4", 14, "S", "s", 10)),
        _ev("s", 10, 0, T + 12, wk, _wake("r1", 11, 0)),
        _ev("s", 10, 0, T + 12, sw, _sw("s", 10, "R", "r1", 11)),
        _ev("r1", 11, 0, T + 13, sw, _sw("r1", 11, "S", "s", 10)),
        _ev("s", 10, 0, T + 14, wk, _wake("r5", 15, 1)),
        _ev("<idle>", 0, 1, T + 15, sw, _sw("swapper/1", 0, "R", "r5", 15)),
        _ev("r5", 15, 1, T + 16, sw, _sw("r5", 15, "S", "swapper/1", 0)),
        _ev("<idle>", 0, 1, T + 17, wk, _wake("r6", 16, 1)),
        _ev("<idle>", 0, 1, T + 18, sw, _sw("swapper/1", 0, "R", "r6", 16)),
        _ev("r6", 16, 1, T + 19, sw, _sw("r6", 16, "S", "swapper/1", 0)),
    ]
    roles = {10: "sender", 11: "r1", 12: "r", 13: "r", 14: "r", 15: "r", 16: "r"}
    st = _rows(sl.schedule_stats(ln, roles=roles))
    assert st["all"]["wakeup_preempt_pct"] == pytest.approx(60.0)
    assert st["r1"]["wakeup_preempt_pct"] == pytest.approx(100.0)
    assert st["r"]["wakeup_preempt_pct"] == pytest.approx(100 / 3)
    # s itself was never woken: no share, not 0
    assert st["sender"]["wakeup_preempt_pct"] is None
    # a wake-up through the target's wake list: sched_waking in the waker's
    # context on CPU 1, sched_wakeup on CPU 0 inside x (sched_ttwu_pending),
    # then x preempted for the wakee: not x's wake-up, not counted
    wl = [
        _ev("<idle>", 0, 0, T, sw, _sw("swapper/0", 0, "R", "x", 20)),
        _ev("<idle>", 0, 1, T, sw, _sw("swapper/1", 0, "R", "w", 21)),
        _ev("w", 21, 1, T + 1, "sched_waking", _wake("r", 22, 0)),
        _ev("x", 20, 0, T + 2, wk, _wake("r", 22, 0)),
        _ev("x", 20, 0, T + 3, sw, _sw("x", 20, "R", "r", 22)),
    ]
    assert sl.schedule_stats(wl, roles={22: "r"}).filter(role="r")["wakeup_preempt_pct"][0] is None
    without = [x for x in wl if "sched_waking" not in x]
    assert sl.schedule_stats(without, roles={22: "r"}).filter(role="r")["wakeup_preempt_pct"][
        0
    ] == pytest.approx(100.0)
    # before 4.3 the kernel printed success=1 before target_cpu
    old = [x.replace(" target_cpu=", " success=1 target_cpu=") for x in ln]
    assert sl.schedule_stats(old)["wakeup_preempt_pct"][0] == pytest.approx(60.0)
    # without target_cpu (an older trace format) nothing is counted
    bare = [x.replace(" target_cpu=000", "").replace(" target_cpu=001", "") for x in ln]
    assert sl.schedule_stats(bare)["wakeup_preempt_pct"].to_list() == [None]


def test_samples_are_the_bursts_and_delays_of_each_task():
    s = sl.schedule_samples(_lines(), roles="hackbench", fds=1)
    assert s.columns == ["role", "pid", "kind", "us"]

    def of(kind: str) -> dict[int, list[float]]:
        out: dict[int, list[float]] = {}
        for pid, us in s.filter(pl.col("kind") == kind).select("pid", "us").iter_rows():
            out.setdefault(pid, []).append(us)
        return {p: sorted(v) for p, v in out.items()}

    assert of("burst") == {100: [30.0, 50.0], 101: [40.0, 60.0], 102: [40.0, 60.0]}
    assert of("delay") == {100: [10.0], 101: [19.0], 102: [10.0, 29.0]}
    roles = dict(s.select("pid", "role").unique().iter_rows())
    assert roles == {100: "hackbench", 101: "receiver", 102: "sender"}


def test_the_header_pid_takes_the_command_and_its_descendants_only():
    with_header = S.schedule_events(_lines())
    assert sorted(with_header.roles) == [100, 101, 102]
    assert set(with_header.roles.values()) == {"all"}
    st = sl.schedule_stats(_lines())
    assert st["role"].to_list() == ["all"]  # one role: no separate "all" row
    assert st.row(0, named=True)["switches_in"] == 6
    # without the header every task but the idle task: other (200) too
    without = S.schedule_events(_lines(header=False))
    assert sorted(without.roles) == [100, 101, 102, 200]
    row = sl.schedule_stats(_lines(header=False)).row(0, named=True)
    assert (row["tasks"], row["switches_in"], row["wakeups"], row["migrations"]) == (4, 7, 7, 2)
    # the replay chooses the same tasks from the header
    assert W.from_trace(_lines()).recorded["tasks"] == 3
    assert W.from_trace(_lines(header=False)).recorded["tasks"] == 4
    assert replay.parse(_lines()).root == 100
    assert replay.parse(_lines(header=False)).root is None


def test_the_header_is_read_whatever_its_command_is_named():
    # a command named sched_* puts "sched_" in the header line
    lines = [HEADER.replace("cmd -x", "./sched_bench --sched_x"), *_lines()[1:]]
    assert replay.parse(lines).root == 100
    assert sorted(S.schedule_events(lines).roles) == [100, 101, 102]
    # only near the top: a header further down is a comment
    late = [*_lines(header=False)[:2], *["#"] * 8, HEADER, *_lines(header=False)[2:]]
    assert replay.parse(late).root is None


def test_hackbench_roles_follow_the_fork_order_by_fds():
    assert S.schedule_events(_lines(), roles="hackbench", fds=1).roles == {
        100: "hackbench",
        101: "receiver",
        102: "sender",
    }
    # two receivers come first when a group has fds=2
    assert S.schedule_events(_lines(), roles="hackbench", fds=2).roles == {
        100: "hackbench",
        101: "receiver",
        102: "receiver",
    }


def test_roles_as_a_mapping_and_as_a_callable():
    st = sl.schedule_stats(_lines(header=False), roles={100: "main", 101: "w", 102: "w"})
    got = _rows(st)
    assert list(got) == ["main", "other", "w", "all"]  # 200 is not mapped
    assert got["w"]["tasks"] == 2 and got["w"]["switches_in"] == 4
    assert got["w"]["wakeups"] == 5 and got["w"]["migrations"] == 1
    assert got["other"]["tasks"] == 1 and got["other"]["switches_in"] == 1
    # one role: its row is the whole schedule, with the idle share
    one = sl.schedule_stats(_lines(), roles={100: "w", 101: "w", 102: "w"})
    assert one["role"].to_list() == ["w"]
    assert one.row(0, named=True)["idle_pct"] == pytest.approx(22.5)
    seen: list[tuple[int, str, int]] = []

    def role(pid: int, comm: str, index: int) -> str:
        seen.append((pid, comm, index))
        return comm

    st = sl.schedule_stats(_lines(), roles=role)
    assert sorted(seen) == [(100, "cmd", -1), (101, "a", 0), (102, "b", 1)]
    assert st["role"].to_list() == ["a", "b", "cmd", "all"]
    assert _rows(st)["cmd"]["cpu_s"] == pytest.approx(80e-6)


@pytest.mark.parametrize("bad", [42, "senders", ["hackbench"]])
def test_a_bad_roles_value_is_refused_naming_roles(bad):
    with pytest.raises(sl.ConfigError, match=r"invalid roles="):
        sl.schedule_stats(_lines(), roles=bad)


def test_a_source_that_is_no_schedule_is_refused():
    with pytest.raises(sl.ConfigError, match="no sched_"):
        sl.schedule_stats(["hello", "world"])
    with pytest.raises(sl.ConfigError, match="invalid recording=int"):
        sl.schedule_stats(42)


# --- a model run: its own trace, its metrics, its text export ---------------------------


@pytest.fixture(scope="module")
def run() -> sl.Result:
    w = W.hackbench(groups=1, loops=10, ipc="pipe")
    return sl.simulate("vm-2", "v6.18", w, seed=1, trace=True, latency=True)


def _idle_pct_by_hand(trace: pl.DataFrame) -> float:
    """idle_pct by a plain walk of the switches: the window from the tasks'
    first switch-in to their last switch-out; each CPU runs a switch's next
    task until its next switch (its first switch's prev task before)."""
    rows = (
        trace.filter(pl.col("event") == "sched_switch")
        .select("time_ns", "cpu", "pid", "next_pid")
        .rows()
    )
    t0 = min(t for t, _, _, n in rows if n != 0)
    t1 = max(t for t, _, p, _ in rows if p != 0)
    on: dict[int, tuple[int, int]] = {}
    idle: dict[int, int] = {}
    for t, c, p, n in rows:
        who, since = on.get(c, (p, t0))
        if who == 0:
            idle[c] = idle.get(c, 0) + max(0, min(t, t1) - max(since, t0))
        on[c] = (n, t)
    for c, (who, since) in on.items():
        if who == 0:
            idle[c] = idle.get(c, 0) + max(0, t1 - max(since, t0))
    return 100.0 * sum(idle.get(c, 0) for c in on) / len(on) / (t1 - t0)


def test_a_model_runs_statistics_are_its_own_counts(run):
    assert run.ok and run.tasks["exited"].all()
    st = _rows(sl.schedule_stats(run))
    assert list(st) == ["hackbench", "receiver", "sender", "all"]
    tasks, m = run.tasks, run.metrics
    tasks = tasks.with_columns(role=pl.col("name").str.split("/").list.first())
    by_role = _rows(
        tasks.group_by("role").agg(
            pl.len().alias("n"),
            pl.col("voluntary_cs").sum(),
            pl.col("involuntary_cs").sum(),
            pl.col("migrations").sum(),
            pl.col("wakeups").sum(),
            pl.col("cpu_s").sum(),
        )
    )
    for role, t in by_role.items():
        s = st[role]
        assert s["tasks"] == t["n"]
        # every task starts off a CPU and exits: each switch-in has its
        # switch-out, voluntary (a block, the exit) or not (R)
        assert s["switches_in"] == t["voluntary_cs"] + t["involuntary_cs"], role
        assert s["preempted_pct"] == pytest.approx(100 * t["involuntary_cs"] / s["switches_in"])
        # sched_wakeup of a task, and each task's one sched_wakeup_new
        assert s["wakeups"] == t["wakeups"] + t["n"], role
        assert s["migrations"] == t["migrations"], role
        assert s["cpu_s"] == pytest.approx(t["cpu_s"], rel=1e-9), role
    a = st["all"]
    assert a["switches_in"] == m["context_switches"]
    assert a["migrations"] == m["cpu_migrations"]
    assert a["wakeups"] == m["wakeups"] + m["forks"]
    assert a["cpu_s"] == pytest.approx(m["task_clock_s"], rel=1e-9)
    assert a["idle_pct"] == pytest.approx(_idle_pct_by_hand(run.trace), rel=1e-12)
    # hackbench -g 1 -l 10: 20 senders x 20 receivers x 10 loops messages each way
    assert st["receiver"]["units_per_wakeup"] == pytest.approx(4000 / st["receiver"]["wakeups"])
    assert st["hackbench"]["units_per_wakeup"] is None


def test_a_model_runs_delays_are_its_wakeup_latency(run):
    # the same rule as perf sched latency's wake-up delays, which the
    # model's latency=True keeps (tests/model/test_latency.py checks those
    # against builtin-sched.c's algorithm)
    d = sl.schedule_samples(run).filter(pl.col("kind") == "delay")
    lat = run.latency(kind="wakeup").filter(pl.col("count") > 0)
    got = d.group_by("pid").agg(pl.len().alias("n"), pl.col("us").sum().alias("sum_us"))
    j = lat.join(got, left_on="task", right_on="pid", how="full", coalesce=True)
    assert j.height == run.tasks.height
    assert j["count"].null_count() == j["n"].null_count() == 0
    assert (j["count"] == j["n"]).all()
    for want, have in zip(j["total_s"], j["sum_us"], strict=True):
        assert have / 1e6 == pytest.approx(want, rel=1e-9)


def test_the_text_export_gives_the_same_statistics(run, tmp_path):
    p = tmp_path / "run.txt"
    run.to_ftrace(p, ns=True)
    roles = {
        int(t): str(n).split("/")[0]
        for t, n in zip(run.tasks["task"], run.tasks["name"], strict=True)
    }
    model = sl.schedule_stats(run).drop("source", "units_per_wakeup")
    text = sl.schedule_stats(p, roles=roles).drop("source", "units_per_wakeup")
    assert text.equals(model)
    # without roles, one row: the whole schedule
    whole = sl.schedule_stats(p)
    assert whole["role"].to_list() == ["all"]
    assert whole.drop("source", "units_per_wakeup").row(0) == model.row(-1)
    # the samples too, pid by pid
    a = sl.schedule_samples(run).sort(["kind", "pid", "us"])
    b = sl.schedule_samples(p, roles=roles).sort(["kind", "pid", "us"])
    assert a.equals(b)


def test_a_run_without_a_whole_trace_is_refused():
    w = W.hackbench(groups=1, loops=2)
    with pytest.raises(sl.ConfigError, match="trace=True"):
        sl.schedule_stats(sl.simulate("vm-2", "v6.18", w))
    cut = sl.simulate("vm-2", "v6.18", w, trace=True, trace_limit=40)
    assert cut.trace_truncated
    with pytest.raises(sl.ConfigError, match="trace_truncated"):
        sl.schedule_stats(cut)
    with pytest.raises(sl.ConfigError, match="trace"):
        sl.compare_schedule(RECORDING, cut)


# --- compare_schedule -----------------------------------------------------------------


@pytest.fixture(scope="module")
def runs() -> tuple[list[sl.Result], sl.Result]:
    w = W.hackbench(groups=1, loops=10, ipc="pipe")
    models = [sl.simulate("vm-2", "v6.18", w, seed=s, trace=True) for s in (1, 2)]
    return models, sl.simulate("vm-2", "v3.8", w, seed=1, trace=True)


def test_compare_schedule_puts_the_model_beside_the_recording(runs):
    models, neg = runs
    c = sl.compare_schedule(RECORDING, models, negative=neg)
    assert c.columns == [
        "role",
        "statistic",
        "real",
        "real_min",
        "real_max",
        "model",
        "model_min",
        "model_max",
        "error",
        "negative",
        "negative_error",
        "beats_negative",
    ]
    assert c["role"].unique().sort().to_list() == ["all", "hackbench", "receiver", "sender"]
    # STATS order within a role
    for role in ("all", "receiver"):
        order = c.filter(pl.col("role") == role)["statistic"].to_list()
        assert order == [s for s in S.STATS if s in order]
    real = _rows(sl.schedule_stats(RECORDING, roles="hackbench", fds=20))
    mods = [_rows(sl.schedule_stats(r)) for r in models]
    ng = _rows(sl.schedule_stats(neg))
    n = 0
    for row in c.iter_rows(named=True):
        role, stat = row["role"], row["statistic"]
        want_real = real[role][stat]
        vals = [m[role][stat] for m in mods]
        if stat == "units_per_wakeup":  # the model's messages over the recording's wake-ups
            want_real = 4000 / real[role]["wakeups"]
        assert row["real"] == pytest.approx(want_real)
        assert row["real_min"] == row["real_max"] == row["real"]  # one recording
        # the median of two seeds is their mean
        assert row["model"] == pytest.approx((vals[0] + vals[1]) / 2)
        assert (row["model_min"], row["model_max"]) == (min(vals), max(vals))
        assert row["negative"] == pytest.approx(ng[role][stat])
        if stat in S.POINTS:
            want = row["model"] - row["real"]
            want_neg = row["negative"] - row["real"]
        else:
            want = row["model"] / row["real"] - 1
            want_neg = row["negative"] / row["real"] - 1
        assert row["error"] == pytest.approx(want), (role, stat)
        assert row["negative_error"] == pytest.approx(want_neg), (role, stat)
        assert row["beats_negative"] == (abs(want) < abs(want_neg)), (role, stat)
        n += 1
    assert n == c.height > 40
    idle = c.filter((pl.col("role") == "all") & (pl.col("statistic") == "idle_pct")).row(
        0, named=True
    )
    assert idle["error"] == pytest.approx(idle["model"] - idle["real"])  # points
    # without a negative control, no negative columns
    plain = sl.compare_schedule(RECORDING, models[0])
    assert plain.columns == c.columns[:9]


def test_compare_schedule_takes_medians_over_repetitions(runs):
    models, _ = runs
    # three "repetitions" of the hand recording: 6, 7 and 8 switches in
    # (a, asleep since 150, runs again on CPU 1 for 1 µs once or twice)
    extra = [
        line
        for i in (0, 2)
        for line in (
            _ev("<idle>", 0, 1, T + 190 + i, "sched_switch", _sw("swapper/1", 0, "R", "a", 101)),
            _ev("a", 101, 1, T + 191 + i, "sched_switch", _sw("a", 101, "S", "swapper/1", 0)),
        )
    ]
    reps = [_lines(), _lines() + extra[:2], _lines() + extra]
    counts = [_rows(sl.schedule_stats(r))["all"]["switches_in"] for r in reps]
    assert counts == [6, 7, 8]
    c = sl.compare_schedule(reps, models)  # roles "auto": hackbench, fds 20
    row = c.filter((pl.col("role") == "all") & (pl.col("statistic") == "switches_in")).row(
        0, named=True
    )
    assert (row["real"], row["real_min"], row["real_max"]) == (7.0, 6.0, 8.0)
    assert row["error"] == pytest.approx(row["model"] / 7.0 - 1)
    # fds 20: the recording's two children are both receivers
    assert set(c["role"]) == {"all", "hackbench", "receiver", "sender"}
    rec = c.filter((pl.col("role") == "receiver") & (pl.col("statistic") == "tasks"))
    assert rec["real"].to_list() == [2.0]


def test_compare_schedule_takes_repetitions_as_paths(runs, tmp_path):
    models, _ = runs
    paths = []
    for i, n in enumerate((0, 2, 2)):
        p = tmp_path / f"rep{i}.txt"
        extra = [
            _ev("<idle>", 0, 1, T + 190 + k, "sched_switch", _sw("swapper/1", 0, "R", "a", 101))
            + "\n"
            + _ev("a", 101, 1, T + 191 + k, "sched_switch", _sw("a", 101, "S", "swapper/1", 0))
            for k in range(n)
        ]
        p.write_text("\n".join(_lines() + extra) + "\n")
        paths.append(p)
    want = sl.compare_schedule(paths, models)
    # str paths are paths too, not lines of one trace
    assert sl.compare_schedule([str(p) for p in paths], models).equals(want)
    row = want.filter((pl.col("role") == "all") & (pl.col("statistic") == "switches_in"))
    assert row.select("real", "real_min", "real_max").row(0) == (8.0, 6.0, 8.0)
    with pytest.raises(sl.ConfigError, match=r"invalid result=\[\]"):
        sl.compare_schedule(paths, [])


def test_compare_schedule_without_hackbench_roles_compares_the_whole(runs):
    models, _ = runs
    c = sl.compare_schedule(RECORDING, models, roles=None)
    assert set(c["role"]) == {"all"}
    tasks = c.filter(pl.col("statistic") == "tasks").row(0, named=True)
    assert tasks["real"] == tasks["model"] == 41.0 and tasks["error"] == 0.0


# --- the real recording ---------------------------------------------------------------


def test_the_real_recording():
    head = replay.parse(replay.read_text(RECORDING))
    assert head.root == 4936
    st = _rows(sl.schedule_stats(RECORDING, roles="hackbench"))
    assert list(st) == ["hackbench", "receiver", "sender", "all"]
    assert [st[r]["tasks"] for r in ("hackbench", "receiver", "sender", "all")] == [1, 20, 20, 41]
    for row in st.values():
        for k in ("switches_in", "wakeups", "migrations", "cpu_s", "burst_mean_us"):
            assert row[k] >= 0, k
        assert 0 <= row["preempted_pct"] <= 100
    assert 0 <= st["all"]["idle_pct"] <= 100
    assert st["receiver"]["switches_in"] >= 20 and st["sender"]["switches_in"] >= 20
    # the replay takes the header's tree: perf bench and its 40 workers
    w = W.from_trace(RECORDING)
    rec = w.recorded
    assert rec["tasks"] == 41
    # two readings of the same switches: the replay counts switch-outs, the
    # statistics switch-ins; every task was forked and exited in the recording
    assert st["all"]["switches_in"] == rec["context_switches"]
    assert st["all"]["migrations"] == rec["migrations"]
    assert st["all"]["cpu_s"] == pytest.approx(rec["cpu_s"], rel=1e-9)
    assert st["all"]["preempted_pct"] == pytest.approx(
        100 * rec["involuntary_cs"] / rec["context_switches"]
    )


# --- recording: tracefs, record_schedule ----------------------------------------------

STATS_TEXT = (
    "entries: 5\noverrun: {o}\ncommit overrun: {c}\nbytes: 100\noldest event ts: 1.0\n"
    "now ts: 2.0\ndropped events: {d}\nread events: 7\n"
)


def _stats(inst: Path, cpu: int, overrun: int, dropped: int, commit: int = 0) -> None:
    d = inst / "per_cpu" / f"cpu{cpu}"
    d.mkdir(parents=True)
    (d / "stats").write_text(STATS_TEXT.format(o=overrun, c=commit, d=dropped))


def test_lost_events_counts_overrun_and_dropped_per_cpu(tmp_path):
    _stats(tmp_path, 0, 3, 2)
    _stats(tmp_path, 1, 0, 0)
    _stats(tmp_path, 10, 0, 4, commit=1)
    # the three losses ftrace.rst names; "entries", "read events" are not
    assert tf.lost_events(tmp_path) == {0: 5, 1: 0, 10: 5}
    assert tf.lost_events(tmp_path / "nothing") == {}


def test_tracefs_root_and_writable(tmp_path):
    with pytest.raises(sl.MeasureError, match="tracefs"):
        tf.tracefs_root(tmp_path)
    assert not tf.tracefs_writable(tmp_path)
    (tmp_path / "instances").mkdir()
    assert tf.tracefs_root(tmp_path) == tmp_path
    assert tf.tracefs_writable(tmp_path) == os.access(tmp_path / "instances", os.W_OK)


def test_record_tracefs_refusals(tmp_path):
    out = tmp_path / "out.txt"
    with pytest.raises(sl.MeasureError, match="invalid command"):
        tf.record_tracefs([], out, tracefs=tmp_path)
    with pytest.raises(sl.MeasureError, match="invalid command"):
        tf.record_tracefs(["true", 3], out, tracefs=tmp_path)  # type: ignore[list-item]
    with pytest.raises(sl.MeasureError, match="not found"):
        tf.record_tracefs(["schedlab-no-such-program"], out, tracefs=tmp_path)
    with pytest.raises(sl.ConfigError, match="buffer_kb"):
        tf.record_tracefs(["true"], out, buffer_kb=1, tracefs=tmp_path)
    with pytest.raises(sl.MeasureError, match="invalid tracefs=.*no instances"):
        tf.record_tracefs(["true"], out, tracefs=tmp_path)
    assert not out.exists()


class _FakeTracefs:
    """A tracefs in a plain directory: the kernel makes an instance's files
    when it is made; here a write makes its file, and stopping the trace
    leaves ``trace`` text and per-CPU stats in it."""

    def __init__(self, root: Path, trace: list[str], lost: int = 0) -> None:
        self.root, self.trace, self.lost = root, trace, lost
        self.writes: list[tuple[str, str]] = []
        (root / "instances").mkdir(parents=True)

    def write(self, path: Path, value: str) -> None:
        inst = path
        while inst.parent.name != "instances":
            inst = inst.parent
        self.writes.append((str(path.relative_to(inst)), value))
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.name == "tracing_on" and value == "0" and not (inst / "per_cpu").exists():
            (inst / "trace").write_text("\n".join(self.trace) + "\n")
            _stats(inst, 0, self.lost, 0)
            _stats(inst, 1, 0, 0)
        path.write_text(value)


@pytest.fixture
def no_pauses(monkeypatch):
    """No pauses between record_tracefs's retries of an instance's rmdir."""
    clock = types.SimpleNamespace(
        monotonic_ns=time.monotonic_ns, perf_counter=time.perf_counter, sleep=lambda s: None
    )
    monkeypatch.setattr(tf, "time", clock)


def test_record_tracefs_on_a_fake_tracefs(tmp_path, monkeypatch, no_pauses):
    fake = _FakeTracefs(tmp_path / "tracing", _lines(header=False)[2:])
    monkeypatch.setattr(tf, "_write", fake.write)
    out = tmp_path / "rec.txt"
    # a plain directory keeps the files written in it: its rmdir fails, and
    # an instance left behind (its buffers allocated) is named
    with pytest.warns(RuntimeWarning, match=r"cannot remove the tracing instance .*schedlab-"):
        info = tf.record_tracefs(["true", "a b"], out, buffer_kb=4096, tracefs=fake.root)
    assert info["status"] == 0 and info["lost"] == 0 and info["text"] == str(out)
    assert set(info) == {"text", "pid", "status", "lost", "elapsed_s", "output"}
    writes = dict(fake.writes)
    assert writes["buffer_size_kb"] == "4096" and writes["trace_clock"] == "global"
    assert writes["options/record-tgid"] == "1"
    assert {k for k, v in writes.items() if k.endswith("/enable") and v == "1"} == {
        f"events/sched/{e}/enable" for e in tf.EVENTS
    }
    # cleared, then on, then off
    assert [w for w in fake.writes if w[0] in ("trace", "tracing_on")] == [
        ("trace", ""),
        ("tracing_on", "1"),
        ("tracing_on", "0"),
    ]
    text = out.read_text().splitlines()
    assert text[0] == (
        f"{replay.RECORD_HEADER} pid={info['pid']} tracefs={fake.root} lost=0 "
        f"command={shlex.join(['true', 'a b'])}"
    )
    assert text[1:] == _lines(header=False)[2:]
    assert replay.parse(text).root == info["pid"]


def test_record_tracefs_refuses_a_recording_that_lost_events(tmp_path, monkeypatch, no_pauses):
    fake = _FakeTracefs(tmp_path / "tracing", _lines(header=False)[2:], lost=3)
    monkeypatch.setattr(tf, "_write", fake.write)
    out = tmp_path / "rec.txt"
    left = pytest.warns(RuntimeWarning, match="cannot remove")  # as above
    with pytest.raises(sl.MeasureError, match=r"lost 3 events .*buffer_kb=4096"), left:
        tf.record_tracefs(["true"], out, buffer_kb=4096, tracefs=fake.root)
    assert not out.exists()
    with pytest.warns(RuntimeWarning, match="cannot remove"):
        info = tf.record_tracefs(["true"], out, buffer_kb=4096, tracefs=fake.root, lost_ok=True)
    assert info["lost"] == 3
    assert " lost=3 " in out.read_text().splitlines()[0]


def test_record_schedule_refusals():
    with pytest.raises(sl.MeasureError, match="invalid method='bogus'"):
        sl.record_schedule(["true"], "x.txt", method="bogus")
    with pytest.raises(sl.MeasureError, match="no command"):
        sl.record_schedule([], "x.txt")


def test_cli_measure_record_takes_a_method(capsys):
    from schedlab.cli import main

    with pytest.raises(SystemExit):
        main(["measure", "record", "--method", "bogus", "-o", "x.txt", "--", "true"])
    assert "invalid choice: 'bogus'" in capsys.readouterr().err
    assert main(["measure", "record", "--method", "tracefs", "-o", "x.txt"]) == 2
    assert "expected a command" in capsys.readouterr().err


# --- plot -----------------------------------------------------------------------------


def test_schedule_cdf(run):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = sl.plot.schedule_cdf(
        {"recorded": RECORDING, "model": run}, kind="delay", role="receiver", roles="hackbench"
    )
    try:
        assert [ln.get_label() for ln in ax.get_lines()] == ["recorded", "model"]
        # a CDF: it ends at 1 after one step per sample
        n = sl.schedule_samples(run).filter(
            (pl.col("kind") == "delay") & (pl.col("role") == "receiver")
        )
        y = ax.get_lines()[1].get_ydata()
        assert len(y) == n.height and math.isclose(y[-1], 1.0)
        assert ax.get_xscale() == "log"
        with pytest.raises(sl.ConfigError, match="invalid kind='x'"):
            sl.plot.schedule_cdf({"model": run}, kind="x")
        with pytest.raises(sl.ConfigError, match="invalid sources=list"):
            sl.plot.schedule_cdf([run])
    finally:
        plt.close("all")


# --- the command's wake-up history (parent_wakee_flips) -------------------------------


def _flips_lines(wakees: list[int], gap_us: int = 1) -> list[str]:
    """``cmd`` (100) wakes ``wakees`` in turn, then forks 101 and wakes 7."""
    ln = [HEADER]
    t = T
    for p in wakees:
        t += gap_us
        ln.append(_ev("cmd", 100, 0, t, "sched_waking", _wake(f"t{p}", p, 1)))
    fork = "comm=cmd pid=100 child_comm=a child_pid=101"
    ln.append(_ev("cmd", 100, 0, t + 1, "sched_process_fork", fork))
    ln.append(_ev("cmd", 100, 0, t + 2, "sched_waking", _wake("t7", 7, 1)))
    # another task's wake-ups are not the command's
    ln.append(_ev("other", 200, 1, t + 3, "sched_waking", _wake("t8", 8, 1)))
    return ln


def test_parent_wakee_flips_counts_changes_of_wakee_until_the_last_fork():
    # 5, 5, 6, 5, 9: four changes of wakee (the repeat of 5 is none); the
    # wake-up after the fork and another task's are not counted
    assert S.parent_wakee_flips(_flips_lines([5, 5, 6, 5, 9])) == 4
    assert S.parent_wakee_flips(_flips_lines([])) == 0


def test_parent_wakee_flips_halves_once_a_second():
    # record_wakee(): a wake-up more than a second after the last halving
    # halves first: 1, 2, 3, then 3 >> 1 = 1 + 1 = 2
    assert S.parent_wakee_flips(_flips_lines([1, 2, 3, 4], gap_us=400_000)) == 2


def test_parent_wakee_flips_refuses_what_it_cannot_read():
    with pytest.raises(sl.ConfigError, match="names no command pid"):
        S.parent_wakee_flips(_flips_lines([5])[1:])
    no_fork = [x for x in _flips_lines([5]) if "sched_process_fork" not in x]
    with pytest.raises(sl.ConfigError, match="forks no child"):
        S.parent_wakee_flips(no_fork)
    with pytest.raises(sl.ConfigError, match="invalid recording=int"):
        S.parent_wakee_flips(5)


def test_parent_wakee_flips_of_the_real_recording():
    # perf bench messaging recorded here: its main process woke a few tasks
    # (its output's reader, RCU) before forking
    n = S.parent_wakee_flips(RECORDING)
    assert isinstance(n, int) and 0 <= n < 50


def test_parent_wakee_flips_decides_how_many_start_up_wake_ups_pull():
    # children inherit the flips; wake_wide() stops the pulls to the main
    # process's CPU once its own flips reach twice theirs: more flips, more
    # workers pulled at the start (counted as the start's migrations)
    def start_migrations(flips: int) -> int:
        w = W.hackbench(groups=2, loops=1, ipc="pipe", parent_wakee_flips=flips)
        tr = sl.simulate("vm-2", "v6.18", w, trace=True).trace
        assert tr is not None
        main = tr.filter(pl.col("event") == "sched_wakeup_new")["pid"][0]
        go = tr.filter(pl.col("event") == "sched_wakeup", pl.col("waker_pid") == main)
        t_go = go["time_ns"][0]
        mig = tr.filter(pl.col("event") == "sched_migrate_task", pl.col("time_ns") == t_go)
        return mig.height

    none, some = start_migrations(0), start_migrations(4)
    assert some < none


def test_parent_wakee_flips_survives_with_tasks_and_mix():
    # the wrappers hand the main process's flips on, as they do its attrs
    w = W.hackbench(groups=2, loops=20, ipc="pipe", parent_wakee_flips=4)
    plain = W.hackbench(groups=2, loops=20, ipc="pipe")

    def cs(x: sl.Workload) -> float:
        return sl.simulate("vm-2", "v6.18", x, seed=0).metrics["context_switches"]

    assert cs(w) != cs(plain)
    assert cs(w.with_tasks(nice=0)) == cs(w)
    assert cs(W.mix([w])) == cs(w)


def test_tasks_takes_one_name_as_from_trace_does():
    # a headerless text: every task but the idle task; tasks= keeps the named ones
    one = sl.schedule_stats(_lines(header=False), tasks="a")
    many = sl.schedule_stats(_lines(header=False), tasks=["a"])
    assert one.equals(many) and one["tasks"].to_list() == [1]
    with pytest.raises(sl.ConfigTypeError, match="expected a task name \\(str\\), a list"):
        sl.schedule_stats(_lines(header=False), tasks=3)
