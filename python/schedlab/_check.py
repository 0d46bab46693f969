"""Argument checks, in one place: every refusal names the parameter, the
value and what is allowed.

- Small checkers of one value (``need_int``, ``need_number``, ``need_str``,
  ``need_choice``, ``need_output_path``, …) and how a value is shown in an
  error (``show``, ``type_name``, ``short``).
- ``checked_call``: calls with the wrong arguments (too many positional
  ones, an unknown keyword, a missing one) refused with a
  ``ConfigTypeError`` naming them and what the function takes, rather than
  Python's plain ``TypeError``; ``warn_user`` for warnings that point at the
  caller's line.

The checks of a whole machine, kernel or cost model (an instance or a
preset's name) are beside those types (``config.machine_arg``, …), and a
workload's beside the workloads (``workloads.workload_arg``).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
import stat
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np
import polars as pl

from .exceptions import ConfigError, ConfigTypeError

T = TypeVar("T")


def type_name(v: Any) -> str:
    return type(v).__name__


def error_text(e: BaseException) -> str:
    """An OS or polars error in a few words: the OS's text (``No space left
    on device``) or the message's first line."""
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def ascii_digits(text: str, most: int) -> bool:
    """``text`` is 1 to ``most`` ASCII digits: an unsigned integer ``int()``
    reads (``str.isdigit`` alone also takes "²" and other scripts' digits,
    and ``int()`` refuses strings past its digit limit)."""
    return 0 < len(text) <= most and text.isascii() and text.isdigit()


def show(v: Any) -> str:
    """``repr(v)``, shortened for an integer too long to read (10**400);
    one past Python's digit limit for ``str()`` (10**5000) too."""
    if not isinstance(v, numbers.Integral) or isinstance(v, bool | np.bool_):
        return repr(v)
    n = abs(int(v))
    digits = 1 if n == 0 else int(math.log10(n)) + 1
    digits += (n >= 10**digits) - (n < 10 ** (digits - 1))  # log10 rounds near powers of 10
    if digits + (v < 0) <= 40:
        return repr(v)
    keep = 12 - (v < 0)
    return f"{'-' if v < 0 else ''}{n // 10 ** (digits - keep)}...({digits} digits)"


def need_instance(param: str, v: Any, cls: type[T], expected: str) -> T:
    """``v`` itself if it is a ``cls``; otherwise a ``ConfigTypeError`` naming
    ``param``, the value and ``expected``."""
    if not isinstance(v, cls):
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(v)} {v!r}, expected {expected}"
        )
    return v


def need_frame(param: str, v: Any, columns: Sequence[str], expected: str) -> pl.DataFrame:
    """``v`` itself if it is a polars DataFrame holding ``columns``;
    otherwise a ``ConfigTypeError`` / ``ConfigError`` naming ``param``, what
    is wrong and ``expected`` (which frame the caller takes)."""
    frame = need_instance(param, v, pl.DataFrame, f"a polars DataFrame ({expected})")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ConfigError(f"invalid {param}: missing columns {missing}; expected {expected}")
    return frame


def is_list(v: Any) -> bool:
    """A list-like of values (a sequence or a 1-D array), not a string."""
    if isinstance(v, str | bytes):
        return False
    return isinstance(v, Sequence) or (isinstance(v, np.ndarray) and v.ndim == 1)


def need_int(param: str, v: Any, *, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Integral):
        raise ConfigTypeError(f"invalid type for {param}: got {type_name(v)} {v!r}, expected int")
    v = int(v)
    assert isinstance(v, int)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"from {lo} to {hi}" if hi is not None else f">= {lo}"
        raise ConfigError(f"invalid {param}={show(v)}: expected an integer {rng}")
    return v


def need_number(param: str, v: Any, *, positive: bool = True) -> float:
    if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real):
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(v)} {v!r}, expected a number"
        )
    what = "a positive finite number" if positive else "a finite number"
    try:
        x = float(v)
    except OverflowError:  # an int beyond float's range (10**400)
        raise ConfigError(f"invalid {param}={show(v)}: expected {what}") from None
    if not math.isfinite(x) or (positive and x <= 0):
        raise ConfigError(f"invalid {param}={show(v)}: expected {what}")
    return x


def need_scaled(
    param: str, v: Any, scale: float, lo: int, hi: int, unit: str, *, or_else: str = ""
) -> int:
    """``v`` (a positive number of ``unit``; zero too if ``lo`` is 0) times
    ``scale``, rounded, as an int from ``lo`` to ``hi``; any other number
    (out of range, not finite, too large for a float: 10**400) is a
    ``ConfigError`` naming ``param``, the value and the allowed range
    (followed by ``or_else``, e.g. " or None")."""
    rng = f"a number of {unit} from {lo / scale:g} to {hi / scale:g}{or_else}"
    try:
        x = need_number(param, v, positive=lo > 0)  # lo == 0: zero allowed
    except ConfigError:  # not finite, not positive, or too large for a float
        raise ConfigError(f"invalid {param}={show(v)}: expected {rng}") from None
    if x < 0 or x > hi / scale * (1 + 1e-12):  # checked before scaling: 1e300 * 1e9 is inf
        raise ConfigError(f"invalid {param}={show(v)}: expected {rng}")
    n = round(x * scale)
    if n < lo or n > hi:
        raise ConfigError(f"invalid {param}={show(v)}: expected {rng}")
    return n


