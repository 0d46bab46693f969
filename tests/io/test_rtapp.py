"""rt-app descriptions in the model (workloads.rt_app, io.rtapp): the
grammar subset of rt-app 1.0 and the refusal of everything else by key,
the per-thread log columns, and the log reader the host measurement uses.
No rt-app needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import schedlab as sl
from schedlab.io import rtapp
from schedlab.io.script import OPS

W = sl.workloads
REFUSED = (sl.ConfigError, sl.ConfigTypeError)


def ops(w: sl.Workload, task: int = 0) -> list[str]:
    return [OPS[o] for o in w.params["tasks"][task]["op"]]


def periodic(pct: int, period_us: int = 10_000, seconds: int = 1) -> dict:
    return {
        "tasks": {
            f"p{pct}": {
                "loop": -1,
                "run": period_us * pct // 100,
                "timer": {"ref": "unique", "period": period_us},
            }
        },
        "global": {"duration": seconds, "calibration": "CPU0", "default_policy": "SCHED_OTHER"},
    }


def col(r: sl.Result, thread: str, name: str) -> float:
    return float(r.tasks.filter(r.tasks["name"] == thread)[name][0])


def test_a_periodic_task_runs_its_duty_cycle():
    for pct in (20, 50, 90):
        r = sl.simulate("vm-2", "v6.18", W.rt_app(periodic(pct)))
        assert r.ok
        th = f"p{pct}-0"
        assert col(r, th, "c_run_us") == 100 * pct
        assert col(r, th, "c_period_us") == 10_000
        assert abs(col(r, th, "run_us") - 100 * pct) < 0.02 * 100 * pct
        assert abs(col(r, th, "period_us") - 10_000) < 100
        assert col(r, th, "missed_periods") == 0
        # about one log line per period of the 1 s duration
        assert 95 <= col(r, th, "log_lines") <= 100
        assert abs(r.metrics["task_clock_s"] - pct / 100) < 0.03


def test_two_heavy_tasks_on_one_cpu_miss_their_periods():
    d = {
        "tasks": {
            "h": {
                "instance": 2,
                "loop": -1,
                "cpus": [0],
                "run": 7000,
                "timer": {"ref": "unique", "period": 10000},
            }
        },
        "global": {"duration": 1},
    }
    r = sl.simulate("vm-2", "v6.18", W.rt_app(d))
    assert r.ok
    assert r.tasks["name"].to_list() == ["h-0", "h-1"]
    # 140 % of one CPU: the periods stretch and slack goes negative.
    assert r.tasks["missed_periods"].sum() > 50
    assert r.tasks["period_us"].min() > 11_000


def test_a_producer_consumer_pair_with_signal_and_wait():
    d = {
        "tasks": {
            "producer": {
                "loop": -1,
                "run": 1000,
                "lock": "m",
                "signal": "q",
                "unlock": "m",
                "timer": {"ref": "unique", "period": 5000},
            },
            "consumer": {
                "loop": -1,
                "lock": "m",
                "wait": {"ref": "q", "mutex": "m"},
                "unlock": "m",
                "run": 2000,
            },
        },
        "global": {"duration": 1},
    }
    r = sl.simulate("vm-2", "v6.18", W.rt_app(d))
    assert r.ok
    # The consumer runs once per signal: about as many iterations as the
    # producer's 200 periods.
    assert abs(col(r, "consumer-0", "log_lines") - col(r, "producer-0", "log_lines")) <= 2
    assert abs(col(r, "consumer-0", "period_us") - 5000) < 100


def test_a_mutex_contended_pair_shares_the_lock():
    d = {
        "tasks": {
            "t": {
                "instance": 2,
                "loop": -1,
                "lock": "m",
                "run": 3000,
                "unlock": "m",
                "sleep": 1000,
            }
        },
        "global": {"duration": 1},
    }
    r = sl.simulate("vm-2", "v6.18", W.rt_app(d))
    assert r.ok
    # Each holds the lock 3 ms at a time: together at most one CPU busy.
    assert r.metrics["task_clock_s"] <= 1.02
    assert r.tasks["log_lines"].min() > 100


def test_comments_trailing_commas_and_duplicate_keys_in_order():
    text = """
    /* as rt-app's own examples are written */
    {
        "tasks" : {
            "t" : {
                "loop" : 2,   // phase loop without phases
                "run" : 1000,
                "sleep" : 1000,
                "run" : 2000,
                "sleep" : 3000,
            },
        },
        "global" : { "duration" : 1, },
    }
    """
    w = W.rt_app(text)
    t = w.params["tasks"][0]
    assert ops(w) == ["run", "sleep", "run", "sleep", "mark"] * 2
    assert t["a"][:4] == [1_000_000, 1_000_000, 2_000_000, 3_000_000]
    assert t["loops"] is None  # rt-app 1.0: no phases, the thread loops on


def test_phases_loop_and_suffixed_keys(tmp_path):
    d = {
        "tasks": {
            "t": {
                "loop": 1,
                "phases": {
                    "light": {
                        "loop": 3,
                        "run0": 1000,
                        "timer0": {"ref": "unique", "period": 10000},
                    },
                    "heavy": {
                        "loop": 2,
                        "run1": 6000,
                        "timer1": {"ref": "unique", "period": 10000},
                    },
                },
            }
        }
    }
    p = tmp_path / "t.json"
    p.write_text(json.dumps(d))
    r = sl.simulate("vm-2", "v6.18", W.rt_app(p))
    assert r.ok
    assert col(r, "t-0", "log_lines") == 5
    assert col(r, "t-0", "c_run_us") == (3 * 1000 + 2 * 6000) / 5
    assert 0.045 < r.sim_time_s < 0.052


def test_policies_priorities_and_cpus():
    d = {
        "tasks": {
            "rt": {
                "policy": "SCHED_FIFO",
                "priority": 50,
                "loop": 5,
                "phases": {"a": {"run": 100}},
            },
            "b": {
                "policy": "SCHED_BATCH",
                "priority": 5,  # a fair thread's nice level (rt-app 1.0)
                "cpus": [1],
                "loop": 5,
                "phases": {"a": {"run": 100}},
            },
        }
    }
    r = sl.simulate("vm-2", "v6.18", W.rt_app(d))
    assert r.ok
    assert r.tasks["prio"].to_list() == [49, 125]
    assert col(r, "b-0", "cpu") == 1


def test_unsupported_keys_are_refused_by_name():
    base = periodic(20)
    cases = [
        ({"mem": 100}, "tasks.p20.mem"),
        ({"dl-runtime": 100}, "tasks.p20.dl-runtime"),
        ({"policy": "SCHED_DEADLINE"}, "SCHED_DEADLINE"),
        ({"suspend": ""}, "tasks.p20.suspend"),
    ]
    for extra, word in cases:
        d = json.loads(json.dumps(base))
        d["tasks"]["p20"].update(extra)
        with pytest.raises(sl.ConfigError, match=word):
            W.rt_app(d)
    with pytest.raises(sl.ConfigError, match="global.foo"):
        W.rt_app({**base, "global": {"foo": 1}})
    with pytest.raises(sl.ConfigError, match="pi_enabled"):
        W.rt_app({**base, "global": {"pi_enabled": True}})
    with pytest.raises(sl.ConfigError, match="resources"):
        W.rt_app({**base, "resources": {}})
    with pytest.raises(sl.ConfigError, match=r"phases.a.cpus"):
        W.rt_app({"tasks": {"t": {"phases": {"a": {"cpus": [0], "run": 10}}}}})
    with pytest.raises(sl.ConfigError, match="timer.mode"):
        W.rt_app({"tasks": {"t": {"run": 1, "timer": {"ref": "x", "period": 10, "mode": "odd"}}}})
    with pytest.raises(sl.ConfigError, match="line 1"):
        W.rt_app("{ not json")
    with pytest.raises(sl.ConfigError, match="json="):
        W.rt_app("/no/such/file.json")
    for bad in ("\ud800", "a\0b"):  # an unencodable name, a NUL byte
        with pytest.raises(sl.ConfigError, match="json="):
            W.rt_app(bad)


def test_endless_without_duration_needs_duration_s():
    d = periodic(20)
    d["global"] = {}
    w = W.rt_app(d)
    with pytest.raises(sl.ConfigError, match="duration_s"):
        sl.simulate("vm-2", "v6.18", w)
    r = sl.simulate("vm-2", "v6.18", w, duration_s=0.2)
    assert r.status == "ok" or r.status == "time_limit"


def test_read_log_and_summary(tmp_path):
    p = tmp_path / "rt-p20-0.log"
    p.write_text(
        "# Policy : SCHED_OTHER priority : 0\n"
        "#idx     perf      run   period           start             end          rel_st"
        "      slack c_duration   c_period     wu_lat\n"
        "   0   166666     2104    10077     49726468178     49726478255             120"
        "       7878       2000      10000         91\n"
        "   0   166666     2182    13803     49726478260     49726492062           10202"
        "      -7723       2000      10000       3897\n"
    )
    s = rtapp.summarize_log(rtapp.read_log(p))
    assert s["log_lines"] == 2
    assert s["run_us"] == (2104 + 2182) / 2
    assert s["missed_periods"] == 1
    assert s["wu_lat_us"] == (91 + 3897) / 2
    bad = tmp_path / "bad.log"
    bad.write_text("0 1 2\n")
    with pytest.raises(sl.ConfigError, match="11 integer columns"):
        rtapp.read_log(bad)


def test_same_seed_same_numbers():
    w = W.rt_app(periodic(50))
    a = sl.simulate("vm-2", "v6.18", w, seed=4)
    b = sl.simulate("vm-2", "v6.18", w, seed=4)
    assert a.tasks.equals(b.tasks)


def test_comments_and_trailing_commas_are_stripped_outside_strings_only():
    text = """{"tasks": {"t": {"loop": 1, "phases": {"p": {"lock": "a,}", "unlock": "/*b*/",
              "signal": "c//d", /* a comment, } */ "wait": {"ref": "c//d", "mutex": "a,}",},
              "broad": "x,]", }}}}}"""
    script, _ = rtapp.translate(text)
    assert list(script.mutexes) == ["a,}", "/*b*/"]
    assert list(script.conds) == ["c//d", "x,]"]
    # a JSON error after a comment still gives the file's line and column
    with pytest.raises(sl.ConfigError, match="line 3 column 5"):
        W.rt_app('{"tasks": /* one\ntwo */ {"t": {"run": 1}}\n    oops}')


def test_deep_nesting_and_huge_integers_are_refused_naming_json():
    deep = '{"tasks": {"t": {"run": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}}}"
    with pytest.raises(sl.ConfigError, match=r"json: .*nested more than 32"):
        W.rt_app(deep)
    d: dict = {"run": 1}
    for _ in range(5000):
        d = {"x": d}
    with pytest.raises(sl.ConfigError, match=r"json: .*nested more than 32"):
        W.rt_app({"tasks": {"t": d}})
    loop: dict = {"run": 1}
    loop["self"] = loop
    with pytest.raises(sl.ConfigError, match="nested more than 32"):
        W.rt_app({"tasks": {"t": loop}})
    with pytest.raises(
        sl.ConfigError, match=r"json: the integer 999999999999\.\.\.\(5000 digits\)"
    ):
        W.rt_app('{"tasks": {"t": {"run": ' + "9" * 5000 + "}}}")
    with pytest.raises(sl.ConfigError, match=r"tasks\.t\.run=100000000000\.\.\.\(5001 digits\)"):
        W.rt_app({"tasks": {"t": {"run": 10**5000}}})
    for bad in (object(), {1, 2}, b"x"):
        with pytest.raises(sl.ConfigTypeError, match=r"tasks\.t\.run: got"):
            W.rt_app({"tasks": {"t": {"run": bad}}})
    with pytest.raises(sl.ConfigTypeError, match="a key of tasks"):
        W.rt_app({"tasks": {1: {"run": 1}}})


def test_a_policy_of_any_other_type_or_name_is_refused_by_key():
    for bad in ({"a": 1}, ["SCHED_FIFO"], 1, "", None, "sched_other"):
        with pytest.raises(REFUSED, match=r"tasks\.t\.policy"):
            W.rt_app({"tasks": {"t": {"run": 1, "policy": bad}}})
        with pytest.raises(REFUSED, match=r"global\.default_policy"):
            W.rt_app({"tasks": {"t": {"run": 1}}, "global": {"default_policy": bad}})
    w = W.rt_app({"tasks": {"t": {"run": 1}}, "global": {"default_policy": "SCHED_RR"}})
    assert w.params["tasks"][0]["policy"] == "rr"


def test_the_objects_of_the_grammar_must_be_objects():
    run = {"run": 1}
    cases = [
        ({"tasks": {"t": run}, "global": 0}, "global"),
        ({"tasks": {"t": run}, "global": []}, "global"),
        ({"tasks": {"t": run}, "global": None}, "global"),
        ({"tasks": []}, "tasks"),
        ({"tasks": 0}, "tasks"),
        ({"tasks": {}}, "tasks"),
        ({"global": {}}, "json"),
        ({"tasks": {"t": 1}}, r"tasks\.t"),
        ({"tasks": {"t": [1]}}, r"tasks\.t"),
        ({"tasks": {"t": {"phases": []}}}, r"tasks\.t\.phases"),
        ({"tasks": {"t": {"phases": {}}}}, r"tasks\.t\.phases"),
        ({"tasks": {"t": {"phases": "p"}}}, r"tasks\.t\.phases"),
        ({"tasks": {"t": {"phases": {"a": [run]}}}}, r"tasks\.t\.phases\.a"),
        ({"tasks": {"t": {"run": 1, "timer": 5}}}, r"tasks\.t\.timer"),
        ({"tasks": {"t": {"run": 1, "timer": {"ref": "x"}}}}, r"tasks\.t\.timer: no 'period'"),
        ({"tasks": {"t": {"run": 1, "cpus": {"0": 1}}}}, r"tasks\.t\.cpus"),
        ({"tasks": {"t": {"run": 1, "cpus": None}}}, r"tasks\.t\.cpus: got null"),
        ({"tasks": {"t": {"run": 1, "cpus": [0, True]}}}, r"tasks\.t\.cpus\[1\]"),
        ({"tasks": {"t": {"run": 1, "instance": None}}}, r"tasks\.t\.instance: got null"),
    ]
    for d, where in cases:
        with pytest.raises(REFUSED, match=where):
            W.rt_app(d)


def test_global_keys_take_the_values_rt_app_reads():
    base = {"tasks": {"t": {"run": 1}}}
    for k in ("pi_enabled", "cumulative_slack"):
        W.rt_app({**base, "global": {k: False}})
        with pytest.raises(sl.ConfigError, match=rf"global\.{k}=true"):
            W.rt_app({**base, "global": {k: True}})
        # the value given, not what Python makes of it: "false" is a string
        with pytest.raises(sl.ConfigTypeError, match=rf"global\.{k}: got string 'false'"):
            W.rt_app({**base, "global": {k: "false"}})
    ok = {"calibration": 150, "logdir": "/tmp", "log_basename": "x", "log_size": "file",
          "lock_pages": False, "ftrace": True, "gnuplot": False}  # fmt: skip
    W.rt_app({**base, "global": ok})
    W.rt_app({**base, "global": {"calibration": "CPU1"}})
    for k, bad in (("calibration", "GPU0"), ("calibration", True), ("logdir", 1),
                   ("gnuplot", "no"), ("log_size", None), ("duration", 1.5)):  # fmt: skip
        with pytest.raises(REFUSED, match=rf"global\.{k}"):
            W.rt_app({**base, "global": {k: bad}})


def test_nice_is_refused_as_rt_app_does_not_read_it():
    # rt-app 1.0's parse_thread_data reads no "nice"; a fair thread's nice
    # level is its priority
    for d in ({"run": 1, "nice": 5}, {"nice": 5, "phases": {"a": {"run": 1}}}):
        with pytest.raises(sl.ConfigError, match=r"tasks\.t\.nice: .*'priority'"):
            W.rt_app({"tasks": {"t": d}})
    w = W.rt_app({"tasks": {"t": {"run": 1, "priority": 5}}})
    assert w.params["tasks"][0]["nice"] == 5


def test_refusals_name_json_or_the_key_not_the_cores_indices():
    with pytest.raises(sl.ConfigError, match=r"json: unsupported rt-app key 'a'"):
        W.rt_app({"a": 1})
    for text in ('["{"]', '"{"', "[{}]"):  # JSON, but not an object
        with pytest.raises(sl.ConfigError, match="json: got"):
            W.rt_app(text)
    # the core's limit (2^50 ns per event) is never what the user hits
    for key in ("run", "sleep", "delay"):
        with pytest.raises(sl.ConfigError, match=rf"tasks\.t\.{key}=10000000000000: expected"):
            W.rt_app({"tasks": {"t": {"run": 1, key: 10**13}}}, run_scale=10)
    with pytest.raises(sl.ConfigError, match=r"tasks key '\\ud800'"):
        W.rt_app('{"tasks": {"\\ud800": {"run": 1}}}')


def test_a_key_given_twice_is_refused_but_events_run_in_order():
    # json-c (rt-app's parser) keeps a duplicate key's last value only, in
    # the first one's place: a second "a" would silently replace the first
    a = '"tasks": {"a": '
    cases = [
        (a + '{"run": 1}, "a": {"run": 2}}', r"invalid tasks\.a: 'a' is given twice in tasks"),
        (a + '{"run": 1, "priority": 1, "priority": 2}}', r"tasks\.a\.priority"),
        (a + '{"phases": {"p": {"run": 1}, "p": {"run": 2}}}}', r"tasks\.a\.phases\.p"),
        (a + '{"phases": {"p": {"loop": 1, "loop": 2, "run": 1}}}}', r"phases\.p\.loop"),
        (a + '{"run": 1, "timer": {"ref": "x", "ref": "y", "period": 1}}}', r"timer\.ref"),
        (a + '{"run": 1}}, "global": {"duration": 1, "duration": 2}', r"global\.duration"),
        (a + '{"run": 1}}, "tasks": {"b": {"run": 1}}', r"invalid tasks: .* in json"),
    ]
    for body, match in cases:
        with pytest.raises(sl.ConfigError, match=match):
            W.rt_app("{" + body + "}")
    w = W.rt_app('{"tasks": {"a": {"loop": 1, "run": 1, "sleep": 2, "run": 3, "run1": 4}}}')
    assert ops(w) == ["run", "sleep", "run", "run", "mark"]
    assert w.params["tasks"][0]["a"][:4] == [1000, 2000, 3000, 4000]


def test_rt_app_itself_gets_duplicate_events_numbered():
    # measure_rt_app hands rt-app the description: json-c would drop all but
    # the last "run", so the repeats are numbered as rt-app's workgen does
    from schedlab.host import rtapp as host

    doc = rtapp.load('{"tasks": {"a": {"run": 1, "sleep": 2, "run": 3, "run1": 4, "run": 5}}}')
    text = host._rewrite(doc, Path("/tmp/logs"), 150)
    back = json.loads(text, object_pairs_hook=list)
    assert back[0] == (
        "tasks",
        [("a", [("run", 1), ("sleep", 2), ("run2", 3), ("run1", 4), ("run3", 5)])],
    )
    assert dict(back[1][1]) == {"logdir": "/tmp/logs", "log_basename": "rt", "calibration": 150}
    # and the model reads the numbered text as it read the original
    orig = '{"tasks": {"a": {"run": 1, "sleep": 2, "run": 3, "run1": 4, "run": 5}}}'
    assert rtapp.translate(text)[0].tasks[0].a == rtapp.translate(orig)[0].tasks[0].a


def test_a_barrier_waits_for_as_many_arrivals_as_rt_app_counts_uses():
    # rt-app 1.0 adds a user each time it parses the barrier's name, per
    # thread instance: a phase loop does not count, a second use does.
    def users(d: dict) -> list[int]:
        return rtapp.translate(d)[0].barrier_users

    pair = {"instance": 2, "loop": 3, "phases": {"p": {"loop": 4, "barrier": "x", "run": 10}}}
    assert users({"tasks": {"t": pair}}) == [2]
    solo = {"loop": 2, "phases": {"a": {"barrier": "x", "run": 10}, "b": {"barrier": "y"}}}
    assert users({"tasks": {"t": pair, "u": solo}}) == [3, 1]
    twice = {"instance": 2, "phases": {"p": {"barrier": "x", "run": 10, "barrier1": "x"}}}
    assert users({"tasks": {"t": twice}}) == [4]
    many = {f"barrier{i}": f"x{i}" for i in range(2000)}  # one pass, not one per barrier
    assert users({"tasks": {"t": {"instance": 2, "phases": {"p": many}}}}) == [2] * 2000


def test_two_threads_pass_a_barrier():
    # The release can come while the first arrival still pays its futex
    # call: the wake-up is kept (workload::script), so both go on.
    pair = {"instance": 2, "loop": 3, "phases": {"p": {"barrier": "x", "run": 10}}}
    r = sl.simulate("vm-2", "v6.18", W.rt_app({"tasks": {"t": pair}}))
    assert r.ok and r.tasks["log_lines"].to_list() == [3, 3]


def test_instances_times_loops_past_the_operation_limit_name_both(monkeypatch):
    d = {"instance": 4096, "loop": 2, "phases": {"p": {"loop": 1000, "run": 1, "sleep": 1}}}
    with pytest.raises(
        sl.ConfigError,
        match=r"invalid tasks\.t\.instance=4096 with tasks\.t\.phases\.p\.loop=1000: 4096 "
        r"thread\(s\) of 3,000 operations",
    ):
        W.rt_app({"tasks": {"t": d}})
    with pytest.raises(sl.ConfigError, match=r"tasks\.t\.instance=1 with tasks\.t\.loop=2147"):
        W.rt_app({"tasks": {"t": {"loop": 2**31 - 1, "run": 1}}})
    # the limit counts every thread object's operations
    monkeypatch.setattr(rtapp, "_MAX_OPS", 1000)
    half = {"instance": 2, "loop": 1, "phases": {"p": {"loop": 200, "run": 1}}}
    W.rt_app({"tasks": {"a": half}})
    with pytest.raises(sl.ConfigError, match=r"tasks\.b\.instance=2 with tasks\.b\.phases"):
        W.rt_app({"tasks": {"a": half, "b": half}})


def test_a_thread_locking_a_mutex_it_holds_is_refused_by_key():
    # glibc's default mutex, rt-app's: the thread would wait for itself
    # forever, and a run with another thread beside it would end "ok"
    cases = [
        ({"phases": {"p": {"lock": "m", "lock0": "m"}}}, r"p\.lock0='m'.*by tasks\.t\.phases\.p"),
        ({"loop": 2, "phases": {"p": {"lock": "m"}}}, r"p\.lock=.m.*lock, in the iteration before"),
        ({"loop": 1, "phases": {"p": {"loop": 3, "lock": "m", "run": 1}}}, r"p\.lock='m'"),
        ({"lock": "m", "run": 1}, r"tasks\.t\.lock='m'"),  # no phases: it loops on
        ({"lock": "m", "wait": {"ref": "c", "mutex": "m"}, "lock1": "m"}, r"tasks\.t\.lock1"),
        ({"wait": {"ref": "c", "mutex": "m"}, "lock": "m"}, r"tasks\.t\.lock='m'.*tasks\.t\.wait"),
        ({"loop": 2, "phases": {"a": {"lock": "m"}, "b": {"loop": -1, "run": 1}}}, None),
        ({"phases": {"a": {"lock": "m", "run": 1}, "b": {"loop": -1, "lock": "m"}}}, r"b\.lock="),
    ]  # fmt: skip
    for d, match in cases:
        if match is None:
            W.rt_app({"tasks": {"t": d}})
            continue
        with pytest.raises(sl.ConfigError, match=match):
            W.rt_app({"tasks": {"t": d}})
    # taken and given back, in one phase or across phases, or held to the end
    for d in (
        {"phases": {"p": {"lock": "m", "unlock": "m", "lock0": "m", "unlock0": "m"}}},
        {"phases": {"a": {"lock": "m", "run": 1}, "b": {"loop": 2, "unlock": "m", "run": 1}}},
        {"loop": 1, "phases": {"p": {"lock": "m", "run": 1}}},
        {"lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m"},
    ):
        W.rt_app({"tasks": {"t": d}})


def test_a_thread_blocked_for_good_beside_others_ends_ok_at_duration():
    # Deadlock is reported only when nothing can run; a thread blocked on a
    # mutex another holds to the end is woken to stop at duration, and the
    # run, which lasts until the holder's sleep ends, is "ok"
    d = {
        "tasks": {
            "holder": {"loop": 1, "phases": {"p": {"lock": "m", "run": 100, "sleep": 1_500_000}}},
            "waiter": {"delay": 1000, "lock": "m", "run": 100, "unlock": "m"},
        },
        "global": {"duration": 1},
    }
    r = sl.simulate("vm-2", "v6.18", W.rt_app(d))
    assert r.ok
    assert r.tasks.filter(name="waiter-0")["log_lines"].fill_nan(0).to_list() == [0]
    assert 1.5 <= r.sim_time_s < 1.6
    d["global"] = {}
    d["tasks"]["waiter"] = {"loop": 1, "phases": {"p": {"sleep": 10, "lock": "m"}}}
    assert sl.simulate("vm-2", "v6.18", W.rt_app(d)).status == "deadlock"


def test_duration_stops_threads_at_their_next_event_not_in_a_sleep():
    # rt-app 1.0's shutdown: the flag is checked before each event, and a
    # sleep or the start delay is not cut short
    d = {
        "tasks": {
            "spin": {"run": 1000},
            "sleeper": {"run": 100, "sleep": 1_500_000},
            "late": {"delay": 2_000_000, "run": 100},
        },
        "global": {"duration": 1},
    }
    r = sl.simulate("vm-2", "v6.18", W.rt_app(d))
    assert r.ok
    assert 2.0 <= r.sim_time_s < 2.01  # the late thread's delay
    lines = dict(zip(r.tasks["name"], r.tasks["log_lines"].fill_nan(0), strict=True))
    assert 990 <= lines["spin-0"] <= 1000
    assert lines["sleeper-0"] == 0  # its one iteration was cut short
    assert lines["late-0"] == 0
    assert col(r, "late-0", "user_s") == 0  # it stopped without running


def test_the_workload_keeps_a_copy_of_a_dict():
    d = {"tasks": {"t": {"loop": 2, "run": 100, "cpus": [0, 1]}}, "global": {"duration": 1}}
    w = W.rt_app(d)
    before = repr(w)
    d["tasks"]["t"]["run"] = 999
    d["tasks"]["t"]["mem"] = 1
    d["global"].clear()
    assert repr(w) == before
    assert w.args["json"]["tasks"]["t"] == {"loop": 2, "run": 100, "cpus": [0, 1]}
    assert w.replace(run_scale=2.0).params["tasks"][0]["b"][0] == 100_000
    assert W.rt_app(w.args["json"]) == w
