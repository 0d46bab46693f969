"""The 2-socket presets of today's boxes: their shape, the domain
levels the model builds on them, and a short hackbench run on each."""

import polars as pl
import pytest
import schedlab as sl
from schedlab.workloads import hackbench

SHAPES = {
    # name: (CPUs, sockets, cores/socket, threads, llc_cores, nodes, LLCs)
    "epyc-genoa-2s": (384, 2, 96, 2, 8, 2, 24),
    "spr-2s": (224, 2, 56, 2, 56, 2, 2),
}

# CPU is the socket (= node) level, 6.x's PKG; degenerate on spr-2s, whose L3
# is the socket.
LEVELS = {"epyc-genoa-2s": ["SIBLING", "MC", "CPU", "NUMA"], "spr-2s": ["SIBLING", "MC", "NUMA"]}


@pytest.mark.parametrize("name", list(SHAPES))
def test_preset_shape(name):
    m = sl.Machine.preset(name)
    cpus, s, c, t, llc, nodes, llcs = SHAPES[name]
    assert (m.nr_cpus, m.sockets, m.cores_per_socket, m.threads_per_core) == (cpus, s, c, t)
    assert (m.llc_cores, m.numa_nodes) == (llc, nodes)
    assert s * c // m.llc_cores == llcs
    # the same shape built by hand is the preset but for its name
    assert sl.Machine(s, c, t, llc_cores=llc, numa_nodes=nodes).nr_cpus == cpus


@pytest.mark.parametrize("name", list(SHAPES))
def test_short_hackbench_runs_and_is_deterministic(name):
    w = hackbench(groups=4, fds=10, loops=10, ipc="pipe", mode="thread")
    runs = [sl.simulate(name, "v3.8", w, duration_s=30.0, seed=3) for _ in range(2)]
    for r in runs:
        assert r.status == "ok", r.status_detail
        assert r.metrics["messages"] == r.metrics["messages_expected"] > 0
        assert r.tasks["exited"].all()
    a, b = runs
    assert a.metrics == b.metrics
    assert a.tasks.equals(b.tasks)
    assert a.sim_time_s == b.sim_time_s
    assert a.tasks["cpu"].n_unique() > 1
    # the domain levels the model built, bottom up, as schedstat lists them
    levels = a.schedstat.filter(pl.col("cpu") == 0)["level"].to_list()
    assert levels == LEVELS[name]
