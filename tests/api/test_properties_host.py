"""Property-based tests of the host side and of bisect's argument
checks, fed hostile values as ``test_properties.py`` feeds the constructors.

- ``calibrate``: frames drawn from a strategy of schemas (each column
  present or not, of its dtype or another: Categorical, List, Struct,
  Object, Null, ...) and values (nulls, 0, negatives, NaN, huge ints), with
  hostile arguments; every call returns a ``Calibration`` or raises
  ``ConfigError`` / ``ConfigTypeError``, and warns only with
  ``MachineMismatchWarning``.
- ``parse_perf`` / ``parse_sched_latency``: arbitrary bytes and text, and
  recorded perf output with its numbers replaced by hostile tokens; every
  call returns finite numbers >= 0 or raises ``MeasureError``.
- ``measure`` with a runner returning anything (a CompletedProcess of odd
  fields, bytes, None, another object): a frame or ``MeasureError`` /
  ``ConfigError`` / ``ConfigTypeError``.
- ``bisect``'s argument checks: a frame or a config error naming a
  parameter it was given.

The example counts and the outcome counts are ``test_properties.py``'s
(its ``ci`` and ``fuzz`` profiles; ``scripts/dev/fuzz.py`` runs both files).
"""

from __future__ import annotations

import inspect
import math
import re
import signal
import subprocess
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import schedlab as sl
import test_properties as props
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.exceptions import MachineMismatchWarning
from schedlab.host import calibration as cal
from schedlab.host import measurement as me
from schedlab.host.sched_latency import TASK_COLUMNS, parse_sched_latency

DATA = Path(__file__).parents[1] / "data"


def _examples(factor: float) -> int:
    return max(1, int(settings.default.max_examples * factor))


def mostly(valid: Any, hostile: Any, p: float = 0.85) -> st.SearchStrategy[Any]:
    """``valid`` (a strategy or a list to sample) with probability ``p``,
    else ``hostile``: each argument mostly valid, so that whole calls often
    are and the checks past the first are reached too."""

    def strat(v: Any) -> st.SearchStrategy[Any]:
        return v if isinstance(v, st.SearchStrategy) else st.sampled_from(v)

    return st.integers(0, 99).flatmap(lambda i: strat(valid) if i < 100 * p else strat(hostile))


@contextmanager
def _no_hang() -> Iterator[None]:
    def alarm(signum: int, frame: Any) -> None:
        raise props.Hang(f"no answer within {props.HANG_S} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, props.HANG_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def host_outcome(
    target: str,
    call: Callable[[], Any],
    errors: tuple[type[BaseException], ...],
    warns: tuple[type[Warning], ...] = (),
    names: list[str] | None = None,
) -> Any:
    """Run ``call``: its value, or None if it raised one of ``errors`` (the
    library's, for this target; naming one of ``names`` when given); a
    warning not of ``warns`` or any other exception fails the example.
    Counted in ``test_properties.OUTCOMES``."""
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught, _no_hang():
            warnings.simplefilter("always")
            value = call()
    except errors as e:
        props.OUTCOMES[(target, type(e).__name__)] += 1
        assert str(e).strip(), f"{type(e).__name__} with no message"
        if names is not None:
            assert _names(str(e), names), f"{type(e).__name__} names none of {names}: {e}"
        return None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a pyo3 PanicException is a BaseException
        props.OUTCOMES[(target, f"FAIL:{type(e).__name__}")] += 1
        raise AssertionError(f"{target} raised {type(e).__module__}.{type(e).__name__}: {e}") from e
    finally:
        props.SLOWEST[target] = max(props.SLOWEST.get(target, 0.0), time.perf_counter() - t0)
    for w in caught:
        if not issubclass(w.category, warns):
            props.OUTCOMES[(target, f"FAIL:{w.category.__name__}")] += 1
            raise AssertionError(f"{target} warned {w.category.__name__}: {w.message}")
        props.OUTCOMES[(target, f"warn:{w.category.__name__}")] += 1
    props.OUTCOMES[(target, "ok")] += 1
    return value


