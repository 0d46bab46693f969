"""re-aim-7 (OSDL's AIM7) on this host: ``measure("aim7", ...)`` runs it at
several children counts and returns its own figures as a polars frame, the
frame ``calibrate`` fits ``sl.workloads.aim7``'s CPU work to.

re-aim-7 is not part of schedlab: the user builds it (public repository
davidlohr/areaim, ``osdl-aim-7``) and passes the directory holding the
``reaim`` binary, ``workfile.compute`` and ``reaim.config``. Each run is one
load point, ``reaim -sN -eN -i1 -t -jJOBS -f workfile.compute -c
reaim.config -l PREFIX``, in a fresh working directory; its figures are
read from the ``PREFIX.csv`` it writes (``parse_reaim_csv``, a pure function
of the text, tested on recorded output).
"""

from __future__ import annotations

import functools
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from .._check import show, type_name
from ..exceptions import ConfigError, ConfigTypeError, MeasureError
from .runner import completed_output, run_one

#: The header of reaim's CSV (driver.c writes it before the first load point).
CSV_HEADER = (
    "Forks",
    "JPM",
    "JPM_C",
    "JPS_C",
    "parent_tm",
    "childU_tm",
    "childS_tm",
    "std_dev",
    "JTI",
    "max_c",
    "min_c",
)
#: Each CSV field ``measure`` keeps, and the column (and model metric) it
#: becomes: ``parent_tm`` is reaim's wall time from the start signal to the
#: last child's exit, ``childU_tm``/``childS_tm`` the reaped children's
#: ``tms_cutime``/``tms_cstime`` (both from ``times()``, in clock ticks:
#: 10 ms here), ``JTI`` the Job Timing Index.
CSV_FIELDS = {
    "JPM": "jobs_per_min",
    "JPM_C": "jobs_per_min_per_child",
    "parent_tm": "real_s",
    "childU_tm": "child_user_s",
    "childS_tm": "child_sys_s",
    "std_dev": "std_dev_s",
    "JTI": "jti",
}
#: The files the ``reaim`` directory must hold.
REAIM_FILES = ("reaim", "workfile.compute", "reaim.config")
#: The frame's columns, in order (the host columns on every row, as in
#: ``measure("hackbench")``'s frame).
COLUMNS = (
    "bench",
    "children",
    "jobs",
    "rep",
    "jobs_per_min",
    "jobs_per_min_per_child",
    "jti",
    "real_s",
    "cpu_s",
    "child_user_s",
    "child_sys_s",
    "std_dev_s",
    "kernel_release",
    "cpus",
    "cpu_model",
    "date",
    "loadavg",
)
_SCHEMA: dict[str, Any] = {
    "bench": pl.String,
    "children": pl.Int64,
    "jobs": pl.Int64,
    "rep": pl.Int64,
    **{c: pl.Float64 for c in COLUMNS[4:12]},
    "kernel_release": pl.String,
    "cpus": pl.Int64,
    "cpu_model": pl.String,
    "date": pl.String,
    "loadavg": pl.Float64,
}
#: At most this many bytes of a CSV are read (one load point is ~100 B).
CSV_MAX_BYTES = 1 << 20


#: A number as reaim prints it (``%.2f`` or an integer): ASCII digits.
_NUMBER = re.compile(r"[0-9]{1,15}(?:\.[0-9]+)?", re.ASCII)


def _number(field: str, token: str, lineno: int, line: str) -> float:
    tok = token.strip()
    v = float(tok) if _NUMBER.fullmatch(tok) else math.nan
    if not math.isfinite(v):
        raise MeasureError(
            f"reaim CSV line {lineno}: {field} is {tok[:40]!r}, expected a number >= 0 "
            f"(line {line.strip()[:200]!r})"
        )
    return v


def parse_reaim_csv(text: str) -> dict[str, float]:
    """The last load point of re-aim-7's ``PREFIX.csv``: a dict of
    ``children`` (its ``Forks``), the ``CSV_FIELDS`` columns and ``cpu_s``
    (children's user + system time). The first non-empty line must be
    ``CSV_HEADER``; a missing or different header, a row of another field
    count, or a field that is not a plain decimal number >= 0 is a
    ``MeasureError`` naming the line (its number and text)."""
    if not isinstance(text, str):
        raise ConfigTypeError(f"invalid type for text: got {type_name(text)}, expected str")
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip()]
    if not lines:
        raise MeasureError("reaim CSV is empty; expected its header and a load point's row")
    n0, head = lines[0]
    got = tuple(f.strip() for f in head.split(","))
    if got != CSV_HEADER:
        raise MeasureError(
            f"reaim CSV line {n0}: header {head.strip()[:200]!r}; expected {','.join(CSV_HEADER)!r}"
        )
    if len(lines) < 2:
        raise MeasureError(f"reaim CSV has a header but no load point (line {n0} is the last)")
    for lineno, line in lines[1:]:
        fields = line.split(",")
        if len(fields) != len(CSV_HEADER):
            raise MeasureError(
                f"reaim CSV line {lineno}: {len(fields)} fields, expected {len(CSV_HEADER)} "
                f"(line {line.strip()[:200]!r})"
            )
        for name, tok in zip(CSV_HEADER, fields, strict=True):
            _number(name, tok, lineno, line)
    lineno, line = lines[-1]
    vals = dict(zip(CSV_HEADER, line.split(","), strict=True))
    forks = _number("Forks", vals["Forks"], lineno, line)
    if forks < 1 or forks != int(forks):
        raise MeasureError(
            f"reaim CSV line {lineno}: Forks is {vals['Forks'].strip()!r}, expected a whole "
            f"number of children >= 1 (line {line.strip()[:200]!r})"
        )
    out: dict[str, float] = {"children": forks}
    for k, col in CSV_FIELDS.items():
        out[col] = _number(k, vals[k], lineno, line)
    for k in ("jobs_per_min", "real_s"):
        if out[k] <= 0:
            raise MeasureError(
                f"reaim CSV line {lineno}: {k} is 0: the run was shorter than reaim's clock tick "
                f"(10 ms here); run more jobs per child (line {line.strip()[:200]!r})"
            )
    out["cpu_s"] = out["child_user_s"] + out["child_sys_s"]
    return out


