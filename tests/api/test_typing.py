"""One source of truth for field names: the Rust core's lists, the typed
attributes of Kernel/CostModel/Machine agree (the docs' generated tables are
checked in test_docs_tables.py); mypy catches a misspelt field."""

import subprocess
import sys
from pathlib import Path

import pytest
import schedlab as sl
from schedlab import _core

ROOT = Path(__file__).resolve().parents[2]


def annotated(cls: type) -> list[str]:
    return [k for k in cls.__annotations__ if not k.startswith("_")]


def test_kernel_attributes_follow_the_core_field_list():
    assert annotated(sl.Kernel) == ["name", *_core.KERNEL_FIELDS]
    assert [r["name"] for r in _core.KERNEL_FIELD_INFO] == list(_core.KERNEL_FIELDS)


def test_cost_model_attributes_follow_the_core_field_list():
    assert annotated(sl.CostModel) == list(_core.COST_FIELDS)


def test_machine_attributes_follow_the_core_dict():
    assert annotated(sl.Machine) == list(_core.machine_preset("vm-2"))


BAD = {
    'sl.Kernel.preset("v3.8").migraton_cost_ns': '"Kernel" has no attribute "migraton_cost_ns"',
    "sl.CostModel().context_swich_ns": '"CostModel" has no attribute "context_swich_ns"',
    'sl.Machine.preset("vm-2").nr_cpu': '"Machine" has no attribute "nr_cpu"',
    'x: str = sl.Kernel.preset("v3.8").hz': "Incompatible types in assignment",
    'y: bool = sl.Kernel.preset("v3.8").newidle_throttle': "Incompatible types in assignment",
}
GOOD = (
    'k = sl.Kernel.preset("v3.8")',
    "mc: int = k.migration_cost_ns",
    "thr: str = k.newidle_throttle",
    "rearm: bool = k.newidle_rearm",
    "c: int = sl.CostModel().context_switch_ns",
    'n: int = sl.Machine.preset("vm-2").nr_cpus',
)


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """One mypy --strict run over a file of misuses and a file of correct use."""
    d = tmp_path_factory.mktemp("typing")
    (d / "bad.py").write_text("import schedlab as sl\n\n" + "\n".join(BAD) + "\n")
    (d / "good.py").write_text("import schedlab as sl\n\n" + "\n".join(GOOD) + "\n")
    p = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--strict", "bad.py", "good.py"],
        capture_output=True,
        text=True,
        cwd=d,
    )
    out: dict[str, list[str]] = {"bad.py": [], "good.py": []}
    for line in p.stdout.splitlines():
        name = line.split(":", 1)[0]
        if name in out:
            out[name].append(line)
    return out


@pytest.mark.parametrize("code", list(BAD))
def test_mypy_rejects_misspelt_or_mistyped_fields(mypy_output, code):
    lineno = 3 + list(BAD).index(code)
    errors = [ln for ln in mypy_output["bad.py"] if ln.startswith(f"bad.py:{lineno}:")]
    assert any(BAD[code] in ln for ln in errors), mypy_output["bad.py"]


def test_mypy_accepts_correct_use(mypy_output):
    assert mypy_output["good.py"] == []


def test_stub_typed_dicts_follow_the_core_field_lists():
    """The TypedDicts of _core.pyi name exactly the core's fields."""
    import ast

    tree = ast.parse((ROOT / "python" / "schedlab" / "_core.pyi").read_text())
    keys = {
        node.name: [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)]
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }
    assert keys["KernelFields"] == ["name", *_core.KERNEL_FIELDS]
    assert keys["CostFields"] == list(_core.COST_FIELDS)
    assert keys["MachineFields"] == list(_core.machine_preset("vm-2"))
    decl = keys["_Decl"]
    assert decl + keys["FieldInfo"] == list(_core.KERNEL_FIELD_INFO[0])
    assert decl == list(_core.COST_FIELD_INFO[0])
