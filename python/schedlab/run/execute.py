"""Running planned runs, chunk by chunk as the plan yields them: on the
local rayon pool (``_core.run_batch``) or on any ``concurrent.futures``
executor (``run_chunk`` on each worker), with the progress bar, the
checkpoint written as chunks finish, and Ctrl-C's salvage — every finished
run's row, raised as ``SweepInterrupted``."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from pathlib import Path
from typing import Any

import polars as pl

from .. import _core
from .._check import need_int
from .._progress import ProgressArg, progress_ticker
from .checkpoint import load_checkpoint, save_checkpoint, sweep_fingerprint
from .frame import build_frame
from .plan import Planned, Run, RunList


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep. ``partial`` holds the rows that finished (they
    are also in the checkpoint file, if one was given)."""

    def __init__(self, partial: pl.DataFrame) -> None:
        super().__init__("sweep interrupted")
        self.partial = partial


def run_chunk(specs: list[dict[str, Any]], threads: int) -> list[_core.BatchOutcome]:
    """Run sweep specs on this worker (what executors call)."""
    return _core.run_batch(specs, threads)


#: Chunks never hold more runs than this unless ``chunk_size`` says so, and
#: an executor never has more than ``_WINDOW`` chunks submitted at once: a
#: sweep's planned runs in memory stay bounded whatever its size.
_MAX_CHUNK = 10_000
_WINDOW = 64


def execute(
    runs: Planned | list[Run],
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
    timing runs), else the checkpoint is read here; ``fingerprint``:
    the plan's, if already computed."""
    planned = RunList(runs) if isinstance(runs, list) else runs
    path = Path(checkpoint) if checkpoint is not None else None
    fp = (fingerprint or sweep_fingerprint(planned)) if path else ""
    if rows is None:
        rows = load_checkpoint(path, fp, planned) if path else []
    finished = {(r["point"], r["replicate"]) for r in rows}
    total = planned.n_runs
    left = total - len(finished)
    tick = progress_ticker(progress, total, total - left)
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

    def chunks() -> Iterator[list[Run]]:
        """The runs left to do, ``size`` at a time; an invalid point's runs
        become rows as they are reached."""
        chunk: list[Run] = []
        for r in planned:
            if (r.point, r.replicate) in finished:
                continue
            if r.base_spec is None:
                rows.append(r.failed_row())
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
            save_checkpoint(path, rows, fp)
        state["unsaved"] = 0

    def done(chunk: list[Run], outcomes: Sequence[Mapping[str, Any]]) -> None:
        rows.extend(r.result_row(o) for r, o in zip(chunk, outcomes, strict=True))
        state["ran"] += 1
        save()
        tick(len(chunk) + state["untold"])
        state["untold"] = 0

    def keep_finished(chunk: list[Run], outcomes: Sequence[Mapping[str, Any]]) -> None:
        # An interrupted chunk: its finished runs (rows equal to an
        # uninterrupted sweep's), not those cut short or never started.
        have = {(r["point"], r["replicate"]) for r in rows}
        rows.extend(
            r.result_row(o)
            for r, o in zip(chunk, outcomes, strict=True)
            if o["status"] != "cancelled" and (r.point, r.replicate) not in have
        )

    # the chunks submitted to the executor and not yet taken in
    futures: dict[Future[list[_core.BatchOutcome]], list[Run]] = {}

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
                    futures[executor.submit(run_chunk, [r.runnable for r in c], nthreads or 1)] = c
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
                    save_checkpoint(path, rows, fp)
                err = SweepInterrupted(build_frame(rows))
                break
            except KeyboardInterrupt:
                continue
        raise (err or SweepInterrupted(pl.DataFrame())) from None
    if state["untold"]:
        tick(state["untold"])
    if path and (state["unsaved"] or not state["ran"]):
        save()
    return build_frame(rows)
