"""The documentation's reference tables, built from the installed schedlab.

The docs site generates its reference pages from these at build time
(scripts/dev/gen_docs_pages.py, run by mkdocs-gen-files), so a table cannot
drift from the code: values, defaults and field lists come from the code,
and the prose column below must name exactly the code's machine presets
(a missing or stale entry raises, failing ``mkdocs build``); the fields' own
docs come from their declarations in the core.
tests/api/test_docs_tables.py checks the tables against the code.
"""

from __future__ import annotations

import re

import schedlab as sl

#: Notes column of the machine preset table, one per preset.
MACHINE_NOTES = {
    "vm-2": "like this development VM",
    "quad-4c": "a quad-core desktop, one L3: the idle_balance removal case's box",
    "core2-2s": "Harpertown: L2 shared per core pair, one node (FSB)",
    "nhm-ep": "Nehalem-EP, L3 and node per socket",
    "wsm-4s-40c": 'the AIM7 box (SMT left off: "40 cores")',
    "snb-ep-4s": "Sandy Bridge-EP",
    "skl-sp-2s": "the 0-day Skylake of the RT IPI case",
    "epyc-genoa-2s": "AMD EPYC 9654 (Zen 4): L3 per 8-core CCX (`llc_cores=8`, 12 per socket), "
    "node per socket (NPS1); domains SIBLING, MC (CCX), CPU (socket, 6.x's PKG), NUMA",
    "spr-2s": "Xeon Platinum 8480+ (Sapphire Rapids): L3 and node per socket (SNC off); "
    "SIBLING, MC, NUMA",
    "snb-laptop-4c": "a Core i7-2820QM-class Sandy Bridge laptop (4C/8T): the box of case 3's "
    "v6 watts table; turbo bins and C-states in [the power model](../power-model.md)",
}


#: A docs page named in a declared doc (``docs/balancer.md``, with an anchor).
_DOCS_PATH = re.compile(r"\bdocs/([\w/-]+\.md(?:#[\w-]+)?)")


def _linked(doc: str) -> str:
    """A declared doc as table text: the docs pages it names become links
    (the generated pages live in ``docs/reference/``)."""
    return _DOCS_PATH.sub(lambda m: f"[docs/{m.group(1)}](../{m.group(1)})", doc)


def _same_keys(what: str, docs: dict[str, str], names: list[str]) -> None:
    missing = [n for n in names if n not in docs]
    stale = [n for n in docs if n not in names]
    if missing or stale:
        raise SystemExit(
            f"scripts/dev/docs_tables.py: {what} out of step with the code: "
            f"undocumented {missing}, no longer in the code {stale}"
        )


def kernel_fields_table() -> str:
    """Every Kernel field, its value in each preset, and the change it models."""
    presets = sl.Kernel.presets()
    ks = [sl.Kernel.preset(p) for p in presets]
    lines = [
        "| field | " + " | ".join(presets) + " | kernel change | meaning |",
        "|---" * (len(presets) + 3) + "|",
    ]
    for r in sl.Kernel.info().iter_rows(named=True):
        f = r["field"]
        vals = [str(getattr(k, f)) for k in ks]
        if r["commit"]:
            origin = f"{r['commit']} ({r['release']})"
        else:
            origin = r["release"] or r["kind"]
        if not r["verified"]:
            origin += " ?"
        lines.append(f"| `{f}` | " + " | ".join(vals) + f" | {origin} | {_linked(r['doc'])} |")
    return "\n".join(lines) + "\n"


def kernel_presets_table() -> str:
    """Each kernel preset and the fields that differ from the preset before it."""
    presets = sl.Kernel.presets()
    lines = ["| preset | changes against the previous preset |", "|---|---|"]
    prev = None
    for name in presets:
        k = sl.Kernel.preset(name)
        if prev is None:
            changes = "(the base)"
        else:
            d = k.diff(prev)
            changes = ", ".join(
                f"`{f}`: {o} → {t}" for f, t, o in d.select("field", "this", "other").iter_rows()
            )
            changes = changes or "(none)"
        lines.append(f"| `{name}` | {changes} |")
        prev = k
    return "\n".join(lines) + "\n"


