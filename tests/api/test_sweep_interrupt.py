"""SweepInterrupted says where the finished rows are: exc.partial, and the
checkpoint file when one was given."""

from pathlib import Path

import polars as pl
import pytest
import schedlab as sl

W = sl.workloads.hackbench(groups=1, loops=5)
GRID = {"workload.loops": [5, 6, 7, 8]}


def ctrl_c_after_first(done: int, total: int) -> None:
    raise KeyboardInterrupt


def interrupted(**kw) -> sl.SweepInterrupted:
    with pytest.raises(sl.SweepInterrupted) as info:
        sl.sweep("vm-2", "v3.8", W, GRID, chunk_size=1, progress=ctrl_c_after_first, **kw)
    return info.value


def test_the_message_points_to_exc_partial():
    e = interrupted()
    assert e.partial.height == 1 and e.checkpoint is None
    assert "the rows of the 1 finished runs are in exc.partial" in str(e)
    assert "checkpoint=" in str(e)  # how to keep them on disk next time


def test_the_message_names_the_checkpoint_file(tmp_path):
    ck = tmp_path / "ck.parquet"
    e = interrupted(checkpoint=ck)
    assert e.checkpoint == ck
    assert "exc.partial" in str(e) and f"checkpoint file {str(ck)!r}" in str(e)
    assert pl.read_parquet(ck).height == e.partial.height == 1


def test_the_message_when_no_run_finished():
    e = sl.SweepInterrupted(pl.DataFrame(), Path("ck.parquet"))
    assert "no run finished" in str(e) and "'ck.parquet'" in str(e)
    # positional, as bisect raises it
    assert "exc.partial" in str(sl.SweepInterrupted(pl.DataFrame({"point": [0]})))
