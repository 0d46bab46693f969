"""rt-app's JSON workload descriptions, and its log files.

The grammar is rt-app 1.0's (``doc/tutorial.txt`` and
``rt-app_parse_config.c`` of scheduler-tools/rt-app, tag v1.0, the
version Debian packages): ``tasks`` (each thread object: ``instance``,
``loop``, ``phases``, ``policy``, ``priority``, ``nice``, ``cpus``,
``delay``, and events), ``global`` (``duration``, ``default_policy`` and the
keys that only steer rt-app's own logging and calibration). As in rt-app
1.0, a thread object without ``phases`` is one phase: its ``loop`` is the
phase's, and the thread repeats it until ``duration`` ends; with
``phases``, ``loop`` (default -1: forever) repeats the whole list, each
phase's own ``loop`` (default 1) repeating it. Event keys may carry a
numeric suffix (``run0``, ``timer1``: workgen's way to keep keys unique);
duplicate keys keep their order.

Events: ``run`` (a calibrated amount of CPU work, in µs), ``runtime``
(busy for that much wall-clock time), ``sleep``, ``timer`` (``ref``,
``period``, ``mode`` relative/absolute; a ``ref`` starting with ``unique``
is one timer per thread, any other name is shared by every thread using
it), ``lock``/``unlock``, ``wait`` (``ref``, ``mutex``), ``signal``,
``broad``, ``sync`` (``ref``, ``mutex``: signal then wait), ``barrier``,
``yield``. Anything else (``mem``, ``iorun``, ``suspend``/``resume``,
``SCHED_DEADLINE``'s ``dl-*``, phase-level ``cpus``) is refused with the
key's name.

A thread is named ``<task>-<instance>`` (``instance`` counts from 0 within
its task); rt-app 1.0 names its threads' log files
``<log_basename>-<task>-<n>.log`` with ``n`` counting threads over the
whole file, in the order of ``tasks``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from .._check import error_text, show
from ..exceptions import ConfigError, ConfigTypeError
from .script import CODES, Script, ScriptTask

#: Thread-object keys that are not events.
TASK_KEYS = ("instance", "loop", "phases", "policy", "priority", "nice", "cpus", "delay")
#: Phase-object keys that are not events.
PHASE_KEYS = ("loop",)
#: Events the model runs.
EVENTS = (
    "run",
    "runtime",
    "sleep",
    "timer",
    "lock",
    "unlock",
    "wait",
    "signal",
    "broad",
    "sync",
    "barrier",
    "yield",
)
#: ``global`` keys: ``duration`` and ``default_policy`` shape the run; the
#: others steer rt-app's own calibration, logging and memory locking, which
#: the model has no counterpart for (``pi_enabled`` only as false).
GLOBAL_KEYS = (
    "duration",
    "default_policy",
    "calibration",
    "logdir",
    "log_basename",
    "log_size",
    "lock_pages",
    "ftrace",
    "gnuplot",
    "pi_enabled",
    "cumulative_slack",
)
POLICIES = {
    "SCHED_OTHER": "normal",
    "SCHED_BATCH": "batch",
    "SCHED_IDLE": "idle",
    "SCHED_FIFO": "fifo",
    "SCHED_RR": "rr",
}

#: The longest duration an event may give (µs): 10^9 s.
_MAX_US = 10**15
_OPS_BARRIER = CODES["barrier"]
#: json-c's nesting limit (``JSON_TOKENER_DEFAULT_DEPTH``).
_MAX_DEPTH = 32


class _Pairs(list[tuple[str, Any]]):
    """A JSON object with its keys in order, duplicates kept."""


def _strip(text: str) -> str:
    """``text`` without ``/* */`` and ``//`` comments and trailing commas
    (json-c, which rt-app uses, accepts both), strings left as they are;
    what is dropped becomes spaces, so a JSON error's line and column are
    the file's. Objects and arrays nested deeper than json-c reads are
    refused here, before Python's parser recurses into them."""
    out: list[str] = []
    depth = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if text.startswith("/*", i) or text.startswith("//", i):
            block = text[i + 1] == "*"
            j = text.find("*/" if block else "\n", i + 2)
            j = n if j < 0 else j + 2 if block else j
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c in "{[":
            depth += 1
            if depth > _MAX_DEPTH:
                line = text.count("\n", 0, i) + 1
                raise ConfigError(
                    f"invalid json: objects and arrays nested more than {_MAX_DEPTH} deep at "
                    f"line {line}; expected at most {_MAX_DEPTH} (json-c's limit)"
                )
        elif c in "}]":
            depth -= 1
            k = len(out) - 1
            while k >= 0 and out[k].isspace():
                k -= 1
            if k >= 0 and out[k] == ",":  # a trailing comma (a string's chunk ends in '"')
                out[k] = " "
        out.append(c)
        i += 1
    return "".join(out)


