"""Write a run's schedule as a Perfetto trace (``Result.to_perfetto``).

Laid out as Perfetto's recorder writes a Linux system trace, so that
ui.perfetto.dev and the trace processor build their scheduling views (CPU
tracks, thread states, the ``sched`` / ``sched_slice`` and ``thread_state``
tables, wake-up latencies) from it. The file's head (the process tree and
the track descriptors) is built here with the ``TracePacket`` protos of
Perfetto's own Python package (``pip install 'schedlab[perfetto]'``); its
body, every packet that grows with the run (the ftrace bundles, the
counters, the balancer slices), is encoded by the core
(``_core.perfetto_body``, src/export/perfetto.rs) into the bytes those
protos would serialize, from the frames' columns: the trace handed over
``TRACE_CHUNK_ROWS`` rows at a time, the output written in chunks of
``WRITE_CHUNK_BYTES`` (``write_chunk``), so the export holds about a chunk
of each beside the frames. On 4.86 M trace rows it takes 2.5-3.4 s and
adds about 30 MB of RSS, where a protobuf object per event took 59-78 s
and 300 MB (measured 2026-12-02, ``scripts/dev/bench_perfetto.py``; docs:
Perfetto export).

- **ftrace event bundles** (``TracePacket.ftrace_events``): ``r.trace``'s
  events as the kernel's ``sched_switch``, ``sched_waking`` (just before
  each ``sched_wakeup``, same instant), ``sched_wakeup``,
  ``sched_wakeup_new``, ``sched_migrate_task`` and ``sched_process_exit``,
  with their comms, pids, prios, prev_state, target/orig/dest CPUs and
  common pid as ``schedlab.io.ftrace`` describes them (Linux v6.18's
  formats; prev_state as the 4.14+ kernels encode it: R = 0, S = 1, D = 2,
  X = 16). A bundle holds one CPU's events, at most ``MAX_BUNDLE_EVENTS``.
- **compact sched** (default; ``compact=False`` for plain events only): as
  Perfetto's recorder does, switches and wakings go in the bundle's
  ``compact_sched`` columns — timestamps delta-encoded, comms in an intern
  table, a switch's prev task and a waking's waker left for the reader to
  infer from the CPU's previous switch. An event the reader could not
  infer that way (a CPU's first switch, a waking before it, a waker that is
  not the task on the CPU), or that the reader's order at equal timestamps
  (compact switches, then compact wakings, then plain events, per bundle)
  would put out of place, is written plain instead; so both encodings
  decode to the same events in the same order.
- **process tree** (``TracePacket.process_tree``): a process per tgid
  (``pid`` = tgid, ``ppid`` = the tgid of the task that forked its first
  task, from ``sched_wakeup_new``, else 0; ``cmdline`` = [``r.tasks
  ["process"]``]) and a thread per task (``tid``, ``tgid``, ``name`` =
  ``r.tasks["name"]`` in full; the ftrace comms are cut to 15 bytes).
- **TrackEvent tracks** for what ftrace has no event for: a counter track
  per CPU (``CPU n runqueue``): the runnable tasks there, the running one
  included, at each vmstat sample (``r.runqueue_timeline``); with PELT
  (``r.pelt_trace``), ``CPU n util_avg`` and ``CPU n load_avg`` counters at
  each sample; a balancer track per CPU (``CPU n balancer``): a slice per
  balance pass that CPU ran (``r.balance_trace``), named ``<kind> <level>``
  (``periodic MC``, ``newidle SMT``, ``nohz NUMA``, ``active MC``), as long
  as its modelled CPU time (``cost_ns``) and laid end to end from the
  pass's instant (a pass that starts while the previous one's time still
  runs begins where it ends; ``time_ns`` keeps the instant), its fields as
  debug annotations.

The file has no per-CPU or per-thread slices, wake-up instants or flows of
its own: Perfetto derives those from the ftrace events. It has no
``system_info``/utsname either: Perfetto decodes prev_state bits above 0x20
by kernel version, and the states written here (0, 1, 2, 16) read the same
under every version.

When the trace hit its row limit (``r.trace_truncated``), the file stops at
the last row kept: the balancer slices still open close there, and later
samples and passes are left out; otherwise they run to the run's simulated
end. The file is written to a temporary file beside ``path`` and renamed
over it when complete (``schedlab.io.atomic.atomic_output``): an
interrupted export leaves an existing file as it was.
"""

from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import polars as pl

