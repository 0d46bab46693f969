"""The README's install commands, and how an extra is added (README.md, top).

- the installed schedlab declares pyproject.toml's extras, so ``pip install 'schedlab[X]'``
  (how the README and the guide add an extra) installs pyproject's list;
- pip takes ``schedlab[X]`` as the installed schedlab: nothing to build or fetch
  (``--no-index``), where ``pip install '.[X]'`` builds the wheel again;
- the requirements the Makefile installs by hand are pyproject's;
- the README opens with two commands; the first installs what its Quick start uses, the
  README says it compiles and how to watch, and ``make test`` runs both (``make readme``).
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "dev"))

import readme_check  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
README = (ROOT / "README.md").read_text()
MAKEFILE = (ROOT / "Makefile").read_text()


def norm(req: str) -> str:
    """A requirement without its marker, spelled one way."""
    r = Requirement(req)
    r.marker = None
    r.name = canonicalize_name(r.name)
    r.extras = {canonicalize_name(e) for e in r.extras}
    return str(r)


def test_the_installed_schedlab_declares_pyprojects_extras():
    installed: dict[str, set[str]] = {}
    for req in md.requires("schedlab") or []:
        m = re.search(r"""extra == ['"]([^'"]+)['"]""", req)
        if m:
            installed.setdefault(canonicalize_name(m[1]), set()).add(norm(req))
    declared = {canonicalize_name(e): {norm(r) for r in rs} for e, rs in EXTRAS.items()}
    assert installed == declared, (
        "the installed schedlab was built from another pyproject.toml: "
        "its extras are what pip install 'schedlab[X]' adds (reinstall it: make install-test)"
    )


def test_adding_an_extra_to_the_installed_schedlab_builds_and_fetches_nothing(tmp_path):
    # the extras whose packages the test environment has: test, and those within it
    within_test = {norm(r) for r in EXTRAS["test"]}
    extras = sorted(e for e, rs in EXTRAS.items() if {norm(r) for r in rs} <= within_test)
    assert {"test", "plot", "dask", "perfetto"} <= set(extras)
    report = tmp_path / "report.json"
    spec = f"schedlab[{','.join(extras)}]"
    p = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--report", report]
        + [spec],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"),
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Building wheel" not in p.stdout + p.stderr
    assert json.loads(report.read_text())["install"] == [], p.stdout


def test_what_the_makefile_installs_by_name_is_pyprojects():
    known = {norm(r) for r in EXTRAS["test"] + PYPROJECT["build-system"]["requires"]}
    pinned = []
    for line in MAKEFILE.splitlines():
        if "$(PIP) install" not in line:
            continue
        for word in shlex.split(line.split("$(PIP) install", 1)[1]):
            # a requirement by name: not an option, a path (`.`, a wheel) or schedlab itself
            if not re.match(r"[-.$/]|schedlab\b", word):
                pinned.append(word)
    assert pinned, "no requirement found in the Makefile's pip installs"
    assert [w for w in pinned if norm(w) not in known] == []


def test_the_readme_opens_with_two_commands_the_first_installing_what_the_quick_start_uses():
    first, second = readme_check.commands(README)
    install, _, rest = first.partition(" && ")
    m = re.fullmatch(r"pip install '\.\[([\w,-]+)\]'", install)
    assert m, first
    extras = set(m[1].split(","))
    assert extras <= set(EXTRAS) and rest == "schedlab demo"
    assert second == "make test"
    code = readme_check.quickstart(README)
    compile(code, "README.md (Quick start)", "exec")
    needs = {"perfetto": "to_perfetto(", "plot": "sl.plot.", "dask": "dask"}
    assert {e for e, use in needs.items() if use in code} <= extras


def test_the_readme_says_the_first_install_compiles_and_how_to_add_an_extra():
    top = " ".join(README.split("## What it is")[0].split())
    assert "compiles the Rust core" in top
    assert "pip install -v '.[perfetto]'" in top  # where cargo's progress shows
    assert re.search(r"`pip install 'schedlab\[\w+\]'` adds an extra later without a rebuild", top)


def test_make_test_runs_the_readme_commands():
    prereqs = re.search(r"^test:(.*)$", MAKEFILE, re.M)
    assert prereqs and "readme" in prereqs[1].split()
    recipe = re.search(r"^readme:\n\t(.*)$", MAKEFILE, re.M)
    assert recipe and recipe[1] == "$(PY) scripts/dev/readme_check.py"


@pytest.mark.parametrize("target", ["docs", "docs-build", "readme", "notebooks"])
def test_the_make_targets_the_docs_name_exist(target):
    assert re.search(rf"^{re.escape(target)}:", MAKEFILE, re.M)
    assert re.search(rf"^\.PHONY:.* {re.escape(target)}( |$)", MAKEFILE, re.M)
