"""Running a benchmark's command: the ``Runner`` a measurement calls
(``subprocess.run`` by default, a fake in tests), starting it with a clear
error when the program is missing (``run_one``), and reading what it
returned (``completed_output``, ``perf_text``). Shared by every benchmark
``measure`` runs (perf's, re-aim-7, schbench).
"""

from __future__ import annotations

import numbers
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from .._check import short, type_name
from ..exceptions import ConfigTypeError, MeasureError

Runner = Callable[[list[str]], "subprocess.CompletedProcess[Any]"]


def perf_text(output: Any, what: str = "perf output", *, strict: bool = True) -> str:
    """``output`` (perf's text, or its bytes) as text. Bytes that are not
    UTF-8 are a ``MeasureError`` naming the first bad byte when ``strict``
    (perf stat and perf bench print ASCII: such bytes are not their
    output), replaced by U+FFFD otherwise (``perf sched latency`` prints
    other tasks' names, which may be any bytes). Any other type is a
    ``ConfigTypeError``."""
    if isinstance(output, bytes | bytearray | memoryview):
        raw = bytes(output)
        try:
            return raw.decode("utf-8", errors="strict" if strict else "replace")
        except UnicodeDecodeError as e:
            raise MeasureError(
                f"{what} is not UTF-8 text: byte {raw[e.start : e.start + 1]!r} at offset "
                f"{e.start} of {len(raw)}; expected perf's text output"
            ) from None
    if not isinstance(output, str):
        raise ConfigTypeError(
            f"invalid type for {what}: got {type_name(output)} {short(output)}, expected "
            "perf's output as str or bytes"
        )
    return output


def completed_output(p: Any, cmd: Sequence[str], *, strict: bool = True) -> tuple[int, str, str]:
    """A runner's result for ``cmd`` as (returncode, stdout, stderr): a
    ``subprocess.CompletedProcess`` (or anything with an int
    ``returncode`` and ``stdout``/``stderr`` of str, bytes or None — not
    captured). Anything else is a ``MeasureError`` naming the runner's
    result; bytes are read by ``perf_text`` (``strict``)."""
    shown = " ".join(cmd)[:200]
    code = getattr(p, "returncode", None)
    if isinstance(code, bool) or not isinstance(code, numbers.Integral):
        raise MeasureError(
            f"the runner returned {type_name(p)} {short(p)} for {shown!r}; expected a "
            "subprocess.CompletedProcess (an int returncode, stdout and stderr)"
        )
    streams = []
    for name in ("stdout", "stderr"):
        v = getattr(p, name, None)
        if v is None:
            streams.append("")
        elif isinstance(v, str | bytes | bytearray):
            streams.append(perf_text(v, f"the {name} of {shown!r}", strict=strict))
        else:
            raise MeasureError(
                f"the runner's {name} for {shown!r} is {type_name(v)} {short(v)}; expected "
                "str, bytes or None"
            )
    return int(code), streams[0], streams[1]


def run_command(cmd: list[str]) -> subprocess.CompletedProcess[bytes]:
    """Run ``cmd``, capturing its output as bytes (the default ``Runner``;
    ``completed_output`` reads them as UTF-8, whatever the locale)."""
    return subprocess.run(cmd, capture_output=True, check=False)


def run_one(
    runner: Runner,
    cmd: list[str],
    missing: str = "install perf (Debian: apt-get install linux-perf)",
) -> Any:
    """``runner(cmd)``; a command that cannot be started (the program
    missing — ``missing`` says what to do —, not executable, not a program)
    is a ``MeasureError`` naming it."""
    try:
        return runner(cmd)
    except FileNotFoundError as e:
        raise MeasureError(f"cannot run {cmd[0]!r}: {e}; {missing}") from None
    except (OSError, ValueError) as e:  # not executable, ENOEXEC, a NUL byte
        raise MeasureError(f"cannot run {cmd[0]!r}: {e}") from None