def _names(msg: str, params: list[str]) -> bool:
    """Whether ``msg`` names one of ``params`` as a word."""
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(p)}(?![A-Za-z0-9_])", msg) for p in params)


# --- calibrate: frames from a strategy of schemas and values ---------------------

_INT_DTYPES = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64]
#: dtypes no column of a measured frame has
_WRONG_DTYPES: list[Any] = [
    pl.List(pl.Float64),
    pl.Struct({"a": pl.Float64}),
    pl.Boolean,
    pl.String,
    pl.Categorical,
    pl.Null,
    pl.Date,
    pl.Duration("ns"),
    pl.Binary,
    pl.Float64,
    pl.Int64,
    pl.Object,
]
_VALID_DTYPES: dict[str, list[Any]] = {
    "text": [pl.String, pl.Categorical, "enum"],
    "int": _INT_DTYPES,
    "number": [pl.Float64, pl.Float32, pl.Int64, pl.UInt32, pl.Decimal(12, 4)],
    "bool": [pl.Boolean],
}

_HOSTILE_INT = st.sampled_from([0, -1, 10_001, 2**31, 2**63 - 1, None])
#: invalid loops only: a valid large count (10,001) is a long model run, not
#: a hostile one (19 s a run on skl-sp-2s at 3 groups)
_HOSTILE_LOOPS = st.sampled_from([0, -1, 10_000_001, 2**31, 2**63 - 1, None])
_HOSTILE_FLOAT = st.sampled_from([0.0, -1.0, math.nan, math.inf, -math.inf, 1e300, None])
#: per column: (valid values, hostile values)
_VALUES: dict[str, tuple[Any, Any]] = {
    "bench": (["hackbench"], ["pipe", "", None]),
    "ipc": (["pipe", "socket"], ["tcp", "", None]),
    "mode": (["process", "thread"], ["Thread", None]),
    "groups": (st.integers(1, 3), _HOSTILE_INT),
    "loops": (st.integers(1, 5), _HOSTILE_LOOPS),
    "pinned": ([False], [True, None]),
    "change": (["plain", None], ["policy=batch"]),
    "cpus": ([2], [1, 0, 4, 112, None, -3]),
    "cpu_model": (["AMD EPYC"], ["", None, "\u00e9"]),
    "rep": (st.integers(0, 2), _HOSTILE_INT),
}
for _m in cal.METRICS:
    _VALUES[_m] = (st.floats(1e-3, 1e4), _HOSTILE_FLOAT)


def _series(name: str, values: list[Any], dtype: Any) -> pl.Series:
    """``values`` as a column of ``dtype`` (a value the dtype cannot hold
    becomes null; a dtype the values cannot reach at all, a column of
    nulls of that dtype): the harness's frame, not the library's."""
    try:
        if dtype == pl.Object:
            return pl.Series(name, values, dtype=pl.Object)
        if dtype == "enum":
            cats = sorted({str(v) for v in values if v is not None}) or ["x"]
            return pl.Series(name, [None if v is None else str(v) for v in values]).cast(
                pl.Enum(cats)
            )
        base = pl.Series(name, values, strict=False)
        if isinstance(dtype, pl.List):
            return base.to_frame().select(pl.concat_list(pl.col(name)).alias(name))[name]
        if isinstance(dtype, pl.Struct):
            return base.to_frame().select(pl.struct(pl.col(name).alias("a")).alias(name))[name]
        if dtype == pl.Categorical:
            return base.cast(pl.String).cast(pl.Categorical)
        return base.cast(dtype, strict=False)
    except Exception:  # noqa: BLE001 - the harness's fallback
        return pl.Series(name, [None] * len(values), dtype=pl.Null)


