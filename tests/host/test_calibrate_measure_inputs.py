"""The hostile inputs of ``sl.calibrate``,
``sl.measure`` / its parsers and a few constructors are refused with the
library's own errors naming the parameter (or the column, or perf's line),
never a plain TypeError / ValueError / IndexError / OverflowError or a
polars error; ``calibrate`` warns (or refuses, when asked) on a frame
measured on another machine."""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import schedlab as sl
from schedlab.cli import main
from schedlab.exceptions import MachineMismatchWarning
from schedlab.host import measurement as me
from schedlab.host.sched_latency import parse_sched_latency

DATA = Path(__file__).parents[1] / "data" / "perf"

# --- calibrate's frame --------------------------------------------------------


def _frame(**over: Any) -> pl.DataFrame:
    """A small measured frame (two configurations, two reps each) as
    ``measure`` returns it, with ``over`` replacing columns."""
    cols: dict[str, Any] = {
        "bench": ["hackbench"] * 4,
        "ipc": ["pipe"] * 4,
        "mode": ["process"] * 4,
        "groups": [1, 1, 2, 2],
        "loops": [5] * 4,
        "pinned": [False] * 4,
        "rep": [0, 1, 0, 1],
        "elapsed_s": [0.010, 0.011, 0.020, 0.021],
        "context_switches": [100.0, 110.0, 200.0, 210.0],
        "cpu_migrations": [5.0, 6.0, 9.0, 8.0],
        "cpus": [2] * 4,
        "cpu_model": ["AMD EPYC"] * 4,
    }
    cols.update(over)
    return pl.DataFrame(cols)


def _calibrate(real: Any, machine: str = "vm-2", **kw: Any) -> sl.Calibration:
    args: dict[str, Any] = {"seeds": 1, "threads": 1, "progress": False, "max_evaluations": 1}
    args.update(kw)
    return sl.calibrate(real, machine, "v6.18", **args)


def test_calibrate_groups_with_nulls_names_the_column():
    with pytest.raises(sl.ConfigError, match=r"invalid real: column 'groups' has 1 null value"):
        _calibrate(_frame(groups=[1, None, 2, 2]))


def test_calibrate_reads_categorical_and_enum_ipc_as_text():
    cat = _frame().with_columns(pl.col("ipc").cast(pl.Categorical))
    enum = _frame().with_columns(pl.col("mode").cast(pl.Enum(["process", "thread"])))
    for real in (cat, enum):
        cal = _calibrate(real)
        assert cal.report.schema["ipc"] == pl.String and cal.report.schema["mode"] == pl.String
        assert set(cal.report["groups"]) == {1, 2}


def test_calibrate_pinned_as_a_string_is_a_type_error_naming_the_column():
    with pytest.raises(
        sl.ConfigTypeError, match=r"invalid type for real column 'pinned': got String"
    ):
        _calibrate(_frame(pinned=["no"] * 4))


@pytest.mark.parametrize(
    "values, dtype",
    [
        ([[0.01], [0.01], [0.02], [0.02]], r"List\(Float64\)"),
        ([{"s": 0.01}] * 4, r"Struct"),
        ([True] * 4, "Boolean"),
        (["0.01"] * 4, "String"),
    ],
)
def test_calibrate_elapsed_as_list_struct_bool_or_text_is_refused(values, dtype):
    with pytest.raises(
        sl.ConfigTypeError, match=rf"invalid type for real column 'elapsed_s': got {dtype}"
    ):
        _calibrate(_frame(elapsed_s=values))


def test_calibrate_refuses_groups_out_of_range_and_float_groups():
    with pytest.raises(sl.ConfigError, match=r"column 'groups' holds 0; expected integers from 1"):
        _calibrate(_frame(groups=[0, 0, 2, 2]))
    with pytest.raises(sl.ConfigTypeError, match=r"column 'groups': got Float64"):
        _calibrate(_frame(groups=[1.0, 1.0, 2.0, 2.0]))
    with pytest.raises(sl.ConfigError, match=r"column 'bench' has 1 null value"):
        _calibrate(_frame(bench=["hackbench", None, "hackbench", "hackbench"]))


