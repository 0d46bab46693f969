"""Semantics of scripted workloads that both front ends share (the core's
``workload::script``): timer slack follows the task's policy as the run
sets it, a replay's recorded sleeps are not stretched, ``time_scale`` scales
CPU work only, a loop that takes no time is an error, and a wake-up that
comes while the waiter is still entering its futex wait is kept."""

from __future__ import annotations

import json

import pytest
import schedlab as sl

W = sl.workloads


def _sleeper(sleep_us: int, loops: int) -> str:
    return json.dumps(
        {
            "tasks": {
                "s": {"loop": 1, "phases": {"p": {"loop": loops, "run": 10, "sleep": sleep_us}}}
            },
            "global": {"default_policy": "SCHED_OTHER"},
        }
    )


def test_with_tasks_policy_sets_the_timer_slack():
    w = W.rt_app(_sleeper(100, 50))
    fair = sl.simulate("vm-2", "v6.18", w)
    fifo = sl.simulate("vm-2", "v6.18", w.with_tasks(policy="fifo", rt_priority=10))
    # 50 rounds of 10 µs work and a 100 µs sleep; a fair task's sleep ends
    # 50 µs late (timer_slack_ns), an RT task's on time.
    assert fair.sim_time_s > 50 * 150e-6
    assert fifo.sim_time_s < 50 * 130e-6
    assert fair.sim_time_s - fifo.sim_time_s > 50 * 40e-6


def _sleep_trace(sleep_us: int, rounds: int) -> list[str]:
    # One task that runs 100 µs, then sleeps (no waker), `rounds` times.
    out, t = [], 1_000_000
    for _ in range(rounds):
        t += 100_000
        out.append(
            f"a 10/10 [000] {t // 10**9}.{t % 10**9:09d}: sched:sched_switch: prev_comm=a "
            "prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 "
            "next_prio=120"
        )
        t += sleep_us * 1000
        out.append(
            f"swapper 0/0 [000] {t // 10**9}.{t % 10**9:09d}: sched:sched_waking: comm=a "
            "pid=10 prio=120 target_cpu=000"
        )
        out.append(
            f"swapper 0/0 [000] {t // 10**9}.{t % 10**9:09d}: sched:sched_switch: "
            "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a "
            "next_pid=10 next_prio=120"
        )
    return out


def test_a_replayed_sleep_keeps_its_recorded_length():
    lines = _sleep_trace(100, 20)
    w = W.from_trace(lines, tasks=["a"])
    assert w.recorded["timed_sleeps"] == 20
    r = sl.simulate("vm-2", "v6.18", w)
    # 20 × (100 µs work + 100 µs sleep): no 50 µs slack added on top of
    # the recorded sleep, which already holds it.
    assert 20 * 195e-6 < r.sim_time_s < 20 * 215e-6, r.sim_time_s


def test_time_scale_scales_work_not_sleeps():
    lines = _sleep_trace(1000, 20)
    base = sl.simulate("vm-2", "v6.18", W.from_trace(lines, tasks=["a"]))
    half = sl.simulate("vm-2", "v6.18", W.from_trace(lines, tasks=["a"], time_scale=0.5))
    # Work halves (100 → 50 µs a round), the 1 ms sleeps stay.
    saved = base.sim_time_s - half.sim_time_s
    assert 20 * 40e-6 < saved < 20 * 60e-6, saved


@pytest.mark.parametrize(
    "events",
    [
        {"signal": "c"},
        {"lock": "m", "unlock": "m"},
        {"barrier": "b"},
        {"runtime": 0},
    ],
)
def test_a_loop_that_takes_no_time_is_an_error(events):
    desc = {"tasks": {"spin": dict(events, loop=-1), "other": {"run": 1000, "sleep": 1000}}}
    r = sl.simulate("vm-2", "v6.18", W.rt_app(desc), duration_s=0.1)
    assert r.status == "error"
    assert "spin-0" in r.status_detail and "without taking time" in r.status_detail


def test_a_sync_ping_pong_runs_to_its_duration():
    # Each thread signals the other and waits (rt-app's `sync`); a signal
    # can come while the other still enters its wait, and must wake it.
    body = {"lock": "m", "sync": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 20}
    desc = {"tasks": {"ping": dict(body), "pong": dict(body)}, "global": {"duration": 1}}
    r = sl.simulate("vm-2", "v6.18", W.rt_app(desc))
    assert r.ok, r.status
    assert r.metrics["loops"] > 1000


def test_a_stall_in_a_mix_names_the_program():
    spin = W.rt_app({"tasks": {"spin": {"loop": -1, "signal": "c"}}})
    r = sl.simulate("vm-2", "v6.18", W.mix([W.hackbench(groups=1, loops=5), spin]), duration_s=0.1)
    assert r.status == "error"
    assert "spin-0" in r.status_detail and "without taking time" in r.status_detail


def test_a_late_timer_catches_up():
    # 300 ms of work, then a 1 µs absolute timer: 300,000 late periods,
    # logged as missed, then it paces the loop (not a stall).
    desc = {
        "tasks": {
            "t": {
                "phases": {
                    "busy": {"run": 300_000},
                    "tick": {
                        "loop": -1,
                        "timer": {"ref": "unique", "period": 1, "mode": "absolute"},
                    },
                }
            }
        },
        "global": {"duration": 1},
    }
    r = sl.simulate("vm-2", "v6.18", W.rt_app(desc))
    assert r.ok, r.status_detail


def test_run_zero_takes_no_time():
    # rt-app's `run: 0` is no work: a loop of it alone is a stall, and
    # beside a sleep it adds nothing.
    spin = W.rt_app({"tasks": {"a": {"loop": -1, "run": 0}}})
    r = sl.simulate("vm-2", "v6.18", spin, duration_s=1)
    assert r.status == "error" and "a-0" in r.status_detail
    d = {"tasks": {"a": {"loop": 1, "phases": {"p": {"loop": 10, "run": 0, "sleep": 100}}}}}
    r = sl.simulate("vm-2", "v6.18", W.rt_app(d))
    assert r.ok and r.metrics["task_clock_s"] < 1e-4


def test_trace_text_given_as_one_string_or_item_is_refused():
    lines = _sleep_trace(100, 3)
    with pytest.raises(sl.ConfigError, match=r"path: got text of 9 lines.*splitlines"):
        W.from_trace("\n".join(lines))
    joined = lines[:2] + ["\n".join(lines[2:])]
    with pytest.raises(sl.ConfigError, match=r"path\[2\]: an item of 7 lines"):
        W.from_trace(joined)
