"""schbench (masoncl/schbench) on this host: ``measure("schbench", ...)``
runs it and reads what it prints into the names the model's
``sl.workloads.schbench`` metrics have, so the two sit side by side and
``calibrate`` can fit one to the other.

schbench is not part of schedlab: the user builds it (``make`` in a clone
of masoncl/schbench) and passes the binary. Its report (``show_latencies()``
in schbench.c, on stderr) is read by ``parse_schbench``, a pure function
of the text, tested on recorded output.
"""

from __future__ import annotations

import itertools
import math
import numbers
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .._check import is_list, show, type_name
from ..exceptions import ConfigError, ConfigTypeError, MeasureError
from .runner import completed_output, run_one

#: The report's blocks (``show_latencies()``'s label) and the prefix of
#: their metrics.
BLOCKS = {"Wakeup Latencies": "wakeup", "Request Latencies": "request", "RPS": "rps"}
#: The percentiles schbench prints per block (``PLIST_FOR_LAT``,
#: ``PLIST_FOR_RPS``; the pipe mode adds the 20th to the wake-ups).
_SUFFIX = {"20.0": "p20", "50.0": "p50", "90.0": "p90", "99.0": "p99", "99.9": "p999"}
_HEADER = re.compile(
    r"^(Wakeup Latencies|Request Latencies|RPS) percentiles \((usec|requests)\) runtime "
    r"([0-9]+) \(s\) \(([0-9]+) total samples\)$"
)
_PCT = re.compile(r"^(?:\* )?([0-9]+\.[0-9])th: ([0-9]+)\s+\(([0-9]+) samples\)$")
_MINMAX = re.compile(r"^min=([0-9]+), max=([0-9]+)$")
_AVG = re.compile(r"^average rps: ([0-9]+(?:\.[0-9]+)?)$")
_PIPE = re.compile(r"^avg worker transfer: ([0-9]+(?:\.[0-9]+)?) ops/sec ")
_DELAY = re.compile(r"^sched delay: message ([0-9]+) \(usec\) worker ([0-9]+) \(usec\)$")
_WORKERS = re.compile(r"^setting worker threads to ([0-9]+)$")

#: ``measure("schbench")``'s options beside ``message_threads`` and
#: ``workers`` (the model's keywords) and the flag each becomes.
OPTIONS = {
    "warmup_s": "-w",
    "operations": "-n",
    "sleep_us": "-s",
    "requests_per_sec": "-R",
    "cache_footprint_kb": "-F",
    "pipe_bytes": "-p",
    "skip_locking": "-L",
}
#: The metrics a run's row has (the model's names), in order.
METRICS = (
    "rps",
    "wakeup_p50_us",
    "wakeup_p90_us",
    "wakeup_p99_us",
    "wakeup_p999_us",
    "wakeup_samples",
    "request_p50_us",
    "request_p90_us",
    "request_p99_us",
    "request_p999_us",
    "request_samples",
    "rps_p20",
    "rps_p50",
    "rps_p90",
    "sched_delay_message_us",
    "sched_delay_worker_us",
    "ops_per_sec",
)
#: The frame's columns, in order.
COLUMNS = (
    "bench",
    "message_threads",
    "workers",
    "runtime_s",
    *OPTIONS,
    "rep",
    *METRICS,
    "kernel_release",
    "cpus",
    "cpu_model",
    "date",
    "loadavg",
)
#: Default values of the options (schbench's own).
DEFAULTS: dict[str, Any] = {
    "warmup_s": 0,
    "operations": 5,
    "sleep_us": 100,
    "requests_per_sec": 0,
    "cache_footprint_kb": 256,
    "pipe_bytes": 0,
    "skip_locking": False,
}


#: The largest figure a report may hold (a count or µs; schbench's are
#: unsigned ints and doubles of such counts): a longer number is not its.
_MAX_FIGURE = 1e15


def _fig(text: str, lineno: int, line: str) -> float:
    """A number of the report, within ``_MAX_FIGURE``."""
    v = float(text)
    if not v <= _MAX_FIGURE:
        raise _bad(lineno, line, f"{text[:30]} is beyond any figure schbench prints")
    return v


def _bad(lineno: int, line: str, why: str) -> MeasureError:
    return MeasureError(f"schbench output line {lineno}: {why} (line {line.strip()[:200]!r})")


