"""Write a run's schedule as a Perfetto trace (``Result.to_perfetto``).

Built with the ``TracePacket`` protos of Perfetto's own Python package
(``pip install 'schedlab[perfetto]'``), as Perfetto's recorder writes a
Linux system trace, so that ui.perfetto.dev and the trace processor build
their scheduling views (CPU tracks, thread states, the ``sched`` /
``sched_slice`` and ``thread_state`` tables, wake-up latencies) from it:

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
over it when complete (``schedlab.io.ftrace.atomic_output``): an
interrupted export leaves an existing file as it was.
"""

from __future__ import annotations

import heapq
import itertools
import os
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from .ftrace import (
    EXIT,
    MIGRATE,
    SWITCH,
    WAKEUP_NEW,
    WAKING,
    SchedEvent,
    TaskTable,
    atomic_output,
    sched_events,
)

if TYPE_CHECKING:
    from ..result import Result

#: The one packet sequence every packet of the file belongs to.
SEQUENCE_ID = 1
#: The most events (compact ones included) one ftrace event bundle holds.
MAX_BUNDLE_EVENTS = 1024
#: Track uuids: CPU n's run-queue counter track.
RUNQUEUE_TRACK_BASE = 1_000_000
#: CPU n's balancer track, its PELT util_avg and load_avg counter tracks.
BALANCE_TRACK_BASE = 2_000_000
UTIL_TRACK_BASE = 3_000_000
LOAD_TRACK_BASE = 4_000_000

#: Where an event sits in the trace processor's order at one timestamp of
#: one bundle: compact switches, then compact wakings, then plain events.
_COMPACT_SWITCH, _COMPACT_WAKING, _PLAIN = 0, 1, 2


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


class _Bundle:
    """The open ftrace event bundle of one CPU."""

    def __init__(self, pb: Any, cpu: int) -> None:
        self.packet = pb.TracePacket()
        self.packet.trusted_packet_sequence_id = SEQUENCE_ID
        self.bundle = self.packet.ftrace_events
        self.bundle.cpu = cpu
        self.size = 0
        # the compact columns, and the intern table of their comms
        self.switch_ts: list[int] = []
        self.switch_state: list[int] = []
        self.switch_pid: list[int] = []
        self.switch_prio: list[int] = []
        self.switch_comm: list[int] = []
        self.waking_ts: list[int] = []
        self.waking_pid: list[int] = []
        self.waking_cpu: list[int] = []
        self.waking_prio: list[int] = []
        self.waking_comm: list[int] = []
        self.comms: dict[str, int] = {}
        # the latest timestamp, and the latest place in the order at it
        self.tie_ts = -1
        self.tie_place = -1

    def place(self, ts: int, wanted: int) -> int:
        """The place an event at ``ts`` gets: ``wanted``, or plain when an
        event at the same timestamp already sits later in the order."""
        if ts != self.tie_ts:
            self.tie_ts, self.tie_place = ts, -1
        got = wanted if self.tie_place <= wanted else _PLAIN
        self.tie_place = max(self.tie_place, got)
        self.size += 1
        return got

    def comm_index(self, comm: str) -> int:
        i = self.comms.get(comm)
        if i is None:
            i = self.comms[comm] = len(self.comms)
        return i

    def finished_packet(self) -> Any:
        """The bundle's packet with its compact columns filled in."""
        if self.switch_ts or self.waking_ts:
            c = self.bundle.compact_sched
            c.intern_table.extend(self.comms)
            c.switch_timestamp.extend(_deltas(self.switch_ts))
            c.switch_prev_state.extend(self.switch_state)
            c.switch_next_pid.extend(self.switch_pid)
            c.switch_next_prio.extend(self.switch_prio)
            c.switch_next_comm_index.extend(self.switch_comm)
            c.waking_timestamp.extend(_deltas(self.waking_ts))
            c.waking_pid.extend(self.waking_pid)
            c.waking_target_cpu.extend(self.waking_cpu)
            c.waking_prio.extend(self.waking_prio)
            c.waking_comm_index.extend(self.waking_comm)
            c.waking_common_flags.extend([0] * len(self.waking_ts))
        return self.packet


