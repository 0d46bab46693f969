"""A sweep stopped by an exception from user code — its progress callback,
its executor, a chunk's future — keeps its finished rows as Ctrl-C does:
it raises ``SimulationError`` with the rows in ``partial`` (and in the
checkpoint, if given) and the original exception as ``__cause__``. An
executor whose futures return something other than ``run_chunk``'s
outcomes is refused by name, with the rows kept as well."""

from __future__ import annotations

from concurrent.futures import Executor, Future
from typing import Any

import polars as pl
import pytest
import schedlab as sl

W = sl.workloads.hackbench(groups=1, fds=2, loops=3)
GRID = {"workload.loops": [3, 4, 5, 6]}  # 4 points × 8 replicates: 32 runs


def sweep(**kw: Any) -> pl.DataFrame:
    kw.setdefault("progress", False)
    return sl.sweep("vm-2", "v3.8", W, GRID, replicates=8, seed=2, **kw)


def raising_on_call(n: int, exc: BaseException) -> Any:
    calls = []

    def progress(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == n:
            raise exc

    return progress


def no_wall(df: pl.DataFrame) -> pl.DataFrame:
    return df.select([c for c in df.columns if "wall" not in c])


class Inline(Executor):
    """Runs each chunk at once; ``result(fn(...), k)`` is what the k-th
    chunk's future returns instead (an exception: raised by it)."""

    def __init__(self, result: Any = None) -> None:
        self.result = result or (lambda out, k: out)
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):
        f: Future = Future()
        out = self.result(fn(*args, **kwargs), self.submitted)
        self.submitted += 1
        if isinstance(out, BaseException):
            f.set_exception(out)
        else:
            f.set_result(out)
        return f


# --- 7. a progress callback that raises keeps the finished rows ---------------


def test_a_progress_callback_raising_on_its_third_call_keeps_the_rows():
    cause = ValueError("callback bug")
    with pytest.raises(sl.SimulationError) as info:
        sweep(chunk_size=8, progress=raising_on_call(3, cause))
    e = info.value
    assert e.__cause__ is cause
    assert e.partial.height == 24  # three chunks of 8 finished
    full = sweep()
    assert no_wall(e.partial).equals(no_wall(full[:24]))
    msg = str(e)
    assert "ValueError: callback bug" in msg and "the progress callback" in msg
    assert "the rows of the 24 finished runs are in exc.partial" in msg


def test_the_rows_go_to_the_checkpoint_and_the_sweep_resumes(tmp_path):
    ck = tmp_path / "ck.parquet"
    with pytest.raises(sl.SimulationError) as info:
        sweep(chunk_size=8, progress=raising_on_call(3, RuntimeError("boom")), checkpoint=ck)
    assert info.value.checkpoint == ck and f"checkpoint file {str(ck)!r}" in str(info.value)
    assert pl.read_parquet(ck).height == 24
    calls = []
    df = sweep(chunk_size=8, checkpoint=ck, progress=lambda d, t: calls.append(d))
    assert calls == [32]  # only the last chunk ran
    assert no_wall(df).equals(no_wall(sweep()))


def test_a_progress_callback_raising_on_an_executor_keeps_the_rows():
    with pytest.raises(sl.SimulationError) as info:
        sweep(chunk_size=8, executor=Inline(), progress=raising_on_call(2, KeyError("k")))
    assert isinstance(info.value.__cause__, KeyError)
    assert info.value.partial.height >= 16


def test_a_failing_future_keeps_the_chunks_that_finished():
    def third_fails(out: Any, k: int) -> Any:
        return OSError("worker lost") if k == 2 else out

    with pytest.raises(sl.SimulationError) as info:
        sweep(chunk_size=8, executor=Inline(third_fails))
    e = info.value
    assert isinstance(e.__cause__, OSError) and "worker lost" in str(e)
    # Inline runs every chunk as it is submitted: all but the failed one finished
    assert e.partial.height == 24 and "a chunk" in str(e)
    assert sorted(set(e.partial["point"])) == [0, 1, 3]


def test_an_executor_whose_submit_raises_keeps_the_rows():
    class Breaks(Inline):
        def submit(self, fn, /, *args, **kwargs):
            if self.submitted == 2:
                raise RuntimeError("cluster gone")
            return super().submit(fn, *args, **kwargs)

    with pytest.raises(sl.SimulationError) as info:
        sweep(chunk_size=8, executor=Breaks())
    assert "cluster gone" in str(info.value) and "the executor" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)


def test_ctrl_c_is_still_sweep_interrupted():
    with pytest.raises(sl.SweepInterrupted) as info:
        sweep(chunk_size=8, progress=raising_on_call(3, KeyboardInterrupt()))
    assert info.value.partial.height == 24


# --- 8. malformed executor results are refused by name ------------------------


def outcome(**changes: Any) -> dict[str, Any]:
    o = {"status": "ok", "status_detail": "", "metrics": {"x": 1.0}, "wall_s": 0.1}
    o.update(changes)
    return {k: v for k, v in o.items() if v is not ...}


