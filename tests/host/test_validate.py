"""measure's changes (chrt, nice, taskset, RT sysctls; /proc/interrupts)
and validate's predicted-vs-measured effects, from recorded output: perf,
chrt and root are never needed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pytest
import schedlab as sl
from schedlab.cli import _change
from schedlab.host import changes as ch
from schedlab.host import measurement as me

DATA = Path(__file__).parents[1] / "data" / "perf"
REAL = Path(__file__).parents[2] / "notebooks" / "data" / "policy-effects-vm2.parquet"


def _ok(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    name = "messaging-g2-socket-thread" if "-t" in cmd else "messaging-g1-pipe-process"
    return subprocess.CompletedProcess(
        cmd, 0, (DATA / f"{name}.stdout").read_text(), (DATA / f"{name}.stderr").read_text()
    )


def _measure_one(reps=1, **kw):
    """One hackbench configuration (pipe, process, 2 groups), ``reps`` reps,
    and ``kw`` (the runner, the changes, ...)."""
    return sl.measure(
        "hackbench", groups=2, ipc="pipe", mode="process", reps=reps, progress=False, **kw
    )


def test_interrupt_rows_are_summed_over_cpus():
    before = (DATA / "interrupts-before.txt").read_text()
    after = (DATA / "interrupts-after.txt").read_text()
    assert ch.parse_interrupts(before) == {"cpus": 2, "IWI": 0, "RES": 445410, "CAL": 1302685}
    assert ch.interrupt_deltas(before, after) == {
        "res_ipis": 139.0,
        "cal_ipis": 38.0,
        "iwi_ipis": 0.0,
    }
    nan = ch.interrupt_deltas(None, after)
    assert all(v != v for v in nan.values())


def test_odd_interrupt_tables_give_nan_not_garbage():
    after = (DATA / "interrupts-after.txt").read_text()
    before = (DATA / "interrupts-before.txt").read_text()
    # a leading blank line is skipped
    assert ch.interrupt_deltas("\n" + before, after)["res_ipis"] == 139.0
    # a CPU added between the snapshots (hotplug): no delta
    three = before.replace("CPU1", "CPU1       CPU2", 1)
    assert all(v != v for v in ch.interrupt_deltas(three, after).values())
    # not a table, or not text
    for bad in ("", "garbage", 3, b"CPU0"):
        assert all(v != v for v in ch.interrupt_deltas(bad, after).values())
    # arm64 numbers its IPI rows: found by description
    arm = (
        "           CPU0       CPU1\n"
        "IPI0:        10         20       Rescheduling interrupts\n"
        "IPI1:         5          6       Function call interrupts\n"
    )
    assert ch.parse_interrupts(arm) == {"cpus": 2, "RES": 30, "CAL": 11}


def test_changes_become_chrt_nice_and_taskset():
    fifo = ch.normalise({"policy": "fifo"})
    assert fifo["rt_priority"] == 1 and fifo["name"] == "policy=fifo rt_priority=1"
    assert ch.prefix(fifo) == ["chrt", "--fifo", "1"]
    both = ch.normalise({"policy": "batch", "nice": 5, "affinity": [1, 0, 1]})
    assert ch.prefix(both) == ["taskset", "-c", "0,1", "nice", "-n", "5", "chrt", "--batch", "0"]
    assert ch.prefix(ch.normalise({"policy": "normal"})) == ["chrt", "--other", "0"]
    cmd = me.bench_command("hackbench", "pipe", "thread", 2, 200, False, "perf", both)
    assert cmd[: cmd.index("perf", 1)][-9:] == ch.prefix(both)
    assert ch.sysctl_values(ch.normalise({"rt_runtime_us": -1, "rt_period_us": 10**6})) == {
        "rt_period_us": 10**6,
        "rt_runtime_us": -1,
    }


@pytest.mark.parametrize(
    "change, match",
    [
        ({"policy": "deadline"}, "policy='deadline'"),
        ({"policy": "batch", "rt_priority": 3}, "rt_priority=3: only with policy"),
        ({"policy": "fifo", "rt_priority": 100}, "rt_priority=100"),
        ({"nice": 30}, "nice=30"),
        ({"affinity": []}, "affinity=\\[\\]"),
        ({"rt_runtime_us": -2}, "rt_runtime_us=-2"),
        ({"prio": 1}, "unknown keys \\['prio'\\]"),
    ],
)
def test_bad_changes_name_the_key(change, match):
    with pytest.raises((sl.ConfigError, sl.ConfigTypeError), match=match):
        ch.normalise(change)


def test_measure_runs_each_change_and_restores_the_sysctl(tmp_path):
    (tmp_path / "sched_rt_runtime_us").write_text("950000\n")
    seen: list[tuple[list[str], str]] = []
    snaps = iter(
        [(DATA / "interrupts-before.txt").read_text(), (DATA / "interrupts-after.txt").read_text()]
        * 100
    )

    def runner(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        seen.append((cmd, (tmp_path / "sched_rt_runtime_us").read_text().strip()))
        return _ok(cmd)

    df = _measure_one(
        reps=2,
        runner=runner,
        changes=[{"name": "fifo, no throttling", "policy": "fifo", "rt_runtime_us": -1}],
        interrupts=lambda: next(snaps),
        sysctl_root=tmp_path,
    )
    assert df.columns == list(me.COLUMNS)
    assert df["change"].to_list() == ["plain", "fifo, no throttling"] * 2
    assert [s for _, s in seen] == ["950000", "-1"] * 2  # set for the run only
    assert (tmp_path / "sched_rt_runtime_us").read_text().strip() == "950000"
    assert "chrt" in seen[1][0] and "chrt" not in seen[0][0]
    assert set(df["res_ipis"]) == {139.0}
    assert df.filter(pl.col("change") != "plain")["rt_runtime_us"].to_list() == [-1, -1]


def test_the_sysctl_is_restored_on_ctrl_c(tmp_path):
    (tmp_path / "sched_rt_runtime_us").write_text("950000\n")

    def runner(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        if "chrt" in cmd:
            raise KeyboardInterrupt
        return _ok(cmd)

    with pytest.raises(KeyboardInterrupt):
        _measure_one(
            runner=runner,
            changes=[{"policy": "fifo", "rt_runtime_us": -1}],
            interrupts=lambda: None,
            sysctl_root=tmp_path,
        )
    assert (tmp_path / "sched_rt_runtime_us").read_text().strip() == "950000"


def test_a_change_not_permitted_is_refused_cleanly(tmp_path):
    def runner(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        if "chrt" in cmd:
            return subprocess.CompletedProcess(
                cmd, 1, "", "chrt: failed to set pid 0's policy: Operation not permitted\n"
            )
        return _ok(cmd)

    with pytest.raises(sl.MeasureError, match="CAP_SYS_NICE"):
        _measure_one(runner=runner, changes=[{"policy": "rr"}])
    # a sysctl this process cannot write (here: absent)
    with pytest.raises(sl.MeasureError, match="cannot read kernel.sched_rt_runtime_us"):
        _measure_one(
            runner=runner, changes=[{"rt_runtime_us": -1}], sysctl_root=tmp_path / "nowhere"
        )


def test_change_names_must_differ_and_the_plain_run_is_always_there():
    with pytest.raises(sl.ConfigError, match="used twice"):
        ch.need_changes([{"policy": "batch", "name": "x"}, {"policy": "idle", "name": "x"}])
    assert [c["name"] for c in ch.need_changes([{}, {"nice": 5}])] == ["plain", "nice=5"]


def test_cli_change_syntax():
    assert _change("policy=fifo rt_priority=2 affinity=0,1 name=x") == {
        "policy": "fifo",
        "rt_priority": 2,
        "affinity": [0, 1],
        "name": "x",
    }
    with pytest.raises(sl.ConfigError, match="key=value"):
        _change("fifo")


def test_calibrate_refuses_changed_rows():
    real = pl.read_parquet(REAL)
    with pytest.raises(sl.ConfigError, match="calibrate fits plain runs only"):
        sl.calibrate(real, "vm-2", "v6.18", progress=False, max_evaluations=1)


def test_validate_predicts_the_modelled_changes_and_flags_the_rest():
    real = pl.read_parquet(REAL).filter(
        (pl.col("groups") == 2)
        & pl.col("change").is_in(["plain", "chrt --batch 0", "taskset -c 0", "chrt --fifo 1"])
    )
    v = sl.validate(real, "vm-2", "v6.18", seeds=1, progress=False, max_evaluations=1)
    e = v.effects
    assert set(e["change"]) == {"chrt --batch 0", "taskset -c 0", "chrt --fifo 1"}
    fifo = e.filter(pl.col("change") == "chrt --fifo 1")
    assert fifo["modelled"].all() and fifo["predicted"].null_count() == 0
    # equal-priority FIFO tasks never preempt each other: far fewer switches
    # (measured in all four variants; the model has it for three: under FIFO
    # socket threads switch more than plain, ×1.3-1.4 at seeds 1-3 against
    # the machine's ×0.16, a documented miss, docs/realkernel.md: its
    # receivers run for too few messages each once pulled one at a time)
    ctx = fifo.filter(pl.col("metric") == "context_switches")
    assert (ctx["measured"] < 0.5).all()
    hit = ctx.filter((pl.col("ipc") == "pipe") | (pl.col("mode") == "process"))
    assert hit.height == 3 and (hit["predicted"] < 0.75).all()
    batch = e.filter((pl.col("change") == "chrt --batch 0") & (pl.col("metric") == "elapsed_s"))
    assert batch.height == 4 and batch["predicted"].null_count() == 0
    # the measured effect is the medians' ratio, inside the reps' range
    assert (batch["measured_lo"] <= batch["measured"]).all()
    assert (batch["measured"] <= batch["measured_hi"]).all()
    pin = e.filter((pl.col("change") == "taskset -c 0") & (pl.col("metric") == "elapsed_s"))
    assert (pin["predicted"] > 1).all() and (pin["measured"] > 1).all()
    s = v.summary
    assert s["metric"].to_list() == list(sl.host.validation.METRICS)
    # batch, taskset and fifo at 4 configurations each
    assert s.filter(pl.col("metric") == "elapsed_s")["n"][0] == 12


def test_validate_needs_changes_and_a_known_baseline():
    real = pl.read_parquet(REAL)
    with pytest.raises(sl.ConfigError, match="baseline='nope'"):
        sl.validate(real, "vm-2", "v6.18", baseline="nope", progress=False)
    with pytest.raises(sl.ConfigError, match="only the baseline"):
        sl.validate(real.filter(pl.col("change") == "plain"), "vm-2", "v6.18", progress=False)


def test_nice_refused_by_the_os_is_not_recorded_as_niced():
    def runner(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        r = _ok(cmd)
        if "nice" in cmd:  # GNU nice: a warning, then the command at nice 0, exit 0
            r.stderr = "nice: cannot set niceness: Permission denied\n" + r.stderr
        return r

    with pytest.raises(sl.MeasureError, match="could not set nice -5"):
        _measure_one(runner=runner, changes=[{"nice": -5}], interrupts=lambda: None)


def test_rt_sysctls_are_written_in_an_order_the_kernel_accepts(tmp_path):
    (tmp_path / "sched_rt_runtime_us").write_text("950000\n")
    (tmp_path / "sched_rt_period_us").write_text("1000000\n")
    shorter = ch.normalise({"rt_period_us": 500000, "rt_runtime_us": 400000})
    assert list(ch.sysctl_values(shorter, tmp_path)) == ["rt_runtime_us", "rt_period_us"]
    longer = ch.normalise({"rt_period_us": 2000000, "rt_runtime_us": 1500000})
    assert list(ch.sysctl_values(longer, tmp_path)) == ["rt_period_us", "rt_runtime_us"]
    with ch.sysctls(ch.sysctl_values(shorter, tmp_path), tmp_path):
        assert (tmp_path / "sched_rt_period_us").read_text().strip() == "500000"
    assert (tmp_path / "sched_rt_period_us").read_text().strip() == "1000000"
    assert (tmp_path / "sched_rt_runtime_us").read_text().strip() == "950000"
    with pytest.raises(sl.ConfigError, match="at most rt_period_us"):
        ch.normalise({"rt_period_us": 1000, "rt_runtime_us": 2000})


def test_pinned_and_an_affinity_change_are_refused_together():
    with pytest.raises(sl.ConfigError, match="nest"):
        _measure_one(runner=_ok, pinned=True, changes=[{"affinity": [1]}])


def test_numpy_integers_are_taken_in_changes():
    import numpy as np

    c = ch.normalise({"nice": np.int64(5), "affinity": np.array([1, 0])})
    assert c["nice"] == 5 and c["affinity"] == [0, 1]


def test_validate_refuses_a_changed_baseline_and_ambiguous_names():
    real = pl.read_parquet(REAL).filter(pl.col("groups") == 2)
    with pytest.raises(sl.ConfigError, match="baseline must be runs without a change"):
        sl.validate(real, "vm-2", "v6.18", baseline="chrt --batch 0", progress=False)
    mixed = real.with_columns(
        pl.when(pl.col("change") == "chrt --idle 0")
        .then(pl.lit("chrt --batch 0"))
        .otherwise(pl.col("change"))
        .alias("change")
    )
    with pytest.raises(sl.ConfigError, match="different settings"):
        sl.validate(mixed, "vm-2", "v6.18", progress=False)


def test_validate_marks_an_affinity_the_machine_lacks_as_not_modelled():
    real = pl.read_parquet(REAL).filter(
        (pl.col("groups") == 2) & pl.col("change").is_in(["plain", "taskset -c 0"])
    )
    real = real.with_columns(
        pl.when(pl.col("change") == "taskset -c 0")
        .then(pl.lit("3"))
        .otherwise(pl.col("affinity"))
        .alias("affinity")
    )
    v = sl.validate(real, "vm-2", "v6.18", seeds=1, progress=False, max_evaluations=1)
    assert not v.effects["modelled"].any()
    assert "CPUs 0 to 1" in v.effects["why"][0]


def test_each_change_maps_to_task_attributes_and_kernel_fields():
    from schedlab.host import validation as va

    tasks, why = va.model_change({"policy": "rr"})
    assert tasks == {"policy": "rr", "rt_priority": 1} and why == ""
    tasks, _ = va.model_change({"policy": "fifo", "rt_priority": 7, "affinity": [0, 1]}, 2)
    assert tasks == {"policy": "fifo", "rt_priority": 7, "cpus": [0, 1]}
    assert va.model_change({"affinity": [3]}, 2)[0] is None
    assert va.model_kernel_change({"policy": "fifo", "rt_runtime_us": -1}) == {
        "sched_rt_runtime_us": -1
    }
    assert va.model_kernel_change({"rt_runtime_us": 500000, "rt_period_us": 600000}) == {
        "sched_rt_runtime_us": 500000,
        "sched_rt_period_us": 600000,
    }
    assert va.model_kernel_change({"policy": "batch"}) == {}


def test_validate_runs_the_rt_sysctl_change_on_the_kernel_field():
    """RT throttling at 1 ms per 1 s period slows a FIFO run in the model;
    validate must pass the sysctl to the kernel, not drop it."""
    real = pl.read_parquet(REAL).filter(
        (pl.col("groups") == 2) & (pl.col("ipc") == "pipe") & (pl.col("mode") == "thread")
    )
    plain = real.filter(pl.col("change") == "plain")
    fifo = real.filter(pl.col("change") == "chrt --fifo 1")
    throttled = fifo.with_columns(
        pl.lit("fifo, 1 ms per period").alias("change"),
        pl.lit(1000, dtype=pl.Int64).alias("rt_runtime_us"),
    )
    v = sl.validate(
        pl.concat([plain, fifo, throttled]),
        "vm-2",
        "v6.18",
        seeds=1,
        progress=False,
        max_evaluations=1,
    )
    el = v.effects.filter(pl.col("metric") == "elapsed_s")
    free = el.filter(pl.col("change") == "chrt --fifo 1")["predicted"][0]
    slow = el.filter(pl.col("change") == "fifo, 1 ms per period")["predicted"][0]
    assert slow > 1.5 * free
