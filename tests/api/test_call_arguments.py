"""Public functions and constructors check their arguments' names and
types as the core's do: a call that does not bind (an unknown keyword, too
many positional arguments) is a ``ConfigTypeError`` naming what the
function takes, and a value of the wrong type or shape a ``ConfigTypeError``
or ``ConfigError`` naming the parameter — never a plain ``TypeError``,
``KeyError`` or ``AttributeError`` from inside the library."""

from __future__ import annotations

import inspect
import types

import polars as pl
import pytest
import schedlab as sl

#: Result containers the library builds (not called by users to configure).
BUILT = {"Result", "Workload", "Calibration", "Validation"}


def public_callables() -> list[str]:
    names = []
    for name in sl.__all__:
        obj = getattr(sl, name)
        if isinstance(obj, types.ModuleType) or not callable(obj) or name in BUILT:
            continue
        if isinstance(obj, type) and issubclass(obj, BaseException):
            continue
        names.append(name)
    return names


# --- 5. run_spec ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "exc", "match"),
    [
        (
            {"workload": {"kind": ["hackbench"]}},
            sl.ConfigTypeError,
            r"invalid type for workload.kind: got list \['hackbench'\], expected str, one of",
        ),
        ({}, sl.ConfigError, r"a \[workload\] table with kind = \.\.\. is required"),
        ({"workload": {}}, sl.ConfigError, r"a \[workload\] table with kind"),
        (5, sl.ConfigTypeError, r"invalid type for spec: got int, expected a dict"),
        (None, sl.ConfigTypeError, r"invalid type for spec: got NoneType"),
        ({"workload": "hackbench"}, sl.ConfigTypeError, r"invalid type for workload: got str"),
        ({"workload": {"kind": "nope"}}, sl.ConfigError, r"invalid workload kind='nope'"),
        ({1: 2}, sl.ConfigTypeError, r"invalid type for a key of spec: got int 1"),
        (
            {"workload": {"kind": "hackbench"}, "grid": {2: [1]}},
            sl.ConfigTypeError,
            r"invalid type for a key of grid: got int 2",
        ),
        ({"workload": {"kind": "hackbench"}, "bogus": 1}, sl.ConfigError, r"invalid spec key"),
    ],
)
def test_run_spec_refuses_a_malformed_spec_by_name(spec, exc, match):
    with pytest.raises(exc, match=match):
        sl.run_spec(spec, progress=False)


def test_run_spec_refuses_unknown_arguments():
    with pytest.raises(sl.ConfigTypeError, match="invalid argument 'bogus' for run_spec"):
        sl.run_spec({"workload": {"kind": "hackbench"}}, bogus=1)
    with pytest.raises(sl.ConfigTypeError, match=r"it takes 1 positional argument \(spec\)"):
        sl.run_spec({"workload": {"kind": "hackbench"}}, False)


def test_run_spec_still_runs_a_good_spec():
    df = sl.run_spec({"workload": {"kind": "hackbench", "groups": 1, "loops": 3}}, progress=False)
    assert df["status"].to_list() == ["ok"]


# --- 6. format_latency -----------------------------------------------------------


def test_format_latency_refuses_what_is_not_a_latency_frame():
    with pytest.raises(sl.ConfigTypeError, match="invalid type for df: got NoneType None"):
        sl.format_latency(None)
    with pytest.raises(sl.ConfigError, match=r"invalid df: missing columns \['total_s'\]"):
        sl.format_latency(pl.DataFrame({"count": [1], "mean_us": [1.0], "max_us": [2.0]}))


def test_format_latency_still_formats_a_run_s_latency():
    r = sl.simulate("vm-2", "v3.8", sl.workloads.hackbench(groups=1, loops=3), latency=True)
    assert "TOTAL:" in sl.format_latency(r.latency())


# --- 9. Group's arguments ------------------------------------------------------------


def test_group_refuses_an_unknown_field_naming_its_fields():
    with pytest.raises(
        sl.ConfigTypeError,
        match=r"invalid argument 'foo' for Group: expected one of name, parent, shares, weight, "
        "quota_us, period_us, burst_us, idle",
    ):
        sl.Group("box", foo=1)


def test_group_refuses_too_many_positional_arguments():
    with pytest.raises(
        sl.ConfigTypeError,
        match=r"invalid arguments for Group\('box', .*\): it takes 8 positional arguments "
        r"\(name, parent, .*\), got 9",
    ):
        sl.Group("box", None, 1024, None, None, 100_000, 0, False, "extra")
    assert sl.Group("box", None, 1024).shares == 1024  # positional fields still work


# --- every public callable -------------------------------------------------------------


@pytest.mark.parametrize("name", public_callables())
def test_an_unknown_keyword_is_a_config_error_naming_the_function(name):
    with pytest.raises((sl.ConfigTypeError, sl.ConfigError)) as info:
        getattr(sl, name)(bogus_keyword=1)
    assert "bogus_keyword" in str(info.value) or name.split(".")[-1] in str(info.value)


@pytest.mark.parametrize("name", public_callables())
def test_too_many_positional_arguments_is_a_config_type_error(name):
    obj = getattr(sl, name)
    target = obj.__init__ if isinstance(obj, type) else obj
    params = inspect.signature(target).parameters.values()
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        pytest.skip("takes any number of positional arguments")
    with pytest.raises(sl.ConfigTypeError, match="positional argument"):
        obj(*[None] * 30)


# --- found by scripts/dev/hostile.py ------------------------------------------------


def test_schedule_functions_refuse_unknown_keywords_and_bad_tasks():
    r = sl.simulate("vm-2", "v6.18", sl.workloads.hackbench(groups=1, fds=2, loops=2), trace=True)
    for f in (sl.schedule_stats, sl.schedule_samples):
        with pytest.raises(sl.ConfigTypeError, match="bogus_kw"):
            f(r, bogus_kw=1)
        with pytest.raises(sl.ConfigTypeError, match="invalid type for tasks: got ellipsis"):
            f(r, tasks=...)
        with pytest.raises(sl.ConfigTypeError, match="invalid type for tasks: got list"):
            f(r, tasks=["a", 1])
        f(r, tasks="receiver/0")  # one name, as from_trace takes it
        with pytest.raises(sl.ConfigError, match="fds=0"):
            f(r, fds=0)


def test_format_latency_refuses_a_column_of_text():
    lat = sl.simulate(
        "vm-2", "v6.18", sl.workloads.hackbench(groups=1, fds=2, loops=5), latency=True
    ).latency()
    bad = lat.with_columns(pl.col("max_us").cast(pl.String))
    with pytest.raises(sl.ConfigTypeError, match="column 'max_us' is String"):
        sl.format_latency(bad, sort="max_us")


def test_simulate_refuses_a_hand_built_workload_without_dict_params():
    bad = sl.workloads.Workload(kind="hackbench", params=[1, 2])  # type: ignore[arg-type]
    with pytest.raises(sl.ConfigTypeError, match="params list"):
        sl.simulate("vm-2", "v6.18", bad)
    keys = sl.workloads.Workload(kind="hackbench", params={1: 2})  # type: ignore[dict-item]
    with pytest.raises(sl.ConfigTypeError, match="keys that are not str"):
        sl.simulate("vm-2", "v6.18", keys)
