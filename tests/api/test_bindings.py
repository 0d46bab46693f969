"""The binding layer fails closed: every enum-valued parameter it converts
refuses a value it does not know with a ConfigError naming the parameter,
the value and the allowed names; a parameter dict with a key nobody reads,
a missing key or a value of the wrong type is refused too; nothing falls
back to a default or is dropped. The calls go to ``schedlab._core``
directly, as a hostile caller (or a bug in the Python layer) would."""

from __future__ import annotations

import re
from typing import Any

import pytest
import schedlab as sl
from schedlab import _core

W = sl.workloads

#: Each workload's normalised parameters, from the public functions.
PARAMS: dict[str, dict[str, Any]] = {
    "spinners": W.spinners(nice=[0, 5], run_us=100, sleep_us=50).params,
    "hackbench": W.hackbench(groups=1, fds=2, loops=2).params,
    "pipe_pingpong": W.pipe_pingpong(loops=10).params,
    "volano": W.volano(rooms=1, users=2, messages=2).params,
    "aim7": W.aim7(tasks=1).params,
}
RT = W.rt_kthreads(irq_threads=1)

#: (workload kind, parameter, its allowed names) for every enum the bindings convert.
ENUMS = [
    ("spinners", "dist", ["fixed", "exp"]),
    ("hackbench", "ipc", ["pipe", "socket"]),
    ("hackbench", "mode", ["process", "thread"]),
    ("pipe_pingpong", "mode", ["process", "thread"]),
]


def allowed_pattern(names: list[Any]) -> str:
    return ", ".join(re.escape(f'"{n}"') for n in names)


@pytest.mark.parametrize(("kind", "param", "names"), ENUMS, ids=[f"{k}.{p}" for k, p, _ in ENUMS])
@pytest.mark.parametrize("bad", ["bogus", "", "Process", "pipe "])
def test_an_unknown_workload_enum_value_is_refused_naming_it(kind, param, names, bad):
    pattern = rf"invalid {param}={re.escape(repr(bad).replace(chr(39), chr(34)))}: expected one of "
    with pytest.raises(sl.ConfigError, match=pattern + allowed_pattern(names)):
        _core.workload_check(kind, {**PARAMS[kind], param: bad})


@pytest.mark.parametrize(("kind", "param", "names"), ENUMS, ids=[f"{k}.{p}" for k, p, _ in ENUMS])
def test_a_workload_enum_of_the_wrong_type_is_a_type_error(kind, param, names):
    with pytest.raises(sl.ConfigTypeError, match=rf"invalid type for {param}: got int 1"):
        _core.workload_check(kind, {**PARAMS[kind], param: 1})


@pytest.mark.parametrize("bad", ["deadline", "FIFO", "other"])
def test_an_unknown_rt_policy_is_refused_naming_it(bad):
    pattern = rf'invalid rt_kthreads.irq_policy="{bad}": expected one of "fifo", "rr"'
    with pytest.raises(sl.ConfigError, match=pattern):
        _core.rt_kthreads_check({**RT, "irq_policy": bad})
    with pytest.raises(sl.ConfigError, match=pattern):
        _core.workload_check(
            "hackbench", {**PARAMS["hackbench"], "rt_kthreads": {**RT, "irq_policy": bad}}
        )


def test_the_public_workload_functions_get_the_cores_refusal():
    for call, pattern in [
        (lambda: W.hackbench(ipc="pipx"), r'invalid ipc="pipx": expected one of "pipe", "socket"'),
        (lambda: W.hackbench(mode="threads"), r'invalid mode="threads"'),
        (lambda: W.spinners(nice=[0], dist="normal"), r'invalid dist="normal"'),
        (lambda: W.pipe_pingpong(mode="fork"), r'invalid mode="fork"'),
        (lambda: W.rt_kthreads(irq_policy="deadline"), r'rt_kthreads.irq_policy="deadline"'),
        (lambda: W.aim7(tasks=1, workfile="fserver"), r'invalid workfile="fserver"'),
    ]:
        with pytest.raises(sl.ConfigError, match=pattern):
            call()


@pytest.mark.parametrize("kind", list(PARAMS))
def test_a_key_nobody_reads_is_refused(kind):
    with pytest.raises(sl.ConfigError, match=rf'unknown {kind} field "bogus": expected one of'):
        _core.workload_check(kind, {**PARAMS[kind], "bogus": 1})


@pytest.mark.parametrize("kind", list(PARAMS))
def test_a_missing_key_is_refused(kind):
    key = next(iter(PARAMS[kind]))
    params = {k: v for k, v in PARAMS[kind].items() if k != key}
    with pytest.raises(sl.ConfigError, match=rf"invalid {key}=<missing>"):
        _core.workload_check(kind, params)


def test_an_unknown_rt_kthreads_key_is_refused():
    with pytest.raises(sl.ConfigError, match=r'unknown rt_kthreads field "bogus"'):
        _core.rt_kthreads_check({**RT, "bogus": 1})


def test_spinner_lists_of_different_lengths_are_refused():
    # the conversion used to index every list by nice's length (a panic)
    params = {**PARAMS["spinners"], "yields": [False]}
    with pytest.raises(sl.ConfigError, match="one entry per task in nice"):
        _core.workload_check("spinners", params)


def test_an_unknown_workload_kind_is_refused():
    with pytest.raises(sl.ConfigError, match=r'invalid workload="fork_bomb": expected one of'):
        _core.workload_check("fork_bomb", {})


KERNEL_ENUMS = [
    f for f in _core.KERNEL_FIELD_INFO if f["values"] and isinstance(f["values"][0], str)
]


