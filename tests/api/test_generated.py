"""The files generated from the core's field declarations are up to date:
``scripts/dev/gen_fields.py --check`` fails when the typed attributes of
``Kernel``/``CostModel`` (config.py) or the ``KernelFields``/``CostFields``
TypedDicts (_core.pyi) are out of step with the compiled core."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "scripts" / "dev" / "gen_fields.py"


def test_the_generated_field_blocks_match_the_core():
    p = subprocess.run([sys.executable, str(GEN), "--check"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_the_check_sees_a_stale_block(tmp_path, monkeypatch):
    """The check itself: a block edited by hand is reported."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_fields", GEN)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    pkg = tmp_path / "python" / "schedlab"
    pkg.mkdir(parents=True)
    for name in ("config.py", "_core.pyi", "exceptions.py"):
        (pkg / name).write_text((gen.PKG / name).read_text())
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "PKG", pkg)
    assert gen.stale() == []
    cfg = pkg / "config.py"
    cfg.write_text(
        cfg.read_text().replace("    hz: Literal[100, 250, 300, 1000]\n", "    hz: int\n")
    )
    assert gen.stale() == [cfg]
    assert gen.main(["--check"]) == 1
    assert gen.main([]) == 0
    assert gen.stale() == []
