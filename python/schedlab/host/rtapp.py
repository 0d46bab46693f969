"""rt-app descriptions run on this host, and schedules recorded here.

``measure_rt_app`` runs Debian's ``rt-app`` (1.0) on a description under
``perf stat``, reads the log rt-app writes per thread and returns a row
per thread and repetition: the log's means (``io.rtapp.summarize_log``)
beside the run's ``perf stat`` counters. ``compare_rt_app`` runs the same
description in the model and puts the two side by side. ``record_schedule`` runs
any command with its schedule recorded (through tracefs where it can, else
``perf sched record``) and writes the text ``workloads.from_trace`` reads;
``compare_replay`` puts a replay's figures beside the recording's.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from .._check import checked_call, need_int
from ..exceptions import MeasureError
from ..io import rtapp as _rtapp
from ..io.replay import perf_script
from . import tracefs as _tracefs
from .measurement import EVENTS, perf_stat_counters

#: The per-thread figures both sides report.
FIGURES = ("run_us", "period_us", "wu_lat_us", "slack_us", "missed_periods", "log_lines")
#: The log columns a measured row also carries.
_CONFIGURED = ("c_run_us", "c_period_us")

_PLOAD = re.compile(r"pLoad\s*=\s*(\d+)\s*ns")


def _rewrite(doc: Any, logdir: Path, calibration: int | None) -> str:
    """The description with rt-app's logs sent to ``logdir`` (basename
    ``rt``) and, once known, the calibration as a number."""
    pairs = _rtapp.Pairs((k, v) for k, v in doc if k != "global")
    glob = dict(next((v for k, v in doc if k == "global"), []))
    glob["logdir"] = str(logdir)
    glob["log_basename"] = "rt"
    # rt-app 1.0 writes the log only without log_size (its string test is
    # inverted: "file" and "auto" disable it; rt-app_parse_config.c, v1.0).
    glob.pop("log_size", None)
    if calibration is not None:
        glob["calibration"] = calibration
    pairs.append(("global", _rtapp.Pairs(glob.items())))
    return _rtapp.dump(pairs)


def _run(cmd: list[str]) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise MeasureError(
            f"cannot run {cmd[0]!r}: not found (Debian: apt-get install rt-app linux-perf)"
        ) from None
    return p.returncode, p.stdout + p.stderr


@checked_call("measure_rt_app")
def measure_rt_app(
    description: Any,
    *,
    reps: int = 3,
    rt_app: str = "rt-app",
    perf: str = "perf",
) -> pl.DataFrame:
    """Run ``description`` (a path, JSON text or dict; checked by the same
    parser the model uses) ``reps`` times with rt-app under ``perf stat``.

    rt-app calibrates its ``run`` loop first (``calibration: "CPU0"``,
    several seconds); the first repetition's figure (``pLoad``) is reused
    by the others. Rows: ``rep``, ``thread`` (``<task>-<instance>``),
    ``task``, the log's means (``FIGURES``) and the run's ``elapsed_s``
    (wall time of rt-app), ``task_clock_s``, ``context_switches``,
    ``cpu_migrations``, ``calibration_ns``."""
    reps = need_int("reps", reps, lo=1, hi=1000)
    _, threads = _rtapp.translate(description)
    doc = _rtapp.load(description)
    rows: list[dict[str, Any]] = []
    calibration: int | None = None
    glob = dict(next((v for k, v in doc if k == "global"), []))
    if isinstance(glob.get("calibration"), int):
        calibration = int(glob["calibration"])
    for rep in range(reps):
        with tempfile.TemporaryDirectory(prefix="schedlab-rtapp-") as d:
            logdir = Path(d)
            spec = logdir / "taskset.json"
            spec.write_text(_rewrite(doc, logdir, calibration))
            cmd = [perf, "stat", "-x,", "-e", ",".join(EVENTS), "--", rt_app, str(spec)]
            t = time.perf_counter()
            code, out = _run(cmd)
            wall = time.perf_counter() - t
            if code != 0:
                raise MeasureError(f"{' '.join(cmd)} failed ({code}):\n{out[-2000:]}")
            m = _PLOAD.search(out)
            if m and calibration is None:
                calibration = int(m.group(1))
            stat = perf_stat_counters(out)
            for th in threads:
                log = logdir / f"rt-{th['task']}-{th['index']}.log"
                if not log.exists():
                    raise MeasureError(
                        f"rt-app wrote no log for thread {th['thread']} ({log.name}):\n"
                        f"{out[-1000:]}"
                    )
                fig = _rtapp.summarize_log(_rtapp.read_log(log))
                rows.append(
                    {
                        "rep": rep,
                        "thread": th["thread"],
                        "task": th["task"],
                        **{k: fig[k] for k in FIGURES + _CONFIGURED},
                        "elapsed_s": wall,
                        **stat,
                        "calibration_ns": float(calibration or math.nan),
                    }
                )
    return pl.DataFrame(rows)


def run_scale_of(measured: pl.DataFrame) -> float:
    """How much longer rt-app's ``run`` events take than configured on this
    host when nothing competes (its calibration's rounding: ``pLoad`` is a
    whole number of ns per loop): the mean of ``run_us / c_run_us`` over
    the rows of a plain run's ``measure_rt_app``. Calibrate on a
    description whose threads run alone, then predict the others with it."""
    if "c_run_us" not in measured.columns or measured.height == 0:
        raise MeasureError("run_scale_of: expected measure_rt_app() rows with c_run_us")
    ratio = (measured["run_us"] / measured["c_run_us"]).drop_nans().drop_nulls()
    if ratio.len() == 0:
        raise MeasureError("run_scale_of: no row has both run_us and c_run_us")
    return float(ratio.mean())  # type: ignore[arg-type]


@checked_call("compare_rt_app")
def compare_rt_app(
    measured: pl.DataFrame,
    description: Any,
    *,
    machine: Any = "vm-2",
    kernel: Any = "v6.18",
    seeds: int = 3,
    costs: Any = None,
    run_scale: float = 1.0,
) -> pl.DataFrame:
    """A row per thread: the real runs' mean and spread (min, max over
    repetitions) of each figure in ``FIGURES`` beside the model's mean over
    ``seeds``, and ``err_pct`` (model vs real mean) for each. ``run_scale``:
    as ``workloads.rt_app`` takes it (``run_scale_of`` measures it on a
    plain run)."""
    from ..run.simulation import simulate
    from ..workloads import rt_app

    w = rt_app(description, run_scale=run_scale)
    model: dict[str, list[dict[str, float]]] = {}
    for seed in range(seeds):
        r = simulate(machine, kernel, w, seed=seed, costs=costs)
        if not r.ok:
            raise MeasureError(f"the model's run failed: {r.status} {r.status_detail}")
        for row in r.tasks.iter_rows(named=True):
            model.setdefault(row["name"], []).append(row)
    out: list[dict[str, Any]] = []
    for thread, g in measured.group_by("thread", maintain_order=True):
        name = str(thread[0])
        rows = model.get(name, [])
        rec: dict[str, Any] = {"thread": name}
        for k in FIGURES:
            real = g[k].cast(pl.Float64)
            rm = float(real.mean())  # type: ignore[arg-type]
            mm = sum(x[k] for x in rows) / len(rows) if rows else math.nan
            rec[f"{k}_real"] = rm
            rec[f"{k}_real_min"] = float(real.min())  # type: ignore[arg-type]
            rec[f"{k}_real_max"] = float(real.max())  # type: ignore[arg-type]
            rec[f"{k}_model"] = mm
            rec[f"{k}_err_pct"] = 100.0 * (mm - rm) / rm if rm else math.nan
        out.append(rec)
    return pl.DataFrame(out)


@checked_call("record_schedule")
def record_schedule(
    command: Sequence[str],
    output: str | Path,
    *,
    method: str = "auto",
    perf: str = "perf",
    buffer_kb: int = _tracefs.BUFFER_KB,
    lost_ok: bool = False,
) -> dict[str, Any]:
    """Run ``command`` and write its schedule as text to ``output``: the
    text ``workloads.from_trace`` replays and ``compare_schedule`` reads.

    ``method``: ``"tracefs"`` records through the kernel's ftrace ring
    buffer (``host.tracefs.record_tracefs``: whole, or refused when events
    were lost unless ``lost_ok``); ``"perf"`` runs ``perf sched record`` and
    writes its ``perf script`` text (the ``perf.data`` kept beside it, with
    ``.data``; perf's own buffers may lose events under load); ``"auto"``
    takes tracefs where a tracing instance can be made here (root), perf
    otherwise. Returns the paths, the command's exit status and the method."""
    if method not in ("auto", "tracefs", "perf"):
        raise MeasureError(f"invalid method={method!r}: expected 'auto', 'tracefs' or 'perf'")
    if not command:
        raise MeasureError("record: no command given (schedlab measure record -- CMD ...)")
    if method == "tracefs" or (method == "auto" and _tracefs.tracefs_writable()):
        info = _tracefs.record_tracefs(command, output, buffer_kb=buffer_kb, lost_ok=lost_ok)
        info["method"] = "tracefs"
        return info
    if shutil.which(perf) is None:
        raise MeasureError(f"perf not found ({perf!r}); Debian: apt-get install linux-perf")
    out = Path(output)
    data = out.with_suffix(".data")
    code, text = _run([perf, "sched", "record", "-o", str(data), "--", *command])
    if not data.exists():
        raise MeasureError(f"perf sched record wrote nothing ({code}):\n{text[-2000:]}")
    status, stdout, stderr = perf_script(perf, data)
    if status != 0:
        raise MeasureError(f"perf script failed ({status}):\n{stderr[-2000:]}")
    out.write_text(stdout)
    return {"text": str(out), "data": str(data), "status": code, "output": text, "method": "perf"}


@checked_call("compare_replay")
def compare_replay(
    workload: Any,
    *,
    machine: Any = "vm-2",
    kernel: Any = "v6.18",
    seeds: int = 3,
    costs: Any = None,
) -> pl.DataFrame:
    """A replay's ``elapsed_s``, ``context_switches`` and ``cpu_migrations``
    (mean and range over ``seeds``) beside what its recording shows
    (``Workload.recorded``)."""
    from ..run.simulation import simulate

    rec = workload.recorded
    if not rec:
        raise MeasureError("compare_replay: expected a workloads.from_trace() workload")
    runs = [simulate(machine, kernel, workload, seed=s, costs=costs) for s in range(seeds)]
    rows = []
    for name, real in (
        ("elapsed_s", rec["elapsed_s"]),
        ("context_switches", rec["context_switches"]),
        ("cpu_migrations", rec["migrations"]),
        ("task_clock_s", rec["cpu_s"]),
    ):
        vals = [r.metrics[name] if name != "elapsed_s" else r.sim_time_s for r in runs]
        m = sum(vals) / len(vals)
        rows.append(
            {
                "figure": name,
                "recorded": float(real),
                "model": m,
                "model_min": min(vals),
                "model_max": max(vals),
                "ratio": m / real if real else math.nan,
            }
        )
    return pl.DataFrame(rows)