def _parse_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # past Python's digit limit (sys.get_int_max_str_digits)
        raise ConfigError(
            f"invalid json: the integer {text[:12]}...({len(text.lstrip('-'))} digits) is too "
            "long to read; expected an integer rt-app reads (a C int)"
        ) from None


def load(source: Any) -> _Pairs:
    """The description from a path, a JSON string or a dict."""
    if isinstance(source, Mapping):
        pairs = _to_pairs(source, "json", 1)
        assert isinstance(pairs, _Pairs)
        return pairs
    if isinstance(source, Path) or (isinstance(source, str) and "{" not in source):
        path = Path(source)
        try:
            text = path.read_text(errors="replace")
        except (OSError, ValueError) as e:  # ValueError: a NUL byte, an unencodable name
            raise ConfigError(
                f"invalid json={str(source)[:200]!r}: cannot read it ({error_text(e)}); expected a "
                "path to an rt-app JSON file, a JSON string or a dict"
            ) from None
    elif isinstance(source, str):
        text = source
    else:
        raise ConfigTypeError(
            f"invalid type for json: got {type(source).__name__}, expected a path, a JSON "
            "string or a dict"
        )
    try:
        doc = json.loads(_strip(text), object_pairs_hook=_Pairs, parse_int=_parse_int)
    except json.JSONDecodeError as e:
        raise ConfigError(
            f"invalid json: not JSON at line {e.lineno} column {e.colno} ({e.msg})"
        ) from None
    if not isinstance(doc, _Pairs):
        raise ConfigError(
            f"invalid json: got {_got(doc)}, expected an object with a 'tasks' object"
        )
    return doc


