"""Hardening: invalid values are refused as configuration errors,
never lose a sweep, and never skew summaries; the CLI checks its output
before it runs."""

import os
from pathlib import Path

import polars as pl
import pytest
import schedlab as sl
from schedlab.analysis.frames import metric_columns
from schedlab.cli import main
from schedlab.run import execute as execute_mod

W = sl.workloads.hackbench(groups=1, loops=5)
VOLANO = sl.workloads.volano(rooms=1, users=2, messages=2)


# --- 1. an invalid grid value loses only its own point ----------------------


@pytest.mark.parametrize(
    ("key", "bad", "good"),
    [
        ("newidle_throttle", 2**63, "off"),  # an int beyond int64 for a text field
        ("migration_cost_ns", 2**64, 0),  # an int beyond int64 for an int field
        ("migration_cost_ns", "abc", 0),  # text for an int field
        ("migration_cost_ns", 1.5, 0),  # a float for an int field
        ("workload.loops", 10**30, 3),
    ],
)
def test_an_unrepresentable_grid_value_is_an_error_row_and_keeps_the_column_dtype(key, bad, good):
    df = sl.sweep("vm-2", "v3.8", W, {key: [bad, good]}, replicates=2, progress=False)
    assert df["status"].to_list() == ["error", "error", "ok", "ok"]
    ok = sl.sweep("vm-2", "v3.8", W, {key: [good]}, progress=False)
    assert df.schema[key] == ok.schema[key]  # the valid points decide the dtype
    assert df[key].to_list()[2:] == [good, good]
    # the offending value is kept, as text, in the error rows' status_detail
    detail = df["status_detail"][0]
    assert key.split(".")[-1] in detail and str(bad) in detail
    assert df["elapsed_s"][2:].is_not_null().all() and df["elapsed_s"][:2].is_null().all()


def test_an_error_row_keeps_a_grid_value_that_fits_its_column():
    df = sl.sweep("vm-2", "v3.8", W, {"migration_cost_ns": [-1, 0]}, progress=False)
    assert df["migration_cost_ns"].to_list() == [-1, 0]
    assert df.schema["migration_cost_ns"] == pl.Int64


def test_an_error_point_first_keeps_the_column_order():
    df = sl.sweep("vm-2", "v3.8", W, {"newidle_throttle": [2**63, "off"]}, progress=False)
    ok = sl.sweep("vm-2", "v3.8", W, {"newidle_throttle": ["off"]}, progress=False)
    assert df.columns == ok.columns


# --- 2. too-large numbers are configuration errors --------------------------


@pytest.mark.parametrize("param", ["duration_s", "interval_s"])
@pytest.mark.parametrize("value", [1e300, pytest.param(10**400, id="10**400")])
def test_huge_durations_are_config_errors(param, value):
    for run in (
        lambda: sl.simulate("vm-2", "v3.8", W, **{param: value}),
        lambda: sl.sweep("vm-2", "v3.8", W, progress=False, **{param: value}),
    ):
        with pytest.raises(sl.ConfigError, match=rf"{param}=.*seconds from .* to ") as e:
            run()
        assert isinstance(e.value, ValueError) and str(value)[:5] in str(e.value)


def test_huge_workload_values_are_config_errors():
    with pytest.raises(sl.ConfigError, match=r"handle_us=1e\+20: .*from .* to 1e\+12"):
        sl.workloads.volano(handle_us=1e20)
    with pytest.raises(sl.ConfigError, match=r"cpus=4294967296: .*from 0 to 4095"):
        sl.workloads.spinners(nice=[0], cpus=[2**32])
    with pytest.raises(sl.ConfigError, match=r"run_us=1e\+306: .*to 1e\+12"):
        sl.workloads.spinners(nice=[0], run_us=1e306)
    with pytest.raises(sl.ConfigError, match=r"sleep_us=.*digits.*to 1e\+12"):
        sl.workloads.spinners(nice=[0], run_us=1.0, sleep_us=10**400)


def test_a_huge_workload_value_in_a_grid_is_an_error_row():
    df = sl.sweep("vm-2", "v3.8", VOLANO, {"workload.handle_us": [1e20, 3.0]}, progress=False)
    assert df["status"].to_list() == ["error", "ok"]
    assert "handle_us=1e+20" in df["status_detail"][0]
    df = sl.sweep(
        "vm-2",
        "v3.8",
        sl.workloads.spinners(nice=[0]),
        {"workload.cpus": [[2**32], [1]]},
        duration_s=0.01,
        progress=False,
    )
    assert df["status"].to_list() == ["error", "ok"]
    assert "cpus=4294967296" in df["status_detail"][0]


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--workload", "hackbench", "--duration", "1e300"],
        ["run", "--workload", "volano", "--param", "handle_us=1e20"],
    ],
)
def test_cli_config_error_is_one_line_and_status_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("schedlab: error: invalid ") and "\n" not in err


