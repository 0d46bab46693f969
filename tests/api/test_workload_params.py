"""Workloads' integer parameters are declared once, in the core
(``_core.WORKLOAD_INT_PARAMS``): the builders check the declared bounds and
take the declared defaults, and the core refuses the same values."""

from __future__ import annotations

import inspect

import pytest
import schedlab as sl
from schedlab import _core

PARAMS = _core.WORKLOAD_INT_PARAMS
# What a builder needs besides the parameter under test (a required one).
REQUIRED = {"aim7": {"tasks": 1}}


def _build(kind: str, **kw: int) -> sl.workloads.Workload:
    builder = getattr(sl.workloads, kind)
    return builder(**{**REQUIRED.get(kind, {}), **kw})


def test_the_declaration_covers_the_benchmarks():
    kinds = {k for k, *_ in PARAMS}
    assert {"hackbench", "pipe_pingpong", "volano", "schbench", "aim7"} <= kinds
    names = [(k, n) for k, n, *_ in PARAMS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(("kind", "name", "lo", "hi", "default", "doc"), PARAMS)
def test_the_builders_default_is_the_declared_one(kind, name, lo, hi, default, doc):
    builder = getattr(sl.workloads, kind)
    signature_default = inspect.signature(builder).parameters[name].default
    if name in REQUIRED.get(kind, {}):
        # a required parameter: no default in the signature, none declared
        assert signature_default is inspect.Parameter.empty and default is None
    else:
        assert signature_default == default
    assert (default is None or lo <= default <= hi) and doc


@pytest.mark.parametrize(("kind", "name", "lo", "hi", "default", "doc"), PARAMS)
def test_the_builder_takes_the_low_bound_and_refuses_one_past(kind, name, lo, hi, default, doc):
    """(The high bound itself may break a rule across parameters, e.g.
    hackbench's 2·groups·fds tasks; the core's unit test takes it alone.)"""
    if not (kind == "hackbench" and name == "sndbuf"):  # below two messages' truesize
        _build(kind, **{name: lo})
    for bad in (lo - 1, hi + 1):
        with pytest.raises(sl.ConfigError, match=rf"{name}={bad}\b.*from {lo} to {hi}"):
            _build(kind, **{name: bad})


@pytest.mark.parametrize(("kind", "name", "lo", "hi", "default", "doc"), PARAMS)
def test_the_core_refuses_one_past_the_bounds_itself(kind, name, lo, hi, default, doc):
    """The core's own check (``workload_check``), not only the builder's."""
    params = dict(_build(kind).params)
    params[name] = hi + 1
    with pytest.raises(sl.ConfigError, match=rf"{name}.*from {lo} to {hi}"):
        _core.workload_check(kind, params)
