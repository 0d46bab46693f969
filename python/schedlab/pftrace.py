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

Slices still open at the end of the trace close at the run's simulated end;
when the trace hit its row limit (``r.trace_truncated``), the file stops at
the last row kept: open slices close there and later samples are left out.
Balancer passes are not in ``r.trace`` and so not in the file.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .result import Result

#: The one packet sequence every packet of the file belongs to.
SEQUENCE_ID = 1
#: Track uuids: CPU n's slice track and its run-queue counter track.
CPU_TRACK_BASE = 1_000
RUNQUEUE_TRACK_BASE = 1_000_000


def _perfetto_protos() -> Any:
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


def write_perfetto(r: Result, path: str | os.PathLike[str]) -> None:
    """Write ``r``'s schedule to ``path`` (see the module docstring). ``path``
    must be a str or os.PathLike in an existing writable directory (an
    existing file is overwritten)."""
    from ._check import need_output_path
    from .exceptions import ConfigError

    path = need_output_path("path", path, force=True)
    pb = _perfetto_protos()
    trace = r.trace
    if trace is None:
        raise ConfigError(
            "Result.to_perfetto: this run has no trace; run simulate(..., trace=True) to record one"
        )
    from perfetto.trace_builder.proto_builder import (  # type: ignore[import-untyped]
        StreamingTraceProtoBuilder,
    )

    TE = pb.TrackEvent
    names = dict(zip(r.tasks["task"].to_list(), r.tasks["name"].to_list(), strict=True))
    nr_cpus = int(r.config["nr_cpus"])
    end_ns = int(round(r.sim_time_s * 1e9))

    def task_name(pid: int) -> str:
        return str(names.get(pid, f"task {pid}"))

    # vmstat samples, merged into the event stream in time order
    rq = r.runqueue_timeline
    sample_ns = [int(round(t * 1e9)) for t in r.vmstat["time_s"].to_list()] if rq.size else []
    next_sample = 0

    with open(path, "wb") as f:
        out = StreamingTraceProtoBuilder(f)

        def packet(ts: int | None = None) -> Any:
            p = out.create_packet()
            p.trusted_packet_sequence_id = SEQUENCE_ID
            if ts is not None:
                p.timestamp = ts
            return p

        first = True
        for cpu in range(nr_cpus):
            for uuid, name, counter in (
                (CPU_TRACK_BASE + cpu, f"CPU {cpu}", False),
                (RUNQUEUE_TRACK_BASE + cpu, f"CPU {cpu} runqueue", True),
            ):
                p = packet()
                if first:
                    p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
                    first = False
                p.track_descriptor.uuid = uuid
                p.track_descriptor.name = name
                if counter:
                    p.track_descriptor.counter.unit_name = "tasks"
                out.write_packet(p)

        def emit_samples(upto_ns: int) -> None:
            nonlocal next_sample
            while next_sample < len(sample_ns) and sample_ns[next_sample] <= upto_ns:
                ts = sample_ns[next_sample]
                for cpu in range(nr_cpus):
                    p = packet(ts)
                    p.track_event.type = TE.TYPE_COUNTER
                    p.track_event.track_uuid = RUNQUEUE_TRACK_BASE + cpu
                    p.track_event.counter_value = int(rq[cpu, next_sample])
                    out.write_packet(p)
                next_sample += 1

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

        running = [0] * nr_cpus
        pending_flow: dict[int, int] = {}  # pid -> flow id of its last wake-up
        flow_id = 0
        last_ts = 0
        cols = ("time_ns", "cpu", "event", "pid", "next_pid", "target_cpu", "orig_cpu", "dest_cpu")
        for ts, cpu, event, pid, next_pid, target, orig, dest in trace.select(cols).iter_rows():
            emit_samples(ts)
            last_ts = ts
            if event == "sched_switch":
                if pid != 0:
                    p = packet(ts)
                    p.track_event.type = TE.TYPE_SLICE_END
                    p.track_event.track_uuid = CPU_TRACK_BASE + cpu
                    out.write_packet(p)
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
        emit_samples(last)
        for cpu, pid in enumerate(running):
            if pid != 0:
                p = packet(last)
                p.track_event.type = TE.TYPE_SLICE_END
                p.track_event.track_uuid = CPU_TRACK_BASE + cpu
                out.write_packet(p)