def machine_presets_table() -> str:
    """Each machine preset's shape (sockets × cores × threads), CPUs and notes."""
    names = sl.Machine.presets()
    _same_keys("MACHINE_NOTES", MACHINE_NOTES, names)
    lines = [
        "| preset | shape | CPUs | LLC cores | NUMA nodes | notes |",
        "|---|---|---|---|---|---|",
    ]
    for n in names:
        m = sl.Machine.preset(n)
        shape = f"{m.sockets} × {m.cores_per_socket} × {m.threads_per_core}"
        lines.append(
            f"| `{n}` | {shape} | {m.nr_cpus} | {m.llc_cores} | {m.numa_nodes} "
            f"| {MACHINE_NOTES[n]} |"
        )
    return "\n".join(lines) + "\n"


def cost_table() -> str:
    """Every CostModel field, its default, and what it charges."""
    defaults = sl.CostModel()
    names = sl.CostModel.fields()
    # each field's doc, as the core declares it (src/cost.rs)
    docs = dict(sl.CostModel.info().select("field", "doc").iter_rows())
    # what CostModel.preset(machine) (simulate's costs=None) changes, per field
    per_machine: dict[str, list[str]] = {n: [] for n in names}
    for m in sl.Machine.presets():
        c = sl.CostModel.preset(m)
        for n in names:
            if getattr(c, n) != getattr(defaults, n):
                per_machine[n].append(f"`{m}`: {getattr(c, n)}")
    lines = ["| field | default | machine presets | charged as |", "|---|---|---|---|"]
    for n in names:
        pm = ", ".join(per_machine[n])
        lines.append(f"| `{n}` | {getattr(defaults, n)} | {pm} | {_linked(docs[n])} |")
    return "\n".join(lines) + "\n"


#: What each family of metrics needs, in the order ``metric_info()`` lists them.
METRIC_FAMILIES = {
    "core": "Every run",
    "trace": "Runs with `trace=True`",
    "power": "Runs with `CostModel.turbo` or `CostModel.cstates`",
    "rt": 'Runs with RT tasks (`with_tasks(policy="fifo")`, `rt_kthreads=`)',
    "group": "Runs with task groups (`groups=`), one set per group",
    "latency": "Runs with `latency=True`",
}


def metric_table() -> str:
    """Every metric a run can report, by family, from ``sl.metric_info()``."""
    info = sl.metric_info()
    families = list(dict.fromkeys(info["family"].to_list()))
    _same_keys("metric families", METRIC_FAMILIES, families)
    out = []
    for fam in families:
        out.append(f"## {fam}\n\n{METRIC_FAMILIES[fam]}.\n")
        out.append("| metric | unit | meaning | stands for |\n|---|---|---|---|")
        rows = info.filter(family=fam).select("name", "unit", "meaning", "source").iter_rows()
        for name, unit, meaning, source in rows:
            out.append(f"| `{name}` | {unit} | {_linked(meaning)} | {source} |")
        out.append("")
    return "\n".join(out)


def workload_param_table() -> str:
    """Every workload kind's parameters, from ``sl.workload_info()``."""
    info = sl.workload_info()
    out = []
    for kind in dict.fromkeys(info["kind"].to_list()):
        out.append(f"## {kind}\n")
        out.append("| argument | type | default | allowed | meaning |\n|---|---|---|---|---|")
        rows = info.filter(kind=kind).iter_rows(named=True)
        for r in rows:
            default = "required" if r["required"] else f"`{r['default']}`"
            core = f" (the core's `{r['name']}`)" if r["name"] != r["arg"] else ""
            out.append(
                f"| `{r['arg']}` | {r['type']} | {default} | {r['allowed']} "
                f"| {_linked(r['doc'])}{core} |"
            )
        out.append("")
    return "\n".join(out)