def need_bool(param: str, v: Any) -> bool:
    if not isinstance(v, bool | np.bool_):
        raise ConfigTypeError(f"invalid type for {param}: got {type_name(v)} {v!r}, expected bool")
    return bool(v)


def need_str(param: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ConfigTypeError(f"invalid type for {param}: got {type_name(v)} {v!r}, expected str")
    try:
        v.encode()
    except UnicodeEncodeError:  # a lone surrogate ("\ud800") cannot reach the core
        raise ConfigError(
            f"invalid {param}={v!r}: expected text that encodes as UTF-8 (no lone surrogates)"
        ) from None
    return v


def need_choice(param: str, v: Any, choices: list[str]) -> str:
    need_str(param, v)
    if v not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ConfigError(f"invalid {param}={v!r}: expected one of {allowed}")
    return str(v)


#: The longest simulated time a run may cover (2**62 ns, about 146 years).
MAX_NS = 2**62


def seconds_to_ns(param: str, v: Any) -> int:
    return need_scaled(param, v, 1e9, 1, MAX_NS, "seconds")


def interval_to_ns(param: str, v: Any) -> int:
    """A sampling interval: at least 10 µs, so a run's vmstat stays bounded."""
    return need_scaled(param, v, 1e9, 10_000, MAX_NS, "seconds")


def need_output_path(param: str, v: Any, *, force: bool) -> Path:
    """An output file path, checked before any work: a ``str`` or
    ``os.PathLike`` (not an int, which ``open`` would take as a file
    descriptor) naming a file the OS accepts (no NUL byte, not too long),
    not a directory nor another non-regular file (``/dev/full``, a FIFO),
    in an existing directory where a file can be created (tried: a probe
    file is created and removed), and not an existing file unless
    ``force``. Refusals name ``param`` and the value."""
    if not isinstance(v, str | os.PathLike) or not isinstance(os.fspath(v), str):
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(v)} {v!r}, expected a str or "
            "os.PathLike file path"
        )
    path = os.fspath(v)
    shown = path if len(path) <= 120 else f"{path[:60]}...{path[-40:]}"
    try:
        encodable = bool(path) and "\0" not in path and bool(os.fsencode(path))
    except UnicodeEncodeError:  # a lone surrogate: no file system name
        encodable = False
    if not encodable:
        raise ConfigError(
            f"invalid {param}={shown!r}: expected a file name (not empty, no NUL byte, "
            "encodable for the file system)"
        )
    if path.endswith(("/", os.sep, os.altsep or os.sep)):
        raise ConfigError(
            f"invalid {param}={shown!r}: ends with a path separator, which names a "
            "directory; expected a file name"
        )
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:  # ENAMETOOLONG, ENOTDIR, ELOOP, EACCES
        raise ConfigError(f"invalid {param}={shown!r}: {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"invalid {param}={shown!r}: a directory; expected a file to write")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise ConfigError(
            f"invalid {param}={shown!r}: not a regular file (a device, FIFO or socket); "
            "expected a file to write"
        )
    target = Path(os.path.realpath(p)) if p.is_symlink() else p
    parent = target.parent
    if not parent.is_dir():
        raise ConfigError(f"invalid {param}={shown!r}: no such directory {str(parent)!r}")
    if st is not None and not force:
        raise ConfigError(
            f"invalid {param}={shown!r}: the file exists; pass --force to overwrite it"
        )
    _check_name_length(param, shown, target)
    _probe_directory(param, shown, target)
    return p


#: The most bytes the writers add to an output's name for the files they
#: create beside it: ``.<name>.<8 hex>.tmp`` (atomic writes),
#: ``<name>.partial.sha256.tmp`` (a kept sweep's digest), the probe.
SIBLING_NAME_BYTES = 32


