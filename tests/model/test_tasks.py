"""Workload.with_tasks: task attributes (policy, nice, affinity) per role,
their refusals, and what they do to a run."""

from __future__ import annotations

import pytest
import schedlab as sl
from schedlab import _core

W = sl.workloads


def test_with_tasks_returns_a_new_workload_and_keeps_the_old():
    w = W.hackbench(groups=1, loops=20)
    b = w.with_tasks(policy="batch").with_tasks(nice=5, role="sender")
    assert w.tasks == () and "with_tasks" not in w.params
    assert [e["policy"] for e in b.tasks] == ["batch", None]
    assert b.params["with_tasks"][1] == {
        "role": "sender",
        "policy": None,
        "rt_priority": None,
        "nice": 5,
        "cpus": None,
        "group": None,
    }
    assert repr(b).endswith(".with_tasks(policy='batch').with_tasks(role='sender', nice=5)")
    assert b.tasks_label() == "policy=batch; role=sender nice=5"
    # replace() keeps the attributes
    assert b.replace(groups=2).tasks == b.tasks


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"policy": "fifo"}, 'rt_priority=None: expected 1 to 99 with policy "fifo"'),
        ({"policy": "rr", "role": "sender"}, 'role "sender" get no priority'),
        ({"rt_priority": 5}, "rt_priority=5: expected None unless policy"),
        ({"policy": "batch", "rt_priority": 5}, "rt_priority"),
        ({"policy": "deadline"}, 'policy="deadline"'),
        ({"role": "client", "nice": 1}, 'role="client".*"main", "sender", "receiver"'),
        ({"role": "sender"}, "sets nothing"),
        ({"nice": 2**40}, "nice=1099511627776: expected -20 to 19"),
        ({"policy": "fifo", "rt_priority": -1}, "rt_priority=-1: expected 1 to 99"),
        ({"nice": 20}, "nice=20: expected -20 to 19"),
        ({"nice": -21}, "nice=-21"),
        ({"cpus": []}, "cpus=\\[\\]"),
    ],
)
def test_invalid_attributes_name_the_parameter(kw, match):
    with pytest.raises(sl.ConfigError, match=match):
        W.hackbench(groups=1, loops=20).with_tasks(**kw)


def test_wrong_types_are_type_errors():
    w = W.hackbench(groups=1, loops=20)
    with pytest.raises(sl.ConfigTypeError, match="policy"):
        w.with_tasks(policy=3)  # type: ignore[arg-type]
    with pytest.raises(sl.ConfigTypeError, match="nice"):
        w.with_tasks(nice="5")  # type: ignore[arg-type]


def test_affinity_outside_the_machine_is_refused_when_it_runs():
    w = W.hackbench(groups=1, loops=20).with_tasks(cpus=[5])
    with pytest.raises(sl.ConfigError, match="cpus"):
        sl.simulate("vm-2", "v6.18", w)


def test_every_workload_documents_its_roles():
    for kind in ("spinners", "hackbench", "pipe_pingpong", "volano", "aim7"):
        roles = sl.Workload.roles(kind)
        assert roles and roles == list(_core.WORKLOAD_ROLES[kind])
    assert sl.Workload.roles("aim7") == ["driver", "child"]
    assert W.TASK_POLICIES == ("normal", "batch", "idle", "fifo", "rr")


def _metrics(w, seed=1):
    return sl.simulate("vm-2", "v6.18", w, seed=seed).metrics


def test_policies_change_the_run_as_the_kernel_would():
    w = W.hackbench(groups=2, loops=100)
    plain = _metrics(w)
    batch = _metrics(w.with_tasks(policy="batch"))
    idle = _metrics(w.with_tasks(policy="idle"))
    pinned = _metrics(w.with_tasks(cpus=0))
    # no wake-up preemption: far fewer switches and reschedule IPIs
    assert batch["context_switches"] < 0.6 * plain["context_switches"]
    assert batch["resched_ipis"] < plain["resched_ipis"]
    assert idle["context_switches"] < 0.8 * plain["context_switches"]
    # one CPU: no migrations, no IPIs to the other, slower
    assert pinned["cpu_migrations"] == 0 and pinned["resched_ipis"] == 0
    assert pinned["elapsed_s"] > 1.2 * plain["elapsed_s"]
    # normal policy and nice 0 are the defaults: the same run
    same = _metrics(w.with_tasks(policy="normal", nice=0))
    assert same == plain