def _deltas(ts: list[int]) -> list[int]:
    """Each timestamp as the step from the one before (the first from 0)."""
    return [b - a for a, b in itertools.pairwise([0, *ts])]


class _FtraceWriter:
    """Puts the events into per-CPU bundles and writes each when full."""

    def __init__(self, f: IO[bytes], pb: Any, tasks: TaskTable, compact: bool) -> None:
        self.f = f
        self.pb = pb
        self.tasks = tasks
        self.compact = compact
        self.bundles: dict[int, _Bundle] = {}
        # the task the trace processor takes as running on each CPU: the
        # next_pid of the CPU's last switch written (none before the first)
        self.running: dict[int, int] = {}

    def add(self, e: SchedEvent) -> None:
        b = self.bundles.get(e.cpu)
        if b is None:
            b = self.bundles[e.cpu] = _Bundle(self.pb, e.cpu)
        on_cpu = self.running.get(e.cpu)
        if e.name == SWITCH:
            wanted = _COMPACT_SWITCH if self.compact and on_cpu == e.pid else _PLAIN
            self.running[e.cpu] = e.b
            if b.place(e.ts, wanted) == _COMPACT_SWITCH:
                b.switch_ts.append(e.ts)
                b.switch_state.append(e.a)
                b.switch_pid.append(e.b)
                b.switch_prio.append(self.tasks.prio(e.b))
                b.switch_comm.append(b.comm_index(self.tasks.comm(e.b, e.cpu)))
            else:
                self._plain(b, e)
        elif e.name == WAKING:
            wanted = _COMPACT_WAKING if self.compact and on_cpu == e.common_pid else _PLAIN
            if b.place(e.ts, wanted) == _COMPACT_WAKING:
                b.waking_ts.append(e.ts)
                b.waking_pid.append(e.pid)
                b.waking_cpu.append(e.a)
                b.waking_prio.append(self.tasks.prio(e.pid))
                b.waking_comm.append(b.comm_index(self.tasks.comm(e.pid, e.cpu)))
            else:
                self._plain(b, e)
        else:
            b.place(e.ts, _PLAIN)
            self._plain(b, e)
        if b.size >= MAX_BUNDLE_EVENTS:
            self.flush(e.cpu)

    def _plain(self, b: _Bundle, e: SchedEvent) -> None:
        tasks = self.tasks
        ev = b.bundle.event.add()
        ev.timestamp = e.ts
        ev.pid = e.common_pid
        if e.name == SWITCH:
            s = ev.sched_switch
            s.prev_comm = tasks.comm(e.pid, e.cpu)
            s.prev_pid = e.pid
            s.prev_prio = tasks.prio(e.pid)
            s.prev_state = e.a
            s.next_comm = tasks.comm(e.b, e.cpu)
            s.next_pid = e.b
            s.next_prio = tasks.prio(e.b)
        elif e.name == MIGRATE:
            m = ev.sched_migrate_task
            m.comm = tasks.comm(e.pid, e.cpu)
            m.pid = e.pid
            m.prio = tasks.prio(e.pid)
            m.orig_cpu = e.a
            m.dest_cpu = e.b
        elif e.name == EXIT:
            x = ev.sched_process_exit
            x.comm = tasks.comm(e.pid, e.cpu)
            x.pid = e.pid
            x.tgid = tasks.tgids.get(e.pid, e.pid)
            x.prio = tasks.prio(e.pid)
        else:  # sched_waking, sched_wakeup, sched_wakeup_new
            w = getattr(ev, e.name)
            w.comm = tasks.comm(e.pid, e.cpu)
            w.pid = e.pid
            w.prio = tasks.prio(e.pid)
            w.success = 1  # the kernel's "rudiment": always 1
            w.target_cpu = e.a

    def flush(self, cpu: int) -> None:
        b = self.bundles.pop(cpu, None)
        if b is not None:
            write_packet(self.f, b.finished_packet())

    def flush_all(self) -> None:
        for cpu in sorted(self.bundles):
            self.flush(cpu)


