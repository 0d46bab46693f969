"""Workloads' parameters are declared once, in the core
(``_core.WORKLOAD_PARAMS``, ``src/workload/params.rs``): each builder takes
exactly the declared arguments in the declared order with the declared
defaults, checks the declared bounds, and the core refuses the same values;
``Workload.parameters`` and ``sl.workload_info()`` are the declarations."""

from __future__ import annotations

import inspect

import pytest
import schedlab as sl
from schedlab import _core

PARAMS = _core.WORKLOAD_PARAMS
# the integers the builders take in the core's unit
INTS = [p for p in PARAMS if p["type"] == "int" and p["scale"] == 1]
# What a builder needs besides the parameter under test (a required one).
REQUIRED = {"aim7": {"tasks": 1}}
# the kinds whose builder passes its arguments to the core by their declared names
STRUCT_KINDS = tuple(_core.WORKLOAD_KEYED_KINDS)


def _build(kind: str, **kw: object) -> sl.workloads.Workload:
    builder = getattr(sl.workloads, kind)
    return builder(**{**REQUIRED.get(kind, {}), **kw})


def _ids(p: dict) -> str:
    return f"{p['kind']}.{p['arg']}"


def test_every_kind_is_declared_with_a_builder():
    assert set(STRUCT_KINDS) == {"hackbench", "pipe_pingpong", "volano", "aim7", "schbench"}
    assert list(_core.WORKLOAD_KINDS) == list(sl.workloads.FACTORIES) + ["mix"]
    assert {p["kind"] for p in PARAMS} == set(_core.WORKLOAD_KINDS) | {"rt_kthreads"}
    assert _core.WORKLOAD_COMPONENTS == ["rt_kthreads"]
    keys = [(p["kind"], p["arg"]) for p in PARAMS]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("kind", _core.WORKLOAD_KINDS + _core.WORKLOAD_COMPONENTS)
def test_the_builders_signature_is_the_declaration(kind):
    builder = getattr(sl.workloads, kind)
    sig = inspect.signature(builder).parameters
    declared = [p for p in PARAMS if p["kind"] == kind]
    assert list(sig) == [p["arg"] for p in declared]
    if kind in _core.WORKLOAD_KINDS:
        assert sl.workloads.Workload.parameters(kind) == list(sig)
    for p in declared:
        default = sig[p["arg"]].default
        if p["required"]:
            assert default is inspect.Parameter.empty, p
        else:
            assert default == p["default"] and type(default) is type(p["default"]), p
        assert p["doc"]


@pytest.mark.parametrize("kind", STRUCT_KINDS)
def test_the_builder_writes_the_declared_keys(kind):
    """The core reads these keys by their declarations (workload_params!)."""
    names = {p["name"] for p in PARAMS if p["kind"] == kind}
    written = set(_build(kind).params)
    assert written <= names
    assert names - written <= {"rt_kthreads"}  # hackbench's, only when given


@pytest.mark.parametrize("p", INTS, ids=_ids)
def test_the_builder_takes_the_low_bound_and_refuses_one_past(p):
    """(The high bound itself may break a rule across parameters, e.g.
    hackbench's 2·groups·fds tasks; the core's unit test takes it alone.)"""
    name, lo, hi = p["arg"], p["min"], p["max"]
    if not (p["kind"] == "hackbench" and name == "sndbuf"):  # below two messages' truesize
        _build(p["kind"], **{name: lo})
    for bad in (lo - 1, hi + 1):
        with pytest.raises(sl.ConfigError, match=rf"{name}={bad}\b.*from {lo} to {hi}"):
            _build(p["kind"], **{name: bad})


@pytest.mark.parametrize("p", [p for p in INTS if p["kind"] in STRUCT_KINDS], ids=_ids)
def test_the_core_refuses_one_past_the_bounds_itself(p):
    """The core's own check (``workload_check``), not only the builder's."""
    params = dict(_build(p["kind"]).params)
    params[p["name"]] = p["max"] + 1
    with pytest.raises(sl.ConfigError, match=rf"{p['name']}.*from {p['min']} to {p['max']}"):
        _core.workload_check(p["kind"], params)


@pytest.mark.parametrize("p", [p for p in PARAMS if p["type"] == "choice"], ids=_ids)
def test_a_choice_outside_the_declared_names_is_refused_naming_them(p):
    if p["kind"] not in STRUCT_KINDS + ("spinners",):
        pytest.skip("no choice-valued parameter")
    kw = {} if p["kind"] != "spinners" else {"nice": [0]}
    with pytest.raises(sl.ConfigError) as e:
        _build(p["kind"], **kw, **{p["arg"]: "no-such"})
    assert all(v in str(e.value) for v in p["values"]), e.value


@pytest.mark.parametrize(
    "p", [p for p in PARAMS if p["type"] == "float" and p["kind"] in STRUCT_KINDS], ids=_ids
)
def test_a_number_past_its_declared_range_is_refused_by_the_core(p):
    params = dict(_build(p["kind"]).params)
    params[p["name"]] = p["max"] * 2 + 1
    with pytest.raises(sl.ConfigError, match=p["name"]):
        _core.workload_check(p["kind"], params)


def test_a_scaled_parameter_is_declared_in_the_cores_unit():
    (h,) = [p for p in PARAMS if (p["kind"], p["arg"]) == ("volano", "handle_us")]
    assert (h["name"], h["scale"]) == ("handle_ns", 1000)
    w = sl.workloads.volano(handle_us=2.5)
    assert w.params["handle_ns"] == 2500
    with pytest.raises(sl.ConfigError, match="handle_us"):
        sl.workloads.volano(handle_us=h["max"] / 1000 * 2)