def test_a_role_gets_only_its_own_attributes():
    w = W.hackbench(groups=1, loops=50)
    r = sl.simulate("vm-2", "v6.18", w.with_tasks(cpus=[1], role="receiver"), seed=2)
    t = r.tasks
    recv = t.filter(t["name"].str.starts_with("receiver"))
    send = t.filter(t["name"].str.starts_with("sender"))
    assert set(recv["cpu"].to_list()) == {1}
    assert recv["migrations"].sum() <= recv.height  # the one move onto CPU 1 at most
    assert send.height == 20


def test_with_tasks_is_deterministic_and_labelled_in_frames():
    w = W.hackbench(groups=1, loops=50).with_tasks(policy="idle", role="sender")
    assert _metrics(w, 3) == _metrics(w, 3)
    df = sl.sweep("vm-2", "v6.18", w, {"workload.loops": [20, 30]}, progress=False)
    assert set(df["workload.tasks"].to_list()) == {"role=sender policy=idle"}


def test_an_unknown_key_is_named_once_in_the_allowed_list():
    w = W.hackbench(groups=1, loops=20)
    params = {**w.params, "with_tasks": [{"policy": "batch", "prio": 1}]}
    with pytest.raises(sl.ConfigError) as e:
        _core.workload_check("hackbench", params)
    msg = str(e.value)
    assert "prio" in msg and msg.count("policy") == 1, msg


def test_rt_tasks_run_ahead_of_fair_ones_and_switch_less():
    """chrt --fifo 1 / --rr 1 on hackbench: equal-priority RT tasks never
    preempt each other on wake-up, so the run switches far less (and is
    not slower)."""
    w = W.hackbench(groups=2, loops=200, ipc="socket")
    plain = sl.simulate("vm-2", "v6.18", w, seed=3).metrics
    for pol in ("fifo", "rr"):
        r = sl.simulate("vm-2", "v6.18", w.with_tasks(policy=pol, rt_priority=1), seed=3)
        assert r.metrics["context_switches"] < 0.3 * plain["context_switches"]
        assert r.metrics["elapsed_s"] < 1.1 * plain["elapsed_s"]
        assert r.status == "ok"
        again = sl.simulate("vm-2", "v6.18", w.with_tasks(policy=pol, rt_priority=1), seed=3)
        assert again.metrics == r.metrics


def test_a_later_rt_policy_keeps_the_earlier_priority():
    w = W.hackbench(groups=1, loops=20).with_tasks(policy="fifo", rt_priority=3)
    w2 = w.with_tasks(role="sender", policy="rr")
    assert sl.simulate("vm-2", "v6.18", w2, seed=1).status == "ok"
    # a fair policy for every role needs no priority
    w3 = w.with_tasks(policy="batch")
    assert sl.simulate("vm-2", "v6.18", w3, seed=1).status == "ok"


def test_a_priority_alone_needs_an_rt_policy_by_then():
    w = W.hackbench(groups=1, loops=20).with_tasks(policy="fifo", rt_priority=5)
    # chrt -p 7 on a FIFO task: a new priority, the policy kept
    assert sl.simulate("vm-2", "v6.18", w.with_tasks(rt_priority=7), seed=1).status == "ok"
    batch = w.with_tasks(role="sender", policy="batch")
    with pytest.raises(sl.ConfigError, match="rt_priority=3: expected None unless policy"):
        batch.with_tasks(role="sender", rt_priority=3)


def test_rt_runs_keep_every_cpu_nanosecond_under_each_push_design():
    """user + sys + idle is the machine's time, FIFO receivers beside fair
    senders, under the pull and both push-IPI designs."""
    w = W.hackbench(groups=2, loops=100).with_tasks(policy="fifo", rt_priority=10, role="receiver")
    for push in ("pull", "push_ipi", "push_ipi_rd"):
        k = sl.Kernel.preset("v3.8").replace(rt_push=push)
        m = sl.simulate("vm-2", k, w, seed=2).metrics
        lost = 2 * m["sim_time_s"] - (m["user_s"] + m["sys_s"] + m["idle_s"])
        assert abs(lost) < 1e-6, (push, lost)


def test_rt_runtime_0_is_no_throttling():
    """sched_rt_runtime_exceeded() forgets the time when the runtime is 0."""
    w = W.hackbench(groups=1, loops=20).with_tasks(policy="fifo", rt_priority=1)
    k = sl.Kernel.preset("v6.18")
    zero = sl.simulate("vm-2", k.replace(sched_rt_runtime_us=0), w, seed=1)
    free = sl.simulate("vm-2", k.replace(sched_rt_runtime_us=-1), w, seed=1)
    assert zero.status == "ok" and zero.metrics == free.metrics
