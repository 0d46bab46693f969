"""The arguments every runner takes (``simulate``, ``sweep``, ``bisect``,
``calibrate``), checked at the boundary: a machine or kernel — an instance
or the name of a preset —, a cost model or None, a workload. Errors name the
parameter (``machine``, ``kernel``, ``good``, ``bad``…), not the presets'
own ``name``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .._check import need_instance, show, type_name
from ..config import CostModel, Kernel, Machine
from ..exceptions import ConfigError, ConfigTypeError
from ..workloads import Workload

T = TypeVar("T")


def _preset_or_instance(
    param: str, v: Any, cls: type[T], presets: list[str], preset: Callable[[str], T]
) -> T:
    """``v`` if it is a ``cls``, or the preset it names."""
    what = f"a schedlab.{cls.__name__}"
    if isinstance(v, str):
        if v not in presets:
            raise ConfigError(
                f"invalid {param}={v!r}: expected {what} or one of the presets "
                + ", ".join(presets)
            )
        return preset(v)
    return need_instance(param, v, cls, f"{what} or a preset name")


def machine_arg(m: Machine | str, param: str = "machine") -> Machine:
    """``m``, a ``Machine`` or the name of a machine preset, as a ``Machine``."""
    return _preset_or_instance(param, m, Machine, Machine.presets(), Machine.preset)


def kernel_arg(k: Kernel | str, param: str = "kernel") -> Kernel:
    """``k``, a ``Kernel`` or the name of a kernel preset, as a ``Kernel``."""
    return _preset_or_instance(param, k, Kernel, Kernel.presets(), Kernel.preset)


def costs_arg(c: CostModel | None) -> CostModel | None:
    """``c``, checked to be a ``CostModel`` or None (the machine's preset)."""
    if c is None:
        return None
    return need_instance("costs", c, CostModel, "a schedlab.CostModel or None")


def workload_arg(w: Workload) -> Workload:
    """``w``, checked to be a ``Workload`` (made by a ``schedlab.workloads``
    function): one built by hand must still have a kind name (str) and its
    parameters as a dict with text keys, which the core reads."""
    w = need_instance("workload", w, Workload, "a schedlab.workloads.* value")
    if not isinstance(w.kind, str) or not isinstance(w.params, dict):
        raise ConfigTypeError(
            f"invalid type for workload: a Workload of kind {type_name(w.kind)} "
            f"{show(w.kind)} with params {type_name(w.params)}; expected one made by a "
            "schedlab.workloads function (kind a str, params a dict)"
        )
    if not all(isinstance(k, str) for k in w.params):
        raise ConfigTypeError(
            "invalid type for workload: its params have keys that are not str; expected one "
            "made by a schedlab.workloads function"
        )
    return w
