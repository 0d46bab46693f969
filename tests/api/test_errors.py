"""Every invalid input is refused with an exception naming the parameter,
the value and what is allowed; config errors are ValueErrors."""

import re

import pytest
import schedlab as sl
from schedlab.workloads import spinners

W = spinners(nice=[0])

BAD = [
    # (callable, exception, regex the message must match)
    (lambda: sl.Machine.preset("pdp-11"), ValueError, r"name=.*pdp-11.*one of"),
    (lambda: sl.Machine.preset(3), TypeError, r"name"),
    (lambda: sl.Machine(0, 4), ValueError, r"sockets=0.*>= 1"),
    (lambda: sl.Machine(2, 4, llc_cores=3), ValueError, r"llc_cores=3.*divisor"),
    (lambda: sl.Machine(2, 4, numa_nodes=3), ValueError, r"numa_nodes=3"),
    (lambda: sl.Machine(2, 4, threads_per_core=9), ValueError, r"threads_per_core=9"),
    (lambda: sl.Machine(2, "4"), TypeError, r"cores_per_socket"),
    (lambda: sl.Machine(64, 64, 2), ValueError, r"at most 4096"),
    (lambda: sl.Kernel.preset("v9.9"), ValueError, r"name=.*v9\.9.*one of"),
    (lambda: sl.Kernel.preset("v3.8").replace(bogus=1), ValueError, r"unknown Kernel field.*bogus"),
    (
        lambda: sl.Kernel.preset("v3.8").replace(migration_cost_ns=-1),
        ValueError,
        r"migration_cost_ns=-1.*from 0",
    ),
    (
        lambda: sl.Kernel.preset("v3.8").replace(migration_cost_ns=0.5),
        TypeError,
        r"migration_cost_ns.*expected int",
    ),
    (
        lambda: sl.Kernel.preset("v3.8").replace(newidle_throttle="sometimes"),
        ValueError,
        r"newidle_throttle=.*sometimes.*max_lb_cost",
    ),
    (lambda: sl.Kernel.preset("v3.8").replace(idle_balance=1), TypeError, r"idle_balance.*bool"),
    (lambda: sl.Kernel.preset("v3.8").replace(hz=123), ValueError, r"hz=123.*1000"),
    (
        lambda: sl.Kernel.preset("v3.8").replace(min_granularity_ns=10**9),
        ValueError,
        r"min_granularity_ns.*latency_ns",
    ),
    (
        lambda: sl.Kernel.preset("v3.8").replace(pick="bfs"),
        ValueError,
        r"pick=.*bfs.*cfs.*eevdf",
    ),
    (
        lambda: sl.Kernel.preset("v3.8").replace(base_slice_ns=10),
        ValueError,
        r"base_slice_ns=10",
    ),
    (lambda: sl.Kernel.preset("v3.8").replace(delay_dequeue="yes"), TypeError, r"delay_dequeue"),
    (
        lambda: sl.Kernel.preset("v3.8").replace(lb_rules="3.8"),
        ValueError,
        r"lb_rules.*split into idle_cpu_nr_running",
    ),
    (lambda: sl.Kernel.preset("v3.8").replace(compat_yield=None), TypeError, r"compat_yield"),
    (lambda: sl.CostModel(context_switch_ns=-5), ValueError, r"context_switch_ns=-5"),
    (lambda: sl.CostModel(nope=1), ValueError, r"unknown CostModel field.*nope"),
    (
        lambda: sl.CostModel(child_start_spread_pct=101),
        ValueError,
        r"child_start_spread_pct=101.*100",
    ),
    (lambda: spinners(nice=[]), ValueError, r"nice=\[\]"),
    (lambda: spinners(nice=0), TypeError, r"nice"),
    (lambda: spinners(nice=[0, 25]), ValueError, r"nice\[1\]=25.*-20 to 19"),
    (lambda: spinners(nice=[0, "a"]), TypeError, r"nice\[1\]"),
    (lambda: spinners(nice=[0], run_us=-1), ValueError, r"run_us=-1"),
    (lambda: spinners(nice=[0], run_us=float("nan")), ValueError, r"run_us=nan"),
    (lambda: spinners(nice=[0], run_us="fast"), TypeError, r"run_us"),
    (lambda: spinners(nice=[0, 0], run_us=[1, 2, 3]), ValueError, r"run_us=.*one per task"),
    (lambda: spinners(nice=[0], sleep_us=100), ValueError, r"sleep_us"),
    (lambda: spinners(nice=[0], cpus=[[]]), ValueError, r"cpus=\[\]"),
    (lambda: spinners(nice=[0], cpus=[-1]), ValueError, r"cpus=-1"),
    (lambda: spinners(nice=[0], cpus=3), TypeError, r"cpus"),
    (lambda: spinners(nice=[0], yields="yes"), TypeError, r"yields"),
    (lambda: spinners(nice=[0], dist="gauss"), ValueError, r"dist=.*gauss.*fixed"),
    (lambda: sl.simulate("vm-2", "v3.8", W), ValueError, r"duration_s.*never finishes"),
    (lambda: sl.simulate("vm-2", "v3.8", W, duration_s=0), ValueError, r"duration_s=0"),
    (lambda: sl.simulate("vm-2", "v3.8", W, duration_s=-1.0), ValueError, r"duration_s=-1"),
    (lambda: sl.simulate("vm-2", "v3.8", W, duration_s="1"), TypeError, r"duration_s"),
    (lambda: sl.simulate("vm-2", "v3.8", W, duration_s=1, seed=-1), ValueError, r"seed=-1"),
    (lambda: sl.simulate("vm-2", "v3.8", W, duration_s=1, seed=1.5), TypeError, r"seed"),
    (
        lambda: sl.simulate("vm-2", "v3.8", W, duration_s=1, interval_s=0),
        ValueError,
        r"interval_s=0",
    ),
    (lambda: sl.simulate("vm-2", "v3.8", W, duration_s=1, trace="yes"), TypeError, r"trace"),
    (
        lambda: sl.simulate("vm-2", "v3.8", W, duration_s=1, interval_s=1e-7),
        ValueError,
        r"interval_s=1e-07.*1e-05",
    ),
    (
        lambda: sl.simulate("vm-2", "v3.8", W, duration_s=1, trace_limit=0),
        ValueError,
        r"trace_limit=0",
    ),
    (lambda: sl.simulate("vm-9", "v3.8", W, duration_s=1), ValueError, r"vm-9"),
    (lambda: sl.simulate(2, "v3.8", W, duration_s=1), TypeError, r"machine"),
    (lambda: sl.simulate("vm-2", object(), W, duration_s=1), TypeError, r"kernel"),
    (lambda: sl.simulate("vm-2", "v3.8", "spinners", duration_s=1), TypeError, r"workload"),
    (lambda: sl.simulate("vm-2", "v3.8", W, duration_s=1, costs={}), TypeError, r"costs"),
    (
        lambda: sl.simulate("vm-2", "v3.8", spinners(nice=[0], cpus=[5]), duration_s=1),
        ValueError,
        r"cpus=5.*0 to 1.*vm-2",
    ),
    (
        lambda: sl.simulate("vm-2", "v3.8", W, duration_s=1, costs=sl.CostModel(syscall_ns=0)),
        ValueError,
        r"syscall_ns=0",
    ),
]


