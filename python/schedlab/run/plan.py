"""Planning a sweep's runs: each run's seed (``derive_seed``), the planned
run (``Run``), and the two planners — ``plan_runs`` resolves a short list of
points at once (``bisect``'s, ``calibrate``'s: a ``RunList``) and
``plan_sweep`` checks ``sweep``'s arguments and plans its grid lazily (a
``Plan``, holding one point's configuration at a time whatever the grid's
size). Every point is resolved (validated) before it runs; an invalid
point's runs become "error" rows, the others run."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from .. import _core
from .._check import checked_call, interval_to_ns, need_bool, need_int, seconds_to_ns, type_name
from .._progress import ProgressArg
from ..config import CostModel, Kernel, Machine, costs_arg, kernel_arg, machine_arg
from ..exceptions import ConfigError, ConfigTypeError
from ..workloads import Workload, workload_arg
from .frame import column_kinds, config_row, error_config
from .grid import apply_point, grid_points, normalise_grid, resolve_point


@checked_call("derive_seed")
def derive_seed(seed: int, point: int, replicate: int) -> int:
    """The seed of run (point, replicate) of a sweep seeded ``seed``:
    SplitMix64 mixing, so it depends on nothing else (thread count, chunking,
    executor, order). Computed by the core (the one derivation); each
    argument an integer from 0 to 2**64 - 1."""
    return _core.derive_seed(seed, point, replicate)


@dataclass
class Run:
    """One planned run. The configuration row and spec are the point's,
    shared by its replicates; each run's own are built when needed (so a
    planned run costs a few hundred bytes, not a row of every column)."""

    point: int
    replicate: int
    seed: int
    base_row: dict[str, Any]
    base_spec: dict[str, Any] | None
    error: str | None

    @property
    def row(self) -> dict[str, Any]:
        """Its configuration columns, after ``point`` and ``replicate``."""
        row: dict[str, Any] = {"point": self.point, "replicate": self.replicate, **self.base_row}
        row["seed"] = self.seed
        return row

    @property
    def spec(self) -> dict[str, Any] | None:
        """The core's run spec, None for a run of an invalid point."""
        return None if self.base_spec is None else {**self.base_spec, "seed": self.seed}

    @property
    def runnable(self) -> dict[str, Any]:
        """The spec of a run of a valid point."""
        spec = self.spec
        assert spec is not None
        return spec

    def result_row(self, outcome: Mapping[str, Any]) -> dict[str, Any]:
        """Its frame row, from the core's ``outcome`` of it."""
        row = dict(self.row)
        row["status"] = outcome["status"]
        row["status_detail"] = outcome["status_detail"]
        row.update(outcome["metrics"])
        row["wall_s"] = outcome["wall_s"]
        return row

    def failed_row(self) -> dict[str, Any]:
        """Its frame row as a run of an invalid point: status "error"."""
        row = dict(self.row)
        row["status"] = "error"
        row["status_detail"] = self.error
        row["wall_s"] = 0.0
        return row


def _point_runs(
    p: int,
    point: Mapping[str, Any],
    resolved: tuple[dict[str, Any], dict[str, Any] | None, str | None],
    kinds: Mapping[str, set[type]],
    replicates: int,
    seed: int,
) -> list[Run]:
    base_row, base_spec, err = resolved
    if err is not None:
        base_row, err = error_config(point, err, kinds)
    return [Run(p, r, derive_seed(seed, p, r), base_row, base_spec, err) for r in range(replicates)]


def plan_runs(
    machine: Machine,
    kernel: Kernel,
    costs: CostModel | None,
    workload: Workload,
    points: Iterable[Mapping[str, Any]],
    replicates: int,
    seed: int,
    duration_s: float | None,
    duration_ns: int | None,
    interval_ns: int,
    latency: bool = False,
) -> list[Run]:
    """Every run of ``points`` (a short list: ``bisect``'s), all resolved
    (validated) before any run: an invalid point becomes "error" rows.
    ``latency``: the runs keep scheduling delays (``latency_*`` metrics)."""
    pts = list(points)
    resolved = [
        resolve_point(
            machine, kernel, costs, workload, pt, duration_s, duration_ns, interval_ns, latency
        )
        for pt in pts
    ]
    kinds = column_kinds(
        [config_row(machine, kernel, costs or CostModel.preset(machine), workload, 0, duration_s)],
        [row for row, spec, _ in resolved if spec is not None],
    )
    return [
        run
        for p, (pt, res) in enumerate(zip(pts, resolved, strict=True))
        for run in _point_runs(p, pt, res, kinds, replicates, seed)
    ]


