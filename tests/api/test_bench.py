"""`python scripts/dev/bench.py` runs and prints its table (figures only; no
timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = str(Path(__file__).resolve().parents[2] / "scripts" / "dev" / "bench.py")


def test_bench_quick_prints_every_scenario_and_the_sweep():
    p = subprocess.run(
        [sys.executable, BENCH, "--quick", "--reps", "1", "--no-real"],
        capture_output=True,
        text=True,
        check=True,
    )
    out = p.stdout
    for name in (
        "socket process",
        "pipe thread",
        "VolanoMark",
        "skl-sp-2s",
        "64-point sweep",
        "Memory over simulated time",
    ):
        assert name in out, name
    assert "sim-s/wall-s" in out and "peak MiB" in out


def test_bench_rejects_zero_reps():
    p = subprocess.run(
        [sys.executable, BENCH, "--reps", "0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2 and "--reps=0" in p.stderr


def test_bench_rejects_an_unknown_kernel():
    p = subprocess.run(
        [sys.executable, BENCH, "--kernel", "v9.9", "--no-real"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2 and "--kernel='v9.9'" in p.stderr and "v6.18" in p.stderr


def test_bench_compare_prints_both_kernels_for_every_scenario():
    p = subprocess.run(
        [sys.executable, BENCH, "--quick", "--reps", "1", "--no-real", "--compare", "v3.8,v6.18"],
        capture_output=True,
        text=True,
        check=True,
    )
    out = p.stdout
    assert "v3.8 ev/s" in out and "v6.18 ev/s" in out and "ratio" in out
    rows = [line for line in out.splitlines() if line.startswith(("vm-2", "core2", "skl"))]
    assert len(rows) == 6, out


def test_bench_compare_and_instructions_refuse_bad_input():
    for args, needle in (
        (["--compare", "v3.8"], "--compare='v3.8'"),
        (["--compare", "v3.8,v9.9"], "--compare='v3.8,v9.9'"),
        (["--compare", "v3.8,v6.18", "--kernel", "v6.6"], "cannot be combined"),
        (["--instructions"], "--instructions needs --compare"),
    ):
        p = subprocess.run(
            [sys.executable, BENCH, "--no-real", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert p.returncode == 2 and needle in p.stderr, (args, p.stderr)
