"""``calibrate``: fit a few ``CostModel`` scale factors to hackbench runs
measured on this host (``measure``), and check the fit on the
configurations it was not fitted on.

The model is run as parallel sweeps (the sweep machinery's batch runner,
with fixed per-configuration seeds, so every evaluation of the objective
sees the same random streams); the optimiser is scipy's
``least_squares`` with a robust (``soft_l1``) loss on log(model/real).

The result flags what a fit cannot be trusted on (``Calibration.warnings``,
``print(cal)``): report rows whose model/real ratio is far from the other
rows' of the same metric (``outlier``, rule at ``OUTLIER_FACTOR``) and
measured configurations whose repetitions disagree (``noisy``, ``rep_noise``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from .._check import checked_call, is_list, need_choice, need_int, show, type_name, warn_user
from ..config import CostModel, Kernel, Machine, kernel_arg, machine_arg
from ..exceptions import ConfigError, ConfigTypeError, MachineMismatchWarning
from ..groups import groups_arg
from ..run.estimate import check_memory
from ..run.execute import execute
from ..run.plan import Run, RunList, derive_seed, plan_runs
from ..workloads import Workload, hackbench
from .benches import BENCHES, HACKBENCH, Bench, bench_of
from .columns import Column, measured_frame

#: The scale factors ``fit`` may name, and the CostModel fields each scales.
FACTORS: dict[str, tuple[str, ...]] = {
    "socket": ("sock_write_ns", "sock_read_ns"),
    "pipe": ("pipe_write_ns", "pipe_read_ns"),
    "wakeup_idle": ("ipi_latency_ns",),
    "switch": ("context_switch_ns", "mm_switch_ns"),
    "process": ("fork_ns", "clone_ns", "exit_ns", "child_start_ns", "child_start_thread_ns"),
    "copy": ("copy_kib_ns",),
    "work": ("work_pct",),
    "io": ("io_pct",),
    "futex": ("futex_ns",),
}
#: The factors each is tried at before the least-squares refinement.
COARSE = (0.5, 0.7, 1.4, 2.0)
#: One for socket costs, one for pipe costs, one for waking an idle CPU.
DEFAULT_FIT = HACKBENCH.fit
#: Each factor stays within these (×0.1 to ×10 of the preset's value).
BOUNDS = (0.1, 10.0)
#: The metrics compared (``measure``'s columns, the model's metrics).
METRICS = HACKBENCH.metrics
#: The configuration columns of a measured frame.
CONFIG = HACKBENCH.config
#: A report row is an ``outlier`` when its log(model/real) is further from
#: the median log ratio of its metric (over every row with a positive, finite
#: ratio, fitted and held out) than both log(OUTLIER_FACTOR) — a factor of 3
#: either way — and OUTLIER_MADS robust standard deviations (1.4826 × the
#: median absolute deviation of those log ratios: Iglewicz and Hoaglin's
#: modified z-score above 3.5). Rows whose ratio is 0, infinite or undefined
#: (a count of 0) are not judged (null).
OUTLIER_FACTOR = 3.0
OUTLIER_MADS = 3.5
#: A measured configuration is ``noisy`` when its slowest repetition's
#: elapsed time is more than NOISY_SPREAD × its fastest's, or when every
#: repetition of it is slower than every repetition of a configuration with
#: more groups (same ipc, mode, loops and change), or faster than every one
#: with fewer: more groups is more work, so that order is the host's noise.
NOISY_SPREAD = 1.5
#: What ``calibrate`` does when the frame's host (its ``cpus`` column) is
#: not the modelled machine (its ``nr_cpus``): ``"warn"`` (the default, a
#: ``MachineMismatchWarning``), ``"error"`` (a ``ConfigError``) or ``"ignore"``.
MACHINE_MISMATCH = ("warn", "error", "ignore")


#: The columns ``calibrate`` reads of a ``measure("hackbench")`` frame and
#: what each must hold (``Column``); other columns are not read. The metrics'
#: nulls are refused by the value check (missing, negative or non-finite).
#: (``benches.AIM7.columns``: those of a ``measure("aim7")`` frame.)
FRAME_COLUMNS: dict[str, Column] = dict(HACKBENCH.columns)


def machine_mismatch_message(real: pl.DataFrame, machine: Machine) -> str | None:
    """Why ``real`` (a measured frame, ``measured_frame``-read) was not
    measured on ``machine``: its ``cpus`` (the host's CPU count, recorded on
    every row by ``measure``) differ from ``machine.nr_cpus``; ``None`` when
    they agree or the frame does not record them (no ``cpus`` column, nulls,
    0 for unknown)."""
    if "cpus" not in real.columns:
        return None
    seen = sorted({int(v) for v in real["cpus"].drop_nulls().to_list() if v})
    other = [v for v in seen if v != machine.nr_cpus]
    if not other:
        return None
    model = ""
    if "cpu_model" in real.columns:
        names = sorted({str(v) for v in real["cpu_model"].drop_nulls().to_list() if v})
        model = f" ({', '.join(names[:3])})" if names else ""
    hosts = " and ".join(str(v) for v in seen)
    fits = {v: [p for p in Machine.presets() if Machine.preset(p).nr_cpus == v] for v in other}
    hint = "; ".join(f"presets of {v} CPUs: {', '.join(ps)}" for v, ps in fits.items() if ps)
    return (
        f"real was measured on a host of {hosts} CPUs{model}, but machine "
        f"{machine.name!r} has {machine.nr_cpus}: the fitted costs would make the model "
        f"of another machine match this host's runs"
        + (f" ({hint})" if hint else "")
        + "; pass machine_mismatch='ignore' if that is meant, 'error' to refuse"
    )


@dataclass(frozen=True)
class Calibration:
    """What ``calibrate`` found.

    ``costs``: the fitted ``CostModel``; ``factors``: each fitted scale
    factor; ``report``: a row per configuration and metric (the config
    columns, ``metric``, ``real`` — median of the measured reps —,
    ``model`` — median of the seeds —, ``ratio`` = model/real, ``role``
    ``"fitted"`` or ``"held_out"``, ``outlier`` — the ratio is far from the
    metric's other rows', see ``OUTLIER_FACTOR`` —, ``noisy`` — the
    configuration is flagged in ``noise``); ``summary``: per metric, over
    the held-out rows (``n`` of them), the median and max relative error
    |model/real − 1| (``median_abs_rel_err``, ``max_abs_rel_err``) and how
    many are ``outliers``; ``noise``: ``rep_noise`` of the measured frame;
    ``warnings``: each outlier row and noisy configuration in words;
    ``workload``: the workload the configurations were points of;
    ``bench``: the measured benchmark (``"hackbench"``, ``"aim7"`` or
    ``"schbench"``), whose
    configuration columns the report has (``benches.BENCHES``).
    ``print(cal)`` shows the factors, the summary and the warnings."""

    costs: CostModel
    factors: dict[str, float]
    report: pl.DataFrame
    summary: pl.DataFrame
    machine: str
    kernel: str
    evaluations: int = 0
    fitted_metrics: tuple[str, ...] = field(default=("elapsed_s",))
    noise: pl.DataFrame = field(default_factory=pl.DataFrame)
    warnings: tuple[str, ...] = ()
    workload: Workload = field(default_factory=hackbench)
    bench: str = "hackbench"

    def __repr__(self) -> str:
        f = ", ".join(f"{k}={v:.3g}" for k, v in self.factors.items())
        w = f"; {len(self.warnings)} warnings, print() it" if self.warnings else ""
        return f"Calibration({self.machine}, {self.kernel}: {f}{w})"

    def __str__(self) -> str:
        return format_calibration(self)


def scaled(costs: CostModel, factors: Mapping[str, float]) -> CostModel:
    """``costs`` with each named factor's fields multiplied (rounded to ns,
    at least 1 ns where the field was non-zero)."""
    base = costs.to_dict()
    changes: dict[str, int] = {}
    for name, f in factors.items():
        for fld in FACTORS[name]:
            v = int(base[fld])
            changes[fld] = max(1, round(v * f)) if v else 0
    return costs.replace(**changes)


def _need_fit(fit: Any, bench: Bench = HACKBENCH) -> tuple[str, ...]:
    if fit is None:
        return bench.fit
    names = [fit] if isinstance(fit, str) else fit
    if not is_list(names):
        raise ConfigTypeError(
            f"invalid type for fit: got {type_name(fit)} {show(fit)}, expected a factor name "
            f"or a list of them from {', '.join(bench.factors)}"
        )
    names = list(names)
    if not names:
        raise ConfigError(
            f"invalid fit={show(fit)}: expected one or more factor names from "
            f"{', '.join(bench.factors)}"
        )
    for n in names:
        if not isinstance(n, str):
            raise ConfigTypeError(
                f"invalid type for fit entry: got {type_name(n)} {show(n)}, expected a factor "
                f"name (str) from {', '.join(bench.factors)}"
            )
        if n not in FACTORS:
            raise ConfigError(
                f"invalid fit={show(n)}: expected names from {', '.join(bench.factors)}"
            )
    if len(set(names)) != len(names):
        raise ConfigError(f"invalid fit={show(list(names))}: a factor named twice")
    for n in names:
        if n not in bench.factors:
            raise ConfigError(
                f"invalid fit={show(n)}: no field it scales ({', '.join(FACTORS[n])}) is "
                f"charged by {bench.name}'s model; expected names from {', '.join(bench.factors)}"
            )
    return tuple(names)


def _configs(real: pl.DataFrame, bench: Bench = HACKBENCH) -> pl.DataFrame:
    """The measured frame's configurations, each with the median of its
    reps per metric (sorted, so the order is the frame's content's)."""
    df = real
    name = bench.name
    if "bench" in df.columns:
        other = sorted(set(df["bench"].to_list()) - {name})
        if other:
            raise ConfigError(
                f"invalid real: rows of bench {other}; expected only {name!r} rows "
                f"(measure({name!r}, ...))"
            )
    if "pinned" in df.columns and df["pinned"].any():
        raise ConfigError("invalid real: pinned rows; expected unpinned hackbench runs")
    if "change" in df.columns:
        other = sorted(set(df["change"].drop_nulls().to_list()) - {"plain"})
        if other:
            raise ConfigError(
                f"invalid real: rows of changes {other}; calibrate fits plain runs only "
                "(filter pl.col('change') == 'plain', or use validate() to predict the changes)"
            )
    if df.height == 0:
        raise ConfigError(f"invalid real: no rows; expected measured {name} runs")
    if bench.name == "schbench" and bool((df["pipe_bytes"] > 0).any()):
        raise ConfigError(
            "invalid real: rows of schbench's pipe mode (pipe_bytes > 0); calibrate fits its "
            "request mode (schbench reports no requests or RPS with -p)"
        )
    if bench is HACKBENCH:
        for c, allowed in (("ipc", ("pipe", "socket")), ("mode", ("process", "thread"))):
            bad = sorted(set(df[c].to_list()) - set(allowed))
            if bad:
                raise ConfigError(f"invalid real: {c} {bad}; expected values from {list(allowed)}")
    for c in bench.metrics:
        col = df[c]
        if col.null_count() or not bool((col >= 0).all()) or not bool(col.is_finite().all()):
            raise ConfigError(
                f"invalid real: column {c!r} has missing, negative or non-finite values; "
                f"expected {'perf' if bench is HACKBENCH else name}'s counts and times"
            )
    return (
        df.group_by(list(bench.config))
        .agg([pl.col(m).cast(pl.Float64).median().alias(m) for m in bench.metrics])
        .sort(list(bench.config))
    )


def _need_train(train: Any, cfg: pl.DataFrame, bench: Bench = HACKBENCH) -> list[bool]:
    if train is None:
        return bench.default_train(cfg)
    if isinstance(train, pl.Expr):
        try:
            mask = cfg.select(train.alias("_t"))["_t"]
        except pl.exceptions.PolarsError as e:
            raise ConfigError(f"invalid train expression: {e}") from None
        if mask.dtype != pl.Boolean or mask.len() != cfg.height:
            raise ConfigError("invalid train: the expression must give one bool per configuration")
        out = [bool(x) for x in mask.fill_null(False).to_list()]
    elif is_list(train) and all(isinstance(t, Mapping) for t in train):
        rows = cfg.select(list(bench.config)).to_dicts()
        out = [False] * len(rows)
        for t in train:
            bad = [k for k in t if k not in bench.config]
            if bad:
                raise ConfigError(
                    f"invalid train entry {show(dict(t))}: keys {bad}; expected keys from "
                    f"{', '.join(bench.config)}"
                )
            for k, v in t.items():
                text = k in bench.text
                if text:
                    ok, want = isinstance(v, str), "a str"
                elif k in bench.bools:
                    ok, want = isinstance(v, bool | np.bool_), "a bool"
                else:
                    ok = isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_)
                    want = "an int"
                if not ok:
                    raise ConfigTypeError(
                        f"invalid type for train entry {k}: got {type_name(v)} {show(v)}, "
                        f"expected {want}"
                    )
            hit = [i for i, r in enumerate(rows) if all(r[k] == v for k, v in t.items())]
            if not hit:
                raise ConfigError(
                    f"invalid train entry {show(dict(t))}: matches no measured configuration"
                )
            for i in hit:
                out[i] = True
    else:
        raise ConfigTypeError(
            f"invalid type for train: got {type_name(train)}, expected None, a list of dicts "
            f"(keys from {', '.join(bench.config)}) or a polars expression"
        )
    if not any(out):
        raise ConfigError("invalid train: selects no configuration")
    return out


def _model_plan(
    configs: Sequence[Mapping[str, Any]],
    machine: Machine | str,
    kernel: Kernel | str,
    costs: CostModel,
    seeds: int,
    seed: int,
    ids: Sequence[int] | None,
    tasks: Mapping[str, Any] | None,
    groups: Sequence[Any] | None = None,
    workload: Workload | None = None,
    bench: Bench = HACKBENCH,
) -> list[Run]:
    """``model_runs``' runs, planned and seeded, not run."""
    m, k = machine_arg(machine), kernel_arg(kernel)
    ids = list(range(len(configs))) if ids is None else list(ids)
    w = bench.base(workload)
    if tasks:
        w = w.with_tasks(**tasks)
    if groups:
        w = w.with_groups(groups_arg(groups))
    points = [{f"workload.{bench.params[c]}": cfg[c] for c in bench.config} for cfg in configs]
    runs = plan_runs(m, k, costs, w, points, seeds, seed, None, None, 100_000_000)
    for r in runs:
        r.seed = derive_seed(seed, ids[r.point], r.replicate)
    return runs


