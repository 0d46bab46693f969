"""The metric reference (``sl.metric_info()``) against what runs report: the
engine's metrics in the declared order, and every optional family's names
declared, with each family seen at least once."""

from __future__ import annotations

import re

import schedlab as sl

W = sl.workloads
FAMILIES = ("trace", "rt", "power", "group", "latency")


def pattern(name: str) -> re.Pattern[str]:
    """A declared name as a regex: a ``<placeholder>`` is one or more characters."""
    parts = re.split(r"<[^>]+>", name)
    return re.compile(".+".join(re.escape(p) for p in parts) + "$")


def declared(family: str) -> list[re.Pattern[str]]:
    return [pattern(n) for n in sl.metric_info().filter(family=family)["name"]]


def test_the_table_has_a_row_per_metric_with_every_column_filled():
    info = sl.metric_info()
    assert info.columns == ["family", "name", "unit", "meaning", "source"]
    assert info["name"].n_unique() == info.height
    assert set(info["family"]) == {"core", *FAMILIES}
    for col in info.columns:
        assert (info[col].str.len_chars() > 0).all(), col


def test_every_run_reports_the_core_metrics_first_in_the_declared_order():
    core = sl.metric_info().filter(family="core")["name"].to_list()
    r = sl.simulate("vm-2", "v6.18", W.hackbench(groups=1, fds=2, loops=5), seed=1)
    assert list(r.metrics)[: len(core)] == core
    assert core == list(sl.result.CORE_METRICS)


def test_every_metric_an_option_adds_is_declared_in_its_family():
    """The options add their families' metrics; whatever a run reports
    beyond the plain run's (core + the workload's own) is declared."""
    hb = W.hackbench(groups=1, fds=2, loops=5, rt_kthreads=W.rt_kthreads(irq_threads=1))
    plain = sl.simulate("snb-laptop-4c", "v3.8", hb, seed=1)
    costs = sl.CostModel.preset("snb-laptop-4c").replace(turbo=True, cstates=True)
    full = sl.simulate(
        "snb-laptop-4c",
        "v3.8",
        hb.with_tasks(group="box"),
        seed=1,
        costs=costs,
        trace=True,
        latency=True,
        groups=[sl.Group("box", quota_us=50_000)],
        duration_s=0.2,
    )
    extra = [k for k in full.metrics if k not in plain.metrics]
    patterns = {f: declared(f) for f in FAMILIES}
    seen = {f: [k for k in extra if any(p.match(k) for p in patterns[f])] for f in FAMILIES}
    undeclared = [k for k in extra if not any(k in names for names in seen.values())]
    assert undeclared == [], undeclared
    assert all(seen[f] for f in FAMILIES if f != "rt"), seen
    rt = sl.metric_info().filter(family="rt")["name"].to_list()
    assert all(k in plain.metrics for k in rt), rt


def test_a_metric_the_table_does_not_declare_is_caught():
    """The check above can fail: a name of no family matches nothing."""
    assert not any(p.match("cstate_") for p in declared("power"))
    assert not any(p.match("group.box.cpu_ms") for p in declared("group"))
    assert any(p.match("group.box.cpu_s") for p in declared("group"))
