"""What a sweep will cost before it starts (the ``schedlab sweep`` header):
its wall time from a few timed runs of its own (``run_timing_sample``) and
the timed planning of its first runs, and its peak memory from the core's
per-run footprint and the rows it keeps (docs, "Errors and limits")."""

from __future__ import annotations

import itertools
import math
import os
import time
from dataclasses import dataclass
from typing import Any

from .. import _core
from .._check import need_int
from ..exceptions import ConfigError
from .plan import Plan, Planned, Run

#: Bytes a finished row takes at a sweep's peak (``run.rows``: a few
#: hundred rows as dicts, the rest in frames; the chunk under way; the
#: frame built at the end): the peak RSS above a 10-run sweep's, per extra
#: row, was 5.1 KB for 10,000 runs, 4.0 KB for 40,000 and 3.7 KB for
#: 100,000 (``scripts/dev/row_memory.py``, 2026-12-02; the frame itself
#: takes 1.1 KB a row); each row used to stay a dict, 37.5 KB at the peak.
ROW_BYTES = 4_000
#: The interpreter, numpy, polars and the package: the peak RSS of a tiny
#: sweep.
BASE_BYTES = 80_000_000
#: Python's work per run besides planning it, serial whatever the threads
#: (handing the spec to the core, the finished row, the frame): measured,
#: 0.25 ms a run on 1,000 runs. Planning is timed on the sweep's first runs.
RUN_OVERHEAD_S = 0.25e-3
#: Runs planned (not run) to time the planning.
PLAN_SAMPLE = 100
#: Runs timed at most (spread over the grid; replicate 0 of each).
SAMPLES = 3
#: Points tried from each sample start, past invalid or finished ones.
SEARCH = 64


#: Bytes a planned run takes while a run list (``bisect``'s, ``calibrate``'s)
#: holds every run at once; a lazy ``Plan`` holds a chunk at a time.
RUN_BYTES = 400
#: The default ``memory_limit``: this share of the memory the process may
#: use (the least of the machine's RAM, its cgroup's ``memory.max`` and the
#: address-space rlimit).
MEMORY_SHARE = 0.5


def available_memory() -> tuple[int, str]:
    """The memory this process may use, in bytes, and where the figure comes
    from: the least of the machine's RAM, its cgroup's limit
    (``memory.max``, or v1's ``memory.limit_in_bytes``) and the soft
    ``RLIMIT_AS``."""
    found: list[tuple[int, str]] = []
    try:
        found.append((os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "RAM"))
    except (ValueError, OSError, AttributeError):
        pass
    for f in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(f) as fh:
                text = fh.read(64).strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:
            found.append((int(text), f"the cgroup's {f.rsplit('/', 1)[1]}"))
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and soft > 0:
            found.append((soft, "RLIMIT_AS"))
    except (ImportError, OSError, ValueError):
        pass
    return min(found) if found else (8 << 30, "an assumed 8 GiB")


def default_memory_limit() -> int:
    """``sweep``'s (and ``bisect``'s, ``calibrate``'s, the CLI's) default
    ``memory_limit``: ``MEMORY_SHARE`` of ``available_memory()``."""
    return int(available_memory()[0] * MEMORY_SHARE)


def peak_bytes(planned: Planned, nthreads: int) -> tuple[int, int]:
    """A sweep's estimated peak memory and its largest run's footprint: the
    base, the runs under way at once (the core's estimate of one run's
    peak), each finished row as the sweep holds it and builds its frame
    from it, and (a run list) each planned run."""
    threads = nthreads or os.cpu_count() or 1
    n = planned.n_runs
    if isinstance(planned, Plan):
        specs = [r.runnable for r in timing_sample(planned, set())]
    else:
        firsts: dict[int, dict[str, Any]] = {}
        for r in planned:
            if r.base_spec is not None and r.point not in firsts:
                firsts[r.point] = r.runnable
        specs = list(firsts.values())
    run = max((_footprint(s) for s in specs), default=0)
    held = 0 if isinstance(planned, Plan) else n * RUN_BYTES
    return BASE_BYTES + min(threads, max(1, n)) * run + n * ROW_BYTES + held, run


