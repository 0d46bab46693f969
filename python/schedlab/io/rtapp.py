"""rt-app's JSON workload descriptions, and its log files.

The grammar is rt-app 1.0's (``doc/tutorial.txt`` and
``rt-app_parse_config.c`` of scheduler-tools/rt-app, tag v1.0, the
version Debian packages): ``tasks`` (each thread object: ``instance``,
``loop``, ``phases``, ``policy``, ``priority``, ``cpus``, ``delay``, and
events), ``global`` (``duration``, ``default_policy`` and the keys that
only steer rt-app's own logging and calibration), each value of the JSON
type rt-app reads (a null is refused, not taken as the default). As in rt-app
1.0, a thread object without ``phases`` is one phase: its ``loop`` is the
phase's, and the thread repeats it until ``duration`` ends; with
``phases``, ``loop`` (default -1: forever) repeats the whole list, each
phase's own ``loop`` (default 1) repeating it. Event keys may carry a
numeric suffix (``run0``, ``timer1``: workgen's way to keep keys unique);
an event's key given twice runs twice, in order, as workgen makes of it
(``dump`` numbers the repeats for rt-app, whose json-c keeps only the last
of them); any other key given twice is refused.

Events: ``run`` (a calibrated amount of CPU work, in µs), ``runtime``
(busy for that much wall-clock time), ``sleep``, ``timer`` (``ref``,
``period``, ``mode`` relative/absolute; a ``ref`` starting with ``unique``
is one timer per thread, any other name is shared by every thread using
it), ``lock``/``unlock``, ``wait`` (``ref``, ``mutex``), ``signal``,
``broad``, ``sync`` (``ref``, ``mutex``: signal then wait), ``barrier``,
``yield``. Anything else (``mem``, ``iorun``, ``suspend``/``resume``,
``SCHED_DEADLINE``'s ``dl-*``, phase-level ``cpus``, a thread's ``nice``,
which no rt-app reads) is refused with the key's name. Policies are rt-app
1.0's ``SCHED_OTHER``, ``SCHED_FIFO`` and ``SCHED_RR``, and ``SCHED_BATCH``
and ``SCHED_IDLE`` as later rt-app versions take them.

A thread is named ``<task>-<instance>`` (``instance`` counts from 0 within
its task); rt-app 1.0 names its threads' log files
``<log_basename>-<task>-<n>.log`` with ``n`` counting threads over the
whole file, in the order of ``tasks``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from .. import _core, inputs
from .._check import short
from ..exceptions import ConfigError, ConfigTypeError
from .script import Script, ScriptTask

#: Thread-object keys that are not events.
TASK_KEYS = ("instance", "loop", "phases", "policy", "priority", "cpus", "delay")
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
#: Thread and phase keys refused with a reason of their own.
_REFUSED = {
    "nice": "rt-app (1.0 and later) does not read it; a fair thread's nice level is its 'priority'",
}
#: ``global`` keys that steer rt-app itself (its calibration, logs, memory
#: locking, tracing), which the model has no counterpart for, and the
#: values rt-app 1.0 takes (``parse_global``).
_STEERING: dict[str, tuple[Callable[[Any], bool], str]] = {
    "calibration": (
        lambda v: _is_int(v) or (isinstance(v, str) and re.fullmatch(r"CPU\d+", v) is not None),
        'a loop length in ns or "CPU<n>"',
    ),
    "logdir": (lambda v: isinstance(v, str), "a string"),
    "log_basename": (lambda v: isinstance(v, str), "a string"),
    "log_size": (lambda v: _is_int(v) or isinstance(v, str), "a size in MB or a string"),
    "lock_pages": (lambda v: isinstance(v, bool), "true or false"),
    "ftrace": (lambda v: isinstance(v, bool), "true or false"),
    "gnuplot": (lambda v: isinstance(v, bool), "true or false"),
}
#: ``global`` booleans the model takes only as false (rt-app's default).
_FALSE_ONLY = {
    "pi_enabled": "the model's mutexes have no priority inheritance",
    "cumulative_slack": "the model's slack_us is each iteration's slack at its last timer",
}
#: ``global`` keys: ``duration`` and ``default_policy`` shape the run.
GLOBAL_KEYS = ("duration", "default_policy", *_STEERING, *_FALSE_ONLY)
POLICIES = {
    "SCHED_OTHER": "normal",
    "SCHED_BATCH": "batch",
    "SCHED_IDLE": "idle",
    "SCHED_FIFO": "fifo",
    "SCHED_RR": "rr",
}
_NO_DL = " (SCHED_DEADLINE is not modelled)"
#: The priority range of a fair thread (its nice level) and of an RT one.
_PRIO = {False: (-20, 19), True: (1, 99)}

#: rt-app 1.0 reads its numbers as C ints (json-c clamps larger ones).
_C_INT = 2**31 - 1
#: The longest duration an event may give (µs); times 1000 and a
#: ``run_scale`` of 10, within the core's 2^50 ns.
_MAX_US = _C_INT
#: The core's limit of operations per script (phase loops unrolled).
_MAX_OPS = _core.SCRIPT_MAX_OPS
#: json-c's nesting limit (``JSON_TOKENER_DEFAULT_DEPTH``).
_MAX_DEPTH = 32
#: A key's value when the key is absent.
_UNSET: Any = object()


class Pairs(list[tuple[str, Any]]):
    """A JSON object as ``load`` gives it: its keys in order, duplicates
    kept (``translate`` refuses them but for events)."""


def dump(doc: Any) -> str:
    """JSON text of ``doc`` (objects as ``Pairs``) for rt-app itself: a key
    repeated in an object (an event) gets the first free number appended,
    as rt-app's ``workgen`` numbers them, since json-c would keep only the
    last of them, in the first one's place."""
    if isinstance(doc, Pairs):
        used = {k for k, _ in doc}
        seen: set[str] = set()
        items = []
        for k, v in doc:
            if k in seen:
                n = 1
                while f"{k}{n}" in used:
                    n += 1
                k = f"{k}{n}"
                used.add(k)
            seen.add(k)
            items.append(f"{json.dumps(k)}: {dump(v)}")
        return "{" + ", ".join(items) + "}"
    if isinstance(doc, list):
        return "[" + ", ".join(dump(x) for x in doc) + "]"
    return json.dumps(doc)


