"""Never lose a finished run: a sweep's memory is
estimated and refused up front, finished rows are held as frames, every
file schedlab writes is checked before any run and written atomically, and
a write that fails keeps the finished rows and says where."""

import os
import random
import stat
from concurrent.futures import Executor, Future
from pathlib import Path

import polars as pl
import pytest
import schedlab as sl
from schedlab.cli import EXIT_IO, main
from schedlab.io.spec import MAX_SPEC_BYTES
from schedlab.run import estimate as estimate_mod
from schedlab.run import execute as execute_mod
from schedlab.run.rows import FinishedRows, build_frame

W = sl.workloads.hackbench(groups=1, loops=5)
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

SPEC = """\
machine = "vm-2"
kernel = "v3.8"
replicates = 2
[workload]
kind = "hackbench"
groups = 1
loops = 5
[grid]
migration_cost_ns = [0, 500000, -1]
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(SPEC)
    return p


def _sweep(spec: Path, out: Path | str, *extra: str) -> int:
    return main(["sweep", str(spec), "-o", str(out), "--no-progress", *extra])


def _no_wall(df: pl.DataFrame) -> pl.DataFrame:
    return df.drop("wall_s")


@pytest.fixture
def no_run(monkeypatch):
    def refuse(*a, **k):  # the sweep must not start
        raise AssertionError("a run started")

    monkeypatch.setattr(execute_mod._core, "run_batch", refuse)
    monkeypatch.setattr(estimate_mod._core, "run_batch", refuse)


class DiskFull:
    """``DataFrame.write_parquet`` as on a full disk: it writes a few bytes,
    then fails as polars does (a ComputeError), from its ``fail_at``-th call
    on, for every file (``only=None``), only the atomic writers' (``"output"``:
    they write to an open file) or only checkpoints (``"checkpoint"``: a
    path)."""

    def __init__(self, monkeypatch, fail_at: int = 1, only: str | None = None) -> None:
        self.calls = 0
        self.fail_at = fail_at
        self.only = only
        self.real = pl.DataFrame.write_parquet
        monkeypatch.setattr(
            pl.DataFrame, "write_parquet", lambda df, file, *a, **k: self._write(df, file, *a, **k)
        )

    def _write(self, df, file, *a, **k):
        kind = "checkpoint" if isinstance(file, str | os.PathLike) else "output"
        if self.only not in (None, kind):
            return self.real(df, file, *a, **k)
        self.calls += 1
        if self.calls < self.fail_at:
            return self.real(df, file, *a, **k)
        if isinstance(file, str | os.PathLike):
            Path(file).write_bytes(b"PAR1 trunc")
        else:
            file.write(b"PAR1 trunc")
        raise pl.exceptions.ComputeError("No space left on device (os error 28)")


def _strays(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.endswith((".tmp", ".probe")))


# --- 1. memory: refused up front ---------------------------------------------


def test_a_sweep_above_memory_limit_is_refused_before_any_run(no_run):
    grid = {"migration_cost_ns": list(range(1000)), "wakeup_granularity_ns": list(range(100))}
    with pytest.raises(sl.ConfigError, match=r"memory_limit=100000000 .*100,000 runs") as e:
        sl.sweep("vm-2", "v3.8", W, grid, memory_limit=100_000_000, progress=False)
    assert "MB at its peak" in str(e.value) and "pass memory_limit=" in str(e.value)


def test_the_default_memory_limit_is_half_of_what_the_process_may_use(monkeypatch, no_run):
    monkeypatch.setattr(estimate_mod, "available_memory", lambda: (2_000_000_000, "RLIMIT_AS"))
    assert estimate_mod.default_memory_limit() == 1_000_000_000
    grid = {"migration_cost_ns": list(range(10_000)), "wakeup_granularity_ns": list(range(100))}
    with pytest.raises(sl.ConfigError, match=r"the default, 0.5 of RLIMIT_AS.*1,000,000 runs"):
        sl.sweep("vm-2", "v3.8", W, grid, progress=False)


def test_a_bisect_with_too_many_replicates_is_refused_before_any_run(no_run):
    with pytest.raises(sl.ConfigError, match=r"this sweep of [\d,]+ runs needs an estimated"):
        sl.bisect(
            "core2-2s",
            "v2.6.36",
            "v6.18",
            sl.workloads.hackbench(groups=1, fds=4, loops=20, ipc="pipe"),
            "elapsed_s",
            replicates=2000,
            memory_limit=200_000_000,
        )


@pytest.mark.parametrize("bad", [0, -5, 1.5, "8G", True])
def test_memory_limit_must_be_a_positive_byte_count(bad, no_run):
    with pytest.raises((sl.ConfigError, sl.ConfigTypeError), match="memory_limit"):
        sl.sweep("vm-2", "v3.8", W, memory_limit=bad, progress=False)


def test_a_memory_limit_that_fits_changes_nothing():
    grid = {"migration_cost_ns": [0, 500_000]}
    a = sl.sweep("vm-2", "v3.8", W, grid, replicates=2, progress=False)
    b = sl.sweep("vm-2", "v3.8", W, grid, replicates=2, progress=False, memory_limit=2**40)
    assert _no_wall(a).equals(_no_wall(b))


def test_the_cli_refuses_a_sweep_above_memory_limit_before_any_run(spec, tmp_path, capsys, no_run):
    assert _sweep(spec, tmp_path / "o.parquet", "--memory-limit", "1M") == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("schedlab: error: invalid --memory-limit=1000000 ") and "6 runs" in err
    assert _sweep(spec, tmp_path / "o.parquet", "--memory-limit", "lots") == 2
    assert "invalid --memory-limit='lots'" in capsys.readouterr().err


# --- finished rows held as frames: the same frame as from dicts --------------


def _reference_frame(rows: list[dict]) -> pl.DataFrame:
    """The sweep frame as it was built before: every row a dict, sorted,
    columns in the order the sorted rows first show them (configuration
    before ``status``, then the rest, ``wall_s`` last)."""
    rows = sorted(rows, key=lambda r: (r["point"], r["replicate"]))
    head: dict[str, None] = {}
    tail: dict[str, None] = {}
    for r in rows:
        part = head
        for k in r:
            if k == "status":
                part = tail
            if k not in head and k not in tail:
                part[k] = None
    order = [c for c in [*head, *tail] if c != "wall_s"] + ["wall_s"]
    return pl.from_dicts(rows, infer_schema_length=None).select(order)


def test_finished_rows_in_any_order_and_chunking_give_the_dict_frame():
    rng = random.Random(7)
    rows = []
    for p in range(1500):
        row = {"point": p // 2, "replicate": p % 2, "kernel": "v3.8"}
        if p % 7 == 0:  # an "error" row: another layout, no metrics
            row |= {"seed": p, "status": "error", "status_detail": "bad", "wall_s": 0.0}
        else:
            row |= {"x": p if p % 3 else p + 0.5, "seed": 2**64 - 1 - p, "status": "ok"}
            row |= {"status_detail": None, "m": float(p), "wall_s": 0.1}
            if p % 11 == 0:
                row["late"] = "only some rows"
        rows.append(row)
    expected = _reference_frame(rows)
    shuffled = rows[:]
    rng.shuffle(shuffled)
    held = FinishedRows()
    held.add_frame(build_frame(shuffled[:300]))  # as a checkpoint's rows
    held.extend(shuffled[300:])
    assert held.frame().equals(expected)
    assert held.frame().columns == expected.columns
    assert held.frame().schema == expected.schema
    assert len(held) == 1500 and (3, 1) in held and (750, 0) not in held


# --- 2. and 3. output files checked before, written atomically, kept ---------


@pytest.mark.parametrize(
    "out",
    [
        "/proc/version",
        "/dev/full",
        "a" * 300 + ".parquet",
        "no-such-dir/o.parquet",
    ],
)
def test_the_cli_refuses_an_output_it_could_not_write_before_any_run(spec, out, capsys, no_run):
    assert _sweep(spec, out, "--force") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("schedlab: error: invalid --output=") and "\n" not in err


@pytest.mark.skipif(ROOT, reason="root writes into read-only directories")
def test_the_cli_refuses_a_checkpoint_in_a_read_only_directory(spec, tmp_path, capsys, no_run):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        assert _sweep(spec, tmp_path / "o.parquet", "--checkpoint", str(d / "ck.parquet")) == 2
        assert "invalid --checkpoint=" in capsys.readouterr().err
    finally:
        d.chmod(0o700)


@pytest.mark.parametrize("ck", ["no-such-dir/ck.parquet", "/proc/ck.parquet", "/dev/full"])
def test_a_checkpoint_that_cannot_be_written_is_refused_before_any_run(
    spec, tmp_path, capsys, no_run, ck
):
    assert _sweep(spec, tmp_path / "o.parquet", "--checkpoint", str(tmp_path / ck)) == 2
    assert "schedlab: error: invalid --checkpoint=" in capsys.readouterr().err
    with pytest.raises(sl.ConfigError, match="invalid checkpoint="):
        sl.sweep("vm-2", "v3.8", W, checkpoint=tmp_path / ck, progress=False)


def test_a_sweep_output_that_fails_to_write_keeps_the_runs_and_resumes(
    spec, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "o.parquet"
    out.write_bytes(b"the old output")
    disk = DiskFull(monkeypatch, only="output")
    assert _sweep(spec, out, "--force") == EXIT_IO
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("schedlab: error: could not write --output=")
    assert "No space left on device" in err and "o.parquet.partial" in err
    assert out.read_bytes() == b"the old output"  # not replaced by a truncated file
    assert _strays(tmp_path) == []
    monkeypatch.setattr(pl.DataFrame, "write_parquet", disk.real)
    # the runs kept in .partial: the same command finishes without running them again
    monkeypatch.setattr(execute_mod._core, "run_batch", None)
    assert _sweep(spec, out, "--force") == 1, capsys.readouterr().err  # 1: a point is invalid
    assert pl.read_parquet(out).height == 6
    assert not (tmp_path / "o.parquet.partial").exists()


def test_a_sweep_output_failing_with_a_checkpoint_points_to_it(spec, tmp_path, capsys, monkeypatch):
    ck = tmp_path / "ck.parquet"
    DiskFull(monkeypatch, only="output")  # the checkpoint's writes pass, the output's fails
    assert _sweep(spec, tmp_path / "o.parquet", "--checkpoint", str(ck)) == EXIT_IO
    err = capsys.readouterr().err
    assert "the 6 runs are all in --checkpoint" in err
    assert pl.read_parquet(ck).height == 6


def test_a_checkpoint_that_fails_mid_sweep_raises_with_every_finished_row(tmp_path, monkeypatch):
    ck = tmp_path / "ck.parquet"
    grid = {"migration_cost_ns": [0, 250_000, 500_000, 750_000]}
    full = sl.sweep("vm-2", "v3.8", W, grid, progress=False)
    DiskFull(monkeypatch, fail_at=2)  # the first write passes, the next fails
    with pytest.raises(sl.exceptions.OutputError, match="could not write checkpoint=") as e:
        sl.sweep("vm-2", "v3.8", W, grid, checkpoint=ck, chunk_size=1, progress=False)
    assert isinstance(e.value, OSError) and e.value.partial.height == 2
    assert _no_wall(e.value.partial).equals(_no_wall(full.head(2)))
    assert _strays(tmp_path) == []
    assert pl.read_parquet(ck).height == 1  # the last checkpoint written, intact
    monkeypatch.undo()
    resumed = sl.sweep("vm-2", "v3.8", W, grid, checkpoint=ck, progress=False)
    assert _no_wall(resumed).equals(_no_wall(full))


def test_the_cli_keeps_a_sweep_whose_checkpoint_fails_in_the_temporary_directory(
    spec, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "spare"))
    (tmp_path / "spare").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    disk = DiskFull(monkeypatch, fail_at=1)
    ck = tmp_path / "ck.parquet"

    def fail_once(df, file, *a, **k):  # only the first checkpoint write fails
        disk.calls += 1
        if disk.calls == 1:
            raise pl.exceptions.ComputeError("No space left on device (os error 28)")
        return disk.real(df, file, *a, **k)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", fail_once)
    assert _sweep(spec, tmp_path / "o.parquet", "--checkpoint", str(ck)) == EXIT_IO
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        "could not write checkpoint=" in err
        and "again with --checkpoint " + str(tmp_path / "spare") in err
    )
    kept = list((tmp_path / "spare").glob("schedlab-*.partial"))
    assert len(kept) == 1 and pl.read_parquet(kept[0]).height > 0


def test_measure_output_that_fails_is_kept_beside_it(tmp_path, capsys, monkeypatch):
    import schedlab.host.measurement as measurement

    frame = pl.DataFrame({"bench": ["hackbench"], "elapsed_s": [1.0]})
    monkeypatch.setattr(measurement, "measure", lambda *a, **k: frame)
    monkeypatch.setattr(measurement, "metadata", lambda df: {"schedlab.version": "x"})
    real = pl.DataFrame.write_parquet
    calls = []

    def fail_first(df, file, *a, **k):
        calls.append(file)
        if len(calls) == 1:
            raise pl.exceptions.ComputeError("No space left on device (os error 28)")
        return real(df, file, *a, **k)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", fail_first)
    out = tmp_path / "m.parquet"
    assert main(["measure", "hackbench", "--no-progress", "-o", str(out)]) == EXIT_IO
    err = capsys.readouterr().err
    assert "could not write --output=" in err and "m.parquet.unsaved.parquet" in err
    assert not out.exists() and _strays(tmp_path) == []
    assert pl.read_parquet(tmp_path / "m.parquet.unsaved.parquet").equals(frame)


# --- 4. to_perfetto / to_ftrace paths ----------------------------------------


@pytest.fixture(scope="module")
def traced():
    return sl.simulate("vm-2", "v3.8", W, trace=True)


@pytest.mark.parametrize("path", ["a\x00b", "/proc/version", "/dev/full", "x" * 300])
@pytest.mark.parametrize("method", ["to_perfetto", "to_ftrace"])
def test_trace_exports_refuse_a_path_they_cannot_write(traced, path, method):
    pytest.importorskip("perfetto")
    with pytest.raises(sl.ConfigError, match="invalid path="):
        getattr(traced, method)(path)


@pytest.mark.parametrize("method", ["to_perfetto", "to_ftrace"])
def test_a_trace_export_that_fails_leaves_the_old_file_and_raises_output_error(
    traced, tmp_path, monkeypatch, method
):
    pytest.importorskip("perfetto")
    import schedlab.io.atomic as atomic

    out = tmp_path / "t.out"
    out.write_bytes(b"old")
    real_open = open

    class Full:
        def __init__(self, f):
            self.f = f

        def write(self, b):
            self.f.write(b[:3])
            raise OSError(28, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

    monkeypatch.setattr(atomic, "open", lambda *a, **k: Full(real_open(*a, **k)), raising=False)
    with pytest.raises(sl.exceptions.OutputError, match="could not write path=.*No space left"):
        getattr(traced, method)(out)
    assert out.read_bytes() == b"old" and _strays(tmp_path) == []


# --- 7. the CLI reads specs with a bound and never prints a traceback --------


def test_the_cli_refuses_unreadable_specs_in_one_line(tmp_path, capsys, no_run):
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 5000 + "1" + "]" * 5000 + "\n")
    big = tmp_path / "big.toml"
    big.write_bytes(b"# " + b"x" * MAX_SPEC_BYTES + b"\n")
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00kind")
    cases = {
        str(tmp_path): "a directory",
        "/dev/zero": "a character device",
        str(deep): "nested too deeply",
        str(big): "larger than",
        str(binary): "not UTF-8",
        "a" * 300: "cannot read it",
    }
    for path, what in cases.items():
        assert main(["sweep", path, "-o", str(tmp_path / "o.parquet"), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("schedlab: error: invalid spec=") and what in err
        assert "\n" not in err and "Traceback" not in err


def test_the_cli_refuses_a_perfetto_path_before_the_run(capsys, monkeypatch):
    import schedlab.run.simulation as simulation

    monkeypatch.setattr(simulation, "simulate", None)  # must not be reached
    for path in ("/proc/version", "/dev/full", "p" * 300 + ".pftrace"):
        assert main(["run", "--workload", "hackbench", "--perfetto", path]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("schedlab: error: invalid --perfetto=") and "\n" not in err


@pytest.mark.parametrize("groups", ["1,,2", ",1", "1,", ""])
def test_the_cli_refuses_an_empty_item_in_a_list_flag(groups, capsys):
    assert main(["measure", "hackbench", "--groups", groups, "--no-progress"]) == 2
    assert "invalid --groups=" in capsys.readouterr().err


def test_an_output_path_check_leaves_no_probe_file(tmp_path):
    from schedlab._check import need_output_path

    p = need_output_path("path", tmp_path / "x.parquet", force=False)
    assert p == tmp_path / "x.parquet" and list(tmp_path.iterdir()) == []
    assert stat.S_ISDIR(os.stat(tmp_path).st_mode)


# --- review: names the writers' sibling files would not fit, symlinks, executors


def test_a_name_too_long_for_the_files_beside_it_is_refused_before_any_run(
    spec, tmp_path, capsys, no_run
):
    # 246 bytes: the file system takes the name, but not ".<name>.<hex>.tmp"
    # or "<name>.partial.sha256.tmp" beside it
    long = tmp_path / ("o" * 246)
    assert _sweep(spec, long) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("schedlab: error: invalid --output=") and "file name of 246 bytes" in err
    assert _sweep(spec, tmp_path / "o.parquet", "--checkpoint", str(long)) == 2
    assert "invalid --checkpoint=" in capsys.readouterr().err
    with pytest.raises(sl.ConfigError, match=r"invalid checkpoint=.*at most 223"):
        sl.sweep("vm-2", "v3.8", W, {"migration_cost_ns": [0]}, checkpoint=long, progress=False)
    assert list(tmp_path.iterdir()) == [spec]


def test_a_name_that_leaves_room_for_the_files_beside_it_is_taken(tmp_path):
    from schedlab._check import SIBLING_NAME_BYTES, need_output_path

    name = "o" * (255 - SIBLING_NAME_BYTES)
    assert need_output_path("path", tmp_path / name, force=False) == tmp_path / name
    r = sl.simulate("vm-2", "v3.8", W, seed=1, trace=True)
    r.to_ftrace(tmp_path / name)
    assert (tmp_path / name).stat().st_size > 0 and _strays(tmp_path) == []


@pytest.mark.parametrize("method", ["to_perfetto", "to_ftrace"])
def test_a_path_ending_in_a_separator_is_refused(method, tmp_path):
    pytest.importorskip("perfetto") if method == "to_perfetto" else None
    r = sl.simulate("vm-2", "v3.8", W, seed=1, trace=True)
    with pytest.raises(sl.ConfigError, match="ends with a path separator"):
        getattr(r, method)(str(tmp_path / "new.trace") + "/")
    assert list(tmp_path.iterdir()) == []


def test_a_checkpoint_write_failing_with_any_os_error_keeps_its_rows(tmp_path):
    # past the up-front check (a name the directory refuses only for the
    # digest's temporary file): an OutputError with the rows, not a bare OSError
    from schedlab.run.checkpoint import save_checkpoint

    df = sl.sweep("vm-2", "v3.8", W, {"migration_cost_ns": [0]}, progress=False)
    path = tmp_path / ("c" * 245)  # <name>.sha256.tmp is 256 bytes
    with pytest.raises(sl.exceptions.OutputError, match="could not write checkpoint=") as e:
        save_checkpoint(path, df, "fp")
    assert e.value.partial.equals(df)
    assert list(tmp_path.iterdir()) == []


class _DoneAtSubmit(Executor):
    """An executor whose futures are finished when submitted: when a
    checkpoint write fails, every chunk submitted has finished."""

    def submit(self, fn, /, *args, **kwargs):
        f: Future = Future()
        f.set_result(fn(*args, **kwargs))
        return f


def test_with_an_executor_a_failed_checkpoint_keeps_the_chunks_finished_meanwhile(
    tmp_path, monkeypatch
):
    grid = {"migration_cost_ns": [0, 100_000, 200_000, 300_000, 400_000, 500_000]}
    full = sl.sweep("vm-2", "v3.8", W, grid, progress=False)
    monkeypatch.setattr(execute_mod, "_SAVE_S", 0.0)
    DiskFull(monkeypatch, fail_at=2)
    ck = tmp_path / "ck.parquet"
    with pytest.raises(sl.exceptions.OutputError) as e:
        sl.sweep(
            "vm-2",
            "v3.8",
            W,
            grid,
            checkpoint=ck,
            executor=_DoneAtSubmit(),
            chunk_size=1,
            progress=False,
        )
    # all six chunks had finished when the second write failed
    assert _no_wall(e.value.partial).equals(_no_wall(full))


def test_a_symlinked_checkpoint_writes_its_target_and_keeps_the_link(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    link = tmp_path / "ck.parquet"
    link.symlink_to(store / "real.parquet")
    grid = {"migration_cost_ns": [0, 500_000]}
    first = sl.sweep("vm-2", "v3.8", W, grid, checkpoint=link, progress=False)
    assert link.is_symlink() and (store / "real.parquet").is_file()
    assert (store / "real.parquet.sha256").is_file()
    again = sl.sweep("vm-2", "v3.8", W, grid, checkpoint=link, progress=False)
    assert again.equals(first)  # resumed through the link: nothing re-run


def test_the_cli_names_the_flag_of_an_empty_nice_item_and_an_empty_memory_limit(spec, capsys):
    assert main(["run", "--workload", "spinners", "--nice", "1,,2"]) == 2
    assert "invalid --nice='1,,2'" in capsys.readouterr().err
    assert _sweep(spec, "o.parquet", "--memory-limit", "") == 2
    assert "invalid --memory-limit=''" in capsys.readouterr().err