from .. import _core
from .atomic import atomic_output
from .events import (
    MIGRATE,
    PREV_STATE_CODES,
    SWITCH,
    WAKEUP,
    WAKEUP_NEW,
    TaskTable,
    prev_state_code,
)

if TYPE_CHECKING:
    from .._core import PerfettoBalance, PerfettoPelt, PerfettoTasks, PerfettoTrace
    from ..result import Result

#: The one packet sequence every packet of the file belongs to.
SEQUENCE_ID: int = _core.PERFETTO_SEQUENCE_ID
#: The most events (compact ones included) one ftrace event bundle holds.
MAX_BUNDLE_EVENTS = 1024
#: Track uuids: CPU n's run-queue counter track.
RUNQUEUE_TRACK_BASE: int = _core.PERFETTO_TRACK_BASES["runqueue"]
#: CPU n's balancer track, its PELT util_avg and load_avg counter tracks.
BALANCE_TRACK_BASE: int = _core.PERFETTO_TRACK_BASES["balancer"]
UTIL_TRACK_BASE: int = _core.PERFETTO_TRACK_BASES["util_avg"]
LOAD_TRACK_BASE: int = _core.PERFETTO_TRACK_BASES["load_avg"]
#: The size of the chunks the core hands to ``write_chunk``.
WRITE_CHUNK_BYTES: int = _core.PERFETTO_CHUNK_BYTES
#: The trace rows handed to the core at a time (their columns in its layout
#: are made one chunk at a time: 25 bytes a row).
TRACE_CHUNK_ROWS = 1 << 17


def perfetto_protos() -> Any:
    """Perfetto's ``perfetto_trace_pb2`` protos module; an ImportError that
    names the extra to install when the perfetto package is missing (the
    CLI checks it before a ``--perfetto`` run)."""
    try:
        from perfetto.protos.perfetto.trace import (  # type: ignore[import-untyped]
            perfetto_trace_pb2,
        )
    except ImportError as e:
        raise ImportError(
            "Result.to_perfetto needs Perfetto's Python package: "
            "pip install 'schedlab[perfetto]' (or pip install perfetto)"
        ) from e
    return perfetto_trace_pb2


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def write_packet(f: IO[bytes], packet: Any) -> None:
    """Append ``packet`` to the file as one ``Trace.packet`` (field 1,
    length-delimited): the bytes ``StreamingTraceProtoBuilder.write_packet``
    writes, without its copy of the packet."""
    data = packet.SerializeToString()
    f.write(b"\x0a" + _varint(len(data)) + data)


def write_chunk(f: IO[bytes], data: bytes) -> None:
    """Append a chunk of the file's body (whole packets, as the core encodes
    them) to the file."""
    f.write(data)


def process_tree_packet(pb: Any, r: Result, tasks: TaskTable, ts: int) -> Any:
    """The ``process_tree`` packet: a process per tgid, a thread per task."""
    parent: dict[int, int] = {}
    trace = r.trace
    assert trace is not None
    new = trace.filter(trace["event"] == WAKEUP_NEW).select("pid", "waker_pid")
    for pid, waker in new.iter_rows():
        parent.setdefault(pid, waker or 0)
    p = pb.TracePacket()
    p.trusted_packet_sequence_id = SEQUENCE_ID
    p.timestamp = ts
    tree = p.process_tree
    for tgid, pname in tasks.processes.items():
        proc = tree.processes.add()
        proc.pid = tgid
        forker = parent.get(tgid, 0)
        proc.ppid = tasks.tgids.get(forker, 0) if forker else 0
        proc.cmdline.append(pname)
    for pid, name in tasks.names.items():
        th = tree.threads.add()
        th.tid = pid
        th.tgid = tasks.tgids[pid]
        th.name = name
    return p


def track_descriptor_packets(pb: Any, nr_cpus: int, pelt: bool) -> list[Any]:
    """The ``track_descriptor`` packets: per CPU, its run-queue counter
    track, its balancer track and, with ``pelt``, its util_avg and load_avg
    counter tracks."""
    packets = []
    for cpu in range(nr_cpus):
        tracks: list[tuple[int, str, str | None]] = [
            (RUNQUEUE_TRACK_BASE + cpu, f"CPU {cpu} runqueue", "tasks"),
            (BALANCE_TRACK_BASE + cpu, f"CPU {cpu} balancer", None),
        ]
        if pelt:
            tracks += [
                (UTIL_TRACK_BASE + cpu, f"CPU {cpu} util_avg", ""),
                (LOAD_TRACK_BASE + cpu, f"CPU {cpu} load_avg", ""),
            ]
        for uuid, name, unit in tracks:
            p = pb.TracePacket()
            p.trusted_packet_sequence_id = SEQUENCE_ID
            d = p.track_descriptor
            d.uuid = uuid
            d.name = name
            if unit is not None:
                d.counter.SetInParent()
                if unit:
                    d.counter.unit_name = unit
            packets.append(p)
    return packets