class RunList:
    """Planned runs held in a list (``bisect``'s few), with ``Plan``'s
    interface for ``execute``."""

    def __init__(self, runs: list[Run]) -> None:
        self._runs = runs
        self._seeds: dict[tuple[int, int], int] | None = None

    @property
    def n_runs(self) -> int:
        return len(self._runs)

    def __iter__(self) -> Iterator[Run]:
        return iter(self._runs)

    def seed_of(self, point: Any, replicate: Any) -> int | None:
        """The seed of run (point, replicate), or None if it is not planned."""
        if self._seeds is None:
            self._seeds = {(r.point, r.replicate): r.seed for r in self._runs}
        return self._seeds.get((point, replicate))


#: The most runs a sweep may plan (points × replicates).
MAX_RUNS = 10_000_000


@dataclass
class Plan:
    """A sweep's runs, planned lazily: iterating resolves (validates) the
    grid's points one at a time, in order, so planning holds one point's
    configuration at a time whatever the grid's size. Each point is the
    same as the eager ``plan_runs`` makes (the same rows, specs, errors)."""

    machine: Machine
    kernel: Kernel
    costs: CostModel | None
    workload: Workload
    grid: dict[str, list[Any]]
    replicates: int
    seed: int
    duration_s: float | None
    duration_ns: int | None
    interval_ns: int
    nthreads: int
    kinds: dict[str, set[type]]
    #: The runs keep scheduling delays (the ``latency_*`` metrics).
    latency: bool = False

    @property
    def n_points(self) -> int:
        return math.prod(len(v) for v in self.grid.values())

    @property
    def n_runs(self) -> int:
        return self.n_points * self.replicates

    def __iter__(self) -> Iterator[Run]:
        for p, point in enumerate(grid_points(self.grid)):
            yield from self.runs_of(p, point)

    def runs_of(self, p: int, point: Mapping[str, Any]) -> list[Run]:
        """The runs of point number ``p`` (``point``), one per replicate."""
        res = resolve_point(
            self.machine,
            self.kernel,
            self.costs,
            self.workload,
            point,
            self.duration_s,
            self.duration_ns,
            self.interval_ns,
            self.latency,
        )
        return _point_runs(p, point, res, self.kinds, self.replicates, self.seed)

    def seed_of(self, point: Any, replicate: Any) -> int | None:
        """The seed of run (point, replicate), or None if it is not planned."""
        ok = all(isinstance(x, int) and not isinstance(x, bool) for x in (point, replicate))
        if ok and 0 <= point < self.n_points and 0 <= replicate < self.replicates:
            return derive_seed(self.seed, point, replicate)
        return None

    def _parts(self) -> list[list[str]]:
        """The grid keys by what their validity depends on: machine and
        costs, kernel, workload. A point is valid if and only if each of its
        three parts is (``apply_point`` checks each on its own)."""
        a = [k for k in self.grid if k == "machine" or k in CostModel.fields()]
        b = [k for k in self.grid if k == "kernel" or k in Kernel.fields()]
        c = [k for k in self.grid if k.startswith("workload.")]
        return [a, b, c]

    def _valid(self, point: Mapping[str, Any]) -> bool:
        try:
            apply_point(self.machine, self.kernel, self.costs, self.workload, point)
        except (ValueError, TypeError, OverflowError):
            return False
        return True

    def _subpoints(self, keys: list[str]) -> Iterable[dict[str, Any]]:
        return grid_points({k: self.grid[k] for k in keys})

    def count_valid(self, budget: int = 100_000) -> int | None:
        """The number of valid points, from each part's valid sub-points
        (their product), or None if the parts hold more than ``budget``
        sub-points in all."""
        parts = self._parts()
        if sum(math.prod(len(self.grid[k]) for k in keys) for keys in parts) > budget:
            return None
        return math.prod(sum(map(self._valid, self._subpoints(keys))) for keys in parts)