def test_calibrate_warns_on_a_frame_of_another_machine():
    real = _frame()  # measured on 2 CPUs
    with pytest.warns(MachineMismatchWarning, match=r"host of 2 CPUs \(AMD EPYC\).*'skl-sp-2s'"):
        cal = _calibrate(real, "skl-sp-2s")
    assert cal.warnings[0].startswith("machine: real was measured on a host of 2 CPUs")
    assert "presets of 2 CPUs: vm-2" in cal.warnings[0]
    with pytest.raises(sl.ConfigError, match=r"invalid machine='skl-sp-2s': real was measured"):
        _calibrate(real, "skl-sp-2s", machine_mismatch="error")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = _calibrate(real, "skl-sp-2s", machine_mismatch="ignore")
        same = _calibrate(real, "vm-2", machine_mismatch="error")  # 2 CPUs: no mismatch
        # a frame that does not record its host is not checked
        _calibrate(real.drop("cpus"), "skl-sp-2s", machine_mismatch="error")
    assert not any(w.startswith("machine:") for w in quiet.warnings + same.warnings)
    with pytest.raises(sl.ConfigError, match=r"invalid machine_mismatch='loud'"):
        _calibrate(real, machine_mismatch="loud")


def test_fit_of_nothing_says_so():
    with pytest.raises(sl.ConfigError, match=r"invalid fit=\[\]: expected one or more factor"):
        _calibrate(_frame(), fit=[])
    with pytest.raises(sl.ConfigTypeError, match=r"invalid type for fit: got dict"):
        _calibrate(_frame(), fit={"socket": 1})


def test_train_entry_values_are_checked():
    with pytest.raises(
        sl.ConfigTypeError, match=r"invalid type for train entry groups: got ndarray"
    ):
        _calibrate(_frame(), train=[{"groups": np.array([1, 2])}])
    with pytest.raises(sl.ConfigTypeError, match=r"invalid type for train entry ipc: got int"):
        _calibrate(_frame(), train=[{"ipc": 1}])


def test_calibrate_refuses_positional_misuse():
    with pytest.raises(
        sl.ConfigTypeError,
        match=r"calibrate\(<DataFrame 4×12>, 'vm-2', 'v6.18', \['socket'\]\): it takes 3 "
        r"positional arguments \(real, machine, kernel\), got 4; pass \['socket'\] by keyword: fit",
    ):
        sl.calibrate(_frame(), "vm-2", "v6.18", ["socket"])


def test_rep_noise_checks_the_frame_too():
    from schedlab.host.calibration import rep_noise

    with pytest.raises(sl.ConfigTypeError, match=r"real column 'elapsed_s': got List"):
        rep_noise(_frame(elapsed_s=[[0.1]] * 4))


def test_validate_refuses_an_unreadable_affinity():
    real = pl.concat(
        [
            _frame().with_columns(pl.lit("plain").alias("change")),
            _frame().with_columns(pl.lit("affinity=x").alias("change")),
        ]
    ).with_columns(
        pl.when(pl.col("change") == "plain").then(None).otherwise(pl.lit("0,x")).alias("affinity"),
        *(pl.lit(None, dtype=pl.String).alias(c) for c in ("policy",)),
        *(
            pl.lit(None, dtype=pl.Int64).alias(c)
            for c in ("rt_priority", "nice", "rt_runtime_us", "rt_period_us")
        ),
        pl.lit(1.0).alias("res_ipis"),
        pl.lit(1.0).alias("cal_ipis"),
    )
    with pytest.raises(sl.ConfigError, match=r"column 'affinity' holds '0,x'"):
        sl.validate(real, "vm-2", "v6.18", progress=False)


# --- perf's output ---------------------------------------------------------------


def _recorded(name: str = "messaging-g1-pipe-process") -> str:
    return (DATA / f"{name}.stdout").read_text() + "\n" + (DATA / f"{name}.stderr").read_text()