def base_workload(workload: Any) -> Workload:
    """The hackbench workload whose points the model runs are (their
    ``ipc``, ``mode``, ``groups`` and ``loops`` come from the measured
    configurations; everything else — ``fds``, ``datasize``, ``sndbuf``,
    ``parent_wakee_flips`` — from it, and so do its ``with_tasks()``
    settings, which then apply to every run, ``validate``'s changes
    included): ``hackbench()`` for None, else a ``Workload`` of kind
    hackbench, refused otherwise by name."""
    return HACKBENCH.base(workload)


def model_runs(
    configs: Sequence[Mapping[str, Any]],
    machine: Machine | str,
    kernel: Kernel | str,
    costs: CostModel,
    *,
    seeds: int = 3,
    seed: int = 0,
    threads: int | None = None,
    ids: Sequence[int] | None = None,
    tasks: Mapping[str, Any] | None = None,
    metrics: Sequence[str] | None = None,
    memory_limit: int | None = None,
    groups: Sequence[Any] | None = None,
    workload: Workload | None = None,
    bench: Bench = HACKBENCH,
) -> pl.DataFrame:
    """The model's hackbench runs of ``configs`` (dicts of ``ipc``, ``mode``,
    ``groups``, ``loops``) × ``seeds``, one batch on the sweep runner, each
    a point of ``workload`` (``base_workload()``'s: default ``hackbench()``);
    with ``bench=benches.AIM7``, AIM7's (dicts of ``children`` and ``jobs``,
    points of ``aim7()``, ``metrics`` then from ``AIM7.metrics``). Run
    (i, r)'s seed is ``derive_seed(seed, ids[i], r)``: the same config gets
    the same streams whatever else is in the batch. ``tasks``: arguments of
    ``Workload.with_tasks`` for every run. Columns: the config, ``rep`` and
    ``metrics`` (the model's metric names); a run that did not finish
    raises. ``memory_limit``: as ``sweep``'s (the batch is refused before
    it runs if its estimated peak is above it). ``groups``: the runs'
    task groups (``simulate``'s ``groups``)."""
    runs = _model_plan(
        configs, machine, kernel, costs, seeds, seed, ids, tasks, groups, workload, bench
    )
    df = execute(runs, 0 if threads is None else threads, False, memory_limit=memory_limit)
    bad = df.filter(pl.col("status") != "ok")
    if bad.height:
        r0 = bad.row(0, named=True)
        raise ConfigError(
            f"the model did not finish a run ({r0['status']}: {r0['status_detail']}) "
            f"for {show(dict(configs[r0['point']]))}"
        )
    return df.select(
        [pl.col(f"workload.{bench.params[c]}").alias(c) for c in bench.config]
        + [pl.col("replicate").alias("rep")]
        + [pl.col(x).cast(pl.Float64) for x in (bench.metrics if metrics is None else metrics)]
    )


