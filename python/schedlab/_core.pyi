"""Type stubs for the native module ``schedlab._core`` (kept by hand, checked
with ``python -m mypy.stubtest schedlab._core``; tests/api/test_typing.py checks
that the TypedDicts' keys follow the core's field lists)."""

from collections.abc import Callable
from typing import Any, Literal, NotRequired, TypedDict

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "__version__",
    "build_profile",
    "TRACE_EVENTS",
    "METRIC_INFO",
    "WORKLOAD_KINDS",
    "WORKLOAD_KEYED_KINDS",
    "WORKLOAD_COMPONENTS",
    "WORKLOAD_PARAMS",
    "PREV_STATES",
    "BALANCE_KINDS",
    "BALANCE_OUTCOMES",
    "KERNEL_FIELDS",
    "KERNEL_FIELD_INFO",
    "KERNEL_RETIRED_FIELDS",
    "COST_FIELDS",
    "COST_FIELD_INFO",
    "IDLE_TYPES",
    "MAX_TASKS",
    "MAX_TRACE_ROWS",
    "MAX_VMSTAT_BYTES",
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
    "group_check",
    "rt_kthreads_check",
    "workload_tasks",
    "footprint",
    "simulate",
    "latency_quantiles",
    "LATENCY_BUCKETS",
    "LATENCY_TASK_BYTES",
    "run_batch",
    "perfetto_body",
    "PERFETTO_TRACK_BASES",
    "PERFETTO_SEQUENCE_ID",
    "PERFETTO_CHUNK_BYTES",
    "derive_seed",
    "SchedlabError",
    "ConfigError",
    "ConfigTypeError",
    "SimulationError",
    "MeasureError",
    "BatchInterrupted",
    "OutputError",
    "EXCEPTIONS",
    "FIELD_KINDS",
    "HACKBENCH_IPCS",
    "HACKBENCH_MODES",
    "SPINNER_DISTS",
    "RT_POLICIES",
    "TASK_POLICIES",
    "WORKLOAD_ROLES",
    "SCRIPT_OPS",
    "SCRIPT_MAX_OPS",
    "AIM7_MAX_FILE_KB",
    "AIM7_MAX_SHARED_LINES",
    "AIM7_SHARED_LINES",
    "AIM7_WORKFILES",
    "SCHBENCH_MAC_NS",
]

class MachineFields(TypedDict):
    name: str
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    llc_cores: int
    numa_nodes: int
    nr_cpus: int

class KernelFields(TypedDict):
    name: str
    # BEGIN generated KernelFields (scripts/dev/gen_fields.py)
    migration_cost_ns: int
    nr_migrate: int
    latency_ns: int
    min_granularity_ns: int
    wakeup_granularity_ns: int
    tunable_scaling: Literal["none", "log", "linear"]
    hz: Literal[100, 250, 300, 1000]
    idle_balance: bool
    newidle_throttle: Literal["off", "avg_idle", "max_lb_cost", "lb_cost"]
    newidle_rearm: bool
    newidle_force: bool
    newidle_clear_stamp: bool
    newidle_lb_cost_decay: bool
    avg_idle_cap: Literal["migration_cost", "max_idle_balance_cost"]
    avg_idle_ewma_first: bool
    newidle_random: bool
    rt_push: Literal["pull", "push_ipi", "push_ipi_rd"]
    sched_rt_period_us: int
    sched_rt_runtime_us: int
    sched_rr_timeslice_ms: int
    sched_cfs_bandwidth_slice_us: int
    cfs_throttle: Literal["cfs_rq", "task"]
    cpupri_idle: bool
    rt_pull_skip_only_self: bool
    rt_rto_skip_self: bool
    rt_overload_pushable: bool
    avg_idle_on_move: bool
    idle_cpu_nr_running: bool
    group_imb_nr_running: bool
    prefer_sibling_local_capacity: bool
    force_balance_group_imb: bool
    idle_cpus_balanced: bool
    lb_cfs_tasks: bool
    newidle_no_nr_balance_failed: bool
    newidle_active_balance: bool
    newidle_keep_interval: bool
    preemption: bool
    smt_ignore_hot: bool
    nohz_ilb: Literal["push", "nr_busy"]
    nohz_kick_ipi: Literal["function_call", "resched"]
    nohz_kick_after_rebalance: bool
    select_idle_sibling: Literal["any_idle", "idle_group", "idle_cpu"]
    mc_busy_factor: int
    mc_prefer_sibling: bool
    sd_numa: Literal["node", "numa_levels"]
    sd_init: Literal["v2.6", "v3.16", "v5"]
    compat_yield: bool
    yield_impl: Literal["update_curr", "skip_buddy"]
    next_buddy_over_last: bool
    preempt_sets_next_buddy: bool
    gentle_fair_sleepers: bool
    start_debit: bool
    wakeup_preemption: bool
    last_buddy: bool
    next_buddy: bool
    pelt: Literal["off", "v5.7", "v3.8"]
    wake_wide: bool
    wake_affine: Literal["load", "idle", "weight", "idle_weight"]
    recent_used_cpu: bool
    sched_idle_cpu: bool
    ttwu_queue: Literal["off", "cross_llc", "idle"]
    sched_idle_balance: bool
    idle_preempt_non_idle: bool
    sis_util: bool
    balancer: Literal["cpu_load", "group_type"]
    balance_policy: Literal["performance", "balance", "powersaving"]
    power_fork_exec: bool
    power_wake: bool
    power_burst_threshold_ns: int
    power_pack_transitory: bool
    power_lb: bool
    pick: Literal["cfs", "eevdf"]
    base_slice_ns: int
    place_lag: bool
    place_deadline_initial: bool
    run_to_parity: bool
    preempt_short: bool
    delay_dequeue: bool
    delay_zero: bool
    place_rel_deadline: bool
    run_to_parity_min_slice: bool
    yield_forfeit: bool
    pipe_still_full_no_wake: bool
    # END generated KernelFields