@pytest.mark.parametrize("call,exc,pattern", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_raises_a_clear_error(call, exc, pattern):
    with pytest.raises(exc) as info:
        call()
    assert re.search(pattern, str(info.value)), str(info.value)
    assert isinstance(info.value, sl.SchedlabError) or exc is TypeError


def test_config_errors_subclass_valueerror():
    assert issubclass(sl.ConfigError, ValueError)
    assert issubclass(sl.ConfigTypeError, TypeError)


def test_the_exception_tree_is_the_cores():
    """Declared once, in the core: the class a core error is raised with is
    the class schedlab.exceptions exports (no per-error import, no copy)."""
    from schedlab import _core

    for name in sl.exceptions.__all__:
        if issubclass(getattr(sl.exceptions, name), Warning):
            continue  # warnings are Python's (warnings.warn), not the core's
        assert getattr(sl.exceptions, name) is getattr(_core, name)
        assert getattr(_core, name).__module__ == "schedlab.exceptions"
    assert not issubclass(sl.exceptions.MachineMismatchWarning, sl.SchedlabError)
    for cls in (sl.ConfigError, sl.ConfigTypeError, sl.SimulationError, sl.MeasureError):
        assert issubclass(cls, sl.SchedlabError)
    assert issubclass(sl.SimulationError, RuntimeError)
    assert issubclass(sl.MeasureError, RuntimeError)
    assert issubclass(_core.BatchInterrupted, KeyboardInterrupt)
    with pytest.raises(sl.ConfigError) as info:
        _core.kernel_replace("v3.8", {}, {"hz": 7})
    assert type(info.value) is sl.ConfigError
    with pytest.raises(sl.ConfigTypeError) as tinfo:
        _core.kernel_replace("v3.8", {}, {"hz": "fast"})
    assert type(tinfo.value) is sl.ConfigTypeError
    # They pickle by name (process pools and cluster workers send them back).
    import pickle

    e = pickle.loads(pickle.dumps(sl.ConfigError("invalid x=1")))
    assert type(e) is sl.ConfigError and str(e) == "invalid x=1"


@pytest.mark.parametrize(
    "args,exc,pattern",
    [
        ((-1, 0, 0), sl.ConfigError, r"seed=-1: expected an integer from 0 to 2\*\*64 - 1"),
        ((0, 2**64, 0), sl.ConfigError, r"point=18446744073709551616"),
        ((0, 0, 1.5), sl.ConfigTypeError, r"replicate: got float 1.5"),
        ((True, 0, 0), sl.ConfigTypeError, r"seed: got bool True"),
        (("1", 0, 0), sl.ConfigTypeError, r"seed: got str '1'"),
    ],
)
def test_derive_seed_refuses_what_is_not_a_64_bit_count(args, exc, pattern):
    with pytest.raises(exc, match=pattern):
        sl.derive_seed(*args)


def test_derive_seed_takes_numpy_integers():
    import numpy as np

    assert sl.derive_seed(np.uint64(2**64 - 1), np.int32(5), 0) == sl.derive_seed(2**64 - 1, 5, 0)
