"""What ``calibrate`` needs to know of each benchmark ``measure`` runs: the
columns of its frame that name a configuration and the workload parameter
each sets, the metrics compared (a measured column and the model metric of
the same name), the scale factors that can move them, and which
configurations train a calibration by default."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from ..exceptions import ConfigError
from ..run.args import workload_arg
from ..workloads import Workload, aim7, hackbench
from .columns import Column


@dataclass(frozen=True)
class Bench:
    """One measured benchmark as ``calibrate`` reads it.

    ``config``: the frame's configuration columns; ``params``: the
    workload parameter each sets on a model run (``workload.<param>``);
    ``text``: the config columns holding text (the others are integers);
    ``metrics``: what is compared, each a measured column and the model's
    metric of that name; ``size``: the config column along which a
    configuration is more work (the noise check's order); ``time``: the
    elapsed-time metric; ``columns``: what each read column must hold;
    ``fit``, ``fitted``: the default factors and fitted metrics;
    ``factors``: the factors that can move its model; ``kind``: the
    workload kind its model runs; ``default``: its base workload."""

    name: str
    config: tuple[str, ...]
    params: Mapping[str, str]
    text: tuple[str, ...]
    metrics: tuple[str, ...]
    size: str
    time: str
    columns: Mapping[str, Column]
    fit: tuple[str, ...]
    fitted: tuple[str, ...]
    factors: tuple[str, ...]
    kind: str
    default: Callable[[], Workload]
    default_train: Callable[[pl.DataFrame], list[bool]]

    def where(self, row: Mapping[str, Any], change: str | None = None) -> str:
        """A configuration's family in words (its config but ``size``)."""
        ch = f"{change}, " if change is not None else ""
        if self.name == "hackbench":
            return f"{ch}{row['ipc']}/{row['mode']}, loops={row['loops']}"
        rest = ", ".join(f"{c}={row[c]}" for c in self.config if c != self.size)
        return f"{ch}{self.name}" + (f", {rest}" if rest else "")

    def base(self, workload: Any) -> Workload:
        """The workload whose points the model runs are: ``default()`` for
        None, else a ``Workload`` of this bench's kind, refused otherwise by
        name."""
        if workload is None:
            return self.default()
        w = workload_arg(workload)
        if w.kind != self.kind:
            raise ConfigError(
                f"invalid workload={w.kind!r}: the measured configurations are {self.name} "
                f"runs; expected schedlab.workloads.{self.kind}(...)"
            )
        return w


def _middle_groups(cfg: pl.DataFrame) -> list[bool]:
    """Every ipc × mode at the middle group count measured (4 configurations
    for 4 variants × 5 group counts): the factors are identified, group
    scaling is predicted."""
    gs = sorted(set(cfg["groups"].to_list()))
    mid = gs[(len(gs) - 1) // 2]
    return [g == mid for g in cfg["groups"].to_list()]


def _fewest_children(cfg: pl.DataFrame) -> list[bool]:
    """The fewest children measured (one, in the usual sitting): what runs
    alone fixes the CPU work's speed; how children share the CPUs is
    predicted."""
    least = min(cfg["children"].to_list())
    return [c == least for c in cfg["children"].to_list()]


_HB_METRICS = ("elapsed_s", "context_switches", "cpu_migrations")
HACKBENCH = Bench(
    name="hackbench",
    config=("ipc", "mode", "groups", "loops"),
    params={"ipc": "ipc", "mode": "mode", "groups": "groups", "loops": "loops"},
    text=("ipc", "mode"),
    metrics=_HB_METRICS,
    size="groups",
    time="elapsed_s",
    columns={
        "bench": Column("text", required=False),
        "ipc": Column("text"),
        "mode": Column("text"),
        "groups": Column("int", lo=1, hi=10_000),
        "loops": Column("int", lo=1, hi=10_000_000),
        "pinned": Column("bool", required=False, nulls=True),
        "change": Column("text", required=False, nulls=True),
        **{m: Column("number", nulls=True) for m in _HB_METRICS},
        "cpus": Column("int", required=False, nulls=True, lo=0, hi=2**31),
        "cpu_model": Column("text", required=False, nulls=True),
    },
    fit=("socket", "pipe", "wakeup_idle"),
    fitted=("elapsed_s",),
    factors=("socket", "pipe", "wakeup_idle", "switch", "process", "copy"),
    kind="hackbench",
    default=hackbench,
    default_train=_middle_groups,
)

_AIM7_METRICS = ("jobs_per_min", "real_s", "cpu_s")
AIM7 = Bench(
    name="aim7",
    config=("children", "jobs"),
    params={"children": "tasks", "jobs": "jobs"},
    text=(),
    metrics=_AIM7_METRICS,
    size="children",
    time="real_s",
    columns={
        "bench": Column("text"),
        "children": Column("int", lo=1, hi=10_000),
        "jobs": Column("int", lo=1, hi=100_000),
        **{m: Column("number", nulls=True) for m in _AIM7_METRICS},
        "cpus": Column("int", required=False, nulls=True, lo=0, hi=2**31),
        "cpu_model": Column("text", required=False, nulls=True),
    },
    fit=("work", "io"),
    fitted=("real_s", "cpu_s"),
    factors=("work", "io", "switch", "process", "wakeup_idle"),
    kind="aim7",
    default=lambda: aim7(tasks=1),
    default_train=_fewest_children,
)

#: The benches ``calibrate`` takes, by the name in a frame's ``bench`` column.
BENCHES = {b.name: b for b in (HACKBENCH, AIM7)}


def bench_of(real: Any) -> Bench:
    """The bench of a measured frame: ``AIM7`` when its ``bench`` column
    says ``"aim7"`` on every row, ``HACKBENCH`` otherwise (its own checks
    refuse rows of another bench)."""
    if isinstance(real, pl.DataFrame) and "bench" in real.columns and real.height:
        col = real["bench"]
        if col.dtype == pl.String or isinstance(col.dtype, pl.Categorical | pl.Enum):
            names = set(col.cast(pl.String).to_list())
            if names == {"aim7"}:
                return AIM7
    return HACKBENCH