def write_perfetto(r: Result, path: str | os.PathLike[str], *, compact: bool = True) -> None:
    """Write ``r``'s schedule to ``path`` (see the module docstring). ``path``
    must be a str or os.PathLike in an existing writable directory (an
    existing file is replaced once the new one is complete); ``compact`` a
    bool."""
    from .._check import need_instance, need_output_path
    from ..exceptions import ConfigError

    path = need_output_path("path", path, force=True)
    need_instance("compact", compact, bool, "a bool")
    pb = perfetto_protos()
    if r.trace is None:
        raise ConfigError(
            "Result.to_perfetto: this run has no trace; run simulate(..., trace=True) to record one"
        )
    with atomic_output(path, "wb") as f:
        _write(f, pb, r, compact)


def _write(f: IO[bytes], pb: Any, r: Result, compact: bool) -> None:
    trace = r.trace
    assert trace is not None
    tasks = TaskTable(r)
    nr_cpus = int(r.config["nr_cpus"])
    first_ts = int(trace["time_ns"][0]) if trace.height else 0
    tree = process_tree_packet(pb, r, tasks, first_ts)
    tree.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    write_packet(f, tree)
    for p in track_descriptor_packets(pb, nr_cpus, r.pelt_trace is not None):
        write_packet(f, p)
    rq = r.runqueue_timeline
    sample_ns = [int(round(t * 1e9)) for t in r.vmstat["time_s"].to_list()] if rq.size else []
    step = TRACE_CHUNK_ROWS
    chunks = (_sched_columns(trace.slice(i, step), i) for i in range(0, trace.height, step))
    _core.perfetto_body(
        lambda data: write_chunk(f, data),
        lambda: next(chunks, None),
        _task_columns(tasks),
        np.array(sample_ns, dtype=np.uint64),
        np.ascontiguousarray(rq, dtype=np.int64),
        _pelt_columns(r.pelt_trace),
        _balance_columns(r.balance_trace),
        nr_cpus=nr_cpus,
        compact=compact,
        max_bundle_events=MAX_BUNDLE_EVENTS,
        end_ns=int(round(r.sim_time_s * 1e9)),
        truncated=r.trace_truncated,
        chunk_bytes=WRITE_CHUNK_BYTES,
    )


def _codes(s: pl.Series, dtype: Any) -> Any:
    """A column as a contiguous numpy array of ``dtype`` (no copy when it
    has that dtype already)."""
    return np.ascontiguousarray(s.to_numpy(), dtype=dtype)


def _sched_columns(trace: pl.DataFrame, first: int = 0) -> PerfettoTrace:
    """Rows of ``r.trace`` (from row ``first``) in the core's layout: the
    event's code (``TRACE_EVENTS``), ``a`` = prev_state's number /
    target_cpu / orig_cpu, ``b`` = next_pid / waker (0 when none) /
    dest_cpu."""
    for state in trace["prev_state"].unique().to_list():
        prev_state_code(state)  # ValueError for a state it does not know
    event = trace["event"]
    categories = event.dtype.categories.to_list()  # type: ignore[attr-defined]
    kind = event.to_physical().to_numpy()
    if categories != _core.TRACE_EVENTS:
        table = np.array([_core.TRACE_EVENTS.index(c) for c in categories], dtype=np.uint8)
        kind = table[kind]
    ev = pl.col("event")
    wakeup = ev.is_in([WAKEUP, WAKEUP_NEW])
    state = (
        pl.col("prev_state").fill_null("R").replace_strict(PREV_STATE_CODES, return_dtype=pl.Int32)
    )
    ab = trace.select(
        pl.when(ev == SWITCH)
        .then(state)
        .when(wakeup)
        .then(pl.col("target_cpu"))
        .when(ev == MIGRATE)
        .then(pl.col("orig_cpu"))
        .otherwise(0)
        .cast(pl.Int32)
        .alias("a"),
        pl.when(ev == SWITCH)
        .then(pl.col("next_pid"))
        .when(wakeup)
        .then(pl.col("waker_pid").fill_null(0))
        .when(ev == MIGRATE)
        .then(pl.col("dest_cpu"))
        .otherwise(0)
        .cast(pl.Int32)
        .alias("b"),
    )
    for col in ab.columns:
        if ab[col].null_count():
            row = ab[col].is_null().arg_true()[0]
            raise ValueError(
                f"a {trace['event'][row]} row of the trace without its fields (row {first + row})"
            )
    return {
        "time_ns": _codes(trace["time_ns"], np.uint64),
        "cpu": _codes(trace["cpu"], np.int32),
        "kind": np.ascontiguousarray(kind, dtype=np.uint8),
        "pid": _codes(trace["pid"], np.int32),
        "a": _codes(ab["a"], np.int32),
        "b": _codes(ab["b"], np.int32),
    }


