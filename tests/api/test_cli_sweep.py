"""``schedlab sweep`` on Ctrl-C: the finished runs are kept (in
``--checkpoint`` or ``OUTPUT.partial``), exit status 130, and the same
command resumes from them without losing or repeating a run.

Ctrl-C is simulated in ``_core.run_batch``: after ``after`` runs it raises
``BatchInterrupted`` as the core does, with the finished runs' outcomes."""

import importlib
import textwrap

import polars as pl
import pytest
from schedlab.cli import main

core = importlib.import_module("schedlab._core")

SPEC = textwrap.dedent("""
    machine = "vm-2"
    kernel = "v3.8"
    replicates = 2
    seed = 9
    [workload]
    kind = "hackbench"
    groups = 1
    loops = 5
    [grid]
    "workload.loops" = [5, 6, 7, 8, 9, 10]
    migration_cost_ns = [0, "bad"]
""")  # 24 runs, of which the 12 of the "bad" points are "error" rows
VALID = 12


def no_wall(df: pl.DataFrame) -> pl.DataFrame:
    return df.select([c for c in df.columns if "wall" not in c])


class Batches:
    """``run_batch``, counting the runs it is given; Ctrl-C after ``after``."""

    def __init__(self, after: int | None = None) -> None:
        self.real = core.run_batch
        self.after = after
        self.runs = 0

    def __call__(self, specs, threads):
        if self.after is not None and self.runs + len(specs) > self.after:
            keep = max(0, self.after - self.runs)
            cut = {"status": "cancelled", "status_detail": "", "metrics": {}, "wall_s": 0.0}
            e = core.BatchInterrupted("run_batch interrupted")
            e.outcomes = self.real(specs[:keep], threads) + [cut] * (len(specs) - keep)
            self.runs += keep
            raise e
        self.runs += len(specs)
        return self.real(specs, threads)


@pytest.fixture
def spec(tmp_path):
    p = tmp_path / "spec.toml"
    p.write_text(SPEC)
    return p


def sweep(monkeypatch, spec, out, *extra, after=None) -> tuple[int, Batches]:
    batches = Batches(after)
    monkeypatch.setattr(core, "run_batch", batches)
    rc = main(["sweep", str(spec), "-o", str(out), "--no-progress", "--threads", "1", *extra])
    monkeypatch.undo()
    return rc, batches


def test_ctrl_c_keeps_the_finished_runs_beside_the_output_and_resumes(
    tmp_path, spec, monkeypatch, capsys
):
    out = tmp_path / "out.parquet"
    partial = tmp_path / "out.parquet.partial"
    rc, _ = sweep(monkeypatch, spec, out, after=5)
    err = capsys.readouterr().err
    assert rc == 130 and not out.exists() and partial.exists()
    kept = pl.read_parquet(partial)
    ok = int((kept["status"] == "ok").sum())
    assert ok == 5 and f"kept in {partial}" in err and "the same command again" in err
    # the rerun runs only the runs left, and writes the sweep's whole frame
    rc, batches = sweep(monkeypatch, spec, out)
    err = capsys.readouterr().err
    assert rc == 1  # the "bad" points' rows are "error"
    assert batches.runs == VALID - ok and f"resuming from {partial}: {kept.height}" in err
    assert not partial.exists() and not (tmp_path / "out.parquet.partial.sha256").exists()
    fresh = tmp_path / "fresh.parquet"
    assert sweep(monkeypatch, spec, fresh)[0] == 1
    assert no_wall(pl.read_parquet(out)).equals(no_wall(pl.read_parquet(fresh)))


def test_a_second_interrupt_keeps_the_runs_of_both(tmp_path, spec, monkeypatch, capsys):
    out = tmp_path / "out.parquet"
    assert sweep(monkeypatch, spec, out, after=4)[0] == 130
    first = pl.read_parquet(tmp_path / "out.parquet.partial")
    assert sweep(monkeypatch, spec, out, after=3)[0] == 130
    second = pl.read_parquet(tmp_path / "out.parquet.partial")
    assert (second["status"] == "ok").sum() == (first["status"] == "ok").sum() + 3
    rc, batches = sweep(monkeypatch, spec, out)
    assert rc == 1 and batches.runs == VALID - 7 and pl.read_parquet(out).height == 24


def test_ctrl_c_with_a_checkpoint_keeps_the_runs_in_it(tmp_path, spec, monkeypatch, capsys):
    out, ck = tmp_path / "out.parquet", tmp_path / "ck.parquet"
    rc, _ = sweep(monkeypatch, spec, out, "--checkpoint", str(ck), after=5)
    assert rc == 130 and f"kept in {ck}" in capsys.readouterr().err
    assert not (tmp_path / "out.parquet.partial").exists()
    assert (pl.read_parquet(ck)["status"] == "ok").sum() == 5
    rc, batches = sweep(monkeypatch, spec, out, "--checkpoint", str(ck))
    assert rc == 1 and batches.runs == VALID - 5 and pl.read_parquet(out).height == 24


def test_ctrl_c_before_any_run_finished_keeps_no_file(tmp_path, spec, monkeypatch, capsys):
    rc, _ = sweep(monkeypatch, spec, tmp_path / "out.parquet", after=0)
    assert rc == 130 and "no run finished" in capsys.readouterr().err
    assert not (tmp_path / "out.parquet.partial").exists()


def test_a_partial_and_a_checkpoint_at_once_are_refused(tmp_path, spec, monkeypatch, capsys):
    out = tmp_path / "out.parquet"
    assert sweep(monkeypatch, spec, out, after=5)[0] == 130
    capsys.readouterr()
    rc, batches = sweep(monkeypatch, spec, out, "--checkpoint", str(tmp_path / "ck.parquet"))
    err = capsys.readouterr().err
    assert rc == 2 and batches.runs == 0 and err.count("\n") == 1, err
    assert "--checkpoint" in err and "out.parquet.partial" in err


def test_a_partial_of_another_sweep_is_refused(tmp_path, spec, monkeypatch, capsys):
    out = tmp_path / "out.parquet"
    assert sweep(monkeypatch, spec, out, after=5)[0] == 130
    capsys.readouterr()
    spec.write_text(SPEC.replace("seed = 9", "seed = 10"))
    rc, batches = sweep(monkeypatch, spec, out)
    err = capsys.readouterr().err
    assert rc == 2 and batches.runs == 0
    assert "out.parquet.partial" in err and "different sweep" in err and "remove it" in err
