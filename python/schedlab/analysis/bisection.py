"""``bisect``: which of the kernel changes between two profiles carry the
change in a metric.

Every ``Kernel`` field is one kernel behaviour, so the difference between a
good and a bad kernel is a list of switches. ``bisect`` flips each one alone
onto ``good`` and each one alone back off ``bad`` (the two differ when the
changes interact), in one parallel sweep, and reports the share of the
good→bad change each carries. It then names the culprits: the smallest set
of fields taken in order of their share (a greedy choice) that together
reproduce at least ``threshold`` of the change — checked by running ``good``
with that set flipped, not by adding shares up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from .._check import checked_call, need_bool, need_int, need_number, need_str, seconds_to_ns
from .._progress import ProgressArg
from ..config import CostModel, Kernel, Machine, costs_arg, kernel_arg, machine_arg
from ..exceptions import ConfigError, SimulationError
from ..groups import Group, groups_arg
from ..run.execute import SweepInterrupted, execute
from ..run.plan import plan_runs
from ..run.simulation import simulate
from ..workloads import Workload, workload_arg
from .stats import t975


def _mean_se(values: np.ndarray) -> tuple[float, float, int]:
    """Mean, standard error and count of the finite values."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return math.nan, math.nan, 0
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0
    return float(v.mean()), se, int(v.size)


def _metric_names(m: Machine, k: Kernel, w: Workload, costs: CostModel | None) -> list[str]:
    """The metrics this workload reports (from a 1 µs run), the scheduling
    delays' (``latency_*``, ``wakeup_latency_*``) among them."""
    r = simulate(m, k, w, costs=costs, duration_s=1e-6, seed=0, latency=True)
    return sorted(r.metrics)


def _is_latency(metric: str) -> bool:
    """A metric only a run with ``latency=True`` reports."""
    return metric.startswith(("latency_", "wakeup_latency_"))