@st.composite
def measured_frames(draw: st.DrawFn) -> pl.DataFrame:
    """A frame like ``measure("hackbench")``'s: each column of
    ``FRAME_COLUMNS`` (and ``rep``) present or not, of its dtype (mostly)
    or another, with mostly valid values."""
    n = draw(mostly(st.integers(1, 6), [0], 0.95))
    cols: list[pl.Series] = []
    specs = {**cal.FRAME_COLUMNS, "rep": cal.Column("int", required=False)}
    for name, spec in specs.items():
        if draw(st.integers(0, 99)) >= (98 if spec.required else 70):
            continue  # absent (the high draws: hypothesis starts from the low ones)
        dtype = draw(mostly(_VALID_DTYPES[spec.kind], _WRONG_DTYPES, 0.95))
        valid, hostile = _VALUES[name]
        values = draw(mostly(
            st.lists(mostly(valid, hostile, 1.0), min_size=n, max_size=n),
            st.lists(mostly(valid, hostile, 0.7), min_size=n, max_size=n),
            0.93,
        ))  # fmt: skip
        cols.append(_series(name, values, dtype))
    if draw(st.integers(0, 9)) == 0:  # a column calibrate does not read
        cols.append(pl.Series("extra", [object()] * n, dtype=pl.Object))
    return pl.DataFrame(cols)


@st.composite
def calibrate_args(draw: st.DrawFn) -> dict[str, Any]:
    args: dict[str, Any] = {
        "real": draw(measured_frames()),
        "machine": draw(st.sampled_from(["vm-2", "vm-2", "quad-4c", "skl-sp-2s"])),
        "kernel": draw(st.sampled_from(["v6.18", "v3.8"])),
        "seeds": 1,
        "threads": 1,
        "progress": False,
        "max_evaluations": 1,
    }
    optional: dict[str, st.SearchStrategy[Any]] = {
        "machine_mismatch": st.sampled_from(["warn", "error", "ignore", "loud", None, 1]),
        "fit": st.sampled_from([None, ["pipe"], "socket", [], ["x"], {"pipe": 1}, [3]]),
        "train": st.sampled_from(
            [
                None,
                [{"groups": 1}],
                [{"groups": np.int64(2)}],
                [{"ipc": 3}],
                [{"groups": np.array([1, 2])}],
                [],
                pl.col("groups") == 1,
                pl.col("nope") == 1,
                "groups",
            ]
        ),
        "metrics": st.sampled_from([("elapsed_s",), ["context_switches"], [], "elapsed_s", [1]]),
        "seed": st.sampled_from([0, -1, 2**64, np.int64(3), "1"]),
        "costs": st.sampled_from([None, sl.CostModel(), "cheap"]),
    }
    for k, strat in optional.items():
        if draw(st.integers(0, 9)) == 0:
            args[k] = draw(strat)
    return args


@settings(max_examples=_examples(0.3))
@given(args=calibrate_args())
def test_prop_calibrate(args):
    got = host_outcome(
        "calibrate",
        lambda: sl.calibrate(**args),
        (sl.ConfigError, sl.ConfigTypeError),
        (MachineMismatchWarning,),
    )
    if got is None:
        return
    assert isinstance(got, sl.Calibration)
    lo, hi = cal.BOUNDS
    assert all(lo <= f <= hi for f in got.factors.values()), got.factors
    assert got.report.height % len(cal.METRICS) == 0
    assert got.report.schema["ipc"] == pl.String and got.report.schema["groups"] == pl.Int64


# --- perf's output -----------------------------------------------------------------


def _recorded(name: str) -> str:
    base = DATA / "perf" / name
    return base.with_suffix(".stdout").read_text() + "\n" + base.with_suffix(".stderr").read_text()