#: The percentiles each block must print (``show_latencies()``'s masks:
#: ``PLIST_FOR_LAT``, ``PLIST_FOR_RPS``; the pipe mode adds the 20th to the
#: wake-ups).
_EXPECT = {
    "Wakeup Latencies": ("50.0", "90.0", "99.0", "99.9"),
    "Request Latencies": ("50.0", "90.0", "99.0", "99.9"),
    "RPS": ("20.0", "50.0", "90.0"),
}
_INTERVAL = re.compile(r"^current rps: ")


def _block(lines: list[str], start: int, label: str, pipe: bool) -> tuple[dict[str, float], int]:
    """One block from its header at ``start``: its metrics and the index
    after its min/max line."""
    prefix = BLOCKS[label]
    unit = "_us" if prefix != "rps" else ""
    h = _HEADER.match(lines[start])
    assert h is not None
    out = {f"{prefix}_samples": _fig(h.group(4), start + 1, lines[start])}
    want = _EXPECT[label]
    if pipe and label == "Wakeup Latencies":
        want = ("20.0", *want)
    j = start + 1
    for p in want:
        m = _PCT.match(lines[j]) if j < len(lines) else None
        if not m or m.group(1) != p:
            got = lines[j] if j < len(lines) else ""
            raise _bad(j + 1, got, f"{label}: expected its {p}th percentile line")
        out[f"{prefix}_{_SUFFIX[p]}{unit}"] = _fig(m.group(2), j + 1, lines[j])
        j += 1
    mm = _MINMAX.match(lines[j]) if j < len(lines) else None
    if not mm:
        raise _bad(j + 1, lines[j] if j < len(lines) else "", f"{label}: expected 'min=N, max=N'")
    out[f"{prefix}_min{unit}"] = _fig(mm.group(1), j + 1, lines[j])
    out[f"{prefix}_max{unit}"] = _fig(mm.group(2), j + 1, lines[j])
    return out, j + 1


def parse_schbench(text: str) -> dict[str, float]:
    """schbench's final report as the model's metric names: per block
    (``Wakeup Latencies``, ``Request Latencies``, ``RPS``) the percentiles
    it prints (``wakeup_p50_us`` … ``_p999_us``, ``request_*``, ``rps_p20``
    … ``rps_p90``), min, max and sample count (``wakeup_samples``, …),
    ``rps`` (its ``average rps``; in pipe mode ``ops_per_sec``, its ``avg
    worker transfer``), ``sched_delay_message_us``/``_worker_us`` and
    ``workers`` when it says how many it set. The final report is what
    follows the last interval report (which ends with ``current rps:``):
    its blocks must be there in schbench's order — the wake-ups, and but in
    pipe mode the requests and the RPS — each with its header, every
    percentile line it prints and its min/max line; anything else (no
    final line, a block missing, garbled, cut short or repeated) is a
    ``MeasureError`` naming the line."""
    if not isinstance(text, str):
        raise ConfigTypeError(f"invalid type for text: got {type_name(text)}, expected str")
    lines = [ln.strip() for ln in text.splitlines()]
    end = None
    for i, ln in enumerate(lines):
        if _AVG.match(ln) or _PIPE.match(ln):
            end = i
    if end is None:
        raise MeasureError(
            "schbench output has no 'average rps:' or 'avg worker transfer:' line: "
            f"not a finished schbench run ({len(lines)} lines)"
        )
    out: dict[str, float] = {}
    m = _AVG.match(lines[end])
    pipe = m is None
    if m:
        out["rps"] = _fig(m.group(1), end + 1, lines[end])
    else:
        pm = _PIPE.match(lines[end])
        assert pm is not None
        out["ops_per_sec"] = _fig(pm.group(1), end + 1, lines[end])
    first = 0
    for i in range(end):
        if _INTERVAL.match(lines[i]):
            first = i + 1
    labels = ["Wakeup Latencies"] if pipe else ["Wakeup Latencies", "Request Latencies", "RPS"]
    # the final report's first header (lines before it: schbench's notes,
    # e.g. "setting worker threads to N")
    starts = [
        i for i in range(first, end) if (h := _HEADER.match(lines[i])) and h.group(1) == labels[0]
    ]
    if not starts:
        where = f"lines {first + 1}-{end}" if first < end else f"after line {first}"
        why = f"no final 'Wakeup Latencies percentiles' header in {where}"
        raise _bad(end + 1, lines[end], why)
    if len(starts) > 1:
        raise _bad(starts[0] + 1, lines[starts[0]], "the final report repeats its blocks")
    j = starts[0]
    for label in labels:
        while j < end and not lines[j]:
            j += 1
        h = _HEADER.match(lines[j]) if j < end else None
        if not h or h.group(1) != label:
            got = lines[j] if j < end else lines[end]
            raise _bad(j + 1, got, f"expected the final '{label} percentiles' header")
        got_block, j = _block(lines, j, label, pipe)
        out.update(got_block)
    while j < end and not lines[j]:
        j += 1
    if j != end:
        raise _bad(j + 1, lines[j], f"unexpected after the final blocks, before line {end + 1}")
    for k, ln in enumerate(lines[end:], end + 1):
        d = _DELAY.match(ln)
        if d:
            out["sched_delay_message_us"] = _fig(d.group(1), k, ln)
            out["sched_delay_worker_us"] = _fig(d.group(2), k, ln)
    said = [(k, w) for k, ln in enumerate(lines, 1) if (w := _WORKERS.match(ln))]
    if len(said) > 1:
        raise _bad(said[1][0], lines[said[1][0] - 1], "a second 'setting worker threads' line")
    if said:
        k, w = said[0]
        n = _fig(w.group(1), k, lines[k - 1])
        if not 1 <= n <= 100_000:
            raise _bad(k, lines[k - 1], "a worker count outside 1-100000")
        out["workers"] = n
    # every block's "runtime N (s)"
    out["runtime_s"] = float(_HEADER.match(lines[starts[0]]).group(3))  # type: ignore[union-attr]
    return out


