"""Call schedlab's public API as a hostile user would, each call in its own
subprocess (an address-space cap, a timeout), and count what came of it per
API target: ``ok`` (returned), ``library`` (raised a schedlab exception:
a ``SchedlabError`` or another exception class of the package, e.g.
``SweepInterrupted``), ``foreign`` (any other exception escaped the
library: TypeError, KeyError, RecursionError, MemoryError, ...), ``user``
(the caller's own exception came back unchanged: a hostile object's
``__index__`` raising, a progress callback's ``SystemExit``; listed apart,
neither library nor foreign; a callback's ``Exception`` must come back as a
``SimulationError``, so it counts as foreign), ``caller`` (the
snippet's own code raised before reaching the library: a generator
slip, not a finding), ``crash`` (the
process died without a Python exception: a signal, an abort, an exit) and
``hang`` (past ``--timeout``). ``lost`` counts sweeps that raised after
their progress callback saw finished runs without those rows in the
exception's ``partial``.

    PYTHONPATH=python python scripts/dev/hostile.py --calls 2000 --seed 1 --out /tmp/hostile.json
    PYTHONPATH=python python scripts/dev/hostile.py --calls 200 -k sweep,cli --out calls.parquet

The calls are generated from ``--seed`` (the same seed gives the same
calls); each is a snippet of Python source (or a CLI argument list) kept in
the output with its outcome, so any call can be re-run by hand: the
snippet runs with ``sl`` (schedlab), ``W`` (``sl.workloads``), ``pl``,
``FIX`` (paths of the fixtures: a FIFO, a directory, a missing file, junk
files, a recorded trace) and ``T`` (a fresh directory) defined. Simulations
are kept small (a bounded ``duration_s`` or small workloads), so that a hang
is a hang and not a long valid run. Not part of CI.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
KINDS = ("ok", "library", "foreign", "user", "caller", "crash", "hang")

# The child: read the snippet on stdin, run it, write the outcome as JSON to
# argv[1]. Everything it needs is defined here, before the call.
RUNNER = r'''
import json, os, sys, time, traceback, warnings
out, T, FIX = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
code = sys.stdin.read()
res = {"outcome": "harness"}

def dump():
    with open(out + ".tmp", "w") as f:
        json.dump(res, f)
    os.replace(out + ".tmp", out)

class EvilError(Exception):
    pass

class UserBoom(Exception):
    pass

class Evil:
    """Every conversion and comparison raises EvilError."""
    def _no(self, *a, **k):
        raise EvilError("evil dunder")
    __index__ = __int__ = __float__ = __str__ = __len__ = __iter__ = __bool__ = _no
    __eq__ = __lt__ = __hash__ = __fspath__ = __getitem__ = _no
    def __repr__(self):
        return "Evil()"

class BigIndex:
    def __index__(self):
        return 2**200
    def __int__(self):
        return 2**200

class StrSub(str):
    pass

class IntSub(int):
    def __eq__(self, o):
        return False
    __hash__ = int.__hash__

DONE = {"max": 0, "calls": 0}

def make_progress(raise_after, exc):
    def progress(done, total):
        DONE["calls"] += 1
        DONE["max"] = max(DONE["max"], int(done))
        if DONE["calls"] > raise_after:
            raise exc
    return progress

class JunkExecutor:
    def __init__(self, how):
        self.how = how
    def submit(self, fn, *a, **k):
        import concurrent.futures as cf
        if self.how == "raise":
            raise UserBoom("submit refused")
        if self.how == "none":
            return None
        f = cf.Future()
        if self.how == "junk":
            f.set_result([{"junk": 1}])
        elif self.how == "exc":
            f.set_exception(UserBoom("chunk failed"))
        elif self.how == "int":
            f.set_result(42)
        else:
            f.set_result(fn(*a, **k))
        return f
    def shutdown(self, *a, **k):
        pass

try:
    from decimal import Decimal
    from fractions import Fraction
    from pathlib import Path
    import polars as pl
    import schedlab as sl
    from schedlab.exceptions import SchedlabError
    W = sl.workloads
    PKG = os.path.dirname(sl.__file__) + os.sep
    nan, inf = float("nan"), float("inf")
    ns = dict(globals())
    res = {"outcome": "running"}
    t0 = time.monotonic()
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            exec(compile(code, "<call>", "exec"), ns)
            try:
                v = repr(ns.get("_r"))
            except BaseException as e:
                v = f"<repr raised {type(e).__name__}>"
            res = {"outcome": "returned", "value": v[:300]}
        except BaseException as e:
            try:
                msg = str(e)
            except BaseException as e2:
                msg = f"<str raised {type(e2).__name__}>"
            cls = type(e)
            tb = e.__traceback__
            p = getattr(e, "partial", "<none>")
            p = None if p is None else getattr(p, "height", "absent" if isinstance(p, str) else -1)
            res = {
                "outcome": "raised",
                "exc_type": f"{cls.__module__}.{cls.__qualname__}",
                "schedlab": isinstance(e, SchedlabError) or cls.__module__.startswith("schedlab"),
                "user": isinstance(e, EvilError),
                "inlib": any(f.filename.startswith(PKG) for f in traceback.extract_tb(tb)),
                "msg": msg[:3000],
                "tb": traceback.format_exc()[-6000:],
                "partial": p,
                "cause": repr(e.__cause__)[:300] if e.__cause__ is not None else None,
            }
    res["wall_s"] = time.monotonic() - t0
    res["warnings"] = [f"{w.category.__name__}: {str(w.message)[:300]}" for w in ws][:5]
    res["progress_done"] = DONE["max"]
except BaseException as e:
    res = {"outcome": "harness", "msg": repr(e)[:2000], "tb": traceback.format_exc()[-4000:]}
dump()
'''

# ---------------------------------------------------------------- values

HOSTILE = [
    "None",
    "-1",
    "0",
    "-2**63",
    "2**63",
    "2**64",
    "10**30",
    "-10**30",
    "float('nan')",
    "float('inf')",
    "-float('inf')",
    "1e308",
    "5e-324",
    "-0.0",
    "0.5",
    "''",
    "'x'",
    "'1'",
    "'nan'",
    "'\\x00'",
    "'\\ud800'",
    "'x' * 100000",
    "'1e999'",
    "[]",
    "[1]",
    "[None]",
    "{}",
    "{'a': 1}",
    "()",
    "True",
    "False",
    "b'\\x00\\xff'",
    "object()",
    "1+2j",
    "Fraction(1, 3)",
    "Decimal('NaN')",
    "Decimal('1e999')",
    "range(3)",
    "lambda *a: 0",
    "sl",
    "pl.DataFrame()",
    "Path('/dev/zero')",
    "Evil()",
    "BigIndex()",
    "StrSub('x')",
    "IntSub(3)",
    "{1, 2}",
    "...",
    "float",
]
MACHINES = ["'vm-2'", "'quad-4c'", "'core2-2s'", "'snb-laptop-4c'"]
BAD_MACHINES = [
    "'vm-3'",
    "'VM-2'",
    "' vm-2'",
    "'vm-2\\x00'",
    "'\\ud800'",
    "''",
    "'custom'",
    "sl.Machine(0, 1)",
    "sl.Machine(1, 0)",
    "sl.Machine(-1, 2)",
    "sl.Machine(10**6, 10**6)",
    "sl.Machine(2, 2, 3, llc_cores=5)",
    "sl.Machine(2, 2, numa_nodes=7)",
    "sl.Machine(1, 2, name='\\ud800')",
    "sl.Machine(float('nan'), 2)",
    "sl.Machine(True, 2)",
    "sl.Machine(2**64, 1)",
    "sl.Machine(4096, 1)",
    "sl.Machine.preset('nope')",
    "sl.Kernel.preset('v6.18')",
]
KERNELS = ["'v6.18'", "'v3.8'", "'v2.6.36'", "'v6.6'", "'v2.6.37-rc1'", "'v4.11'"]
BAD_KERNELS = [
    "'v7.0'",
    "'6.18'",
    "''",
    "'v6.18 '",
    "sl.Machine.preset('vm-2')",
    "sl.Kernel.preset('x')",
]
KERNEL_STR = [
    "'off'",
    "'sometimes'",
    "'eevdf'",
    "'cfs'",
    "'lb_cost'",
    "'v5.7'",
    "'log'",
    "'none'",
    "'linear'",
    "'idle_cpu'",
    "'performance'",
    "'powersave'",
    "'task'",
    "'group'",
]
SMALL_WORKLOADS = [
    "W.hackbench(groups=1, fds=2, loops=5)",
    "W.hackbench(groups=2, fds=4, loops=20, ipc='pipe', mode='thread')",
    "W.pipe_pingpong(loops=50)",
    "W.volano(rooms=1, users=2, messages=5)",
    "W.aim7(2, jobs=2)",
    "W.spinners([0, 5, -5], run_us=100, sleep_us=50)",
    "W.from_trace(FIX['trace'])",
]
TRACE_LINES = [
    "          <idle>-0       [000] d..2.     5.000000: sched_switch: prev_comm=swapper/0 "
    "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=100 next_prio=120",
    "               a-100     [000] dNh3.     5.000151: sched_wakeup: comm=b pid=101 "
    "prio=120 target_cpu=001",
    "               a-100     [000] dNh2.     5.000150: sched_waking: comm=b pid=101 "
    "prio=120 target_cpu=001",
    "               b-101     [001] d..2.     5.000050: sched_switch: prev_comm=b prev_pid=101 "
    "prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
    "               a-100     [000] ....     5.000200: sched_process_fork: comm=a pid=100 "
    "child_comm=a child_pid=102",
    "               a-100     [000] ....     5.000300: sched_process_exit: comm=a pid=100 prio=120",
]
TRACE_SUBS = [
    ("pid=101", "pid=-1"),
    ("pid=101", "pid=abc"),
    ("pid=101", "pid=99999999999999999999"),
    ("5.000", "nan"),
    ("5.000", "-5.000"),
    ("5.000", "1e308"),
    ("[000]", "[999]"),
    ("[000]", "[-1]"),
    ("[001]", "[abc]"),
    ("==>", ""),
    ("prev_state=S", "prev_state=???"),
    ("prio=120", "prio=-9999"),
    ("target_cpu=001", "target_cpu=4096"),
    ("comm=b", "comm="),
    ("next_pid=100", "next_pid=0"),
    ("sched_switch", "sched_swit"),
    (": ", "::"),
    ("comm=a", "comm=\\x00"),
    ("a-100", "a-"),
    ("5.000151", "5.000151.7"),
]


def built_or_run(rng: random.Random, call: str, pre: str = "") -> str:
    """A snippet that builds the workload ``call`` only, or (half the
    time) simulates it briefly on vm-2 under v6.18."""
    if rng.random() < 0.5:
        return f"{pre}_r = sl.simulate('vm-2', 'v6.18', {call}, duration_s=0.05)"
    return f"{pre}_r = {call}"


def pick(rng: random.Random, seq: list[str]) -> str:
    return seq[rng.randrange(len(seq))]


def hv(rng: random.Random) -> str:
    return pick(rng, HOSTILE)


def maybe(rng: random.Random, valid: list[str], p: float = 0.3) -> str:
    """A valid value, or a hostile one with probability ``p``."""
    return hv(rng) if rng.random() < p else pick(rng, valid)


def kwargs(
    rng: random.Random, spec: dict[str, list[str]], p: float = 0.3, keep: float = 0.6
) -> str:
    parts = [f"{k}={maybe(rng, v, p)}" for k, v in spec.items() if rng.random() < keep]
    if rng.random() < 0.05:
        parts.append(f"bogus_kw={hv(rng)}")
    return ", ".join(parts)


def kernel_expr(rng: random.Random, fields: list[str], p: float = 0.5) -> str:
    r = rng.random()
    if r < 0.4:
        return pick(rng, KERNELS)
    if r < 0.5:
        return pick(rng, BAD_KERNELS)
    reps = []
    for _ in range(rng.randint(1, 3)):
        f = (
            pick(rng, fields)
            if rng.random() < 0.93
            else pick(rng, ["'nope'", "'name'", "''"])[1:-1]
        )
        pool = KERNEL_STR + ["0", "1", "250", "1000", "10**9", "True", "False", "'yes'"]
        if not any(r.startswith(f"{f or 'x'}=") for r in reps):
            reps.append(f"{f or 'x'}={maybe(rng, pool, p)}")
    return f"sl.Kernel.preset({pick(rng, KERNELS)}).replace({', '.join(reps)})"


def machine_expr(rng: random.Random) -> str:
    if rng.random() < 0.75:
        return pick(rng, MACHINES)
    if rng.random() < 0.6:
        return pick(rng, BAD_MACHINES)
    return hv(rng)


SIZES = ["1", "2", "3"]
IPCS = ["'pipe'", "'socket'"]
MODES = ["'process'", "'thread'"]
DISTS = ["'fixed'", "'exp'", "'zipf'"]
WKINDS = ["'hackbench'", "'nope'"]
WPARAMS = "{'groups': 1}"
SIM_GROUPS = ["[]", "[sl.Group('a')]", "None", "[1]", "'a'"]
LAT_SORTS = ["'max_us'", "'mean_us'", "'count'"]
CHANGES = ["'plain'", "'nice=5'", "'bogus'", "None"]
SIZE_BAD = ["0", "-1", "2**64", "10**9", "float('nan')", "1.5", "'2'", "None", "True", "BigIndex()"]


def small_workload(rng: random.Random, hostile: bool) -> str:
    """A workload expression that simulates quickly; ``hostile`` puts junk in
    one argument (values that are refused, never a valid enormous size)."""
    if not hostile:
        return pick(rng, SMALL_WORKLOADS)
    k = rng.randrange(7)

    def s(valid: list[str]) -> str:
        return pick(rng, SIZE_BAD + [hv(rng)]) if rng.random() < 0.4 else pick(rng, valid)

    if k == 0:
        return (
            f"W.hackbench(groups={s(SIZES)}, fds={s(['2', '4'])}, loops={s(['5', '20'])}, "
            f"datasize={s(['100', '0', '65536'])}, ipc={s(IPCS)}, "
            f"mode={s(MODES)})"
        )
    if k == 1:
        return f"W.pipe_pingpong(loops={s(['10', '100'])}, mode={s(MODES)})"
    if k == 2:
        return (
            f"W.volano(rooms={s(SIZES)}, users={s(SIZES)}, messages={s(['5'])}, "
            f"handle_us={s(['3.0'])})"
        )
    if k == 3:
        return f"W.aim7({s(SIZES)}, jobs={s(['2', '5'])}, cpus={s(['None', '[0]', '[0, 1]', '5'])})"
    if k == 4:
        return (
            f"W.spinners({s(['[0]', '[0, 19, -20]', '[-21]', '[20]'])}, "
            f"run_us={s(['100', '[100, None]'])}, "
            f"sleep_us={s(['50', 'None'])}, cpus={s(['None', '[[0], None]', '[[7]]'])}, "
            f"yields={s(['True', 'None'])}, dist={s(DISTS)})"
        )
    if k == 5:
        return f"W.Workload(kind={s(WKINDS)}, params={s(['{}', WPARAMS])})"
    return hv(rng)


# ---------------------------------------------------------------- targets


def g_simulate(rng: random.Random, ctx: dict[str, Any]) -> str:
    hostile = rng.random() < 0.7
    m = machine_expr(rng) if hostile else pick(rng, MACHINES)
    k = kernel_expr(rng, ctx["kfields"]) if hostile else pick(rng, KERNELS)
    w = small_workload(rng, hostile and rng.random() < 0.5)
    kw = {
        "seed": ["0", "1", "2**64 - 1", "None"],
        "trace": ["True", "False"],
        "trace_limit": ["10", "1000", "0"],
        "interval_s": ["0.1", "0.001", "1e-6"],
        "latency": ["True", "False"],
    }
    extra = [kwargs(rng, kw, p=0.35 if hostile else 0.0, keep=0.4)]
    dur = pick(rng, ["0.05", "0.01", "1e-9"]) if rng.random() < 0.85 else hv(rng)
    if rng.random() < 0.1:
        extra.append(f"costs=sl.CostModel().replace({pick(rng, ctx['cfields'])}={hv(rng)})")
    if rng.random() < 0.05:
        extra.append(f"groups={pick(rng, SIM_GROUPS)}")
    tail = "".join(f", {x}" for x in extra if x)
    return f"_r = sl.simulate({m}, {k}, {w}, duration_s={dur}{tail})"


WL_SPECS: dict[str, dict[str, list[str]]] = {
    "hackbench": {
        "groups": ["1", "10", "10000", "10**5"],
        "fds": ["1", "20"],
        "loops": ["1", "10**7"],
        "datasize": ["0", "100", "2**31"],
        "ipc": ["'pipe'", "'socket'", "'tcp'"],
        "mode": ["'process'", "'thread'", "'threads'"],
        "sndbuf": ["0", "212992"],
        "skb_overhead": ["668", "-1"],
        "parent_wakee_flips": ["0", "5"],
        "rt_kthreads": ["None", "{}", "{'prio': 50}", "{'cpus': [0]}", "{'bogus': 1}"],
    },
    "hackbench_lkp": {
        "machine": ["'vm-2'", "sl.Machine.preset('nhm-ep')", "'bogus'"],
        "nr_threads": ["'50%'", "'1600%'", "'-5%'", "'nan%'", "'%'", "4", "'4'", "'0%'"],
        "mode": ["'threads'", "'process'"],
        "ipc": ["'pipe'", "'socket'"],
        "loops": ["None", "5"],
    },
    "pipe_pingpong": {"loops": ["1", "100000", "2**40"], "mode": ["'process'", "'thread'"]},
    "spinners": {
        "nice": ["[0]", "[0] * 1000", "[19, -20]", "[0] * 10**6", "[0] * (10**6 + 1)"],
        "run_us": ["None", "100", "[100]", "[None, 5]"],
        "sleep_us": ["None", "10", "[1, 2, 3]"],
        "cpus": ["None", "[[0]]", "[0]", "[[0, 1], None]"],
        "yields": ["None", "True", "[True]"],
        "dist": ["'fixed'", "'exp'", "'uniform'"],
    },
    "volano": {
        "rooms": ["1", "10", "10**4"],
        "users": ["2", "20", "10**4"],
        "messages": ["1", "100"],
        "handle_us": ["3.0", "0"],
        "send_us": ["2.0"],
        "enqueue_us": ["0.5"],
    },
    "aim7": {
        "tasks": ["1", "100", "10**6"],
        "jobs": ["1", "100"],
        "workfile": ["'compute'", "'shared'", "'fserver'", "'dbase'", "'nope'"],
        "cpus": ["None", "0", "[0, 1]"],
        "contention": ["True"],
        "filesize_kb": ["10", "0"],
        "poolsize_kb": ["1024"],
        "speed": ["1.0", "0.0"],
        "sync_io_us": ["None", "5.0"],
        "syncs": ["True"],
        "shared_lines": ["None", "{}", "{'x': 1}"],
    },
}


def g_workloads(rng: random.Random, ctx: dict[str, Any]) -> str:
    name = pick(rng, list(WL_SPECS))
    args = kwargs(rng, WL_SPECS[name], p=0.35, keep=0.6)
    if rng.random() < 0.05:
        args = ", ".join([hv(rng) for _ in range(rng.randint(1, 12))])
    call = f"W.{name}({args})"
    if rng.random() < 0.2:
        call += ".with_tasks()"
    if rng.random() < 0.1:
        call = f"{call}; _r = (repr(_r), _r.params)"
        return f"_r = {call}"
    return f"_r = {call}"


def g_with_tasks(rng: random.Random, ctx: dict[str, Any]) -> str:
    spec = {
        "policy": [
            "'fifo'",
            "'rr'",
            "'batch'",
            "'idle'",
            "'other'",
            "'normal'",
            "'deadline'",
            "'FIFO'",
        ],
        "rt_priority": ["1", "50", "99", "0", "100"],
        "nice": ["0", "-20", "19", "20", "-21"],
        "cpus": ["0", "[0]", "[1]", "[0, 1]", "[7]", "[]", "[0, 0]", "-1", "[2**40]"],
        "role": ["'sender'", "'receiver'", "'all'", "'nope'", "None"],
        "group": ["None", "'a'", "'missing'"],
    }
    base = small_workload(rng, False)
    call = f"{base}.with_tasks({kwargs(rng, spec, p=0.3, keep=0.5)})"
    if rng.random() < 0.2:
        call += f".with_tasks({kwargs(rng, spec, p=0.3, keep=0.5)})"
    if rng.random() < 0.6:
        groups = ", groups=[sl.Group('a')]" if "'a'" in call else ""
        m = pick(rng, MACHINES)
        return f"_w = {call}\n_r = sl.simulate({m}, 'v6.18', _w, duration_s=0.05{groups})"
    return f"_r = {call}"


def g_group(rng: random.Random, ctx: dict[str, Any]) -> str:
    spec = {
        "parent": ["None", "'a'", "'root'", "'g'"],
        "shares": ["None", "1024", "2", "1", "262144", "262145"],
        "weight": ["None", "100", "1", "10000", "10001"],
        "quota_us": ["None", "1000", "0", "1e12"],
        "period_us": ["100000", "1000", "1", "1e7"],
        "burst_us": ["0", "500", "1e9"],
        "idle": ["False", "True"],
    }
    name = maybe(rng, ["'g'", "'a'", "'a/b'", "''", "'/'", "'root'"], 0.2)
    groups = [f"sl.Group({name}, {kwargs(rng, spec, p=0.3, keep=0.4)})"]
    if rng.random() < 0.4:
        groups.append(f"sl.Group('a', {kwargs(rng, spec, p=0.2, keep=0.4)})")
    if rng.random() < 0.5:
        return f"_r = {groups[0]}"
    gname = pick(rng, ["'g'", "'a'", "'x'"])
    w = f"{pick(rng, SMALL_WORKLOADS[:4])}.with_tasks(group={gname})"
    return f"_r = sl.simulate('vm-2', 'v6.18', {w}, duration_s=0.05, groups=[{', '.join(groups)}])"


def g_mix(rng: random.Random, ctx: dict[str, Any]) -> str:
    n = pick(rng, ["0", "1", "2", "3", "16", "17", "100"])
    r = rng.random()
    if r < 0.5:
        ws = f"[{pick(rng, SMALL_WORKLOADS[:6])} for _ in range({n})]"
    elif r < 0.7:
        ws = f"[{pick(rng, SMALL_WORKLOADS[:6])}, {hv(rng)}]"
    elif r < 0.8:
        ws = "[W.mix([W.pipe_pingpong(loops=10), W.pipe_pingpong(loops=10)]), "
        ws += "W.pipe_pingpong(loops=10)]"
    else:
        ws = hv(rng)
    names = pick(rng, ["None", "['a', 'b']", "['a', 'a']", "['']", "[None, None]", hv(rng)])
    call = f"W.mix({ws}, names={names})" if rng.random() < 0.5 else f"W.mix({ws})"
    return built_or_run(rng, call)


RTAPP_TASK_KEYS = {
    "loop": ["-1", "1", "10", "0", "-2"],
    "run": ["1000", "0", "-1", "'1000'"],
    "sleep": ["1000", "0"],
    "instance": ["1", "2", "0", "10**7"],
    "cpus": ["[0]", "[5]", "[]"],
    "timer": ["{'ref': 'unique', 'period': 10000}", "{'ref': 'u', 'period': 0}", "{'period': -1}"],
    "policy": ["'SCHED_OTHER'", "'SCHED_FIFO'", "'SCHED_DEADLINE'", "'bogus'"],
    "priority": ["0", "10", "99", "-30"],
    "runtime": ["1000"],
    "period": ["10000"],
    "lock": ["'m'"],
    "unlock": ["'m'"],
    "barrier": ["'b'"],
    "suspend": ["'x'"],
    "resume": ["'x'"],
    "phases": ["{'p1': {'run': 100, 'sleep': 100}}", "{}", "{'p': {'loop': 2, 'run': 5}}"],
}


def rtapp_dict(rng: random.Random) -> str:
    tasks = []
    for i in range(rng.randint(0, 3)):
        keys = rng.sample(list(RTAPP_TASK_KEYS), rng.randint(0, 5))
        body = ", ".join(f"'{k}': {maybe(rng, RTAPP_TASK_KEYS[k], 0.15)}" for k in keys)
        tasks.append(f"'t{i}': {{{body}}}")
    dur = maybe(rng, ["1", "0.05", "-1", "0"], 0.2)
    glob = f"{{'duration': {dur}, 'calibration': 'CPU0', 'default_policy': 'SCHED_OTHER'}}"
    d = f"{{'tasks': {{{', '.join(tasks)}}}, 'global': {glob}}}"
    if rng.random() < 0.1:
        d = pick(rng, ["{}", "{'tasks': []}", "{'tasks': {'t': 5}}", "{'global': {}}", hv(rng)])
    return d


def file_source(rng: random.Random, kind: str) -> str:
    """An expression that is a path: a fixture or a file written by the snippet."""
    fixed = [
        "FIX['fifo']",
        "FIX['dir']",
        "FIX['missing']",
        "FIX['empty']",
        "FIX['junk']",
        "FIX['loop']",
        "FIX['devzero_link']",
        "'/dev/zero'",
        "'/dev/null'",
        "'/dev/urandom'",
        "'/proc/self/mem'",
        "'/proc/self/status'",
        "'/dev/stdin'",
        "FIX['nul']",
        "FIX['dir'] + '/'",
        "FIX['trace']",
        "FIX['trace_gz']",
        "FIX['bad_gz']",
        "FIX['bomb_gz']",
        "''",
        "'\\x00'",
        "FIX['rtapp']",
        "FIX['spec']",
        "Path(FIX['fifo'])",
        "FIX['long_line']",
    ]
    return pick(rng, fixed)


def g_rt_app(rng: random.Random, ctx: dict[str, Any]) -> str:
    r = rng.random()
    if r < 0.35:
        arg = rtapp_dict(rng)
    elif r < 0.5:
        arg = f"json.dumps({rtapp_dict(rng)}, default=repr)"
    elif r < 0.55:
        arg = "'[' * 100000 + ']' * 100000"
    elif r < 0.6:
        arg = "'{\"tasks\": ' * 50000"
    elif r < 0.65:
        arg = f"json.dumps({rtapp_dict(rng)}, default=repr).encode()"
    elif r < 0.7:
        arg = pick(
            rng,
            [
                '\'{"tasks": {"t": {"run": 1e999}}}\'',
                "'{\"tasks\": NaN}'",
                "'\\ufeff{}'",
                '\'{"tasks": {"t": {"run": 10, "run": 20}}}\'',
                "'not json'",
                "'{'",
            ],
        )
    elif r < 0.9:
        arg = file_source(rng, "rtapp")
    else:
        arg = hv(rng)
    scale = maybe(rng, ["1.0", "0.5", "2"], 0.3) if rng.random() < 0.4 else "1.0"
    call = f"W.rt_app({arg}, run_scale={scale})"
    return built_or_run(rng, call, "import json\n")


def trace_text(rng: random.Random) -> str:
    lines = ["# tracer: nop", "#"] if rng.random() < 0.5 else []
    for _ in range(rng.randint(0, 12)):
        r = rng.random()
        if r < 0.6:
            line = pick(rng, TRACE_LINES)
            if rng.random() < 0.5:
                a, b = TRACE_SUBS[rng.randrange(len(TRACE_SUBS))]
                line = line.replace(a, b)
        elif r < 0.75:
            line = "".join(rng.choice("abc -=>:[]0123456789.") for _ in range(rng.randint(0, 80)))
        elif r < 0.85:
            line = ""
        else:
            line = pick(rng, TRACE_LINES)[: rng.randint(0, 120)]
        lines.append(line)
    return "\n".join(lines)


def g_from_trace(rng: random.Random, ctx: dict[str, Any]) -> str:
    r = rng.random()
    pre = ""
    if r < 0.4:
        pre = f"_p = T + '/t.txt'\nopen(_p, 'w').write({trace_text(rng)!r})\n"
        arg = "_p"
    elif r < 0.5:
        pre = f"_p = T + '/t.txt.gz'\nimport gzip\ngzip.open(_p, 'wt').write({trace_text(rng)!r})\n"
        arg = "_p"
    elif r < 0.6:
        arg = f"{trace_text(rng)!r}.splitlines()"
    elif r < 0.65:
        arg = pick(rng, ["['a\\nb']", "[1, 2]", "['\\ud800']", "[b'x']", "iter(['x'])", "('x',)"])
    elif r < 0.9:
        arg = file_source(rng, "trace")
    else:
        arg = hv(rng)
    kw = kwargs(
        rng,
        {
            "tasks": ["None", "'a'", "['a', 'b']", "[]", "'zzz'"],
            "time_scale": ["1.0", "0.5", "1e-9"],
            "net_costs": ["True", "False"],
        },
        p=0.3,
        keep=0.3,
    )
    call = f"W.from_trace({arg}{', ' + kw if kw else ''})"
    return built_or_run(rng, call, pre)


SPEC_OK = {
    "machine": ['"vm-2"', '"quad-4c"', '"nope"', "2", '""'],
    "kernel": ['"v6.18"', '"v3.8"', '"vx"', "[1]"],
    "replicates": ["1", "2", "0", "-1", "1e3", "99999999999", '"2"'],
    "seed": ["0", "3", "-1", "18446744073709551616"],
    "duration_s": ["0.05", "0", "-1", "nan", "inf", '"x"'],
    "threads": ["1", "2", "0", "-3", "100000"],
    "interval_s": ["0.1", "0"],
}
SPEC_WL = [
    'kind = "hackbench"\ngroups = 1\nfds = 2\nloops = 5',
    'kind = "pipe_pingpong"\nloops = 20',
    'kind = "spinners"\nnice = [0, 0]',
    'kind = "nope"',
    "groups = 1",
    'kind = "hackbench"\ngroups = -1',
    'kind = "rt_app"\njson = "/dev/zero"',
    'kind = "from_trace"\npath = "/nonexistent"',
    'kind = "hackbench"\ngroups = 1\nloops = 5\nbogus = 3',
    'kind = ["hackbench"]',
    'kind = "hackbench"\ngroups = 1e400',
]
SPEC_GRID = [
    "",
    "migration_cost_ns = [0, 500000]",
    '"workload.ipc" = ["pipe", "socket"]',
    'machine = ["vm-2", "nope"]',
    "hz = []",
    "hz = 250",
    "bogus = [1, 2]",
    '"workload.groups" = [1, 2]',
    '"workload.bogus" = [1]',
    "context_switch_ns = [-5, 3000]",
    'kernel = ["v6.18", "v3.8"]',
    "hz = [100, 250, 1000, 12345]",
    'pick = ["eevdf", 5]',
    "x.y = [1]",
    '"workload.kind" = ["pipe_pingpong"]',
]


def spec_toml(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.08:
        return pick(
            rng, ["a = " + "[" * 100000, "x = 1\nx = 2", "\x00\x01\x02", "[workload", "🙂 = 1"]
        )
    top = [f"{k} = {maybe(rng, v, 0.0)}" for k, v in SPEC_OK.items() if rng.random() < 0.3]
    if not any(t.startswith("duration_s") for t in top):
        top.append("duration_s = 0.05")
    parts = top
    if rng.random() < 0.9:
        parts.append("[workload]\n" + pick(rng, SPEC_WL))
    if rng.random() < 0.6:
        parts.append("[grid]\n" + pick(rng, SPEC_GRID))
    if rng.random() < 0.2:
        parts.append(
            "[kernel_overrides]\n" + pick(rng, ["compat_yield = true", "hz = -1", "nope = 1"])
        )
    if rng.random() < 0.15:
        parts.append(
            "[costs]\n" + pick(rng, ["context_switch_ns = 3000", "context_switch_ns = -1", "x = 1"])
        )
    if rng.random() < 0.05:
        parts.append("[workload]\nkind = 'pipe_pingpong'")
    return "\n".join(parts) + "\n"


def g_spec(rng: random.Random, ctx: dict[str, Any]) -> str:
    r = rng.random()
    if r < 0.35:
        text = spec_toml(rng)
        return f"_p = T + '/s.toml'\nopen(_p, 'w').write({text!r})\n_r = sl.load_spec(_p)"
    if r < 0.45:
        return f"_r = sl.load_spec({file_source(rng, 'spec')})"
    if r < 0.5:
        return f"_r = sl.load_spec({hv(rng)})"
    if r < 0.8:
        import tomllib

        text = spec_toml(rng)
        try:
            d = tomllib.loads(text)
        except Exception:
            d = {"workload": {"kind": "hackbench"}}
        spec = repr(d)
        if rng.random() < 0.2:
            spec = spec.replace("'workload'", pick(rng, ["1", "None", "'Workload'", "('w',)"]), 1)
        return f"_r = sl.run_spec({spec}, progress=False)"
    if r < 0.9:
        spec = pick(
            rng,
            [
                "{}",
                "[]",
                "None",
                "{'workload': 'hackbench'}",
                "{'workload': {}}",
                "{'workload': {'kind': 'hackbench', 'groups': 1, 'loops': 5}, "
                "'grid': {'hz': 'abc'}}",
                "{1: 2}",
                "{'workload': {'kind': Evil()}}",
                "{'workload': {1: 'x', 'kind': 'pipe_pingpong'}}",
            ],
        )
        return f"_r = sl.run_spec({spec}, progress=False)"
    ck = pick(
        rng, ["FIX['dir']", "'/dev/full'", "FIX['fifo']", "T + '/ck.parquet'", "'/proc/x.parquet'"]
    )
    return (
        "_r = sl.run_spec({'duration_s': 0.05, 'workload': {'kind': 'pipe_pingpong', 'loops': 10}, "
        f"'grid': {{'hz': [100, 250]}}}}, progress={pick(rng, ['False', 'True', hv(rng)])}, "
        f"checkpoint={ck})"
    )


def progress_expr(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.2:
        return pick(rng, ["False", "True"])
    if r < 0.75:
        after = pick(rng, ["0", "1", "2", "5"])
        exc = pick(
            rng,
            [
                "UserBoom('progress')",
                "ValueError('cb')",
                "KeyboardInterrupt()",
                "SystemExit(3)",
                "RecursionError()",
                "MemoryError()",
                "GeneratorExit()",
                "sl.ConfigError('from cb')",
            ],
        )
        return f"make_progress({after}, {exc})"
    return pick(rng, ["lambda: 0", "lambda d, t: 1 / 0", "'yes'", "print", "len", "1", "Evil()"])


def g_sweep(rng: random.Random, ctx: dict[str, Any]) -> str:
    fields = ctx["kfields"]
    r = rng.random()
    grid: str
    if r < 0.35:
        f = pick(rng, fields)
        a = maybe(rng, ["100", "250", "True", KERNEL_STR[0]], 0.3)
        b = maybe(rng, ["1000", "False"], 0.2)
        grid = f"{{'{f}': [{a}, {b}]}}"
    elif r < 0.55:
        grid = pick(
            rng,
            [
                "{'machine': ['vm-2', 'quad-4c']}",
                "{'machine': ['vm-2', 'nope']}",
                "{'kernel': ['v6.18', 'v3.8']}",
                "{'workload.loops': [5, 10]}",
                "{'workload.loops': [5, -1]}",
                "{'workload.bogus': [1]}",
                "{'hz': range(100, 104)}",
                "{'hz': []}",
                "{'hz': 250}",
                "{'hz': 'abc'}",
                "{'': [1]}",
                "{None: [1]}",
                "{'hz': [100], 'workload.fds': [2, 4]}",
                "{'context_switch_ns': [0, -1, 2**64]}",
                "{'bogus': [1, 2]}",
                "{'hz': [Evil()]}",
                "{'machine': [sl.Machine(1, 2), 'vm-2']}",
                "{'hz': list(range(1, 10**6))}",
                "{'seed': [1, 2]}",
            ],
        )
    elif r < 0.65:
        grid = hv(rng)
    else:
        grid = "{'hz': [100, 250, 1000]}"
    kw = {
        "replicates": ["1", "2", "3"],
        "seed": ["0", "7"],
        "threads": ["1", "2", "None"],
        "chunk_size": ["None", "1", "2"],
        "memory_limit": ["None", "2**30"],
        "latency": ["False", "True"],
        "duration_s": ["0.05"],
    }
    extra = kwargs(rng, kw, p=0.25, keep=0.35)
    extra_list = [extra] if extra else []
    extra_list.append(f"progress={progress_expr(rng)}")
    if rng.random() < 0.3:
        ex = pick(
            rng,
            [
                "__import__('concurrent.futures').futures.ThreadPoolExecutor(2)",
                "__import__('concurrent.futures').futures.ProcessPoolExecutor(1)",
                "JunkExecutor('raise')",
                "JunkExecutor('none')",
                "JunkExecutor('junk')",
                "JunkExecutor('exc')",
                "JunkExecutor('int')",
                "JunkExecutor('ok')",
                "object()",
                "'threads'",
            ],
        )
        extra_list.append(f"executor={ex}")
    if rng.random() < 0.2:
        ck = pick(
            rng,
            [
                "T + '/ck.parquet'",
                "FIX['dir']",
                "'/dev/full'",
                "FIX['fifo']",
                "T + '/missing/ck.parquet'",
                "'\\x00'",
                "T + '/' + 'x' * 300",
                "'/proc/ck.parquet'",
                "FIX['junk']",
                "Evil()",
            ],
        )
        extra_list.append(f"checkpoint={ck}")
    w = pick(rng, SMALL_WORKLOADS[:6]) if rng.random() < 0.9 else small_workload(rng, True)
    m = pick(rng, MACHINES) if rng.random() < 0.85 else machine_expr(rng)
    k = pick(rng, KERNELS) if rng.random() < 0.85 else kernel_expr(rng, fields)
    return f"_r = sl.sweep({m}, {k}, {w}, {grid}, {', '.join(extra_list)})"


LAT_FRAME = (
    "sl.simulate('vm-2', 'v6.18', W.hackbench(groups=1, fds=2, loops=5), latency=True).latency()"
)


def g_format_latency(rng: random.Random, ctx: dict[str, Any]) -> str:
    r = rng.random()
    if r < 0.3:
        df = LAT_FRAME
    elif r < 0.6:
        mut = pick(
            rng,
            [
                "_d.drop('max_us')",
                "_d.with_columns(pl.col('max_us').cast(pl.Utf8))",
                "_d.with_columns(max_us=None)",
                "_d.with_columns(max_us=float('nan'))",
                "_d.with_columns(count=-1)",
                "_d.head(0)",
                "_d.rename({'task': 'x'})",
                "_d.with_columns(name=pl.lit('\\x00' * 1000))",
                "_d.with_columns(mean_us=float('inf'))",
                "pl.concat([_d] * 1000)",
                "_d.with_columns(name=pl.lit(None, pl.Utf8))",
                "_d.with_columns(count=pl.lit(2**63 - 1, pl.Int64))",
                "_d.lazy()",
                "_d.to_dict()",
                "_d.to_pandas() if False else _d.rows()",
            ],
        )
        sort = maybe(rng, LAT_SORTS, 0.3)
        return f"_d = {LAT_FRAME}\n_r = sl.format_latency({mut}, sort={sort})"
    elif r < 0.8:
        df = pick(
            rng,
            [
                "pl.DataFrame()",
                "pl.DataFrame({'task': [1]})",
                "{}",
                "None",
                "'x'",
                "pl.DataFrame({'max_us': [1.0]})",
                "pl.LazyFrame()",
                "[]",
            ],
        )
    else:
        df = hv(rng)
    sort = maybe(rng, ["'max_us'", "'mean_us'", "'count'", "'task'", "'bogus'"], 0.3)
    return f"_r = sl.format_latency({df}, sort={sort})"


def g_schedule(rng: random.Random, ctx: dict[str, Any]) -> str:
    res = pick(
        rng,
        [
            "sl.simulate('vm-2', 'v6.18', W.hackbench(groups=1, fds=2, loops=5), trace=True)",
            "sl.simulate('vm-2', 'v6.18', W.hackbench(groups=1, fds=2, loops=5))",
            "sl.simulate('vm-2', 'v6.18', W.from_trace(FIX['trace']), trace=True)",
            "sl.simulate('vm-2', 'v6.18', W.pipe_pingpong(loops=20), trace=True, trace_limit=3)",
        ],
    )
    r = rng.random()
    pre = ""
    if r < 0.25:
        src = "_res"
    elif r < 0.5:
        pre = f"_p = T + '/t.txt'\nopen(_p, 'w').write({trace_text(rng)!r})\n"
        src = "_p"
    elif r < 0.85:
        src = file_source(rng, "trace")
    else:
        src = hv(rng)
    kw = kwargs(
        rng,
        {
            "roles": ["'auto'", "None", "'hackbench'", "'bogus'", "{'a': 'sender'}", "{100: 'x'}"],
            "fds": ["20", "2", "0", "-1"],
            "tasks": ["None", "['a']", "'a'"],
        },
        p=0.3,
        keep=0.3,
    )
    if rng.random() < 0.5:
        call = f"sl.schedule_stats({src}{', ' + kw if kw else ''})"
    else:
        kw = kw.replace("tasks=", "negative=")
        other = pick(rng, ["_res", "_res", "None", "FIX['trace']", hv(rng)])
        call = f"sl.compare_schedule({src}, {other}{', ' + kw if kw else ''})"
    return f"{pre}_res = {res}\n_r = {call}"


CAL_BASE = (
    "pl.DataFrame({'ipc': ['pipe', 'pipe'], 'mode': ['process', 'process'], 'groups': [1, 1], "
    "'loops': [10, 10], 'elapsed_s': [0.001, 0.0012], 'context_switches': [100.0, 120.0], "
    "'cpu_migrations': [3.0, 4.0]})"
)
CAL_MUTS = [
    "_f.with_columns(groups=pl.col('groups').cast(pl.Utf8))",
    "_f.with_columns(groups=0)",
    "_f.with_columns(groups=10**5)",
    "_f.with_columns(loops=10**8)",
    "_f.with_columns(elapsed_s=float('nan'))",
    "_f.with_columns(elapsed_s=-1.0)",
    "_f.with_columns(elapsed_s=None)",
    "_f.with_columns(elapsed_s=True)",
    "_f.drop('ipc')",
    "_f.with_columns(ipc=pl.lit(None, pl.Utf8))",
    "_f.with_columns(ipc=5)",
    "_f.with_columns(ipc=pl.lit('tcp'))",
    "_f.with_columns(mode=pl.lit('x').cast(pl.Categorical))",
    "_f.with_columns(pinned=pl.lit(True))",
    "_f.with_columns(pinned=pl.lit('yes'))",
    "_f.with_columns(bench=pl.lit('pipe'))",
    "_f.with_columns(change=pl.lit('nice=5'))",
    "_f.with_columns(cpus=pl.lit(64))",
    "_f.with_columns(cpus=pl.lit(-1))",
    "_f.head(0)",
    "_f.with_columns(context_switches=pl.lit(2**64 - 1, pl.UInt64))",
    "_f.with_columns(groups=pl.lit(2**63 - 1))",
    "_f.with_columns(elapsed_s=pl.lit('1.0'))",
    "_f.with_columns(loops=pl.col('loops').cast(pl.Float64))",
    "_f.with_columns(elapsed_s=pl.lit(1, pl.Decimal(10, 2)))",
    "_f.with_columns(groups=pl.lit([1]))",
    "_f.lazy()",
    "_f.to_dict(as_series=False)",
    "pl.DataFrame()",
    "None",
    "_f.with_columns(elapsed_s=float('inf'))",
]


def g_calibrate(rng: random.Random, ctx: dict[str, Any]) -> str:
    fn = pick(rng, ["calibrate", "validate"])
    mut = pick(rng, CAL_MUTS) if rng.random() < 0.8 else hv(rng)
    if fn == "validate" and mut.startswith("_f") and rng.random() < 0.3:
        mut = f"{mut}.with_columns(change=pl.lit({pick(rng, CHANGES)}))"
    kw = {
        "fit": ["None", "'context_switch_ns'", "['wakeup_ns']", "'bogus'", "[]"],
        "train": ["None", "[{'groups': 1}]", "pl.col('groups') == 1", "[{'bogus': 1}]"],
        "metrics": ["('elapsed_s',)", "('context_switches',)", "('bogus',)", "()"],
        "machine_mismatch": ["'warn'", "'error'", "'ignore'", "'explode'"],
        "memory_limit": ["None", "1", "2**30"],
        "seed": ["0", "1"],
    }
    if fn == "validate":
        kw.pop("metrics")
        kw["baseline"] = ["'plain'", "'bogus'"]
    extra = kwargs(rng, kw, p=0.25, keep=0.35)
    seeds = maybe(rng, ["1"], 0.2)
    evals = maybe(rng, ["1", "2"], 0.2)
    m = pick(rng, ["'vm-2'", "'vm-2'", "'quad-4c'"]) if rng.random() < 0.9 else machine_expr(rng)
    k = pick(rng, KERNELS) if rng.random() < 0.9 else kernel_expr(rng, ctx["kfields"])
    tail = f", seeds={seeds}, max_evaluations={evals}, threads=1, progress=False"
    return f"_f = {CAL_BASE}\n_r = sl.{fn}({mut}, {m}, {k}{tail}{', ' + extra if extra else ''})"


def junk_word(rng: random.Random) -> str:
    return pick(
        rng,
        [
            "",
            "x",
            "-1",
            "nan",
            "1e999",
            "\x7f",
            "\u00e9",
            "--",
            "-",
            "0",
            "2**64",
            "18446744073709551616",
            "a=b=c",
            "=",
            "k=",
            "=v",
            "1,,2",
            " ",
            "%s",
            "{}",
            "..",
            "\\",
            "'",
            "ä" * 300,
            "9" * 400,
        ],
    )


def g_cli(rng: random.Random, ctx: dict[str, Any]) -> list[str]:
    sub = pick(rng, ["run", "latency", "sweep", "measure", "demo", "bogus", "--version", ""])
    args: list[str] = [sub] if sub else []
    if sub in ("run", "latency"):
        opts = {
            "--machine": MACHINES + ["nope", ""],
            "--kernel": KERNELS + ["v9"],
            "--workload": [
                "spinners",
                "hackbench",
                "pipe_pingpong",
                "volano",
                "aim7",
                "rt_app",
                "from_trace",
                "nope",
            ],
            "--param": [
                "groups=1",
                "loops=5",
                "fds=2",
                "groups=-1",
                "ipc=tcp",
                "json=/dev/zero",
                "path=@FIX_TRACE",
                "path=@FIX_FIFO",
                "loops=1e999",
                "nice=[0]",
                "=",
                "groups",
            ],
            "--set": ["hz=100", "hz=-1", "pick=nope", "bogus=1", "compat_yield=maybe", "hz="],
            "--cost": ["context_switch_ns=3000", "context_switch_ns=-5", "x=1"],
            "--nice": ["0,0,0", "0,,0", "-21", "a", "0," * 1000],
            "--run-us": ["100", "-1", "nan", "inf"],
            "--sleep-us": ["50", "-1", "x"],
            "--duration": ["0.05", "0", "-1", "nan", "1e308", "x"],
            "--seed": ["0", "-1", "x", "18446744073709551616"],
            "--perfetto": ["@T/o.pftrace", "@FIX_DIR", "/dev/full", "@FIX_FIFO", ""],
        }
        if sub == "latency":
            opts.update(
                {
                    "--by": ["task", "name", "role", "process", "run", "x"],
                    "--kind": ["all", "wakeup", "x"],
                    "--sort": ["max_us", "count", "x", ""],
                    "-o": ["@T/lat.txt", "@FIX_DIR", "/dev/full", "@FIX_FIFO"],
                }
            )
            opts.pop("--perfetto")
        for o, vals in opts.items():
            if rng.random() < 0.3:
                args += [o, pick(rng, vals) if rng.random() < 0.8 else junk_word(rng)]
        if "--duration" not in args and rng.random() < 0.9:
            args += ["--duration", "0.05"]
        if rng.random() < 0.2:
            args.append(pick(rng, ["--yields", "--json", "--force"]))
    elif sub == "sweep":
        spec = pick(
            rng,
            ["@SPEC", "@SPEC", "@FIX_FIFO", "@FIX_DIR", "/dev/zero", "@FIX_MISSING", "@FIX_JUNK"],
        )
        args.append(spec)
        if rng.random() < 0.9:
            args += [
                "-o",
                pick(
                    rng,
                    [
                        "@T/o.parquet",
                        "@FIX_DIR",
                        "/dev/full",
                        "@FIX_FIFO",
                        "@T/nodir/o.parquet",
                        "@T/o.parquet/",
                        "/proc/o.parquet",
                        "@T/" + "x" * 250,
                    ],
                ),
            ]
        if rng.random() < 0.3:
            args += ["--threads", pick(rng, ["1", "0", "-1", "x", "100000"])]
        if rng.random() < 0.3:
            args += ["--memory-limit", pick(rng, ["4G", "1", "0", "-1G", "x", "1e999G", "9" * 40])]
        if rng.random() < 0.2:
            args += [
                "--checkpoint",
                pick(rng, ["@T/ck.parquet", "@FIX_DIR", "@FIX_FIFO", "/dev/full"]),
            ]
        args.append("--no-progress")
        return ["@SPECTEXT=" + spec_toml(rng), *args]
    elif sub == "measure":
        # never a valid benchmark run: something is always wrong
        bench = pick(rng, ["hackbench", "pipe", "rt-app", "bogus"])
        args.append(bench)
        bad = pick(
            rng,
            [
                ["--groups", "1,,2"],
                ["--groups", "x"],
                ["--ipc", "tcp"],
                ["--mode", "x"],
                ["--loops", "-1"],
                ["--reps", "0"],
                ["--pinned", "maybe"],
                ["--change", "policy=x"],
                ["--method", "x"],
                ["--groups", "-3"],
            ],
        )
        if bench == "rt-app":
            args.append(
                pick(rng, ["@FIX_FIFO", "/dev/zero", "@FIX_DIR", "@FIX_MISSING", "@FIX_JUNK"])
            )
        args += bad
        if rng.random() < 0.3:
            args += ["-o", pick(rng, ["@FIX_DIR", "/dev/full", "@FIX_FIFO"])]
        args.append("--no-progress")
    elif sub == "demo":
        if rng.random() < 0.7:
            args.append(junk_word(rng) or "--bogus")
    else:
        args += [junk_word(rng) for _ in range(rng.randint(0, 3))]
    return args


TARGETS: dict[str, tuple[float, Any]] = {
    "simulate": (3, g_simulate),
    "workloads": (2, g_workloads),
    "with_tasks": (1, g_with_tasks),
    "Group": (1, g_group),
    "mix": (1, g_mix),
    "rt_app": (1.5, g_rt_app),
    "from_trace": (1.5, g_from_trace),
    "spec": (1.5, g_spec),
    "sweep": (2.5, g_sweep),
    "format_latency": (0.8, g_format_latency),
    "schedule": (1, g_schedule),
    "calibrate": (1, g_calibrate),
    "cli": (2, g_cli),
}


def generate(n: int, seed: int, only: set[str] | None, ctx: dict[str, Any]) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    names = [t for t in TARGETS if not only or t in only]
    weights = [TARGETS[t][0] for t in names]
    calls = []
    for i in range(n):
        t = rng.choices(names, weights)[0]
        body = TARGETS[t][1](rng, ctx)
        calls.append({"id": i, "target": t, **({"argv": body} if t == "cli" else {"code": body})})
    return calls


# ---------------------------------------------------------------- running


def fixtures(root: Path) -> dict[str, str]:
    fix = {
        "fifo": root / "fifo",
        "dir": root / "adir",
        "missing": root / "missing.json",
        "empty": root / "empty.txt",
        "junk": root / "junk.bin",
        "nul": root / "nul.txt",
        "loop": root / "loop_a",
        "devzero_link": root / "zero_link",
        "trace": root / "trace.txt",
        "trace_gz": root / "trace.txt.gz",
        "bad_gz": root / "bad.txt.gz",
        "bomb_gz": root / "bomb.txt.gz",
        "rtapp": root / "rtapp.json",
        "spec": root / "spec.toml",
        "long_line": root / "long_line.txt",
    }
    os.mkfifo(fix["fifo"])
    fix["dir"].mkdir()
    fix["empty"].write_bytes(b"")
    fix["junk"].write_bytes(random.Random(0).randbytes(65536))
    fix["nul"].write_bytes(b"\x00" * 4096)
    os.symlink(root / "loop_b", fix["loop"])
    os.symlink(fix["loop"], root / "loop_b")
    os.symlink("/dev/zero", fix["devzero_link"])
    shutil.copy(DATA / "replay" / "pingpong.ftrace.txt", fix["trace"])
    with gzip.open(fix["trace_gz"], "wb") as f:
        f.write((DATA / "replay" / "pingpong.ftrace.txt").read_bytes())
    fix["bad_gz"].write_bytes(gzip.compress(b"x" * 10000)[:40])
    with gzip.open(fix["bomb_gz"], "wb", compresslevel=9) as f:  # 64 MiB of one line
        for _ in range(64):
            f.write(b"a" * (1 << 20))
    fix["rtapp"].write_text(
        json.dumps(
            {"tasks": {"t": {"loop": 3, "run": 100, "sleep": 100}}, "global": {"duration": 1}}
        )
    )
    fix["spec"].write_text(
        'duration_s = 0.05\n[workload]\nkind = "pipe_pingpong"\nloops = 10\n'
        "[grid]\nhz = [100, 250]\n"
    )
    fix["long_line"].write_text("x" * (2 << 20) + "\n")
    return {k: str(v) for k, v in fix.items()}


def limit(mem: int) -> Any:
    def f() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return f


def subst(word: str, fix: dict[str, str], tmp: str) -> str:
    for k, v in fix.items():
        word = word.replace(f"@FIX_{k.upper()}", v)
    return word.replace("@T", tmp).replace("@SPEC", os.path.join(tmp, "spec.toml"))


def run_one(
    call: dict[str, Any], fix: dict[str, str], root: Path, a: argparse.Namespace
) -> dict[str, Any]:
    tmp = tempfile.mkdtemp(prefix=f"c{call['id']}-", dir=root)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), NO_COLOR="1", PYTHONFAULTHANDLER="1")
    outf = os.path.join(tmp, "result.json")
    if call["target"] == "cli":
        argv = list(call["argv"])
        if argv and argv[0].startswith("@SPECTEXT="):
            Path(tmp, "spec.toml").write_text(argv.pop(0)[len("@SPECTEXT=") :])
        cmd = [sys.executable, "-m", "schedlab", *(subst(w, fix, tmp) for w in argv)]
        stdin = ""
    else:
        cmd = [sys.executable, "-c", RUNNER, outf, tmp, json.dumps(fix)]
        stdin = call["code"]
    t0 = time.monotonic()
    p = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp,
        env=env,
        preexec_fn=limit(int(a.mem_gb * (1 << 30))),
        start_new_session=True,
    )
    hung = False
    try:
        out, err = p.communicate(stdin.encode("utf-8", "surrogatepass"), timeout=a.timeout)
    except subprocess.TimeoutExpired:
        hung = True
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
    wall = time.monotonic() - t0
    rec: dict[str, Any] = {**call, "wall_s": round(wall, 3), "rc": p.returncode}
    rec["stderr"] = err.decode("utf-8", "replace")[-3000:]
    rec["stdout"] = out.decode("utf-8", "replace")[-500:]
    res = None
    if os.path.exists(outf):
        res = json.loads(Path(outf).read_text())
        rec["result"] = res
    if call["target"] == "cli":
        if hung:
            kind = "hang"
        elif p.returncode == 0:
            kind = "ok"
        elif p.returncode < 0:
            kind = "crash"
        elif "Traceback (most recent call last)" in rec["stderr"]:
            kind = "foreign"
        else:
            kind = "library"
    elif hung:
        kind = "hang"
        if res and res.get("outcome") in ("returned", "raised"):
            rec["note"] = "hung at interpreter exit, after the call finished"
    elif res is None or res.get("outcome") in ("running", "harness"):
        kind = "crash"
    elif p.returncode != 0:
        kind = "crash"
        rec["note"] = f"exit {p.returncode} after the call finished"
    elif res["outcome"] == "returned":
        kind = "ok"
    elif res["schedlab"]:
        kind = "library"
    elif not res.get("inlib"):
        kind = "caller"  # raised by the snippet itself, not inside the library
    elif res["user"]:
        kind = "user"
    elif res["exc_type"] in (
        "builtins.SystemExit",
        "builtins.KeyboardInterrupt",
        "builtins.GeneratorExit",
    ) and ("make_progress" in call.get("code", "")):
        kind = "user"  # the callback's own BaseException, passed through
    else:
        kind = "foreign"
    rec["kind"] = kind
    lost = 0
    if res and res.get("outcome") == "raised" and res.get("progress_done", 0) > 0:
        kept = res.get("partial")
        kept_n = kept if isinstance(kept, int) and kept >= 0 else 0
        lost = max(0, res["progress_done"] - kept_n)
    rec["lost_rows"] = lost
    shutil.rmtree(tmp, ignore_errors=True)
    return rec


def table(recs: list[dict[str, Any]]) -> str:
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for r in recs:
        for t in (r["target"], "TOTAL"):
            by[t][r["kind"]] += 1
            by[t]["calls"] += 1
            by[t]["lost"] += 1 if r["lost_rows"] else 0
    cols = ["calls", *KINDS, "lost"]
    lines = [f"{'target':<15}" + "".join(f"{c:>9}" for c in cols)]
    for t in sorted(by, key=lambda x: (x == "TOTAL", x)):
        lines.append(f"{t:<15}" + "".join(f"{by[t][c]:>9}" for c in cols))
    return "\n".join(lines)


def describe(r: dict[str, Any]) -> str:
    call = " ".join(repr(w) for w in r["argv"]) if r["target"] == "cli" else r["code"]
    res = r.get("result") or {}
    head = f"--- #{r['id']} {r['target']} {r['kind'].upper()} (rc={r['rc']}, {r['wall_s']} s)"
    if r.get("note"):
        head += f" [{r['note']}]"
    if r["lost_rows"]:
        head += f" [lost rows: {r['lost_rows']}]"
    body = [head, "call:", "    " + call.replace("\n", "\n    ")]
    if res.get("outcome") == "raised":
        body.append(f"raised: {res['exc_type']}: {res['msg'][:600]}")
        body.append("    " + "\n    ".join(res["tb"].strip().splitlines()[-6:]))
    elif r["stderr"].strip():
        body.append("stderr: " + "\n    ".join(r["stderr"].strip().splitlines()[-12:]))
    return "\n".join(body)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000, help="calls to make (default 2000)")
    ap.add_argument("--jobs", type=int, default=2, help="subprocesses at once (default 2)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the generated calls")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per call (default 30)")
    ap.add_argument("--mem-gb", type=float, default=2.0, help="RLIMIT_AS of each call, GiB")
    ap.add_argument("-k", default=None, help="comma-separated targets: " + ", ".join(TARGETS))
    ap.add_argument(
        "--out", type=Path, default=None, help="every call and outcome (.json or .parquet)"
    )
    ap.add_argument("--list", action="store_true", help="print the generated calls and exit")
    a = ap.parse_args()

    sys.path.insert(0, str(ROOT / "python"))
    import schedlab as sl

    ctx = {
        "kfields": list(sl.Kernel.preset("v6.18").fields()),
        "cfields": list(sl.CostModel().fields()),
    }
    only = set(a.k.split(",")) if a.k else None
    calls = generate(a.calls, a.seed, only, ctx)
    if a.list:
        for c in calls:
            print(f"#{c['id']} {c['target']}: {c.get('code') or c.get('argv')}")
        return 0
    root = Path(tempfile.mkdtemp(prefix="schedlab-hostile-"))
    fix = fixtures(root)
    start = time.monotonic()
    recs: list[dict[str, Any]] = []
    try:
        with ThreadPoolExecutor(a.jobs) as pool:
            futs = [pool.submit(run_one, c, fix, root, a) for c in calls]
            for i, f in enumerate(futs, 1):
                recs.append(f.result())
                if i % 100 == 0 or i == len(futs):
                    bad = sum(r["kind"] in ("foreign", "crash", "hang") for r in recs)
                    print(
                        f"[{i}/{len(futs)}] {time.monotonic() - start:.0f} s, {bad} bad",
                        file=sys.stderr,
                    )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    wall = time.monotonic() - start
    for r in recs:
        if r["kind"] in ("foreign", "crash", "hang") or r["lost_rows"]:
            print(describe(r) + "\n")
    print(table(recs))
    print(f"\n{len(recs)} calls in {wall:.1f} s wall (--jobs {a.jobs}, --seed {a.seed})")
    if a.out:
        if a.out.suffix == ".parquet":
            import polars as pl

            flat = [
                {
                    **{k: v for k, v in r.items() if k != "result"},
                    "argv": json.dumps(r.get("argv")),
                    "result": json.dumps(r.get("result")),
                }
                for r in recs
            ]
            pl.DataFrame(flat, infer_schema_length=None).write_parquet(a.out)
        else:
            a.out.write_text(json.dumps({"seed": a.seed, "wall_s": wall, "calls": recs}, indent=1))
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
