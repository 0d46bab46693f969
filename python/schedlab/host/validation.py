"""``validate``: the model's prediction of what each change does, checked
against this host. Calibrate on the plain runs (``calibrate``), predict the
changed ones (``measure``'s ``changes``: policy, nice, affinity, RT sysctls)
as effects — change ÷ plain, per configuration and metric — and set them
beside the measured effects.

A change the model cannot express (an affinity beyond the model's machine)
is reported with ``modelled`` False, no prediction and the reason, never
left out. The RT sysctls become Kernel fields (``model_kernel_change``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from .._check import ascii_digits, checked_call, need_int, show, type_name
from ..config import CostModel, Kernel, Machine, kernel_arg, machine_arg
from ..exceptions import ConfigError, ConfigTypeError
from ..groups import Group
from ..workloads import Workload
from . import cgroup as _cgroup
from . import changes as _changes
from .calibration import (
    CONFIG,
    Calibration,
    calibrate,
    model_runs,
    rep_noise,
)
from .calibration import FRAME_COLUMNS as CALIBRATE_COLUMNS
from .columns import Column, measured_frame

#: The measured metric, the model's metric it is compared with, and the
#: target for the median |predicted ÷ measured − 1| of the effects (None:
#: reported, no target).
METRICS: dict[str, tuple[str, float | None]] = {
    "elapsed_s": ("elapsed_s", 0.10),
    "context_switches": ("context_switches", 0.30),
    "cpu_migrations": ("cpu_migrations", 0.30),
    "res_ipis": ("resched_ipis", 0.50),
    "cal_ipis": ("function_call_ipis", None),
}
#: A change's group counters (``measure``'s ``cg_*`` columns) and the
#: model's metric each is compared with; these are compared as counts, not
#: as effects (the plain run has none).
CGROUP_METRICS: dict[str, str] = {
    "cg_nr_periods": "nr_periods",
    "cg_nr_throttled": "nr_throttled",
    "cg_throttled_s": "throttled_s",
}
#: The group a measured cgroup change is modelled as.
MODEL_GROUP = "measured"

#: The columns ``validate`` reads and what each must hold: ``calibrate``'s
#: (``schedlab.host.calibration.FRAME_COLUMNS``), the change columns
#: (``measure``'s ``changes``) and the interrupt counts.
FRAME_COLUMNS: dict[str, Column] = {
    **CALIBRATE_COLUMNS,
    "change": Column("text", nulls=True),
    "policy": Column("text", nulls=True),
    "rt_priority": Column("int", nulls=True, lo=0, hi=99),
    "nice": Column("int", nulls=True, lo=-20, hi=19),
    "affinity": Column("text", nulls=True),
    "rt_runtime_us": Column("int", nulls=True, lo=-1, hi=2**31 - 1),
    "rt_period_us": Column("int", nulls=True, lo=1, hi=2**31 - 1),
    "cgroup": Column("text", required=False, nulls=True),
    **{m: Column("number", nulls=True) for m in METRICS},
    **{c: Column("number", required=False, nulls=True) for c in CGROUP_METRICS},
}
#: An effect this large (|effect − 1|) must have the model's direction.
BIG_EFFECT = 0.20


@dataclass(frozen=True)
class Validation:
    """What ``validate`` found.

    ``effects``: one row per change, configuration and metric: ``measured``
    (median of the change's reps ÷ median of the plain reps), its
    ``measured_lo``/``measured_hi`` (the change's reps' min and max ÷ the
    plain median), ``predicted`` (the same from the model's seeds),
    ``error`` (predicted ÷ measured − 1), ``same_direction`` (for effects
    beyond ±20 %), ``modelled`` and ``why`` (what the model lacks when
    not). ``summary``: per metric, over the modelled rows, ``n``, the median
    relative error |predicted ÷ measured − 1| (``median_abs_rel_err``), its
    ``target``, ``met``, the effects beyond ±20 % and how many of them the
    model has in the other direction. ``calibration``: the fit on the plain
    runs (its ``warnings`` name outliers and noisy plain configurations).
    ``noise``: ``rep_noise`` of every change's configurations (a noisy
    change's measured effect is no firmer than its reps)."""

    effects: pl.DataFrame
    summary: pl.DataFrame
    calibration: Calibration
    noise: pl.DataFrame = dataclasses.field(default_factory=pl.DataFrame)

    def __repr__(self) -> str:
        noisy = int(self.noise["noisy"].sum()) if "noisy" in self.noise.columns else 0
        w = f", {noisy} noisy configurations (.noise)" if noisy else ""
        return f"Validation({self.calibration!r}, {self.effects.height} effects{w})"


def model_change(
    change: Mapping[str, Any], nr_cpus: int | None = None
) -> tuple[dict[str, Any] | None, str]:
    """The ``Workload.with_tasks`` arguments that make ``change`` in the
    model (on a machine of ``nr_cpus``), or ``None`` and why it cannot.
    The RT sysctls are Kernel fields: ``model_kernel_change``."""
    pol = change.get("policy")
    aff = change.get("affinity")
    if aff is not None and nr_cpus is not None and max(aff) >= nr_cpus:
        return None, f"affinity {aff}: the model's machine has CPUs 0 to {nr_cpus - 1}"
    tasks: dict[str, Any] = {}
    if pol is not None:
        tasks["policy"] = pol
    if pol in _changes.RT_POLICIES:
        # measure() runs chrt with rt_priority 1 unless told otherwise.
        prio = change.get("rt_priority")
        tasks["rt_priority"] = 1 if prio is None else int(prio)
    if change.get("nice") is not None:
        tasks["nice"] = change["nice"]
    if change.get("affinity") is not None:
        tasks["cpus"] = list(change["affinity"])
    if change.get("cgroup") is not None:
        tasks["group"] = MODEL_GROUP
    return tasks, ""


def model_groups(change: Mapping[str, Any]) -> list[Group] | None:
    """The model's groups for ``change``: its ``cgroup`` settings as the
    group ``MODEL_GROUP`` (``None`` without one)."""
    s = change.get("cgroup")
    if s is None:
        return None
    return [Group(MODEL_GROUP, **{k: v for k, v in s.items() if v is not None})]


def model_kernel_change(change: Mapping[str, Any]) -> dict[str, Any]:
    """The Kernel fields ``change``'s RT sysctls set (``sched_rt_runtime_us``,
    ``sched_rt_period_us``; empty when it sets neither). They throttle RT
    tasks only, in the kernel as in the model."""
    out: dict[str, Any] = {}
    sysctls = (("rt_runtime_us", "sched_rt_runtime_us"), ("rt_period_us", "sched_rt_period_us"))
    for key, field in sysctls:
        if change.get(key) is not None:
            out[field] = int(change[key])
    return out


def _changes_of(real: pl.DataFrame) -> list[dict[str, Any]]:
    """Each distinct (change name, settings) of ``real``, in order of first
    appearance, with ``affinity`` back as a CPU list."""
    keys = [k for k in _changes.KEYS if k in real.columns]  # frames from before "cgroup"
    rows = real.select(["change", *keys]).unique(maintain_order=True).to_dicts()
    out = []
    for r in rows:
        r = {**dict.fromkeys(_changes.KEYS), **r}
        aff = r.get("affinity")
        if aff is not None:
            cpus = str(aff).split(",")
            if not all(ascii_digits(c, 4) for c in cpus):
                raise ConfigError(
                    f"invalid real: column 'affinity' holds {show(aff)}; expected a CPU list "
                    "such as '0,1' (measure's changes)"
                )
            r["affinity"] = [int(c) for c in cpus]
        cg = r.get("cgroup")
        if cg is not None:
            r["cgroup"] = _cgroup.parse_label(str(cg))
        out.append(r)
    return out


@checked_call("validate")
def validate(
    real: pl.DataFrame,
    machine: Machine | str,
    kernel: Kernel | str,
    *,
    baseline: str = _changes.PLAIN,
    seeds: int = 3,
    threads: int | None = None,
    progress: bool = True,
    fit: Sequence[str] | str | None = None,
    train: Sequence[Mapping[str, Any]] | pl.Expr | None = None,
    costs: CostModel | None = None,
    seed: int = 0,
    max_evaluations: int = 40,
    machine_mismatch: str = "warn",
    memory_limit: int | None = None,
    workload: Workload | None = None,
) -> Validation:
    """Calibrate ``machine``'s costs under ``kernel`` on the ``baseline``
    rows of ``real`` (a ``measure("hackbench", changes=...)`` frame; by
    default ``calibrate``'s training set, every ipc × mode at the middle
    group count: 4 configurations), then predict every other change's
    effect on every measured configuration. ``fit``, ``train``, ``costs``,
    ``seed``, ``max_evaluations``, ``machine_mismatch``, ``memory_limit``
    and ``workload`` are ``calibrate``'s (so are the checks of ``real``'s columns, with the
    change columns: ``FRAME_COLUMNS``); ``seeds`` model runs per
    configuration, the plain and the changed ones on the same seeds.
    Returns a ``Validation``."""
    real = measured_frame(real, FRAME_COLUMNS, "measure('hackbench', changes=...)'s frame")
    real = real.with_columns(pl.col("change").fill_null(_changes.PLAIN))
    if not isinstance(baseline, str):
        raise ConfigTypeError(
            f"invalid type for baseline: got {type_name(baseline)} {show(baseline)}, expected "
            "the name of a change (str)"
        )
    names = sorted(set(real["change"].to_list()))
    if baseline not in names:
        raise ConfigError(f"invalid baseline={show(baseline)}: expected one of {names}")
    settings = _changes_of(real)
    seen = [c["change"] for c in settings]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ConfigError(
            f"invalid real: the changes {twice} name rows of different settings; expected one "
            "setting per change name"
        )
    base_row = next(c for c in settings if c["change"] == baseline)
    if not _changes.is_plain(base_row):
        raise ConfigError(
            f"invalid baseline={show(baseline)}: its rows set {_changes.label(base_row)}; "
            "the baseline must be runs without a change "
            "(calibrate fits the unchanged model to it)"
        )
    if len(names) < 2:
        raise ConfigError(
            f"invalid real: only the baseline {baseline!r} was measured; expected changes too"
        )
    if "pinned" in real.columns and real["pinned"].any():
        raise ConfigError(
            "invalid real: pinned rows; measure the pinned run as a change "
            "(changes=[{'affinity': [0]}])"
        )
    m, k = machine_arg(machine), kernel_arg(kernel)
    nseeds = need_int("seeds", seeds, lo=1, hi=1000)
    # NaN (a count not read) is missing, not a value: polars sorts NaN last
    # and a median over it would move.
    real = real.with_columns([pl.col(c).cast(pl.Float64).fill_nan(None) for c in METRICS])
    base_real = real.filter(pl.col("change") == baseline)
    cal = calibrate(
        base_real.with_columns(pl.lit(_changes.PLAIN).alias("change")),
        m,
        k,
        fit=fit,
        seeds=nseeds,
        threads=threads,
        progress=progress,
        train=train,
        costs=costs,
        seed=seed,
        max_evaluations=max_evaluations,
        machine_mismatch=machine_mismatch,
        memory_limit=memory_limit,
        workload=workload,
    )
    cfg_rows = base_real.select(list(CONFIG)).unique().sort(list(CONFIG)).to_dicts()
    model_metrics = [v[0] for v in METRICS.values()]
    ids = list(range(len(cfg_rows)))

    def model(
        tasks: dict[str, Any] | None,
        kch: dict[str, Any] | None = None,
        groups: list[Group] | None = None,
    ) -> pl.DataFrame:
        extra = [f"group.{MODEL_GROUP}.{v}" for v in CGROUP_METRICS.values()] if groups else []
        df = model_runs(
            cfg_rows,
            m,
            k.replace(**kch) if kch else k,
            cal.costs,
            seeds=nseeds,
            seed=seed,
            threads=threads,
            ids=ids,
            tasks=tasks,
            metrics=model_metrics + extra,
            memory_limit=memory_limit,
            groups=groups,
            workload=cal.workload,
        )
        return df.group_by(list(CONFIG)).agg([pl.col(x).median() for x in model_metrics + extra])

    plain_model = model(None)
    rows: list[dict[str, Any]] = []
    counts = [c for c in CGROUP_METRICS if c in real.columns]
    real_med = real.group_by(["change", *CONFIG]).agg(
        [pl.col(c).median().alias(c) for c in (*METRICS, *counts)]
        + [pl.col(c).min().alias(f"{c}__lo") for c in (*METRICS, *counts)]
        + [pl.col(c).max().alias(f"{c}__hi") for c in (*METRICS, *counts)]
    )
    base_med = {
        tuple(r[c] for c in CONFIG): r
        for r in real_med.filter(pl.col("change") == baseline).to_dicts()
    }
    pm = {tuple(r[c] for c in CONFIG): r for r in plain_model.to_dicts()}
    for ch in settings:
        if ch["change"] == baseline:
            continue
        tasks, why = model_change(ch, m.nr_cpus)
        cm: dict[tuple[Any, ...], dict[str, Any]] = {}
        groups = model_groups(ch)
        if tasks is not None:
            kch = model_kernel_change(ch)
            cm = {tuple(r[c] for c in CONFIG): r for r in model(tasks, kch, groups).to_dicts()}
        for r in real_med.filter(pl.col("change") == ch["change"]).to_dicts():
            key = tuple(r[c] for c in CONFIG)
            b = base_med.get(key)
            if b is None:
                continue
            for met, (mmet, _) in METRICS.items():
                measured = _ratio(r[met], b[met])
                pred = None
                if tasks is not None and key in cm:
                    pred = _ratio(cm[key][mmet], pm[key][mmet])
                rows.append(
                    {
                        "change": ch["change"],
                        **dict(zip(CONFIG, key, strict=True)),
                        "metric": met,
                        "measured": measured,
                        "measured_lo": _ratio(r[f"{met}__lo"], b[met]),
                        "measured_hi": _ratio(r[f"{met}__hi"], b[met]),
                        "predicted": pred,
                        "error": _error(pred, measured),
                        "same_direction": _direction(pred, measured),
                        "modelled": tasks is not None,
                        "why": why,
                    }
                )
            # The group's counters, as counts (measured and predicted medians).
            for met in counts if groups else []:
                mmet = f"group.{MODEL_GROUP}.{CGROUP_METRICS[met]}"
                pred = cm[key][mmet] if key in cm else None
                measured = r[met]
                rows.append(
                    {
                        "change": ch["change"],
                        **dict(zip(CONFIG, key, strict=True)),
                        "metric": met,
                        "measured": measured,
                        "measured_lo": r[f"{met}__lo"],
                        "measured_hi": r[f"{met}__hi"],
                        "predicted": pred,
                        "error": _error(pred, measured),
                        "same_direction": None,
                        "modelled": tasks is not None,
                        "why": "a count, not an effect",
                    }
                )
    effects = pl.DataFrame(rows, schema=_EFFECTS)
    effects = effects.sort(["metric", "change", *CONFIG])
    return Validation(
        effects=effects, summary=summary(effects), calibration=cal, noise=rep_noise(real)
    )


_EFFECTS: dict[str, Any] = {
    "change": pl.String,
    "ipc": pl.String,
    "mode": pl.String,
    "groups": pl.Int64,
    "loops": pl.Int64,
    "metric": pl.String,
    "measured": pl.Float64,
    "measured_lo": pl.Float64,
    "measured_hi": pl.Float64,
    "predicted": pl.Float64,
    "error": pl.Float64,
    "same_direction": pl.Boolean,
    "modelled": pl.Boolean,
    "why": pl.String,
}


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or not np.isfinite(a) or not np.isfinite(b):
        return None
    if b == 0:
        return 1.0 if a == 0 else None
    return float(a) / float(b)


def _error(pred: float | None, measured: float | None) -> float | None:
    """predicted ÷ measured − 1 (0 when both are 0: an effect of ×0 met)."""
    if pred is None or measured is None:
        return None
    if measured == 0:
        return 0.0 if pred == 0 else None
    return pred / measured - 1.0


def _direction(pred: float | None, measured: float | None) -> bool | None:
    if pred is None or measured is None or abs(measured - 1.0) <= BIG_EFFECT:
        return None
    return (pred - 1.0) * (measured - 1.0) > 0


def summary(effects: pl.DataFrame) -> pl.DataFrame:
    """Per metric, over the modelled rows of ``effects``: ``n``,
    ``median_abs_rel_err`` (the median relative error |predicted ÷ measured
    − 1|), ``target``, ``met``, ``big_effects`` (beyond ±20 %) and
    ``direction_misses`` among them."""
    targets = pl.DataFrame(
        {"metric": list(METRICS), "target": [t for _, t in METRICS.values()]},
        schema={"metric": pl.String, "target": pl.Float64},
    )
    got = (
        effects.filter(pl.col("modelled"))
        .group_by("metric")
        .agg(
            pl.col("error").is_not_null().sum().alias("n"),
            pl.col("error").abs().median().alias("median_abs_rel_err"),
            pl.col("same_direction").is_not_null().sum().alias("big_effects"),
            (pl.col("same_direction") == False).sum().alias("direction_misses"),  # noqa: E712
        )
    )
    return (
        targets.join(got, on="metric", how="left")
        .with_columns((pl.col("median_abs_rel_err") <= pl.col("target")).alias("met"))
        .select(
            "metric",
            "n",
            "median_abs_rel_err",
            "target",
            "met",
            "big_effects",
            "direction_misses",
        )
    )
