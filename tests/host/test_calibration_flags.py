"""What ``sl.calibrate`` flags instead of hiding: the summary's relative
errors under their own name, report rows whose model/real ratio is far from
the rest of its metric (``outlier``), measured configurations whose
repetitions disagree (``noisy``, ``rep_noise``), all of it in ``print(cal)``."""

from __future__ import annotations

import math

import polars as pl
import pytest
import schedlab as sl
from schedlab.host import calibration as cal
from schedlab.host import validation

MACHINE, KERNEL = "vm-2", "v3.13"


def _report(ratios: dict[str, list[float]]) -> pl.DataFrame:
    """A report of one row per (group count, metric): real 100, model = 100 × ratio."""
    rows = []
    for metric, rs in ratios.items():
        for g, r in enumerate(rs, start=1):
            rows.append(
                {"ipc": "pipe", "mode": "thread", "groups": g, "loops": 20, "metric": metric,
                 "real": 100.0, "model": 100.0 * r, "ratio": r,
                 "role": "fitted" if g == 1 else "held_out"}
            )  # fmt: skip
    return pl.DataFrame(rows).with_columns(cal.outlier_flag())


def _measured(elapsed: dict[tuple[str, int], list[float]]) -> pl.DataFrame:
    """A measured frame: per (mode, groups) the reps' elapsed times."""
    rows = [
        {"bench": "hackbench", "ipc": "pipe", "mode": mode, "groups": g, "loops": 20,
         "rep": i, "elapsed_s": e, "context_switches": 1000.0, "cpu_migrations": 10.0}
        for (mode, g), es in elapsed.items()
        for i, e in enumerate(es)
    ]  # fmt: skip
    return pl.DataFrame(rows)


# --- 1. the summary says its errors are relative -----------------------------


def test_summary_names_the_error_relative():
    s = cal.summary(_report({"elapsed_s": [1.0, 1.2, 0.9, 1.5]}))
    assert s.columns == ["metric", "n", "median_abs_rel_err", "max_abs_rel_err", "outliers"]
    assert "median_abs_err" not in s.columns
    # |model/real - 1| of the three held-out rows: 0.2, 0.1, 0.5 (a fraction, not seconds)
    row = s.row(0, named=True)
    assert row["median_abs_rel_err"] == pytest.approx(0.2)
    assert row["max_abs_rel_err"] == pytest.approx(0.5)


def test_validation_summary_names_the_error_relative():
    effects = pl.DataFrame(
        {"metric": ["elapsed_s"] * 2, "error": [0.1, -0.3], "modelled": [True, True],
         "same_direction": [None, True]},
        schema={"metric": pl.String, "error": pl.Float64, "modelled": pl.Boolean,
                "same_direction": pl.Boolean},
    )  # fmt: skip
    s = validation.summary(effects)
    assert "median_abs_rel_err" in s.columns and "median_abs_err" not in s.columns
    el = s.filter(pl.col("metric") == "elapsed_s").row(0, named=True)
    assert el["median_abs_rel_err"] == pytest.approx(0.2) and el["met"] is False


# --- 2. outliers -------------------------------------------------------------


def test_a_row_813x_off_is_an_outlier_and_only_it():
    rep = _report(
        {
            "cpu_migrations": [2.1, 1.8, 3.3, 2.6, 813.0, 2.4],
            "elapsed_s": [0.95, 1.1, 1.05, 0.9, 1.0, 1.2],
        }
    )
    flagged = rep.filter(pl.col("outlier"))
    assert flagged.select("metric", "groups").rows() == [("cpu_migrations", 5)]
    s = cal.summary(rep)
    assert dict(zip(s["metric"], s["outliers"], strict=True)) == {
        "cpu_migrations": 1,
        "elapsed_s": 0,
    }
    (w,) = cal.calibration_warnings(rep, cal.rep_noise(_measured({("thread", 1): [1.0]})))
    assert w.startswith("outlier: pipe/thread, loops=20, groups=5 (held_out), cpu_migrations")
    assert "×813" in w and "×2.5" in w  # the row's ratio and the metric's median


def test_outlier_rule_needs_both_a_factor_of_3_and_3_5_robust_sds():
    # a tight metric: ×2.5 is 60 robust SDs out but within a factor of 3 -> not flagged
    tight = _report({"elapsed_s": [1.0, 1.01, 0.99, 1.0, 2.5]})
    assert not tight["outlier"].any()
    # a spread metric: ×16 is ×11 from its median but within 3.5 robust SDs -> not flagged
    wide = _report({"cpu_migrations": [1.0, 4.0, 0.25, 2.0, 0.5, 4.0 * 4]})
    assert not wide["outlier"].any()
    # the same row far beyond both is
    far = _report({"cpu_migrations": [1.0, 1.2, 0.9, 1.1, 1.0, 4.0]})
    assert far["outlier"].to_list() == [False] * 5 + [True]


def test_ratios_that_cannot_be_judged_are_null_not_false():
    rep = _report({"cpu_migrations": [1.0, 1.1, 0.9, 0.0, math.inf, math.nan]})
    assert rep["outlier"].to_list() == [False, False, False, None, None, None]