class CostFields(TypedDict):
    # BEGIN generated CostFields (scripts/dev/gen_fields.py)
    context_switch_ns: int
    syscall_ns: int
    wakeup_ns: int
    tick_ns: int
    ipi_latency_ns: int
    ipi_send_ns: int
    ipi_handle_ns: int
    self_ipi_ns: int
    rq_lock_ns: int
    lb_base_ns: int
    lb_per_group_ns: int
    lb_per_cpu_ns: int
    lb_per_task_ns: int
    migrate_task_ns: int
    refill_smt_ns: int
    refill_llc_ns: int
    refill_socket_ns: int
    refill_node_ns: int
    refill_remote_ns: int
    cache_decay_ns: int
    mm_switch_ns: int
    fork_ns: int
    clone_ns: int
    exit_ns: int
    exit_thread_ns: int
    reap_ns: int
    child_start_ns: int
    child_start_thread_ns: int
    child_start_spread_pct: int
    pipe_write_ns: int
    pipe_read_ns: int
    sock_write_ns: int
    sock_read_ns: int
    copy_kib_ns: int
    tcp_write_ns: int
    tcp_read_ns: int
    futex_ns: int
    work_pct: int
    io_pct: int
    sys_jitter_pct: int
    xfer_by_distance: bool
    xfer_smt_ns: int
    xfer_llc_ns: int
    xfer_socket_ns: int
    xfer_node_ns: int
    xfer_remote_ns: int
    xfer_meta_lines: int
    turbo: bool
    cstates: bool
    # END generated CostFields

class _Decl(TypedDict):
    name: str
    type: str
    allowed: str
    min: int | None
    max: int | None
    values: list[str] | list[int] | None
    doc: str

class CostFieldInfo(_Decl): ...

class FieldInfo(_Decl):
    # BEGIN generated FieldInfo kind (scripts/dev/gen_fields.py)
    kind: Literal["tunable", "feature", "change", "experiment"]
    # END generated FieldInfo kind
    kernel: str
    commit: str
    release: str
    verified: bool

class WorkloadParamInfo(TypedDict):
    # BEGIN generated WorkloadParamInfo kind (scripts/dev/gen_fields.py)
    kind: Literal[
        "spinners",
        "hackbench",
        "pipe_pingpong",
        "volano",
        "aim7",
        "schbench",
        "rt_app",
        "from_trace",
        "mix",
        "rt_kthreads",
    ]
    # END generated WorkloadParamInfo kind
    name: str
    arg: str
    scale: int
    type: Literal["int", "float", "bool", "choice", "cpus", "other"]
    min: int | float | None
    max: int | float | None
    values: list[str] | None
    default: int | float | bool | str | None
    required: bool
    allowed: str
    doc: str

# The parameter dicts of the kinds the core reads by their declarations
# (WORKLOAD_KEYED_KINDS: what workload_check(kind, params) takes) and of the
# components (WORKLOAD_COMPONENTS: rt_kthreads_check).
# BEGIN generated workload params (scripts/dev/gen_fields.py)
class HackbenchParams(TypedDict):
    groups: int
    fds: int
    loops: int
    datasize: int
    ipc: Literal["pipe", "socket"]
    mode: Literal["process", "thread"]
    sndbuf: int
    skb_overhead: int
    parent_wakee_flips: int
    rt_kthreads: NotRequired[Any]