def _to_pairs(v: Any, where: str, depth: int) -> Any:
    """A dict's tree as ``load`` reads JSON text: objects as ``_Pairs``,
    tuples as lists; anything JSON has no value for is refused by path."""
    if isinstance(v, Mapping | list | tuple) and depth > _MAX_DEPTH:
        raise ConfigError(
            f"invalid json: {where} is nested more than {_MAX_DEPTH} deep; expected at most "
            f"{_MAX_DEPTH} levels of objects and arrays (json-c's limit)"
        )
    if isinstance(v, Mapping):
        out = _Pairs()
        for k, x in v.items():
            if not isinstance(k, str):
                raise ConfigTypeError(
                    f"invalid type for a key of {where}: got {type(k).__name__} {_short(k)}, "
                    "expected a string"
                )
            out.append((k, _to_pairs(x, _at(where, k), depth + 1)))
        return out
    if isinstance(v, list | tuple):
        return [_to_pairs(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]
    if v is None or isinstance(v, str | int | float):  # a bool is an int
        return v
    raise ConfigTypeError(
        f"invalid type for {where}: got {type(v).__name__}, expected a JSON value (a dict, "
        "list, str, int, float, bool or None)"
    )


def _at(where: str, key: str) -> str:
    """The path of ``key`` in the object at ``where`` (``json``: the top)."""
    return key if where == "json" else f"{where}.{key}"


#: JSON's names of the types ``load`` gives.
_KINDS = {_Pairs: "object", list: "array", str: "string", bool: "boolean", int: "integer"}


def _short(v: Any) -> str:
    """``v`` as a refusal shows it: JSON's spelling, an object or array
    by its kind, a long number or string shortened."""
    if isinstance(v, _Pairs):
        return "{...}" if v else "{}"
    if isinstance(v, list):
        return "[...]" if v else "[]"
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    r = show(v)
    return r if len(r) <= 60 else f"{r[:57]}..."


def _got(v: Any) -> str:
    """``v``'s JSON type and ``v`` (``_short``), as a type refusal shows it."""
    if v is None:
        return "null"
    return f"{_KINDS.get(type(v), type(v).__name__)} {_short(v)}"


def _get(obj: _Pairs, key: str) -> Any:
    for k, v in obj:
        if k == key:
            return v
    return None


def _int(where: str, v: Any, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigTypeError(f"invalid type for {where}: got {_got(v)}, expected an integer")
    if not lo <= v <= hi:
        raise ConfigError(f"invalid {where}={_short(v)}: expected an integer from {lo} to {hi}")
    return v


def _us(where: str, v: Any) -> int:
    return _int(where, v, 0, _MAX_US) * 1000


def _name(where: str, v: Any) -> str:
    if not isinstance(v, str) or not v:
        raise ConfigTypeError(f"invalid type for {where}: got {_got(v)}, expected a resource name")
    return v


def _event_kind(key: str) -> str:
    return key.rstrip("0123456789")


def _ref(where: str, v: Any, *keys: str) -> list[Any]:
    if not isinstance(v, _Pairs):
        raise ConfigTypeError(
            f"invalid type for {where}: got {_got(v)}, expected an object with {', '.join(keys)}"
        )
    got = dict(v)
    for k in got:
        if k not in keys:
            raise ConfigError(f"unsupported rt-app key {where}.{k}: expected {', '.join(keys)}")
    return [got.get(k) for k in keys]


def translate(source: Any, *, run_scale: float = 1.0) -> tuple[Script, list[dict[str, Any]]]:
    """The script of an rt-app description, and a row per thread (its name,
    task, instance, policy)."""
    doc = load(source)
    for k, _ in doc:
        if k not in ("tasks", "global"):
            raise ConfigError(f"unsupported rt-app key {k!r}: expected 'tasks' and 'global'")
    glob = _get(doc, "global") or _Pairs()
    if not isinstance(glob, _Pairs):
        raise ConfigTypeError("invalid type for global: expected an object")
    for k, v in glob:
        if k not in GLOBAL_KEYS:
            raise ConfigError(
                f"unsupported rt-app key global.{k}: the model takes {', '.join(GLOBAL_KEYS)}"
            )
        if k == "pi_enabled" and v:
            raise ConfigError(
                "unsupported rt-app key global.pi_enabled=true: the model's mutexes have no "
                "priority inheritance"
            )
    script = Script()
    dur = _get(glob, "duration")
    if dur is not None:
        d = _int("global.duration", dur, -1, 10**9)
        if d == 0:
            raise ConfigError("invalid global.duration=0: expected -1 (none) or whole seconds")
        script.duration_ns = None if d < 0 else d * 10**9
    default_policy = _get(glob, "default_policy") or "SCHED_OTHER"
    if default_policy not in POLICIES:
        raise ConfigError(
            f"invalid global.default_policy={default_policy!r}: expected one of "
            f"{', '.join(POLICIES)}"
        )
    tasks = _get(doc, "tasks")
    if not isinstance(tasks, _Pairs) or not tasks:
        raise ConfigError("invalid json: expected a non-empty 'tasks' object")
    threads: list[dict[str, Any]] = []
    idx = 0
    for tname, tobj in tasks:
        where = f"tasks.{tname}"
        if not isinstance(tobj, _Pairs):
            raise ConfigTypeError(f"invalid type for {where}: expected an object")
        inst = _get(tobj, "instance")
        n_inst = 1 if inst is None else _int(f"{where}.instance", inst, 1, 4096)
        pol = _get(tobj, "policy") or default_policy
        if pol not in POLICIES:
            raise ConfigError(
                f"invalid {where}.policy={pol!r}: expected one of {', '.join(POLICIES)} "
                "(SCHED_DEADLINE is not modelled)"
            )
        policy = POLICIES[pol]
        prio = _get(tobj, "priority")
        nice = _get(tobj, "nice")
        rt_priority = None
        nice_v = 0 if nice is None else _int(f"{where}.nice", nice, -20, 19)
        if policy in ("fifo", "rr"):
            rt_priority = 10 if prio is None else _int(f"{where}.priority", prio, 1, 99)
        elif prio is not None:
            # rt-app 1.0 takes a fair thread's priority as its nice level.
            nice_v = _int(f"{where}.priority", prio, -20, 19)
        cpus = _get(tobj, "cpus")
        cpu_list = None
        if cpus is not None:
            if not isinstance(cpus, list) or not cpus:
                raise ConfigTypeError(
                    f"invalid type for {where}.cpus: expected a non-empty list of CPU numbers"
                )
            cpu_list = [_int(f"{where}.cpus", c, 0, 4095) for c in cpus]
        delay = _get(tobj, "delay")
        delay_ns = 0 if delay is None else _us(f"{where}.delay", delay)
        phases_obj = _get(tobj, "phases")
        loop = _get(tobj, "loop")
        if phases_obj is not None:
            if not isinstance(phases_obj, _Pairs) or not phases_obj:
                raise ConfigTypeError(f"invalid type for {where}.phases: expected an object")
            for k, _ in tobj:
                if k not in TASK_KEYS:
                    raise ConfigError(
                        f"unsupported rt-app key {where}.{k}: with 'phases', the thread object "
                        f"takes {', '.join(TASK_KEYS)}"
                    )
            phases = [(f"{where}.phases.{pn}", po) for pn, po in phases_obj]
            t_loop = -1 if loop is None else _int(f"{where}.loop", loop, -1, 2**31)
        else:
            phases = [(where, tobj)]
            t_loop = -1
        if t_loop == 0:
            raise ConfigError(f"invalid {where}.loop=0: expected -1 (forever) or a count")
        for inst in range(n_inst):
            name = f"{tname}-{inst}"
            task = ScriptTask(
                name=name,
                nice=nice_v,
                policy=policy,
                rt_priority=rt_priority,
                cpus=cpu_list,
                mm=0,  # rt-app's threads are one process
                start="init",
                delay_ns=delay_ns,
                loops=None if t_loop < 0 else t_loop,
            )
            for pwhere, pobj in phases:
                if not isinstance(pobj, _Pairs):
                    raise ConfigTypeError(f"invalid type for {pwhere}: expected an object")
                ploop_v = _get(pobj, "loop") if phases_obj is not None else loop
                ploop = 1 if ploop_v is None else _int(f"{pwhere}.loop", ploop_v, -1, 10**7)
                if ploop == 0:
                    raise ConfigError(f"invalid {pwhere}.loop=0: expected -1 (forever) or a count")
                body_start = len(task.op)
                _events(script, task, pwhere, pobj, phases_obj is not None, run_scale)
                body = (task.op[body_start:], task.a[body_start:], task.b[body_start:])
                task.add("mark")
                if ploop < 0:
                    # rt-app 1.0 never leaves a phase whose loop is -1.
                    task.loops = None
                    task.loop_from = body_start
                    break
                for _ in range(ploop - 1):
                    task.op.extend(body[0])
                    task.a.extend(body[1])
                    task.b.extend(body[2])
                    task.add("mark")
                if script.nr_ops() + len(task.op) > 4_000_000:
                    raise ConfigError(
                        f"invalid {pwhere}.loop={ploop}: the phase's events repeated that "
                        "often exceed 4,000,000 operations"
                    )
            script.tasks.append(task)
            threads.append(
                {"thread": name, "task": tname, "instance": inst, "index": idx, "policy": policy}
            )
            idx += 1
    # A barrier waits for every thread instance that uses it (rt-app counts
    # the references to the name when it parses the file).
    for bid in range(len(script.barrier_users)):
        users = sum(
            1
            for t in script.tasks
            if any(o == _OPS_BARRIER and a == bid for o, a in zip(t.op, t.a, strict=True))
        )
        script.barrier_users[bid] = max(users, 1)
    return script, threads


def _events(
    script: Script, task: ScriptTask, where: str, obj: Any, phased: bool, run_scale: float
) -> None:
    skip = PHASE_KEYS if phased else TASK_KEYS
    n_events = 0
    for key, v in obj:
        if key in skip:
            continue
        kind = _event_kind(key)
        at = f"{where}.{key}"
        if kind not in EVENTS:
            raise ConfigError(
                f"unsupported rt-app key {at}: the model runs the events {', '.join(EVENTS)}"
            )
        n_events += 1
        if kind == "run":
            ns = _us(at, v)
            task.add("run", max(1, round(ns * run_scale)), ns)
        elif kind == "runtime":
            task.add("runtime", _us(at, v))
        elif kind == "sleep":
            task.add("sleep", _us(at, v))
        elif kind == "timer":
            if not isinstance(v, _Pairs):
                raise ConfigTypeError(
                    f"invalid type for {at}: expected an object with ref and period"
                )
            got = dict(v)
            for k in got:
                if k not in ("ref", "period", "mode"):
                    raise ConfigError(
                        f"unsupported rt-app key {at}.{k}: expected ref, period, mode"
                    )
            ref = _name(f"{at}.ref", got.get("ref"))
            period = _us(f"{at}.period", got.get("period"))
            if period == 0:
                raise ConfigError(f"invalid {at}.period=0: expected a positive period in µs")
            mode = got.get("mode", "relative")
            if mode not in ("relative", "absolute"):
                raise ConfigError(f"invalid {at}.mode={mode!r}: expected 'relative' or 'absolute'")
            scoped = f"{ref}@{task.name}" if ref.startswith("unique") else ref
            task.add("timer", script.timer(scoped, mode == "absolute"), period)
        elif kind in ("lock", "unlock"):
            task.add(kind, script.mutex(_name(at, v)))
        elif kind in ("signal", "broad"):
            task.add(kind, script.cond(_name(at, v)))
        elif kind in ("wait", "sync"):
            ref, mutex = _ref(at, v, "ref", "mutex")
            c = script.cond(_name(f"{at}.ref", ref))
            m = script.mutex(_name(f"{at}.mutex", mutex))
            if kind == "sync":
                task.add("signal", c)
            task.add("wait", c, m)
        elif kind == "barrier":
            task.add("barrier", script.barrier(_name(at, v)))
        elif kind == "yield":
            task.add("yield")
    if n_events == 0:
        raise ConfigError(f"invalid {where}: no events (expected some of {', '.join(EVENTS)})")


#: rt-app 1.0's log columns (``log_timing``), in order.
LOG_COLUMNS = (
    "idx",
    "perf",
    "run",
    "period",
    "start",
    "end",
    "rel_st",
    "slack",
    "c_duration",
    "c_period",
    "wu_lat",
)


def read_log(path: str | Path) -> pl.DataFrame:
    """One rt-app log file (``<logdir>/<log_basename>-<thread>.log``): a row
    per phase iteration, rt-app's columns (µs, ``start``/``end`` absolute)."""
    rows: list[list[int]] = []
    for line in Path(path).read_text().splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split()
        if len(parts) != len(LOG_COLUMNS) or not all(re.fullmatch(r"-?\d+", p) for p in parts):
            raise ConfigError(
                f"invalid rt-app log {str(path)!r}: line {s[:60]!r} does not have the "
                f"{len(LOG_COLUMNS)} integer columns of rt-app 1.0's log"
            )
        rows.append([int(p) for p in parts])
    return pl.DataFrame(rows, schema=list(LOG_COLUMNS), orient="row")


def summarize_log(df: pl.DataFrame) -> dict[str, float]:
    """A thread's log as the model's per-task columns: means per phase
    iteration of ``run_us``, ``period_us``, ``c_run_us``, ``c_period_us``,
    ``wu_lat_us``, ``slack_us``, and ``missed_periods`` (iterations with a
    negative slack), ``log_lines``."""
    n = df.height
    if n == 0:
        nan = math.nan
        return dict.fromkeys(
            ("run_us", "period_us", "c_run_us", "c_period_us", "wu_lat_us", "slack_us"), nan
        ) | {"missed_periods": 0.0, "log_lines": 0.0}
    return {
        "log_lines": float(n),
        "run_us": float(df["run"].mean()),  # type: ignore[arg-type]
        "period_us": float(df["period"].mean()),  # type: ignore[arg-type]
        "c_run_us": float(df["c_duration"].mean()),  # type: ignore[arg-type]
        "c_period_us": float(df["c_period"].mean()),  # type: ignore[arg-type]
        "wu_lat_us": float(df["wu_lat"].mean()),  # type: ignore[arg-type]
        "slack_us": float(df["slack"].mean()),  # type: ignore[arg-type]
        "missed_periods": float((df["slack"] < 0).sum()),
    }
