"""Result.to_perfetto / schedlab run --perfetto: the written file, decoded with
Perfetto's bundled protos, holds r.trace's switches as per-CPU slices (same
switches, same order), its wake-ups as flows into the woken task's next
slice, its migrations as instant events, the vmstat run-queue samples as
counters, r.balance_trace's passes as slices on per-CPU balancer tracks,
r.pelt_trace's samples as counters, and the tasks as threads under their
processes."""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest
import schedlab as sl
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from schedlab.cli import main

TE = pb.TrackEvent


@pytest.fixture(scope="module")
def run() -> sl.Result:
    # small: 2 CPUs, 2 groups of 2 senders and 2 receivers, 5 loops (~0.05 s)
    w = sl.workloads.hackbench(groups=2, fds=2, loops=5, ipc="pipe")
    return sl.simulate("vm-2", "v3.8", w, seed=3, trace=True, interval_s=0.0005)


@pytest.fixture(scope="module")
def decoded(run: sl.Result, tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("pf") / "run.pftrace"
    run.to_perfetto(path)
    return pb.Trace.FromString(path.read_bytes())


def tracks(trace) -> dict[int, str]:
    return {
        p.track_descriptor.uuid: p.track_descriptor.name
        for p in trace.packet
        if p.HasField("track_descriptor")
    }


def events(trace):
    names = tracks(trace)
    for p in trace.packet:
        if p.HasField("track_event"):
            yield p.timestamp, names.get(p.track_event.track_uuid, ""), p.track_event


def cpu_track(name: str) -> bool:
    return re.fullmatch(r"CPU \d+", name) is not None


def test_every_switch_is_a_slice_end_and_begin_in_trace_order(run, decoded):
    tr = run.trace
    assert tr is not None and not run.trace_truncated
    names = dict(zip(run.tasks["task"].to_list(), run.tasks["name"].to_list(), strict=True))
    sw = tr.filter(tr["event"] == "sched_switch")
    assert sw.height > 20
    expected = []
    for t, cpu, prev, nxt in sw.select("time_ns", "cpu", "pid", "next_pid").iter_rows():
        if prev != 0:
            expected.append(("end", t, f"CPU {cpu}", ""))
        if nxt != 0:
            expected.append(("begin", t, f"CPU {cpu}", names[nxt]))
    got = [
        ("begin" if e.type == TE.TYPE_SLICE_BEGIN else "end", t, track, e.name)
        for t, track, e in events(decoded)
        if e.type in (TE.TYPE_SLICE_BEGIN, TE.TYPE_SLICE_END) and cpu_track(track)
    ]
    # the file closes the slices still open at the end of the run
    assert got[: len(expected)] == expected
    tail = got[len(expected) :]
    assert all(kind == "end" for kind, *_ in tail)
    assert all(t == round(run.sim_time_s * 1e9) for _, t, *_ in tail)
    # slices on a CPU track never nest: begins and ends alternate
    per_cpu = defaultdict(list)
    for kind, _, track, _ in got:
        per_cpu[track].append(kind)
    for kinds in per_cpu.values():
        assert kinds == ["begin", "end"] * (len(kinds) // 2)


def test_wakeups_flow_into_the_next_slice_of_the_woken_task(run, decoded):
    tr = run.trace
    names = dict(zip(run.tasks["task"].to_list(), run.tasks["name"].to_list(), strict=True))
    # expected from r.trace: each wake-up, and the switch that next runs that pid
    expected = []
    waiting: dict[int, int] = {}
    for i, (ev, pid, nxt) in enumerate(tr.select("event", "pid", "next_pid").iter_rows()):
        if ev in ("sched_wakeup", "sched_wakeup_new"):
            waiting[pid] = i
        elif ev == "sched_switch" and nxt in waiting:
            w = tr.row(waiting.pop(nxt), named=True)
            s = tr.row(i, named=True)
            expected.append((w["time_ns"], w["cpu"], s["time_ns"], s["cpu"], names[nxt]))
    assert len(expected) > 10
    starts, ends = {}, {}
    for t, track, e in events(decoded):
        for f in e.flow_ids:
            starts[f] = (t, track, e.name)
        for f in e.terminating_flow_ids:
            ends[f] = (t, track, e.name)
    got = sorted(
        (starts[f][0], int(starts[f][1][4:]), ends[f][0], int(ends[f][1][4:]), ends[f][2])
        for f in ends
    )
    assert got == sorted(expected)
    assert all(starts[f][2] == f"wakeup {ends[f][2]}" for f in ends)


def test_migrations_are_instant_events_with_their_cpus(run, decoded):
    tr = run.trace
    mig = tr.filter(tr["event"] == "sched_migrate_task")
    assert mig.height > 0
    expected = list(mig.select("time_ns", "cpu", "pid", "orig_cpu", "dest_cpu").iter_rows())
    got = []
    for t, track, e in events(decoded):
        if e.type == TE.TYPE_INSTANT and e.name.startswith("migrate "):
            a = {d.name: d.int_value for d in e.debug_annotations}
            got.append((t, int(track[4:]), a["pid"], a["orig_cpu"], a["dest_cpu"]))
    assert got == expected


def test_runqueue_counters_are_the_vmstat_samples(run, decoded):
    rq = run.runqueue_timeline
    times = [round(t * 1e9) for t in run.vmstat["time_s"].to_list()]
    assert rq.shape[1] == len(times) > 5
    per_cpu = defaultdict(list)
    for t, track, e in events(decoded):
        if e.type == TE.TYPE_COUNTER and track.endswith(" runqueue"):
            per_cpu[track].append((t, e.counter_value))
    assert sorted(per_cpu) == [f"CPU {c} runqueue" for c in range(rq.shape[0])]
    for c in range(rq.shape[0]):
        assert per_cpu[f"CPU {c} runqueue"] == list(zip(times, rq[c].tolist(), strict=True))
    # the packets are in time order (samples merged into the event stream)
    ts = [p.timestamp for p in decoded.packet if p.HasField("track_event")]
    assert ts == sorted(ts)


def test_a_truncated_trace_ends_the_file_at_its_last_row(tmp_path: Path):
    w = sl.workloads.hackbench(groups=2, fds=2, loops=5, ipc="pipe")
    r = sl.simulate("vm-2", "v3.8", w, seed=3, trace=True, trace_limit=40, interval_s=0.0005)
    assert r.trace_truncated and r.trace.height == 40
    r.to_perfetto(tmp_path / "t.pftrace")
    t = pb.Trace.FromString((tmp_path / "t.pftrace").read_bytes())
    ts = [p.timestamp for p in t.packet if p.HasField("track_event")]
    assert max(ts) == r.trace["time_ns"][-1] < round(r.sim_time_s * 1e9)


def test_a_run_without_trace_is_refused(tmp_path: Path):
    r = sl.simulate("vm-2", "v3.8", sl.workloads.pipe_pingpong(loops=10))
    with pytest.raises(sl.ConfigError, match="trace=True"):
        r.to_perfetto(tmp_path / "x.pftrace")


def test_cli_writes_the_same_file_as_the_api(tmp_path: Path, capsys):
    out = tmp_path / "cli.pftrace"
    args = ["run", "--workload", "pipe_pingpong", "--param", "loops=20", "--seed", "2"]
    assert main([*args, "--perfetto", str(out)]) == 0
    r = sl.simulate("vm-2", "v3.8", sl.workloads.pipe_pingpong(loops=20), seed=2, trace=True)
    r.to_perfetto(tmp_path / "api.pftrace")
    assert out.read_bytes() == (tmp_path / "api.pftrace").read_bytes()
    assert main([*args, "--perfetto", str(tmp_path / "no" / "x.pftrace")]) == 2
    assert "invalid --perfetto=" in capsys.readouterr().err


def test_without_the_perfetto_package_the_error_names_the_extra(run, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "perfetto.protos.perfetto.trace", None)
    with pytest.raises(ImportError, match=r"pip install 'schedlab\[perfetto\]'"):
        run.to_perfetto(tmp_path / "x.pftrace")
    assert not (tmp_path / "x.pftrace").exists()


def test_a_bad_path_is_refused_before_anything_is_written(run, tmp_path: Path, capfd):
    # an int is not taken as a file descriptor (1 would write to stdout and close it)
    with pytest.raises(
        sl.ConfigTypeError, match=r"path: got int 1, expected a str or os\.PathLike"
    ):
        run.to_perfetto(1)
    with pytest.raises(sl.ConfigTypeError, match="path: got bytes"):
        run.to_perfetto(b"x.pftrace")
    assert capfd.readouterr().out == ""
    missing = tmp_path / "no" / "x.pftrace"
    with pytest.raises(sl.ConfigError, match=r"invalid path=.*no such directory"):
        run.to_perfetto(missing)
    with pytest.raises(sl.ConfigError, match=r"invalid path=.*a directory"):
        run.to_perfetto(tmp_path)
    assert list(tmp_path.iterdir()) == []
    # a str path and an existing file (overwritten) are fine
    (tmp_path / "old.pftrace").write_bytes(b"old")
    run.to_perfetto(str(tmp_path / "old.pftrace"))
    assert pb.Trace.FromString((tmp_path / "old.pftrace").read_bytes()).packet


# --- balancer passes, PELT counters, processes (a 6.18 run: PELT on) --------


@pytest.fixture(scope="module")
def run6() -> sl.Result:
    # ~6 ms: 17 balance passes, 12 vmstat samples
    w = sl.workloads.hackbench(groups=2, fds=2, loops=200, ipc="pipe")
    return sl.simulate("vm-2", "v6.18", w, seed=3, trace=True, interval_s=0.0005)


@pytest.fixture(scope="module")
def decoded6(run6: sl.Result, tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("pf6") / "run.pftrace"
    run6.to_perfetto(path)
    return pb.Trace.FromString(path.read_bytes())


@pytest.fixture(scope="module")
def run_threads() -> sl.Result:
    w = sl.workloads.hackbench(groups=2, fds=2, loops=20, ipc="pipe", mode="thread")
    return sl.simulate("vm-2", "v3.8", w, seed=3, trace=True, interval_s=0.0005)


@pytest.fixture(scope="module")
def decoded_threads(run_threads: sl.Result, tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("pft") / "run.pftrace"
    run_threads.to_perfetto(path)
    return pb.Trace.FromString(path.read_bytes())


def test_balance_trace_frame_agrees_with_schedstat(run6):
    bt = run6.balance_trace
    assert bt is not None and not run6.balance_trace_truncated
    assert bt.columns == [
        "time_ns", "cpu", "kind", "dst_cpu", "domain", "level", "idle",
        "outcome", "moved", "busiest", "active", "cost_ns",
    ]  # fmt: skip
    assert bt.height > 10
    assert bt["level"].null_count() == 0
    ss = run6.schedstat
    passes = bt.filter(pl.col("kind") != "active")
    for idle in ("idle", "busy", "newidle"):
        p = passes.filter(pl.col("idle") == idle)
        assert p.height == ss[f"lb_count_{idle}"].sum()
        assert (p["outcome"] == "balanced").sum() == ss[f"lb_balanced_{idle}"].sum()
        assert (p["outcome"] == "failed").sum() == ss[f"lb_failed_{idle}"].sum()
        assert p["moved"].sum() == ss[f"lb_gained_{idle}"].sum()
    # a 6 ms run is shorter than a busy CPU's balance interval: no periodic pass
    assert set(bt["kind"].to_list()) == {"newidle", "nohz"}
    assert (bt.filter(pl.col("kind") == "nohz")["idle"] == "idle").all()
    assert (bt["cost_ns"] > 0).all()
    moved = bt.filter(pl.col("outcome") == "moved")
    assert (moved["moved"] > 0).all() and moved["busiest"].null_count() == 0


def test_periodic_passes_of_busy_cpus_are_rows():
    r = sl.simulate(
        "vm-2", "v3.8", sl.workloads.spinners(nice=[0, 0, 0]), duration_s=0.5, seed=1, trace=True
    )
    bt = r.balance_trace
    assert bt["kind"].unique().to_list() == ["periodic"]
    assert bt["idle"].unique().to_list() == ["busy"]
    assert bt.height == r.schedstat["lb_count_busy"].sum() > 5
    assert (bt["cpu"] == bt["dst_cpu"]).all() and bt["level"].unique().to_list() == ["MC"]


def expected_balance_slices(r: sl.Result):
    """Per balancer track, (begin, end, name, outcome, moved) laid end to end."""
    out = defaultdict(list)
    free: dict[int, int] = defaultdict(int)
    end = round(r.sim_time_s * 1e9)
    for row in r.balance_trace.iter_rows(named=True):
        start = max(row["time_ns"], free[row["cpu"]])
        free[row["cpu"]] = start + row["cost_ns"]
        name = f"{row['kind']} {row['level']}"
        out[f"CPU {row['cpu']} balancer"].append(
            (start, min(free[row["cpu"]], end), name, row["outcome"], row["moved"])
        )
    return out


def test_balancer_slices_are_the_balance_trace_in_order(run6, decoded6):
    expected = expected_balance_slices(run6)
    got = defaultdict(list)
    open_: dict[str, tuple] = {}
    for t, track, e in events(decoded6):
        if not track.endswith(" balancer"):
            continue
        if e.type == TE.TYPE_SLICE_BEGIN:
            assert track not in open_
            a = {d.name: d for d in e.debug_annotations}
            open_[track] = (t, e.name, a["outcome"].string_value, a["moved"].int_value)
        else:
            assert e.type == TE.TYPE_SLICE_END
            b, name, outcome, moved = open_.pop(track)
            got[track].append((b, t, name, outcome, moved))
    assert not open_
    assert sum(len(v) for v in got.values()) == run6.balance_trace.height
    assert got == expected


def test_pelt_counters_are_the_pelt_trace(run6, decoded6):
    pt = run6.pelt_trace
    assert pt is not None and pt.height == run6.vmstat.height * 2
    assert pt["time_s"].unique(maintain_order=True).to_list() == run6.vmstat["time_s"].to_list()
    got = defaultdict(list)
    for t, track, e in events(decoded6):
        if e.type == TE.TYPE_COUNTER and track.endswith(("util_avg", "load_avg")):
            got[track].append((t, e.counter_value))
    for c in range(2):
        rows = pt.filter(pl.col("cpu") == c)
        for col in ("util_avg", "load_avg"):
            assert got[f"CPU {c} {col}"] == list(
                zip(rows["time_ns"].to_list(), rows[col].to_list(), strict=True)
            )
    assert pt["util_avg"].max() > 100
    # the file's last sample is r.cpus's end-of-run value
    last = pt.filter(pl.col("time_ns") == pt["time_ns"].max()).sort("cpu")
    assert last["util_avg"].to_list() == run6.cpus["util_avg"].to_list()


def test_without_pelt_or_trace_there_is_no_pelt_trace(run):
    assert run.pelt_trace is None  # v3.8: Kernel.pelt = "off"
    r = sl.simulate("vm-2", "v6.18", sl.workloads.pipe_pingpong(loops=10))
    assert r.pelt_trace is None and r.balance_trace is None


def test_threads_sit_under_their_processes(run_threads, decoded_threads):
    decoded6 = decoded_threads
    tasks = run_threads.tasks
    assert tasks["process"].unique().to_list() == ["hackbench"]
    assert tasks["tgid"].unique().to_list() == [1]
    procs = {}
    threads = {}
    for p in decoded6.packet:
        d = p.track_descriptor
        if d.HasField("process"):
            procs[d.uuid] = (d.process.pid, d.process.process_name)
        if d.HasField("thread"):
            threads[d.thread.tid] = (d.uuid, d.parent_uuid, d.thread.pid, d.thread.thread_name)
    assert sorted(procs.values()) == [(1, "hackbench")]
    assert sorted(threads) == tasks["task"].to_list()
    for pid, name, tgid in tasks.select("task", "name", "tgid").iter_rows():
        uuid, parent, tpid, tname = threads[pid]
        assert (procs[parent], tpid, tname) == ((tgid, "hackbench"), tgid, name)
    # a thread's slices are its stretches on the CPUs, in order
    by_uuid = {v[0]: k for k, v in threads.items()}
    names = tracks(decoded6)
    cpu_runs = defaultdict(list)
    thread_runs = defaultdict(list)
    running = {}
    for p in decoded6.packet:
        e = p.track_event
        if not p.HasField("track_event") or e.type not in (TE.TYPE_SLICE_BEGIN, TE.TYPE_SLICE_END):
            continue
        if e.track_uuid in by_uuid:
            thread_runs[by_uuid[e.track_uuid]].append((e.type, p.timestamp))
        elif cpu_track(names.get(e.track_uuid, "")):
            if e.type == TE.TYPE_SLICE_BEGIN:
                pid = next(a.int_value for a in e.debug_annotations if a.name == "pid")
                running[e.track_uuid] = pid
                cpu_runs[pid].append((e.type, p.timestamp))
            else:
                cpu_runs[running.pop(e.track_uuid)].append((e.type, p.timestamp))
    assert thread_runs == cpu_runs and len(thread_runs) == tasks.height


def test_process_mode_and_volano_name_their_processes():
    w = sl.workloads.hackbench(groups=1, fds=2, loops=2, ipc="pipe", mode="process")
    t = sl.simulate("vm-2", "v3.8", w, seed=1).tasks
    assert t["tgid"].to_list() == t["task"].to_list()
    assert t["process"].to_list() == t["name"].to_list()
    v = sl.simulate("vm-2", "v3.8", sl.workloads.volano(rooms=1, users=2, messages=2), seed=1)
    t = v.tasks
    assert set(t["process"].to_list()) == {"java"}
    leaders = t.group_by("tgid").agg(pl.col("name").first()).sort("tgid")
    assert leaders["name"].to_list() == ["client-recv/0", "server-recv/0"]
