"""Result.to_ftrace: the text export, parsed back with a small parser of the
kernel's ``trace`` file layout, holds r.trace's rows one by one (a
sched_waking before each sched_wakeup) with the comms, pids, prios, states,
CPUs and timestamps of r.trace and r.tasks, in the event formats of Linux
v6.18's include/trace/events/sched.h."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import schedlab as sl
from schedlab.io import ftrace

#: one event line: "<comm>-<pid> [CPU] ..... SECS.USECS: <event>: <fields>",
#: the comm right-aligned in 16 columns and the pid left-aligned in 7
LINE = re.compile(
    r"(?P<task>.{16})-(?P<pid>\d+) *(?<=-.{7}) \[(?P<cpu>\d{3})\] \.\.\.\.\. "
    r"(?P<secs> *\d+)\.(?P<frac>\d{6}|\d{9}): (?P<event>\w+): (?P<fields>.*)"
)
FIELDS = {
    "sched_switch": re.compile(
        r"prev_comm=(\S+) prev_pid=(\d+) prev_prio=(\d+) prev_state=(\S+) ==> "
        r"next_comm=(\S+) next_pid=(\d+) next_prio=(\d+)"
    ),
    "wake": re.compile(r"comm=(\S+) pid=(\d+) prio=(\d+) target_cpu=(\d{3})"),
    "sched_migrate_task": re.compile(
        r"comm=(\S+) pid=(\d+) prio=(\d+) orig_cpu=(\d+) dest_cpu=(\d+)"
    ),
    "sched_process_exit": re.compile(r"comm=(\S+) pid=(\d+) prio=(\d+) group_dead=(true|false)"),
}
HEADER = [
    "# tracer: nop",
    "#",
    None,  # entries-in-buffer/entries-written
    "#",
    "#                                _-----=> irqs-off/BH-disabled",
    "#                               / _----=> need-resched",
    "#                              | / _---=> hardirq/softirq",
    "#                              || / _--=> preempt-depth",
    "#                              ||| / _-=> migrate-disable",
    "#                              |||| /     delay",
    "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
    "#              | |         |   |||||     |         |",
]


def parse(path: Path) -> tuple[list[str], list[tuple]]:
    """The header lines and each event line as (ts field, cpu, event, common
    comm, common pid, *the event's fields), numbers as ints."""
    lines = path.read_text(encoding="utf-8").splitlines()
    head, body = lines[: len(HEADER)], lines[len(HEADER) :]
    events = []
    for line in body:
        m = LINE.fullmatch(line)
        assert m, line
        event = m["event"]
        f = FIELDS["wake" if event.startswith(("sched_wak",)) else event].fullmatch(m["fields"])
        assert f, line
        values = tuple(int(v) if v.isdigit() else v for v in f.groups())
        ts = int(m["secs"]) * 10 ** len(m["frac"]) + int(m["frac"])
        events.append((ts, int(m["cpu"]), event, m["task"].strip(), int(m["pid"]), *values))
    return head, events


def expected(r: sl.Result, *, ns: bool = False) -> list[tuple]:
    """r.trace's rows as parse() returns the lines (see module docstring)."""
    t = r.tasks
    names = dict(zip(t["task"].to_list(), t["name"].to_list(), strict=True))
    prios = dict(zip(t["task"].to_list(), t["prio"].to_list(), strict=True))
    tgids = dict(zip(t["task"].to_list(), t["tgid"].to_list(), strict=True))
    alive = t.group_by("tgid").len()
    left = dict(zip(alive["tgid"].to_list(), alive["len"].to_list(), strict=True))

    def comm(pid: int, cpu: int) -> str:
        return f"swapper/{cpu}" if pid == 0 else names[pid]

    def prio(pid: int) -> int:
        return 120 if pid == 0 else prios[pid]

    def who(pid: int) -> str:
        return "<idle>" if pid == 0 else names[pid]

    out = []
    for row in r.trace.iter_rows(named=True):
        ts = row["time_ns"] if ns else (row["time_ns"] + 500) // 1000
        cpu, ev, pid = row["cpu"], row["event"], row["pid"]
        task = (comm(pid, cpu), pid, prio(pid))
        if ev == "sched_switch":
            nxt = row["next_pid"]
            out.append(
                (
                    ts,
                    cpu,
                    ev,
                    who(pid),
                    pid,
                    *task,
                    row["prev_state"],
                    comm(nxt, cpu),
                    nxt,
                    prio(nxt),
                )
            )
        elif ev in ("sched_wakeup", "sched_wakeup_new"):
            waker = row["waker_pid"]
            names_ = ["sched_waking", ev] if ev == "sched_wakeup" else [ev]
            out += [(ts, cpu, e, who(waker), waker, *task, row["target_cpu"]) for e in names_]
        elif ev == "sched_migrate_task":
            out.append((ts, cpu, ev, who(pid), pid, *task, row["orig_cpu"], row["dest_cpu"]))
        else:
            left[tgids[pid]] -= 1
            dead = "true" if left[tgids[pid]] == 0 else "false"
            out.append((ts, cpu, ev, who(pid), pid, *task, dead))
    return out


def hackbench(**kw: Any) -> sl.Workload:
    return sl.workloads.hackbench(groups=2, fds=2, ipc="pipe", **kw)


@pytest.fixture(scope="module")
def run() -> sl.Result:
    return sl.simulate("vm-2", "v3.8", hackbench(loops=5), seed=3, trace=True)


@pytest.fixture(scope="module")
def text(run: sl.Result, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ft") / "run.txt"
    run.to_ftrace(path)
    return path


def test_the_header_is_the_nop_tracers(run, text):
    head, events = parse(text)
    assert head[:2] == HEADER[:2] and head[3:] == HEADER[3:]
    n = len(events)
    assert head[2] == f"# entries-in-buffer/entries-written: {n}/{n}   #P:2"


def test_every_row_of_the_trace_is_a_line_in_order(run, text):
    _, events = parse(text)
    exp = expected(run)
    assert len(exp) == run.trace.height + (run.trace["event"] == "sched_wakeup").sum()
    assert events == exp
    kinds = {e[2] for e in events}
    assert kinds == {
        "sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new",
        "sched_migrate_task", "sched_process_exit",
    }  # fmt: skip
    # idle's lines and fields
    idle = [e for e in events if e[2] == "sched_switch" and e[4] == 0]
    assert idle and all(e[3] == "<idle>" and e[5] == f"swapper/{e[1]}" for e in idle)
    assert {e[8] for e in events if e[2] == "sched_switch"} == {"R", "S", "X"}


def test_the_lines_are_laid_out_as_the_kernel_prints_them(text):
    body = text.read_text().splitlines()[len(HEADER) :]
    assert body[0].startswith(
        "          <idle>-0       [000] .....     0.000000: sched_wakeup_new: "
    )
    assert body[0].endswith(" target_cpu=001")
    assert any(line.startswith("      receiver/0-2       [0") for line in body)


def test_nanosecond_timestamps(run, tmp_path: Path):
    run.to_ftrace(tmp_path / "ns.txt", ns=True)
    _, events = parse(tmp_path / "ns.txt")
    assert events == expected(run, ns=True)
    assert any(e[0] % 1000 for e in events)  # sub-microsecond instants exist


def test_microseconds_round_as_ns2usecs():
    assert ftrace.timestamp_text(0, False) == "    0.000000"
    assert ftrace.timestamp_text(1_499, False) == "    0.000001"
    assert ftrace.timestamp_text(1_500, False) == "    0.000002"
    assert ftrace.timestamp_text(999_999_500, False) == "    1.000000"
    assert ftrace.timestamp_text(123_456_789_012, False) == "  123.456789"
    assert ftrace.timestamp_text(123_456_789_012, True) == "  123.456789012"


def test_group_dead_marks_a_process_s_last_exit(tmp_path: Path):
    r = sl.simulate("vm-2", "v3.8", hackbench(loops=5, mode="thread"), seed=3, trace=True)
    r.to_ftrace(tmp_path / "t.txt")
    _, events = parse(tmp_path / "t.txt")
    assert events == expected(r)
    exits = [e for e in events if e[2] == "sched_process_exit"]
    assert len(exits) == r.tasks.height and {e[-1] for e in exits[:-1]} == {"false"}
    assert exits[-1][-1] == "true"


def test_a_truncated_trace_ends_the_file_at_its_last_row(tmp_path: Path):
    r = sl.simulate("vm-2", "v6.18", hackbench(loops=50), seed=3, trace=True, trace_limit=40)
    assert r.trace_truncated and r.trace.height == 40
    r.to_ftrace(tmp_path / "t.txt")
    _, events = parse(tmp_path / "t.txt")
    assert events == expected(r)
    assert events[-1][0] == (r.trace["time_ns"][-1] + 500) // 1000


def test_long_names_and_spaces_become_ftrace_comms(tmp_path: Path):
    assert ftrace.ftrace_comm("sender/0") == "sender/0"
    assert ftrace.ftrace_comm("a name with spaces") == "a_name_with_spa"
    assert ftrace.ftrace_comm("tab\there") == "tab_here"
    assert ftrace.ftrace_comm("ééééééééé") == "ééééééé"  # 14 bytes: no half character
    assert len(ftrace.ftrace_comm("x" * 40).encode()) == ftrace.TASK_COMM_LEN - 1
    r = sl.simulate("vm-2", "v3.8", hackbench(loops=2), seed=3, trace=True)
    r.__dict__["tasks"] = r.tasks.with_columns(
        pl.format("a sender with a long name #{}", pl.col("task")).alias("name")
    )  # Result.tasks is a cached_property
    r.to_ftrace(tmp_path / "long.txt")
    _, events = parse(tmp_path / "long.txt")
    comms = {e[5] for e in events} | {e[3] for e in events}
    assert comms - {"<idle>", "swapper/0", "swapper/1"} == {"a_sender_with_a"}


def test_a_run_without_trace_and_bad_arguments_are_refused(run, tmp_path: Path, capfd):
    r = sl.simulate("vm-2", "v3.8", sl.workloads.pipe_pingpong(loops=10))
    with pytest.raises(sl.ConfigError, match=r"to_ftrace.*trace=True"):
        r.to_ftrace(tmp_path / "x.txt")
    with pytest.raises(sl.ConfigTypeError, match=r"path: got int 1"):
        run.to_ftrace(1)
    assert capfd.readouterr().out == ""
    with pytest.raises(sl.ConfigError, match=r"invalid path=.*no such directory"):
        run.to_ftrace(tmp_path / "no" / "x.txt")
    with pytest.raises(sl.ConfigTypeError, match=r"invalid type for ns: got str"):
        run.to_ftrace(tmp_path / "x.txt", ns="yes")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()])
def test_an_interrupted_export_leaves_the_old_file_intact(run, tmp_path, monkeypatch, error):
    old = tmp_path / "run.txt"
    old.write_text("the previous trace\n")
    real = ftrace._Formatter.line
    lines = []

    def failing(self, e):
        if len(lines) == 30:
            raise error
        lines.append(e)
        return real(self, e)

    monkeypatch.setattr(ftrace._Formatter, "line", failing)
    with pytest.raises(type(error)):
        run.to_ftrace(old)
    assert len(lines) == 30
    assert old.read_text() == "the previous trace\n"
    assert list(tmp_path.iterdir()) == [old]
