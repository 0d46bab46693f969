"""The documentation site's sources, beside its strict build (make docs-build).

- the notebooks are rendered with their stored outputs (mkdocs-jupyter, not executed: executing
  them at smoke size would show CI-size numbers and cost the build their run time); those
  outputs must be one full-size run of the notebook's current code on the current model
  (``make notebooks``, scripts/dev/run_notebooks.py, stamps them), and a printed preset list
  must be the code's;
- every notebook is in the nav, and notebook 06 is linked from the calibration page;
- every documented docs command is quiet (the two third-party banners switched off);
- the Sweeps guide's Dask example runs as written.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import schedlab as sl

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "dev"))

import run_notebooks  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
QUIET = ("NO_MKDOCS_2_WARNING=1", "DISABLE_MKDOCS_2_WARNING=true")


def load(path: Path) -> dict[str, Any]:
    nb: dict[str, Any] = json.loads(path.read_text())
    return nb


def text(x: str | list[str]) -> str:
    return x if isinstance(x, str) else "".join(x)


def output_text(cell: dict[str, Any]) -> str:
    parts = []
    for o in cell.get("outputs", []):
        if "text" in o:
            parts.append(text(o["text"]))
        if "text/plain" in o.get("data", {}):
            parts.append(text(o["data"]["text/plain"]))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_are_one_run_of_the_notebook_top_to_bottom(path):
    code = [c for c in load(path)["cells"] if c["cell_type"] == "code"]
    counts = [c.get("execution_count") for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name}: code cells not run once each, in order ({counts}): run `make notebooks`"
    )
    errors = [o["ename"] for c in code for o in c["outputs"] if o["output_type"] == "error"]
    assert errors == [], f"{path.name}: stored outputs hold errors"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_are_of_the_current_code_and_model(path):
    nb = load(path)
    stored, now = nb["metadata"].get("schedlab"), run_notebooks.stamp(nb)
    hint = f"{path.name}: run `make notebooks` (or python scripts/dev/run_notebooks.py {path})"
    assert stored is not None, f"{hint}: its outputs were never stamped"
    assert stored["code_sha256"] == now["code_sha256"], f"{hint}: code changed since its run"
    assert stored["golden_sha256"] == now["golden_sha256"], (
        f"{hint}: tests/golden/presets.json (the model's numbers) changed since its run"
    )
    assert stored["nb_smoke"] is False, f"{hint}: stored outputs are the NB_SMOKE size"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_stored_preset_list_is_the_codes(path):
    current = {"Machine": sl.Machine.presets(), "Kernel": sl.Kernel.presets()}
    for cell in load(path)["cells"]:
        src = text(cell["source"])
        for cls, names in current.items():
            shown = rf"(print\(sl\.{cls}\.presets\(\)\)|^sl\.{cls}\.presets\(\)$)"
            if cell["cell_type"] == "code" and re.search(shown, src, re.M):
                assert repr(names) in output_text(cell), (
                    f"{path.name}: stored sl.{cls}.presets() is not {names}: run `make notebooks`"
                )


def test_every_notebook_is_in_the_nav_and_notebook_06_is_linked():
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1]
    assert [p.name for p in NOTEBOOKS if f": notebooks/{p.name}\n" not in nav] == []
    pages = [ROOT / "docs" / "calibration.md", ROOT / "docs" / "realkernel.md"]
    assert any("](notebooks/06-calibrate.ipynb)" in p.read_text() for p in pages)


def test_documented_docs_commands_are_quiet():
    makefile = (ROOT / "Makefile").read_text()
    env = re.search(r"^MKDOCS_ENV := (.*)$", makefile, re.M)
    assert env and env[1].split() == list(QUIET)
    runs = [line for line in makefile.splitlines() if re.search(r"\bmkdocs (build|serve)", line)]
    assert runs and all(line.startswith("\t$(MKDOCS_ENV) ") for line in runs), runs
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        for span in re.findall(r"`([^`]*\bmkdocs (?:build|serve)[^`]*)`", page.read_text()):
            assert all(q in span for q in QUIET), f"{page.name}: `{span}` prints the banners"


def sweeps_dask_example() -> str:
    blocks = re.findall(
        r"^```python\n(.*?)^```$", (ROOT / "docs/guide/sweeps.md").read_text(), re.M | re.S
    )
    [code] = [b for b in blocks if "dask.distributed" in b]
    return str(code)


@pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason="dask.distributed is not installed (pip install 'schedlab[dask]')",
)
def test_the_sweeps_guides_dask_example_runs_as_written(tmp_path):
    p = subprocess.run(
        [sys.executable, "-c", sweeps_dask_example()],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-3000:]