def _task_columns(tasks: TaskTable) -> PerfettoTasks:
    """Each task's pid, ftrace comm, prio and tgid."""
    pids = list(tasks.names)
    return {
        "pid": np.array(pids, dtype=np.int64),
        "comm": [tasks.comms[p] for p in pids],
        "prio": np.array([tasks.prios[p] for p in pids], dtype=np.int64),
        "tgid": np.array([tasks.tgids[p] for p in pids], dtype=np.int64),
    }


def _pelt_columns(pt: pl.DataFrame | None) -> PerfettoPelt:
    """``r.pelt_trace``'s counters (none without PELT)."""
    if pt is None:
        pt = pl.DataFrame(
            schema={
                "time_ns": pl.UInt64,
                "cpu": pl.Int32,
                "util_avg": pl.UInt64,
                "load_avg": pl.UInt64,
            }
        )
    return {
        "time_ns": _codes(pt["time_ns"], np.uint64),
        "cpu": _codes(pt["cpu"], np.int32),
        "util_avg": _codes(pt["util_avg"], np.uint64),
        "load_avg": _codes(pt["load_avg"], np.uint64),
    }


def _labelled(s: pl.Series) -> tuple[list[str], Any]:
    """An Enum column as its labels and each row's index into them."""
    return s.dtype.categories.to_list(), _codes(s.to_physical(), np.uint8)  # type: ignore[attr-defined]


def _balance_columns(bt: pl.DataFrame | None) -> PerfettoBalance:
    """``r.balance_trace``'s passes: the columns the slices are placed by,
    each slice's name (``<kind> <level>``, an index into ``names``) and its
    annotations."""
    if bt is None or bt.height == 0:
        empty_u64 = np.zeros(0, dtype=np.uint64)
        empty_i32 = np.zeros(0, dtype=np.int32)
        empty_u8 = np.zeros(0, dtype=np.uint8)
        return {
            "time_ns": empty_u64,
            "cpu": empty_i32,
            "cost_ns": empty_u64,
            "name": np.zeros(0, dtype=np.uint32),
            "names": [],
            "dst_cpu": empty_i32,
            "domain": empty_u8,
            "moved": np.zeros(0, dtype=np.uint32),
            "idle": empty_u8,
            "idle_names": [],
            "outcome": empty_u8,
            "outcome_names": [],
            "busiest": empty_i32,
            "active": np.zeros(0, dtype=np.bool_),
        }
    pairs = bt.select("kind", "level").unique(maintain_order=True)
    names = [f"{kind} {level}" for kind, level in pairs.iter_rows()]
    name = bt.select("kind", "level").join(
        pairs.with_row_index("name"),
        on=["kind", "level"],
        how="left",
        maintain_order="left",
        nulls_equal=True,
    )["name"]
    idle_names, idle = _labelled(bt["idle"])
    outcome_names, outcome = _labelled(bt["outcome"])
    return {
        "time_ns": _codes(bt["time_ns"], np.uint64),
        "cpu": _codes(bt["cpu"], np.int32),
        "cost_ns": _codes(bt["cost_ns"], np.uint64),
        "name": _codes(name, np.uint32),
        "names": names,
        "dst_cpu": _codes(bt["dst_cpu"], np.int32),
        "domain": _codes(bt["domain"], np.uint8),
        "moved": _codes(bt["moved"], np.uint32),
        "idle": idle,
        "idle_names": idle_names,
        "outcome": outcome,
        "outcome_names": outcome_names,
        "busiest": _codes(bt["busiest"].fill_null(-1), np.int32),
        "active": _codes(bt["active"], np.bool_),
    }
