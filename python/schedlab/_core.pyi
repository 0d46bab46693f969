"""Type stubs for the native module ``schedlab._core`` (kept by hand, checked
with ``python -m mypy.stubtest schedlab._core``)."""

from typing import Any

__all__ = [
    "__version__",
    "build_profile",
    "TRACE_EVENTS",
    "PREV_STATES",
    "KERNEL_FIELDS",
    "COST_FIELDS",
    "IDLE_TYPES",
    "machine_presets",
    "machine_preset",
    "machine_check",
    "kernel_presets",
    "kernel_preset",
    "kernel_replace",
    "cost_defaults",
    "cost_replace",
    "cost_for_machine",
    "workload_check",
    "simulate",
    "run_batch",
]

__version__: str
build_profile: str
TRACE_EVENTS: list[str]
PREV_STATES: list[str]
KERNEL_FIELDS: list[str]
COST_FIELDS: list[str]
IDLE_TYPES: list[str]

def machine_presets() -> list[str]: ...
def machine_preset(name: str) -> dict[str, Any]: ...
def machine_check(fields: dict[str, Any]) -> dict[str, Any]: ...
def kernel_presets() -> list[str]: ...
def kernel_preset(name: str) -> dict[str, Any]: ...
def kernel_replace(
    base: str, fields: dict[str, Any], changes: dict[str, Any]
) -> dict[str, Any]: ...
def cost_defaults() -> dict[str, Any]: ...
def cost_replace(fields: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]: ...
def cost_for_machine(machine: dict[str, Any]) -> dict[str, Any]: ...
def workload_check(kind: str, params: dict[str, Any]) -> None: ...
def simulate(
    machine: dict[str, Any],
    kernel_base: str,
    kernel: dict[str, Any],
    cost: dict[str, Any],
    workload_kind: str,
    workload: dict[str, Any],
    *,
    seed: int,
    duration_ns: int | None,
    trace_limit: int | None,
    interval_ns: int,
) -> dict[str, Any]: ...
def run_batch(specs: list[dict[str, Any]], threads: int) -> list[dict[str, Any]]: ...
