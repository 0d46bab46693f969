"""Task groups: what a cgroup's ``cpu`` controller gives a set of tasks —
``cpu.shares`` (or cgroup v2 ``cpu.weight``), a CFS bandwidth limit
(``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` / ``cpu.cfs_burst_us``, v2
``cpu.max``) and ``cpu.idle``. A run defines its groups with
``simulate(..., groups=[Group(...), ...])`` (and the same ``groups=`` on
``sweep`` and ``bisect``); ``Workload.with_tasks(group=...)`` places a
workload's tasks, or one role's, in one. docs/groups.md has the model.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core
from ._check import checked_call, is_list, need_bool, need_scaled, need_str, show, type_name
from .exceptions import ConfigError, ConfigTypeError

#: The counters of ``Result.groups`` (and the ``group.<name>.<counter>``
#: metrics): CPU time and runqueue wait of the group's tasks (its
#: descendants' included), then ``cpu.stat``'s.
GROUP_COUNTERS = (
    "cpu_s",
    "wait_s",
    "nr_periods",
    "nr_throttled",
    "throttled_s",
    "nr_bursts",
    "burst_s",
)

#: The fields a sweep's ``group.<name>.<field>`` grid key may set.
GROUP_FIELDS = ("shares", "weight", "quota_us", "period_us", "burst_us", "idle")


#: ``cpu.shares`` (``MIN_SHARES`` to ``MAX_SHARES``) and cgroup v2's
#: ``cpu.weight``.
SHARES_RANGE = (2, 262_144)
WEIGHT_RANGE = (1, 10_000)
#: ``cpu.cfs_period_us`` (``min_cfs_quota_period`` to
#: ``max_cfs_quota_period``) and the largest quota the model takes, in µs.
PERIOD_US = (1000, 1_000_000)
MAX_QUOTA_US = 1_000_000_000


def _us(param: str, v: Any, lo: int, hi: int, what: str, *, optional: bool = False) -> int | None:
    """Microseconds (an int or float), ``lo`` to ``hi``, as ns; ``what``
    follows the range in a refusal."""
    if v is None and optional:
        return None
    if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real):
        allowed = "None or a number of microseconds" if optional else "a number of microseconds"
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(v)} {v!r}, expected {allowed}"
        )
    return need_scaled(param, v, 1000, lo * 1000, hi * 1000, "µs", or_else=what)


def _int(param: str, v: Any, rng: tuple[int, int], what: str) -> int | None:
    """None, or an int from ``rng[0]`` to ``rng[1]``."""
    if v is None:
        return None
    if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Integral):
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(v)} {v!r}, expected None or int"
        )
    if not rng[0] <= int(v) <= rng[1]:
        raise ConfigError(f"invalid {param}={show(v)}: expected {rng[0]} to {rng[1]} ({what})")
    return int(v)


@dataclass(frozen=True)
class Group:
    """One task group (a cgroup with the ``cpu`` controller).

    - ``name``: letters, digits, ``_`` and ``-`` (what ``with_tasks(group=)``
      and the ``group.<name>.*`` metrics use).
    - ``parent``: ``None`` (the root group) or the name of a group listed
      before this one.
    - ``shares`` (``cpu.shares``, 2 to 262144, default 1024) or ``weight``
      (cgroup v2 ``cpu.weight``, 1 to 10000, default 100: shares = weight ×
      1024 / 100); not both, and neither on an idle group.
    - ``quota_us``: ``None`` (no limit) or the runtime per period, at least
      1000; ``period_us``: 1000 to 1000000 (default 100000); ``burst_us``:
      0 to the quota (5.14's ``cpu.cfs_burst_us``).
    - ``idle``: ``cpu.idle`` (5.15): the group's tasks run as SCHED_IDLE
      towards the rest; the group's weight is then cpu.idle's
      (``WEIGHT_IDLEPRIO``), and ``shares`` or ``weight`` is refused, as
      ``sched_group_set_shares()`` refuses an idle group.
    """

    name: str
    parent: str | None = None
    shares: int | None = None
    weight: int | None = None
    quota_us: float | None = None
    period_us: float = 100_000
    burst_us: float = 0
    idle: bool = False

    def __post_init__(self) -> None:
        need_str("name", self.name)
        if self.parent is not None:
            need_str("parent", self.parent)
        need_bool("idle", self.idle)
        if self.shares is not None and self.weight is not None:
            raise ConfigError(
                f"invalid Group({self.name!r}): shares={show(self.shares)} and "
                f"weight={show(self.weight)} both given; expected one of them (weight is "
                "cgroup v2's cpu.weight)"
            )
        _int("weight", self.weight, WEIGHT_RANGE, "cgroup v2 cpu.weight")
        _int("shares", self.shares, SHARES_RANGE, "cpu.shares")
        if self.idle:
            for param in ("shares", "weight"):
                if getattr(self, param) is not None:
                    # sched_group_set_shares() returns -EINVAL for an idle group
                    raise ConfigError(
                        f"invalid {param}={show(getattr(self, param))} for Group({self.name!r}) "
                        "with idle=True: expected None (an idle group's weight is cpu.idle's, "
                        "and the kernel refuses cpu.shares or cpu.weight on it: EINVAL)"
                    )
        quota, _, burst = self._times()
        if burst > (quota or 0):
            raise ConfigError(
                f"invalid burst_us={show(self.burst_us)}: expected 0 to quota_us "
                f"({show(self.quota_us)}): cpu.cfs_burst_us may not exceed the quota, and "
                "needs one"
            )
        _core.group_check(group=self.to_core())

    def _times(self) -> tuple[int | None, int, int]:
        """quota, period and burst in ns, each checked against its range."""
        quota = _us(
            "quota_us",
            self.quota_us,
            PERIOD_US[0],
            MAX_QUOTA_US,
            " or None for no limit (cpu.cfs_quota_us: at least 1 ms)",
            optional=True,
        )
        period = _us("period_us", self.period_us, *PERIOD_US, " (cpu.cfs_period_us: 1 ms to 1 s)")
        burst = _us(
            "burst_us", self.burst_us, 0, MAX_QUOTA_US, " (cpu.cfs_burst_us), at most the quota"
        )
        assert period is not None and burst is not None
        return quota, period, burst

    def to_core(self) -> dict[str, Any]:
        """The core's group dict (times in ns)."""
        if self.weight is not None:
            # sched_weight_from_cgroup(): DIV_ROUND_CLOSEST(weight * 1024, 100).
            shares = (int(self.weight) * 1024 + 50) // 100
        elif self.shares is not None:
            shares = int(self.shares)
        else:
            shares = 1024
        quota, period, burst = self._times()
        return {
            "name": self.name,
            "parent": self.parent,
            "shares": shares,
            "quota_ns": quota,
            "period_ns": period,
            "burst_ns": burst,
            "idle": bool(self.idle),
        }

    def replace(self, **changes: Any) -> Group:
        """The same group with some fields changed (checked again)."""
        for k in changes:
            if k not in GROUP_FIELDS and k not in ("name", "parent"):
                raise ConfigError(
                    f"unknown Group field {k!r}: expected one of name, parent, "
                    f"{', '.join(GROUP_FIELDS)}"
                )
        if "weight" in changes and "shares" not in changes:
            changes["shares"] = None
        if "shares" in changes and "weight" not in changes:
            changes["weight"] = None
        return dataclasses.replace(self, **changes)

    def label(self) -> str:
        """A short description, for a configuration column."""
        d = self.to_core()
        parts = [self.name]
        if self.parent:
            parts.append(f"parent={self.parent}")
        if d["shares"] != 1024:
            parts.append(f"shares={d['shares']}")
        if self.quota_us is not None:
            parts.append(f"quota={d['quota_ns'] // 1000}/{d['period_ns'] // 1000}us")
        if d["burst_ns"]:
            parts.append(f"burst={d['burst_ns'] // 1000}us")
        if self.idle:
            parts.append("idle")
        return " ".join(parts)


#: The dataclass's ``__init__``, refusing arguments that do not bind (an
#: unknown field, too many positional ones) with a ``ConfigTypeError`` that
#: names the fields, as the core's constructors do.
Group.__init__ = checked_call("Group")(Group.__init__)  # type: ignore[method-assign]


def groups_arg(groups: Any) -> tuple[Group, ...]:
    """``groups=`` checked: None or a list of ``Group``, the hierarchy valid."""
    if groups is None:
        return ()
    if isinstance(groups, Group):
        groups = [groups]
    if not is_list(groups):
        raise ConfigTypeError(
            f"invalid type for groups: got {type_name(groups)}, expected None or a list of Group"
        )
    out: list[Group] = []
    for i, g in enumerate(groups):
        if not isinstance(g, Group):
            raise ConfigTypeError(
                f"invalid type for groups[{i}]: got {type_name(g)} {g!r}, expected schedlab.Group"
            )
        out.append(g)
    _core.group_check(groups=[g.to_core() for g in out])
    return tuple(out)


def apply_group_keys(groups: Sequence[Group], point: dict[str, Any]) -> tuple[Group, ...]:
    """``groups`` with a grid point's ``group.<name>.<field>`` values set:
    each group's at once (as one ``Group.replace``, so that ``shares`` and
    ``weight`` together, or ``idle`` with either, are refused whatever the
    keys' order). A refusal names the group's grid keys."""
    out = list(groups)
    changes: dict[str, dict[str, Any]] = {}
    for key, v in point.items():
        if key.startswith("group."):
            _, name, fld = key.split(".", 2)
            changes.setdefault(name, {})[fld] = v
    for name, fields in changes.items():
        i = next(j for j, g in enumerate(out) if g.name == name)
        try:
            out[i] = out[i].replace(**fields)
        except (ValueError, TypeError) as e:
            keys = ", ".join(f"group.{name}.{f}={show(v)}" for f, v in fields.items())
            raise type(e)(f"grid key{'s' if len(fields) > 1 else ''} {keys}: {e}") from e
    _core.group_check(groups=[g.to_core() for g in out])
    return tuple(out)


def group_keys(groups: Sequence[Group]) -> list[str]:
    """The grid keys ``groups`` allows."""
    return [f"group.{g.name}.{f}" for g in groups for f in GROUP_FIELDS]
