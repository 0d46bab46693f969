"""Result.to_perfetto / schedlab run --perfetto: the written file, decoded with
Perfetto's bundled protos, holds r.trace's switches as per-CPU slices (same
switches, same order), its wake-ups as flows into the woken task's next
slice, its migrations as instant events, and the vmstat run-queue samples
as counters."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

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
            yield p.timestamp, names[p.track_event.track_uuid], p.track_event


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
        if e.type in (TE.TYPE_SLICE_BEGIN, TE.TYPE_SLICE_END)
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
        if e.type == TE.TYPE_COUNTER:
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
