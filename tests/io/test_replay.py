"""Replaying a recorded schedule (workloads.from_trace, io.replay): the
parser on perf script, ftrace and the model's own export; dependencies
follow the model's waker, timed sleeps stay timed, forks and exits where
they were; the default filter; refusals. No perf needed: the recordings
are texts."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import schedlab as sl
from schedlab.io.script import OPS

W = sl.workloads
DATA = Path(__file__).parents[1] / "data" / "replay"


def _perf(comm: str, pid: int, cpu: int, us: int, ev: str, rest: str, tgid: int = 0) -> str:
    ids = f"{tgid}/{pid}" if tgid else str(pid)
    return f"{comm:>16} {ids} [{cpu:03d}] {us // 10**6}.{us % 10**6:06d}: sched:{ev}: {rest}"


def _ftrace(comm: str, pid: int, cpu: int, us: int, ev: str, rest: str) -> str:
    head = f"{comm + '-' + str(pid):>22} [{cpu:03d}] ....."
    return f"{head} {us // 10**6}.{us % 10**6:06d}: {ev}: {rest}"


def _switch(a: str, ap: int, state: str, b: str, bp: int) -> str:
    return (
        f"prev_comm={a} prev_pid={ap} prev_prio=120 prev_state={state} ==> "
        f"next_comm={b} next_pid={bp} next_prio=120"
    )


def _pingpong(fmt, rounds: int = 10, gap_us: int = 5000) -> list[str]:
    """A on CPU 0 and B on CPU 1 hand a token back and forth: each runs
    100 µs, wakes the other and blocks; the recording shows each woken
    task switched in ``gap_us`` after its wake-up (a busy machine)."""
    lines = []
    t = 1_000_000
    lines.append(fmt("swapper/0", 0, 0, t, "sched_switch", _switch("swapper/0", 0, "R", "a", 100)))
    who = [("a", 100, 0), ("b", 101, 1)]
    for i in range(2 * rounds):
        name, pid, cpu = who[i % 2]
        oname, opid, ocpu = who[(i + 1) % 2]
        t += 100
        lines.append(
            fmt(
                name,
                pid,
                cpu,
                t,
                "sched_waking",
                f"comm={oname} pid={opid} prio=120 target_cpu={ocpu:03d}",
            )
        )
        lines.append(
            fmt(name, pid, cpu, t + 1, "sched_switch", _switch(name, pid, "S", f"swapper/{cpu}", 0))
        )
        t += gap_us
        lines.append(
            fmt(
                "swapper",
                0,
                ocpu,
                t,
                "sched_switch",
                _switch(f"swapper/{ocpu}", 0, "R", oname, opid),
            )
        )
    return lines


def test_a_dependency_follows_the_models_waker_not_the_recorded_time():
    w = W.from_trace(_pingpong(_perf))
    rec = w.recorded
    assert rec["tasks"] == 2
    assert rec["dependencies"] == 20
    assert rec["elapsed_s"] > 0.1  # 20 gaps of 5 ms
    r = sl.simulate("vm-2", "v6.18", w)
    assert r.ok
    # The model wakes each task when its waker gets there: 20 bursts of
    # 100 µs plus the model's wake-up costs, far from the recorded 100 ms.
    assert 0.002 <= r.sim_time_s < 0.01, r.sim_time_s
    assert r.tasks["voluntary_cs"].sum() >= 19
    # Twice the work, about twice the time: the pace is the replay's.
    r2 = sl.simulate("vm-2", "v6.18", W.from_trace(_pingpong(_perf), time_scale=2.0))
    assert 1.6 < r2.sim_time_s / r.sim_time_s < 2.2


def test_ftrace_and_perf_script_give_the_same_programs():
    a = W.from_trace(_pingpong(_perf))
    b = W.from_trace(_pingpong(_ftrace))
    assert a.params == b.params
    assert a.recorded == b.recorded


def test_threads_of_one_process_share_an_address_space():
    lines = []
    for ln in _pingpong(_perf):
        # perf script -F pid,tid: "100/101" is thread 101 of process 100
        lines.append(ln.replace(" 100 [", " 100/100 [").replace(" 101 [", " 100/101 ["))
    w = W.from_trace(lines)
    assert [t["mm"] for t in w.params["tasks"]] == [100, 100]
    r = sl.simulate("vm-2", "v6.18", w)
    assert r.tasks["tgid"].n_unique() == 1


def test_a_timed_sleep_stays_timed():
    lines = [
        _perf("swapper", 0, 0, 1_000_000, "sched_switch", _switch("swapper/0", 0, "R", "t", 7)),
        _perf("t", 7, 0, 1_001_000, "sched_switch", _switch("t", 7, "S", "swapper/0", 0)),
        # woken from the idle task (a timer), 10 ms later
        _perf("swapper", 0, 0, 1_011_000, "sched_waking", "comm=t pid=7 prio=120 target_cpu=000"),
        _perf("swapper", 0, 0, 1_011_005, "sched_switch", _switch("swapper/0", 0, "R", "t", 7)),
        _perf("t", 7, 0, 1_012_005, "sched_switch", _switch("t", 7, "Z", "swapper/0", 0)),
    ]
    w = W.from_trace(lines)
    assert w.recorded["timed_sleeps"] == 1 and w.recorded["dependencies"] == 0
    ops = [OPS[o] for o in w.params["tasks"][0]["op"]]
    assert ops == ["run", "sleep", "run"]
    assert w.params["tasks"][0]["a"][1] == 10_000_000
    r = sl.simulate("vm-2", "v6.18", w)
    assert 0.012 <= r.sim_time_s < 0.0125


def test_forks_and_prio_are_replayed():
    lines = [
        _perf("swapper", 0, 0, 1_000_000, "sched_switch", _switch("swapper/0", 0, "R", "p", 10)),
        _perf(
            "p", 10, 0, 1_002_000, "sched_process_fork", "comm=p pid=10 child_comm=p child_pid=11"
        ),
        _perf("p", 10, 0, 1_002_001, "sched_wakeup_new", "comm=p pid=11 prio=125 target_cpu=001"),
        _perf(
            "swapper",
            0,
            1,
            1_002_010,
            "sched_switch",
            "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
            "next_comm=p next_pid=11 next_prio=125",
        ),
        _perf(
            "p",
            11,
            1,
            1_003_010,
            "sched_switch",
            "prev_comm=p prev_pid=11 prev_prio=125 prev_state=Z ==> "
            "next_comm=swapper/1 next_pid=0 next_prio=120",
        ),
        _perf("p", 10, 0, 1_004_000, "sched_switch", _switch("p", 10, "Z", "swapper/0", 0)),
    ]
    w = W.from_trace(lines)
    parent, child = w.params["tasks"]
    assert [OPS[o] for o in parent["op"]] == ["run", "fork", "run"]
    assert child["start"] == "fork" and child["nice"] == 5
    r = sl.simulate("vm-2", "v6.18", w)
    assert r.ok and r.tasks.height == 2
    assert r.tasks["nice"].to_list() == [0, 5]


def test_a_real_perf_sched_recording_keeps_the_benchmark_only():
    lines = gzip.decompress((DATA / "perf-messaging-g1-l2-pipe.txt.gz").read_bytes())
    w = W.from_trace(lines.decode().splitlines())
    rec = w.recorded
    # perf bench sched messaging -g 1: its main task (perf-exec) and 40
    # workers; the recording perf process and kernel threads are left out.
    assert rec["tasks"] == 41
    names = {t["name"] for t in w.params["tasks"]}
    assert names == {"sched-messaging"}
    assert rec["dependencies"] > 100
    r = sl.simulate("vm-2", "v6.18", w)
    assert r.ok and r.tasks.height == 41
    assert r.tasks["exited"].all()
    # The gzipped file itself reads the same.
    assert W.from_trace(DATA / "perf-messaging-g1-l2-pipe.txt.gz").recorded == rec
    # Filtering by name: only the named tasks.
    assert (
        W.from_trace(lines.decode().splitlines(), tasks="sched-messaging").recorded["tasks"] == 41
    )


def test_the_models_own_export_replays(tmp_path):
    r = sl.simulate("vm-2", "v6.18", W.hackbench(groups=1, loops=5), trace=True)
    p = tmp_path / "run.txt"
    r.to_ftrace(p)
    w = W.from_trace(p)
    assert w.recorded["tasks"] == r.tasks.height
    rr = sl.simulate("vm-2", "v6.18", w)
    assert rr.ok
    # The replay's CPU time is the recorded one (plus the model's costs of
    # the replay's own switches and wake-ups).
    assert rr.metrics["task_clock_s"] >= 0.9 * w.recorded["cpu_s"]


def test_refusals_name_the_problem(tmp_path):
    with pytest.raises(sl.ConfigError, match="no sched_"):
        W.from_trace(["hello", "world"])
    with pytest.raises(sl.ConfigError, match="tasks=.*named"):
        W.from_trace(_pingpong(_perf), tasks=["nosuch"])
    with pytest.raises(sl.ConfigError, match="time_scale"):
        W.from_trace(_pingpong(_perf), time_scale=0)
    with pytest.raises(sl.ConfigError, match="path="):
        W.from_trace(tmp_path / "missing.txt")
    with pytest.raises(sl.ConfigTypeError, match="path"):
        W.from_trace(42)
    # A perf.data without perf on PATH names the conversion.
    fake = tmp_path / "perf.data"
    fake.write_bytes(b"PERFILE2" + b"\0" * 64)
    import shutil

    if shutil.which("perf") is None:
        with pytest.raises(sl.ConfigError, match="perf script"):
            W.from_trace(fake)


def test_replay_runs_under_a_change():
    # The replay is a workload like any other: with_tasks changes it.
    w = W.from_trace(_pingpong(_perf)).with_tasks(cpus=[0])
    r = sl.simulate("vm-2", "v6.18", w)
    assert r.ok and set(r.tasks["cpu"].to_list()) == {0}
    rb = sl.simulate("vm-2", "v6.18", W.from_trace(_pingpong(_perf)).with_tasks(policy="batch"))
    assert rb.ok


def test_cli_measure_record_and_rt_app_refuse_bad_arguments(capsys):
    from schedlab.cli import main

    # record needs a command and -o; '--' belongs to record only; rt-app one file
    assert main(["measure", "record", "-o", "x.txt"]) == 2
    assert "expected a command" in capsys.readouterr().err
    assert main(["measure", "record", "--", "true"]) == 2
    assert "-o FILE.txt" in capsys.readouterr().err
    assert main(["measure", "rt-app"]) == 2
    assert "one rt-app JSON file" in capsys.readouterr().err
    assert main(["measure", "hackbench", "extra"]) == 2
    assert "takes options only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--", "true"])


# --- reading a trace: its layouts, refusals, the op limit, memory --------------------


TC_SAMPLE = DATA / "pingpong.trace-cmd.txt"  # trace-cmd report's default text
FT_SAMPLE = DATA / "pingpong.ftrace.txt"  # the same schedule as the kernel's trace file


def test_trace_cmd_reports_default_format_gives_the_ftrace_programs():
    # trace-cmd report prints sched_switch and sched_wakeup(_new) in
    # libtraceevent's plugin layout ("a:100 [120] S ==> swapper/0:0 [120]",
    # "b:101 [120] CPU:001"), the other events as the kernel does
    tc, ft = W.from_trace(TC_SAMPLE), W.from_trace(FT_SAMPLE)
    assert tc.params == ft.params
    assert tc.recorded == ft.recorded
    rec = tc.recorded
    # a and b hand a token back and forth; b forks my:app, which blocks
    # (D|K) and is woken by an interrupt; the kernel thread is left out
    assert rec["tasks"] == 3 and rec["dependencies"] == 9 and rec["timed_sleeps"] == 2
    assert rec["involuntary_cs"] == 1 and rec["voluntary_cs"] == 14
    names = [t["name"] for t in tc.params["tasks"]]
    assert names == ["a", "b", "my:app"]
    assert tc.params["tasks"][2]["start"] == "fork"
    assert sl.simulate("vm-2", "v6.18", tc).ok


def test_trace_cmd_layouts_of_each_event_parse():
    from schedlab.io import replay

    lines = [
        # trace-cmd 2.x, no latency column (the kernel's and trace-cmd's
        # sched_switch states: R+, D|K, S)
        "  bash-1234  [001]  5678.901234: sched_switch:         bash:1234 [120] S ==> "
        "swapper/1:0 [120]",
        "  <idle>-0     [000] d..2. 5678.901240: sched_switch:   swapper/0:0 [120] R+ ==> "
        "Web Content:77 [98]",
        "  Web Content-77 [000] d..2. 5678.901250: sched_switch:   Web Content:77 [98] D|K ==> "
        "kworker/u8:2:12 [120]",
        "  kworker/u8:2-12 [000] dNh2. 5678.901260: sched_wakeup:  bash:1234 [120] CPU:001",
        "  kworker/u8:2-12 [000] dNh2. 5678.901261: sched_wakeup_new: x:y:9 [120] success=1 "
        "CPU:000",
        "  kworker/u8:2-12 [000] dNh2. 5678.901262: sched_waking:  comm=bash pid=1234 prio=120 "
        "target_cpu=001",
    ]
    ev = replay.parse(lines)
    s = [e.fields for e in ev]
    assert s[0] == replay.Switch("bash", 1234, 120, "S", "swapper/1", 0, 120)
    assert s[1] == replay.Switch("swapper/0", 0, 120, "R+", "Web Content", 77, 98)
    assert s[2] == replay.Switch("Web Content", 77, 98, "D|K", "kworker/u8:2", 12, 120)
    # the CPU woken on: trace-cmd's CPU:N, the kernel's target_cpu=N
    assert s[3] == replay.Wake("bash", 1234, 120, 1) == s[5]
    assert s[4] == replay.Wake("x:y", 9, 120, 0)
    assert replay.parse([lines[3].replace(" CPU:001", "")])[0].fields.target_cpu == -1
    assert [(e.pid, e.cpu, e.comm) for e in ev[:3]] == [
        (1234, 1, "bash"),
        (0, 0, "<idle>"),
        (77, 0, "Web Content"),
    ]
    assert ev[0].ts == 5678_901234_000
    # the kernel's layout of the same fields, for a replay that reads it
    assert ev[1].rest == (
        "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R+ ==> "
        "next_comm=Web Content next_pid=77 next_prio=98"
    )


def test_a_perf_line_of_a_task_perf_could_not_name_is_read():
    # perf script prints ":-1 -1/-1" for the common task of an event it
    # cannot name (here the switch away from an exiting worker): the
    # event counts, and no task -1 appears
    lines = gzip.decompress((DATA / "perf-messaging-g1-l2-pipe.txt.gz").read_bytes())
    text = lines.decode().splitlines()
    unnamed = [ln for ln in text if ln.lstrip().startswith(":-1")]
    assert len(unnamed) == 1 and "prev_state=X" in unnamed[0]
    w = W.from_trace(text)
    assert w.recorded["context_switches"] == 464  # 463 without that line
    from schedlab.io import replay

    assert -1 not in replay._scan(replay.parse(text))[0]


def _pingpong_file(tmp_path, lines):
    p = tmp_path / "t.txt"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_a_malformed_line_of_an_event_the_replay_reads_is_refused(tmp_path):
    good = _pingpong(_ftrace)
    assert "sched_switch" in good[2]
    cases = [
        (good[2].replace("prev_pid=100", "prev_pid=x"), "sched_switch line whose fields"),
        (good[1].replace("pid=101", "pid=1e3"), "sched_waking line whose fields"),
        (good[2].replace(" 1.000101:", " 1000101:"), "sched_switch line whose start"),  # a counter
        (good[2][:-20], "sched_switch line whose fields"),  # cut short
    ]
    for bad, what in cases:
        lines = [*good[:2], bad, *good[3:]]
        with pytest.raises(sl.ConfigError, match=r"invalid path\[2\]: '.*: a " + what) as e:
            W.from_trace(lines)
        assert "expected " in str(e.value)
        p = _pingpong_file(tmp_path, lines)
        with pytest.raises(sl.ConfigError, match=r"invalid path='.*t\.txt', line 3: ") as e:
            W.from_trace(p)
        assert "expected " in str(e.value)
    # a long line is shown shortened
    long = good[2].replace("prev_pid=100", "prev_pid=x" + "y" * 5000)
    with pytest.raises(sl.ConfigError, match=r"'\.\.\. \(5\d{3} characters\): a sched_switch") as e:
        W.from_trace([*good[:2], long])
    assert len(str(e.value)) < 700


def test_other_lines_are_skipped():
    good = _pingpong(_ftrace)
    noise = [
        "# sched_switch: a comment",
        "cpus=2",
        "  bash-1 [000] d..2. 1.000000: irq_handler_entry: irq=1 name=sched_switch:",
        "  bash-1 [000] d..2. 1.000000: tracing_mark_write: sched_switch: a marker",
        "  kworker/0:1-9 [000] d..2. 1.000000: sched_stat_runtime: any text at all",
        "",
    ]
    w = W.from_trace([*noise, *good[:5], *noise, *good[5:]])
    assert w.params == W.from_trace(good).params


def _endless_pingpong(rounds: int, used: list[int]):
    """perf script text of ``rounds`` of a ping-pong; ``used`` counts the
    lines taken."""
    t = 1_000_000
    for i in range(rounds):
        (n, p, c), (on, op, oc) = [("a", 100, 0), ("b", 101, 1)][:: 1 if i % 2 == 0 else -1]
        for ln in (
            _perf(n, p, c, t, "sched_waking", f"comm={on} pid={op} prio=120 target_cpu=00{oc}"),
            _perf(n, p, c, t + 1, "sched_switch", _switch(n, p, "S", f"swapper/{c}", 0)),
            _perf("swapper", 0, oc, t + 50, "sched_switch", _switch("swapper", 0, "R", on, op)),
        ):
            used[0] += 1
            yield ln
        t += 100


def test_a_trace_past_the_op_limit_is_refused_while_it_is_read(monkeypatch):
    from schedlab.io import replay

    monkeypatch.setattr(sl._core, "SCRIPT_MAX_OPS", 300)
    used = [0]
    with pytest.raises(sl.ConfigError, match=r"limit of 300 operations") as e:
        replay.from_lines(_endless_pingpong(100_000, used))
    assert "path[" in str(e.value) and "tasks=" in str(e.value)
    assert used[0] < 3_000, used[0]  # not the 300,000 lines
    # a trace within the limit replays; many switches of tasks left out
    # (kernel threads) do not count
    used = [0]
    lines = list(_endless_pingpong(40, used))
    kthreads = [
        _perf(
            "kworker/0:1",
            9,
            0,
            900_000 + i,
            "sched_switch",
            _switch("kworker/0:1", 9, "I", "kworker/0:2", 8),
        )  # fmt: skip
        for i in range(2_000)
    ]
    script, rec = replay.from_lines(kthreads + lines)
    assert rec.tasks == 2 and script.nr_ops() <= 300
    # the exact count still decides at the end
    monkeypatch.setattr(sl._core, "SCRIPT_MAX_OPS", script.nr_ops() - 1)
    with pytest.raises(sl.ConfigError, match="operations exceed the limit"):
        W.from_trace(kthreads + lines)


def test_a_list_of_lines_is_kept_compactly_in_the_workload():
    import pickle

    lines = _pingpong(_perf)
    w = W.from_trace(lines, time_scale=2.0)
    src = w.args["path"]
    assert len(repr(w)) < 200 and f"<{len(lines)} trace lines, sha256 " in repr(w)
    assert "prev_comm" not in repr(w.args)
    # equal to the same lines (another list), not to other lines
    assert W.from_trace(list(lines), time_scale=2.0) == w
    assert W.from_trace(lines[:-1], time_scale=2.0).args["path"] != src
    assert hash(src) == hash(W.from_trace(list(lines)).args["path"])
    # picklable, and replace() replays the same lines again
    assert pickle.loads(pickle.dumps(w)) == w
    assert w.replace() == w
    w1 = w.replace(time_scale=1.0)
    assert w1 == W.from_trace(lines) and w1.params != w.params
    # nor does a run's configuration hold them
    r = sl.simulate("vm-2", "v6.18", w)
    assert r.ok and "prev_comm" not in repr(r.config)


def test_parsing_holds_a_compact_event_per_line_not_the_text(tmp_path):
    import tracemalloc

    from schedlab.io import replay

    one = _pingpong(_perf, rounds=100)
    lines = []
    for k in range(50):  # 30,000 lines, each copy 1 s later
        lines += [ln.replace(" 1.", f" {k + 1}.", 1) for ln in one]
    p = _pingpong_file(tmp_path, lines)
    tracemalloc.start()
    try:
        events = replay.parse(replay.read_text(p))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(events) == len(lines)
    # the text is read as it is parsed; an event is a few small tuples
    # sharing their names and numbers (the old parser held the text, a
    # list of its lines and ~500 bytes per event)
    assert peak / len(lines) < 320, peak / len(lines)


def test_a_damaged_gzip_file_is_refused_where_it_breaks(tmp_path):
    data = gzip.compress(FT_SAMPLE.read_bytes() * 50)
    cut, bad = tmp_path / "cut.txt.gz", tmp_path / "bad.txt.gz"
    cut.write_bytes(data[: len(data) // 2])
    damaged = bytearray(data)
    damaged[200:260] = bytes(b ^ 0xFF for b in damaged[200:260])  # zlib.error, not OSError
    bad.write_bytes(bytes(damaged))
    for p in (cut, bad):
        with pytest.raises(sl.ConfigError, match=r"invalid path=.*: not a readable gzip file \("):
            W.from_trace(p)
