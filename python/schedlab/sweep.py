"""``sweep``: a grid of configurations × replicates, run in parallel, as one
polars DataFrame — locally on a rayon pool, or chunked over any
``concurrent.futures`` executor (Dask, Ray, a process pool)."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from . import _core
from ._check import (
    interval_to_ns,
    is_list,
    need_bool,
    need_int,
    seconds_to_ns,
    show,
    type_name,
)
from .config import CostModel, Kernel, Machine
from .exceptions import ConfigError, ConfigTypeError
from .run import _costs, _kernel, _machine, _workload, config_row
from .workloads import Workload

ProgressArg = bool | Callable[[int, int], None]


def derive_seed(seed: int, point: int, replicate: int) -> int:
    """The seed of run (point, replicate) of a sweep seeded ``seed``:
    SplitMix64 mixing, so it depends on nothing else (thread count, chunking,
    executor, order). Computed by the core (the one derivation); each
    argument an integer from 0 to 2**64 - 1."""
    return _core.derive_seed(seed, point, replicate)


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep. ``partial`` holds the rows that finished (they
    are also in the checkpoint file, if one was given)."""

    def __init__(self, partial: pl.DataFrame) -> None:
        super().__init__("sweep interrupted")
        self.partial = partial


@dataclass
class _Run:
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
        row: dict[str, Any] = {"point": self.point, "replicate": self.replicate, **self.base_row}
        row["seed"] = self.seed
        return row

    @property
    def spec(self) -> dict[str, Any] | None:
        return None if self.base_spec is None else {**self.base_spec, "seed": self.seed}

    @property
    def runnable(self) -> dict[str, Any]:
        spec = self.spec
        assert spec is not None
        return spec


def _grid_keys(workload: Workload) -> list[str]:
    return (
        ["machine", "kernel"]
        + Kernel.fields()
        + CostModel.fields()
        + [f"workload.{p}" for p in Workload.parameters(workload.kind)]
    )


def _normalise_grid(grid: Mapping[str, Any] | None, workload: Workload) -> dict[str, list[Any]]:
    if grid is None:
        return {}
    if not isinstance(grid, Mapping):
        raise ConfigTypeError(
            f"invalid type for grid: got {type_name(grid)}, expected a dict of lists"
        )
    allowed = _grid_keys(workload)
    out: dict[str, list[Any]] = {}
    for k, v in grid.items():
        if k not in allowed:
            raise ConfigError(
                f"invalid grid key {k!r}: expected 'machine', 'kernel', a Kernel field, a "
                f"CostModel field or 'workload.<param>' with <param> one of "
                f"{', '.join(Workload.parameters(workload.kind))}"
            )
        if not is_list(v) or len(v) == 0:
            raise ConfigError(f"invalid grid[{k!r}]={v!r}: expected a non-empty list of values")
        out[k] = [x.item() if isinstance(x, np.generic) else x for x in v]
    return out


def _resolve(
    machine: Machine,
    kernel: Kernel,
    costs: CostModel | None,
    workload: Workload,
    point: Mapping[str, Any],
) -> tuple[Machine, Kernel, CostModel, Workload]:
    m = _machine(point["machine"]) if "machine" in point else machine
    k = _kernel(point["kernel"]) if "kernel" in point else kernel
    if "kernel" in point and kernel.changes():
        # the base kernel's own changes stay on top of a swept preset
        k = k.replace(**kernel.changes())
    kf = {f: point[f] for f in Kernel.fields() if f in point}
    if kf:
        k = k.replace(**kf)
    c = costs if costs is not None else CostModel.preset(m)
    cf = {f: point[f] for f in CostModel.fields() if f in point}
    if cf:
        c = c.replace(**cf)
    wf = {f[len("workload.") :]: v for f, v in point.items() if f.startswith("workload.")}
    w = workload.replace(**wf) if wf else workload
    return m, k, c, w


def _spec(
    m: Machine,
    k: Kernel,
    c: CostModel,
    w: Workload,
    seed: int,
    duration_ns: int | None,
    interval_ns: int,
) -> dict[str, Any]:
    return {
        "machine": m.to_dict(),
        "kernel_base": k.name,
        "kernel": {f: v for f, v in k.to_dict().items() if f != "name"},
        "cost": c.to_dict(),
        "workload_kind": w.kind,
        "workload": w.params,
        "seed": seed,
        "duration_ns": duration_ns,
        "interval_ns": interval_ns,
    }


