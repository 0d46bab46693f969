"""Running planned runs, chunk by chunk as the plan yields them: on the
local rayon pool (``_core.run_batch``) or on any ``concurrent.futures``
executor (``run_chunk`` on each worker), with the progress bar, the
checkpoint written as chunks finish, and Ctrl-C's salvage — every finished
run's row, raised as ``SweepInterrupted``."""

from __future__ import annotations

import itertools
import math
import numbers
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from pathlib import Path
from typing import Any

import polars as pl

from .. import _core
from .._check import error_text, need_int, short, type_name
from .._progress import ProgressArg, progress_ticker
from ..exceptions import ConfigError, OutputError, SimulationError
from .checkpoint import check_checkpoint_path, load_checkpoint, save_checkpoint, sweep_fingerprint
from .estimate import check_memory
from .plan import Planned, Run, RunList
from .rows import FinishedRows


def _rows_message(n: int, checkpoint: str | os.PathLike[str] | None) -> str:
    """Where a stopped sweep's ``n`` finished rows are."""
    rows = f"the rows of the {n} finished runs are in exc.partial" if n else "no run finished"
    if checkpoint is None:
        return f"{rows} (pass checkpoint=<file> to keep them on disk and resume the sweep)"
    ck = str(checkpoint)
    where = f"{rows} and in the checkpoint file {ck!r}" if n else rows
    return f"{where}; the same sweep with checkpoint={ck!r} resumes from it"


