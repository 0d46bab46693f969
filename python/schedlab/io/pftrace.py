"""Write a run's schedule as a Perfetto trace (``Result.to_perfetto``).

Built with Perfetto's own Python package (``pip install 'schedlab[perfetto]'``):
its ``StreamingTraceProtoBuilder`` and bundled ``TracePacket`` protos, as
TrackEvent packets that ui.perfetto.dev and the trace processor read.

- one track per CPU (``CPU n``) whose slices are the task running there,
  named as the workload names it (``r.tasks["name"]``), from each
  ``sched_switch`` to the next;
- on the CPU track where ftrace records them: ``sched_wakeup`` and
  ``sched_wakeup_new`` as instant events (``wakeup <name>``), each with a
  flow to the slice where the woken task next runs; ``sched_migrate_task``
  (``migrate <name>``) and ``sched_process_exit`` (``exit <name>``) as
  instant events, with their fields as debug annotations;
- one counter track per CPU (``CPU n runqueue``): the runnable tasks there,
  the running one included, at each vmstat sample (``r.runqueue_timeline``).
- one balancer track per CPU (``CPU n balancer``): a slice per balance pass
  that CPU ran (``r.balance_trace``), named ``<kind> <level>`` (``periodic
  MC``, ``newidle SMT``, ``nohz NUMA``, ``active MC``), as long as its
  modelled CPU time (``cost_ns``) and laid end to end from the pass's
  instant (a pass that starts while the previous one's time still runs
  begins where it ends; ``time_ns`` keeps the instant), its fields as
  debug annotations;
- with PELT (``r.pelt_trace``), two counter tracks per CPU, ``CPU n
  util_avg`` and ``CPU n load_avg``, at each vmstat sample;
- a process track per process of the workload (``r.tasks["tgid"]``, named
  by ``r.tasks["process"]``: ``hackbench``, ``java``…) with a thread track
  per task (tid = the task's pid, named as the workload names it) under it,
  whose slices (``CPU n``) are the stretches the task runs.

Slices still open at the end of the trace close at the run's simulated end;
when the trace hit its row limit (``r.trace_truncated``), the file stops at
the last row kept: open slices close there and later samples are left out.
The balancer slices and PELT samples past the last trace row kept are
left out too.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..result import Result

#: The one packet sequence every packet of the file belongs to.
SEQUENCE_ID = 1
#: Track uuids: CPU n's slice track and its run-queue counter track.
CPU_TRACK_BASE = 1_000
RUNQUEUE_TRACK_BASE = 1_000_000
#: CPU n's balancer track, its PELT util_avg and load_avg counter tracks.
BALANCE_TRACK_BASE = 2_000_000
UTIL_TRACK_BASE = 3_000_000
LOAD_TRACK_BASE = 4_000_000
#: Process tgid's track and task pid's thread track.
PROCESS_TRACK_BASE = 10_000_000
THREAD_TRACK_BASE = 20_000_000


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


def write_perfetto(r: Result, path: str | os.PathLike[str]) -> None:
    """Write ``r``'s schedule to ``path`` (see the module docstring). ``path``
    must be a str or os.PathLike in an existing writable directory (an
    existing file is overwritten)."""
    import heapq

    from .._check import need_output_path
    from ..exceptions import ConfigError

    path = need_output_path("path", path, force=True)
    pb = perfetto_protos()
    trace = r.trace
    if trace is None:
        raise ConfigError(
            "Result.to_perfetto: this run has no trace; run simulate(..., trace=True) to record one"
        )
    from perfetto.trace_builder.proto_builder import (  # type: ignore[import-untyped]
        StreamingTraceProtoBuilder,
    )

    TE = pb.TrackEvent
    tasks = r.tasks
    names = dict(zip(tasks["task"].to_list(), tasks["name"].to_list(), strict=True))
    tgids = dict(zip(tasks["task"].to_list(), tasks["tgid"].to_list(), strict=True))
    processes = dict(zip(tasks["tgid"].to_list(), tasks["process"].to_list(), strict=True))
    nr_cpus = int(r.config["nr_cpus"])
    end_ns = int(round(r.sim_time_s * 1e9))

    def task_name(pid: int) -> str:
        return str(names.get(pid, f"task {pid}"))

    # vmstat samples, merged into the event stream in time order
    rq = r.runqueue_timeline
    sample_ns = [int(round(t * 1e9)) for t in r.vmstat["time_s"].to_list()] if rq.size else []
    next_sample = 0
    pt = r.pelt_trace
    pelt_rows = (
        [] if pt is None else list(pt.select("time_ns", "cpu", "util_avg", "load_avg").iter_rows())
    )
    next_pelt = 0
    # balance passes, merged likewise (each CPU's list is in time order)
    balance = heapq.merge(*_balance_slices(r, nr_cpus), key=lambda x: x[0])
    pending_balance = next(balance, None)

    with open(path, "wb") as f:
        out = StreamingTraceProtoBuilder(f)

        def packet(ts: int | None = None) -> Any:
            p = out.create_packet()
            p.trusted_packet_sequence_id = SEQUENCE_ID
            if ts is not None:
                p.timestamp = ts
            return p

        first = True

        def descriptor(uuid: int, name: str) -> Any:
            nonlocal first
            p = packet()
            if first:
                p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
                first = False
            p.track_descriptor.uuid = uuid
            if name:
                p.track_descriptor.name = name
            return p

        for cpu in range(nr_cpus):
            for uuid, name, unit in (
                (CPU_TRACK_BASE + cpu, f"CPU {cpu}", None),
                (RUNQUEUE_TRACK_BASE + cpu, f"CPU {cpu} runqueue", "tasks"),
                (BALANCE_TRACK_BASE + cpu, f"CPU {cpu} balancer", None),
            ):
                p = descriptor(uuid, name)
                if unit:
                    p.track_descriptor.counter.unit_name = unit
                out.write_packet(p)
            if pt is not None:
                for uuid, name in (
                    (UTIL_TRACK_BASE + cpu, f"CPU {cpu} util_avg"),
                    (LOAD_TRACK_BASE + cpu, f"CPU {cpu} load_avg"),
                ):
                    p = descriptor(uuid, name)
                    p.track_descriptor.counter.SetInParent()
                    out.write_packet(p)
        for tgid, pname in processes.items():
            p = descriptor(PROCESS_TRACK_BASE + tgid, "")
            p.track_descriptor.process.pid = tgid
            p.track_descriptor.process.process_name = pname
            out.write_packet(p)
        for pid, tname in names.items():
            p = descriptor(THREAD_TRACK_BASE + pid, "")
            p.track_descriptor.parent_uuid = PROCESS_TRACK_BASE + tgids[pid]
            p.track_descriptor.thread.pid = tgids[pid]
            p.track_descriptor.thread.tid = pid
            p.track_descriptor.thread.thread_name = tname
            out.write_packet(p)

        def counter(ts: int, uuid: int, value: int) -> None:
            p = packet(ts)
            p.track_event.type = TE.TYPE_COUNTER
            p.track_event.track_uuid = uuid
            p.track_event.counter_value = value
            out.write_packet(p)

        def emit_samples(upto_ns: int) -> None:
            nonlocal next_sample, next_pelt
            while next_sample < len(sample_ns) and sample_ns[next_sample] <= upto_ns:
                ts = sample_ns[next_sample]
                for cpu in range(nr_cpus):
                    counter(ts, RUNQUEUE_TRACK_BASE + cpu, int(rq[cpu, next_sample]))
                next_sample += 1
                # the PELT rows of this sample (and any before it)
                while next_pelt < len(pelt_rows) and pelt_rows[next_pelt][0] <= ts:
                    pts, cpu, util, load = pelt_rows[next_pelt]
                    counter(pts, UTIL_TRACK_BASE + cpu, util)
                    counter(pts, LOAD_TRACK_BASE + cpu, load)
                    next_pelt += 1

        def emit_balance(upto_ns: int) -> None:
            nonlocal pending_balance
            while pending_balance is not None and pending_balance[0] <= upto_ns:
                ts, begin, row = pending_balance
                p = packet(ts)
                e = p.track_event
                e.track_uuid = BALANCE_TRACK_BASE + row["cpu"]
                if begin:
                    e.type = TE.TYPE_SLICE_BEGIN
                    e.name = f"{row['kind']} {row['level']}"
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
                else:
                    e.type = TE.TYPE_SLICE_END
                out.write_packet(p)
                pending_balance = next(balance, None)

        def emit_until(upto_ns: int) -> None:
            # samples and balancer slices up to upto_ns, merged in time order
            while True:
                ts_s = sample_ns[next_sample] if next_sample < len(sample_ns) else None
                ts_b = pending_balance[0] if pending_balance is not None else None
                if ts_s is not None and ts_s <= upto_ns and (ts_b is None or ts_s <= ts_b):
                    emit_samples(ts_s)
                elif ts_b is not None and ts_b <= upto_ns:
                    emit_balance(ts_b)
                else:
                    break

        def instant(ts: int, cpu: int, name: str, args: dict[str, int], flow: int = 0) -> None:
            p = packet(ts)
            e = p.track_event
            e.type = TE.TYPE_INSTANT
            e.track_uuid = CPU_TRACK_BASE + cpu
            e.name = name
            for k, v in args.items():
                a = e.debug_annotations.add()
                a.name = k
                a.int_value = v
            if flow:
                e.flow_ids.append(flow)
            out.write_packet(p)

        def slice_end(ts: int, uuid: int) -> None:
            p = packet(ts)
            p.track_event.type = TE.TYPE_SLICE_END
            p.track_event.track_uuid = uuid
            out.write_packet(p)

        running = [0] * nr_cpus
        pending_flow: dict[int, int] = {}  # pid -> flow id of its last wake-up
        flow_id = 0
        last_ts = 0
        cols = ("time_ns", "cpu", "event", "pid", "next_pid", "target_cpu", "orig_cpu", "dest_cpu")
        for ts, cpu, event, pid, next_pid, target, orig, dest in trace.select(cols).iter_rows():
            emit_until(ts)
            last_ts = ts
            if event == "sched_switch":
                if pid != 0:
                    slice_end(ts, CPU_TRACK_BASE + cpu)
                    slice_end(ts, THREAD_TRACK_BASE + pid)
                running[cpu] = next_pid
                if next_pid != 0:
                    p = packet(ts)
                    e = p.track_event
                    e.type = TE.TYPE_SLICE_BEGIN
                    e.track_uuid = CPU_TRACK_BASE + cpu
                    e.name = task_name(next_pid)
                    a = e.debug_annotations.add()
                    a.name = "pid"
                    a.int_value = next_pid
                    if next_pid in pending_flow:
                        e.terminating_flow_ids.append(pending_flow.pop(next_pid))
                    out.write_packet(p)
                    p = packet(ts)
                    p.track_event.type = TE.TYPE_SLICE_BEGIN
                    p.track_event.track_uuid = THREAD_TRACK_BASE + next_pid
                    p.track_event.name = f"CPU {cpu}"
                    out.write_packet(p)
            elif event in ("sched_wakeup", "sched_wakeup_new"):
                flow_id += 1
                pending_flow[pid] = flow_id
                instant(
                    ts, cpu, f"wakeup {task_name(pid)}", {"pid": pid, "target_cpu": target}, flow_id
                )
            elif event == "sched_migrate_task":
                instant(
                    ts,
                    cpu,
                    f"migrate {task_name(pid)}",
                    {"pid": pid, "orig_cpu": orig, "dest_cpu": dest},
                )
            elif event == "sched_process_exit":
                instant(ts, cpu, f"exit {task_name(pid)}", {"pid": pid})
        last = last_ts if r.trace_truncated else max(end_ns, last_ts)
        # balancer slices begun by the end close there at the latest; later
        # ones are left out
        emit_until(last)
        open_cpus: set[int] = set()
        while pending_balance is not None:
            _, begin, row = pending_balance
            if not begin and row["cpu"] not in open_cpus:
                open_cpus.add(row["cpu"])
                slice_end(last, BALANCE_TRACK_BASE + row["cpu"])
            elif begin:
                open_cpus.add(row["cpu"])  # its end (and all later ones) dropped
            pending_balance = next(balance, None)
        for cpu, pid in enumerate(running):
            if pid != 0:
                slice_end(last, CPU_TRACK_BASE + cpu)
                slice_end(last, THREAD_TRACK_BASE + pid)
