"""The rows and columns of result frames: a run's configuration columns
(``config_row``; ``is_config_column`` recognises them), the types each
configuration column holds (``column_kinds``) so that an invalid point's
"error" rows never change a column's dtype (``error_config``). The sweep
frame of finished rows is ``rows.build_frame``'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._check import show
from ..config import CostModel, Kernel, Machine
from ..groups import GROUP_FIELDS
from ..workloads import Workload

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
        or (name.startswith("group.") and name.rsplit(".", 1)[-1] in GROUP_FIELDS)
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
    if workload.tasks:
        row["workload.tasks"] = workload.tasks_label()
    for g in workload.groups:
        for f in GROUP_FIELDS:
            row[f"group.{g.name}.{f}"] = getattr(g, f)
    row["seed"] = seed
    row["duration_s"] = duration_s
    return row


_I64 = (-(2**63), 2**63 - 1)


def column_kinds(
    base: Sequence[Mapping[str, Any]], valid: Sequence[Mapping[str, Any]]
) -> dict[str, set[type]]:
    """The Python types of each configuration column's values: those of the
    valid points' rows (what the frame's column holds), or, for a column no
    valid point has, those of the unswept configuration's row."""
    kinds: dict[str, set[type]] = {}
    for rows in (valid, base):
        seen: dict[str, set[type]] = {}
        for row in rows:
            for key, v in row.items():
                if v is not None and key not in kinds:
                    seen.setdefault(key, set()).add(type(v))
        kinds.update(seen)
    return kinds


def _fits(v: Any, kinds: set[type]) -> bool:
    """Whether ``v`` can sit in a column holding values of ``kinds`` without
    changing its dtype (nor overflowing it)."""
    if v is None:
        return True
    if isinstance(v, bool):
        return bool in kinds
    if isinstance(v, int):
        return (int in kinds and _I64[0] <= v <= _I64[1]) or (float in kinds and abs(v) <= 2**53)
    if isinstance(v, float):
        return float in kinds
    if isinstance(v, str):
        return str in kinds and _utf8(v)
    return False


def _utf8(s: str) -> bool:
    """Whether ``s`` has a UTF-8 form (a polars string column needs one;
    a lone surrogate such as U+D800 has none)."""
    try:
        s.encode()
    except UnicodeEncodeError:
        return False
    return True


def point_text(point: Mapping[str, Any]) -> str:
    """A grid point as text: ``key=value, …``."""
    return ", ".join(f"{k}={show(v)}" for k, v in point.items())


def error_config(
    point: Mapping[str, Any], err: str, kinds: Mapping[str, set[type]]
) -> tuple[dict[str, Any], str]:
    """The configuration columns of an invalid point's rows, and its
    status_detail. Each column of the valid rows is there (null, the
    configuration being unknown), with the point's grid values where they
    fit the column's type; a value that does not (text in a number column,
    an int beyond 64 bits, a list) is left null and written, as text, into
    the status_detail, so that the frame's dtypes never depend on it."""
    row: dict[str, Any] = dict.fromkeys(kinds)
    text = []
    for key, v in point.items():
        if key in kinds and _fits(v, kinds[key]):
            row[key] = v
        else:
            row[key] = None
            text.append(f"{key}={show(v)}")
    if text:
        err = f"{err} [grid values not in their columns: {', '.join(text)}]"
    return row, err
