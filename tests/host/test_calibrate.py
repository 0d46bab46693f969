"""``sl.calibrate``: recovers the scale factors of a frame the model itself
made with them; reports fitted and held-out rows; refuses bad input."""

from __future__ import annotations

import polars as pl
import pytest
import schedlab as sl
from schedlab.host import calibration as cal

MACHINE, KERNEL = "vm-2", "v3.13"
# small configurations: one group, few loops (a run is milliseconds)
CONFIGS = [
    {"ipc": ipc, "mode": mode, "groups": g, "loops": 20}
    for ipc in ("pipe", "socket")
    for mode in ("process", "thread")
    for g in (1, 2)
]


def _synthetic(factors: dict[str, float], seeds: int = 2) -> pl.DataFrame:
    """What `measure` would return if the host were the model with these factors."""
    costs = cal.scaled(sl.CostModel.preset(MACHINE), factors)
    df = cal.model_runs(CONFIGS, MACHINE, KERNEL, costs, seeds=seeds, threads=2)
    return df.with_columns(pl.lit("hackbench").alias("bench"))


@pytest.fixture(scope="module")
def recovered() -> sl.Calibration:
    real = _synthetic({"socket": 1.5, "pipe": 0.65})
    return sl.calibrate(
        real,
        MACHINE,
        KERNEL,
        fit=["socket", "pipe"],
        seeds=2,
        threads=2,
        progress=False,
        train=[{"groups": 1}],
    )


def test_recovers_known_scale_factors(recovered):
    f = recovered.factors
    assert f["socket"] == pytest.approx(1.5, rel=0.1)
    assert f["pipe"] == pytest.approx(0.65, rel=0.15)
    c = recovered.costs.to_dict()
    base = sl.CostModel.preset(MACHINE).to_dict()
    assert c["sock_write_ns"] == round(base["sock_write_ns"] * f["socket"])
    assert c["ipi_latency_ns"] == base["ipi_latency_ns"]  # not fitted


def test_report_and_summary(recovered):
    rep = recovered.report
    assert rep.columns == [
        "ipc",
        "mode",
        "groups",
        "loops",
        "metric",
        "real",
        "model",
        "ratio",
        "role",
        "outlier",
        "noisy",
    ]
    assert rep.height == len(CONFIGS) * 3
    assert set(rep.filter(pl.col("groups") == 1)["role"]) == {"fitted"}
    assert set(rep.filter(pl.col("groups") == 2)["role"]) == {"held_out"}
    el = rep.filter(pl.col("metric") == "elapsed_s")
    # the fitted model predicts the held-out (2-group) runs of its own making
    assert ((el["ratio"] - 1).abs() < 0.1).all()
    s = recovered.summary
    assert s["metric"].to_list() == sorted(cal.METRICS)
    assert s["n"].to_list() == [4, 4, 4]
    assert s.columns == ["metric", "n", "median_abs_rel_err", "max_abs_rel_err", "outliers"]
    assert s.filter(pl.col("metric") == "elapsed_s")["median_abs_rel_err"][0] < 0.1