def _total(text: str, value: str) -> str:
    lines = text.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.strip().startswith("Total time:"))
    lines[i] = f" {'Total time:'} {value}".rstrip()
    return "\n".join(lines)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda t: _total(t, "abc [sec]"), r"Total time is 'abc', not a number"),
        (lambda t: _total(t, ""), r"Total time has no value"),
        (lambda t: _total(t, "nan [sec]"), r"Total time is 'nan', not a number"),
        (lambda t: _total(t, "inf [sec]"), r"Total time is 'inf', not a number"),
        (lambda t: _total(t, "1e999 [sec]"), r"Total time is 1e999; expected a finite number"),
        (lambda t: _total(t, "-0.5 [sec]"), r"Total time is -0.5; expected a finite number >= 0"),
        (lambda t: _total(t, "١.٢ [sec]"), r"not a number"),  # other scripts' digits
        (
            lambda t: t.replace("3482,,context-switches", "lots,,context-switches"),
            r"context-switches is 'lots', not a number",
        ),
        (
            lambda t: t.replace("64,,cpu-migrations", "-1,,cpu-migrations"),
            r"cpu-migrations is -1; expected a finite number >= 0",
        ),
        (
            lambda t: t.replace("233.30,msec,task-clock", "-233.30,msec,task-clock"),
            r"task-clock is -233.30; expected a finite number >= 0",
        ),
        (lambda t: t.replace("64,,cpu-migrations", ",,cpu-migrations"), r"cpu-migrations has no"),
    ],
)
def test_parse_perf_refuses_unreadable_and_impossible_numbers(edit, match):
    with pytest.raises(sl.MeasureError, match=match):
        me.parse_perf(edit(_recorded()))


def test_parse_perf_reads_bytes_and_refuses_binary():
    text = _recorded()
    assert me.parse_perf(text.encode()) == me.parse_perf(text)
    with pytest.raises(sl.MeasureError, match=r"not UTF-8 text: byte b'\\xff' at offset"):
        me.parse_perf(text.encode() + b"\xff\xfe")
    with pytest.raises(sl.ConfigTypeError, match=r"invalid type for perf output: got NoneType"):
        me.parse_perf(None)  # type: ignore[arg-type]


def _runner_returning(value: Any) -> Any:
    return lambda cmd: value


@pytest.mark.parametrize(
    "result, match",
    [
        (None, r"the runner returned NoneType None for 'perf stat"),
        ("text", r"the runner returned str 'text'"),
        (
            subprocess.CompletedProcess(["perf"], 0, b"\xff\xfe", b""),
            r"the stdout of 'perf stat.*is not UTF-8 text",
        ),
        (subprocess.CompletedProcess(["perf"], 0, 12, ""), r"the runner's stdout .* is int 12"),
        (subprocess.CompletedProcess(["perf"], "0", "", ""), r"the runner returned"),
    ],
)
def test_measure_refuses_a_runner_result_it_cannot_read(result, match):
    with pytest.raises(sl.MeasureError, match=match):
        sl.measure(
            groups=1, ipc="pipe", mode="process", reps=1, progress=False,
            runner=_runner_returning(result),
        )  # fmt: skip


def test_measure_reads_a_runner_returning_bytes():
    def runner(cmd: list[str]) -> subprocess.CompletedProcess[bytes]:
        out = (DATA / "messaging-g1-pipe-process.stdout").read_bytes()
        err = (DATA / "messaging-g1-pipe-process.stderr").read_bytes()
        return subprocess.CompletedProcess(cmd, 0, out, err)

    df = sl.measure(groups=1, ipc="pipe", mode="process", reps=1, progress=False, runner=runner)
    assert df["elapsed_s"].to_list() == [0.147]


def test_measure_takes_numpy_integers_like_the_workloads():
    calls: list[list[str]] = []

    def runner(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, _recorded(), "")

    numpy_args: dict[str, Any] = {
        "groups": np.array([1, 2]),
        "loops": np.int64(50),
        "reps": np.int32(1),
        "pinned": np.bool_(False),
    }
    df = sl.measure(ipc="pipe", mode="process", progress=False, runner=runner, **numpy_args)
    assert df["groups"].to_list() == [1, 2] and set(df["loops"]) == {50}
    assert calls[0][-4:] == ["1", "-l", "50", "-p"]


