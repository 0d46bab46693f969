"""re-aim-7 measured (``measure("aim7")``, its CSV parser) and calibrated
(``calibrate`` of an aim7 frame fitting the cost model's ``work_pct`` and
``io_pct``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pytest
import schedlab as sl
from schedlab.host import aim7 as ha
from schedlab.host.calibration import scaled

DATA = Path(__file__).parents[1] / "data" / "reaim"


def test_parse_recorded_csv():
    one = ha.parse_reaim_csv((DATA / "compute-1child.csv").read_text())
    assert one == pytest.approx(
        {
            "children": 1,
            "jobs_per_min": 17823.53,
            "jobs_per_min_per_child": 17823.53,
            "real_s": 0.34,
            "child_user_s": 0.28,
            "child_sys_s": 0.06,
            "std_dev_s": 0.0,
            "jti": 100.0,
            "cpu_s": 0.34,
        }
    )
    four = ha.parse_reaim_csv((DATA / "compute-4children.csv").read_text())
    assert four["children"] == 4 and four["jobs_per_min"] == 37875.0
    assert four["cpu_s"] == pytest.approx(1.25) and four["jti"] == 97.0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("Forks,JPM\n1,2\n", "line 1: header"),
        (",".join(ha.CSV_HEADER) + "\n", "no load point"),
        (",".join(ha.CSV_HEADER) + "\n1,2,3\n", "line 2: 3 fields"),
        (",".join(ha.CSV_HEADER) + "\n\n1,x,1,1,1,1,1,1,1,1,1\n", "line 3: JPM is 'x'"),
        (",".join(ha.CSV_HEADER) + "\n1,nan,1,1,1,1,1,1,1,1,1\n", "JPM is 'nan'"),
        (",".join(ha.CSV_HEADER) + "\n1,1,1,1,-1,1,1,1,1,1,1\n", "parent_tm is '-1'"),
        (",".join(ha.CSV_HEADER) + "\n1.5,1,1,1,1,1,1,1,1,1,1\n", "Forks is '1.5'"),
        (",".join(ha.CSV_HEADER) + "\n0,1,1,1,1,1,1,1,1,1,1\n", "Forks is '0'"),
    ],
)
def test_parse_refuses_malformed_output_naming_the_line(text, words):
    with pytest.raises(sl.MeasureError, match="reaim CSV") as e:
        ha.parse_reaim_csv(text)
    assert words in str(e.value)


def _reaim_dir(tmp_path: Path) -> Path:
    d = tmp_path / "reaim-build"
    d.mkdir()
    for name in ha.REAIM_FILES:
        (d / name).write_text("#!/bin/sh\nexit 0\n")
    (d / "reaim").chmod(0o755)
    return d


def _runner(calls: list[list[str]], jpm: dict[int, float]):
    """A stand-in for reaim: writes the CSV at the command's -l prefix."""

    def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        n = int(next(a for a in cmd if a.startswith("-s"))[2:])
        prefix = cmd[cmd.index("-l") + 1]
        real = 101 * n * 60 / jpm[n]
        Path(prefix + ".csv").write_text(
            ",".join(ha.CSV_HEADER)
            + f"\n{n},{jpm[n]:.2f},{jpm[n] / n:.2f},1.0,{real:.2f},{0.3 * n:.2f},"
            f"{0.05 * n:.2f},0.01,95.00,{real:.2f},{real:.2f}\n"
        )
        return subprocess.CompletedProcess(cmd, 0, "REAIM Workload\n", "")

    return run


def test_measure_runs_each_load_point_and_builds_the_frame(tmp_path):
    d = _reaim_dir(tmp_path)
    calls: list[list[str]] = []
    jpm = {1: 17000.0, 2: 32000.0, 4: 37000.0}
    df = sl.measure(
        "aim7", children=[1, 2, 4], reaim=d, reps=2, jobs=50, progress=False,
        runner=_runner(calls, jpm),
    )  # fmt: skip
    assert df.columns == list(ha.COLUMNS)
    assert df["bench"].unique().to_list() == ["aim7"]
    # reps outermost, every children count in each
    assert df["children"].to_list() == [1, 2, 4, 1, 2, 4]
    assert df["rep"].to_list() == [0, 0, 0, 1, 1, 1]
    assert df["jobs"].unique().to_list() == [50]
    assert df["jobs_per_min"].to_list()[:3] == [17000.0, 32000.0, 37000.0]
    assert df["cpu_s"].to_list()[2] == pytest.approx(1.4)
    c = calls[0]
    assert c[0] == str(d / "reaim") and c[1:6] == ["-s1", "-e1", "-i1", "-t", "-j50"]
    assert c[c.index("-f") + 1] == str(d / "workfile.compute")
    assert c[c.index("-c") + 1] == str(d / "reaim.config")
    assert df["cpus"].null_count() == 0 and df["kernel_release"].null_count() == 0


