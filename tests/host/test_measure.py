"""``sl.measure`` and ``schedlab measure``: perf's output parsed from
recorded runs (tests/data/perf), and clean refusals; perf is never run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pytest
import schedlab as sl
from schedlab.cli import main
from schedlab.host import measurement as me

DATA = Path(__file__).parents[1] / "data" / "perf"


def _recorded(name: str) -> str:
    return (DATA / f"{name}.stdout").read_text() + "\n" + (DATA / f"{name}.stderr").read_text()


def test_parse_messaging_process_pipe():
    got = me.parse_perf(_recorded("messaging-g1-pipe-process"))
    assert got == {
        "elapsed_s": 0.147,
        "task_clock_s": pytest.approx(0.2333),
        "context_switches": 3482.0,
        "cpu_migrations": 64.0,
    }


def test_parse_messaging_threads_and_pipe_bench():
    got = me.parse_perf(_recorded("messaging-g2-socket-thread"))
    assert got["elapsed_s"] == 0.700
    assert got["task_clock_s"] == pytest.approx(0.91514)
    assert (got["context_switches"], got["cpu_migrations"]) == (6900.0, 283.0)
    pipe = me.parse_perf(_recorded("pipe-thread-pinned"))
    assert pipe["elapsed_s"] == 0.075 and pipe["usecs_per_op"] == 37.9515
    assert (pipe["context_switches"], pipe["cpu_migrations"]) == (4008.0, 0.0)


def test_parse_refuses_uncounted_and_missing():
    text = _recorded("messaging-g1-pipe-process").replace(
        "3482,,context-switches", "<not counted>,,context-switches"
    )
    with pytest.raises(me.MeasureError, match="perf_event_paranoid"):
        me.parse_perf(text)
    with pytest.raises(me.MeasureError, match="elapsed_s"):
        me.parse_perf((DATA / "messaging-g1-pipe-process.stderr").read_text())


def test_commands():
    assert (
        me.bench_command("hackbench", "pipe", "thread", 5, 200, False)
        == (
            "perf stat -x, -e task-clock,context-switches,cpu-migrations -- "
            "perf bench sched messaging -g 5 -l 200 -p -t"
        ).split()
    )
    assert me.bench_command("pipe", "pipe", "process", 1, 1000, True)[5:] == (
        "-- taskset -c 0 perf bench sched pipe -l 1000".split()
    )


def _fake_runner(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    name = "messaging-g2-socket-thread" if "-t" in cmd else "messaging-g1-pipe-process"
    return subprocess.CompletedProcess(
        cmd,
        0,
        (DATA / f"{name}.stdout").read_text(),
        (DATA / f"{name}.stderr").read_text(),
    )


def test_measure_builds_the_frame_from_each_run():
    calls: list[list[str]] = []

    def runner(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        return _fake_runner(cmd)

    df = sl.measure(
        "hackbench",
        groups=[1, 2],
        ipc="pipe",
        mode=["process", "thread"],
        reps=2,
        progress=False,
        runner=runner,
    )
    assert df.columns == list(me.COLUMNS)
    assert df.height == 8 and len(calls) == 8
    assert df["rep"].to_list() == [0] * 4 + [1] * 4
    thread = df.filter(pl.col("mode") == "thread")
    assert set(thread["elapsed_s"]) == {0.7} and set(thread["cpu_migrations"]) == {283.0}
    assert set(df["loops"]) == {200} and df["cpus"][0] >= 1 and df["date"][0]


def test_measure_refuses_when_perf_is_absent(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(me.MeasureError, match="linux-perf"):
        sl.measure("hackbench", groups=1, reps=1, progress=False)
    assert main(["measure", "hackbench", "--groups", "1", "--reps", "1", "--no-progress"]) == 2


def test_paranoid_check_names_the_sysctl():
    me.check_perf_access(2, 1000, "/usr/bin/perf")  # allowed
    me.check_perf_access(4, 0, "/usr/bin/perf")  # root may
    with pytest.raises(me.MeasureError, match=r"kernel\.perf_event_paranoid=2"):
        me.check_perf_access(3, 1000, "/usr/bin/perf")


def test_bad_arguments_name_the_parameter():
    with pytest.raises(sl.ConfigError, match="bench='hackbnch'"):
        sl.measure("hackbnch", progress=False, runner=_fake_runner)
    with pytest.raises(sl.ConfigError, match="ipc='tcp'"):
        sl.measure(ipc="tcp", progress=False, runner=_fake_runner)
    with pytest.raises(sl.ConfigError, match="groups=0"):
        sl.measure(groups=[0], progress=False, runner=_fake_runner)
    with pytest.raises(sl.ConfigTypeError, match="loops"):
        sl.measure(loops=[1, 2], progress=False, runner=_fake_runner)


def test_every_argument_is_checked_before_perf_runs():
    def never(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        raise AssertionError("ran perf")

    def bad(**kw):
        return sl.measure(**{"progress": False, "runner": never, **kw})

    # one value only: a list would silently run with its first
    with pytest.raises(sl.ConfigTypeError, match="invalid type for reps: got list"):
        bad(reps=[3, 4])
    with pytest.raises(sl.ConfigTypeError, match="invalid type for loops: got list"):
        bad(bench="pipe", loops=[1, 2])
    with pytest.raises(sl.ConfigTypeError, match="invalid type for bench: got int"):
        bad(bench=1)
    with pytest.raises(sl.ConfigTypeError, match="invalid type for ipc: got int"):
        bad(ipc=["pipe", 1])
    with pytest.raises(sl.ConfigTypeError, match="invalid type for mode: got NoneType"):
        bad(mode=None)
    with pytest.raises(sl.ConfigError, match=r"invalid groups=\[1, 1\]: a value named twice"):
        bad(groups=[1, 1])
    with pytest.raises(sl.ConfigError, match="invalid mode=.*named twice"):
        bad(mode=["thread", "thread"])
    with pytest.raises(sl.ConfigError, match="invalid pinned=.*named twice"):
        bad(bench="pipe", pinned=[True, True])
    with pytest.raises(sl.ConfigTypeError, match="invalid type for perf: got int"):
        sl.measure(perf=0, progress=False)
    with pytest.raises(sl.ConfigTypeError, match="invalid type for progress: got str"):
        bad(progress="no")
    with pytest.raises(sl.ConfigTypeError, match="invalid type for runner: got str"):
        sl.measure(progress=False, runner="perf")
