"""The changes ``measure`` makes to a benchmark run on this host — scheduling
policy and RT priority (``chrt``), nice (``nice``), CPU affinity
(``taskset``) and the RT throttling sysctls — and the interrupt counts it
records beside perf's (``/proc/interrupts``).

Everything here but ``sysctls`` (which writes ``/proc/sys``) is a pure
function of its arguments, tested without perf or root.
"""

from __future__ import annotations

import contextlib
import errno
import numbers
import signal
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .._check import ascii_digits, is_list, show, type_name
from ..exceptions import ConfigError, ConfigTypeError, MeasureError
from . import cgroup as _cgroup

#: The policies ``chrt`` sets (``chrt --<policy>``).
POLICIES = ("normal", "batch", "idle", "fifo", "rr")
RT_POLICIES = ("fifo", "rr")
#: The keys of a change, in the frame's column order.
KEYS = ("policy", "rt_priority", "nice", "affinity", "rt_runtime_us", "rt_period_us", "cgroup")
#: The sysctls a change may set (/proc/sys/kernel/...), by key.
SYSCTLS = {"rt_runtime_us": "sched_rt_runtime_us", "rt_period_us": "sched_rt_period_us"}
#: The /proc/interrupts rows recorded, and the frame's column for each.
INTERRUPTS = {"RES": "res_ipis", "CAL": "cal_ipis", "IWI": "iwi_ipis"}
#: The label of the run without a change.
PLAIN = "plain"


def normalise(change: Any) -> dict[str, Any]:
    """One change as ``measure`` takes it (a dict of ``KEYS``, plus an
    optional ``name``), checked and completed: every key present (``None``
    when not set), ``cpus`` as a sorted list, ``name`` derived when absent
    (e.g. ``"policy=fifo rt_priority=1"``; ``"plain"`` for no change)."""
    if not isinstance(change, Mapping):
        raise ConfigTypeError(
            f"invalid type for changes entry: got {type_name(change)} {show(change)}, expected "
            f"a dict with keys from name, {', '.join(KEYS)}"
        )
    bad = [k for k in change if k not in (*KEYS, "name")]
    if bad:
        raise ConfigError(
            f"invalid changes entry {show(dict(change))}: unknown keys {bad}; expected keys "
            f"from name, {', '.join(KEYS)}"
        )
    out: dict[str, Any] = {k: change.get(k) for k in KEYS}
    pol = out["policy"]
    if pol is not None and (not isinstance(pol, str) or pol not in POLICIES):
        raise ConfigError(f"invalid policy={show(pol)}: expected one of {', '.join(POLICIES)}")
    prio = out["rt_priority"]
    if pol in RT_POLICIES:
        out["rt_priority"] = _int("rt_priority", 1 if prio is None else prio, 1, 99)
    elif prio is not None:
        raise ConfigError(
            f"invalid rt_priority={show(prio)}: only with policy 'fifo' or 'rr' (chrt gives "
            "the other policies priority 0)"
        )
    if out["nice"] is not None:
        out["nice"] = _int("nice", out["nice"], -20, 19)
    cpus = out["affinity"]
    if cpus is not None:
        vals = list(cpus) if is_list(cpus) else [cpus]
        if not vals:
            raise ConfigError("invalid affinity=[]: expected a CPU number or a non-empty list")
        out["affinity"] = sorted({_int("affinity", c, 0, 4095) for c in vals})
    if out["rt_runtime_us"] is not None:
        out["rt_runtime_us"] = _int("rt_runtime_us", out["rt_runtime_us"], -1, 2**31 - 1)
    if out["rt_period_us"] is not None:
        out["rt_period_us"] = _int("rt_period_us", out["rt_period_us"], 1, 2**31 - 1)
    rt, period = out["rt_runtime_us"], out["rt_period_us"]
    if rt is not None and period is not None and rt > period:
        raise ConfigError(
            f"invalid rt_runtime_us={rt}: expected -1 or at most rt_period_us={period} (the "
            "kernel refuses a runtime longer than its period)"
        )
    if out["cgroup"] is not None:
        out["cgroup"] = _cgroup.settings(out["cgroup"])
    name = change.get("name")
    if name is None:
        name = label(out)
    elif not isinstance(name, str) or not name:
        raise ConfigTypeError(
            f"invalid type for changes entry name: got {type_name(name)} {show(name)}, "
            "expected a non-empty str"
        )
    out["name"] = name
    return out