def test_measure_reports_a_failed_or_silent_run(tmp_path):
    d = _reaim_dir(tmp_path)

    def fails(cmd):
        return subprocess.CompletedProcess(cmd, 3, b"", b"cannot open /tmp/diskdir\n")

    with pytest.raises(sl.MeasureError, match="exited with 3:\ncannot open /tmp/diskdir"):
        sl.measure("aim7", children=1, reaim=d, reps=1, progress=False, runner=fails)

    def silent(cmd):
        return subprocess.CompletedProcess(cmd, 0, b"", b"")

    with pytest.raises(sl.MeasureError, match=r"wrote no run\.csv"):
        sl.measure("aim7", children=1, reaim=d, reps=1, progress=False, runner=silent)

    def other_count(cmd):
        prefix = cmd[cmd.index("-l") + 1]
        text = (DATA / "compute-4children.csv").read_text()
        Path(prefix + ".csv").write_text(text)
        return subprocess.CompletedProcess(cmd, 0, b"", b"")

    with pytest.raises(sl.MeasureError, match="ran 4 children where -s2 -e2 asked 2"):
        sl.measure("aim7", children=2, reaim=d, reps=1, progress=False, runner=other_count)


def test_measure_aim7_arguments_are_checked(tmp_path):
    d = _reaim_dir(tmp_path)

    def never(cmd):
        raise AssertionError("ran")

    def bad(**kw):
        kw.setdefault("reaim", d)
        with pytest.raises((sl.ConfigError, sl.ConfigTypeError)) as e:
            sl.measure("aim7", progress=False, runner=never, **kw)
        return str(e.value)

    assert "reaim=None" in bad(reaim=None)
    assert "not a directory" in bad(reaim=tmp_path / "nope")
    assert "no reaim.config there" in bad(reaim=_without(d, "reaim.config"))
    (d / "reaim").chmod(0o644)
    assert "reaim is not executable" in bad()
    (d / "reaim").chmod(0o755)
    assert "children=0" in bad(children=0)
    assert "children=[1, 1]" in bad(children=[1, 1])
    assert "jobs=0" in bad(jobs=0)
    assert "invalid type for reaim" in bad(reaim=3)
    for hb in ({"groups": 2}, {"ipc": "pipe"}, {"loops": 10}, {"pinned": True}):
        assert f"invalid {next(iter(hb))} for bench='aim7'" in bad(**hb)
    with pytest.raises(sl.ConfigError, match="invalid children for bench='hackbench'"):
        sl.measure("hackbench", children=2, runner=never, progress=False)
    with pytest.raises(sl.ConfigError, match="invalid reaim for bench='pipe'"):
        sl.measure("pipe", reaim=d, runner=never, progress=False)


def _without(d: Path, name: str) -> Path:
    e = d.parent / f"{d.name}-no-{name}"
    e.mkdir()
    for f in d.iterdir():
        if f.name != name:
            (e / f.name).write_bytes(f.read_bytes())
            (e / f.name).chmod(f.stat().st_mode)
    return e