# --- 3. noisy repetitions ----------------------------------------------------


def test_rep_noise_flags_spread_and_a_5_group_run_slower_than_10():
    real = _measured(
        {
            ("process", 1): [0.10, 0.11, 0.10],
            ("process", 2): [0.10, 0.21, 0.15],  # spread 2.1
            ("process", 5): [0.60, 0.62, 0.61],  # every rep slower than 10 groups'
            ("process", 10): [0.50, 0.52, 0.55],
            ("thread", 5): [0.50, 0.56, 0.52],  # inverted medians, overlapping reps
            ("thread", 10): [0.49, 0.57, 0.53],
        }
    )
    n = cal.rep_noise(real)
    assert n.columns == [
        *cal.CONFIG,
        "reps",
        "elapsed_min",
        "elapsed_max",
        "spread",
        "noisy",
        "why",
    ]
    by = {(r["mode"], r["groups"]): r for r in n.iter_rows(named=True)}
    assert by[("process", 2)]["spread"] == pytest.approx(2.1)
    assert "2.10× the fastest (threshold ×1.5)" in by[("process", 2)]["why"]
    assert "every rep slower than groups=10's" in by[("process", 5)]["why"]
    assert "every rep faster than groups=5's" in by[("process", 10)]["why"]
    noisy = {k for k, r in by.items() if r["noisy"]}
    assert noisy == {("process", 2), ("process", 5), ("process", 10)}
    assert all(r["why"] == "" for k, r in by.items() if k not in noisy)


def test_rep_noise_compares_groups_within_one_change_only():
    real = pl.concat(
        [
            _measured({("thread", 5): [0.5, 0.5], ("thread", 10): [0.9, 0.9]}).with_columns(
                pl.lit("plain").alias("change")
            ),
            # a slow change at 5 groups is not "slower than plain's 10 groups"
            _measured({("thread", 5): [1.2, 1.2], ("thread", 10): [2.0, 2.1]}).with_columns(
                pl.lit("taskset -c 0").alias("change")
            ),
        ]
    )
    n = cal.rep_noise(real)
    assert n.columns[0] == "change" and n.height == 4
    assert not n["noisy"].any()
    with pytest.raises(sl.ConfigError, match=r"invalid real: missing columns \['elapsed_s'\]"):
        cal.rep_noise(real.drop("elapsed_s"))


# --- end to end: calibrate's report, warnings and text -----------------------

CONFIGS = [
    {"ipc": "pipe", "mode": mode, "groups": g, "loops": 20}
    for mode in ("process", "thread")
    for g in (1, 2, 3)
]


@pytest.fixture(scope="module")
def flagged() -> sl.Calibration:
    """The model's own runs as the "measured" frame, with the migrations of
    one held-out configuration divided by 813 and one configuration's reps
    made 2× apart."""
    costs = sl.CostModel.preset(MACHINE)
    real = cal.model_runs(CONFIGS, MACHINE, KERNEL, costs, seeds=2, threads=2)
    odd = (pl.col("mode") == "thread") & (pl.col("groups") == 3)
    spread = (pl.col("mode") == "process") & (pl.col("groups") == 2) & (pl.col("rep") == 1)
    real = real.with_columns(
        pl.when(odd).then(pl.col("cpu_migrations") / 813).otherwise(pl.col("cpu_migrations")),
        pl.when(spread).then(pl.col("elapsed_s") * 2).otherwise(pl.col("elapsed_s")),
    )
    return sl.calibrate(
        real, MACHINE, KERNEL, fit="pipe", seeds=2, threads=2, progress=False,
        train=[{"groups": 1}], max_evaluations=4,
    )  # fmt: skip


def test_calibrate_flags_the_outlier_row(flagged):
    rep = flagged.report
    out = rep.filter(pl.col("outlier"))
    assert ("thread", 3, "cpu_migrations") in out.select("mode", "groups", "metric").rows()
    row = rep.filter(
        (pl.col("mode") == "thread")
        & (pl.col("groups") == 3)
        & (pl.col("metric") == "cpu_migrations")
    ).row(0, named=True)
    assert row["ratio"] > 100 and row["role"] == "held_out"
    s = flagged.summary.filter(pl.col("metric") == "cpu_migrations")
    assert s["outliers"][0] >= 1


def test_calibrate_flags_the_noisy_configuration(flagged):
    noisy = flagged.noise.filter(pl.col("noisy"))
    assert ("process", 2) in noisy.select("mode", "groups").rows()
    rep = flagged.report.filter((pl.col("mode") == "process") & (pl.col("groups") == 2))
    assert rep["noisy"].all() and rep.height == len(cal.METRICS)


def test_print_shows_summary_and_warnings(flagged):
    text = str(flagged)
    assert "|model/real - 1| per metric (relative error" in text
    assert "cpu_migrations" in text and "warnings:" in text
    assert any(w.startswith("outlier: pipe/thread, loops=20, groups=3") for w in flagged.warnings)
    assert any(w.startswith("noisy: pipe/process, loops=20, groups=2") for w in flagged.warnings)
    for w in flagged.warnings:
        assert f"  {w}" in text
    assert f"{len(flagged.warnings)} warnings" in repr(flagged)