@checked_call("bisect")
def bisect(
    machine: Machine | str,
    good: Kernel | str,
    bad: Kernel | str,
    workload: Workload,
    metric: str,
    *,
    replicates: int = 3,
    seed: int = 0,
    threads: int | None = None,
    progress: ProgressArg = True,
    costs: CostModel | None = None,
    duration_s: float | None = None,
    threshold: float = 0.8,
    memory_limit: int | None = None,
    groups: Sequence[Group] | None = None,
) -> pl.DataFrame:
    """Which of the fields that differ between ``good`` and ``bad`` account
    for the change in ``metric`` (a metric name of ``workload``'s results;
    a scheduling-delay metric such as ``latency_p99_us`` runs every point
    with ``latency=True``).

    Runs ``good``, ``bad``, each differing field flipped alone onto ``good``
    and each flipped alone back off ``bad``, ``replicates`` times each with
    the same seeds (common random numbers), as one parallel sweep; a kernel
    reached twice (with two differing fields, one flipped onto ``good`` is
    the other flipped off ``bad``) runs once. Returns a
    frame, a row per differing field, largest share first:

    - ``field``, ``good``, ``bad`` — the field and its two values (as text);
    - ``metric_good``, ``metric_bad`` — the metric's mean under each kernel
      (the endpoints: the same on every row);
    - ``metric_flipped_on_good`` — mean of ``good`` with this field set as in ``bad``;
    - ``metric_flipped_off_bad`` — mean of ``bad`` with this field set as in ``good``;
    - ``on_pct``, ``off_pct`` — the share of the good→bad change the flip
      carries on each side (they differ when changes interact);
    - ``change_pct`` — their mean, with a 95 % interval ``change_pct_lo`` /
      ``change_pct_hi`` (Student t over the replicates, each replicate's
      effect paired with its own good and bad runs; the change in the
      denominator is taken as exact, so the interval is too narrow when the
      change itself is barely beyond the noise);
    - ``runs_failed`` — runs of this field's flips that did not finish
      ``ok`` (e.g. a flip that makes the kernel invalid); a side whose runs
      all failed leaves ``on_pct`` or ``off_pct`` NaN and the share is the
      other side's;
    - ``culprit`` — in the set built greedily from the largest
      ``change_pct`` down until, flipped together onto ``good``, it
      reproduces at least ``threshold`` of the change (checked by a run of
      that set, not by adding shares); ``culprit_set_pct`` — what that run
      reproduced, on every row;
    - ``kind``, ``commit``, ``release`` — from ``Kernel.info()``.

    When the change is within the replicates' noise (its 95 % interval
    contains 0), or no set reaches ``threshold``, no field is a culprit and
    ``culprit_set_pct`` is null. When no run of ``good`` or ``bad`` finishes
    it raises ``SimulationError``. Ctrl-C raises ``SweepInterrupted``: with
    the finished runs during the main sweep, with the field table (no
    culprits) during the checks of the culprit set. Its runs are refused
    up front, as a sweep's, when their estimated peak memory exceeds
    ``memory_limit`` bytes (default: half the memory the process may use).
    """
    m = machine_arg(machine)
    g = kernel_arg(good, "good")
    b = kernel_arg(bad, "bad")
    w = workload_arg(workload)
    if groups is not None:
        w = w.with_groups(groups_arg(groups))
    costs = costs_arg(costs)
    need_str("metric", metric)
    reps = need_int("replicates", replicates, lo=2, hi=10_000)
    seed = need_int("seed", seed, lo=0, hi=2**64 - 1)
    nthreads = 0 if threads is None else need_int("threads", threads, lo=1, hi=4096)
    if not callable(progress):
        need_bool("progress", progress)
    thr = need_number("threshold", threshold)
    if not 0 < thr <= 1:
        raise ConfigError(f"invalid threshold={threshold!r}: expected a number in (0, 1]")
    duration_ns = None if duration_s is None else seconds_to_ns("duration_s", duration_s)
    fields = [f for f in Kernel.fields() if getattr(g, f) != getattr(b, f)]
    if not fields:
        raise ConfigError(
            f"invalid bad={b!r}: it equals good={g!r} in every field; nothing to bisect"
        )
    available = _metric_names(m, g, w, costs)
    if metric not in available:
        raise ConfigError(
            f"invalid metric={metric!r}: expected one of the workload's metrics: "
            + ", ".join(available)
        )

    def point(base: Kernel, flip: list[str]) -> dict[str, Any]:
        other = b if base is g else g
        return {f: getattr(other if f in flip else base, f) for f in fields}

    points = [point(g, []), point(b, [])]
    points += [point(g, [f]) for f in fields]
    points += [point(b, [f]) for f in fields]

    def run(pts: list[dict[str, Any]]) -> np.ndarray:
        """The metric per (point, replicate); NaN where a run was not ok.
        Every point uses the seeds of point 0 (common random numbers), so
        differences between points are paired by replicate, and a kernel
        that appears twice (``_distinct``) is run once: with one or two
        differing fields, flipping one onto ``good`` gives the kernel of
        flipping the other (or none) off ``bad``."""
        uniq, index = _distinct(pts)
        runs = plan_runs(
            m,
            g,
            costs,
            w,
            uniq,
            reps,
            seed,
            duration_s,
            duration_ns,
            100_000_000,
            latency=_is_latency(metric),
        )
        for r in runs:
            r.seed = runs[r.replicate].seed
        df = execute(runs, nthreads, progress, memory_limit=memory_limit)
        out = np.full((len(uniq), reps), np.nan)
        if metric in df.columns:
            ok = df.filter(pl.col("status") == "ok")
            for p, rep, v in ok.select("point", "replicate", metric).iter_rows():
                if v is not None:
                    out[p, rep] = v
        return out[index]

    vals = run(points)
    n = len(fields)
    vg, vb = vals[0], vals[1]
    for name, v in (("good", vg), ("bad", vb)):
        if not np.isfinite(v).any():
            raise SimulationError(
                f"bisect: no run of {name} finished ('ok') in {reps} replicates; give "
                "duration_s for an endless workload, or check the kernel and costs"
            )
    change, change_se, change_n = _mean_se(vb - vg)
    on, off = vals[2 : 2 + n], vals[2 + n :]
    scale = 100 / change if change and math.isfinite(change) else math.nan
    mean_good, mean_bad = _mean_se(vg)[0], _mean_se(vb)[0]
    rows: list[dict[str, Any]] = []
    for i, f in enumerate(fields):
        # Paired by replicate: the flip's share of that replicate's change,
        # from both sides where both finished, else from the side that did.
        d_on = on[i] - vg
        d_off = vb - off[i]
        with np.errstate(invalid="ignore"):
            d = np.where(
                np.isfinite(d_on) & np.isfinite(d_off),
                (d_on + d_off) / 2,
                np.where(np.isfinite(d_on), d_on, d_off),
            )
        d_mean, se, k = _mean_se(d)
        pct = _share(d_mean, scale)
        half = float(t975(k - 1)) * se * abs(scale) if k > 1 else math.nan
        failed = int((~np.isfinite(on[i])).sum() + (~np.isfinite(off[i])).sum())
        rows.append(
            {
                "field": f,
                "good": str(getattr(g, f)),
                "bad": str(getattr(b, f)),
                "metric_good": mean_good,
                "metric_bad": mean_bad,
                "metric_flipped_on_good": _mean_se(on[i])[0],
                "metric_flipped_off_bad": _mean_se(off[i])[0],
                "on_pct": _share(_mean_se(d_on)[0], scale),
                "off_pct": _share(_mean_se(d_off)[0], scale),
                "change_pct": pct,
                "change_pct_lo": pct - half,
                "change_pct_hi": pct + half,
                "runs_failed": failed,
            }
        )
    rows.sort(key=lambda r: -r["change_pct"] if math.isfinite(r["change_pct"]) else math.inf)

    # Is the change itself beyond the replicates' noise (paired)?
    significant = (
        change_n > 1
        and math.isfinite(scale)
        and abs(change) > float(t975(change_n - 1)) * change_se
    )
    culprits: list[str] = []
    set_pct: float | None = None

    def frame() -> pl.DataFrame:
        info = Kernel.info().select("field", "kind", "commit", "release")
        return (
            pl.DataFrame(rows)
            .with_columns(
                pl.col("field").is_in(culprits).alias("culprit"),
                pl.lit(set_pct, dtype=pl.Float64).alias("culprit_set_pct"),
            )
            .join(info, on="field", how="left", maintain_order="left")
        )

    if significant:
        try:
            for r in rows:
                if not math.isfinite(r["change_pct"]):
                    break  # a field whose flips all failed cannot be ranked
                culprits.append(r["field"])
                if len(culprits) == n:
                    set_pct = 100.0  # every field flipped is `bad` itself
                elif len(culprits) == 1 and r["runs_failed"] == 0:
                    set_pct = r["on_pct"]  # that run was made: good with this flip
                else:
                    (vs,) = run([point(g, culprits)])
                    set_pct = _share(_mean_se(vs - vg)[0], scale)
                if math.isfinite(set_pct) and set_pct >= 100 * thr:
                    break
            if set_pct is None or not math.isfinite(set_pct) or set_pct < 100 * thr:
                culprits, set_pct = [], None
        except SweepInterrupted:
            culprits, set_pct = [], None
            raise SweepInterrupted(frame()) from None
    return frame()


def _distinct(pts: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[int]]:
    """The distinct points of ``pts`` (first appearance first) and, for
    each of ``pts``, the index of its distinct point."""
    uniq: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    index: list[int] = []
    for p in pts:
        key = repr(sorted(p.items()))
        if key not in seen:
            seen[key] = len(uniq)
            uniq.append(p)
        index.append(seen[key])
    return uniq, index


def _share(x: float, scale: float) -> float:
    """``x`` as a percentage of the change (``scale`` = 100 / change); +0.0
    instead of -0.0."""
    return x * scale + 0.0


__all__ = ["bisect"]
