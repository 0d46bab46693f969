"""Machine, Kernel and CostModel: presets, replace, immutability, pickling."""

import pickle

import pytest
import schedlab as sl


def test_machine_presets_match_design():
    assert sl.Machine.presets() == [
        "vm-2",
        "quad-4c",
        "core2-2s",
        "nhm-ep",
        "wsm-4s-40c",
        "snb-ep-4s",
        "skl-sp-2s",
        "epyc-genoa-2s",
        "spr-2s",
        "snb-laptop-4c",
    ]
    sizes = {n: sl.Machine.preset(n).nr_cpus for n in sl.Machine.presets()}
    assert sizes == {
        "vm-2": 2,
        "quad-4c": 4,
        "core2-2s": 8,
        "nhm-ep": 16,
        "wsm-4s-40c": 40,
        "snb-ep-4s": 64,
        "skl-sp-2s": 112,
        "epyc-genoa-2s": 384,
        "spr-2s": 224,
        "snb-laptop-4c": 8,
    }
    m = sl.Machine.preset("core2-2s")
    assert (m.sockets, m.cores_per_socket, m.threads_per_core, m.llc_cores) == (2, 4, 1, 2)


def test_custom_machine_defaults():
    m = sl.Machine(sockets=2, cores_per_socket=4, threads_per_core=2)
    assert m.nr_cpus == 16 and m.llc_cores == 4 and m.numa_nodes == 2 and m.name == "custom"
    assert "16 CPUs" in repr(m)


def test_kernel_presets_and_replace():
    assert set(sl.Kernel.presets()) >= {"v2.6.36", "v3.8"}
    k = sl.Kernel.preset("v2.6.37" if "v2.6.37" in sl.Kernel.presets() else "v2.6.36")
    assert k.migration_cost_ns == 500_000 and k.nr_migrate == 32 and k.hz == 1000
    k2 = k.replace(migration_cost_ns=250_000, compat_yield=True)
    assert k2.migration_cost_ns == 250_000 and k2.compat_yield is True
    assert k.migration_cost_ns == 500_000, "replace must not mutate"
    assert k2.changes() == {"migration_cost_ns": 250_000, "compat_yield": True}
    d = k2.diff()
    assert d["field"].to_list() == ["migration_cost_ns", "compat_yield"]
    assert d["this"].to_list() == ["250000", "True"] and d["other"].to_list() == ["500000", "False"]
    assert k2.name == k.name
    assert set(sl.Kernel.fields()) >= {
        "migration_cost_ns",
        "nr_migrate",
        "latency_ns",
        "min_granularity_ns",
        "wakeup_granularity_ns",
        "tunable_scaling",
        "hz",
        "newidle_throttle",
        "idle_balance",
        "compat_yield",
        "newidle_rearm",
    }
    assert not set(sl.Kernel.fields()) & {"load_metric"}
    assert sl.Kernel.preset("v3.13").balance_policy == "performance"
    # rt_push is modelled (docs/rt.md)
    assert sl.Kernel.preset("v3.8").rt_push == "pull"
    assert sl.Kernel.preset("v3.13").pick == "cfs"


def test_v38_yields_through_the_skip_buddy():
    assert sl.Kernel.preset("v2.6.36").yield_impl == "update_curr"
    assert sl.Kernel.preset("v3.8").yield_impl == "skip_buddy"


def test_configs_are_immutable_values():
    k = sl.Kernel.preset("v3.8")
    with pytest.raises(AttributeError, match="immutable"):
        k.hz = 250  # type: ignore[misc]
    for obj in (k, sl.Machine.preset("nhm-ep"), sl.CostModel(tick_ns=500)):
        back = pickle.loads(pickle.dumps(obj))
        assert back == obj and hash(back) == hash(obj)
    assert sl.Kernel.preset("v3.8") != sl.Kernel.preset("v2.6.36")


def test_cost_model_replace():
    c = sl.CostModel()
    c2 = c.replace(context_switch_ns=3000)
    assert c2.context_switch_ns == 3000 and c.context_switch_ns != 3000
    assert sl.CostModel.fields() == list(c.to_dict())


def test_version_and_build_profile():
    assert sl.__version__.count(".") == 2
    assert sl.build_profile in ("release", "debug")