class PipePingpongParams(TypedDict):
    loops: int
    mode: Literal["process", "thread"]

class VolanoParams(TypedDict):
    rooms: int
    users: int
    messages: int
    handle_ns: int
    send_ns: int
    enqueue_ns: int

class Aim7Params(TypedDict):
    tasks: int
    jobs: int
    workfile: str
    cpus: NotRequired[list[int] | None]
    contention: bool
    filesize_kb: int
    poolsize_kb: int
    speed: float
    sync_io_ns: NotRequired[int | None]
    syncs: bool
    shared_lines: NotRequired[Any]

class SchbenchParams(TypedDict):
    message_threads: int
    workers: NotRequired[int | None]
    runtime_s: int
    warmup_s: int
    operations: int
    sleep_us: int
    requests_per_sec: int
    cache_footprint_kb: int
    pipe_bytes: int
    skip_locking: bool
    mac_ns: float

class RtKthreadsParams(TypedDict):
    watchdog: bool
    watchdog_period_ns: int
    watchdog_run_ns: int
    irq_threads: int
    irq_cpus: int
    irq_prio: int
    irq_policy: Literal["fifo", "rr"]
    irq_period_ns: int
    irq_run_ns: int

# END generated workload params

class BalanceTraceColumns(TypedDict):
    time_ns: NDArray[np.uint64]
    cpu: NDArray[np.int32]
    dst_cpu: NDArray[np.int32]
    domain: NDArray[np.uint8]
    idle: NDArray[np.uint8]
    kind: NDArray[np.uint8]
    outcome: NDArray[np.uint8]
    moved: NDArray[np.uint32]
    busiest: NDArray[np.int32]
    active: NDArray[np.bool_]
    cost_ns: NDArray[np.uint64]
    dropped: int

class PerfettoPelt(TypedDict):
    """PELT rows in the core's layout (``schedlab.io.pftrace``)."""

    time_ns: NDArray[np.uint64]
    cpu: NDArray[np.int32]
    util_avg: NDArray[np.uint64]
    load_avg: NDArray[np.uint64]

class PeltTraceColumns(PerfettoPelt):
    runnable_avg: NDArray[np.uint64]
    dropped: int

class PerfettoTrace(TypedDict):
    """Rows of ``r.trace`` in the core's layout (``schedlab.io.pftrace``)."""

    time_ns: NDArray[np.uint64]
    cpu: NDArray[np.int32]
    kind: NDArray[np.uint8]
    pid: NDArray[np.int32]
    a: NDArray[np.int32]
    b: NDArray[np.int32]

class TraceColumns(PerfettoTrace):
    dropped: int
    balance: BalanceTraceColumns
    pelt: PeltTraceColumns

class LatencyColumns(TypedDict):
    hist: NDArray[np.uint32]
    count: NDArray[np.uint64]
    sum_ns: NDArray[np.uint64]
    max_ns: NDArray[np.uint64]
    max_start_ns: NDArray[np.uint64]

class SimOutcome(TypedDict):
    status: str
    status_detail: str | None
    elapsed_ns: int
    metrics: dict[str, float]
    tasks: dict[str, Any]
    cpus: dict[str, Any]
    vmstat: dict[str, Any]
    timeline: NDArray[np.float64]
    runqueue: NDArray[np.int64]
    schedstat: dict[str, Any]
    trace: TraceColumns | None
    latency: LatencyColumns | None

class BatchOutcome(TypedDict):
    status: str
    status_detail: str | None
    metrics: dict[str, float]
    wall_s: float

# BEGIN generated exceptions (scripts/dev/gen_fields.py)
class SchedlabError(Exception): ...
class ConfigError(SchedlabError, ValueError): ...
class ConfigTypeError(SchedlabError, TypeError): ...
class SimulationError(SchedlabError, RuntimeError): ...
class MeasureError(SchedlabError, RuntimeError): ...

class BatchInterrupted(KeyboardInterrupt):
    outcomes: list[BatchOutcome]

class OutputError(SchedlabError, OSError):
    partial: Any
    kept: Any

# END generated exceptions