def test_cli_groups_with_an_empty_entry_is_refused(capsys):
    argv = ["measure", "hackbench", "--groups", "1,,2", "--reps", "1", "--no-progress",
            "--perf", "/nonexistent/perf"]  # fmt: skip
    assert main(argv) == 2
    assert "invalid --groups='1,,2'" in capsys.readouterr().err
    with pytest.raises(sl.ConfigError, match=r"invalid groups=\[\]"):
        sl.measure(groups=[], progress=False, runner=_runner_returning(None))


@pytest.mark.parametrize(
    "text, match",
    [
        (b"\xff\xfe\x00binary", r"printed no task table"),
        (
            "  sched-messaging:12 | ... ms | 5 | avg: 0.1 ms | max: 0.2 ms | "
            "max start: 1.0 s | max end: 1.1 s\n",
            r"runtime is '...', not a number",
        ),
        (
            "  sched-messaging:12 | 1.0 ms | " + "9" * 5000 + " | avg: 0.1 ms | max: 0.2 ms | "
            "max start: 1.0 s | max end: 1.1 s\n",
            r"switches is '9999.*', not a count",
        ),
        (
            "  sched-messaging:12 | 1.0 ms | 5 | avg: nan ms | max: 0.2 ms | "
            "max start: 1.0 s | max end: 1.1 s\n",
            r"avg delay is 'nan', not a number",
        ),
        (
            "  sched-messaging:12 | 1.0 ms | 5 | avg: 1" + "0" * 400 + " ms | max: 0.2 ms | "
            "max start: 1.0 s | max end: 1.1 s\n",
            r"avg delay is 1000.*expected a finite number",
        ),
    ],
)
def test_parse_sched_latency_refuses_unreadable_rows(text, match):
    with pytest.raises(sl.MeasureError, match=match):
        parse_sched_latency(text)


def test_parse_sched_latency_reads_bytes_and_odd_task_names():
    row = "  %s:12 | 1.0 ms | 5 | avg: 0.1 ms | max: 0.2 ms | max start: 1.0 s | max end: 1.1 s\n"
    df = parse_sched_latency((row % "w\udcff").encode("utf-8", "surrogateescape"))
    assert df["comm"].to_list() == ["w\ufffd"] and df["switches"].to_list() == [5]
    df = parse_sched_latency(row % "w\ud800")  # a lone surrogate in a str
    assert df["comm"].to_list() == ["w?"]


# --- small gaps --------------------------------------------------------------------


def test_rt_kthreads_huge_period_is_a_config_error():
    with pytest.raises(sl.ConfigError, match=r"invalid rt_kthreads.watchdog_period_ms=1e\+303"):
        sl.workloads.rt_kthreads(watchdog_period_ms=1e303)
    with pytest.raises(
        sl.ConfigError, match=r"invalid rt_kthreads.irq_run_us=1000000.*\(401 digits\)"
    ):
        sl.workloads.rt_kthreads(irq_run_us=10**400)
    with pytest.raises(sl.ConfigError, match=r"invalid rt_kthreads.watchdog_run_us=-1"):
        sl.workloads.rt_kthreads(watchdog_run_us=-1)


@pytest.mark.parametrize("pct", ["²%", "1" * 5000 + "%", "٥٠%"])
def test_hackbench_lkp_odd_percentages_are_config_errors(pct):
    with pytest.raises(sl.ConfigError, match=r"invalid nr_threads=.*expected a percentage"):
        sl.workloads.hackbench_lkp("vm-2", pct)


def test_hackbench_lkp_too_many_groups_names_nr_threads():
    with pytest.raises(
        sl.ConfigError, match=r"invalid nr_threads='100000%': 100000% of spr-2s's 224 CPUs is "
    ):
        sl.workloads.hackbench_lkp("spr-2s", "100000%")
    with pytest.raises(sl.ConfigError, match=r"invalid nr_threads=30000: 30000 groups of 20 fds"):
        sl.workloads.hackbench_lkp("spr-2s", 30000)


