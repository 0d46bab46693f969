"""A sweep's grid: checked against the keys it may have (``normalise_grid``),
expanded into its points in order (``grid_points``), and each point applied
to the base configuration (``apply_point``) — its configuration row and the
core's run spec, or the error that makes it invalid (``resolve_point``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._check import is_list, type_name
from ..config import CostModel, Kernel, Machine, kernel_arg, machine_arg
from ..exceptions import ConfigError, ConfigTypeError
from ..groups import apply_group_keys, group_keys
from ..workloads import Workload
from .frame import config_row, point_text


def _grid_keys(workload: Workload) -> list[str]:
    return (
        ["machine", "kernel"]
        + Kernel.fields()
        + CostModel.fields()
        + [f"workload.{p}" for p in Workload.parameters(workload.kind)]
        + group_keys(workload.groups)
    )


def normalise_grid(grid: Mapping[str, Any] | None, workload: Workload) -> dict[str, list[Any]]:
    """``grid`` checked (its keys: ``"machine"``, ``"kernel"``, a Kernel or
    CostModel field, ``"workload.<param>"``; each a non-empty list) as a dict
    of lists of plain Python values."""
    if grid is None:
        return {}
    if not isinstance(grid, Mapping):
        raise ConfigTypeError(
            f"invalid type for grid: got {type_name(grid)}, expected a dict of lists"
        )
    allowed = _grid_keys(workload)
    out: dict[str, list[Any]] = {}
    for k, v in grid.items():
        if k not in allowed:
            groups = (
                f", or 'group.<name>.<field>' with <name> one of "
                f"{', '.join(g.name for g in workload.groups)} and <field> one of shares, "
                "weight, quota_us, period_us, burst_us, idle"
                if workload.groups
                else " ('group.<name>.<field>' needs groups=)"
            )
            raise ConfigError(
                f"invalid grid key {k!r}: expected 'machine', 'kernel', a Kernel field, a "
                f"CostModel field or 'workload.<param>' with <param> one of "
                f"{', '.join(Workload.parameters(workload.kind))}{groups}"
            )
        if not is_list(v) or len(v) == 0:
            raise ConfigError(f"invalid grid[{k!r}]={v!r}: expected a non-empty list of values")
        out[k] = [x.item() if isinstance(x, np.generic) else x for x in v]
    return out


def grid_points(grid: dict[str, list[Any]]) -> Iterable[dict[str, Any]]:
    """The grid's points, in ``itertools.product`` order of its keys' values."""
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        yield dict(zip(keys, values, strict=True))


def apply_point(
    machine: Machine,
    kernel: Kernel,
    costs: CostModel | None,
    workload: Workload,
    point: Mapping[str, Any],
) -> tuple[Machine, Kernel, CostModel, Workload]:
    """The configuration of grid point ``point`` on top of the base one;
    raises (ValueError, TypeError, OverflowError) if the point is invalid."""
    m = machine_arg(point["machine"]) if "machine" in point else machine
    k = kernel_arg(point["kernel"]) if "kernel" in point else kernel
    kf = {f: point[f] for f in Kernel.fields() if f in point}
    if "kernel" in point and kernel.changes():
        # the base kernel's own changes stay on top of a swept preset (with
        # the point's own kernel fields over them); an error names the key
        try:
            k = k.replace(**{**kernel.changes(), **kf})
        except (ValueError, TypeError) as e:
            base = ", ".join(f"{f}={v!r}" for f, v in kernel.changes().items())
            raise type(e)(
                f"grid key kernel={point['kernel']!r} with the base kernel's {base}: {e}"
            ) from e
    elif kf:
        k = k.replace(**kf)
    c = costs if costs is not None else CostModel.preset(m)
    cf = {f: point[f] for f in CostModel.fields() if f in point}
    if cf:
        c = c.replace(**cf)
    wf = {f[len("workload.") :]: v for f, v in point.items() if f.startswith("workload.")}
    w = workload.replace(**wf) if wf else workload
    if any(f.startswith("group.") for f in point):
        w = w.with_groups(apply_group_keys(w.groups, dict(point)))
    return m, k, c, w


def _spec(
    m: Machine,
    k: Kernel,
    c: CostModel,
    w: Workload,
    seed: int,
    duration_ns: int | None,
    interval_ns: int,
) -> dict[str, Any]:
    """The core's run spec (what ``_core.run_batch`` takes)."""
    return {
        "machine": m.to_dict(),
        "kernel_base": k.name,
        "kernel": {f: v for f, v in k.to_dict().items() if f != "name"},
        "cost": c.to_dict(),
        "workload_kind": w.kind,
        "workload": w.params,
        "seed": seed,
        "duration_ns": duration_ns,
        "interval_ns": interval_ns,
        **({"groups": [g.to_core() for g in w.groups]} if w.groups else {}),
    }


def resolve_point(
    machine: Machine,
    kernel: Kernel,
    costs: CostModel | None,
    workload: Workload,
    point: Mapping[str, Any],
    duration_s: float | None,
    duration_ns: int | None,
    interval_ns: int,
    latency: bool = False,
) -> tuple[dict[str, Any], dict[str, Any] | None, str | None]:
    """A point's configuration row and spec (its replicates share them; seed
    0 until each run's own is set), or the error that makes it invalid.
    ``latency``: the runs keep scheduling delays (the ``latency_*`` metrics)."""
    try:
        m, k, c, w = apply_point(machine, kernel, costs, workload, point)
        spec = _spec(m, k, c, w, 0, duration_ns, interval_ns)
        if latency:
            spec["latency"] = True
        return config_row(m, k, c, w, 0, duration_s), spec, None
    except (ValueError, TypeError) as e:
        return {}, None, str(e)
    except OverflowError as e:  # a value too large for the core (a safety net)
        return {}, None, f"invalid grid point {point_text(point)}: {e}"
