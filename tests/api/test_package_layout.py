"""The package's modules use only each other's public names.

A name with a leading underscore is private to the module that defines it:
no other module of ``schedlab`` may import it (``from .sweep import _plan``)
or reach it through an imported module (``workloads._FACTORIES``). What a
sibling needs is a public, documented name of its module. Private *modules*
(``_core``, ``_check``, ``_progress``, ``_table``) may be imported; the names
taken from them must still be public. Read from the source with ``ast``
(nothing is imported), so the check is fast and sees every module.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "schedlab"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(path: Path, package: Path) -> tuple[list[str], bool]:
    """The module's dotted name as parts, and whether it is a package."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        return parts[:-1], True
    return parts, False


def _is_module(parts: list[str], package: Path) -> bool:
    """Whether ``parts`` (``["schedlab", "run", "plan"]``) names a module or
    package of the source tree (``_core`` is the compiled one, with its stub)."""
    base = package.parent.joinpath(*parts)
    return (
        base.is_dir()
        or base.with_suffix(".py").is_file()
        or base.with_suffix(".pyi").is_file()
        or any(base.parent.glob(base.name + ".*.so"))
    )


def _target(node: ast.ImportFrom, here: list[str], is_package: bool) -> list[str] | None:
    """The dotted parts of the module ``node`` imports from, if it is the package's."""
    if node.level == 0:
        parts = (node.module or "").split(".")
        return parts if parts[0] == here[0] else None
    base = here if is_package else here[:-1]
    base = base[: len(base) - (node.level - 1)]
    return base + (node.module.split(".") if node.module else [])


