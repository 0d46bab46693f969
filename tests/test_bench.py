"""`python scripts/dev/bench.py` runs and prints its table (figures only; no
timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = str(Path(__file__).resolve().parents[1] / "scripts" / "dev" / "bench.py")


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