@pytest.mark.parametrize(
    ("result", "what"),
    [
        ("abc", "got str 'abc'"),
        (None, "got NoneType None"),
        ({"status": "ok"}, "got dict"),
        ([], "got 0 outcomes"),
        (["abc"] * 8, "outcome 0 is str 'abc'"),
        ([outcome(wall_s=...)] * 8, "outcome 0 has no 'wall_s'"),
        ([outcome(wall_s="fast")] * 8, "outcome 0's wall_s is str 'fast'"),
        ([outcome(status=3)] * 8, "outcome 0's status is int 3"),
        ([outcome(status="great")] * 8, "outcome 0's status is str 'great'"),
        ([outcome(metrics=[1])] * 8, "outcome 0's metrics is list [1]"),
        ([outcome(metrics={"x": "1"})] * 8, "outcome 0's metrics['x'] is str '1'"),
        ([outcome(status_detail=5)] * 8, "outcome 0's status_detail is int 5"),
        ([outcome(wall_s=float("nan"))] * 8, "outcome 0's wall_s is float nan"),
        ([outcome(wall_s=-1.0)] * 8, "outcome 0's wall_s is float -1.0"),
        # only a chunk stopped by Ctrl-C has cancelled runs
        ([outcome(status="cancelled")] * 8, "outcome 0's status is str 'cancelled'"),
    ],
)
def test_a_malformed_executor_result_is_refused_by_name(result, what):
    def second_is(out: Any, k: int) -> Any:
        return result if k == 1 else out

    with pytest.raises(sl.SimulationError) as info:
        sweep(chunk_size=8, executor=Inline(second_is))
    e = info.value
    msg = str(e)
    assert "invalid executor result for a chunk of 8 runs" in msg and what in msg, msg
    assert "expected a list of 8 run outcomes" in msg
    assert isinstance(e.__cause__, sl.ConfigError)
    assert e.partial.height == 24  # the other chunks (Inline ran each as it was submitted)
    assert 1 not in set(e.partial["point"])


def test_a_well_formed_foreign_result_is_taken():
    # another executor's own dicts, as long as they hold what run_chunk gives
    def rebuilt(out: Any, k: int) -> Any:
        return [dict(o) for o in out]

    assert no_wall(sweep(chunk_size=8, executor=Inline(rebuilt))).equals(no_wall(sweep()))


# --- found by scripts/dev/hostile.py ------------------------------------------------


def test_a_callback_raising_when_only_error_rows_were_told_keeps_them():
    # every run ends as an error row (a value the kernel field refuses):
    # the only progress call is the last, and its exception keeps the rows
    grid = {"ttwu_queue": [3, 4]}
    with pytest.raises(sl.SimulationError) as info:
        sl.sweep(
            "vm-2",
            "v3.8",
            W,
            grid,
            replicates=2,
            seed=1,
            progress=raising_on_call(1, RuntimeError("boom")),
        )
    e = info.value
    assert isinstance(e.__cause__, RuntimeError)
    assert e.partial.height == 4 and set(e.partial["status"]) == {"error"}


def test_an_executor_whose_submit_returns_no_future_is_refused_by_name():
    class NoFuture(Executor):
        def submit(self, fn, /, *args, **kwargs):
            return None

    with pytest.raises(sl.SimulationError, match="its submit") as info:
        sweep(executor=NoFuture())
    assert isinstance(info.value.__cause__, sl.ConfigError)
    assert "returned NoneType None" in str(info.value.__cause__)
    assert info.value.partial.height == 0


def test_system_exit_from_the_callback_goes_on_carrying_the_rows(tmp_path):
    ck = tmp_path / "ck.parquet"
    with pytest.raises(SystemExit) as info:
        sweep(chunk_size=8, progress=raising_on_call(2, SystemExit(3)), checkpoint=ck)
    e = info.value
    assert e.code == 3
    assert e.partial.height == 16  # type: ignore[attr-defined]
    assert pl.read_parquet(ck).height == 16


def test_a_library_error_mid_sweep_keeps_its_type_and_the_rows(monkeypatch, tmp_path):
    # not user code: the exception is not relabelled, and carries the rows
    from schedlab.run import execute as ex

    real, calls = ex._core.run_batch, []

    def failing(specs, threads):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("core bug")
        return real(specs, threads)

    monkeypatch.setattr(ex._core, "run_batch", failing)
    ck = tmp_path / "ck.parquet"
    with pytest.raises(RuntimeError, match="core bug") as info:
        sweep(chunk_size=8, checkpoint=ck)
    assert type(info.value) is RuntimeError  # not a SimulationError (a RuntimeError too)
    assert info.value.partial.height == 16  # type: ignore[attr-defined]
    assert pl.read_parquet(ck).height == 16


def test_an_output_error_from_the_callback_is_the_callbacks():
    # an OutputError the user's code raises is not a checkpoint failure
    from schedlab.exceptions import OutputError

    cause = OutputError("my own output failed")
    with pytest.raises(sl.SimulationError, match="the progress callback") as info:
        sweep(chunk_size=8, progress=raising_on_call(2, cause))
    assert info.value.__cause__ is cause and info.value.partial.height == 16