def _medians(df: pl.DataFrame, bench: Bench = HACKBENCH) -> pl.DataFrame:
    keys = list(bench.config)
    return df.group_by(keys).agg([pl.col(m).median() for m in bench.metrics]).sort(keys)


@checked_call("calibrate")
def calibrate(
    real: pl.DataFrame,
    machine: Machine | str,
    kernel: Kernel | str,
    *,
    fit: Sequence[str] | str | None = None,
    seeds: int = 3,
    threads: int | None = None,
    progress: bool = True,
    train: Sequence[Mapping[str, Any]] | pl.Expr | None = None,
    costs: CostModel | None = None,
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    max_evaluations: int = 40,
    machine_mismatch: str = "warn",
    memory_limit: int | None = None,
    workload: Workload | None = None,
) -> Calibration:
    """Fit the ``fit`` scale factors (names from ``FACTORS``; default
    ``DEFAULT_FIT``: socket costs, pipe costs, waking an idle CPU) of
    ``machine``'s ``CostModel`` (or ``costs``) so that the model under
    ``kernel`` reproduces ``real`` (a frame of ``measure("hackbench")``) on
    the ``train`` configurations; report every configuration.

    ``train``: which configurations to fit on — ``None`` (every ipc × mode
    at the middle group count), a list of dicts (``{"ipc": "socket",
    "groups": 5}`` selects every configuration matching), or a polars
    expression over the config columns. The objective is log(model/real)
    of ``metrics`` (medians over reps and over ``seeds`` model runs) under
    scipy's ``least_squares`` with ``loss="soft_l1"``, each factor bounded
    to ``BOUNDS``; at most ``max_evaluations`` model evaluations, each one
    parallel sweep of the training configurations × ``seeds`` on
    ``threads`` threads (default: every core).

    ``real`` is checked before any model run (``FRAME_COLUMNS``): the
    config columns ``ipc`` and ``mode`` as text (String; Categorical and
    Enum are read as String), ``groups`` and ``loops`` as integers of any
    width, the metrics as numbers (not Boolean), the optional ``bench``,
    ``change`` (text), ``pinned`` (Boolean) and ``cpus`` (integer) too; a
    wrong dtype is a ``ConfigTypeError`` naming the column, a null where
    none may be or a value out of range a ``ConfigError``.
    ``machine_mismatch``: when the frame's ``cpus`` (the host ``measure``
    ran on) differ from ``machine``'s CPU count — ``"warn"`` (default: a
    ``schedlab.exceptions.MachineMismatchWarning``, and the fit goes on),
    ``"error"`` (a ``ConfigError``, nothing run) or ``"ignore"``. A frame
    without ``cpus`` (or with nulls or 0 there) is not checked.
    ``memory_limit``: bytes, as ``sweep``'s (default: half the memory the
    process may use); the largest batch (every configuration × ``seeds``)
    is checked against it before any model run.
    ``workload``: the hackbench workload whose points the model runs are
    (each configuration sets its ``ipc``, ``mode``, ``groups`` and
    ``loops``; default ``hackbench()``): e.g. ``hackbench(
    parent_wakee_flips=3)`` for the start's wake-up history as recorded
    here (docs/guide/schedule.md). Kept as ``Calibration.workload``.
    ``metrics`` defaults to ``("elapsed_s",)``.

    **AIM7.** A frame of ``measure("aim7", ...)`` (its ``bench`` column
    ``"aim7"`` on every row; ``benches.AIM7.columns``) is fitted the same
    way with AIM7's own configurations and metrics: the config columns are
    ``children`` and ``jobs`` (each a point of ``workload``, default
    ``aim7(tasks=1)``, as ``tasks`` and ``jobs``), the metrics
    ``jobs_per_min``, ``real_s`` and ``cpu_s`` (reaim's figures and the
    model's metrics of the same names; ``metrics`` defaults to
    ``("real_s", "cpu_s")``), ``fit`` defaults to ``("work", "io")`` — the
    cost model's ``work_pct``, the speed at which this day's CPU runs the
    tests' own code, and ``io_pct``, their disk waits — and ``train`` to
    the fewest children measured: what one child does alone fixes both, and
    how several share the CPUs is predicted. ``fit`` names only factors
    whose fields AIM7's model charges (``benches.AIM7.factors``).

    **schbench.** A frame of ``measure("schbench", ...)`` (``bench``
    ``"schbench"``; ``benches.SCHBENCH.columns``): the config columns are
    ``message_threads``, ``workers``, ``runtime_s`` and the options (each a
    parameter of ``schbench()``), the metrics ``rps``, ``wakeup_p50_us``,
    ``wakeup_p99_us``, ``request_p50_us``, ``request_p99_us``; ``metrics``
    defaults to ``("request_p50_us", "wakeup_p50_us")``, ``fit`` to
    ``("work", "wakeup_idle")``, ``train`` to the fewest workers in all.
    Pipe-mode rows (``pipe_bytes`` > 0) are refused: schbench reports no
    requests there.
    """
    from scipy.optimize import least_squares

    bench = bench_of(real)
    real = measured_frame(real, bench.columns, f"measure({bench.name!r}, ...)'s frame")
    m, k = machine_arg(machine), kernel_arg(kernel)
    wl = bench.base(workload)
    on_mismatch = need_choice("machine_mismatch", machine_mismatch, list(MACHINE_MISMATCH))
    names = _need_fit(fit, bench)
    nseeds = need_int("seeds", seeds, lo=1, hi=1000)
    nthreads = None if threads is None else need_int("threads", threads, lo=1, hi=4096)
    nev = need_int("max_evaluations", max_evaluations, lo=1, hi=10_000)
    if memory_limit is not None:
        memory_limit = need_int("memory_limit", memory_limit, lo=1, hi=2**63 - 1)
    seed = need_int("seed", seed, lo=0, hi=2**64 - 1)
    if not isinstance(progress, bool):
        raise ConfigTypeError(
            f"invalid type for progress: got {type_name(progress)}, expected bool"
        )
    known = bench.metrics
    if metrics is None:
        metrics = bench.fitted
    if not isinstance(metrics, str) and not is_list(metrics):
        raise ConfigTypeError(
            f"invalid type for metrics: got {type_name(metrics)} {show(metrics)}, expected a "
            f"list of names from {', '.join(known)}"
        )
    mets = [metrics] if isinstance(metrics, str) else list(metrics)
    for met in mets:
        if not isinstance(met, str):
            raise ConfigTypeError(
                f"invalid type for metrics entry: got {type_name(met)} {show(met)}, expected a "
                f"name (str) from {', '.join(known)}"
            )
    if not mets or any(x not in known for x in mets):
        raise ConfigError(
            f"invalid metrics={show(metrics)}: expected names from {', '.join(known)}"
            + (f" ({bench.name}'s)" if bench is not HACKBENCH else "")
        )
    if len(set(mets)) != len(mets):
        raise ConfigError(f"invalid metrics={show(mets)}: a metric named twice")
    if costs is not None and not isinstance(costs, CostModel):
        raise ConfigTypeError(
            f"invalid type for costs: got {type_name(costs)}, expected a schedlab.CostModel or None"
        )
    base = costs if costs is not None else CostModel.preset(m)
    for n in names:
        if all(base.to_dict()[f] == 0 for f in FACTORS[n]):
            raise ConfigError(
                f"invalid fit={show(n)}: every field it scales ({', '.join(FACTORS[n])}) is 0 in "
                "the base cost model, so it cannot change anything"
            )
    cfg = _configs(real, bench)
    mismatch = None if on_mismatch == "ignore" else machine_mismatch_message(real, m)
    if mismatch is not None and on_mismatch == "error":
        raise ConfigError(f"invalid machine={m.name!r}: {mismatch}")
    if mismatch is not None:
        warn_user(mismatch, MachineMismatchWarning)
    for met in mets:
        if not bool((cfg[met] > 0).all()):
            raise ConfigError(
                f"invalid real: a median of {met!r} is 0; a fitted metric (metrics="
                f"{show(mets)}) must be positive in every configuration"
            )
    mask = _need_train(train, cfg, bench)
    rows = cfg.select(list(bench.config)).to_dicts()
    train_idx = [i for i, t in enumerate(mask) if t]
    train_cfg = [rows[i] for i in train_idx]
    target = np.log(cfg[train_idx].select(mets).to_numpy())
    # the largest batch (every configuration, at the end) against the limit,
    # before any model run
    check_memory(
        RunList(_model_plan(rows, m, k, base, nseeds, seed, None, None, None, wl, bench)),
        nthreads or 0,
        memory_limit,
    )

    bar: Any = None
    if progress:
        from .._progress import progress_bar

        bar = progress_bar(total=nev + 1, desc="schedlab calibrate", unit="eval")
    cache: dict[tuple[float, ...], np.ndarray] = {}

    # x holds the factors themselves (not their logs): least_squares' relative
    # finite-difference step (diff_step) is then a 5 % change of each
    def costs_at(x: np.ndarray) -> CostModel:
        return scaled(base, dict(zip(names, x.tolist(), strict=True)))

    def residuals(x: np.ndarray) -> np.ndarray:
        key = tuple(round(float(v), 9) for v in x)
        if key in cache:
            return cache[key]
        df = model_runs(
            train_cfg,
            m,
            k,
            costs_at(x),
            seeds=nseeds,
            seed=seed,
            threads=nthreads,
            ids=train_idx,
            memory_limit=memory_limit,
            workload=wl,
            bench=bench,
        )
        med = _medians(df, bench)
        got = np.log(np.maximum(med.select(mets).to_numpy(), 1e-12))
        r: np.ndarray = np.asarray(got - target, dtype=float).ravel()
        cache[key] = r
        if bar is not None and bar.n < nev:
            bar.update(1)
        return r

    lo, hi = BOUNDS

    def cost_of(x: np.ndarray) -> float:
        return float(np.sum(np.abs(residuals(x))))

    try:
        # A coarse coordinate search first: small hackbench runs respond to a
        # cost unevenly (placement flips), so a gradient step from 1.0 can
        # stall; each factor is scanned over COARSE with the others held.
        x0 = np.ones(len(names))
        if nev >= len(COARSE) * len(names) + 2:
            for i in range(len(names)):
                best_c = cost_of(x0)
                for f in COARSE:
                    x = x0.copy()
                    x[i] = min(max(f, lo), hi)
                    c = cost_of(x)
                    if c < best_c:
                        best_c, x0 = c, x
        sol = least_squares(
            residuals,
            x0,
            bounds=(np.full(len(names), lo), np.full(len(names), hi)),
            loss="soft_l1",
            f_scale=0.1,
            diff_step=0.05,
            max_nfev=max(1, nev - len(cache)),
            x_scale=1.0,
        )
        x = sol.x
        # the best point evaluated (a bounded, noisy objective may end elsewhere)
        best = min(cache.items(), key=lambda kv: float(np.sum(np.abs(kv[1]))))
        if np.sum(np.abs(best[1])) < cost_of(x):
            x = np.array(best[0])
        factors = {n: float(v) for n, v in zip(names, x, strict=True)}
        fitted = costs_at(x)
        full = model_runs(
            rows,
            m,
            k,
            fitted,
            seeds=nseeds,
            seed=seed,
            threads=nthreads,
            memory_limit=memory_limit,
            workload=wl,
            bench=bench,
        )
        if bar is not None:
            bar.n = nev
            bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    model = _medians(full, bench)
    noise = rep_noise(real)
    report = _report(cfg, model, mask, noise, bench)
    return Calibration(
        costs=fitted,
        factors=factors,
        report=report,
        summary=summary(report),
        machine=m.name,
        kernel=k.name,
        evaluations=len(cache),
        fitted_metrics=tuple(mets),
        noise=noise,
        warnings=(f"machine: {mismatch}",) * (mismatch is not None)
        + calibration_warnings(report, noise),
        workload=wl,
        bench=bench.name,
    )


