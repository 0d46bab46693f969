"""The schedlab command."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import schedlab as sl
from schedlab.cli import SPEC_EXAMPLE, _plain, main
from schedlab.io.spec import _TOP, load_spec, sweep_args


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


def help_of(*cmd: str, capsys) -> str:
    with pytest.raises(SystemExit) as info:
        main([*cmd, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("cmd", [(), ("demo",), ("run",), ("sweep",), ("measure",)])
def test_help_has_no_rst_markup(cmd, capsys):
    out = help_of(*cmd, capsys=capsys)
    assert "`" not in out and "::" not in out


def test_plain_strips_rst_markup():
    assert _plain("``x`` and :func:`y`, `z`_ and `w`::") == "x and y, z and w:"


def test_run_help_gives_machine_and_kernel_defaults_and_presets(capsys):
    out = " ".join(help_of("run", capsys=capsys).split())
    machine = out[out.index("--machine MACHINE") : out.index("--kernel KERNEL ")]
    kernel = out[out.index("--kernel KERNEL ") : out.index("--workload WORKLOAD ")]
    assert "default: vm-2" in machine and all(m in machine for m in sl.Machine.presets())
    assert "default: v3.8" in kernel and all(k in kernel for k in sl.Kernel.presets())


def test_sweep_help_describes_the_spec(capsys):
    out = help_of("sweep", capsys=capsys)
    assert SPEC_EXAMPLE.splitlines()[0] in out and "[workload]" in out
    flat = " ".join(out.split())
    for names in (sl.Machine.presets(), sl.Kernel.presets(), list(sl.workloads.FACTORIES)):
        assert ", ".join(names) in flat
    assert "OUTPUT.partial" in flat


def spec_keys(text: str, tmp_path) -> set[str]:
    """The keys of a spec, after checking that it loads and plans."""
    p = tmp_path / "spec.toml"
    p.write_text(text)
    s = load_spec(p)
    sweep_args(s)
    return set(s)


def test_the_help_spec_example_is_a_spec_with_every_key(tmp_path):
    assert spec_keys(SPEC_EXAMPLE, tmp_path) == _TOP


def test_the_cli_guide_spec_example_is_a_spec(tmp_path):
    guide = (Path(__file__).parents[2] / "docs" / "guide" / "cli.md").read_text()
    block = re.search(r"```toml\n(.*?)```", guide, re.DOTALL)
    assert block is not None
    assert spec_keys(block.group(1), tmp_path) >= {"machine", "kernel", "workload", "grid"}


@pytest.mark.parametrize(
    ("flag", "bad", "presets"),
    [("--machine", "core2", sl.Machine.presets()), ("--kernel", "v9", sl.Kernel.presets())],
)
def test_a_bad_preset_names_the_flag(flag, bad, presets, capsys):
    rc = main(["run", flag, bad, "--duration", "0.01"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == f"schedlab: error: invalid {flag} {bad!r}: expected one of {', '.join(presets)}\n"


def test_a_bad_preset_in_a_spec_names_the_key(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('machine = "core2"\n[workload]\nkind = "hackbench"\n')
    rc = main(["sweep", str(spec), "-o", str(tmp_path / "o.parquet"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and f"invalid machine 'core2' in {spec}: expected one of vm-2," in err