def _grid_points(grid: dict[str, list[Any]]) -> Iterable[dict[str, Any]]:
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        yield dict(zip(keys, values, strict=True))


def _resolve_point(
    machine: Machine,
    kernel: Kernel,
    costs: CostModel | None,
    workload: Workload,
    point: Mapping[str, Any],
    duration_s: float | None,
    duration_ns: int | None,
    interval_ns: int,
) -> tuple[dict[str, Any], dict[str, Any] | None, str | None]:
    """A point's configuration row and spec (its replicates share them), or
    the error that makes it invalid."""
    try:
        m, k, c, w = _resolve(machine, kernel, costs, workload, point)
        return (
            config_row(m, k, c, w, 0, duration_s),
            _spec(m, k, c, w, 0, duration_ns, interval_ns),
            None,
        )
    except (ValueError, TypeError) as e:
        return {}, None, str(e)
    except OverflowError as e:  # a value too large for the core (a safety net)
        return {}, None, f"invalid grid point {_point_text(point)}: {e}"


def _point_runs(
    p: int,
    point: Mapping[str, Any],
    resolved: tuple[dict[str, Any], dict[str, Any] | None, str | None],
    kinds: Mapping[str, set[type]],
    replicates: int,
    seed: int,
) -> list[_Run]:
    base_row, base_spec, err = resolved
    if err is not None:
        base_row, err = _error_row(point, err, kinds)
    return [
        _Run(p, r, derive_seed(seed, p, r), base_row, base_spec, err) for r in range(replicates)
    ]


def _runs(
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
) -> list[_Run]:
    """Every run of ``points`` (a short list: ``bisect``'s), all resolved
    (validated) before any run: an invalid point becomes "error" rows."""
    pts = list(points)
    resolved = [
        _resolve_point(machine, kernel, costs, workload, pt, duration_s, duration_ns, interval_ns)
        for pt in pts
    ]
    kinds = _column_kinds(
        [config_row(machine, kernel, costs or CostModel.preset(machine), workload, 0, duration_s)],
        [row for row, spec, _ in resolved if spec is not None],
    )
    return [
        run
        for p, (pt, res) in enumerate(zip(pts, resolved, strict=True))
        for run in _point_runs(p, pt, res, kinds, replicates, seed)
    ]


class _RunList:
    """Planned runs held in a list (``bisect``'s few), with ``_Plan``'s
    interface for ``_execute``."""

    def __init__(self, runs: list[_Run]) -> None:
        self._runs = runs
        self._seeds: dict[tuple[int, int], int] | None = None

    @property
    def n_runs(self) -> int:
        return len(self._runs)

    def __iter__(self) -> Iterator[_Run]:
        return iter(self._runs)

    def seed_of(self, point: Any, replicate: Any) -> int | None:
        if self._seeds is None:
            self._seeds = {(r.point, r.replicate): r.seed for r in self._runs}
        return self._seeds.get((point, replicate))


_I64 = (-(2**63), 2**63 - 1)


def _column_kinds(
    base: Sequence[Mapping[str, Any]], valid: Sequence[Mapping[str, Any]]
) -> dict[str, set[type]]:
    """The Python types of each configuration column's values: those of the
    valid points' rows (what the frame's column holds), or, for a column no
    valid point has, those of the unswept configuration's row."""
    kinds: dict[str, set[type]] = {}
    for rows in (valid, base):
        seen: dict[str, set[type]] = {}
        for row in rows:
            for key, v in row.items():
                if v is not None and key not in kinds:
                    seen.setdefault(key, set()).add(type(v))
        kinds.update(seen)
    return kinds


def _fits(v: Any, kinds: set[type]) -> bool:
    """Whether ``v`` can sit in a column holding values of ``kinds`` without
    changing its dtype (nor overflowing it)."""
    if v is None:
        return True
    if isinstance(v, bool):
        return bool in kinds
    if isinstance(v, int):
        return (int in kinds and _I64[0] <= v <= _I64[1]) or (float in kinds and abs(v) <= 2**53)
    if isinstance(v, float):
        return float in kinds
    if isinstance(v, str):
        return str in kinds and _utf8(v)
    return False