def _check_name_length(param: str, shown: str, target: Path) -> None:
    """Refuse a name the file system takes but the files written beside it
    (temporary, ``.partial``, ``.sha256``) would not: its bytes plus
    ``SIBLING_NAME_BYTES`` must fit the directory's ``NAME_MAX``."""
    try:
        name_max = os.pathconf(target.parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        name_max = 255
    n = len(os.fsencode(target.name))
    if n + SIBLING_NAME_BYTES > name_max:
        raise ConfigError(
            f"invalid {param}={shown!r}: a file name of {n} bytes; expected at most "
            f"{name_max - SIBLING_NAME_BYTES} (the directory takes {name_max}, and schedlab "
            f"writes files beside it with names up to {SIBLING_NAME_BYTES} bytes longer)"
        )


def _probe_directory(param: str, shown: str, target: Path) -> None:
    """Create and remove a file beside ``target``, as the atomic writers do
    (a temporary file, then a rename): the one check that a read-only
    mount, a full inode table or ``/proc`` cannot pass."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for n in range(100):
        probe = target.with_name(f".{target.name}.{os.getpid()}.{n}.probe")
        try:
            fd = os.open(probe, flags, 0o600)
        except FileExistsError:
            continue
        except OSError as e:
            raise ConfigError(
                f"invalid {param}={shown!r}: directory {str(target.parent)!r} is not "
                f"writable: no file can be created there ({e.strerror})"
            ) from None
        os.close(fd)
        os.unlink(probe)
        return


# --- calls checked whole ----------------------------------------------------

P = ParamSpec("P")
R = TypeVar("R")

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def checked_call(name: str, *, fields: str = "") -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: ``f`` under ``name`` (as messages call it, e.g.
    ``"workloads.rt_kthreads"``), refusing arguments that do not bind to its
    signature with a ``ConfigTypeError``. ``fields``: what its ``**kwargs``
    take, for the message (e.g. ``"Kernel fields (Kernel.fields() lists
    them)"``). A correct call costs one ``try``: the signature is consulted
    only once ``f`` raised a ``TypeError``, to tell a call that does not
    bind (refused here) from an error inside ``f`` (raised as it is)."""

    def decorate(f: Callable[P, R]) -> Callable[P, R]:
        sig = inspect.signature(f)

        @functools.wraps(f)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return f(*args, **kwargs)
            except ConfigTypeError:
                raise
            except TypeError:
                try:
                    sig.bind(*args, **kwargs)
                except TypeError as e:
                    raise call_error(name, sig, args, kwargs, e, fields) from None
                raise

        return checked

    return decorate


def short(v: Any) -> str:
    """``show(v)``, cut to about 40 characters (a long string or a frame's
    repr says how long it was)."""
    shape = getattr(v, "shape", None)
    if hasattr(v, "columns") and isinstance(shape, tuple) and len(shape) == 2:
        return f"<{type_name(v)} {shape[0]}×{shape[1]}>"  # a frame's repr is a table
    r = show(v)
    if "\n" in r:
        return f"<{type_name(v)}>"
    if len(r) <= 40:
        return r
    size = f"({len(v)} characters)" if isinstance(v, str) else ""
    return f"{r[:37]}...{size}"


def call_error(
    name: str,
    sig: inspect.Signature,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    e: TypeError,
    fields: str = "",
) -> ConfigTypeError:
    """The ``ConfigTypeError`` for a call of ``name`` with ``args`` and
    ``kwargs`` that does not bind to ``sig`` (``e``: why not)."""
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls"):
        params, args = params[1:], args[1:]
    pos = [p.name for p in params if p.kind in _POSITIONAL]
    kwonly = [p.name for p in params if p.kind == inspect.Parameter.KEYWORD_ONLY]
    var_pos = any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params)
    named = [p.name for p in params if p.kind in (*_POSITIONAL, inspect.Parameter.KEYWORD_ONLY)]
    by_kw = ", ".join(kwonly) if kwonly else ""
    if var_kw:
        by_kw = f"{by_kw}, " if by_kw else ""
        by_kw += fields or "any keyword"
    takes = f"it takes {', '.join(named)}" if named else "it takes no named argument"
    if var_kw:
        takes += f" and {fields or 'keywords'}"
    call = f"{name}({', '.join(short(a) for a in args)})" if args else name
    unknown = [k for k in kwargs if k not in sig.parameters] if not var_kw else []
    if unknown:
        return ConfigTypeError(
            f"invalid argument {unknown[0]!r} for {name}: expected one of {', '.join(named)}"
        )
    if not var_pos and len(args) > len(pos):
        extra = args[len(pos) :]
        n = len(pos)
        said = f"{n} positional argument{'s' if n != 1 else ''}" if n else "no positional argument"
        if pos:
            said += f" ({', '.join(pos)})"
        msg = f"invalid arguments for {call}: it takes {said}, got {len(args)}"
        if by_kw:
            what = ", ".join(short(a) for a in extra)
            msg += f"; pass {what} by keyword: {by_kw}"
        if any(isinstance(a, Mapping) for a in extra):
            msg += " (a dict d of them: **d)"
        return ConfigTypeError(msg)
    return ConfigTypeError(f"invalid arguments for {call}: {e}; {takes}")


_PACKAGE = str(Path(__file__).resolve().parent)


def warn_user(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` attributed to the first caller
    outside the schedlab package (the user's line, however deep the call)."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(_PACKAGE):
        level += 1
        frame = frame.f_back  # type: ignore[assignment]
    warnings.warn(message, category, stacklevel=level)