def schbench_binary(path: Any) -> Path:
    """``schbench`` (``measure``'s parameter) checked: an executable
    regular file; anything else is a ``ConfigError`` naming it."""
    if not isinstance(path, str | os.PathLike):
        raise ConfigTypeError(
            f"invalid type for schbench: got {type_name(path)} {show(path)}, expected the "
            "path of a built schbench binary"
        )
    try:
        p = Path(path).expanduser()
        st = p.stat()
    except (RuntimeError, ValueError) as e:  # ~nouser; a NUL byte
        raise ConfigError(f"invalid schbench={show(str(path))}: {e}") from None
    except OSError as e:
        raise ConfigError(
            f"invalid schbench={str(p)!r}: {e.strerror}; expected the path of a built schbench "
            "binary (make in a clone of masoncl/schbench)"
        ) from None
    if not stat.S_ISREG(st.st_mode) or not os.access(p, os.X_OK):
        raise ConfigError(f"invalid schbench={str(p)!r}: not an executable file")
    return p


def options_arg(options: Any) -> dict[str, Any]:
    """``options`` (a mapping of ``OPTIONS`` keys) with schbench's defaults
    filled in; an unknown key is refused, and each value is checked as
    ``sl.workloads.schbench`` checks it (the same bounds: ``pipe_bytes`` at
    most schbench's 1 MiB, …), by name."""
    if options is None:
        return dict(DEFAULTS)
    if not isinstance(options, Mapping):
        raise ConfigTypeError(
            f"invalid type for options: got {type_name(options)}, expected a dict of "
            f"{', '.join(OPTIONS)}"
        )
    for k in options:
        if k not in OPTIONS:
            raise ConfigError(f"invalid options key {k!r}: expected keys from {', '.join(OPTIONS)}")
    from ..workloads import schbench

    out = {**DEFAULTS, **options}
    schbench(**out)  # refuses a bad value by name
    return {k: (bool(v) if k == "skip_locking" else int(v)) for k, v in out.items()}


def schbench_command(
    binary: Path, message_threads: int, workers: int | None, runtime_s: int, opts: Mapping[str, Any]
) -> list[str]:
    """The command line of one run (options at schbench's defaults left out)."""
    cmd = [str(binary), "-m", str(message_threads)]
    if workers is not None:
        cmd += ["-t", str(workers)]
    cmd += ["-r", str(runtime_s)]
    for k, flag in OPTIONS.items():
        v = opts[k]
        if v == DEFAULTS[k]:
            continue
        if k == "skip_locking":
            cmd.append(flag)
        else:
            cmd += [flag, str(v)]
    return cmd