def _report(
    cfg: pl.DataFrame,
    model: pl.DataFrame,
    mask: list[bool],
    noise: pl.DataFrame,
    bench: Bench = HACKBENCH,
) -> pl.DataFrame:
    keys = bench.config
    roles = cfg.select(list(keys)).with_columns(
        pl.Series("role", ["fitted" if t else "held_out" for t in mask])
    )
    noisy = noise.group_by(list(keys)).agg(pl.col("noisy").any())
    long_real = cfg.unpivot(
        index=list(keys), on=list(bench.metrics), variable_name="metric"
    ).rename({"value": "real"})
    long_model = model.unpivot(
        index=list(keys), on=list(bench.metrics), variable_name="metric"
    ).rename({"value": "model"})
    return (
        long_real.join(long_model, on=[*keys, "metric"], how="left")
        .join(roles, on=list(keys), how="left")
        .with_columns((pl.col("model") / pl.col("real")).alias("ratio"))
        .with_columns(outlier_flag())
        .join(noisy, on=list(keys), how="left")
        .with_columns(pl.col("noisy").fill_null(False))
        .select([*keys, "metric", "real", "model", "ratio", "role", "outlier", "noisy"])
        .sort(["metric", *keys])
    )


def summary(report: pl.DataFrame, role: str = "held_out") -> pl.DataFrame:
    """Per metric, over ``report``'s rows of ``role``: ``n``, the median and
    the max of the relative error |ratio − 1| = |model/real − 1|
    (``median_abs_rel_err``, ``max_abs_rel_err``: 0.25 is 25 %, not an
    absolute error in the metric's unit) and ``outliers``, how many of those
    rows are flagged (``outlier_flag``)."""
    if "outlier" not in report.columns:
        report = report.with_columns(outlier_flag())
    err = (pl.col("ratio") - 1).abs()
    return (
        report.filter(pl.col("role") == role)
        .group_by("metric", maintain_order=True)
        .agg(
            pl.len().alias("n"),
            err.median().alias("median_abs_rel_err"),
            err.max().alias("max_abs_rel_err"),
            pl.col("outlier").fill_null(False).sum().cast(pl.UInt32).alias("outliers"),
        )
        .sort("metric")
    )


