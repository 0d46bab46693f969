"""The documentation's generated tables (scripts/dev/docs_tables.py, which
mkdocs-gen-files turns into the Kernel fields, Presets and Costs pages) list
exactly the code's fields and presets, with the code's values; the prose
columns refuse a field or preset they do not describe; and no page keeps a
hand-written copy of a generated table."""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path
from types import ModuleType

import pytest
import schedlab as sl

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "scripts" / "dev"


@pytest.fixture(scope="module")
def tables() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_tables", DEV / "docs_tables.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rows(table: str) -> list[list[str]]:
    """The body rows of a Markdown table, split into cells."""
    out = [ln.strip("|").split(" | ") for ln in table.splitlines() if ln.startswith("| `")]
    return [[c.strip() for c in r] for r in out]


def test_kernel_fields_table_lists_every_field_in_order_with_preset_values(tables):
    body = rows(tables.kernel_fields_table())
    assert [r[0].strip("`") for r in body] == sl.Kernel.fields()
    info = {r["field"]: r for r in sl.Kernel.info().iter_rows(named=True)}
    presets = sl.Kernel.presets()
    for r in body:
        f = r[0].strip("`")
        assert r[1 : 1 + len(presets)] == [str(getattr(sl.Kernel.preset(p), f)) for p in presets]
        assert r[-1] == tables._linked(info[f]["doc"])  # its declared doc, docs pages linked


def test_kernel_fields_script_prints_the_same_table(tables, capsys, monkeypatch):
    # run as `python scripts/dev/kernel_fields_table.py` would: its folder first on sys.path
    monkeypatch.syspath_prepend(str(DEV))
    monkeypatch.delitem(sys.modules, "docs_tables", raising=False)
    runpy.run_path(str(DEV / "kernel_fields_table.py"), run_name="__main__")
    assert capsys.readouterr().out == tables.kernel_fields_table()


def test_cost_table_lists_every_field_with_its_default(tables):
    body = rows(tables.cost_table())
    assert [r[0].strip("`") for r in body] == sl.CostModel.fields()
    d = sl.CostModel()
    assert [r[1] for r in body] == [str(getattr(d, f)) for f in sl.CostModel.fields()]
    # the per-machine column is what CostModel.preset(machine) changes
    vm2 = next(r for r in body if r[0] == "`ipi_latency_ns`")
    assert f"`vm-2`: {sl.CostModel.preset('vm-2').ipi_latency_ns}" in vm2[2]
    # the "charged as" column is each field's declared doc, its docs pages linked
    docs = sl.CostModel.info()["doc"].to_list()
    assert [r[3] for r in body] == [tables._linked(d) for d in docs]
    xfer = next(r for r in body if r[0] == "`xfer_by_distance`")
    assert "[docs/calibration.md](../calibration.md)" in xfer[3]


def test_machine_table_lists_every_preset_with_its_shape(tables):
    body = rows(tables.machine_presets_table())
    assert [r[0].strip("`") for r in body] == sl.Machine.presets()
    for r in body:
        m = sl.Machine.preset(r[0].strip("`"))
        assert r[1] == f"{m.sockets} × {m.cores_per_socket} × {m.threads_per_core}"
        assert int(r[2]) == m.nr_cpus


def test_kernel_presets_table_lists_each_preset_and_its_changes(tables):
    body = rows(tables.kernel_presets_table())
    assert [r[0].strip("`") for r in body] == sl.Kernel.presets()
    rc1 = next(r for r in body if r[0] == "`v2.6.37-rc1`")
    assert "`newidle_rearm`: False → True" in rc1[1]


def test_a_prose_column_out_of_step_with_the_code_fails_the_build(tables, monkeypatch):
    notes = dict(tables.MACHINE_NOTES)
    del notes["vm-2"]
    monkeypatch.setattr(tables, "MACHINE_NOTES", notes)
    with pytest.raises(SystemExit, match="undocumented \\['vm-2'\\]"):
        tables.machine_presets_table()
    monkeypatch.setattr(tables, "MACHINE_NOTES", {**tables.MACHINE_NOTES, "gone-1": "x"})
    with pytest.raises(SystemExit, match="no longer in the code \\['gone-1'\\]"):
        tables.machine_presets_table()


def test_no_page_keeps_a_hand_written_copy_of_a_generated_table():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for p in pages:
        text = p.read_text()
        assert "kernel-fields:start" not in text, p
        assert "| field | default | charged as |" not in text, p
        assert "| `migration_cost_ns` | 500000" not in text, p


def test_readme_stays_short_and_opens_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 150
    assert lines[2:6] == [
        "```sh",
        "pip install '.[perfetto]' && schedlab demo   # install, run the built-in demo",
        "make test                          # install test deps, run every check and test",
        "```",
    ]
