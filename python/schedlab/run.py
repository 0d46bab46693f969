"""``simulate``: run one configuration."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, TypeVar

from . import _core
from ._check import interval_to_ns, need_bool, need_instance, need_int, seconds_to_ns
from .config import CostModel, Kernel, Machine
from .exceptions import ConfigError
from .result import Result
from .workloads import Workload

DEFAULT_TRACE_LIMIT = 1_000_000

T = TypeVar("T")


def _preset_or_instance(
    param: str, v: Any, cls: type[T], presets: list[str], preset: Callable[[str], T]
) -> T:
    """``v`` if it is a ``cls``, or the preset it names; errors name ``param``
    (machine, kernel, good, bad), not the presets' own ``name``."""
    what = f"a schedlab.{cls.__name__}"
    if isinstance(v, str):
        if v not in presets:
            raise ConfigError(
                f"invalid {param}={v!r}: expected {what} or one of the presets "
                + ", ".join(presets)
            )
        return preset(v)
    return need_instance(param, v, cls, f"{what} or a preset name")


def _machine(m: Machine | str, param: str = "machine") -> Machine:
    return _preset_or_instance(param, m, Machine, Machine.presets(), Machine.preset)


def _kernel(k: Kernel | str, param: str = "kernel") -> Kernel:
    return _preset_or_instance(param, k, Kernel, Kernel.presets(), Kernel.preset)


def _costs(c: CostModel | None) -> CostModel | None:
    if c is None:
        return None
    return need_instance("costs", c, CostModel, "a schedlab.CostModel or None")


def _workload(w: Workload) -> Workload:
    return need_instance("workload", w, Workload, "a schedlab.workloads.* value")


#: The configuration columns ``config_row`` writes (besides ``workload.<arg>``).
_CONFIG_COLUMNS = ("machine", "nr_cpus", "kernel", "workload", "seed", "duration_s")
_KERNEL_FIELDS = frozenset(Kernel.fields())
_COST_FIELDS = frozenset(CostModel.fields())


def is_config_column(name: str) -> bool:
    """Whether ``name`` is one of the configuration columns of a result row
    (``config_row``'s): never a metric."""
    return (
        name in _CONFIG_COLUMNS
        or name.startswith("workload.")
        or name in _KERNEL_FIELDS
        or name in _COST_FIELDS
    )


def config_row(
    machine: Machine,
    kernel: Kernel,
    costs: CostModel,
    workload: Workload,
    seed: int,
    duration_s: float | None,
) -> dict[str, Any]:
    """The configuration columns of a result row (stable order);
    ``is_config_column`` recognises each of them by name."""
    row: dict[str, Any] = {
        "machine": machine.name,
        "nr_cpus": machine.nr_cpus,
        "kernel": kernel.name,
    }
    row.update({k: v for k, v in kernel.to_dict().items() if k != "name"})
    row.update(costs.to_dict())
    row["workload"] = workload.kind
    for k, v in workload.args.items():
        if isinstance(v, bool | int | float | str):
            row[f"workload.{k}"] = v
    row["seed"] = seed
    row["duration_s"] = duration_s
    return row


def simulate(
    machine: Machine | str,
    kernel: Kernel | str,
    workload: Workload,
    *,
    seed: int | None = 0,
    duration_s: float | None = None,
    costs: CostModel | None = None,
    trace: bool = False,
    trace_limit: int = DEFAULT_TRACE_LIMIT,
    interval_s: float = 0.1,
) -> Result:
    """Run ``workload`` on ``machine`` under ``kernel``.

    A finite workload runs to completion; ``duration_s`` bounds simulated
    time (required for endless workloads such as spinners). ``seed=None``
    draws a fresh seed and records it in ``result.seed``. ``trace=True``
    keeps up to ``trace_limit`` scheduler events (``result.trace``; at most
    ``MAX_TRACE_ROWS``, 2·10⁷). A workload of more than ``MAX_TASKS`` (10⁶)
    tasks is refused; vmstat keeps at most 400 MB of rows (docs, "Errors and limits").
    ``interval_s`` is the vmstat / CPU-timeline sampling interval.
    The GIL is released while the model runs; Ctrl-C stops it.
    """
    m = _machine(machine)
    k = _kernel(kernel)
    costs = _costs(costs)
    if costs is None:
        costs = CostModel.preset(m)
    workload = _workload(workload)
    if seed is None:
        seed = secrets.randbits(63)
    seed = need_int("seed", seed, lo=0, hi=2**64 - 1)
    duration_ns = None if duration_s is None else seconds_to_ns("duration_s", duration_s)
    need_bool("trace", trace)
    limit = need_int("trace_limit", trace_limit, lo=1, hi=_core.MAX_TRACE_ROWS)
    interval_ns = interval_to_ns("interval_s", interval_s)
    kf = {k2: v for k2, v in k.to_dict().items() if k2 != "name"}
    raw = _core.simulate(
        m.to_dict(),
        k.name,
        kf,
        costs.to_dict(),
        workload.kind,
        workload.params,
        seed=seed,
        duration_ns=duration_ns,
        trace_limit=limit if trace else None,
        interval_ns=interval_ns,
    )
    return Result(raw, config_row(m, k, costs, workload, seed, duration_s))
