"""Write the Python side of the core's field declarations.

Each ``Kernel`` and ``CostModel`` field is declared once, in the Rust core
(``src/kernel.rs``, ``src/cost.rs``: the ``config_struct!`` lists), and so is
the exception tree (``src/bindings/errors.rs``). This script writes what
Python needs of them from the compiled module
(``schedlab._core.KERNEL_FIELD_INFO``, ``COST_FIELD_INFO``, ``FIELD_KINDS``,
``EXCEPTIONS``), between the ``BEGIN generated`` / ``END generated`` markers
(exactly one pair per block) of:

- ``python/schedlab/config.py``: the typed attributes of ``Kernel`` and
  ``CostModel`` (with their ``Literal`` value sets), which mypy checks user
  code against;
- ``python/schedlab/_core.pyi``: the ``KernelFields`` and ``CostFields``
  TypedDicts, ``FieldInfo.kind``'s values, the exception classes, and from
  the workload declarations (``src/workload/params.rs``,
  ``_core.WORKLOAD_PARAMS``) ``WorkloadParamInfo.kind``'s values and one
  TypedDict per keyed workload kind's parameter dict (``HackbenchParams``);
- ``python/schedlab/exceptions.py``: the re-export of the exception classes.

Run it after adding or changing a field (with the package rebuilt):

    python scripts/dev/gen_fields.py          # rewrite the generated blocks
    python scripts/dev/gen_fields.py --check  # exit 1 naming what is stale

``tests/api/test_generated.py`` runs ``--check``, so a stale file fails the tests.
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


def _exception_stubs(tree: list[tuple[str, list[str], str, list[tuple[str, str]]]]) -> list[str]:
    out = []
    for name, bases, _doc, attrs in tree:
        head = f"class {name}({', '.join(bases)}):"
        if attrs:  # a class with a body stands apart, by one blank line (ruff's stub layout)
            out += [
                *([""] if out and out[-1] else []),
                head,
                *(f"    {a}: {t}" for a, t in attrs),
                "",
            ]
        else:
            out.append(f"{head} ...")
    return out


#: A declared parameter's type in a stub, by ``WORKLOAD_PARAMS``' ``type``.
_PY_TYPES = {"int": "int", "float": "float", "bool": "bool", "cpus": "list[int]", "other": "Any"}


def _param_type(p: dict[str, Any]) -> str:
    if p["type"] == "choice":
        t = "Literal[" + ", ".join(f'"{v}"' for v in p["values"]) + "]"
    elif p["type"] == "other" and isinstance(p["default"], str):
        t = "str"  # checked by its kind (aim7's workfile)
    else:
        t = _PY_TYPES[p["type"]]
    optional = p["default"] is None and not p["required"] and t != "Any"
    return f"{t} | None" if optional else t


def _workload_dicts(params: list[dict[str, Any]], keyed: list[str]) -> list[str]:
    """One TypedDict per keyed kind: the core's keys (``name``) and types; a
    parameter whose builder default is None may be left out (``NotRequired``)."""
    out: list[str] = []
    for kind in keyed:
        cls = "".join(w.capitalize() for w in kind.split("_")) + "Params"
        out += ["", f"class {cls}(TypedDict):"] if out else [f"class {cls}(TypedDict):"]
        for p in (p for p in params if p["kind"] == kind):
            t = _param_type(p)
            if p["default"] is None and not p["required"]:
                t = f"NotRequired[{t}]"
            out.append(f"    {p['name']}: {t}")
    return [*out, ""]  # a class with a body stands apart (ruff's stub layout)


def _exception_imports(tree: list[tuple[str, list[str], str, list[tuple[str, str]]]]) -> list[str]:
    names = [t[0] for t in tree]
    return [
        "from ._core import (",
        *(f"    {n}," for n in sorted(names)),
        ")",
        "",
        "__all__ = [",
        *(f'    "{n}",' for n in names),
        "]",
    ]


def load_core() -> Any:
    """The compiled ``schedlab._core``, loaded on its own: importing it
    through the package would run ``schedlab/__init__.py``, which needs the
    very files this script writes."""
    import importlib.machinery
    import importlib.util

    if "schedlab._core" in sys.modules:
        return sys.modules["schedlab._core"]
    pkg = importlib.util.find_spec("schedlab")
    if pkg is None or not pkg.submodule_search_locations:
        raise SystemExit("schedlab is not installed: build it first (make install-test)")
    for d in pkg.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(d) / f"_core{suffix}"
            if path.exists():
                loader = importlib.machinery.ExtensionFileLoader("schedlab._core", str(path))
                spec = importlib.util.spec_from_file_location("schedlab._core", path, loader=loader)
                assert spec is not None
                core = importlib.util.module_from_spec(spec)
                loader.exec_module(core)
                return core
    raise SystemExit("schedlab._core not found beside the installed package: rebuild it")


def blocks() -> dict[tuple[Path, str], list[str]]:
    """What goes between each file's markers, by (file, block name)."""
    _core = load_core()

    kernel = list(_core.KERNEL_FIELD_INFO)
    cost = list(_core.COST_FIELD_INFO)
    kinds = ", ".join(f'"{k}"' for k in _core.FIELD_KINDS)
    tree = list(_core.EXCEPTIONS)
    wparams = [dict(p) for p in _core.WORKLOAD_PARAMS]
    kinds_and_parts = [*_core.WORKLOAD_KINDS, *_core.WORKLOAD_COMPONENTS]
    wkinds = ["    kind: Literal[", *(f'        "{k}",' for k in kinds_and_parts), "    ]"]
    return {
        (PKG / "config.py", "Kernel fields"): _annotations(kernel, "    "),
        (PKG / "config.py", "CostModel fields"): _annotations(cost, "    "),
        (PKG / "_core.pyi", "KernelFields"): _annotations(kernel, "    "),
        (PKG / "_core.pyi", "CostFields"): _annotations(cost, "    "),
        (PKG / "_core.pyi", "FieldInfo kind"): [f"    kind: Literal[{kinds}]"],
        (PKG / "_core.pyi", "exceptions"): _exception_stubs(tree),
        (PKG / "_core.pyi", "WorkloadParamInfo kind"): wkinds,
        (PKG / "_core.pyi", "workload params"): _workload_dicts(
            wparams, [*_core.WORKLOAD_KEYED_KINDS, *_core.WORKLOAD_COMPONENTS]
        ),
        (PKG / "exceptions.py", "exceptions"): _exception_imports(tree),
    }


def _marker(kind: str, name: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*# {kind} generated {re.escape(name)}\b.*$", re.M)


def render(text: str, name: str, lines: list[str], path: Path) -> str:
    """``text`` with the block ``name`` replaced by ``lines``."""
    begins = list(_marker("BEGIN", name).finditer(text))
    ends = list(_marker("END", name).finditer(text))
    begin = begins[0] if len(begins) == 1 else None
    end = ends[0] if len(ends) == 1 else None
    if begin is None or end is None or end.start() < begin.end():
        raise SystemExit(
            f"{path.relative_to(ROOT)}: not exactly one '# BEGIN generated {name} ...' / "
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