def _unique(where: str, obj: Pairs, *, events: bool = False) -> None:
    """Refuse a key given twice in ``obj`` (json-c, which rt-app uses, would
    keep only the last); with ``events``, an event's key may repeat: the
    events run in order, as rt-app's ``workgen`` numbers them."""
    seen: set[str] = set()
    for k, _ in obj:
        if k in seen and not (events and _event_kind(k) in EVENTS):
            raise ConfigError(
                f"invalid {_at(where, k)}: {k!r} is given twice in {where}; expected each key "
                "once (json-c, which rt-app uses, would keep only the last)"
            )
        seen.add(k)


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


#: What ``rt_app``'s ``json`` takes, for a refusal.
_EXPECTED = "a path to an rt-app JSON file, a JSON string or a dict"


def load(source: Any) -> Pairs:
    """The description from a path, a JSON string or a dict."""
    if isinstance(source, Mapping):
        pairs = _to_pairs(source, "json", 1)
        assert isinstance(pairs, Pairs)
        return pairs
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "{" not in source):
        data = inputs.read_bounded(
            "json", source, inputs.MAX_RTAPP_BYTES, _EXPECTED, "an rt-app JSON description"
        )
        text = data.decode("utf-8", errors="replace")
    elif isinstance(source, str):
        if len(source) > inputs.MAX_RTAPP_BYTES:  # characters: at least as many bytes
            raise ConfigError(
                f"invalid json: a JSON string of {len(source):,} characters, larger than "
                f"{inputs.size_text(inputs.MAX_RTAPP_BYTES)}, the limit for an rt-app JSON "
                "description"
            )
        text = source
    else:
        raise ConfigTypeError(
            f"invalid type for json: got {type(source).__name__}, expected a path, a JSON "
            "string or a dict"
        )
    try:
        doc = json.loads(_strip(text), object_pairs_hook=Pairs, parse_int=_parse_int)
    except json.JSONDecodeError as e:
        raise ConfigError(
            f"invalid json: not JSON at line {e.lineno} column {e.colno} ({e.msg})"
        ) from None
    if not isinstance(doc, Pairs):
        raise ConfigError(
            f"invalid json: got {_got(doc)}, expected an object with a 'tasks' object"
        )
    return doc


