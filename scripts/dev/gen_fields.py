"""Write the Python side of the core's field declarations.

Each ``Kernel`` and ``CostModel`` field is declared once, in the Rust core
(``src/kernel.rs``, ``src/cost.rs``: the ``config_struct!`` lists). This
script writes what Python needs of them from the compiled module
(``schedlab._core.KERNEL_FIELD_INFO`` / ``COST_FIELD_INFO``), between the
``BEGIN generated`` / ``END generated`` markers of:

- ``python/schedlab/config.py``: the typed attributes of ``Kernel`` and
  ``CostModel`` (with their ``Literal`` value sets), which mypy checks user
  code against;
- ``python/schedlab/_core.pyi``: the ``KernelFields`` and ``CostFields``
  TypedDicts.

Run it after adding or changing a field (with the package rebuilt):

    python scripts/dev/gen_fields.py          # rewrite the generated blocks
    python scripts/dev/gen_fields.py --check  # exit 1 naming what is stale

``tests/test_generated.py`` runs ``--check``, so a stale file fails the tests.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "python" / "schedlab"


def _annotations(info: list[dict[str, Any]], indent: str) -> list[str]:
    return [f"{indent}{f['name']}: {f['type']}" for f in info]


def blocks() -> dict[tuple[Path, str], list[str]]:
    """What goes between each file's markers, by (file, block name)."""
    from schedlab import _core

    kernel = list(_core.KERNEL_FIELD_INFO)
    cost = list(_core.COST_FIELD_INFO)
    return {
        (PKG / "config.py", "Kernel fields"): _annotations(kernel, "    "),
        (PKG / "config.py", "CostModel fields"): _annotations(cost, "    "),
        (PKG / "_core.pyi", "KernelFields"): _annotations(kernel, "    "),
        (PKG / "_core.pyi", "CostFields"): _annotations(cost, "    "),
    }


def _marker(kind: str, name: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*# {kind} generated {re.escape(name)}\b.*$", re.M)


def render(text: str, name: str, lines: list[str], path: Path) -> str:
    """``text`` with the block ``name`` replaced by ``lines``."""
    begin = _marker("BEGIN", name).search(text)
    end = _marker("END", name).search(text)
    if begin is None or end is None or end.start() < begin.end():
        raise SystemExit(
            f"{path.relative_to(ROOT)}: no '# BEGIN generated {name} ...' / "
            f"'# END generated {name} ...' marker pair"
        )
    body = "".join(ln + "\n" for ln in lines)
    return text[: begin.end() + 1] + body + text[end.start() :]


def generate() -> dict[Path, tuple[str, str]]:
    """Each generated file: (its text now, its text as generated)."""
    out: dict[Path, tuple[str, str]] = {}
    for (path, name), lines in blocks().items():
        old, new = out.get(path, (path.read_text(), path.read_text()))
        out[path] = (old, render(new, name, lines, path))
    return out


def stale() -> list[Path]:
    """The generated files that are out of step with the compiled core."""
    return [p for p, (old, new) in generate().items() if old != new]


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    files = generate()
    changed = [p for p, (old, new) in files.items() if old != new]
    if argv == ["--check"]:
        for p in changed:
            print(
                f"{p.relative_to(ROOT)} is stale against the core's field declarations: "
                "run python scripts/dev/gen_fields.py",
                file=sys.stderr,
            )
        return 1 if changed else 0
    for p in changed:
        p.write_text(files[p][1])
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