def test_work_and_io_scale_aim7s_measured_times():
    w = sl.workloads.aim7(tasks=1, jobs=20)
    base = sl.simulate("vm-2", "v6.18", w, seed=1).metrics
    costs = sl.CostModel.preset("vm-2")
    half = sl.simulate("vm-2", "v6.18", w, seed=1, costs=costs.replace(work_pct=50)).metrics
    # the tests' own CPU time halves; the model's fork/exit charges do not
    assert 0.5 < half["cpu_s"] / base["cpu_s"] < 0.6
    no_io = sl.simulate("vm-2", "v6.18", w, seed=1, costs=costs.replace(io_pct=0)).metrics
    assert no_io["cpu_s"] == pytest.approx(base["cpu_s"], rel=0.01)
    assert no_io["real_s"] < base["real_s"] - 0.005
    # a test's own I/O wait (disk_src's, no sync() calls) scales too
    d = sl.workloads.aim7(tasks=1, jobs=100, workfile="disk_src", syncs=False)
    d0 = sl.simulate("vm-2", "v6.18", d, seed=1).metrics
    d1 = sl.simulate("vm-2", "v6.18", d, seed=1, costs=costs.replace(io_pct=300)).metrics
    assert d1["real_s"] > d0["real_s"] and d1["cpu_s"] == pytest.approx(d0["cpu_s"], rel=0.01)
    # a sync_io_us the user gives is kept as given
    w2 = sl.workloads.aim7(tasks=1, jobs=20, sync_io_us=2000)
    b = sl.simulate("vm-2", "v6.18", w2, seed=1, costs=costs.replace(io_pct=0)).metrics["real_s"]
    c = sl.simulate("vm-2", "v6.18", w, seed=1, costs=costs.replace(io_pct=0)).metrics["real_s"]
    assert b > c + 0.005


def _model_frame(costs: sl.CostModel, children=(1, 2, 4)) -> pl.DataFrame:
    """What reaim would print if the machine were the model at ``costs``."""
    rows = []
    for n in children:
        for rep in range(2):
            m = sl.simulate(
                "vm-2", "v6.18", sl.workloads.aim7(tasks=n), seed=100 + rep, costs=costs
            ).metrics
            rows.append(
                {"bench": "aim7", "children": n, "jobs": 100, "rep": rep}
                | {k: float(m[k]) for k in ("jobs_per_min", "real_s", "cpu_s")}
                | {"cpus": 2}
            )
    return pl.DataFrame(rows)


def test_calibrate_recovers_the_work_and_io_of_a_known_machine():
    truth = scaled(sl.CostModel.preset("vm-2"), {"work": 0.7, "io": 0.4})
    real = _model_frame(truth)
    cal = sl.calibrate(real, "vm-2", "v6.18", progress=False)
    assert cal.bench == "aim7" and cal.fitted_metrics == ("real_s", "cpu_s")
    assert cal.factors["work"] == pytest.approx(0.7, abs=0.03)
    assert cal.factors["io"] == pytest.approx(0.4, abs=0.15)
    assert cal.costs.work_pct == round(100 * cal.factors["work"])
    rep = cal.report
    assert set(rep.filter(pl.col("role") == "fitted")["children"].to_list()) == {1}
    held = cal.summary.filter(pl.col("metric") == "jobs_per_min")
    assert held["n"].item() == 2 and held["median_abs_rel_err"].item() < 0.03
    assert "children" in str(cal) or "fitted on real_s, cpu_s" in str(cal)
    # the preset's own costs (a "day old" scale) are further off than the fit
    plain = sl.calibrate(real, "vm-2", "v6.18", progress=False, max_evaluations=1)
    assert plain.summary["median_abs_rel_err"].max() > cal.summary["median_abs_rel_err"].max()


def test_calibrate_aim7_refusals():
    real = _model_frame(sl.CostModel.preset("vm-2"), children=(1, 2))
    with pytest.raises(sl.ConfigError, match="invalid fit='socket': no field it scales"):
        sl.calibrate(real, "vm-2", "v6.18", fit="socket", progress=False)
    with pytest.raises(sl.ConfigError, match=r"invalid metrics=\['elapsed_s'\]"):
        sl.calibrate(real, "vm-2", "v6.18", metrics=["elapsed_s"], progress=False)
    with pytest.raises(sl.ConfigError, match="expected schedlab.workloads.aim7"):
        sl.calibrate(real, "vm-2", "v6.18", workload=sl.workloads.hackbench(), progress=False)
    with pytest.raises(sl.ConfigError, match=r"invalid train entry \{'groups': 1\}"):
        sl.calibrate(real, "vm-2", "v6.18", train=[{"groups": 1}], progress=False)
    mixed = pl.concat(
        [real, real.head(1).with_columns(pl.lit("hackbench").alias("bench"))], how="vertical"
    )
    with pytest.raises(sl.ConfigError):
        sl.calibrate(mixed, "vm-2", "v6.18", progress=False)
    hb = pl.DataFrame(
        {"ipc": ["pipe"], "mode": ["process"], "groups": [1], "loops": [10]}
        | {m: [1.0] for m in ("elapsed_s", "context_switches", "cpu_migrations")}
    )
    with pytest.raises(sl.ConfigError, match="invalid fit='work': no field it scales"):
        sl.calibrate(hb, "vm-2", "v6.18", fit="work", progress=False)


