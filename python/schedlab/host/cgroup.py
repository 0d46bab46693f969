"""Running a benchmark inside a task group on this host: a cgroup with the
``cpu`` controller — cgroup v1 (``/sys/fs/cgroup/cpu``: ``cpu.shares``,
``cpu.cfs_quota_us``, ``cpu.cfs_period_us``, ``cpu.cfs_burst_us``,
``cpu.idle``) or v2 (``cpu.weight``, ``cpu.max``, ``cpu.max.burst``,
``cpu.idle``), whichever the host has — and its ``cpu.stat`` counters.

``settings`` checks a group's settings as ``schedlab.Group`` takes them;
``prefix`` is the command words that move the benchmark into the group
before it starts; ``parse_cpu_stat`` and ``stat_deltas`` are pure functions
of ``cpu.stat`` texts, tested without root. Only ``make_group`` writes to
``/sys/fs/cgroup``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._check import ascii_digits, show, type_name
from ..exceptions import ConfigError, ConfigTypeError, MeasureError
from ..groups import Group

#: The keys of a change's ``group`` dict (``schedlab.Group``'s fields).
GROUP_KEYS = ("shares", "weight", "quota_us", "period_us", "burst_us", "idle")
#: ``cpu.stat``'s counters and the frame's column for each (times in s).
STAT_COLUMNS = {
    "nr_periods": "cg_nr_periods",
    "nr_throttled": "cg_nr_throttled",
    "throttled_time": "cg_throttled_s",
    "nr_bursts": "cg_nr_bursts",
    "burst_time": "cg_burst_s",
}
#: cgroup v2 names its times in us (``throttled_usec``), v1 in ns.
_V2_NAMES = {"throttled_usec": "throttled_time", "burst_usec": "burst_time"}
V1_ROOT = Path("/sys/fs/cgroup/cpu")
V2_ROOT = Path("/sys/fs/cgroup")


def settings(group: Any) -> dict[str, Any]:
    """A change's ``group`` (a dict of ``GROUP_KEYS`` or a ``Group``),
    checked as ``schedlab.Group`` checks it, as a dict of every key."""
    if isinstance(group, Group):
        g = group
    else:
        if not isinstance(group, Mapping):
            raise ConfigTypeError(
                f"invalid type for group: got {type_name(group)} {show(group)}, expected a dict "
                f"with keys from {', '.join(GROUP_KEYS)} or a schedlab.Group"
            )
        bad = [k for k in group if k not in GROUP_KEYS]
        if bad:
            raise ConfigError(
                f"invalid group {show(dict(group))}: unknown keys {bad}; expected keys from "
                f"{', '.join(GROUP_KEYS)}"
            )
        g = Group("measured", **dict(group))
    return {k: getattr(g, k) for k in GROUP_KEYS}


def label(s: Mapping[str, Any]) -> str:
    """A group's settings as ``key=value`` words (the set ones)."""
    default = {"period_us": 100_000, "burst_us": 0, "idle": False}
    return " ".join(
        f"{k}={s[k]}" for k in GROUP_KEYS if s.get(k) is not None and s.get(k) != default.get(k)
    )


def parse_label(text: str) -> dict[str, Any]:
    """``label``'s words back as settings (the ``cgroup`` column of a
    ``measure`` frame)."""
    out: dict[str, Any] = {}
    for word in text.split():
        key, eq, val = word.partition("=")
        if not eq or key not in GROUP_KEYS:
            raise ConfigError(
                f"invalid cgroup column value {text!r}: expected key=value words with keys from "
                f"{', '.join(GROUP_KEYS)}"
            )
        if key == "idle":
            out[key] = val == "True"
        else:
            try:
                f = float(val)
            except ValueError:
                raise ConfigError(f"invalid cgroup column value {text!r}: {key}={val!r}") from None
            out[key] = int(f) if f.is_integer() else f
    return settings(out)