def _interrupted_message(n: int, checkpoint: str | os.PathLike[str] | None) -> str:
    return f"sweep interrupted: {_rows_message(n, checkpoint)}"


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep. ``partial`` holds the rows that finished (they
    are also in the checkpoint file ``checkpoint``, if one was given); the
    message says how many and where."""

    def __init__(
        self, partial: pl.DataFrame, checkpoint: str | os.PathLike[str] | None = None
    ) -> None:
        super().__init__(_interrupted_message(partial.height, checkpoint))
        self.partial = partial
        self.checkpoint = None if checkpoint is None else Path(checkpoint)


def run_chunk(specs: list[dict[str, Any]], threads: int) -> list[_core.BatchOutcome]:
    """Run sweep specs on this worker (what executors call)."""
    return _core.run_batch(specs, threads)


#: A run's outcome's statuses (``run_batch``'s).
_STATUSES = ("ok", "time_limit", "deadlock", "stalled", "error", "cancelled")


def _number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def checked_outcomes(
    n: int, result: Any, *, cancelled: bool = False
) -> Sequence[Mapping[str, Any]]:
    """``result`` itself if it is what ``run_chunk`` returns for a chunk of
    ``n`` runs (an executor's future gives it back): a list of ``n``
    outcomes, each a dict of ``status`` (one of ``_STATUSES``; ``cancelled``
    only when ``cancelled``: a chunk stopped by Ctrl-C), ``status_detail``
    (str or None), ``metrics`` (str to number or None) and ``wall_s`` (a
    finite number >= 0); else a ``ConfigError`` naming what is wrong."""
    expected = (
        f"expected a list of {n} run outcomes, as run_chunk returns them: dicts of status "
        f"({', '.join(_STATUSES)}), status_detail (str or None), metrics (str to number) and "
        "wall_s (a number)"
    )

    def bad(what: str) -> ConfigError:
        return ConfigError(f"invalid executor result for a chunk of {n} runs: {what}; {expected}")

    if not isinstance(result, Sequence) or isinstance(result, str | bytes):
        raise bad(f"got {type_name(result)} {short(result)}")
    if len(result) != n:
        raise bad(f"got {len(result)} outcomes")
    for i, o in enumerate(result):
        if not isinstance(o, Mapping):
            raise bad(f"outcome {i} is {type_name(o)} {short(o)}")
        for key in ("status", "status_detail", "metrics", "wall_s"):
            if key not in o:
                raise bad(f"outcome {i} has no {key!r}")
        checks: list[tuple[str, Any, bool]] = [
            (
                "status",
                o["status"],
                isinstance(o["status"], str)
                and o["status"] in _STATUSES
                and (cancelled or o["status"] != "cancelled"),
            ),
            ("status_detail", o["status_detail"], isinstance(o["status_detail"], str | None)),
            ("metrics", o["metrics"], isinstance(o["metrics"], Mapping)),
            ("wall_s", o["wall_s"], _number(o["wall_s"]) and 0 <= o["wall_s"] < math.inf),
        ]
        for key, v, ok in checks:
            if not ok:
                raise bad(f"outcome {i}'s {key} is {type_name(v)} {short(v)}")
        for k, v in o["metrics"].items():
            if not isinstance(k, str) or not (v is None or _number(v)):
                raise bad(f"outcome {i}'s metrics[{short(k)}] is {type_name(v)} {short(v)}")
    return result


#: Chunks never hold more runs than this unless ``chunk_size`` says so, and
#: an executor never has more than ``_WINDOW`` chunks submitted at once: a
#: sweep's planned runs in memory stay bounded whatever its size.
_MAX_CHUNK = 10_000
_WINDOW = 64
#: An executor's chunks are sized to take about this long on a worker, from
#: the finished runs' wall times (before any has finished: one run per
#: thread), so that progress, the checkpoint, the cancelling of chunks on
#: Ctrl-C and the balance between workers go at that grain.
_CHUNK_S = 0.5
#: With an executor, the checkpoint is written at most once per this many
#: seconds (and per 10 times its last write's duration): small chunks finish
#: many a second. Ctrl-C and the sweep's end always write it.
_SAVE_S = 2.0
#: How often the wait on an executor's chunks wakes to let Ctrl-C in: a
#: SIGINT handled on another thread does not wake a plain wait on futures.
_POLL_S = 0.2


def _now() -> float:
    return time.monotonic()


class _ChunkSizer:
    """The size of an executor's next chunk: ``threads`` runs until some have
    finished, then as many as take about ``_CHUNK_S`` on a worker running
    ``threads`` at a time (their mean wall time so far), at most
    ``_MAX_CHUNK``. Chunking never changes a row (each run's seed is its own)."""

    def __init__(self, threads: int) -> None:
        self.threads = max(1, threads)
        self.runs = 0
        self.wall_s = 0.0

    def finished(self, outcomes: Sequence[Mapping[str, Any]]) -> None:
        self.runs += len(outcomes)
        self.wall_s += sum(float(o["wall_s"]) for o in outcomes)

    def size(self) -> int:
        if not self.runs:
            return self.threads
        per_chunk_run = self.wall_s / self.runs / self.threads
        if per_chunk_run * _MAX_CHUNK <= _CHUNK_S:
            return _MAX_CHUNK
        return min(_MAX_CHUNK, max(self.threads, int(_CHUNK_S / per_chunk_run)))


class _Checkpoint:
    """The checkpoint file (if any), written as rows finish: ``due()`` writes
    it if rows were added, unless it was written less than ``every_s`` (and
    10 times that write's duration) ago; ``write()`` writes it now. A write
    that fails (a full disk) raises ``OutputError`` carrying every finished
    row; the file on disk stays the last one written."""

    def __init__(
        self, path: Path | None, fingerprint: str, rows: FinishedRows, every_s: float
    ) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.rows = rows
        self.every_s = every_s
        self.unsaved = 0
        self.written = False
        self._next = -math.inf

    def due(self) -> None:
        if self.unsaved and _now() >= self._next:
            self.write()

    def write(self) -> None:
        start = _now()
        if self.path is not None:
            # a failure raises OutputError, its partial every row written
            save_checkpoint(self.path, self.rows.frame(), self.fingerprint)
        end = _now()
        self._next = end + max(self.every_s, 10 * (end - start)) if self.every_s else -math.inf
        self.unsaved = 0
        self.written = True

    def close(self) -> None:
        """At the sweep's end: the rows not yet written (or an empty file)."""
        if self.path is not None and (self.unsaved or not self.written):
            self.write()


class _Execution:
    """One ``execute``: the finished rows, the chunks left, progress, the
    checkpoint and (with an executor) the chunks submitted and not yet
    taken in."""

    def __init__(
        self,
        planned: Planned,
        rows: FinishedRows,
        tick: Callable[[int], None],
        ckpt: _Checkpoint,
    ) -> None:
        self.planned = planned
        self.rows = rows
        self.tick = tick
        self.ckpt = ckpt
        self.untold = 0  # rows added, not yet counted by the progress
        #: The user code called last (named when its exception stops the sweep).
        self.stage = "the sweep"
        self.futures: dict[Future[list[_core.BatchOutcome]], list[Run]] = {}

    def chunks(self, size: Callable[[], int]) -> Iterator[list[Run]]:
        """The runs left to do, ``size()`` at a time (asked as each chunk is
        cut); an invalid point's runs become rows as they are reached."""
        chunk: list[Run] = []
        want = size()
        for r in self.planned:
            if (r.point, r.replicate) in self.rows:
                continue
            if r.base_spec is None:
                self.rows.add(r.failed_row())
                self.ckpt.unsaved += 1
                self.untold += 1
                continue
            chunk.append(r)
            if len(chunk) >= want:
                yield chunk
                chunk = []
                want = size()
        if chunk:
            yield chunk

    def done(self, chunk: list[Run], outcomes: Sequence[Mapping[str, Any]]) -> None:
        self.rows.extend(r.result_row(o) for r, o in zip(chunk, outcomes, strict=True))
        self.ckpt.unsaved += len(chunk)
        self.ckpt.due()
        self.stage = "the progress callback"
        self.tick(len(chunk) + self.untold)
        self.stage = "the sweep"
        self.untold = 0

    def keep_finished(self, chunk: list[Run], outcomes: Sequence[Mapping[str, Any]]) -> None:
        # An interrupted chunk: its finished runs (rows equal to an
        # uninterrupted sweep's), not those cut short or never started.
        self.rows.extend(
            r.result_row(o)
            for r, o in zip(chunk, outcomes, strict=True)
            if o["status"] != "cancelled" and (r.point, r.replicate) not in self.rows
        )

    def run_local(self, size: int, nthreads: int) -> None:
        for chunk in self.chunks(itertools.repeat(size).__next__):
            try:
                outcomes = _core.run_batch([r.runnable for r in chunk], nthreads)
            except _core.BatchInterrupted as e:
                self.keep_finished(chunk, e.outcomes)
                raise
            self.done(chunk, outcomes)

    def run_on(self, executor: Executor, threads: int, fixed: int | None) -> None:
        sizer = _ChunkSizer(threads)
        todo = self.chunks(sizer.size if fixed is None else itertools.repeat(fixed).__next__)
        futures = self.futures
        while True:
            for c in itertools.islice(todo, _WINDOW - len(futures)):
                self.stage = "the executor (its submit)"
                f = executor.submit(run_chunk, [r.runnable for r in c], threads)
                if not isinstance(f, Future):
                    raise ConfigError(
                        f"invalid executor: its submit() returned {type_name(f)} {short(f)}; "
                        "expected a concurrent.futures.Future (a concurrent.futures.Executor, "
                        "or Dask's client.get_executor())"
                    )
                futures[f] = c
                self.stage = "the sweep"
            if not futures:
                break
            ready, _ = wait(futures, timeout=_POLL_S, return_when=FIRST_COMPLETED)
            for f in ready:
                self.stage = "a chunk on the executor (its future's result)"
                outcomes = checked_outcomes(len(futures[f]), f.result())
                self.stage = "the sweep"
                sizer.finished(outcomes)
                self.done(futures[f], outcomes)
                del futures[f]

    def cancel_pending(self) -> None:
        """Cancel the submitted chunks not started (a running one cannot
        be), so that the executor's owner is not kept waiting for them."""
        for f in self.futures:
            f.cancel()

    def salvage_futures(self) -> None:
        # Ctrl-C with an executor: the chunks not started are cancelled,
        # those that finished are kept; those not yet submitted never are.
        self.cancel_pending()
        for f, chunk in self.futures.items():
            if f.done() and not f.cancelled():
                e = f.exception()
                result = f.result() if e is None else getattr(e, "outcomes", None)
                if e is None or isinstance(e, _core.BatchInterrupted):
                    try:
                        outcomes = checked_outcomes(len(chunk), result, cancelled=True)
                    except ConfigError:
                        continue  # a malformed result: its rows are not known
                    self.keep_finished(chunk, outcomes)


def _keep_rows(
    ex: _Execution, path: Path | None, fingerprint: str
) -> tuple[pl.DataFrame, Path | None]:
    """A stopped sweep's finished rows (with an executor, the chunks that
    finished meanwhile taken in) and the checkpoint they were written to:
    ``path``, or None when there is none or it could not be written (the
    rows are then only in memory). Each step can be repeated."""
    ex.salvage_futures()
    df = ex.rows.frame()
    if path:
        try:
            save_checkpoint(path, df, fingerprint)
        except OutputError:
            path = None
    return df, path


def execute(
    runs: Planned | list[Run],
    nthreads: int,
    progress: ProgressArg,
    executor: Executor | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    chunk_size: int | None = None,
    rows: FinishedRows | None = None,
    fingerprint: str | None = None,
    memory_limit: int | None = None,
) -> pl.DataFrame:
    """Run ``runs`` (locally or on ``executor``), chunk by chunk as the plan
    yields them, checkpointing as they finish; Ctrl-C raises
    ``SweepInterrupted`` with the finished rows, a checkpoint that cannot be
    written ``OutputError`` with them, and any exception cancels the
    executor's chunks not started. ``rows``: finished rows to start from
    (the checkpoint's and any run before, e.g. the CLI's timing runs), else
    the checkpoint is read here; ``fingerprint``: the plan's, if already
    computed. ``chunk_size``: runs per chunk; default, locally max(4 ×
    cores, runs / 32), on an executor ~``_CHUNK_S`` of runs each. Before
    any run, the checkpoint's path is checked and the estimated peak memory
    compared with ``memory_limit`` (``estimate.check_memory``)."""
    planned = RunList(runs) if isinstance(runs, list) else runs
    path = None if checkpoint is None else check_checkpoint_path("checkpoint", checkpoint)
    fixed = need_int("chunk_size", chunk_size, lo=1, hi=10_000_000) if chunk_size else None
    check_memory(planned, nthreads, memory_limit)
    fp = (fingerprint or sweep_fingerprint(planned)) if path else ""
    if rows is None:
        rows = FinishedRows()
        if path:
            rows.add_frame(load_checkpoint(path, fp, planned))
    ex = _Execution(planned, rows, lambda n: None, _Checkpoint(path, fp, rows, 0.0))
    total = planned.n_runs
    left = total - len(rows)
    ex.tick = progress_ticker(progress, total, total - left)
    try:
        if executor is None:
            # Local chunks: big enough to keep every core busy (a chunk waits
            # for its slowest run), small enough for ~32 progress steps.
            cores = os.cpu_count() or 1
            ex.run_local(fixed or min(_MAX_CHUNK, max(4 * cores, -(-left // 32))), nthreads)
        else:
            ex.ckpt.every_s = _SAVE_S
            ex.run_on(executor, nthreads or 1, fixed)
        if ex.untold:
            # runs that ended as error rows, not yet told (the callback may raise)
            ex.stage = "the progress callback"
            ex.tick(ex.untold)
            ex.untold = 0
            ex.stage = "the sweep"
        ex.ckpt.close()
    except KeyboardInterrupt:
        # One Ctrl-C can surface twice: polars keeps its own SIGINT flag and
        # raises from its operation while Python's flag stays tripped, to fire
        # at the next call.  So no call may sit before the `try` (hence a
        # tuple, not range()), and the salvage is retried (each step of it
        # can be repeated).
        err: SweepInterrupted | None = None
        for _ in (1, 2, 3, 4, 5):
            try:
                # a checkpoint not written: the rows are in .partial; the message says so
                df, path = _keep_rows(ex, path, fp)
                err = SweepInterrupted(df, path)
                break
            except KeyboardInterrupt:
                continue
        raise (err or SweepInterrupted(pl.DataFrame(), path)) from None
    except Exception as e:
        if ex.stage == "the sweep":
            # The library's own: the checkpoint could not be written
            # (OutputError), memory, a run the core refused. It goes on as
            # it is, with the finished rows (chunks that finished meanwhile
            # on an executor included) as ``partial``; the checkpoint is not
            # tried again after an OutputError (that was its write failing).
            keep = None if isinstance(e, OutputError) else path
            e.partial, _ = _keep_rows(ex, keep, fp)  # type: ignore[attr-defined]
            raise
        # Raised by user code (the progress callback, the executor, a
        # chunk's future) or a malformed chunk result: the finished rows are
        # kept as on Ctrl-C, the exception the cause.
        df, path = _keep_rows(ex, path, fp)
        stopped = SimulationError(
            f"sweep stopped by an exception from {ex.stage} ({type(e).__name__}: "
            f"{error_text(e)}): {_rows_message(df.height, path)}"
        )
        stopped.partial = df  # type: ignore[attr-defined]
        stopped.checkpoint = path  # type: ignore[attr-defined]
        raise stopped from e
    except BaseException as e:
        # SystemExit, GeneratorExit... from user code: it goes on as it is,
        # carrying the finished rows (and the checkpoint has them) as
        # ``partial`` and ``checkpoint`` attributes.
        try:
            e.partial, e.checkpoint = _keep_rows(ex, path, fp)  # type: ignore[attr-defined]
        except Exception:
            ex.cancel_pending()
        raise
    return rows.frame()