def check_memory(
    planned: Planned, nthreads: int, memory_limit: int | None, param: str = "memory_limit"
) -> None:
    """Refuse, before any run, a sweep whose estimated peak memory
    (``peak_bytes``) exceeds ``memory_limit`` bytes (None: the default,
    ``default_memory_limit()``), with a ConfigError naming the run count,
    the estimate and the limit (``param``: the argument's name, the CLI's
    flag)."""
    if memory_limit is None:
        limit = default_memory_limit()
        source = f"the default, {MEMORY_SHARE:g} of {available_memory()[1]}"
    else:
        limit = need_int(param, memory_limit, lo=1, hi=2**63 - 1)
        source = "given"
    peak, run = peak_bytes(planned, nthreads)
    if peak > limit:
        raise ConfigError(
            f"invalid {param}={limit} ({limit / 1e6:,.0f} MB, {source}): this sweep of "
            f"{planned.n_runs:,} runs needs an estimated {peak / 1e6:,.0f} MB at its peak "
            f"({ROW_BYTES:,} B per finished row, {run / 1e3:,.0f} KB per run under way); "
            f"run fewer points or replicates, or pass {param}=<bytes> to allow it"
        )


@dataclass
class Estimate:
    seconds: float
    peak_bytes: int
    basis: str

    def __str__(self) -> str:
        return (
            f"estimated {_duration(self.seconds)} and {self.peak_bytes / 1e6:,.0f} MB peak "
            f"({self.basis})"
        )


def _duration(s: float) -> str:
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def timing_sample(plan: Plan, finished: set[tuple[int, int]]) -> list[Run]:
    """Up to ``SAMPLES`` runnable runs spread evenly over the grid's points
    (replicate 0 of each), not among ``finished``: from each of ``SAMPLES``
    evenly spaced points, the first valid unfinished one within ``SEARCH``
    points (before the next start)."""
    n = plan.n_points
    want = sorted({(i * n) // SAMPLES for i in range(min(SAMPLES, n))})
    runs: list[Run] = []
    for j, start in enumerate(want):
        stop = min(want[j + 1] if j + 1 < len(want) else n, start + SEARCH)
        indices = list(range(start, stop))
        for p, point in zip(indices, _points_at(plan, indices), strict=True):
            run = plan.runs_of(p, point)[0]
            if run.base_spec is not None and (run.point, run.replicate) not in finished:
                runs.append(run)
                break
    return runs


def _points_at(plan: Plan, indices: list[int]) -> list[dict[str, Any]]:
    """The grid points at ``indices`` (itertools.product order)."""
    keys = list(plan.grid)
    out = []
    for i in indices:
        point: dict[str, Any] = {}
        for k in reversed(keys):
            vals = plan.grid[k]
            i, j = divmod(i, len(vals))
            point[k] = vals[j]
        out.append({k: point[k] for k in keys})
    return out


def run_timing_sample(plan: Plan, finished: set[tuple[int, int]]) -> list[dict[str, Any]]:
    """Run the ``timing_sample`` runs (in one batch on the sweep's threads)
    and return their rows — the sweep's own rows for those runs, which it
    then does not run again; their ``wall_s`` times the rest."""
    runs = timing_sample(plan, finished)
    if not runs:
        return []
    outcomes = _core.run_batch([r.runnable for r in runs], plan.nthreads)
    return [r.result_row(o) for r, o in zip(runs, outcomes, strict=True)]


def estimate(plan: Plan, walls: list[float], left: int) -> Estimate:
    """The sweep's wall time and peak memory: ``left`` runs still to do at
    the mean of ``walls`` (the ``wall_s`` of runs that ran:
    ``run_timing_sample``'s or a checkpoint's), spread over the threads;
    memory as ``peak_bytes`` says."""
    threads = plan.nthreads or os.cpu_count() or 1
    t = time.perf_counter()
    sample = sum(1 for _ in itertools.islice(plan, PLAN_SAMPLE))
    per_run = (time.perf_counter() - t) / max(1, sample) + RUN_OVERHEAD_S
    if walls:
        mean = sum(walls) / len(walls)
        # the threads share the runs, in rounds of `threads` runs
        seconds = mean * math.ceil(left / threads) + per_run * left
        basis = f"{len(walls)} timed run{'s' if len(walls) != 1 else ''}, {mean:.3g} s each"
    else:
        seconds = per_run * left
        basis = "no run could be timed"
    peak, _ = peak_bytes(plan, plan.nthreads)
    return Estimate(seconds, peak, basis)


def _footprint(spec: dict[str, Any]) -> int:
    """The core's estimate of one sweep run's peak bytes (no vmstat, no trace)."""
    machine = spec["machine"]
    tasks = _core.workload_tasks(spec["workload_kind"], spec["workload"], machine["nr_cpus"])
    return _core.footprint(
        tasks,
        machine["nr_cpus"],
        sampled=False,
        duration_ns=spec["duration_ns"],
        interval_ns=spec["interval_ns"],
        trace_limit=None,
    )["total"]