def _balance_slices(r: Result, nr_cpus: int) -> list[list[tuple[int, bool, dict[str, Any]]]]:
    """Per CPU, the balancer track's (ts, begin?, pass) in time order: each
    pass begins at max(its instant, the previous slice's end) and lasts its
    cost_ns."""
    per_cpu: list[list[tuple[int, bool, dict[str, Any]]]] = [[] for _ in range(nr_cpus)]
    bt = r.balance_trace
    if bt is None:
        return per_cpu
    free = [0] * nr_cpus
    for row in bt.iter_rows(named=True):
        cpu = row["cpu"]
        start = max(row["time_ns"], free[cpu])
        free[cpu] = start + row["cost_ns"]
        per_cpu[cpu].append((start, True, row))
        per_cpu[cpu].append((free[cpu], False, row))
    return per_cpu


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


class _TrackWriter:
    """The TrackEvent side: descriptors, counters and balancer slices, each
    written when the trace reaches its time."""

    def __init__(self, f: IO[bytes], pb: Any, r: Result) -> None:
        self.f = f
        self.pb = pb
        self.TE = pb.TrackEvent
        self.nr_cpus = int(r.config["nr_cpus"])
        rq = r.runqueue_timeline
        self.rq = rq
        self.sample_ns = (
            [int(round(t * 1e9)) for t in r.vmstat["time_s"].to_list()] if rq.size else []
        )
        self.next_sample = 0
        pt = r.pelt_trace
        self.has_pelt = pt is not None
        self.pelt_rows: list[tuple[int, int, int, int]] = (
            []
            if pt is None
            else list(pt.select("time_ns", "cpu", "util_avg", "load_avg").iter_rows())
        )
        self.next_pelt = 0
        self.balance: Iterator[tuple[int, bool, dict[str, Any]]] = heapq.merge(
            *_balance_slices(r, self.nr_cpus), key=lambda x: x[0]
        )
        self.pending_balance = next(self.balance, None)

    def packet(self, ts: int | None = None) -> Any:
        p = self.pb.TracePacket()
        p.trusted_packet_sequence_id = SEQUENCE_ID
        if ts is not None:
            p.timestamp = ts
        return p

    def descriptors(self) -> None:
        for cpu in range(self.nr_cpus):
            tracks: list[tuple[int, str, str | None]] = [
                (RUNQUEUE_TRACK_BASE + cpu, f"CPU {cpu} runqueue", "tasks"),
                (BALANCE_TRACK_BASE + cpu, f"CPU {cpu} balancer", None),
            ]
            if self.has_pelt:
                tracks += [
                    (UTIL_TRACK_BASE + cpu, f"CPU {cpu} util_avg", ""),
                    (LOAD_TRACK_BASE + cpu, f"CPU {cpu} load_avg", ""),
                ]
            for uuid, name, unit in tracks:
                p = self.packet()
                d = p.track_descriptor
                d.uuid = uuid
                d.name = name
                if unit is not None:
                    d.counter.SetInParent()
                    if unit:
                        d.counter.unit_name = unit
                write_packet(self.f, p)

    def counter(self, ts: int, uuid: int, value: int) -> None:
        p = self.packet(ts)
        p.track_event.type = self.TE.TYPE_COUNTER
        p.track_event.track_uuid = uuid
        p.track_event.counter_value = value
        write_packet(self.f, p)

    def emit_samples(self, upto_ns: int) -> None:
        while (
            self.next_sample < len(self.sample_ns) and self.sample_ns[self.next_sample] <= upto_ns
        ):
            ts = self.sample_ns[self.next_sample]
            for cpu in range(self.nr_cpus):
                self.counter(ts, RUNQUEUE_TRACK_BASE + cpu, int(self.rq[cpu, self.next_sample]))
            self.next_sample += 1
            # the PELT rows of this sample (and any before it)
            while self.next_pelt < len(self.pelt_rows) and self.pelt_rows[self.next_pelt][0] <= ts:
                pts, cpu, util, load = self.pelt_rows[self.next_pelt]
                self.counter(pts, UTIL_TRACK_BASE + cpu, util)
                self.counter(pts, LOAD_TRACK_BASE + cpu, load)
                self.next_pelt += 1

    def emit_balance(self, upto_ns: int) -> None:
        while self.pending_balance is not None and self.pending_balance[0] <= upto_ns:
            ts, begin, row = self.pending_balance
            p = self.packet(ts)
            e = p.track_event
            e.track_uuid = BALANCE_TRACK_BASE + row["cpu"]
            if begin:
                e.type = self.TE.TYPE_SLICE_BEGIN
                e.name = f"{row['kind']} {row['level']}"
                _balance_annotations(e, row)
            else:
                e.type = self.TE.TYPE_SLICE_END
            write_packet(self.f, p)
            self.pending_balance = next(self.balance, None)

    def emit_until(self, upto_ns: int) -> None:
        """Samples and balancer slices up to ``upto_ns``, merged in time order."""
        while True:
            ts_s = (
                self.sample_ns[self.next_sample] if self.next_sample < len(self.sample_ns) else None
            )
            ts_b = self.pending_balance[0] if self.pending_balance is not None else None
            if ts_s is not None and ts_s <= upto_ns and (ts_b is None or ts_s <= ts_b):
                self.emit_samples(ts_s)
            elif ts_b is not None and ts_b <= upto_ns:
                self.emit_balance(ts_b)
            else:
                break

    def finish(self, last: int) -> None:
        """Everything up to ``last``; balancer slices begun by then end there
        at the latest, later ones are left out."""
        self.emit_until(last)
        open_cpus: set[int] = set()
        while self.pending_balance is not None:
            _, begin, row = self.pending_balance
            if not begin and row["cpu"] not in open_cpus:
                open_cpus.add(row["cpu"])
                p = self.packet(last)
                p.track_event.type = self.TE.TYPE_SLICE_END
                p.track_event.track_uuid = BALANCE_TRACK_BASE + row["cpu"]
                write_packet(self.f, p)
            elif begin:
                open_cpus.add(row["cpu"])  # its end (and all later ones) dropped
            self.pending_balance = next(self.balance, None)