def _utf8(s: str) -> bool:
    """Whether ``s`` has a UTF-8 form (a polars string column needs one;
    a lone surrogate such as U+D800 has none)."""
    try:
        s.encode()
    except UnicodeEncodeError:
        return False
    return True


def _point_text(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={show(v)}" for k, v in point.items())


def _error_row(
    point: Mapping[str, Any], err: str, kinds: Mapping[str, set[type]]
) -> tuple[dict[str, Any], str]:
    """The configuration columns of an invalid point's rows, and its
    status_detail. Each column of the valid rows is there (null, the
    configuration being unknown), with the point's grid values where they
    fit the column's type; a value that does not (text in a number column,
    an int beyond 64 bits, a list) is left null and written, as text, into
    the status_detail, so that the frame's dtypes never depend on it."""
    row: dict[str, Any] = dict.fromkeys(kinds)
    text = []
    for key, v in point.items():
        if key in kinds and _fits(v, kinds[key]):
            row[key] = v
        else:
            row[key] = None
            text.append(f"{key}={show(v)}")
    if text:
        err = f"{err} [grid values not in their columns: {', '.join(text)}]"
    return row, err


def _run_chunk(specs: list[dict[str, Any]], threads: int) -> list[_core.BatchOutcome]:
    """Run sweep specs on this worker (what executors call)."""
    return _core.run_batch(specs, threads)


def _finish(run: _Run, outcome: Mapping[str, Any]) -> dict[str, Any]:
    row = dict(run.row)
    row["status"] = outcome["status"]
    row["status_detail"] = outcome["status_detail"]
    row.update(outcome["metrics"])
    row["wall_s"] = outcome["wall_s"]
    return row


def _failed(run: _Run) -> dict[str, Any]:
    row = dict(run.row)
    row["status"] = "error"
    row["status_detail"] = run.error
    row["wall_s"] = 0.0
    return row


def _frame(rows: Iterable[dict[str, Any]]) -> pl.DataFrame:
    rows = sorted(rows, key=lambda r: (r["point"], r["replicate"]))
    if not rows:
        return pl.DataFrame()
    # The configuration (each row's keys before "status") first, then status,
    # status_detail and the metrics, wall_s last; each in first-seen order,
    # so that an error row first does not put configuration after metrics.
    head: dict[str, None] = {}
    tail: dict[str, None] = {}
    for r in rows:
        cols = head
        for k in r:
            if k == "status":
                cols = tail
            if k not in head and k not in tail:
                cols[k] = None
    order = [c for c in [*head, *tail] if c != "wall_s"] + ["wall_s"]
    return pl.from_dicts(rows, infer_schema_length=None).select(order)


def _fingerprint(runs: Iterable[_Run]) -> str:
    h = hashlib.sha256()
    for r in runs:
        h.update(
            json.dumps(
                [r.point, r.replicate, r.spec, r.error], sort_keys=True, default=str
            ).encode()
        )
    return h.hexdigest()


def _content_hash(df: pl.DataFrame) -> str:
    """A sha256 of a frame's columns (names, dtypes, nulls and values), the
    same for the frame written and the frame read back from Parquet."""
    h = hashlib.sha256()
    h.update(f"{df.height}\0".encode())
    for name, s in zip(df.columns, df.get_columns(), strict=True):
        dtype = s.dtype
        h.update(f"{len(name)}:{name}\0{dtype}\0".encode())
        if dtype == pl.Null:
            continue
        h.update(s.is_null().to_numpy().tobytes())
        if dtype.is_numeric():
            a = s.fill_null(0).to_numpy()
            h.update(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
        elif dtype == pl.Boolean:
            h.update(s.fill_null(False).to_numpy().tobytes())
        elif dtype == pl.String:
            t = s.fill_null("")
            h.update(t.str.len_bytes().cast(pl.UInt64).to_numpy().astype("<u8").tobytes())
            h.update("".join(t.to_list()).encode())
        else:
            h.update(json.dumps(s.to_list(), sort_keys=True, default=str).encode())
    return h.hexdigest()


# What reading a corrupt Parquet file can raise: polars errors, OSError, and
# polars' panics (a BaseException, not an Exception).
_READ_ERRORS = (Exception, pl.exceptions.PanicException)


def _bad_checkpoint(path: Path, what: str) -> ConfigError:
    return ConfigError(
        f"invalid checkpoint={str(path)!r}: {what}; remove it or choose another path"
    )


def _digest_path(path: Path) -> Path:
    """The checkpoint's byte-digest file, beside it: ``<checkpoint>.sha256``."""
    return path.with_name(path.name + ".sha256")


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_bytes(path: Path) -> None:
    """Refuse a checkpoint whose bytes are not those schedlab wrote, before
    any Parquet reader sees them: a damaged length field can make polars
    abort the interpreter (seen with polars 2.1.0 on bit-flipped files),
    which no ``except`` can catch. ``<checkpoint>.sha256`` lists the digests
    of the file schedlab last wrote and of the one before (see
    ``_save_checkpoint``: a kill between its two renames leaves either)."""
    digest = _digest_path(path)
    try:
        accepted = json.loads(digest.read_text())["accept"]
    except FileNotFoundError:
        raise _bad_checkpoint(
            path,
            f"its digest file {str(digest)!r} is missing (copy it along with the checkpoint)",
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise _bad_checkpoint(
            path, f"its digest file {str(digest)!r} cannot be read ({type(e).__name__})"
        ) from None
    try:
        actual = _file_sha256(path)
    except OSError as e:
        raise _bad_checkpoint(path, f"it cannot be read ({type(e).__name__}: {e})") from None
    if not isinstance(accepted, list) or actual not in accepted:
        raise _bad_checkpoint(
            path, "its bytes do not match the digest schedlab wrote (altered or corrupt)"
        )


def _load_checkpoint(path: Path, fingerprint: str, runs: _Planned) -> list[dict[str, Any]]:
    """The resumable rows of the checkpoint at ``path``, after checking that
    its bytes are those schedlab wrote (``<checkpoint>.sha256``), it reads,
    was written by this schedlab version for this sweep (``fingerprint``),
    is unaltered (its content hash) and holds only planned runs
    (``runs``), each once; else a ConfigError."""
    if not path.exists():
        return []
    _check_bytes(path)
    try:
        meta = pl.read_parquet_metadata(path)
    except _READ_ERRORS as e:  # a truncated or corrupt file
        raise _bad_checkpoint(path, f"it cannot be read ({type(e).__name__}: {e})") from None
    version = meta.get("schedlab.version")
    if version != _core.__version__:
        raise _bad_checkpoint(
            path,
            f"it was written by schedlab version {version!r}, not this one ({_core.__version__!r})",
        )
    if meta.get("schedlab.sweep") != fingerprint:
        raise _bad_checkpoint(path, "it holds a different sweep")
    expected = meta.get("schedlab.content_sha256")
    if not expected:
        raise _bad_checkpoint(path, "it has no content hash")
    try:
        df = pl.read_parquet(path)
    except _READ_ERRORS as e:
        raise _bad_checkpoint(path, f"it cannot be read ({type(e).__name__}: {e})") from None
    if _content_hash(df) != expected:
        raise _bad_checkpoint(path, "its rows do not match its content hash (altered or corrupt)")
    if df.height == 0:
        return []
    missing = [c for c in ("point", "replicate", "seed", "status") if c not in df.columns]
    if missing:
        raise _bad_checkpoint(path, f"it has no column {', '.join(missing)}")
    seen: set[tuple[Any, Any]] = set()
    rows = df.to_dicts()
    for row in rows:
        key = (row["point"], row["replicate"])
        seed = runs.seed_of(*key)
        if seed is None:
            raise _bad_checkpoint(
                path, f"it holds a row (point={key[0]!r}, replicate={key[1]!r}) not in the sweep"
            )
        if key in seen:
            raise _bad_checkpoint(
                path, f"it holds the row (point={key[0]}, replicate={key[1]}) more than once"
            )
        seen.add(key)
        if row["seed"] != seed:
            raise _bad_checkpoint(
                path,
                f"its row (point={key[0]}, replicate={key[1]}) has seed={row['seed']!r}, "
                f"not the sweep's {seed}",
            )
    return [r for r in rows if r["status"] != "cancelled"]


def _save_checkpoint(path: Path, rows: list[dict[str, Any]], fingerprint: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    df = _frame(rows)
    df.write_parquet(
        tmp,
        metadata={
            "schedlab.sweep": fingerprint,
            "schedlab.version": _core.__version__,
            "schedlab.build_profile": _core.build_profile,
            "schedlab.content_sha256": _content_hash(df),
        },
    )
    # The digest file accepts the new bytes before they replace the old
    # ones, and still the old: a kill between the two renames leaves a
    # checkpoint the digest accepts, whichever of the two files it is.
    digest = _digest_path(path)
    accept = [_file_sha256(tmp)]
    if path.exists():
        try:
            accept.append(_file_sha256(path))
        except OSError:
            pass
    dtmp = digest.with_name(digest.name + ".tmp")
    dtmp.write_text(json.dumps({"accept": accept}))
    os.replace(dtmp, digest)
    os.replace(tmp, path)


def _progress_bar(progress: ProgressArg, total: int, done: int) -> Callable[[int], None]:
    if callable(progress):
        count = [done]

        def cb(n: int) -> None:
            count[0] += n
            progress(count[0], total)

        return cb
    if not progress:
        return lambda n: None
    from ._progress import progress_bar

    bar = progress_bar(total=total, initial=done, desc="schedlab sweep", unit="run")

    def upd(n: int) -> None:
        bar.update(n)
        if bar.n >= total:
            bar.close()

    return upd


def sweep(
    machine: Machine | str,
    kernel: Kernel | str,
    workload: Workload,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    replicates: int = 1,
    seed: int = 0,
    threads: int | None = None,
    progress: ProgressArg = True,
    executor: Executor | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    costs: CostModel | None = None,
    duration_s: float | None = None,
    interval_s: float = 0.1,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Run ``workload`` over the cartesian product of ``grid`` × ``replicates``.

    Grid keys: any ``Kernel`` field, ``"kernel"`` and ``"machine"`` (preset
    names), any ``CostModel`` field, and ``"workload.<param>"``. Returns a
    polars DataFrame, a row per run in (point, replicate) order: ``point``,
    ``replicate``, the configuration columns (every grid key among them),
    ``seed``, ``status`` (``"ok"``, ``"time_limit"``, ``"deadlock"``,
    ``"stalled"``, ``"error"``), ``status_detail``, every metric, and
    ``wall_s`` (the only wall-clock column). A point whose configuration is
    invalid is an ``"error"`` row, one whose overhead leaves its tasks no CPU
    time a ``"stalled"`` row; the others are unaffected.

    Per-run seeds derive from (``seed``, point, replicate), so the frame does
    not depend on ``threads``, chunking or ``executor``. ``threads=None``
    uses every core. ``checkpoint="x.parquet"`` writes finished rows as it
    goes; running the same sweep again resumes it. ``executor`` is any
    ``concurrent.futures.Executor`` (``dask.distributed.Client.get_executor()``,
    a Ray or process pool): the runs are cut into chunks, each a native sweep
    on a worker (``threads`` per chunk, default 1). Ctrl-C stops promptly and
    raises ``SweepInterrupted`` carrying every finished run's row (also those
    of the chunk under way) and cancels an executor's chunks not started. Runs take no
    periodic vmstat samples (rows carry metrics only), so ``interval_s`` has
    no effect; every number but ``events`` equals ``simulate``'s.
    """
    plan = _plan(
        machine,
        kernel,
        workload,
        grid,
        replicates=replicates,
        seed=seed,
        threads=threads,
        progress=progress,
        executor=executor,
        costs=costs,
        duration_s=duration_s,
        interval_s=interval_s,
    )
    return _execute(plan, plan.nthreads, progress, executor, checkpoint, chunk_size)


#: The most runs a sweep may plan (points × replicates).
MAX_RUNS = 10_000_000


@dataclass
class _Plan:
    """A sweep's runs, planned lazily: iterating resolves (validates) the
    grid's points one at a time, in order, so planning holds one point's
    configuration at a time whatever the grid's size. Each point is the
    same as the eager ``_runs`` makes (the same rows, specs, errors)."""

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

    @property
    def n_points(self) -> int:
        return math.prod(len(v) for v in self.grid.values())

    @property
    def n_runs(self) -> int:
        return self.n_points * self.replicates

    def __iter__(self) -> Iterator[_Run]:
        for p, point in enumerate(_grid_points(self.grid)):
            yield from self.runs_of(p, point)

    def runs_of(self, p: int, point: Mapping[str, Any]) -> list[_Run]:
        """The runs of point number ``p`` (``point``), one per replicate."""
        res = _resolve_point(
            self.machine,
            self.kernel,
            self.costs,
            self.workload,
            point,
            self.duration_s,
            self.duration_ns,
            self.interval_ns,
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
        three parts is (``_resolve`` checks each on its own)."""
        a = [k for k in self.grid if k == "machine" or k in CostModel.fields()]
        b = [k for k in self.grid if k == "kernel" or k in Kernel.fields()]
        c = [k for k in self.grid if k.startswith("workload.")]
        return [a, b, c]

    def _valid(self, point: Mapping[str, Any]) -> bool:
        try:
            _resolve(self.machine, self.kernel, self.costs, self.workload, point)
        except (ValueError, TypeError, OverflowError):
            return False
        return True

    def _subpoints(self, keys: list[str]) -> Iterable[dict[str, Any]]:
        return _grid_points({k: self.grid[k] for k in keys})

    def count_valid(self, budget: int = 100_000) -> int | None:
        """The number of valid points, from each part's valid sub-points
        (their product), or None if the parts hold more than ``budget``
        sub-points in all."""
        parts = self._parts()
        if sum(math.prod(len(self.grid[k]) for k in keys) for keys in parts) > budget:
            return None
        return math.prod(sum(map(self._valid, self._subpoints(keys))) for keys in parts)


def _plan_kinds(
    machine: Machine,
    kernel: Kernel,
    costs: CostModel | None,
    workload: Workload,
    grid: dict[str, list[Any]],
    duration_s: float | None,
    plan: _Plan,
) -> dict[str, set[type]]:
    """``_column_kinds`` of the whole grid without resolving every point.
    Every column but the ``workload.<arg>`` ones holds one type whatever the
    point (the core normalises Kernel and CostModel fields; names are
    text), so only the swept workload arguments' types depend on which
    points are valid: those of the valid workload sub-points, if some
    machine-and-costs and some kernel sub-point is valid too."""
    base_row = config_row(
        machine, kernel, costs or CostModel.preset(machine), workload, 0, duration_s
    )
    kinds = _column_kinds([base_row], [])
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


def _plan(
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
) -> _Plan:
    """Check ``sweep``'s arguments and plan its runs (lazily: see ``_Plan``;
    each invalid point's become "error" rows, the others run)."""
    m = _machine(machine)
    k = _kernel(kernel)
    workload = _workload(workload)
    costs = _costs(costs)
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
    g = _normalise_grid(grid, workload)
    n_runs = math.prod(len(v) for v in g.values()) * reps
    if n_runs > MAX_RUNS:
        raise ConfigError(
            f"invalid grid: {n_runs} runs (points x replicates={reps}); expected at most {MAX_RUNS}"
        )
    plan = _Plan(
        m, k, costs, workload, g, reps, seed, duration_s, duration_ns, interval_ns, nthreads, {}
    )
    plan.kinds = _plan_kinds(m, k, costs, workload, g, duration_s, plan)
    return plan


_Planned = _Plan | _RunList

#: Chunks never hold more runs than this unless ``chunk_size`` says so, and
#: an executor never has more than ``_WINDOW`` chunks submitted at once: a
#: sweep's planned runs in memory stay bounded whatever its size.
_MAX_CHUNK = 10_000
_WINDOW = 64


def _execute(
    runs: _Planned | list[_Run],
    nthreads: int,
    progress: ProgressArg,
    executor: Executor | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    chunk_size: int | None = None,
    rows: list[dict[str, Any]] | None = None,
    fingerprint: str | None = None,
) -> pl.DataFrame:
    """Run ``runs`` (locally or on ``executor``), chunk by chunk as the plan
    yields them, checkpointing as they finish; Ctrl-C raises
    ``SweepInterrupted`` with the finished rows. ``rows``: finished rows to
    start from (the checkpoint's and any run before, e.g. the CLI's
    calibration runs), else the checkpoint is read here; ``fingerprint``:
    the plan's, if already computed."""
    planned = _RunList(runs) if isinstance(runs, list) else runs
    path = Path(checkpoint) if checkpoint is not None else None
    fp = (fingerprint or _fingerprint(planned)) if path else ""
    if rows is None:
        rows = _load_checkpoint(path, fp, planned) if path else []
    finished = {(r["point"], r["replicate"]) for r in rows}
    total = planned.n_runs
    left = total - len(finished)
    tick = _progress_bar(progress, total, total - left)
    cores = os.cpu_count() or 1
    # Local chunks: big enough to keep every core busy (a chunk waits for its
    # slowest run), small enough for ~32 progress/checkpoint steps.
    size = chunk_size or min(
        _MAX_CHUNK,
        max(1, left // (4 * cores)) if executor else max(4 * cores, -(-left // 32)),
    )
    size = need_int("chunk_size", size, lo=1, hi=10_000_000)
    # rows added since the last checkpoint write, runs not yet counted
    state = {"unsaved": 0, "untold": 0, "ran": 0}

    def chunks() -> Iterator[list[_Run]]:
        """The runs left to do, ``size`` at a time; an invalid point's runs
        become rows as they are reached."""
        chunk: list[_Run] = []
        for r in planned:
            if (r.point, r.replicate) in finished:
                continue
            if r.base_spec is None:
                rows.append(_failed(r))
                state["unsaved"] += 1
                state["untold"] += 1
                continue
            chunk.append(r)
            if len(chunk) == size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    def save() -> None:
        if path:
            _save_checkpoint(path, rows, fp)
        state["unsaved"] = 0

    def done(chunk: list[_Run], outcomes: Sequence[Mapping[str, Any]]) -> None:
        rows.extend(_finish(r, o) for r, o in zip(chunk, outcomes, strict=True))
        state["ran"] += 1
        save()
        tick(len(chunk) + state["untold"])
        state["untold"] = 0

    def keep_finished(chunk: list[_Run], outcomes: Sequence[Mapping[str, Any]]) -> None:
        # An interrupted chunk: its finished runs (rows equal to an
        # uninterrupted sweep's), not those cut short or never started.
        have = {(r["point"], r["replicate"]) for r in rows}
        rows.extend(
            _finish(r, o)
            for r, o in zip(chunk, outcomes, strict=True)
            if o["status"] != "cancelled" and (r.point, r.replicate) not in have
        )

    # the chunks submitted to the executor and not yet taken in
    futures: dict[Future[list[_core.BatchOutcome]], list[_Run]] = {}

    def salvage_futures() -> None:
        # Ctrl-C with an executor: the chunks not started are cancelled (a
        # running one cannot be), those that finished are kept; those not
        # yet submitted never are.
        for f in futures:
            f.cancel()
        for f, chunk in futures.items():
            if f.done() and not f.cancelled():
                e = f.exception()
                if e is None:
                    keep_finished(chunk, f.result())
                elif isinstance(e, _core.BatchInterrupted):
                    keep_finished(chunk, e.outcomes)

    try:
        if executor is None:
            for chunk in chunks():
                try:
                    outcomes = _core.run_batch([r.runnable for r in chunk], nthreads)
                except _core.BatchInterrupted as e:
                    keep_finished(chunk, e.outcomes)
                    raise
                done(chunk, outcomes)
        else:
            todo = chunks()
            while True:
                for c in itertools.islice(todo, _WINDOW - len(futures)):
                    futures[executor.submit(_run_chunk, [r.runnable for r in c], nthreads or 1)] = c
                if not futures:
                    break
                ready, _ = wait(futures, return_when=FIRST_COMPLETED)
                for f in ready:
                    done(futures[f], f.result())
                    del futures[f]
    except KeyboardInterrupt:
        # One Ctrl-C can surface twice: polars keeps its own SIGINT flag and
        # raises from its operation while Python's flag stays tripped, to fire
        # at the next call.  So no call may sit before the `try` (hence a
        # tuple, not range()), and the salvage is retried (each step of it
        # can be repeated).
        err: SweepInterrupted | None = None
        for _ in (1, 2, 3, 4, 5):
            try:
                salvage_futures()
                if path:
                    _save_checkpoint(path, rows, fp)
                err = SweepInterrupted(_frame(rows))
                break
            except KeyboardInterrupt:
                continue
        raise (err or SweepInterrupted(pl.DataFrame())) from None
    if state["untold"]:
        tick(state["untold"])
    if path and (state["unsaved"] or not state["ran"]):
        save()
    return _frame(rows)