def test_workload_info_is_the_declaration():
    f = sl.workload_info()
    assert f.height == len(PARAMS)
    assert f.columns[:4] == ["kind", "arg", "type", "default"]
    row = f.filter((f["kind"] == "hackbench") & (f["arg"] == "groups")).row(0, named=True)
    assert (row["type"], row["default"], row["required"]) == ("int", "10", False)
    assert row["allowed"] == "an integer from 1 to 100000"
    tasks = f.filter((f["kind"] == "aim7") & (f["arg"] == "tasks")).row(0, named=True)
    assert tasks["required"] and tasks["default"] == ""
    handle = f.filter(f["arg"] == "handle_us").row(0, named=True)
    assert handle["type"] == "float" and handle["allowed"].startswith("a number from 0.001 to")


@pytest.mark.parametrize("kind", STRUCT_KINDS)
def test_every_key_must_be_given_and_none_only_where_the_default_is_none(kind):
    """The core reads each declared key: a missing one is refused by name,
    and None is a type error except where the builder's default is None."""
    base = dict(_build(kind).params)
    for p in (p for p in PARAMS if p["kind"] == kind and p["name"] in base):
        rest = {k: v for k, v in base.items() if k != p["name"]}
        with pytest.raises(sl.ConfigError, match=rf"{p['name']}=<missing>"):
            _core.workload_check(kind, rest)
        if p["default"] is None and not p["required"]:
            _core.workload_check(kind, {**base, p["name"]: None})
        else:
            with pytest.raises(sl.ConfigTypeError, match=rf"type for {p['name']}: got NoneType"):
                _core.workload_check(kind, {**base, p["name"]: None})


@pytest.mark.parametrize("p", [p for p in INTS if p["kind"] in STRUCT_KINDS], ids=_ids)
def test_an_integer_past_every_machine_type_is_told_the_declared_range(p):
    params = {**_build(p["kind"]).params, p["name"]: 2**200}
    with pytest.raises(sl.ConfigError, match=rf"from {p['min']} to {p['max']}"):
        _core.workload_check(p["kind"], params)


def test_a_list_item_out_of_range_is_named_by_its_index():
    params = dict(_build("aim7").params)
    with pytest.raises(sl.ConfigError, match=r"shared_lines\[0\]=-1: expected an integer from 0"):
        _core.workload_check("aim7", {**params, "shared_lines": [-1] * 26})
    with pytest.raises(sl.ConfigError, match=r"cpus\[1\]=5000: expected an integer from 0 to 4095"):
        _core.workload_check("aim7", {**params, "cpus": [0, 5000]})


def test_the_rt_kthreads_component_is_read_by_its_declaration():
    d = sl.workloads.rt_kthreads(irq_threads=4)
    assert list(d) == [p["name"] for p in PARAMS if p["kind"] == "rt_kthreads"]
    for p in (p for p in PARAMS if p["kind"] == "rt_kthreads"):
        rest = {k: v for k, v in d.items() if k != p["name"]}
        with pytest.raises(sl.ConfigError, match=rf"rt_kthreads\.{p['name']}=<missing>"):
            _core.rt_kthreads_check(rest)
    no_prio = {k: v for k, v in d.items() if k != "irq_prio"}
    with pytest.raises(
        sl.ConfigError, match=r"irq_prio=<missing>: expected an integer from 1 to 99"
    ):
        _core.rt_kthreads_check(no_prio)  # a missing integer says its range
    (prio,) = [p for p in PARAMS if p["kind"] == "rt_kthreads" and p["name"] == "irq_prio"]
    with pytest.raises(sl.ConfigError, match=r"rt_kthreads\.irq_prio=100: .*from 1 to 99"):
        _core.rt_kthreads_check({**d, "irq_prio": prio["max"] + 1})
    with pytest.raises(sl.ConfigError, match=r"rt_kthreads\.irq_period_us=0\.005: .*µs from 10 to"):
        sl.workloads.rt_kthreads(irq_period_us=0.005)


@pytest.mark.parametrize("v", [2**32, 2**64, 2**200])
def test_an_integer_for_a_flag_or_a_name_is_a_type_error_whatever_its_size(v):
    d = sl.workloads.rt_kthreads()
    with pytest.raises(sl.ConfigTypeError, match=r"type for rt_kthreads\.watchdog: got int"):
        _core.rt_kthreads_check({**d, "watchdog": v})
    with pytest.raises(sl.ConfigTypeError, match=r"type for rt_kthreads\.irq_policy: got int"):
        _core.rt_kthreads_check({**d, "irq_policy": v})
    with pytest.raises(sl.ConfigTypeError, match=r"type for workfile: got int"):
        _core.workload_check("aim7", {**_build("aim7").params, "workfile": v})


def test_the_cores_hackbench_check_refuses_a_kernel_thread_that_never_sleeps():
    """What no machine can run is refused without one, as the builder does."""
    rt = sl.workloads.rt_kthreads(irq_threads=2)
    never_sleeps = {**rt, "irq_run_ns": rt["irq_period_ns"]}
    params = {**_build("hackbench").params, "rt_kthreads": never_sleeps}
    with pytest.raises(sl.ConfigError, match=r"rt_kthreads\.irq_run_ns=.*must sleep"):
        _core.workload_check("hackbench", params)
