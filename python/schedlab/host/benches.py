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
from ..workloads import Workload, aim7, hackbench, schbench, workload_arg
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
    workload kind its model runs; ``default``: its base workload;
    ``default_train``: which configurations train by default; ``bools``:
    the config columns holding booleans."""

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
    bools: tuple[str, ...] = ()

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
            hint = " (e.g. with parent_wakee_flips)" if self.kind == "hackbench" else ""
            raise ConfigError(
                f"invalid workload={w.kind!r}: the measured configurations are {self.name} "
                f"runs; expected schedlab.workloads.{self.kind}(...){hint}"
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


def _fewest_workers(cfg: pl.DataFrame) -> list[bool]:
    """The configurations with the fewest workers in all (message threads
    × workers): the least contended, where a request is the work alone and
    a wake-up finds a CPU; the contended ones are predicted."""
    total = [m * w for m, w in zip(cfg["message_threads"], cfg["workers"], strict=True)]
    least = min(total)
    return [t == least for t in total]


_SB_OPTIONS = (
    "warmup_s",
    "operations",
    "sleep_us",
    "requests_per_sec",
    "cache_footprint_kb",
    "pipe_bytes",
    "skip_locking",
)
_SB_METRICS = ("rps", "wakeup_p50_us", "wakeup_p99_us", "request_p50_us", "request_p99_us")
SCHBENCH = Bench(
    name="schbench",
    config=("message_threads", "workers", "runtime_s", *_SB_OPTIONS),
    params={c: c for c in ("message_threads", "workers", "runtime_s", *_SB_OPTIONS)},
    text=(),
    metrics=_SB_METRICS,
    size="workers",
    time="request_p50_us",
    columns={
        "bench": Column("text"),
        "message_threads": Column("int", lo=1, hi=100_000),
        "workers": Column("int", lo=1, hi=100_000),
        "runtime_s": Column("int", lo=1, hi=86_400),
        **{c: Column("int", lo=0, hi=2**31) for c in _SB_OPTIONS if c != "skip_locking"},
        "skip_locking": Column("bool"),
        **{m: Column("number", nulls=True) for m in _SB_METRICS},
        "cpus": Column("int", required=False, nulls=True, lo=0, hi=2**31),
        "cpu_model": Column("text", required=False, nulls=True),
    },
    fit=("work", "wakeup_idle"),
    fitted=("request_p50_us", "wakeup_p50_us"),
    factors=("work", "wakeup_idle", "switch", "futex"),
    kind="schbench",
    default=schbench,
    default_train=_fewest_workers,
    bools=("skip_locking",),
)

#: The benches ``calibrate`` takes, by the name in a frame's ``bench`` column.
BENCHES = {b.name: b for b in (HACKBENCH, AIM7, SCHBENCH)}


def bench_of(real: Any) -> Bench:
    """The bench of a measured frame: ``AIM7`` or ``SCHBENCH`` when its
    ``bench`` column says ``"aim7"`` or ``"schbench"`` on every row,
    ``HACKBENCH`` otherwise (its own checks refuse rows of another bench)."""
    if isinstance(real, pl.DataFrame) and "bench" in real.columns and real.height:
        col = real["bench"]
        if col.dtype == pl.String or isinstance(col.dtype, pl.Categorical | pl.Enum):
            names = set(col.cast(pl.String).to_list())
            if len(names) == 1 and (name := names.pop()) in ("aim7", "schbench"):
                return BENCHES[name]
    return HACKBENCH