def test_positional_misuse_is_a_config_type_error_naming_the_parameters():
    with pytest.raises(
        sl.ConfigTypeError,
        match=r"workloads.rt_kthreads\(True, 5\): it takes 1 positional argument \(watchdog\), "
        r"got 2; pass 5 by keyword: watchdog_period_ms",
    ):
        sl.workloads.rt_kthreads(True, 5)  # type: ignore[misc]
    with pytest.raises(
        sl.ConfigTypeError,
        match=r"Kernel.replace\('pick'\): it takes no positional argument, got 1; pass 'pick' "
        r"by keyword: Kernel fields",
    ):
        sl.Kernel.preset("v6.18").replace("pick")  # type: ignore[call-arg]
    with pytest.raises(sl.ConfigTypeError, match=r"\(a dict d of them: \*\*d\)"):
        sl.CostModel().replace({"fork_ns": 1})  # type: ignore[call-arg]
    with pytest.raises(sl.ConfigTypeError, match=r"invalid argument 'sockts' for Machine"):
        sl.Machine(sockts=1, cores_per_socket=2)  # type: ignore[call-arg]
    with pytest.raises(sl.ConfigTypeError, match=r"Workload.replace\('groups'\)"):
        sl.workloads.hackbench().replace("groups")  # type: ignore[call-arg]
    with pytest.raises(sl.ConfigTypeError, match=r"missing a required argument: 'bad'"):
        sl.bisect("vm-2", "v3.8")  # type: ignore[call-arg]


def test_kernel_and_cost_fields_take_numpy_integers_like_the_workloads():
    # Already so on this tree (the core takes any __index__ scalar); kept as
    # a check: Kernel fields and workload arguments agree.
    k = sl.Kernel.preset("v6.18").replace(migration_cost_ns=np.int64(400_000), hz=np.int16(1000))
    assert (k.migration_cost_ns, k.hz) == (400_000, 1000)
    assert type(k.to_dict()["hz"]) is int
    assert sl.Kernel("v6.18", nr_migrate=np.uint8(8)).nr_migrate == 8
    assert sl.CostModel(fork_ns=np.int64(1000)).fork_ns == 1000
    w = sl.workloads.hackbench(groups=np.int64(2))
    assert w.args["groups"] == 2
    with pytest.raises(sl.ConfigTypeError, match=r"idle_balance"):
        sl.Kernel.preset("v6.18").replace(idle_balance=np.int64(1))


def test_a_perf_that_is_not_a_program_is_a_measure_error(tmp_path):
    fake = tmp_path / "perf"
    fake.write_text("not a program\n")
    fake.chmod(0o755)
    with pytest.raises(
        sl.MeasureError, match=r"cannot run .*Exec format error|perf_event_paranoid"
    ):
        sl.measure(groups=1, reps=1, progress=False, perf=str(fake))


# --- calibrate / validate: memory_limit ---------------------------------------


def test_calibrate_refuses_a_batch_above_memory_limit_before_any_model_run(monkeypatch):
    from schedlab.host import calibration

    def refuse(*a: Any, **k: Any) -> None:  # no model run may start
        raise AssertionError("a model run started")

    monkeypatch.setattr(calibration, "execute", refuse)
    with pytest.raises(sl.ConfigError, match=r"invalid memory_limit=1000 .* this sweep of 2 runs"):
        _calibrate(_frame(), memory_limit=1000)
    with pytest.raises(sl.ConfigTypeError, match="memory_limit"):
        _calibrate(_frame(), memory_limit="8G")
    with pytest.raises(sl.ConfigError, match="memory_limit"):
        _calibrate(_frame(), memory_limit=0)


def test_calibrate_with_a_memory_limit_that_fits_gives_the_same_fit():
    a = _calibrate(_frame())
    b = _calibrate(_frame(), memory_limit=10**12)
    assert a.factors == b.factors and a.report.equals(b.report)