def private_uses(path: Path, package: Path = PACKAGE) -> list[str]:
    """Every private name of another module of ``package`` that ``path``
    imports or reads through an imported module, as ``file:line: what``."""
    here, is_package = _dotted(path, package)
    tree = ast.parse(path.read_text(), filename=str(path))
    rel = path.relative_to(package.parent)
    found: list[tuple[int, str]] = []
    modules: dict[str, str] = {}  # local name -> the schedlab module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            src = _target(node, here, is_package)
            if src is None:
                continue
            for alias in node.names:
                if _is_module([*src, alias.name], package):
                    modules[alias.asname or alias.name] = ".".join([*src, alias.name])
                elif _private(alias.name):
                    found.append((node.lineno, f"imports {alias.name} from {'.'.join(src)}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != package.name:
                    continue
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:  # `import schedlab.x.y` binds `schedlab`
                    modules[package.name] = package.name

    def resolve(e: ast.expr) -> str | None:
        """The schedlab module ``e`` evaluates to, if it is one."""
        if isinstance(e, ast.Name):
            return modules.get(e.id)
        if (  # sys.modules["schedlab.x"]
            isinstance(e, ast.Subscript)
            and isinstance(e.value, ast.Attribute)
            and e.value.attr == "modules"
            and isinstance(e.slice, ast.Constant)
            and isinstance(e.slice.value, str)
            and e.slice.value.split(".")[0] == package.name
        ):
            return e.slice.value
        if (  # __import__("schedlab.x", ...)
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Name)
            and e.func.id == "__import__"
            and e.args
            and isinstance(e.args[0], ast.Constant)
            and isinstance(e.args[0].value, str)
            and e.args[0].value.split(".")[0] == package.name
        ):
            return e.args[0].value
        if isinstance(e, ast.Attribute):
            base = resolve(e.value)
            if base is not None and _is_module([*base.split("."), e.attr], package):
                return f"{base}.{e.attr}"
            return None
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Name | ast.Attribute)
            and (e.func.id if isinstance(e.func, ast.Name) else e.func.attr) == "import_module"
            and e.args
            and isinstance(e.args[0], ast.Constant)
            and isinstance(e.args[0].value, str)
        ):
            name = e.args[0].value
            if name.startswith(".") and len(e.args) > 1 and isinstance(e.args[1], ast.Constant):
                name = f"{e.args[1].value}{name}"  # import_module(".x", "schedlab")
            return name if name.split(".")[0] == package.name else None
        return None

    # names bound to a module by plain assignment (``alias = workloads``),
    # to a fixed point
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                t, mod = node.targets[0], resolve(node.value)
                if isinstance(t, ast.Name) and mod is not None and modules.get(t.id) != mod:
                    modules[t.id] = mod
                    changed = True

    def private_const(e: ast.expr) -> str | None:
        if isinstance(e, ast.Constant) and isinstance(e.value, str) and _private(e.value):
            return e.value
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            mod = resolve(node.value)
            if mod is not None:
                found.append((node.lineno, f"uses {mod}.{node.attr}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and len(node.args) >= 2
        ):
            mod, name = resolve(node.args[0]), private_const(node.args[1])
            if mod is not None and name is not None:
                found.append((node.lineno, f"uses {mod}.{name} through {node.func.id}"))
        elif isinstance(node, ast.Subscript) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            # mod.__dict__["_x"], vars(mod)["_x"], mod.__dict__.get("_x")
            holder = node.value if isinstance(node, ast.Subscript) else node.func.value
            key = node.slice if isinstance(node, ast.Subscript) else node.args[0]
            if isinstance(holder, ast.Attribute) and holder.attr == "__dict__":
                mod = resolve(holder.value)
            elif (
                isinstance(holder, ast.Call)
                and isinstance(holder.func, ast.Name)
                and holder.func.id == "vars"
                and holder.args
            ):
                mod = resolve(holder.args[0])
            else:
                mod = None
            name = private_const(key)
            if mod is not None and name is not None:
                found.append((node.lineno, f"uses {mod}.{name} through its namespace"))
    return [f"{rel}:{line}: {what}" for line, what in sorted(found)]


def test_no_module_uses_another_modules_private_names():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    found = [use for f in files for use in private_uses(f)]
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_the_check_sees_each_kind_of_private_use(tmp_path):
    pkg = tmp_path / "schedlab"
    (pkg / "run").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_check.py").write_text("def need_int(): ...\n_LIMIT = 1\n")
    (pkg / "workloads.py").write_text("_FACTORIES = {}\n")
    (pkg / "run" / "__init__.py").write_text("")
    (pkg / "run" / "plan.py").write_text("def _plan(): ...\n")
    user = pkg / "run" / "execute.py"
    user.write_text(
        "import datetime as _dt\n"  # a private alias of another package: fine
        "from .. import _check, workloads\n"  # a private module: fine
        "from .._check import need_int, _LIMIT\n"
        "from .plan import _plan\n"
        "from schedlab.run.plan import _plan as p\n"
        "x = workloads._FACTORIES, _check.need_int, workloads.__name__\n"
        "import schedlab.workloads\n"
        "from .. import run\n"
        "from importlib import import_module\n"
        "y = schedlab.workloads._FACTORIES, run.plan._plan, getattr(run.plan, '_plan')\n"
        "z = run.plan.__dict__['_plan'], import_module('schedlab.workloads')._FACTORIES\n"
        "ok = getattr(run.plan, 'plan_runs'), run.plan.__dict__['x'], schedlab.__name__\n"
        "import sys\n"
        "a = vars(workloads)['_FACTORIES'], workloads.__dict__.get('_FACTORIES')\n"
        "b = sys.modules['schedlab.workloads']._FACTORIES\n"
        "c = import_module('.workloads', 'schedlab')._FACTORIES\n"
        "d = __import__('schedlab.workloads', fromlist=['x'])._FACTORIES\n"
        "alias = workloads\n"
        "e = alias._FACTORIES, {}.get('_x'), vars(object())['_y']\n"
    )
    assert private_uses(user, pkg) == [
        "schedlab/run/execute.py:3: imports _LIMIT from schedlab._check",
        "schedlab/run/execute.py:4: imports _plan from schedlab.run.plan",
        "schedlab/run/execute.py:5: imports _plan from schedlab.run.plan",
        "schedlab/run/execute.py:6: uses schedlab.workloads._FACTORIES",
        "schedlab/run/execute.py:10: uses schedlab.run.plan._plan",
        "schedlab/run/execute.py:10: uses schedlab.run.plan._plan through getattr",
        "schedlab/run/execute.py:10: uses schedlab.workloads._FACTORIES",
        "schedlab/run/execute.py:11: uses schedlab.run.plan._plan through its namespace",
        "schedlab/run/execute.py:11: uses schedlab.workloads._FACTORIES",
        "schedlab/run/execute.py:14: uses schedlab.workloads._FACTORIES through its namespace",
        "schedlab/run/execute.py:14: uses schedlab.workloads._FACTORIES through its namespace",
        "schedlab/run/execute.py:15: uses schedlab.workloads._FACTORIES",
        "schedlab/run/execute.py:16: uses schedlab.workloads._FACTORIES",
        "schedlab/run/execute.py:17: uses schedlab.workloads._FACTORIES",
        "schedlab/run/execute.py:19: uses schedlab.workloads._FACTORIES",
    ]


SUBPACKAGES = ["run", "analysis", "io", "host"]


def test_no_module_is_named_like_a_function_it_exports():
    """``schedlab.run.simulate`` is the function, and stays it: importing a
    submodule binds its name on the package, so no module of a subpackage
    may be named like a name the subpackage (or ``schedlab``) exports."""
    import importlib
    import pkgutil
    import types

    import schedlab

    for sub in SUBPACKAGES:
        pkg = importlib.import_module(f"schedlab.{sub}")
        stems = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
        clash = stems & (set(pkg.__all__) | set(schedlab.__all__))
        assert not clash, (sub, clash)
        for stem in stems:  # every submodule imported: the names still are the objects
            importlib.import_module(f"schedlab.{sub}.{stem}")
        for name in pkg.__all__:
            assert not isinstance(getattr(pkg, name), types.ModuleType), (sub, name)
    assert schedlab.run.simulate is schedlab.simulate