def test_the_sitting_script_scores_a_stored_sitting(capsys):
    """scripts/validation/aim7_sitting.py on the frame measured here
    (2026-12-06): the calibrated model meets its targets on the
    held-out children, and the deliberately wrong model does not."""
    import importlib.util

    path = Path(__file__).parents[2] / "scripts" / "validation" / "aim7_sitting.py"
    spec = importlib.util.spec_from_file_location("aim7_sitting", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    frame = Path(__file__).parents[2] / "notebooks" / "data" / "aim7-sitting-vm2.parquet"
    real = pl.read_parquet(frame)
    table = mod.scores(mod.models(real, "vm-2", "v6.18", 2))
    right, wrong = table.row(0, named=True), table.row(3, named=True)
    for k, target in mod.TARGETS.items():
        assert right[f"{k}_err"] <= target, (k, right)
    assert wrong["jobs_per_min_err"] > 2 * right["jobs_per_min_err"]
    assert mod.main(["--frame", str(frame), "--seeds", "2"]) == 0
    assert "targets: jobs_per_min met" in capsys.readouterr().out


def test_cli_measure_aim7_refuses_the_perf_options(capsys):
    from schedlab.cli import main

    assert main(["measure", "aim7", "--reaim", "/nonexistent", "--groups", "3"]) == 2
    assert "invalid --groups for measure aim7" in capsys.readouterr().err
    assert main(["measure", "pipe", "--children", "2"]) == 2
    assert "invalid --children with measure pipe: it is measure aim7's" in capsys.readouterr().err
    assert main(["measure", "record", "--jobs", "2", "-o", "x.txt"]) == 2
    assert "invalid --jobs with measure record" in capsys.readouterr().err
    assert main(["measure", "aim7"]) == 2
    assert "invalid measure aim7 without --reaim" in capsys.readouterr().err
    assert main(["measure", "aim7", "--reaim", "/nonexistent"]) == 2
    assert "invalid reaim='/nonexistent': not a directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ("1,17823.53,17823.53,abcd,0.34,0.28,0.06,0.00,100.00,0.34,0.34", "JPS_C is 'abcd'"),
        ("1,٣٧٨٧٥,17823.53,297.06,0.34,0.28,0.06,0.00,100.00,0.34,0.34", "JPM is"),
        ("1,0.00,0.00,0.00,0.00,0.00,0.00,0.00,100.00,0.00,0.00", "jobs_per_min is 0"),
        ("1,17823.53,17823.53,297.06,0.34,0.28,0.06,0.00,100.00,0.34," + "9" * 40, "min_c is"),
    ],
)
def test_parse_reaim_csv_checks_every_field(row, words):
    with pytest.raises(sl.MeasureError, match="reaim CSV line 2") as e:
        ha.parse_reaim_csv(",".join(ha.CSV_HEADER) + "\n" + row + "\n")
    assert words in str(e.value)


def test_measure_aim7_refuses_odd_runner_results_and_paths(tmp_path):
    d = _reaim_dir(tmp_path)
    with pytest.raises(sl.MeasureError, match="the runner returned int"):
        sl.measure("aim7", children=1, reaim=d, reps=1, progress=False, runner=lambda c: 3)

    def raises(cmd):
        raise ValueError("bad")

    with pytest.raises(sl.MeasureError, match="cannot run"):
        sl.measure("aim7", children=1, reaim=d, reps=1, progress=False, runner=raises)
    for path in ("/tmp/a\x00", "~nouser-xyz/run", "/tmp/" + "a" * 5000):
        with pytest.raises(sl.ConfigError, match="invalid reaim="):
            sl.measure("aim7", reaim=path, progress=False, runner=raises)