def _int(name: str, v: Any, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ConfigTypeError(
            f"invalid type for {name}: got {type_name(v)} {show(v)}, expected int"
        )
    iv = int(v)
    if not lo <= iv <= hi:
        raise ConfigError(f"invalid {name}={iv}: expected an integer from {lo} to {hi}")
    return iv


def label(change: Mapping[str, Any]) -> str:
    """A change's default name: its set keys as ``key=value``, or ``plain``."""
    parts = []
    for k in KEYS:
        v = change.get(k)
        if v is None:
            continue
        if k == "affinity":
            v = ",".join(map(str, v))
        elif k == "cgroup":
            v = "(" + _cgroup.label(change[k]) + ")"
        parts.append(f"{k}={v}")
    return " ".join(parts) or PLAIN


def is_plain(change: Mapping[str, Any]) -> bool:
    """True when the change sets nothing."""
    return all(change.get(k) is None for k in KEYS)


def prefix(change: Mapping[str, Any]) -> list[str]:
    """The command words that run a benchmark under ``change`` (placed after
    ``perf stat ... --``): ``taskset -c``, ``nice -n``, ``chrt``."""
    cmd: list[str] = []
    if change.get("affinity") is not None:
        cmd += ["taskset", "-c", ",".join(map(str, change["affinity"]))]
    if change.get("nice") is not None:
        cmd += ["nice", "-n", str(change["nice"])]
    pol = change.get("policy")
    if pol is not None:
        prio = change.get("rt_priority") if pol in RT_POLICIES else 0
        cmd += ["chrt", f"--{'other' if pol == 'normal' else pol}", str(prio)]
    return cmd


def refusal(change: Mapping[str, Any], text: str) -> str | None:
    """What to tell the user when a run under ``change`` failed with
    ``text`` because the change is not permitted here; ``None`` otherwise."""
    low = text.lower()
    pol = change.get("policy")
    if pol is not None and "chrt" in low and ("not permitted" in low or "permission" in low):
        need = (
            "an RT policy needs root, CAP_SYS_NICE or an RLIMIT_RTPRIO (ulimit -r) of at "
            f"least {change.get('rt_priority')}"
            if pol in RT_POLICIES
            else "leaving an RT or idle policy, or this policy, needs CAP_SYS_NICE here"
        )
        return f"chrt may not set policy {pol!r} here ({text.strip()[-200:]}): {need}"
    if change.get("nice") is not None and "cannot set niceness" in low:
        # GNU nice runs the command anyway (exit 0) at the old nice level.
        return (
            f"nice could not set nice {change.get('nice')} (a negative nice needs root or "
            "CAP_SYS_NICE); the run was not made under the change"
        )
    if "taskset" in low and ("invalid" in low or "failed" in low):
        return f"taskset could not set affinity {change.get('affinity')}: {text.strip()[-200:]}"
    return None


#: The descriptions of those rows, for architectures that number their IPI
#: rows (arm64's ``IPI0:`` ... ``IPI6:``).
_DESCRIPTIONS = {
    "rescheduling interrupts": "RES",
    "function call interrupts": "CAL",
    "irq work interrupts": "IWI",
}


def parse_interrupts(text: str) -> dict[str, int] | None:
    """The totals over all CPUs of the ``INTERRUPTS`` rows of a
    ``/proc/interrupts`` text, and the header's CPU names under ``"cpus"``
    as their count; ``None`` when the text is not such a table (a row
    missing: not counted here, absent). A row is found by its name (x86's
    RES, CAL, IWI) or by its description (arm64's IPIn rows)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not lines[0].split() or not all(c.startswith("CPU") for c in lines[0].split()):
        return None
    ncpus = len(lines[0].split())
    out: dict[str, int] = {"cpus": ncpus}
    for line in lines[1:]:
        head, _, rest = line.partition(":")
        key = head.strip()
        if key not in INTERRUPTS:
            desc = " ".join(rest.split()[ncpus:]).lower()
            key = _DESCRIPTIONS.get(desc, "")
            if not key:
                continue
        nums = rest.split()[:ncpus]
        # the ASCII digits of a 64-bit count
        if len(nums) < ncpus or not all(ascii_digits(x, 20) for x in nums):
            continue
        out[key] = sum(int(x) for x in nums)
    return out


def interrupt_deltas(before: Any, after: Any) -> dict[str, float]:
    """The frame's interrupt columns: after − before per row; NaN when a
    snapshot is missing or is not a /proc/interrupts text, when the CPU
    count changed between them (hotplug) or a row is absent."""
    nan = float("nan")
    none = dict.fromkeys(INTERRUPTS.values(), nan)
    if not isinstance(before, str) or not isinstance(after, str):
        return none
    b, a = parse_interrupts(before), parse_interrupts(after)
    if b is None or a is None or b["cpus"] != a["cpus"]:
        return none
    return {
        col: float(a[k] - b[k]) if k in a and k in b and a[k] >= b[k] else nan
        for k, col in INTERRUPTS.items()
    }


def read_interrupts() -> str | None:
    """This host's ``/proc/interrupts`` (``None`` if it cannot be read)."""
    try:
        return Path("/proc/interrupts").read_text()
    except OSError:
        return None


@contextlib.contextmanager
def sysctls(values: Mapping[str, int], root: Path = Path("/proc/sys/kernel")) -> Iterator[None]:
    """Set the sysctls ``values`` (keys of ``SYSCTLS``, in the order given:
    ``sysctl_values`` orders them) for the duration of the block and restore
    what was there on the way out, in the reverse order — on an exception,
    on Ctrl-C, and on SIGTERM and SIGHUP (turned into ``SystemExit``
    meanwhile; SIGKILL cannot be caught: ``sysctl kernel.sched_rt_runtime_us``
    then shows what is left). A sysctl this process may not write, or a
    value the kernel refuses, raises ``MeasureError``."""
    saved: list[tuple[Path, str]] = []
    old_handlers: dict[signal.Signals, Any] = {}

    def on_signal(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    try:
        if values:
            for sig in (signal.SIGTERM, signal.SIGHUP):
                with contextlib.suppress(ValueError):  # not the main thread
                    old_handlers[sig] = signal.signal(sig, on_signal)
        for key, v in values.items():
            path = root / SYSCTLS[key]
            try:
                old = path.read_text().strip()
            except OSError as e:
                raise MeasureError(
                    f"cannot read kernel.{SYSCTLS[key]} ({path}): {e.strerror or e}"
                ) from None
            saved.append((path, old))  # before the write: a Ctrl-C in it still restores
            try:
                path.write_text(f"{v}\n")
            except OSError as e:
                why = (
                    "the kernel refused the value (sched_rt_runtime_us may not exceed "
                    "sched_rt_period_us, nor leave RT groups without runtime)"
                    if e.errno == errno.EINVAL
                    else "changing it needs root"
                )
                raise MeasureError(
                    f"cannot set kernel.{SYSCTLS[key]}={v} ({path}): {e.strerror or e}; {why}"
                ) from None
        yield
    finally:
        errors = []
        for path, old in reversed(saved):
            try:
                if path.read_text().strip() != old:
                    path.write_text(f"{old}\n")
            except OSError as e:
                errors.append(f"{path}: {e}")
        for sig, h in old_handlers.items():
            signal.signal(sig, h)
        if errors:
            raise MeasureError(f"could not restore {'; '.join(errors)}")


def sysctl_values(
    change: Mapping[str, Any], root: Path = Path("/proc/sys/kernel")
) -> dict[str, int]:
    """The sysctls ``change`` sets, in an order the kernel accepts at every
    step (it refuses a runtime longer than the period): a shorter period
    after the runtime, a longer one before it."""
    vals = {k: change[k] for k in ("rt_period_us", "rt_runtime_us") if change.get(k) is not None}
    if len(vals) == 2:
        try:
            cur_period = int((root / SYSCTLS["rt_period_us"]).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            cur_period = None
        if cur_period is not None and vals["rt_period_us"] < cur_period:
            return {"rt_runtime_us": vals["rt_runtime_us"], "rt_period_us": vals["rt_period_us"]}
    return vals


Reader = Callable[[], "str | None"]


def need_changes(changes: Any) -> list[dict[str, Any]]:
    """``measure``'s ``changes``: the plain run first, then each change
    (names distinct)."""
    if changes is None:
        return [normalise({})]
    if not is_list(changes):
        raise ConfigTypeError(
            f"invalid type for changes: got {type_name(changes)} {show(changes)}, expected a "
            "list of dicts (or None)"
        )
    out = [normalise({})]
    for c in changes:
        n = normalise(c)
        if is_plain(n) and n["name"] == PLAIN:
            continue  # the plain run is always there
        out.append(n)
    names = [c["name"] for c in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"invalid changes: the names {dup} are used twice")
    return out
