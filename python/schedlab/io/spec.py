"""Sweep specs in TOML, for batch runs (``schedlab sweep SPEC.toml``)::

machine = "vm-2"          # preset name
kernel = "v2.6.37"        # preset name
replicates = 2
seed = 3
duration_s = 1.0          # optional: bound on simulated time
threads = 2               # optional: default all cores
[kernel_overrides]        # optional Kernel.replace(...) fields
compat_yield = true
[costs]                   # optional CostModel.replace(...) fields
context_switch_ns = 3000
[workload]
kind = "hackbench"        # any sl.workloads function; the rest are its arguments
groups = 2
loops = 20
[grid]                    # same keys as sweep(grid=...)
migration_cost_ns = [0, 500000]
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from .. import inputs, workloads
from .._check import checked_call, short, type_name
from .._progress import ProgressArg
from ..config import CostModel, Kernel, Machine
from ..exceptions import ConfigError, ConfigTypeError
from ..run.sweeps import sweep

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomllib is the stdlib's copy of tomli
    import tomli as tomllib

_TOP = {
    "machine",
    "kernel",
    "replicates",
    "seed",
    "duration_s",
    "threads",
    "interval_s",
    "kernel_overrides",
    "costs",
    "workload",
    "grid",
}


#: The largest spec file read (``inputs.MAX_SPEC_BYTES``: a spec is a few
#: hundred bytes; this bounds a mistaken multi-gigabyte file).
MAX_SPEC_BYTES = inputs.MAX_SPEC_BYTES

_EXPECTED = "a sweep spec's TOML file"


@checked_call("load_spec")
def load_spec(path: str | Path) -> dict[str, Any]:
    """Read and check a sweep spec (a regular file of at most
    ``inputs.MAX_SPEC_BYTES``); errors name the key and what is allowed."""
    p = inputs.input_path("spec", path, _EXPECTED)
    data = inputs.read_bounded(
        "spec", p, inputs.MAX_SPEC_BYTES, _EXPECTED, "a sweep spec (a short TOML file)"
    )
    try:
        spec = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"invalid spec={str(p)!r}: not UTF-8 text ({e.reason})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"invalid spec={str(p)!r}: not TOML ({e})") from None
    except RecursionError:
        raise ConfigError(
            f"invalid spec={str(p)!r}: nested too deeply to read; a sweep spec's values "
            "are flat lists"
        ) from None
    return check_spec(spec)


def check_spec(spec: Any, param: str = "spec") -> dict[str, Any]:
    """``spec`` itself if it is a sweep spec as ``load_spec`` gives it: a
    dict of the known keys (``_TOP``), with a ``workload`` table whose
    ``kind`` names a workload function and whose tables are tables; else a
    ``ConfigError`` / ``ConfigTypeError`` naming the key."""
    if not isinstance(spec, Mapping):
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(spec)}, expected a dict as load_spec "
            "returns it (a TOML document's tables)"
        )
    _str_keys(param, spec)
    unknown = set(spec) - _TOP
    if unknown:
        raise ConfigError(
            f"invalid spec key {sorted(unknown)[0]!r}: expected one of {', '.join(sorted(_TOP))}"
        )
    for key in ("kernel_overrides", "costs", "workload", "grid"):
        if key in spec and not isinstance(spec[key], Mapping):
            raise ConfigTypeError(
                f"invalid type for {key}: got {type_name(spec[key])}, expected a TOML table "
                "(a dict)"
            )
        if key in spec:
            _str_keys(key, spec[key])
    if "workload" not in spec or "kind" not in spec["workload"]:
        raise ConfigError("invalid spec: a [workload] table with kind = ... is required")
    kind = spec["workload"]["kind"]
    if not isinstance(kind, str):
        raise ConfigTypeError(
            f"invalid type for workload.kind: got {type_name(kind)} {short(kind)}, expected "
            f"str, one of {', '.join(workloads.FACTORIES)}"
        )
    if kind not in workloads.FACTORIES:
        raise ConfigError(
            f"invalid workload kind={kind!r}: expected one of {', '.join(workloads.FACTORIES)}"
        )
    return dict(spec)


def _str_keys(param: str, table: Mapping[Any, Any]) -> None:
    bad = [k for k in table if not isinstance(k, str)]
    if bad:
        raise ConfigTypeError(
            f"invalid type for a key of {param}: got {type_name(bad[0])} {short(bad[0])}, "
            "expected str"
        )


@checked_call("run_spec")
def run_spec(
    spec: dict[str, Any], *, progress: ProgressArg = True, checkpoint: str | Path | None = None
) -> pl.DataFrame:
    """Run a loaded spec as a sweep (``spec`` checked as ``load_spec``
    checks a file's)."""
    return sweep(**sweep_args(spec), progress=progress, checkpoint=checkpoint)


def sweep_args(spec: dict[str, Any]) -> dict[str, Any]:
    """``sweep``'s arguments (but progress and checkpoint) from a loaded spec."""
    spec = check_spec(spec)
    machine = Machine.preset(spec.get("machine", "vm-2"))
    kernel = Kernel.preset(spec.get("kernel", "v3.8"))
    if spec.get("kernel_overrides"):
        kernel = kernel.replace(**spec["kernel_overrides"])
    costs = CostModel.preset(machine).replace(**spec["costs"]) if spec.get("costs") else None
    wl = dict(spec["workload"])
    kind = wl.pop("kind")
    try:
        w = workloads.FACTORIES[kind](**wl)
    except TypeError as e:
        raise ConfigError(f"invalid [workload] for {kind}: {e}") from None
    return {
        "machine": machine,
        "kernel": kernel,
        "workload": w,
        "grid": spec.get("grid"),
        "replicates": spec.get("replicates", 1),
        "seed": spec.get("seed", 0),
        "threads": spec.get("threads"),
        "duration_s": spec.get("duration_s"),
        "interval_s": spec.get("interval_s", 0.1),
        "costs": costs,
    }
