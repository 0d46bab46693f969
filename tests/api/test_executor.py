"""Sweeps on an executor: the chunks submitted are cancelled on any
exception, Ctrl-C gets in while the sweep waits on them, chunks are sized
from the runs' wall times (progress per run, not per big chunk), the frame
does not depend on the chunking, and the checkpoint is not rewritten for
every small chunk."""

import importlib
import signal
import threading
import time
from concurrent.futures import ALL_COMPLETED, Executor, Future, ThreadPoolExecutor

import polars as pl
import pytest
import schedlab as sl

ex_mod = importlib.import_module("schedlab.run.execute")
W = sl.workloads.hackbench(groups=1, loops=5)
GRID = {"workload.loops": list(range(5, 21))}  # 16 points


def no_wall(df: pl.DataFrame) -> pl.DataFrame:
    return df.select([c for c in df.columns if "wall" not in c])


class Pending(Executor):
    """Hands out futures that stay pending (nothing runs them), but the first
    gets ``first``: the call's result ("run") or that exception."""

    def __init__(self, first: object = "run") -> None:
        self.first = first
        self.futures: list[Future] = []

    def submit(self, fn, /, *args, **kwargs):
        f: Future = Future()
        if not self.futures:
            if isinstance(self.first, BaseException):
                f.set_exception(self.first)
            else:
                f.set_result(fn(*args, **kwargs))
        self.futures.append(f)
        return f