def test_bad_inputs_name_parameter_value_and_allowed():
    real = _synthetic({}, seeds=1)
    with pytest.raises(sl.ConfigError, match=r"fit='sockets'.*socket, pipe"):
        sl.calibrate(real, MACHINE, KERNEL, fit=["sockets"], progress=False)
    with pytest.raises(sl.ConfigError, match="seeds=0"):
        sl.calibrate(real, MACHINE, KERNEL, seeds=0, progress=False)
    with pytest.raises(sl.ConfigError, match="missing columns"):
        sl.calibrate(real.drop("elapsed_s"), MACHINE, KERNEL, progress=False)
    with pytest.raises(sl.ConfigTypeError, match="real"):
        sl.calibrate({"elapsed_s": [1.0]}, MACHINE, KERNEL, progress=False)
    with pytest.raises(sl.ConfigError, match="matches no measured configuration"):
        sl.calibrate(real, MACHINE, KERNEL, train=[{"groups": 7}], progress=False)
    with pytest.raises(sl.ConfigError, match="keys"):
        sl.calibrate(real, MACHINE, KERNEL, train=[{"group": 1}], progress=False)
    with pytest.raises(sl.ConfigError, match="invalid kernel=.v9.99.*presets"):
        sl.calibrate(real, MACHINE, "v9.99", progress=False)
    # every argument is checked before any model run
    with pytest.raises(sl.ConfigTypeError, match=r"seed: got str '1', expected int"):
        sl.calibrate(real, MACHINE, KERNEL, seed="1", progress=False)
    with pytest.raises(sl.ConfigError, match=r"seed=-1: expected an integer from 0"):
        sl.calibrate(real, MACHINE, KERNEL, seed=-1, progress=False)
    with pytest.raises(sl.ConfigTypeError, match="threads: got float"):
        sl.calibrate(real, MACHINE, KERNEL, threads=2.0, progress=False)
    with pytest.raises(sl.ConfigError, match="max_evaluations=0"):
        sl.calibrate(real, MACHINE, KERNEL, max_evaluations=0, progress=False)
    with pytest.raises(sl.ConfigTypeError, match=r"metrics: got int 3, expected a list"):
        sl.calibrate(real, MACHINE, KERNEL, metrics=3, progress=False)
    with pytest.raises(sl.ConfigTypeError, match=r"metrics entry: got list"):
        sl.calibrate(real, MACHINE, KERNEL, metrics=[["elapsed_s"]], progress=False)
    with pytest.raises(sl.ConfigError, match="metric named twice"):
        sl.calibrate(real, MACHINE, KERNEL, metrics=["elapsed_s", "elapsed_s"], progress=False)
    with pytest.raises(sl.ConfigTypeError, match=r"fit entry: got list"):
        sl.calibrate(real, MACHINE, KERNEL, fit=[["socket"]], progress=False)
    with pytest.raises(sl.ConfigTypeError, match=r"fit: got int"):
        sl.calibrate(real, MACHINE, KERNEL, fit=3, progress=False)
    neg = real.with_columns(pl.lit(-1.0).alias("cpu_migrations"))
    with pytest.raises(sl.ConfigError, match="cpu_migrations"):
        sl.calibrate(neg, MACHINE, KERNEL, progress=False)


def test_the_model_runs_are_points_of_the_given_workload():
    # hackbench's parent_wakee_flips decides where the start's wake-ups put
    # the workers (docs/guide/schedule.md): the same configurations under a
    # base workload with flips 4 are other runs than under hackbench()
    cfg = [{"ipc": "pipe", "mode": "process", "groups": 2, "loops": 20}]
    costs = sl.CostModel.preset(MACHINE)
    plain = cal.model_runs(cfg, MACHINE, "v6.18", costs, seeds=2, threads=2)
    same = cal.model_runs(
        cfg, MACHINE, "v6.18", costs, seeds=2, threads=2, workload=sl.workloads.hackbench()
    )
    flips = cal.model_runs(
        cfg,
        MACHINE,
        "v6.18",
        costs,
        seeds=2,
        threads=2,
        workload=sl.workloads.hackbench(parent_wakee_flips=4),
    )
    assert same.equals(plain)
    assert not flips.equals(plain)
    # each configuration still sets groups, loops, ipc and mode
    w = sl.workloads.hackbench(groups=9, loops=500, ipc="socket", parent_wakee_flips=4)
    direct = sl.simulate(
        MACHINE, "v6.18", w.replace(groups=2, loops=20, ipc="pipe"), seed=cal.derive_seed(0, 0, 0)
    )
    via = cal.model_runs(cfg, MACHINE, "v6.18", costs, seeds=1, threads=1, workload=w)
    assert via["context_switches"][0] == direct.metrics["context_switches"]


def test_calibrate_keeps_its_workload_and_refuses_another_kind():
    real = _synthetic({}, seeds=1)
    w = sl.workloads.hackbench(parent_wakee_flips=3)
    c = sl.calibrate(
        real,
        MACHINE,
        KERNEL,
        fit=["pipe"],
        seeds=1,
        threads=2,
        progress=False,
        max_evaluations=2,
        train=[{"groups": 1, "ipc": "pipe", "mode": "process"}],
        workload=w,
    )
    assert c.workload == w
    with pytest.raises(sl.ConfigTypeError, match="invalid type for workload: got str"):
        sl.calibrate(real, MACHINE, KERNEL, workload="hackbench", progress=False)
    with pytest.raises(sl.ConfigError, match="invalid workload='spinners'"):
        sl.calibrate(real, MACHINE, KERNEL, workload=sl.workloads.spinners([0, 0]), progress=False)