def _balance_annotations(e: Any, row: dict[str, Any]) -> None:
    for k in ("time_ns", "dst_cpu", "domain", "moved", "cost_ns"):
        a = e.debug_annotations.add()
        a.name = k
        a.int_value = row[k]
    for k in ("idle", "outcome"):
        a = e.debug_annotations.add()
        a.name = k
        a.string_value = row[k]
    a = e.debug_annotations.add()
    a.name = "busiest"
    a.int_value = -1 if row["busiest"] is None else row["busiest"]
    a = e.debug_annotations.add()
    a.name = "active"
    a.bool_value = row["active"]


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
    first_ts = int(trace["time_ns"][0]) if trace.height else 0
    tree = process_tree_packet(pb, r, tasks, first_ts)
    tree.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    write_packet(f, tree)
    tracks = _TrackWriter(f, pb, r)
    tracks.descriptors()
    ftrace = _FtraceWriter(f, pb, tasks, compact)
    emit_until: Callable[[int], None] = tracks.emit_until
    add = ftrace.add
    last_ts = 0
    for e in sched_events(r):
        emit_until(e.ts)
        add(e)
        last_ts = e.ts
    ftrace.flush_all()
    end_ns = int(round(r.sim_time_s * 1e9))
    tracks.finish(last_ts if r.trace_truncated else max(end_ns, last_ts))