def measure_schbench(
    binary: Any,
    message_threads: Sequence[int],
    workers: Sequence[int | None],
    runtime_s: int,
    options: Any,
    reps: int,
    progress: bool,
    runner: Callable[[list[str]], Any],
    host_info: Callable[[], dict[str, Any]],
) -> pl.DataFrame:
    """``measure("schbench", ...)``'s runs: every message_threads ×
    workers, reps outermost; a run that exits non-zero or prints no report
    is a ``MeasureError`` with its output's tail."""
    b = schbench_binary(binary)
    opts = options_arg(options)
    configs = list(itertools.product(message_threads, workers))
    bar = None
    if progress:
        from .._progress import progress_bar

        bar = progress_bar(total=reps * len(configs), desc="schbench", unit="run")
    rows: list[dict[str, Any]] = []
    try:
        for rep in range(reps):
            for m, w in configs:
                host = host_info()
                cmd = schbench_command(b, m, w, runtime_s, opts)
                p = run_one(runner, cmd, "build schbench (make in masoncl/schbench)")
                code, stdout, stderr = completed_output(p, cmd, strict=False)
                text = stdout + "\n" + stderr
                if code != 0:
                    raise MeasureError(f"{' '.join(cmd)} exited with {code}:\n{text[-2000:]}")
                got = parse_schbench(text)
                _matches(cmd, got, w, runtime_s, opts)
                nw = w if w is not None else got.get("workers")
                if nw is None:
                    raise MeasureError(
                        f"{' '.join(cmd)}: no -t given and no 'setting worker threads to N' line"
                    )
                rows.append(
                    {
                        "bench": "schbench",
                        "message_threads": m,
                        "workers": int(nw),
                        "runtime_s": runtime_s,
                        **opts,
                        "rep": rep,
                        **{k: got.get(k, math.nan) for k in METRICS},
                        **host,
                    }
                )
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    schema: dict[str, Any] = {
        "bench": pl.String,
        "message_threads": pl.Int64,
        "workers": pl.Int64,
        "runtime_s": pl.Int64,
        **{k: (pl.Boolean if k == "skip_locking" else pl.Int64) for k in OPTIONS},
        "rep": pl.Int64,
        **dict.fromkeys(METRICS, pl.Float64),
        "kernel_release": pl.String,
        "cpus": pl.Int64,
        "cpu_model": pl.String,
        "date": pl.String,
        "loadavg": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema).select(COLUMNS)


def _matches(
    cmd: list[str], got: dict[str, float], workers: int | None, runtime_s: int, opts: Any
) -> None:
    """The report is of the command run: its runtime, its mode, and the
    worker count schbench says it set when ``-t`` was not given."""
    run = " ".join(cmd)
    if got["runtime_s"] != runtime_s:
        raise MeasureError(
            f"{run}: the report says runtime {int(got['runtime_s'])} s, the command -r {runtime_s}"
        )
    pipe = "ops_per_sec" in got
    if pipe != (opts["pipe_bytes"] > 0):
        raise MeasureError(
            f"{run}: a {'pipe-mode' if pipe else 'request'} report for a command "
            f"{'without' if pipe else 'with'} -p"
        )
    if workers is not None and "workers" in got and got["workers"] != workers:
        raise MeasureError(
            f"{run}: schbench says it set {int(got['workers'])} workers where -t asked {workers}"
        )


def int_or_none_list(name: str, v: Any) -> list[int | None]:
    """``workers``: None (schbench's default), one int or a list of them."""
    if v is None:
        return [None]
    vals = list(v) if is_list(v) else [v]
    if not vals:
        raise ConfigError(f"invalid {name}=[]: expected None, an integer or a list of them")
    out: list[int | None] = []
    for x in vals:
        if x is None:
            out.append(None)
            continue
        if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Integral):
            raise ConfigTypeError(
                f"invalid type for {name}: got {type_name(x)} {show(x)}, expected an int or None"
            )
        if not 1 <= int(x) <= 100_000:
            raise ConfigError(f"invalid {name}={show(x)}: expected an integer from 1 to 100000")
        out.append(int(x))
    if len(set(out)) != len(out):
        raise ConfigError(f"invalid {name}={show(vals)}: a value named twice")
    return out
