"""The configuration objects: ``Machine``, ``Kernel`` and ``CostModel``.

They are immutable values. Each holds its fields as validated by the Rust
core; ``replace(**changes)`` returns a new, validated copy (unknown fields and
bad values raise ``ConfigError``, a ``ValueError``). They pickle, compare and
hash by value, so they travel to process pools and cluster workers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _core
from ._check import need_str
from .exceptions import ConfigTypeError


class _Frozen:
    __slots__ = ("_f",)
    _f: dict[str, Any]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace({name}=...)")

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
    def _from(cls, fields: dict[str, Any]) -> Any:
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
    if TYPE_CHECKING:
        name: str
        sockets: int
        cores_per_socket: int
        threads_per_core: int
        llc_cores: int
        numa_nodes: int
        nr_cpus: int

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
    """A kernel version's scheduler behaviour: tunables and algorithm variants.

    ``Kernel.preset("v2.6.36")`` gives a version; ``k.replace(migration_cost_ns=0)``
    changes fields (``Kernel.fields()`` lists them). ``name`` records the preset
    the profile started from.
    """

    __slots__ = ()
    if TYPE_CHECKING:
        name: str
        migration_cost_ns: int
        nr_migrate: int
        latency_ns: int
        min_granularity_ns: int
        wakeup_granularity_ns: int
        tunable_scaling: str
        hz: int
        newidle_throttle: str
        idle_balance: bool
        newidle_force: bool
        newidle_clear_stamp: bool
        domain_defaults: str
        lb_rules: str
        idle_sibling: str
        nohz_kick: str
        compat_yield: bool
        yield_impl: str
        buddy_rules: str
        balance_policy: str
        load_metric: str
        rt_push: str
        pick: str
        gentle_fair_sleepers: bool
        start_debit: bool
        wakeup_preemption: bool
        last_buddy: bool
        next_buddy: bool

    def __init__(self, base: str = "v3.8", **changes: Any) -> None:
        need_str("base", base)
        object.__setattr__(self, "_f", _core.kernel_replace(base, {}, changes))

    @classmethod
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
        """The names of the tunables and variant points."""
        return list(_core.KERNEL_FIELDS)

    def replace(self, **changes: Any) -> Kernel:
        """A copy with ``changes`` applied; all validated, all or nothing."""
        fields = {k: v for k, v in self._f.items() if k != "name"}
        k: Kernel = Kernel._from(_core.kernel_replace(self._f["name"], fields, changes))
        return k

    def diff(self, other: Kernel | None = None) -> dict[str, Any]:
        """Fields that differ from ``other`` (default: this profile's preset)."""
        base = other if other is not None else Kernel.preset(self._f["name"])
        return {k: v for k, v in self._f.items() if k != "name" and base._f[k] != v}

    def __repr__(self) -> str:
        d = self.diff()
        extra = "".join(f", {k}={v!r}" for k, v in d.items())
        return f"Kernel({self._f['name']!r}{extra})"


class CostModel(_Frozen):
    """What the model charges for scheduler work, in nanoseconds.

    ``CostModel()`` gives the defaults (see the README's cost table);
    ``CostModel(context_switch_ns=3000)`` or ``.replace(...)`` changes them.
    """

    __slots__ = ()
    if TYPE_CHECKING:
        context_switch_ns: int
        syscall_ns: int
        wakeup_ns: int
        tick_ns: int
        ipi_latency_ns: int
        ipi_send_ns: int
        ipi_handle_ns: int
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

    def __init__(self, **changes: Any) -> None:
        object.__setattr__(self, "_f", _core.cost_replace({}, changes))

    @classmethod
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

    def replace(self, **changes: Any) -> CostModel:
        c: CostModel = CostModel._from(_core.cost_replace(self._f, changes))
        return c

    def __repr__(self) -> str:
        return "CostModel(" + ", ".join(f"{k}={v}" for k, v in self._f.items()) + ")"