__version__: str
build_profile: str
TRACE_EVENTS: list[str]
#: Every declared metric: (family, name, unit, meaning, source).
METRIC_INFO: list[tuple[str, str, str, str, str]]
#: The workload kinds, those whose parameter dict the core reads by their
#: declarations, the components a kind takes (rt_kthreads), and every
#: declared parameter (src/workload/params.rs).
WORKLOAD_KINDS: list[str]
WORKLOAD_KEYED_KINDS: list[str]
WORKLOAD_COMPONENTS: list[str]
WORKLOAD_PARAMS: list[WorkloadParamInfo]
LATENCY_BUCKETS: list[int]
LATENCY_TASK_BYTES: int
PREV_STATES: list[str]
BALANCE_KINDS: list[str]
BALANCE_OUTCOMES: list[str]
KERNEL_FIELDS: list[str]
KERNEL_FIELD_INFO: list[FieldInfo]
COST_FIELD_INFO: list[CostFieldInfo]
EXCEPTIONS: list[tuple[str, list[str], str, list[tuple[str, str]]]]
FIELD_KINDS: list[str]
HACKBENCH_IPCS: list[str]
HACKBENCH_MODES: list[str]
SPINNER_DISTS: list[str]
RT_POLICIES: list[str]
TASK_POLICIES: list[str]
WORKLOAD_ROLES: dict[str, list[str]]
SCRIPT_OPS: list[str]
SCRIPT_MAX_OPS: int
AIM7_MAX_FILE_KB: int
AIM7_MAX_SHARED_LINES: int
AIM7_SHARED_LINES: list[int]
AIM7_WORKFILES: list[str]
SCHBENCH_MAC_NS: float
KERNEL_RETIRED_FIELDS: list[tuple[str, str]]
COST_FIELDS: list[str]
IDLE_TYPES: list[str]
MAX_TASKS: int
MAX_TRACE_ROWS: int
MAX_VMSTAT_BYTES: int
PERFETTO_TRACK_BASES: dict[str, int]
PERFETTO_SEQUENCE_ID: int
PERFETTO_CHUNK_BYTES: int

class Footprint(TypedDict):
    tasks: int
    cpus: int
    vmstat: int
    trace: int
    total: int

def derive_seed(seed: int, point: int, replicate: int) -> int: ...
def machine_presets() -> list[str]: ...
def machine_preset(name: str) -> MachineFields: ...
def machine_check(fields: dict[str, Any]) -> MachineFields: ...
def kernel_presets() -> list[str]: ...
def kernel_preset(name: str) -> KernelFields: ...
def kernel_replace(base: str, fields: dict[str, Any], changes: dict[str, Any]) -> KernelFields: ...
def cost_defaults() -> CostFields: ...
def cost_replace(fields: dict[str, Any], changes: dict[str, Any]) -> CostFields: ...
def cost_for_machine(machine: dict[str, Any]) -> CostFields: ...
def workload_check(kind: str, params: dict[str, Any]) -> None: ...
def group_check(
    group: dict[str, Any] | None = None, groups: list[dict[str, Any]] | None = None
) -> None: ...
def rt_kthreads_check(d: dict[str, Any]) -> None: ...
def workload_tasks(kind: str, params: dict[str, Any], nr_cpus: int | None = None) -> int: ...
def footprint(
    tasks: int,
    ncpus: int,
    *,
    sampled: bool,
    duration_ns: int | None,
    interval_ns: int,
    trace_limit: int | None,
) -> Footprint: ...
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
    latency: bool = False,
    groups: list[dict[str, Any]] | None = None,
) -> SimOutcome: ...
def latency_quantiles(
    hist: NDArray[np.uint32], max_ns: NDArray[np.uint64], qs: list[float]
) -> NDArray[np.float64]: ...
def run_batch(specs: list[dict[str, Any]], threads: int) -> list[BatchOutcome]: ...

class PerfettoTasks(TypedDict):
    pid: NDArray[np.int64]
    comm: list[str]
    prio: NDArray[np.int64]
    tgid: NDArray[np.int64]

class PerfettoBalance(TypedDict):
    time_ns: NDArray[np.uint64]
    cpu: NDArray[np.int32]
    cost_ns: NDArray[np.uint64]
    name: NDArray[np.uint32]
    names: list[str]
    dst_cpu: NDArray[np.int32]
    domain: NDArray[np.uint8]
    moved: NDArray[np.uint32]
    idle: NDArray[np.uint8]
    idle_names: list[str]
    outcome: NDArray[np.uint8]
    outcome_names: list[str]
    busiest: NDArray[np.int32]
    active: NDArray[np.bool_]

def perfetto_body(
    write: Callable[[bytes], object],
    rows: Callable[[], PerfettoTrace | None],
    tasks: PerfettoTasks,
    sample_ns: NDArray[np.uint64],
    runqueue: NDArray[np.int64],
    pelt: PerfettoPelt,
    balance: PerfettoBalance,
    *,
    nr_cpus: int,
    compact: bool,
    max_bundle_events: int,
    end_ns: int,
    truncated: bool,
    chunk_bytes: int,
) -> None: ...