RECORDED = [
    _recorded(n)
    for n in ("messaging-g1-pipe-process", "messaging-g2-socket-thread", "pipe-thread-pinned")
]
LATENCY = [(DATA / f).read_text() for f in ("perf-sched-latency-p.txt", "perf-sched-latency.txt")]
TOKENS = st.one_of(
    st.sampled_from(
        [
            "",
            "abc",
            "nan",
            "-nan",
            "inf",
            "-1",
            "-0",
            "0",
            "1e999",
            "1e-999",
            "+3",
            ".5",
            "5.",
            "1_000",
            "١٢",
            "²",
            "0x10",
            "<not counted>",
            "<not supported>",
            "9" * 400,
            "\x00",
            "1,2",
            "|",
            ":",
            "ms",
            "1.2.3",
        ]  # fmt: skip
    ),
    st.text(max_size=8),
    st.floats().map(repr),
    st.integers().map(str),
)


@st.composite
def perf_like(draw: st.DrawFn, texts: list[str]) -> Any:
    """Recorded perf output with some of its numbers (or other words)
    replaced by hostile tokens, lines dropped or doubled; or arbitrary text
    or bytes; sometimes as bytes, sometimes with binary junk appended."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.binary(max_size=300))
    if kind == 1:
        return draw(st.text(max_size=300))
    lines = draw(st.sampled_from(texts)).splitlines()
    for _ in range(draw(st.integers(0, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.integers(0, 5))
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        else:
            words = lines[i].replace(",", " , ").replace("|", " | ").split(" ")
            j = draw(st.integers(0, max(0, len(words) - 1)))
            if words:
                words[j] = draw(TOKENS)
            lines[i] = " ".join(words).replace(" , ", ",").replace(" | ", "|")
    text = "\n".join(lines)
    if draw(st.integers(0, 3)) == 0:
        raw = text.encode("utf-8", "surrogatepass")
        if draw(st.booleans()):
            raw += draw(st.binary(min_size=1, max_size=8))
        return raw
    return text


@settings(max_examples=_examples(1.5))
@given(text=perf_like(RECORDED))
def test_prop_parse_perf(text):
    got = host_outcome("parse_perf", lambda: me.parse_perf(text), (sl.MeasureError,))
    if got is None:
        return
    assert {"elapsed_s", "task_clock_s", "context_switches", "cpu_migrations"} <= set(got)
    assert all(isinstance(v, float) and math.isfinite(v) and v >= 0 for v in got.values()), got


@settings(max_examples=_examples(1.5))
@given(text=perf_like(LATENCY))
def test_prop_parse_sched_latency(text):
    got = host_outcome("parse_sched_latency", lambda: parse_sched_latency(text), (sl.MeasureError,))
    if got is None:
        return
    assert got.columns == list(TASK_COLUMNS) and got.height >= 1
    for c in ("runtime_ms", "avg_delay_ms", "max_delay_ms", "max_start_s", "max_end_s"):
        col = got[c]
        assert col.dtype == pl.Float64 and bool((col.is_finite() & (col >= 0)).all()), c
    assert bool((got["switches"] >= 0).all())


# --- measure with a runner returning anything --------------------------------------


@st.composite
def runner_results(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([None, "text", b"bytes", 0, object(), [], {"returncode": 0}]))
    code = draw(mostly([0], [1, -9, 255, "0", None, True, np.int64(0), 0.0], 0.8))
    out = draw(
        mostly(st.sampled_from(RECORDED[:2]), st.one_of(perf_like(RECORDED), st.just(None)), 0.5)
    )
    err = draw(mostly(["", None, b""], ["Permission denied", b"\xff", 12], 0.9))
    return subprocess.CompletedProcess(["perf"], code, out, err)


@st.composite
def measure_args(draw: st.DrawFn) -> dict[str, Any]:
    result = draw(runner_results())
    args: dict[str, Any] = {
        "bench": draw(mostly(["hackbench"], ["pipe", "hackbnch", 1], 0.9)),
        "groups": draw(
            mostly([1, [1, 2], np.int64(2), np.array([1, 3])], [[], [1, 1], 0, "1", True, [None]])
        ),
        "reps": draw(mostly([1, 2, np.int32(1)], [0, [1], 1.0, 1001])),
        "progress": False,
        "runner": lambda cmd: result,
    }
    if draw(st.integers(0, 3)) == 0:
        args["pinned"] = draw(mostly([False, np.bool_(False)], [True, [False, True], "no"]))
    if draw(st.integers(0, 3)) == 0:
        args["changes"] = draw(
            mostly([None, [{"nice": 5}], [{"policy": "batch"}]], [[{"nice": "x"}], [1], "x"])
        )
    return args


@settings(max_examples=_examples(1))
@given(args=measure_args())
def test_prop_measure_runner(args):
    got = host_outcome(
        "measure",
        lambda: sl.measure(**args),
        (sl.MeasureError, sl.ConfigError, sl.ConfigTypeError),
    )
    if got is None:
        return
    assert got.columns == list(me.COLUMNS) and got.height >= 1
    assert bool(got["elapsed_s"].is_finite().all()) and bool((got["cpu_migrations"] >= 0).all())


# --- bisect's argument checks ---------------------------------------------------------

_K0 = sl.Kernel.preset("v3.8")
_K1 = _K0.replace(hz=100)
_K2 = _K0.replace(hz=100, nr_migrate=8)
_SPIN = sl.workloads.spinners(nice=[0, 0, 5], run_us=100, sleep_us=100)
_BISECT_PARAMS = set(inspect.signature(sl.bisect).parameters)


@st.composite
def bisect_args(draw: st.DrawFn) -> dict[str, Any]:
    good = draw(mostly([_K0, "v3.8"], [_K1, "v9.99", 3, None]))
    bad = draw(mostly([_K1, _K2], [_K0, "v3.8", "v9.99", 3, None]))
    args: dict[str, Any] = {
        "machine": draw(mostly(["vm-2", sl.Machine(1, 2)], ["vm-9", 2, None])),
        "good": good,
        "bad": bad,
        "workload": draw(mostly([_SPIN], ["spinners", None, sl.workloads.spinners])),
        "metric": draw(mostly(["context_switches", "cpu_migrations"], ["nope", "", 3, None])),
        "duration_s": draw(mostly(st.floats(1e-4, 2e-3), [0, -1, math.nan, 1e300, "1", None], 0.9)),
        "replicates": 2,
        "progress": False,
        "threads": 1,
    }
    optional: dict[str, tuple[list[Any], list[Any]]] = {
        "replicates": ([2, 3, np.int64(2)], [1, 0, 10**6, "3", 2.0, None]),
        "seed": ([0, 7, np.uint64(5)], [-1, 2**64, 1.5]),
        "threads": ([1, 2], [0, -1, 2.0, "1", 10**9]),
        "threshold": ([0.5, 1.0, np.float64(0.9)], [0.0, 1.5, math.nan, -0.1, "0.8"]),
        "costs": ([None, sl.CostModel()], ["cheap", 1]),
        "progress": ([False], ["yes", 1, None]),
        "memory_limit": ([None, 10**12], [1, -1, "1G", 2**70, 1.5]),
        "bogus": ([], [1]),
    }
    for k, (valid, hostile) in optional.items():
        if (k in _BISECT_PARAMS or k == "bogus") and draw(st.integers(0, 9)) == 0:
            args[k] = draw(mostly(valid, hostile, 0.5) if valid else st.sampled_from(hostile))
    return args


@settings(max_examples=_examples(0.2))
@given(args=bisect_args())
def test_prop_bisect_args(args):
    # SimulationError is documented: no run of good or bad finished (an
    # endless workload without duration_s); it names duration_s then.
    got = host_outcome(
        "bisect",
        lambda: sl.bisect(**args),
        (sl.ConfigError, sl.ConfigTypeError, sl.SimulationError),
        names=list(args),
    )
    if got is None:
        return
    assert isinstance(got, pl.DataFrame) and got.height >= 1
    assert "field" in got.columns and "change_pct" in got.columns
