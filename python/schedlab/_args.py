"""Calls with the wrong arguments (too many positional ones, an unknown
keyword, a missing one) refused with a ``ConfigTypeError`` naming them and
what the function takes, rather than Python's plain ``TypeError``."""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from ._check import show, type_name
from .exceptions import ConfigTypeError

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