# --- 3. summaries choose metrics by name ------------------------------------


def test_summaries_do_not_take_configuration_for_metrics_when_point_0_failed():
    grid = {"migration_cost_ns": [-1, 0, 500_000]}
    df = sl.sweep("vm-2", "v3.8", W, grid, replicates=2, progress=False)
    ok = sl.sweep("vm-2", "v3.8", W, {"migration_cost_ns": [0]}, progress=False)
    assert df["status"][0] == "error"
    metrics = set(metric_columns(ok))
    assert "elapsed_s" in metrics and "migration_cost_ns" not in metrics
    # by name, whatever the column order
    for frame in (df, df.select(reversed(df.columns))):
        assert set(metric_columns(frame)) == metrics
        s = sl.summarize(frame, "migration_cost_ns")
        assert set(s["metric"]) == metrics
        c = sl.compare(frame, "migration_cost_ns", 0)
        assert set(c["metric"]) == metrics


# --- 4. the CLI checks its output before running ----------------------------

SPEC = """\
machine = "vm-2"
kernel = "v3.8"
replicates = 2
[workload]
kind = "hackbench"
groups = 1
loops = 5
[grid]
migration_cost_ns = [0, -1]
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(SPEC)
    return p


def _sweep(spec: Path, out: Path | str, *extra: str) -> int:
    return main(["sweep", str(spec), "-o", str(out), "--no-progress", *extra])


def test_cli_refuses_a_bad_output_before_running(spec, tmp_path, capsys, monkeypatch):
    def no_run(*a, **k):  # the sweep must not start
        raise AssertionError("the sweep ran")

    monkeypatch.setattr(execute_mod, "execute", no_run)
    for out in (tmp_path / "no-such-dir" / "o.parquet", tmp_path):
        assert _sweep(spec, out) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("schedlab: error: invalid --output=") and "\n" not in err
    existing = tmp_path / "o.parquet"
    existing.write_bytes(b"keep me")
    assert _sweep(spec, existing) == 2
    assert "--force" in capsys.readouterr().err
    assert existing.read_bytes() == b"keep me"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_cli_refuses_an_unwritable_output_directory(spec, tmp_path, capsys):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        assert _sweep(spec, d / "o.parquet") == 2
        assert "not writable" in capsys.readouterr().err
    finally:
        d.chmod(0o700)


def test_cli_prints_the_run_count_first_and_overwrites_only_with_force(spec, tmp_path, capsys):
    out = tmp_path / "o.parquet"
    out.write_bytes(b"old")
    assert _sweep(spec, out, "--force") == 1  # one point is invalid
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0].startswith("schedlab: 4 runs (2 points x 2 replicates; invalid points: 1)")
    df = pl.read_parquet(out)
    assert df["status"].to_list() == ["ok", "ok", "error", "error"]


# --- 5. name= and unknown workload arguments --------------------------------


def test_kernel_and_costmodel_refuse_name():
    with pytest.raises(sl.ConfigError, match="base="):
        sl.Kernel(name="v2.6.36")
    with pytest.raises(sl.ConfigError, match="name"):
        sl.Kernel("v3.8").replace(name="v2.6.36")
    with pytest.raises(sl.ConfigError, match="name"):
        sl.CostModel(name="x")
    with pytest.raises(sl.ConfigError, match="name"):
        sl.CostModel().replace(name="x")
    assert sl.Kernel(base="v2.6.36").name == "v2.6.36"


@pytest.mark.parametrize(
    ("factory", "kwargs"),
    [
        (sl.workloads.hackbench, {"grups": 2}),
        (sl.workloads.volano, {"room": 2}),
        (sl.workloads.pipe_pingpong, {"loop": 2}),
        (sl.workloads.spinners, {"nice": [0], "run": 1.0}),
    ],
)
def test_unknown_workload_arguments_are_config_type_errors(factory, kwargs):
    bad = next(k for k in kwargs if k not in ("nice",))
    with pytest.raises(sl.ConfigTypeError, match=rf"'{bad}'.*expected one of .*") as e:
        factory(**kwargs)
    assert isinstance(e.value, TypeError)


def test_workload_signatures_are_kept():
    assert sl.Workload.parameters("hackbench")[:3] == ["groups", "fds", "loops"]
    with pytest.raises(sl.ConfigTypeError, match="workloads.pipe_pingpong"):
        sl.workloads.pipe_pingpong(1, "process", 3)  # type: ignore[call-arg]