#: What ``execute`` runs: a lazy plan or a list of runs.
Planned = Plan | RunList


def _plan_kinds(
    machine: Machine,
    kernel: Kernel,
    costs: CostModel | None,
    workload: Workload,
    grid: dict[str, list[Any]],
    duration_s: float | None,
    plan: Plan,
) -> dict[str, set[type]]:
    """``column_kinds`` of the whole grid without resolving every point.
    Every column but the ``workload.<arg>`` ones holds one type whatever the
    point (the core normalises Kernel and CostModel fields; names are
    text), so only the swept workload arguments' types depend on which
    points are valid: those of the valid workload sub-points, if some
    machine-and-costs and some kernel sub-point is valid too."""
    base_row = config_row(
        machine, kernel, costs or CostModel.preset(machine), workload, 0, duration_s
    )
    kinds = column_kinds([base_row], [])
    mach, kern, wl = plan._parts()
    if not wl or not all(any(map(plan._valid, plan._subpoints(ks))) for ks in (mach, kern)):
        return kinds
    args = [k[len("workload.") :] for k in wl]
    wanted = {
        a: {type(v) for v in grid[f"workload.{a}"] if isinstance(v, bool | int | float | str)}
        for a in args
    }
    found: dict[str, set[type]] = {a: set() for a in args}
    for sub in plan._subpoints(wl):
        try:
            w = workload.replace(**{k[len("workload.") :]: v for k, v in sub.items()})
        except (ValueError, TypeError, OverflowError):
            continue
        for a in args:
            v = w.args.get(a)
            if isinstance(v, bool | int | float | str):
                found[a].add(type(v))
        if found == wanted:
            break
    for a in args:
        if found[a]:
            kinds[f"workload.{a}"] = found[a]
    return kinds


def plan_sweep(
    machine: Machine | str,
    kernel: Kernel | str,
    workload: Workload,
    grid: Mapping[str, Sequence[Any]] | None,
    *,
    replicates: int,
    seed: int,
    threads: int | None,
    progress: ProgressArg,
    executor: Executor | None,
    costs: CostModel | None,
    duration_s: float | None,
    interval_s: float,
    latency: bool = False,
) -> Plan:
    """Check ``sweep``'s arguments and plan its runs (lazily: see ``Plan``;
    each invalid point's become "error" rows, the others run)."""
    m = machine_arg(machine)
    k = kernel_arg(kernel)
    workload = workload_arg(workload)
    costs = costs_arg(costs)
    reps = need_int("replicates", replicates, lo=1, hi=1_000_000)
    seed = need_int("seed", seed, lo=0, hi=2**64 - 1)
    nthreads = 0 if threads is None else need_int("threads", threads, lo=1, hi=4096)
    if not callable(progress):
        need_bool("progress", progress)
    if executor is not None and not hasattr(executor, "submit"):
        raise ConfigTypeError(
            f"invalid type for executor: got {type_name(executor)}, expected an object "
            "with .submit() (a concurrent.futures.Executor)"
        )
    duration_ns = None if duration_s is None else seconds_to_ns("duration_s", duration_s)
    interval_ns = interval_to_ns("interval_s", interval_s)
    need_bool("latency", latency)
    g = normalise_grid(grid, workload)
    n_runs = math.prod(len(v) for v in g.values()) * reps
    if n_runs > MAX_RUNS:
        raise ConfigError(
            f"invalid grid: {n_runs} runs (points x replicates={reps}); expected at most {MAX_RUNS}"
        )
    plan = Plan(
        m,
        k,
        costs,
        workload,
        g,
        reps,
        seed,
        duration_s,
        duration_ns,
        interval_ns,
        nthreads,
        {},
        latency,
    )
    plan.kinds = _plan_kinds(m, k, costs, workload, g, duration_s, plan)
    return plan