def reaim_dir(reaim: Any) -> Path:
    """``reaim`` (a directory: ``measure``'s parameter) checked: it holds
    the executable ``reaim`` and the regular files ``workfile.compute`` and
    ``reaim.config``; anything else is a ``ConfigError`` naming the
    parameter, the path and what is missing."""
    if not isinstance(reaim, str | os.PathLike):
        raise ConfigTypeError(
            f"invalid type for reaim: got {type_name(reaim)} {show(reaim)}, expected the path "
            "of re-aim-7's build directory (with reaim, workfile.compute and reaim.config)"
        )
    try:
        d = Path(reaim).expanduser()
        is_dir = d.is_dir()
    except (RuntimeError, ValueError, OSError) as e:  # ~nouser, a NUL byte, a long name
        raise ConfigError(f"invalid reaim={show(str(reaim))}: {e}") from None
    if not is_dir:
        raise ConfigError(
            f"invalid reaim={str(d)!r}: not a directory; expected re-aim-7's build directory "
            "holding reaim, workfile.compute and reaim.config (docs/guide/workloads.md, "
            "'AIM7 in the sitting')"
        )
    for name in REAIM_FILES:
        p = d / name
        try:
            st = p.stat()
        except OSError as e:
            raise ConfigError(
                f"invalid reaim={str(d)!r}: no {name} there ({e.strerror}); expected "
                f"{', '.join(REAIM_FILES)}"
            ) from None
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"invalid reaim={str(d)!r}: {name} is not a regular file")
        if name == "reaim" and not os.access(p, os.X_OK):
            raise ConfigError(f"invalid reaim={str(d)!r}: {name} is not executable")
    return d


def reaim_command(d: Path, children: int, jobs: int, prefix: Path) -> list[str]:
    """One load point of ``children`` children, ``jobs`` jobs each (``-j``)."""
    return [
        str(d / "reaim"),
        f"-s{children}",
        f"-e{children}",
        "-i1",
        "-t",
        f"-j{jobs}",
        "-f",
        str(d / "workfile.compute"),
        "-c",
        str(d / "reaim.config"),
        "-l",
        str(prefix),
    ]


def measure_aim7(
    children: Sequence[int],
    reaim: Any,
    jobs: int,
    reps: int,
    progress: bool,
    runner: Callable[[list[str], Path], Any],
    host_info: Callable[[], dict[str, Any]],
) -> pl.DataFrame:
    """``measure("aim7", ...)``'s runs (its arguments already checked but
    ``reaim``): reps outermost, every children count in each rep, each run
    ``runner(cmd, cwd)`` in a fresh temporary directory; a run that exits
    non-zero or leaves no CSV is a ``MeasureError`` with its output's tail.
    """
    d = reaim_dir(reaim)
    bar = None
    if progress:
        from .._progress import progress_bar

        bar = progress_bar(total=reps * len(children), desc="re-aim-7", unit="run")
    rows: list[dict[str, Any]] = []
    try:
        for rep in range(reps):
            for n in children:
                host = host_info()
                with tempfile.TemporaryDirectory(prefix="schedlab-reaim-") as tmp:
                    prefix = Path(tmp) / "run"
                    cmd = reaim_command(d, n, jobs, prefix)
                    p = run_one(
                        functools.partial(_in_dir, runner, Path(tmp)), cmd, "check the reaim build"
                    )
                    code, stdout, stderr = completed_output(p, cmd, strict=False)
                    out = stdout + stderr
                    csv = prefix.with_suffix(".csv")
                    if code != 0:
                        raise MeasureError(f"{' '.join(cmd)} exited with {code}:\n{out[-2000:]}")
                    if not csv.is_file():
                        raise MeasureError(
                            f"{' '.join(cmd)} wrote no {csv.name} (is reaim.config's DISKDIR "
                            f"there?):\n{out[-2000:]}"
                        )
                    with csv.open("rb") as f:  # written by reaim in our own directory
                        raw = f.read(CSV_MAX_BYTES + 1)
                    if len(raw) > CSV_MAX_BYTES:
                        raise MeasureError(
                            f"reaim's {csv.name} is larger than {CSV_MAX_BYTES} bytes; one "
                            "load point is about 100"
                        )
                    got = parse_reaim_csv(raw.decode("utf-8", "replace"))
                if got["children"] != n:
                    raise MeasureError(
                        f"reaim ran {int(got['children'])} children where -s{n} -e{n} asked {n}"
                    )
                rows.append(
                    {
                        "bench": "aim7",
                        "children": n,
                        "jobs": jobs,
                        "rep": rep,
                        **{k: v for k, v in got.items() if k != "children"},
                        **host,
                    }
                )
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return pl.DataFrame(rows, schema=_SCHEMA).select(COLUMNS)


def _in_dir(runner: Callable[[list[str], Path], Any], cwd: Path, cmd: list[str]) -> Any:
    """``runner(cmd, cwd)``, as ``run_one`` calls a runner: with the command alone."""
    return runner(cmd, cwd)