def outlier_flag() -> pl.Expr:
    """The ``outlier`` column of a report (a frame of ``metric`` and
    ``ratio``): True where log(ratio) is further from its metric's median
    log ratio than both log(``OUTLIER_FACTOR``) and ``OUTLIER_MADS`` × 1.4826
    × the median absolute deviation; null where the ratio is not positive
    and finite."""
    r = pl.col("ratio").cast(pl.Float64)
    lr = pl.when(r.is_finite() & (r > 0)).then(r.log()).otherwise(None)
    dev = (lr - lr.median().over("metric")).abs()
    mad = dev.median().over("metric")
    limit = pl.max_horizontal(pl.lit(math.log(OUTLIER_FACTOR)), OUTLIER_MADS * 1.4826 * mad)
    return (dev > limit).alias("outlier")


@checked_call("rep_noise")
def rep_noise(real: pl.DataFrame) -> pl.DataFrame:
    """The spread of ``real``'s repetitions (a ``measure("hackbench")``
    frame, with or without ``change``), one row per configuration (per
    change, when the frame has a ``change`` column): ``reps``,
    ``elapsed_min``, ``elapsed_max``, ``spread`` (max/min of elapsed_s;
    null when the fastest is not positive), ``noisy`` and ``why`` (empty
    when not noisy). Noisy: ``spread`` above ``NOISY_SPREAD``, or elapsed
    time that falls with more groups beyond the reps' spread (every rep of
    the fewer groups slower than every rep of the more), which flags both
    configurations of the pair. A ``measure("aim7")`` frame is read the
    same way with reaim's ``real_s`` as the elapsed time and ``children``
    for the groups."""
    bench = bench_of(real)
    size = bench.size
    cols = {c: bench.columns[c] for c in (*bench.config, bench.time) if c in bench.columns}
    if bench is HACKBENCH:
        cols["change"] = bench.columns["change"]
    real = measured_frame(real, cols, f"measure({bench.name!r}, ...)'s frame")
    keys = ["change", *bench.config] if "change" in real.columns else list(bench.config)
    df = real
    if "change" in df.columns:
        df = df.with_columns(pl.col("change").cast(pl.String).fill_null("plain"))
    el = pl.col(bench.time).cast(pl.Float64).fill_nan(None)
    cfg = (
        df.group_by(keys)
        .agg(
            el.count().cast(pl.UInt32).alias("reps"),
            el.min().alias("elapsed_min"),
            el.max().alias("elapsed_max"),
        )
        .sort(keys)
    )
    rows = cfg.to_dicts()
    why: list[list[str]] = [[] for _ in rows]
    for i, r in enumerate(rows):
        lo, hi = r["elapsed_min"], r["elapsed_max"]
        r["spread"] = hi / lo if lo is not None and hi is not None and lo > 0 else None
        if r["spread"] is not None and r["spread"] > NOISY_SPREAD:
            why[i].append(
                f"slowest of {r['reps']} reps {r['spread']:.2f}× the fastest "
                f"(threshold ×{NOISY_SPREAD:g})"
            )
    fam = [k for k in keys if k != size]
    for i, a in enumerate(rows):
        for j, b in enumerate(rows):
            same = all(a[k] == b[k] for k in fam)
            if not same or a[size] >= b[size] or a["elapsed_min"] is None:
                continue
            if b["elapsed_max"] is not None and a["elapsed_min"] > b["elapsed_max"]:
                unit = "µs" if bench.time.endswith("_us") else "s"
                span = (
                    f"{a['elapsed_min']:.3g}–{a['elapsed_max']:.3g} {unit} against "
                    f"{b['elapsed_min']:.3g}–{b['elapsed_max']:.3g} {unit}"
                )
                why[i].append(f"every rep slower than {size}={b[size]}'s ({span})")
                why[j].append(f"every rep faster than {size}={a[size]}'s ({span})")
    return pl.DataFrame(
        {
            **{k: [r[k] for r in rows] for k in keys},
            "reps": [r["reps"] for r in rows],
            "elapsed_min": [r["elapsed_min"] for r in rows],
            "elapsed_max": [r["elapsed_max"] for r in rows],
            "spread": [r["spread"] for r in rows],
            "noisy": [bool(w) for w in why],
            "why": ["; ".join(w) for w in why],
        },
        schema={
            **{k: cfg.schema[k] for k in keys},
            "reps": pl.UInt32,
            "elapsed_min": pl.Float64,
            "elapsed_max": pl.Float64,
            "spread": pl.Float64,
            "noisy": pl.Boolean,
            "why": pl.String,
        },
    )