def plain(v: Any) -> Any:
    """A copy of a dict description ``load`` has read, as dicts and lists:
    what a workload keeps, so that the caller's later changes to the dict do
    not reach it."""
    if isinstance(v, Mapping):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [plain(x) for x in v]
    return v


def _to_pairs(v: Any, where: str, depth: int) -> Any:
    """A dict's tree as ``load`` reads JSON text: objects as ``Pairs``,
    tuples as lists; anything JSON has no value for is refused by path."""
    if isinstance(v, Mapping | list | tuple) and depth > _MAX_DEPTH:
        raise ConfigError(
            f"invalid json: {where} is nested more than {_MAX_DEPTH} deep; expected at most "
            f"{_MAX_DEPTH} levels of objects and arrays (json-c's limit)"
        )
    if isinstance(v, Mapping):
        out = Pairs()
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
_KINDS = {
    Pairs: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
}


def _short(v: Any) -> str:
    """``v`` as a refusal shows it: JSON's spelling, an object or array
    by its kind, a long number or string shortened."""
    if isinstance(v, Pairs):
        return "{...}" if v else "{}"
    if isinstance(v, list):
        return "[...]" if v else "[]"
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    return short(v)


def _got(v: Any) -> str:
    """``v``'s JSON type and ``v`` (``_short``), as a type refusal shows it."""
    if v is None:
        return "null"
    return f"{_KINDS.get(type(v), type(v).__name__)} {_short(v)}"


def _get(obj: Pairs, key: str, default: Any) -> Any:
    """The value of ``key`` in ``obj``, ``default`` if the key is absent
    (a JSON null is a value: the checkers refuse it)."""
    for k, v in obj:
        if k == key:
            return v
    return default


def _obj(where: str, v: Any, expected: str, *, empty: bool = True) -> Pairs:
    """``v`` if it is a JSON object (a non-empty one unless ``empty``)."""
    if not isinstance(v, Pairs):
        raise ConfigTypeError(f"invalid type for {where}: got {_got(v)}, expected {expected}")
    if not v and not empty:
        raise ConfigError(
            f"invalid {where}={{}}: expected a non-empty {expected.removeprefix('an ')}"
        )
    return v


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int(where: str, v: Any, lo: int, hi: int) -> int:
    if not _is_int(v):
        raise ConfigTypeError(f"invalid type for {where}: got {_got(v)}, expected an integer")
    if not lo <= v <= hi:
        raise ConfigError(f"invalid {where}={_short(v)}: expected an integer from {lo} to {hi}")
    return int(v)


def _us(where: str, v: Any) -> int:
    return _int(where, v, 0, _MAX_US) * 1000


def _loop(where: str, obj: Pairs, default: int) -> int:
    n = _int(f"{where}.loop", _get(obj, "loop", default), -1, _C_INT)
    if n == 0:
        raise ConfigError(f"invalid {where}.loop=0: expected -1 (forever) or a count")
    return n


def _choice(where: str, v: Any, choices: Iterable[str], note: str = "") -> str:
    if not isinstance(v, str):
        raise ConfigTypeError(
            f"invalid type for {where}: got {_got(v)}, expected one of {', '.join(choices)}{note}"
        )
    if v not in choices:
        raise ConfigError(
            f"invalid {where}={_short(v)}: expected one of {', '.join(choices)}{note}"
        )
    return v