class Inline(Executor):
    """Runs each chunk at once, recording its size."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def submit(self, fn, /, *args, **kwargs):
        self.sizes.append(len(args[0]))
        f: Future = Future()
        f.set_result(fn(*args, **kwargs))
        return f


def fake_chunk(wall_s: float):
    """A ``run_chunk`` whose runs take ``wall_s`` each, without running."""

    def run(specs, threads):
        return [
            {"status": "ok", "status_detail": "", "metrics": {"x": 1.0}, "wall_s": wall_s}
            for _ in specs
        ]

    return run


def sweep(executor, **kw):
    kw.setdefault("progress", False)
    return sl.sweep("vm-2", "v3.8", W, GRID, replicates=8, seed=1, executor=executor, **kw)


def test_a_failed_chunk_cancels_the_chunks_not_started():
    ex = Pending(first=RuntimeError("worker lost"))
    with pytest.raises(RuntimeError, match="worker lost"):
        sweep(ex)
    assert len(ex.futures) > 1
    assert all(f.cancelled() for f in ex.futures[1:])


def test_an_error_in_the_progress_callback_cancels_the_chunks_not_started():
    def progress(done: int, total: int) -> None:
        raise ValueError("bad callback")

    ex = Pending()
    # the finished rows are kept, the callback's error the cause
    with pytest.raises(sl.SimulationError, match="bad callback") as info:
        sweep(ex, progress=progress)
    assert isinstance(info.value.__cause__, ValueError)
    assert info.value.partial.height == 1
    assert len(ex.futures) > 1
    assert all(f.cancelled() for f in ex.futures[1:])


def test_ctrl_c_cancels_the_chunks_not_started_and_keeps_the_finished():
    def progress(done: int, total: int) -> None:
        raise KeyboardInterrupt

    ex = Pending()
    with pytest.raises(sl.SweepInterrupted) as info:
        sweep(ex, progress=progress)
    assert all(f.cancelled() for f in ex.futures[1:])
    assert info.value.partial.height == 1  # the first chunk: one run


def test_ctrl_c_handled_on_another_thread_reaches_a_waiting_sweep(monkeypatch):
    # A SIGINT taken by another thread trips Python's flag but does not wake
    # the main thread's wait on futures: the sweep must wake to notice it.
    # (If it did not, the rescue below completes the futures after 30 s and
    # the sweep ends with no future cancelled.)
    ex = Pending()
    stop = threading.Event()
    real_wait = ex_mod.wait
    waits = []

    def interrupt_then_rescue() -> None:
        time.sleep(0.1)  # let the main thread enter its wait
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        if not stop.wait(30):
            for f in ex.futures:
                if not f.done():
                    f.set_result([])

    def wait(fs, timeout=None, return_when=ALL_COMPLETED):
        waits.append(1)
        if len(waits) == 2:  # the first future is taken in; the rest pend
            threading.Thread(target=interrupt_then_rescue, daemon=True).start()
        return real_wait(fs, timeout=timeout, return_when=return_when)

    monkeypatch.setattr(ex_mod, "wait", wait)
    try:
        with pytest.raises(sl.SweepInterrupted):
            sweep(ex)
    finally:
        stop.set()
    assert len(waits) >= 2 and all(f.cancelled() for f in ex.futures[1:])


def test_chunks_start_at_one_run_then_take_about_half_a_second(monkeypatch):
    monkeypatch.setattr(ex_mod, "run_chunk", fake_chunk(0.0625))
    seen = []
    ex = Inline()
    sweep(ex, progress=lambda done, total: seen.append((done, total)))
    # the first window (64 chunks) before any run is timed: one run each;
    # then 0.5 s / 0.0625 s = 8 runs a chunk
    assert ex.sizes == [1] * 64 + [8] * 8
    assert seen[0] == (1, 128) and seen[-1] == (128, 128) and len(seen) == 72


def test_chunks_hold_a_round_per_thread_and_scale_with_the_threads(monkeypatch):
    monkeypatch.setattr(ex_mod, "run_chunk", fake_chunk(0.0625))
    ex = Inline()
    sweep(ex, threads=2)
    assert ex.sizes == [2] * 64  # 128 runs: none left for bigger chunks
    ex = Inline()
    sl.sweep("vm-2", "v3.8", W, GRID, replicates=16, executor=ex, threads=2, progress=False)
    assert ex.sizes == [2] * 64 + [16] * 8  # 0.5 s / (0.0625 s / 2 threads)


def test_instant_runs_get_the_largest_chunks(monkeypatch):
    monkeypatch.setattr(ex_mod, "run_chunk", fake_chunk(0.0))
    monkeypatch.setattr(ex_mod, "_MAX_CHUNK", 40)
    ex = Inline()
    sweep(ex)
    assert ex.sizes == [1] * 64 + [40, 24]


def test_a_given_chunk_size_is_kept(monkeypatch):
    monkeypatch.setattr(ex_mod, "run_chunk", fake_chunk(0.0625))
    ex = Inline()
    sweep(ex, chunk_size=5)
    assert ex.sizes == [5] * 25 + [3]


def test_the_frame_does_not_depend_on_the_chunking():
    local = sweep(None)
    with ThreadPoolExecutor(max_workers=2) as pool:
        sized = sweep(pool)
        fixed = sweep(pool, chunk_size=7)
    assert no_wall(sized).equals(no_wall(local)) and no_wall(fixed).equals(no_wall(local))


def test_the_checkpoint_is_not_rewritten_for_every_small_chunk(tmp_path, monkeypatch):
    # With the clock stopped, the checkpoint is written after the first
    # chunk and at the end, not after each of the 72 chunks.
    writes = []
    save = ex_mod.save_checkpoint
    monkeypatch.setattr(ex_mod, "_now", lambda: 100.0)
    monkeypatch.setattr(
        ex_mod, "save_checkpoint", lambda *a: (writes.append(len(a[1])), save(*a))[1]
    )
    ck = tmp_path / "ck.parquet"
    df = sweep(Inline(), checkpoint=ck)
    assert writes == [1, 128]
    assert no_wall(pl.read_parquet(ck)).equals(no_wall(df))


def test_the_checkpoint_is_written_again_once_the_interval_passed(tmp_path, monkeypatch):
    clock = [0.0]

    def now() -> float:
        clock[0] += 0.5  # each reading: half a second later
        return clock[0]

    writes = []
    save = ex_mod.save_checkpoint
    monkeypatch.setattr(ex_mod, "_now", now)
    monkeypatch.setattr(
        ex_mod, "save_checkpoint", lambda *a: (writes.append(len(a[1])), save(*a))[1]
    )
    sweep(Inline(), checkpoint=tmp_path / "ck.parquet")
    # a write every 2 s of this clock: every few chunks, not every chunk
    assert 2 < len(writes) < 72 and writes == sorted(writes) and writes[-1] == 128