def calibration_warnings(report: pl.DataFrame, noise: pl.DataFrame) -> tuple[str, ...]:
    """Each ``outlier`` row of ``report`` and each ``noisy`` configuration of
    ``noise`` (``rep_noise``), in words."""
    if "outlier" not in report.columns:
        report = report.with_columns(outlier_flag())
    out: list[str] = []
    med = (
        report.filter(pl.col("ratio").is_finite() & (pl.col("ratio") > 0))
        .group_by("metric")
        .agg(pl.col("ratio").log().median().exp().alias("m"))
    )
    medians = dict(zip(med["metric"].to_list(), med["m"].to_list(), strict=True))
    bench = next((b for b in BENCHES.values() if set(b.config) <= set(report.columns)), HACKBENCH)
    size = bench.size
    for r in report.filter(pl.col("outlier").fill_null(False)).iter_rows(named=True):
        where = bench.where(r)
        out.append(
            f"outlier: {where}, {size}={r[size]} ({r['role']}), {r['metric']}: "
            f"model/real ×{r['ratio']:.3g} where the metric's median is "
            f"×{medians[r['metric']]:.3g} (beyond ×{OUTLIER_FACTOR:g} and "
            f"{OUTLIER_MADS:g} robust SDs of it)"
        )
    for r in noise.filter(pl.col("noisy")).iter_rows(named=True):
        where = bench.where(r, r.get("change"))
        out.append(f"noisy: {where}, {size}={r[size]}: {r['why']}")
    return tuple(out)


