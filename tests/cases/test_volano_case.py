"""Seed case 1 (2.6.37-rc1 VolanoMark): the reproduction must not be lost.

Fixed seeds, so the numbers are deterministic; the assertions are on
directions and ratios, not exact values."""

from __future__ import annotations

import polars as pl
import pytest
import schedlab as sl
from schedlab import cases

SEEDS = (1, 2, 3)


def _ratios(
    machine: str = "core2-2s", rooms: int = 10, messages: int = 50, **kw: object
) -> dict[str, dict]:
    runs = cases.volano_runs(
        machine, rooms=rooms, messages=messages, seeds=SEEDS, progress=False, **kw
    )
    cmp = cases.volano_comparison(cases.runs_frame(runs))
    rows = {r["kernel"]: r for r in cmp.iter_rows(named=True)}
    base = rows["v2.6.36"]
    cols = [
        "throughput",
        "context_switches_per_s",
        "newidle_balance_calls_per_s",
        "cpu_migrations_per_s",
        "cross_llc_fraction",
    ]
    return {k: {c: v[c] / base[c] for c in cols} for k, v in rows.items()}


@pytest.fixture(scope="module")
def core2() -> dict[str, dict]:
    return _ratios()


def test_rc1_rearm_costs_throughput_by_running_newidle_balancing(core2):
    rc1 = core2["v2.6.37-rc1"]
    assert rc1["throughput"] < 0.95
    # the mechanism: the throttle defeated, many more passes and migrations
    assert rc1["newidle_balance_calls_per_s"] > 5
    assert rc1["cpu_migrations_per_s"] > 2
    assert rc1["context_switches_per_s"] < 1
    # and the locality wake-affine placement built is lost
    assert rc1["cross_llc_fraction"] > 1.5


def test_the_fix_restores_2_6_36(core2):
    assert abs(core2["v2.6.37"]["throughput"] - 1) < 0.03
    # locality: 2.6.37 loses less than half of what rc1 loses
    lost_37 = core2["v2.6.37"]["cross_llc_fraction"] - 1
    lost_rc1 = core2["v2.6.37-rc1"]["cross_llc_fraction"] - 1
    assert lost_37 < 0.5 * lost_rc1


@pytest.mark.xfail(
    strict=True,
    reason="open: the model loses ~9 % under rc1, not the seed's 15-40 %",
)
def test_rc1_throughput_in_the_seed_band(core2):
    assert 0.60 <= core2["v2.6.37-rc1"]["throughput"] <= 0.85


def test_no_throttle_no_regression():
    r = _ratios(migration_cost_ns=0)
    for k in ("v2.6.37-rc1", "v2.6.37"):
        assert abs(r[k]["throughput"] - 1) < 0.01, k


@pytest.mark.parametrize(("machine", "rooms"), [("core2-2s", 5), ("nhm-ep", 10)])
def test_regression_on_fewer_rooms_and_another_machine(machine, rooms):
    # at the demo's 100 messages per user (at 50, rooms=5 sits at 0.900)
    assert _ratios(machine, rooms, messages=100)["v2.6.37-rc1"]["throughput"] < 0.9


def test_comparison_table_and_seed_numbers():
    runs = cases.volano_runs(
        rooms=2, users=4, messages=5, seeds=(1, 2), kernels=("v2.6.36", "v2.6.37"), progress=False
    )
    f = cases.runs_frame(runs)
    assert f.height == 4 and set(f["kernel"]) == {"v2.6.36", "v2.6.37"}
    cmp = cases.volano_comparison(f)
    assert cmp["runs"].to_list() == [2, 2]
    assert cmp.filter(pl.col("kernel") == "v2.6.36")["throughput_change_pct"][0] == 0
    text = cases.format_comparison(cmp)
    assert "v2.6.37" in text and "migrations/s" in text
    seed = cases.seed_vmstat_table()
    assert set(seed["kernel"]) == {"v2.6.36", "v2.6.37-rc1"}
    assert sl.format_vmstat({k: rs[0] for k, rs in runs.items()}).count("v2.6.3") == 2


@pytest.mark.parametrize(
    ("kwargs", "exc", "needle"),
    [
        ({"kernels": "v2.6.36"}, TypeError, "kernels"),
        ({"kernels": ()}, TypeError, "kernels"),
        ({"seeds": ()}, TypeError, "seeds"),
        ({"seeds": (1, -1)}, ValueError, "seeds item"),
        ({"kernels": ("v9",)}, ValueError, "v9"),
        ({"progress": "yes"}, TypeError, "progress"),
        ({"rooms": 0}, ValueError, "rooms"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, exc, needle):
    with pytest.raises(exc, match=needle):
        cases.volano_runs(progress=False, **{"messages": 1, **kwargs})


def test_comparison_needs_its_base_and_columns():
    runs = cases.volano_runs(rooms=1, users=3, messages=2, seeds=(1,), progress=False)
    frame = cases.runs_frame(runs)
    with pytest.raises(ValueError, match="base='v3.8'"):
        cases.volano_comparison(frame, "v3.8")
    with pytest.raises(ValueError, match="missing columns"):
        cases.volano_comparison(pl.DataFrame({"kernel": ["v2.6.36"], "throughput": [1.0]}))
    with pytest.raises(TypeError, match="frame"):
        cases.volano_comparison({"kernel": []})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="runs"):
        cases.runs_frame({})
    with pytest.raises(TypeError, match=r"runs\['v2.6.36'\]"):
        cases.runs_frame({"v2.6.36": [1]})  # type: ignore[list-item]


def _change_nth_run(monkeypatch, n, change):
    """Wrap the case module's simulate so that ``change(kwargs)`` runs
    before its n-th call (it may edit the arguments or raise)."""
    real = cases.volano.simulate
    calls = []

    def wrapped(*a, **k):
        calls.append(1)
        if len(calls) == n:
            change(k)
        return real(*a, **k)

    monkeypatch.setattr(cases.volano, "simulate", wrapped)


def test_ctrl_c_keeps_the_finished_runs(monkeypatch):
    def ctrl_c(_kwargs):
        raise KeyboardInterrupt

    _change_nth_run(monkeypatch, 3, ctrl_c)
    with pytest.raises(cases.CaseInterrupted) as e:
        cases.volano_runs(rooms=1, users=3, messages=2, seeds=(1, 2), progress=False)
    assert isinstance(e.value, KeyboardInterrupt)
    assert {k: len(v) for k, v in e.value.partial.items()} == {"v2.6.36": 2}


def test_a_run_that_does_not_finish_keeps_the_finished_ones(monkeypatch):
    # the second run stops at a time limit
    _change_nth_run(monkeypatch, 2, lambda k: k.update(duration_s=1e-5))
    with pytest.raises(cases.CaseRunFailed, match="seed=2: time_limit") as e:
        cases.volano_runs(rooms=1, users=3, messages=2, seeds=(1, 2), progress=False)
    assert isinstance(e.value, ValueError)
    assert {k: len(v) for k, v in e.value.partial.items()} == {"v2.6.36": 1}
    assert e.value.failed.status == "time_limit"
