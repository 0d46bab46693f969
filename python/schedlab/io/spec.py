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

import os
import sys
from pathlib import Path
from typing import Any

import polars as pl

from .. import workloads
from .._check import error_text, type_name
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


#: The largest spec file read (a spec is a few hundred bytes; this bounds
#: reading ``/dev/zero`` or a mistaken multi-gigabyte file).
MAX_SPEC_BYTES = 1 << 20


def load_spec(path: str | Path) -> dict[str, Any]:
    """Read and check a sweep spec (a file of at most ``MAX_SPEC_BYTES``);
    errors name the key and what is allowed."""
    if not isinstance(path, str | os.PathLike):
        raise ConfigTypeError(f"invalid type for spec: got {type_name(path)}, expected a file path")
    p = Path(path)
    try:
        with p.open("rb") as f:
            data = f.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"invalid spec={str(p)!r}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"invalid spec={str(p)!r}: a directory; expected a TOML file") from None
    except (OSError, ValueError) as e:  # EACCES, ENAMETOOLONG, a NUL byte in the name
        raise ConfigError(f"invalid spec={str(p)!r}: cannot be read ({error_text(e)})") from None
    if len(data) > MAX_SPEC_BYTES:
        raise ConfigError(
            f"invalid spec={str(p)!r}: larger than {MAX_SPEC_BYTES:,} bytes; a sweep spec "
            "is a short TOML file"
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
    unknown = set(spec) - _TOP
    if unknown:
        raise ConfigError(
            f"invalid spec key {sorted(unknown)[0]!r}: expected one of {', '.join(sorted(_TOP))}"
        )
    if "workload" not in spec or "kind" not in spec["workload"]:
        raise ConfigError("invalid spec: a [workload] table with kind = ... is required")
    return spec


def run_spec(
    spec: dict[str, Any], *, progress: ProgressArg = True, checkpoint: str | Path | None = None
) -> pl.DataFrame:
    """Run a loaded spec as a sweep."""
    return sweep(**sweep_args(spec), progress=progress, checkpoint=checkpoint)


def sweep_args(spec: dict[str, Any]) -> dict[str, Any]:
    """``sweep``'s arguments (but progress and checkpoint) from a loaded spec."""
    for key in ("kernel_overrides", "costs", "workload", "grid"):
        if key in spec and not isinstance(spec[key], dict):
            raise ConfigTypeError(f"invalid type for {key}: expected a TOML table")
    machine = Machine.preset(spec.get("machine", "vm-2"))
    kernel = Kernel.preset(spec.get("kernel", "v3.8"))
    if spec.get("kernel_overrides"):
        kernel = kernel.replace(**spec["kernel_overrides"])
    costs = CostModel.preset(machine).replace(**spec["costs"]) if spec.get("costs") else None
    wl = dict(spec["workload"])
    kind = wl.pop("kind")
    if kind not in workloads.FACTORIES:
        raise ConfigError(
            f"invalid workload kind={kind!r}: expected one of {', '.join(workloads.FACTORIES)}"
        )
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
