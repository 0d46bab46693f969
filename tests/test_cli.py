"""The schedlab command."""

import json
import subprocess
import sys

from schedlab.cli import main


def test_run_prints_metrics_as_json(capsys):
    rc = main(["run", "--machine", "vm-2", "--nice", "0,0,5", "--duration", "0.05", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "ok" and out["elapsed_s"] == 0.05


def test_run_bad_override_is_a_one_line_error(capsys):
    rc = main(["run", "--set", "migration_cost_ns=-3", "--duration", "0.01"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.count("\n") == 0 and "migration_cost_ns=-3" in err


def test_demo_runs_as_a_command():
    p = subprocess.run(
        [sys.executable, "-m", "schedlab", "demo", "--quick", "--no-progress"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "prio_to_weight" in p.stdout and "compat_yield=1" in p.stdout
    # seed case 1 first: the comparison table and the vmstat columns
    assert p.stdout.index("VolanoMark") < p.stdout.index("prio_to_weight")
    for k in ("v2.6.36", "v2.6.37-rc1", "v2.6.37"):
        assert k in p.stdout
    assert "newidle/s" in p.stdout and "migrations/s" in p.stdout
    assert "us  sy  id" in p.stdout