@pytest.mark.parametrize("field", KERNEL_ENUMS, ids=[f["name"] for f in KERNEL_ENUMS])
def test_an_unknown_kernel_enum_value_is_refused_naming_it(field):
    name = field["name"]
    pattern = rf'invalid {name}="bogus": expected one of {allowed_pattern(field["values"])}$'
    with pytest.raises(sl.ConfigError, match=pattern):
        _core.kernel_replace("v3.8", {}, {name: "bogus"})
    with pytest.raises(sl.ConfigError, match=pattern):
        sl.Kernel.preset("v6.18").replace(**{name: "bogus"})


def test_the_hz_value_set_is_enforced():
    with pytest.raises(sl.ConfigError, match=r"invalid hz=7: expected one of 100, 250, 300, 1000"):
        _core.kernel_replace("v3.8", {}, {"hz": 7})


@pytest.mark.parametrize("fields", [{"name": "v2.6.36"}, {"name": None}])
def test_name_is_refused_not_dropped(fields):
    """A ``name`` key used to be skipped silently by the conversion."""
    with pytest.raises(
        sl.ConfigError, match=r'Kernel has no setting "name".*Kernel\(base=\.\.\.\)'
    ):
        _core.kernel_replace("v3.8", fields, {})
    with pytest.raises(sl.ConfigError, match=r'CostModel has no setting "name"'):
        _core.cost_replace(fields, {})


def test_an_unknown_field_is_named_before_its_value_is_converted():
    # a value beyond 64 bits would otherwise be reported under the unknown name
    with pytest.raises(sl.ConfigError, match=r'unknown Kernel field "bogus"'):
        _core.kernel_replace("v3.8", {}, {"bogus": 2**70})
    with pytest.raises(sl.ConfigError, match=r"lb_rules is no longer a Kernel setting"):
        _core.kernel_replace("v3.8", {}, {"lb_rules": 2**70})
    with pytest.raises(sl.ConfigError, match=r'unknown CostModel field "bogus"'):
        _core.cost_replace({}, {"bogus": 2**70})


def test_a_retired_value_is_explained():
    with pytest.raises(sl.ConfigError, match=r'newidle_throttle="avg_idle_rearm" is no longer'):
        sl.Kernel("v3.8", newidle_throttle="avg_idle_rearm")


class _IndexStr(str):
    """A str that also claims to be an integer (``__index__``)."""

    def __index__(self) -> int:
        return 250


def test_a_str_is_a_str_whatever_else_it_defines():
    # found in review: a str subclass with __index__ panicked in the core
    assert sl.Machine(2, 2, name=_IndexStr("box")).name == "box"
    with pytest.raises(sl.ConfigTypeError, match=r'invalid type for hz: got str "x", expected int'):
        sl.Kernel("v3.8").replace(hz=_IndexStr("x"))


@pytest.mark.parametrize(
    ("field", "value"),
    [("hz", "array250"), ("idle_balance", "arrayTrue"), ("tick_ns", "array2.5")],
)
def test_a_numpy_array_is_not_a_scalar(field, value):
    import numpy as np

    v = {"array250": np.array(250), "arrayTrue": np.array(True), "array2.5": np.array(2.5)}[value]
    call = (
        (lambda: sl.CostModel(**{field: v}))
        if field in sl.CostModel.fields()
        else (lambda: sl.Kernel("v3.8").replace(**{field: v}))
    )
    with pytest.raises(sl.ConfigTypeError, match=rf"invalid type for {field}: got ndarray"):
        call()
    with pytest.raises(sl.ConfigTypeError, match=r"invalid type for seed: got ndarray"):
        sl.derive_seed(np.array([1, 2]), 0, 0)
    with pytest.raises(sl.ConfigTypeError, match=r"irq_prio: got ndarray"):
        W.rt_kthreads(irq_prio=np.array(50))


def test_a_field_of_the_wrong_type_names_its_own_type():
    import numpy as np

    k = sl.Kernel("v3.8")
    for v in (np.float32(250), 2.5):
        with pytest.raises(sl.ConfigTypeError, match=r"invalid type for hz: got .*, expected int$"):
            k.replace(hz=v)
    with pytest.raises(sl.ConfigTypeError, match=r"invalid type for hz: got float 250\.0"):
        k.replace(hz=250.0)
    with pytest.raises(sl.ConfigTypeError, match=r'pick: got int 1, expected str, one of "cfs"'):
        k.replace(pick=1)
    with pytest.raises(sl.ConfigTypeError, match=r"idle_balance: got int 1, expected bool"):
        k.replace(idle_balance=1)
    # numpy scalars are their Python values
    assert k.replace(hz=np.int64(250), idle_balance=np.bool_(False)).hz == 250


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        # beyond 64 bits or negative: the parameter's own allowed values
        (lambda: sl.Kernel("v3.8", latency_ns=2**63), r"latency_ns=.*from 100000 to 10000000000"),
        (lambda: sl.Kernel("v3.8", hz=2**64), r"hz=.*one of 100, 250, 300, 1000"),
        (lambda: W.rt_kthreads(irq_prio=-1), r"irq_prio=-1: expected an integer from 1 to 99"),
        (lambda: W.rt_kthreads(irq_cpus=-1), r"irq_cpus=-1: .*from 1 to 4096 \(CPUs\)"),
        (lambda: W.rt_kthreads(irq_threads=2**70), r"irq_threads=.*: .*from 0 to 100000"),
        (lambda: sl.Machine(-1, 4), r"sockets=-1: expected an integer >= 1"),
        (lambda: _core.machine_check({}), r"sockets=<missing>: expected an integer >= 1"),
    ],
)
def test_an_integer_out_of_range_gets_the_parameters_own_bounds(call, pattern):
    with pytest.raises(sl.ConfigError, match=pattern):
        call()