def writes(s: Mapping[str, Any], version: int) -> list[tuple[str, str]]:
    """The files written to make a group of settings ``s`` (in order: the
    period before the quota, so a shorter period never meets a longer
    quota), for cgroup ``version`` 1 or 2."""
    g = Group("measured", **{k: s[k] for k in GROUP_KEYS})
    d = g.to_core()
    quota = None if d["quota_ns"] is None else d["quota_ns"] // 1000
    period = d["period_ns"] // 1000
    burst = d["burst_ns"] // 1000
    out: list[tuple[str, str]] = []
    if version == 1:
        out.append(("cpu.shares", str(d["shares"])))
        out.append(("cpu.cfs_period_us", str(period)))
        out.append(("cpu.cfs_quota_us", str(-1 if quota is None else quota)))
        if burst:
            out.append(("cpu.cfs_burst_us", str(burst)))
    else:
        # sched_weight_to_cgroup(): weight = DIV_ROUND_CLOSEST(shares * 100, 1024).
        weight = g.weight if g.weight is not None else max(1, (d["shares"] * 100 + 512) // 1024)
        out.append(("cpu.weight", str(weight)))
        out.append(("cpu.max", f"{'max' if quota is None else quota} {period}"))
        if burst:
            out.append(("cpu.max.burst", str(burst)))
    if d["idle"]:
        out.append(("cpu.idle", "1"))
    return out


def parse_cpu_stat(text: str) -> dict[str, int]:
    """A ``cpu.stat`` text's counters (v1 names; v2's ``*_usec`` times as
    ns). Raises ``MeasureError`` for a text that is not one."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2 or not ascii_digits(parts[1], 20):
            continue
        key, v = parts[0], int(parts[1])
        if key in _V2_NAMES:
            out[_V2_NAMES[key]] = v * 1000
        elif key in STAT_COLUMNS:
            out[key] = v
    if "nr_periods" not in out:
        raise MeasureError(f"not a cpu.stat text (no nr_periods): {text[:200]!r}")
    return out


def stat_deltas(before: str | None, after: str | None) -> dict[str, float]:
    """The frame's ``cg_*`` columns: after − before of each counter, times
    in seconds; NaN without a group (or a counter the kernel lacks)."""
    nan = float("nan")
    if before is None or after is None:
        return dict.fromkeys(STAT_COLUMNS.values(), nan)
    b, a = parse_cpu_stat(before), parse_cpu_stat(after)
    out: dict[str, float] = {}
    for key, col in STAT_COLUMNS.items():
        if key in a and key in b:
            d = float(a[key] - b[key])
            out[col] = d / 1e9 if key.endswith("_time") else d
        else:
            out[col] = nan
    return out


def host_version(root: Path | None = None) -> tuple[int, Path] | None:
    """``(1, root)`` when the v1 ``cpu`` controller is mounted (at ``root``,
    default ``/sys/fs/cgroup/cpu``), ``(2, root)`` for a v2 hierarchy with
    ``cpu`` enabled (default ``/sys/fs/cgroup``), ``None`` without either."""
    for version, r in ((1, root or V1_ROOT), (2, root or V2_ROOT)):
        if version == 1 and (r / "cpu.shares").exists():
            return 1, r
        ctl = r / "cgroup.controllers"
        if version == 2 and ctl.exists() and "cpu" in ctl.read_text().split():
            return 2, r
    return None


def prefix(path: Path) -> list[str]:
    """The command words that move the benchmark into the group at
    ``path`` before it starts (its children inherit the group)."""
    return ["sh", "-c", f'echo $$ > {path}/cgroup.procs && exec "$@"', "sh"]


@contextlib.contextmanager
def make_group(
    s: Mapping[str, Any], name: str | None = None, root: Path | None = None
) -> Iterator[Path]:
    """A fresh cgroup with settings ``s`` for the block, removed after it
    (its tasks have exited by then), under ``root`` (default: the host's
    ``cpu`` hierarchy; tests give a directory). Raises ``MeasureError`` when
    the host has no ``cpu`` controller or the group cannot be made (it
    needs root)."""
    found = host_version(root)
    if found is None:
        raise MeasureError(
            "this host has no cgroup cpu controller (neither /sys/fs/cgroup/cpu nor a v2 "
            "hierarchy with cpu in cgroup.controllers)"
        )
    version, root = found
    path = root / (name or f"schedlab-{os.getpid()}")
    try:
        path.mkdir()
    except OSError as e:
        raise MeasureError(
            f"cannot make cgroup {path}: {e.strerror or e} (making a group needs root)"
        ) from None
    try:
        for f, v in writes(s, version):
            try:
                (path / f).write_text(v)
            except OSError as e:
                raise MeasureError(f"cannot set {path / f} to {v}: {e.strerror or e}") from None
        yield path
    finally:
        with contextlib.suppress(OSError):
            path.rmdir()


def read_stat(path: Path | None) -> str | None:
    """The group's ``cpu.stat`` text (``None`` without a group, or when it
    cannot be read)."""
    if path is None:
        return None
    try:
        return (path / "cpu.stat").read_text()
    except OSError:
        return None
