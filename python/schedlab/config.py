"""The configuration objects: ``Machine``, ``Kernel`` and ``CostModel``.

They are immutable values. Each holds its fields as validated by the Rust
core; ``replace(**changes)`` returns a new, validated copy (unknown fields and
bad values raise ``ConfigError``, a ``ValueError``). They pickle, compare and
hash by value, so they travel to process pools and cluster workers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import polars as pl

from . import _core
from ._check import checked_call, need_instance, need_str
from .exceptions import ConfigError, ConfigTypeError


class _Frozen:
    __slots__ = ("_f",)
    _f: dict[str, Any]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace({name}=...)")

    if not TYPE_CHECKING:
        # Hidden from type checkers, so that mypy flags a misspelt field:
        # each class declares its fields as annotations below.

        def __getattr__(self, name: str) -> Any:
            if name.startswith("_"):
                raise AttributeError(name)
            try:
                return self._f[name]
            except KeyError:
                raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return dict(self._f)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Frozen) and type(other) is type(self) and other._f == self._f

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self._f.items()))))

    @classmethod
    def _from(cls, fields: Mapping[str, Any]) -> Any:
        obj = object.__new__(cls)
        object.__setattr__(obj, "_f", dict(fields))
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self)._from, (self._f,))


class Machine(_Frozen):
    """A simulated machine: sockets × cores × SMT threads, LLC span, NUMA nodes.

    ``Machine.preset("core2-2s")`` gives the seed cases' machines;
    ``Machine(sockets=2, cores_per_socket=4, threads_per_core=1)`` builds one.
    ``llc_cores`` (cores sharing a last-level cache) defaults to a socket,
    ``numa_nodes`` to one node per socket.
    """

    __slots__ = ()
    name: str
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    llc_cores: int
    numa_nodes: int
    nr_cpus: int

    @checked_call("Machine")
    def __init__(
        self,
        sockets: int,
        cores_per_socket: int,
        threads_per_core: int = 1,
        *,
        llc_cores: int | None = None,
        numa_nodes: int | None = None,
        name: str = "custom",
    ) -> None:
        need_str("name", name)
        if threads_per_core is None:  # the core would take None for its default, 1
            raise ConfigTypeError(
                "invalid type for threads_per_core: got NoneType None, expected int"
            )
        f = _core.machine_check(
            {
                "sockets": sockets,
                "cores_per_socket": cores_per_socket,
                "threads_per_core": threads_per_core,
                "llc_cores": llc_cores,
                "numa_nodes": numa_nodes,
                "name": name,
            }
        )
        object.__setattr__(self, "_f", f)

    @classmethod
    @checked_call("Machine.preset")
    def preset(cls, name: str) -> Machine:
        """A named machine; ``Machine.presets()`` lists them."""
        need_str("name", name)
        m: Machine = cls._from(_core.machine_preset(name))
        return m

    @staticmethod
    def presets() -> list[str]:
        return _core.machine_presets()

    def __repr__(self) -> str:
        f = self._f
        shape = f"{f['sockets']}x{f['cores_per_socket']}x{f['threads_per_core']}"
        return (
            f"Machine({f['name']!r}, {shape} = {f['nr_cpus']} CPUs, "
            f"llc_cores={f['llc_cores']}, numa_nodes={f['numa_nodes']})"
        )


class Kernel(_Frozen):
    """A kernel version's scheduler behaviour: one field per kernel behaviour.

    Each field is a tunable, a scheduler feature bit or one upstream change,
    named after the kernel's feature or the commit that introduced it
    (``Kernel.info()`` gives the commit and release of each). A preset is a
    list of these settings: ``Kernel.preset("v2.6.36")``;
    ``k.replace(migration_cost_ns=0)`` changes fields (``Kernel.fields()``
    lists them); ``k.diff(other)`` is the changelog between two profiles.
    ``name`` records the preset the profile started from.
    """

    __slots__ = ()
    # The preset the profile started from, then the fields: each declared once, in the
    # Rust core's Kernel list (src/kernel.rs), written here by scripts/dev/gen_fields.py.
    name: str
    # BEGIN generated Kernel fields (scripts/dev/gen_fields.py)
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
    # END generated Kernel fields

    @checked_call("Kernel", fields="Kernel fields (Kernel.fields() lists them)")
    def __init__(self, base: str = "v3.8", **changes: Any) -> None:
        need_str("base", base)
        if base not in _core.kernel_presets():
            raise ConfigError(
                f"invalid base={base!r}: expected one of {', '.join(_core.kernel_presets())}"
            )
        object.__setattr__(self, "_f", _core.kernel_replace(base, {}, changes))

    @classmethod
    @checked_call("Kernel.preset")
    def preset(cls, name: str) -> Kernel:
        """A named kernel version; ``Kernel.presets()`` lists them."""
        need_str("name", name)
        k: Kernel = cls._from(_core.kernel_preset(name))
        return k

    @staticmethod
    def presets() -> list[str]:
        return _core.kernel_presets()

    @staticmethod
    def fields() -> list[str]:
        """The names of the fields, in order."""
        return list(_core.KERNEL_FIELDS)

    @staticmethod
    def info() -> pl.DataFrame:
        """One row per field: ``field``, ``kind`` (tunable, feature, change,
        experiment), ``kernel`` (the kernel's name for it), ``commit``,
        ``release``, ``verified`` (commit and release seen in a public source,
        not recalled), ``doc`` and ``allowed`` (the values the field takes)."""
        return _info_frame(_core.KERNEL_FIELD_INFO, _INFO_SCHEMA)

    @checked_call("Kernel.replace", fields="Kernel fields (Kernel.fields() lists them)")
    def replace(self, **changes: Any) -> Kernel:
        """A copy with ``changes`` applied; all validated, all or nothing."""
        fields = {k: v for k, v in self._f.items() if k != "name"}
        k: Kernel = Kernel._from(_core.kernel_replace(self._f["name"], fields, changes))
        return k

    def changes(self) -> dict[str, Any]:
        """The fields that differ from this profile's preset (``replace()``'d)."""
        base = Kernel.preset(self._f["name"])
        return {k: v for k, v in self._f.items() if k != "name" and base._f[k] != v}

    @checked_call("Kernel.diff")
    def diff(self, other: Kernel | str | None = None) -> pl.DataFrame:
        """The behaviours that differ between this profile and ``other`` (a
        ``Kernel`` or a preset name; default: this profile's preset), as a
        frame: ``field``, ``this``, ``other`` (the values, as text), then
        ``kind``, ``kernel``, ``commit``, ``release``, ``verified`` and
        ``doc`` from ``Kernel.info()`` — the changelog between two presets.
        """
        if other is None:
            o = Kernel.preset(self._f["name"])
        elif isinstance(other, str):
            o = Kernel.preset(other)
        elif isinstance(other, Kernel):
            o = other
        else:
            raise ConfigTypeError(
                f"invalid type for other: got {type(other).__name__} {other!r}, "
                "expected a schedlab.Kernel, a preset name or None"
            )
        names = [f for f in Kernel.fields() if self._f[f] != o._f[f]]
        info = Kernel.info().filter(pl.col("field").is_in(names))
        values = pl.DataFrame(
            {
                "field": names,
                "this": [str(self._f[f]) for f in names],
                "other": [str(o._f[f]) for f in names],
            },
            schema={"field": pl.String, "this": pl.String, "other": pl.String},
        )
        return values.join(info, on="field", how="left", maintain_order="left")

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.changes().items())
        return f"Kernel({self._f['name']!r}{extra})"


_INFO_SCHEMA: dict[str, Any] = {
    "kind": pl.String,
    "kernel": pl.String,
    "commit": pl.String,
    "release": pl.String,
    "verified": pl.Boolean,
    "doc": pl.String,
    "allowed": pl.String,
}
_COST_INFO_SCHEMA: dict[str, Any] = {"doc": pl.String, "allowed": pl.String}


def _info_frame(info: Sequence[Mapping[str, Any]], schema: dict[str, Any]) -> pl.DataFrame:
    """A frame of the core's field declarations: ``field``, then ``schema``'s columns."""
    return pl.DataFrame(
        {"field": [r["name"] for r in info], **{c: [r[c] for r in info] for c in schema}},
        schema={"field": pl.String, **schema},
    )


class CostModel(_Frozen):
    """What the model charges for scheduler work, in nanoseconds.

    ``CostModel()`` gives the defaults (the docs' Costs reference page lists them);
    ``CostModel(context_switch_ns=3000)`` or ``.replace(...)`` changes them.
    """

    __slots__ = ()
    # Declared once, in the Rust core's CostModel list (src/cost.rs), written
    # here by scripts/dev/gen_fields.py.
    # BEGIN generated CostModel fields (scripts/dev/gen_fields.py)
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
    # END generated CostModel fields

    @checked_call("CostModel", fields="CostModel fields (CostModel.fields() lists them)")
    def __init__(self, **changes: Any) -> None:
        object.__setattr__(self, "_f", _core.cost_replace({}, changes))

    @classmethod
    @checked_call("CostModel.preset")
    def preset(cls, machine: Machine | str) -> CostModel:
        """The defaults for a machine (what ``simulate`` uses when ``costs=None``)."""
        m = Machine.preset(machine) if isinstance(machine, str) else machine
        if not isinstance(m, Machine):
            raise ConfigTypeError(
                f"invalid type for machine: got {type(m).__name__} {m!r}, "
                "expected a schedlab.Machine or a preset name"
            )
        c: CostModel = cls._from(_core.cost_for_machine(m.to_dict()))
        return c

    @staticmethod
    def fields() -> list[str]:
        return list(_core.COST_FIELDS)

    @staticmethod
    def info() -> pl.DataFrame:
        """One row per field: ``field``, ``doc`` (what it charges) and
        ``allowed`` (the values it takes)."""
        return _info_frame(_core.COST_FIELD_INFO, _COST_INFO_SCHEMA)

    @checked_call("CostModel.replace", fields="CostModel fields (CostModel.fields() lists them)")
    def replace(self, **changes: Any) -> CostModel:
        c: CostModel = CostModel._from(_core.cost_replace(self._f, changes))
        return c

    def __repr__(self) -> str:
        return "CostModel(" + ", ".join(f"{k}={v}" for k, v in self._f.items()) + ")"


# --- a machine, kernel or cost model given as an argument ---------------------

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
