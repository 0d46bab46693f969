"""vmstat-style tables of several runs side by side, the way a regression
report quotes ``vmstat 1`` samples from each kernel."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from .._check import checked_call, need_bool, need_instance, need_int
from ..exceptions import ConfigTypeError
from ..result import Result

#: The columns vmstat prints for this model, in vmstat's order.
VMSTAT_COLUMNS = ("r", "in", "cs", "us", "sy", "id")


@checked_call("vmstat_table")
def vmstat_table(
    results: Mapping[str, Result], *, samples: int = 3, skip_partial: bool = True
) -> pl.DataFrame:
    """The vmstat samples of each labelled run, stacked with a ``label``
    column first (labels in the mapping's order).

    ``samples`` keeps the first N samples of each run (as a report quotes
    three lines of ``vmstat 1``); ``skip_partial`` drops a final interval
    shorter than the others — the run's wind-down, where the runqueues
    drain — so the rows show the steady state. A run shorter than one
    interval has a single, partial sample, and keeps it."""
    if not isinstance(results, Mapping) or not results:
        raise ConfigTypeError(
            "invalid type for results: expected a non-empty mapping of label -> "
            f"schedlab.Result, got {type(results).__name__}"
            + (" (empty)" if isinstance(results, Mapping) else "")
        )
    samples = need_int("samples", samples, lo=1, hi=1_000_000)
    need_bool("skip_partial", skip_partial)
    parts = []
    for label, r in results.items():
        need_instance("results key", label, str, "a str label")
        need_instance(f"results[{label!r}]", r, Result, "a schedlab.Result")
        vm = r.vmstat
        if skip_partial and vm.height > 1:
            full = pl.col("interval_s").max()
            vm = vm.filter(pl.col("interval_s") >= 0.999 * full)
        parts.append(
            vm.head(samples)
            .select("time_s", *VMSTAT_COLUMNS)
            .with_columns(pl.lit(label).alias("label"))
            .select("label", "time_s", *VMSTAT_COLUMNS)
        )
    return pl.concat(parts)


@checked_call("format_vmstat")
def format_vmstat(
    results: Mapping[str, Result], *, samples: int = 3, skip_partial: bool = True
) -> str:
    """``vmstat_table`` printed as vmstat prints it: integers, ``in`` and
    ``cs`` per second, ``us``/``sy``/``id`` in percent, one block per label."""
    t = vmstat_table(results, samples=samples, skip_partial=skip_partial)
    width = max(5, *(len(s) for s in t["label"]))
    head = f"{'':<{width}} {'r':>5} {'in':>8} {'cs':>10} {'us':>3} {'sy':>3} {'id':>3}"
    lines = [head]
    last = None
    for row in t.iter_rows(named=True):
        label = row["label"] if row["label"] != last else ""
        last = row["label"]
        lines.append(
            f"{label:<{width}} {row['r']:>5d} {round(row['in']):>8d} {round(row['cs']):>10d} "
            f"{round(row['us']):>3d} {round(row['sy']):>3d} {round(row['id']):>3d}"
        )
    return "\n".join(lines) + "\n"
