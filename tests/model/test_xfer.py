"""CostModel.xfer_by_distance: on only for today's machine presets; on with zero
latencies changes nothing; on with the preset's latencies charges readers."""

from __future__ import annotations

import pytest
import schedlab as sl

W = sl.workloads.hackbench(groups=2, loops=20, ipc="socket", mode="thread")
ZERO = {
    f: 0 for f in ("xfer_smt_ns", "xfer_llc_ns", "xfer_socket_ns", "xfer_node_ns", "xfer_remote_ns")
}


@pytest.mark.parametrize("machine", sl.Machine.presets())
def test_on_only_for_todays_machine_presets(machine):
    c = sl.CostModel.preset(machine)
    assert c.xfer_by_distance is (machine in ("epyc-genoa-2s", "spr-2s"))
    assert 0 < c.xfer_llc_ns <= c.xfer_remote_ns


def test_the_switch_alone_changes_nothing_and_the_latencies_cost_time():
    base = sl.CostModel.preset("core2-2s")
    off = sl.simulate("core2-2s", "v3.13", W, costs=base, seed=3).metrics
    zero = sl.simulate(
        "core2-2s", "v3.13", W, costs=base.replace(xfer_by_distance=True, **ZERO), seed=3
    ).metrics
    assert zero == off
    slow = base.replace(xfer_by_distance=True, xfer_socket_ns=5_000, xfer_node_ns=5_000)
    on = sl.simulate("core2-2s", "v3.13", W, costs=slow, seed=3).metrics
    # 5 µs a line, 4 lines per 100-byte message: cross-pair reads cost far more system time
    assert on["sys_s"] > off["sys_s"] * 1.2


def test_bad_values_are_refused():
    with pytest.raises(sl.ConfigTypeError, match="xfer_by_distance"):
        sl.CostModel(xfer_by_distance=1)
    with pytest.raises(sl.ConfigError, match="xfer_meta_lines"):
        sl.CostModel(xfer_meta_lines=100)
