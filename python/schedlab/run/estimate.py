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
from .plan import Plan, Run

#: Bytes a finished row takes while the sweep holds it (a dict of every
#: configuration column and metric, ~140 entries) and as the frame is built
#: from them: the peak RSS above a tiny sweep's was 21 KB a row for 2,000-
#: and 10,000-run sweeps, 30–38 KB for 34,000–45,000 rows of a 10⁷-run one.
ROW_BYTES = 28_000
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


def estimate(plan: Plan, timed: list[dict[str, Any]], left: int) -> Estimate:
    """The sweep's wall time and peak memory: ``left`` runs still to do at
    the mean wall time of the ``timed`` rows (``run_timing_sample``'s or
    a checkpoint's), spread over the threads; memory as the module says."""
    threads = plan.nthreads or os.cpu_count() or 1
    t = time.perf_counter()
    sample = sum(1 for _ in itertools.islice(plan, PLAN_SAMPLE))
    per_run = (time.perf_counter() - t) / max(1, sample) + RUN_OVERHEAD_S
    walls = [float(r["wall_s"]) for r in timed if r.get("status") != "error"]
    if walls:
        mean = sum(walls) / len(walls)
        # the threads share the runs, in rounds of `threads` runs
        seconds = mean * math.ceil(left / threads) + per_run * left
        basis = f"{len(walls)} timed run{'s' if len(walls) != 1 else ''}, {mean:.3g} s each"
    else:
        seconds = per_run * left
        basis = "no run could be timed"
    run = max((_footprint(r.runnable) for r in timing_sample(plan, set())), default=0)
    peak = BASE_BYTES + min(threads, max(1, left)) * run + plan.n_runs * ROW_BYTES
    return Estimate(seconds, peak, basis)


def _footprint(spec: dict[str, Any]) -> int:
    """The core's estimate of one sweep run's peak bytes (no vmstat, no trace)."""
    tasks = _core.workload_tasks(spec["workload_kind"], spec["workload"])
    machine = spec["machine"]
    return _core.footprint(
        tasks,
        machine["nr_cpus"],
        sampled=False,
        duration_ns=spec["duration_ns"],
        interval_ns=spec["interval_ns"],
        trace_limit=None,
    )["total"]