def format_calibration(cal: Calibration) -> str:
    """``cal`` as text: the factors, the held-out relative errors per metric
    and the warnings (what ``print(cal)`` shows)."""
    lines = [repr(cal)]
    keys = list(BENCHES[cal.bench].config)
    fitted = cal.report.filter(pl.col("role") == "fitted").select(keys).unique().height
    lines.append(
        f"fitted on {', '.join(cal.fitted_metrics)} at {fitted} configurations "
        f"({cal.evaluations} model evaluations)"
    )
    lines.append("held out: |model/real - 1| per metric (relative error; ×N: model N × real)")
    lines.append(f"  {'metric':<18} {'n':>4} {'median':>9} {'max':>9} {'outliers':>9}")
    for r in cal.summary.iter_rows(named=True):
        med, mx = r["median_abs_rel_err"], r["max_abs_rel_err"]
        lines.append(
            f"  {r['metric']:<18} {r['n']:>4} {_pct(med):>9} {_pct(mx):>9} {r['outliers']:>9}"
        )
    if cal.warnings:
        lines.append(f"{len(cal.warnings)} warnings:")
        lines += [f"  {w}" for w in cal.warnings]
    else:
        lines.append("no warnings: no outlier rows, no noisy configurations")
    return "\n".join(lines) + "\n"


def _pct(x: float | None) -> str:
    """A relative error as a percentage; from 1 (100 %) on, as the ratio it
    must be (model/real = 1 + x, since model/real >= 0)."""
    if x is None or not math.isfinite(x):
        return "-"
    return f"{100 * x:.1f} %" if x < 1 else f"×{1 + x:.3g}"