def _name(where: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ConfigTypeError(f"invalid type for {where}: got {_got(v)}, expected a resource name")
    if not v:
        raise ConfigError(f'invalid {where}="": expected a resource name')
    return v


def _event_kind(key: str) -> str:
    return key.rstrip("0123456789")


def _fields(
    where: str, v: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    """An event's object: its ``required`` keys and the ``optional`` ones given."""
    keys = ", ".join(required + optional)
    obj = _obj(where, v, f"an object with {keys}")
    _unique(where, obj)
    for k, _ in obj:
        if k not in required + optional:
            raise ConfigError(f"unsupported rt-app key {where}.{k}: expected {keys}")
    got = dict(obj)
    for k in required:
        if k not in got:
            raise ConfigError(f"invalid {where}: no '{k}'; expected an object with {keys}")
    return got


def _global(glob: Pairs, script: Script) -> str:
    """Check ``global``, set the script's duration; the default policy."""
    _unique("global", glob)
    for k, v in glob:
        at = f"global.{k}"
        if k not in GLOBAL_KEYS:
            raise ConfigError(
                f"unsupported rt-app key {at}: the model takes {', '.join(GLOBAL_KEYS)}"
            )
        if k in _STEERING and not _STEERING[k][0](v):
            raise ConfigTypeError(
                f"invalid type for {at}: got {_got(v)}, expected {_STEERING[k][1]}"
            )
        if k in _FALSE_ONLY:
            if not isinstance(v, bool):
                raise ConfigTypeError(
                    f"invalid type for {at}: got {_got(v)}, expected false ({_FALSE_ONLY[k]})"
                )
            if v:
                raise ConfigError(
                    f"unsupported rt-app key {at}=true: {_FALSE_ONLY[k]}; expected false"
                )
    d = _int("global.duration", _get(glob, "duration", -1), -1, _C_INT)
    if d == 0:
        raise ConfigError("invalid global.duration=0: expected -1 (none) or whole seconds")
    script.duration_ns = None if d < 0 else d * 10**9
    return _choice("global.default_policy", _get(glob, "default_policy", "SCHED_OTHER"), POLICIES)


def translate(source: Any, *, run_scale: float = 1.0) -> tuple[Script, list[dict[str, Any]]]:
    """The script of an rt-app description, and a row per thread (its name,
    task, instance, policy)."""
    doc = load(source)
    _unique("json", doc)
    for k, _ in doc:
        if k not in ("tasks", "global"):
            raise ConfigError(
                f"invalid json: unsupported rt-app key {_short(k)} at the top; expected 'tasks' "
                "and 'global'"
            )
    b = _Build(Script(), run_scale)
    script = b.script
    default_policy = _global(_obj("global", _get(doc, "global", Pairs()), "an object"), script)
    tasks = _get(doc, "tasks", _UNSET)
    if tasks is _UNSET:
        raise ConfigError("invalid json: no 'tasks'; expected an object with a 'tasks' object")
    threads: list[dict[str, Any]] = []
    tasks = _obj("tasks", tasks, "an object of thread objects", empty=False)
    _unique("tasks", tasks)
    for tname, tobj in tasks:
        where = f"tasks.{tname}"
        try:
            tname.encode()
        except UnicodeEncodeError:  # a lone surrogate ("\ud800") cannot name a task
            raise ConfigError(
                f"invalid tasks key {tname!r}: expected a task name that encodes as UTF-8 (no "
                "lone surrogates)"
            ) from None
        tobj = _obj(where, tobj, "a thread object")
        _unique(where, tobj, events=True)
        threads += _thread(b, where, tname, tobj, default_policy, len(threads))
    # rt-app 1.0 counts a barrier's users as it parses the file: each use
    # of the name by each thread instance is one (parse_thread_event_data).
    for bid in range(len(script.barrier_users)):
        script.barrier_users[bid] = b.barrier_refs[bid]
    return script, threads


@dataclass
class _Build:
    """A description's script as it is built: the script, the run scale,
    each barrier's references and the operations so far."""

    script: Script
    run_scale: float
    barrier_refs: Counter[int] = field(default_factory=Counter)
    ops: int = 0


def _thread(
    b: _Build, where: str, tname: str, tobj: Pairs, default_policy: str, index: int
) -> list[dict[str, Any]]:
    """Add a thread object's threads to the script; their rows."""
    n_inst = _int(f"{where}.instance", _get(tobj, "instance", 1), 1, 4096)
    if index + n_inst > _core.MAX_TASKS:
        raise ConfigError(
            f"invalid {where}.instance={n_inst}: the description's threads exceed the limit of "
            f"{_core.MAX_TASKS:,} tasks"
        )
    pol = _choice(f"{where}.policy", _get(tobj, "policy", default_policy), POLICIES, _NO_DL)
    policy = POLICIES[pol]
    rt = policy in ("fifo", "rr")
    # rt-app 1.0 takes a fair thread's priority as its nice level.
    prio = _int(f"{where}.priority", _get(tobj, "priority", 10 if rt else 0), *_PRIO[rt])
    cpus = _get(tobj, "cpus", _UNSET)
    if cpus is _UNSET:
        cpus = None
    else:
        if not isinstance(cpus, list) or isinstance(cpus, Pairs) or not cpus:
            raise ConfigTypeError(
                f"invalid type for {where}.cpus: got {_got(cpus)}, expected a non-empty array of "
                "CPU numbers"
            )
        cpus = [_int(f"{where}.cpus[{i}]", c, 0, 4095) for i, c in enumerate(cpus)]
    delay_ns = _us(f"{where}.delay", _get(tobj, "delay", 0))
    phases_v = _get(tobj, "phases", _UNSET)
    if phases_v is _UNSET:
        # rt-app 1.0: the thread object is its one phase, and the thread
        # repeats it until the duration ends.
        phases = [(where, _events(where, tobj, TASK_KEYS), _loop(where, tobj, 1))]
        t_loop = -1
    else:
        for k, _ in tobj:
            if k not in TASK_KEYS:
                raise ConfigError(
                    f"unsupported rt-app key {where}.{k}: "
                    + _REFUSED.get(
                        k, f"with 'phases', the thread object takes {', '.join(TASK_KEYS)}"
                    )
                )
        phases = []
        phases_obj = _obj(f"{where}.phases", phases_v, "an object of phase objects", empty=False)
        _unique(f"{where}.phases", phases_obj)
        for pn, po in phases_obj:
            pw = f"{where}.phases.{pn}"
            po = _obj(pw, po, "a phase object")
            _unique(pw, po, events=True)
            phases.append((pw, _events(pw, po, PHASE_KEYS), _loop(pw, po, 1)))
        t_loop = _loop(where, tobj, -1)
    _check_locks(phases, repeats=phases_v is _UNSET or t_loop != 1)
    _check_size(b, where, n_inst, phases)
    rows = []
    for inst in range(n_inst):
        name = f"{tname}-{inst}"
        task = ScriptTask(
            name=name,
            nice=0 if rt else prio,
            policy=policy,
            rt_priority=prio if rt else None,
            cpus=cpus,
            mm=0,  # rt-app's threads are one process
            start="init",
            delay_ns=delay_ns,
            loops=None if t_loop < 0 else t_loop,
        )
        for _, events, ploop in phases:
            body_start = len(task.op)
            _emit(b, task, events)
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
        b.script.tasks.append(task)
        b.ops += len(task.op)
        rows.append(
            {
                "thread": name,
                "task": tname,
                "instance": inst,
                "index": index + inst,
                "policy": policy,
            }
        )
    return rows


#: An event as parsed: its key's path, its kind, its value.
_Event = tuple[str, str, Any]


def _events(where: str, obj: Pairs, skip: tuple[str, ...]) -> list[_Event]:
    """The events of a phase (or of a thread object without phases)."""
    out: list[_Event] = []
    for key, v in obj:
        if key in skip:
            continue
        kind = _event_kind(key)
        at = f"{where}.{key}"
        if key in _REFUSED or kind not in EVENTS:
            reason = _REFUSED.get(key, f"the model runs the events {', '.join(EVENTS)}")
            raise ConfigError(f"unsupported rt-app key {at}: {reason}")
        x: Any = None
        if kind in ("run", "runtime", "sleep"):
            x = _us(at, v)
        elif kind == "timer":
            got = _fields(at, v, ("ref", "period"), ("mode",))
            period = _us(f"{at}.period", got["period"])
            if period == 0:
                raise ConfigError(f"invalid {at}.period=0: expected a positive period in µs")
            mode = _choice(f"{at}.mode", got.get("mode", "relative"), ("relative", "absolute"))
            x = (_name(f"{at}.ref", got["ref"]), period, mode == "absolute")
        elif kind in ("wait", "sync"):
            got = _fields(at, v, ("ref", "mutex"))
            x = (_name(f"{at}.ref", got["ref"]), _name(f"{at}.mutex", got["mutex"]))
        elif kind != "yield":
            x = _name(at, v)
        out.append((at, kind, x))
    if not out:
        raise ConfigError(f"invalid {where}: no events (expected some of {', '.join(EVENTS)})")
    return out


def _check_locks(phases: list[tuple[str, list[_Event], int]], *, repeats: bool) -> None:
    """Refuse a thread that locks a mutex it already holds: rt-app's mutexes
    are glibc's default ones, and the thread would wait for itself forever
    (and rt-app for it at exit). The events are walked in the order the
    thread runs them, a loop twice: each mutex is held or not after a pass
    as its last lock, unlock or wait leaves it, so a third pass is the second."""
    held: dict[str, tuple[str, int]] = {}  # mutex -> the key that took it, in which iteration
    it = 0
    for _ in range(1 + repeats):
        for _, events, ploop in phases:
            for _ in range(1 + (ploop != 1)):
                it += 1
                for at, kind, x in events:
                    if kind == "lock" and x in held:
                        by, when = held[x]
                        before = ", in the iteration before" if by == at and when < it else ""
                        raise ConfigError(
                            f"invalid {at}={x!r}: the thread holds mutex {x!r} here (taken by "
                            f"{by}{before}, not unlocked since) and would wait for itself "
                            f"forever; expected an unlock of {x!r} before it"
                        )
                    if kind == "lock":
                        held[x] = (at, it)
                    elif kind == "unlock":
                        held.pop(x, None)
                    elif kind in ("wait", "sync"):  # a wait returns holding its mutex
                        held.setdefault(x[1], (at, it))
            if ploop < 0:
                return


def _check_size(
    b: _Build, where: str, n_inst: int, phases: list[tuple[str, list[_Event], int]]
) -> None:
    """Refuse a thread object whose threads, their phase loops unrolled as
    the model runs them, would take the script past its operations."""
    each = 0
    for _, events, ploop in phases:
        # an event is an operation (sync: two), and each iteration ends in a mark
        each += (len(events) + sum(k == "sync" for _, k, _ in events) + 1) * max(ploop, 1)
        if ploop < 0:
            break
    if b.ops + n_inst * each > _MAX_OPS:
        given = [f"{where}.instance={n_inst}"] + [f"{pw}.loop={n}" for pw, _, n in phases if n > 1]
        raise ConfigError(
            f"invalid {' with '.join(given)}: {n_inst} thread(s) of {each:,} operations each "
            f"(the model repeats a phase's events for its loop) take the description past "
            f"{_MAX_OPS:,} operations; expected fewer instances or loops"
        )


def _emit(b: _Build, task: ScriptTask, events: list[_Event]) -> None:
    """Add ``events`` to ``task``'s operations, naming the objects they use."""
    script = b.script
    for at, kind, x in events:
        if kind == "run":
            task.add("run", round(x * b.run_scale), x)
        elif kind in ("runtime", "sleep"):
            task.add(kind, x)
        elif kind == "timer":
            ref, period, absolute = x
            scoped = f"{ref}@{task.name}" if ref.startswith("unique") else ref
            if script.timers.get(scoped, absolute) != absolute:
                raise ConfigError(
                    f"invalid {at}.mode={'absolute' if absolute else 'relative'}: timer {ref!r} "
                    "is used in the other mode elsewhere; expected one mode per timer"
                )
            task.add("timer", script.timer(scoped, absolute), period)
        elif kind in ("lock", "unlock"):
            task.add(kind, script.mutex(x))
        elif kind in ("signal", "broad"):
            task.add(kind, script.cond(x))
        elif kind in ("wait", "sync"):
            c, m = script.cond(x[0]), script.mutex(x[1])
            if kind == "sync":
                task.add("signal", c)
            task.add("wait", c, m)
        elif kind == "barrier":
            bid = script.barrier(x)
            b.barrier_refs[bid] += 1
            task.add("barrier", bid)
        else:
            task.add("yield")


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
    data = inputs.read_bounded(
        "path", path, inputs.MAX_RTAPP_LOG_BYTES, "an rt-app log file", "an rt-app log"
    )
    rows: list[list[int]] = []
    for line in data.decode("utf-8", errors="replace").splitlines():
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
