"""The ``schedlab`` command: ``schedlab demo``, ``run``, ``latency``, ``sweep`` and ``measure``."""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from . import __version__, build_profile, workloads
from .config import Kernel, Machine
from .exceptions import ConfigError, OutputError, SchedlabError

if TYPE_CHECKING:
    from .run.execute import SweepInterrupted
    from .run.plan import Plan

#: What ``schedlab sweep --help`` shows of the spec format (checked by the
#: tests: it loads, and holds every key ``schedlab.io.spec`` accepts).
SPEC_EXAMPLE = """\
machine = "vm-2"          # machine preset (default vm-2)
kernel = "v2.6.37"        # kernel preset (default v3.8)
replicates = 2            # runs per grid point (default 1)
seed = 3                  # each run's seed derives from it (default 0)
duration_s = 1.0          # optional bound on simulated seconds
threads = 2               # default: every core (--threads overrides it)
interval_s = 0.1          # accepted; no effect (sweep rows carry no vmstat)
[kernel_overrides]        # optional Kernel.replace(...) fields
compat_yield = true
[costs]                   # optional CostModel.replace(...) fields
context_switch_ns = 3000
[workload]                # required: kind, then the workload's arguments
kind = "hackbench"
groups = 2
loops = 20
[grid]                    # a list per key; every combination runs
migration_cost_ns = [0, 500000]
"workload.ipc" = ["pipe", "socket"]   # a dotted key needs the quotes
"""


def _plain(text: str) -> str:
    """Help text from a docstring, without its RST markup: ``x``, `x`,
    :role:`x` and a paragraph's closing ``::`` become plain text."""
    text = re.sub(r":[\w:.-]+:`([^`]*)`", r"\1", text)
    text = re.sub(r"``([^`]*)``", r"\1", text)
    text = re.sub(r"`([^`]*)`_?", r"\1", text)
    return re.sub(r"::$", ":", text, flags=re.MULTILINE)


def _preset_help(what: str, default: str, names: list[str]) -> str:
    return f"{what} preset (default: {default}); one of {', '.join(names)}"


def _preset_name(what: str, name: Any, names: list[str], where: str = "") -> Any:
    """``name`` if it is one of the presets ``names`` (or not a string: the
    type is checked later), else a ConfigError naming ``what`` (the flag or
    the spec key, in ``where``), the value and the presets."""
    if isinstance(name, str) and name not in names:
        raise ConfigError(f"invalid {what} {name!r}{where}: expected one of {', '.join(names)}")
    return name


def _parse_value(s: str) -> Any:
    low = s.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    run_demo(quick=args.quick, progress=not args.no_progress)
    return 0


def _pairs(items: list[str] | None, flag: str) -> dict[str, Any]:
    out = {}
    for kv in items or []:
        if "=" not in kv:
            raise SchedlabError(f"{flag} expects NAME=VALUE, got {kv!r}")
        k, v = kv.split("=", 1)
        out[k] = _parse_value(v)
    return out


def _configured(args: argparse.Namespace) -> tuple[Machine, Kernel, Any, float | None, Any]:
    """The machine, kernel, workload, duration and costs ``run``'s flags name."""
    from .config import CostModel

    kernel = Kernel.preset(_preset_name("--kernel", args.kernel, Kernel.presets()))
    changes = _pairs(args.set, "--set")
    if changes:
        kernel = kernel.replace(**changes)
    machine = Machine.preset(_preset_name("--machine", args.machine, Machine.presets()))
    costs = CostModel.preset(machine).replace(**_pairs(args.cost, "--cost"))
    params = _pairs(args.param, "--param")
    if args.workload == "spinners":
        nice = _csv(args.nice, int, "--nice")
        params = {
            "nice": nice,
            "run_us": args.run_us,
            "sleep_us": args.sleep_us,
            "yields": args.yields or None,
            **params,
        }
    if args.workload not in workloads.FACTORIES:
        raise SchedlabError(
            f"invalid --workload={args.workload!r}: expected one of "
            f"{', '.join(workloads.FACTORIES)}"
        )
    try:
        w = workloads.FACTORIES[args.workload](**params)
    except TypeError as e:
        raise SchedlabError(f"invalid --param for {args.workload}: {e}") from None
    duration = args.duration
    if duration is None and args.workload == "spinners":
        duration = 1.0
    return machine, kernel, w, duration, costs


def _cmd_run(args: argparse.Namespace) -> int:
    from .run.simulation import simulate

    machine, kernel, w, duration, costs = _configured(args)
    if args.perfetto is not None:
        # checked before the run: the path, and that the perfetto package is there
        _check_output(args.perfetto, force=True, flag="--perfetto")
        from .io.pftrace import perfetto_protos

        try:
            perfetto_protos()
        except ImportError as e:
            raise SchedlabError(f"--perfetto: {e}") from None
    r = simulate(
        machine,
        kernel,
        w,
        seed=args.seed,
        duration_s=duration,
        costs=costs,
        trace=args.perfetto is not None,
    )
    if args.perfetto is not None:
        r.to_perfetto(args.perfetto)
    if args.json:
        print(json.dumps({"status": r.status, **r.metrics}))
    else:
        print(r)
        for k, v in r.metrics.items():
            print(f"{k:>20}  {v:,.6g}")
    return 0 if r.ok else 1


def _check_output(path: str, force: bool, flag: str = "--output") -> Path:
    """An output path, checked before any run: not a directory, in a
    writable directory, and not an existing file unless ``force``."""
    from ._check import need_output_path

    return need_output_path(flag, path, force=force)


def _partial_path(output: Path) -> Path:
    """Where ``sweep`` without ``--checkpoint`` keeps an interrupted sweep's
    finished runs (a checkpoint, beside ``-o``): ``<output>.partial``."""
    return output.with_name(output.name + ".partial")


def _check_spec_presets(spec: dict[str, Any], path: str) -> None:
    """The spec's machine and kernel, refused by the key's name if no preset."""
    _preset_name("machine", spec.get("machine"), Machine.presets(), f" in {path}")
    _preset_name("kernel", spec.get("kernel"), Kernel.presets(), f" in {path}")


def _resume_from(checkpoint: Path | None, partial: Path, output: Path) -> tuple[Path | None, bool]:
    """The file a sweep resumes from — ``--checkpoint``, or the ``.partial``
    an interrupted run of the same command left — and whether it is that
    ``.partial``. Both at once are refused: neither is dropped silently."""
    if checkpoint is not None and partial.exists():
        raise ConfigError(
            f"invalid --checkpoint={str(checkpoint)!r}: {str(partial)!r} holds the finished "
            f"runs of an interrupted sweep to {str(output)!r} without --checkpoint; rerun "
            "without --checkpoint to resume from it, or remove it and its .sha256"
        )
    if checkpoint is not None:
        return checkpoint, False
    return (partial, True) if partial.exists() else (None, False)


def _load_resumed(source: Path, is_partial: bool, plan: Plan) -> tuple[str, pl.DataFrame]:
    """The plan's fingerprint and the finished rows of ``source``."""
    from .run.checkpoint import load_checkpoint, sweep_fingerprint

    fp = sweep_fingerprint(plan)
    try:
        rows = load_checkpoint(source, fp, plan)
    except ConfigError as e:
        if not is_partial:
            raise
        raise ConfigError(
            f"{e} (it is what an interrupted schedlab sweep to the same -o kept; remove it "
            "and its .sha256 to start over)"
        ) from None
    if is_partial:
        print(
            f"schedlab: resuming from {source}: {rows.height} finished runs of an interrupted "
            "sweep",
            file=sys.stderr,
        )
    return fp, rows


def _keep_interrupted(
    exc: SweepInterrupted, plan: Plan, where: Path, fp: str | None, written: bool
) -> int:
    """Ctrl-C: keep the finished runs in ``where`` (a checkpoint the same
    command resumes from; ``written``: execute already wrote it), say so,
    and return the exit status 130."""
    from .run.checkpoint import save_checkpoint, sweep_fingerprint

    n = exc.partial.height
    if not n:
        print("schedlab: interrupted: no run finished", file=sys.stderr)
        return 130
    if not written:
        print(
            f"schedlab: interrupted: writing the {n} finished runs to {where} "
            "(Ctrl-C again to drop them)",
            file=sys.stderr,
        )
        try:
            save_checkpoint(where, exc.partial, fp or sweep_fingerprint(plan))
        except OutputError as e:  # a full disk: elsewhere, and say where
            e.partial = exc.partial
            _keep_sweep_rows(e, plan, fp, _fallbacks(where, where), "--checkpoint")
            return 130
    print(
        f"schedlab: interrupted: {n} of {plan.n_runs} runs finished, kept in {where}; run the "
        f"same command again to resume (remove {where} and {where}.sha256 to start over)",
        file=sys.stderr,
    )
    return 130


def _print_count(plan: Plan, output: str) -> None:
    valid = plan.count_valid()
    invalid = 0 if valid is None else plan.n_points - valid
    print(
        f"schedlab: {plan.n_runs} runs ({plan.n_points} points x {plan.replicates} "
        f"replicates{f'; invalid points: {invalid}' if invalid else ''}) to {output}",
        file=sys.stderr,
    )


def _write_sweep(df: pl.DataFrame, output: Path, spec: dict[str, Any]) -> None:
    """The sweep's frame to ``output`` (atomically), the spec and version in
    its metadata."""
    from . import _core
    from .io.output import write_parquet

    meta = {
        "schedlab.spec": json.dumps(spec, default=str),
        "schedlab.version": _core.__version__,
        "schedlab.build_profile": _core.build_profile,
    }
    write_parquet(df, output, meta, param="--output")


#: The exit status when an output file cannot be written (sysexits' EX_IOERR).
EXIT_IO = 74


def _keep_sweep_rows(
    err: OutputError, plan: Plan, fp: str | None, places: list[Path], resume: str
) -> int:
    """A sweep whose output (or checkpoint) could not be written: keep its
    finished rows (``err.partial``) as a checkpoint at the first of
    ``places`` that takes it, say where and how to resume (``resume``: the
    flag to add), and return ``EXIT_IO``."""
    from .io.output import keep_frame
    from .run.checkpoint import save_checkpoint, sweep_fingerprint

    df = err.partial if isinstance(err.partial, pl.DataFrame) else None
    if df is None or df.height == 0:
        print(f"schedlab: error: {err}", file=sys.stderr)
        return EXIT_IO
    fingerprint = fp or sweep_fingerprint(plan)
    kept = keep_frame(err, df, places, lambda p, d: save_checkpoint(p, d, fingerprint))
    how = ""
    if kept.kept is not None:
        same = kept.kept == places[0] and not resume
        flag = "" if same else f" with --checkpoint {kept.kept}"
        how = f"; free space and run the same command again{flag} to finish from them"
    print(f"schedlab: error: {kept}{how}", file=sys.stderr)
    return EXIT_IO


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .io.spec import load_spec, sweep_args
    from .run.checkpoint import check_checkpoint_path, remove_checkpoint
    from .run.estimate import check_memory, estimate, run_timing_sample
    from .run.execute import SweepInterrupted, execute
    from .run.plan import plan_sweep
    from .run.rows import FinishedRows

    output = _check_output(args.output, args.force)
    checkpoint = check_checkpoint_path("--checkpoint", args.checkpoint) if args.checkpoint else None
    limit = None if args.memory_limit is None else _size(args.memory_limit, "--memory-limit")
    spec = load_spec(args.spec)
    if args.threads is not None:
        spec["threads"] = args.threads
    _check_spec_presets(spec, args.spec)
    partial = _partial_path(output)
    source, from_partial = _resume_from(checkpoint, partial, output)
    progress = not args.no_progress
    # planned lazily: counting needs no run, and memory stays bounded
    plan = plan_sweep(**sweep_args(spec), progress=progress, executor=None)
    _print_count(plan, args.output)
    check_memory(plan, plan.nthreads, limit, "--memory-limit")
    rows = FinishedRows()
    fp = None
    if source is not None:
        fp, resumed = _load_resumed(source, from_partial, plan)
        rows.add_frame(resumed)
    try:
        # the time per run: from the checkpoint's finished runs, else from a
        # few timed runs (the sweep's own runs, not run again)
        have = rows.frame()
        walls = have.filter(pl.col("status") != "error")["wall_s"].to_list() if len(rows) else []
        if not walls:
            timed = run_timing_sample(plan, set(_keys(have)))
            rows.extend(timed)
            walls = [r["wall_s"] for r in timed if r["status"] != "error"]
        print(f"schedlab: {estimate(plan, walls, plan.n_runs - len(rows))}", file=sys.stderr)
        df = execute(
            plan,
            plan.nthreads,
            progress,
            checkpoint=checkpoint,
            rows=rows,
            fingerprint=fp,
            memory_limit=limit,
        )
    except SweepInterrupted as e:
        # written: execute kept them in the checkpoint (None if it failed)
        written = checkpoint is not None and e.checkpoint is not None
        return _keep_interrupted(e, plan, checkpoint or partial, fp, written)
    except KeyboardInterrupt:  # in the timing runs: only the rows resumed, already on disk
        stop = SweepInterrupted(rows.frame())
        return _keep_interrupted(stop, plan, checkpoint or partial, fp, source is not None)
    except OutputError as e:  # the checkpoint could not be written
        return _keep_sweep_rows(e, plan, fp, _fallbacks(partial, checkpoint), "--checkpoint")
    try:
        _write_sweep(df, output, spec)
    except OutputError as e:
        if checkpoint is not None:
            print(
                f"schedlab: error: {e}; the {df.height} runs are all in --checkpoint "
                f"{checkpoint}: run the same command again to write {args.output} from it",
                file=sys.stderr,
            )
            return EXIT_IO
        return _keep_sweep_rows(e, plan, fp, _fallbacks(partial, None), "")
    if from_partial:
        remove_checkpoint(partial)
    ok = (df["status"] == "ok").sum()
    print(f"schedlab: {df.height} runs ({ok} ok) written to {args.output}", file=sys.stderr)
    return 0 if ok == df.height else 1


def _keys(df: pl.DataFrame) -> list[tuple[int, int]]:
    """The (point, replicate) of each row of a sweep frame."""
    if df.height == 0:
        return []
    return list(zip(df["point"].to_list(), df["replicate"].to_list(), strict=True))


def _fallbacks(partial: Path, checkpoint: Path | None) -> list[Path]:
    """Where a sweep's rows go when its output or checkpoint cannot take
    them: ``OUTPUT.partial`` (the same command resumes from it), unless it
    is the checkpoint that failed, then a file in the temporary directory
    (``fallback_paths``)."""
    from .io.output import fallback_paths

    places = fallback_paths(partial, "")
    return places[1:] if checkpoint is not None else places


_SIZE_UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def _size(text: str, flag: str) -> int:
    """A byte count with an optional K, M, G or T (powers of 1000) suffix."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)B?\s*", text, flags=re.IGNORECASE)
    value = float(m.group(1)) * _SIZE_UNITS[m.group(2).upper()] if m else 0.0
    if not m or not 1 <= value < 2**63:
        raise ConfigError(
            f"invalid {flag}={text!r}: expected a size in bytes, e.g. 500M, 8G or 2000000"
        )
    return int(value)


def _csv(text: str, conv: Any, flag: str) -> list[Any]:
    """A comma-separated flag value: every item given (``1,,2`` is refused)."""
    items = [x.strip() for x in text.split(",")]
    try:
        if all(items):
            return [conv(x) for x in items]
    except ValueError:
        pass
    raise ConfigError(
        f"invalid {flag}={text!r}: expected a comma-separated list of values, none empty"
    )


def _write_frame(df: pl.DataFrame, output: Path, flag: str, what: str, meta: Any = None) -> int:
    """``df`` to ``output`` (atomically); if that fails, kept beside it or in
    the temporary directory (``keep_frame``), the error saying where, and
    the exit status ``EXIT_IO``."""
    from .io.output import fallback_paths, keep_frame, write_parquet

    try:
        write_parquet(df, output, meta, param=flag)
    except OutputError as e:
        places = fallback_paths(output, ".unsaved.parquet")
        kept = keep_frame(e, df, places, lambda p, d: write_parquet(d, p, meta, param="kept"))
        print(f"schedlab: error: {kept}", file=sys.stderr)
        return EXIT_IO
    print(f"schedlab: {df.height} {what} written to {output}", file=sys.stderr)
    return 0


def _change(text: str) -> dict[str, Any]:
    """A ``--change`` value, ``"key=value key=value"`` (keys: name, policy,
    rt_priority, nice, affinity — a comma-separated CPU list —,
    rt_runtime_us, rt_period_us, and ``cgroup.<setting>`` for a task group:
    ``cgroup.quota_us=50000``), as ``measure``'s ``changes`` entry."""
    from .host.changes import KEYS

    out: dict[str, Any] = {}
    if not text.split():
        raise ConfigError(
            "invalid --change='': expected key=value pairs (the plain run is always measured)"
        )
    for part in text.split():
        key, eq, val = part.partition("=")
        if key in out:
            raise ConfigError(f"invalid --change={text!r}: {key} given twice")
        if key.startswith("cgroup.") and eq:
            # cgroup.<setting>=value: the run's task group (schedlab.Group's settings)
            from .host.cgroup import GROUP_KEYS

            sub = key[len("cgroup.") :]
            if sub not in GROUP_KEYS:
                raise ConfigError(
                    f"invalid --change={text!r}: {key}: expected cgroup.<setting> with <setting> "
                    f"one of {', '.join(GROUP_KEYS)}"
                )
            group = out.setdefault("cgroup", {})
            if sub in group:
                raise ConfigError(f"invalid --change={text!r}: {key} given twice")
            if sub == "idle":
                group[sub] = val in ("1", "yes", "true", "True")
            else:
                try:
                    group[sub] = int(val)
                except ValueError:
                    raise ConfigError(
                        f"invalid --change {key}={val!r}: expected an integer"
                    ) from None
            continue
        if key == "cgroup" or not eq or key not in (*KEYS, "name"):
            raise ConfigError(
                f"invalid --change={text!r}: expected key=value pairs with keys from name, "
                f"{', '.join(KEYS)}"
            )
        if key in ("name", "policy"):
            out[key] = val
        elif key == "affinity":
            out[key] = _csv(val, int, "--change affinity")
        else:
            try:
                out[key] = int(val)
            except ValueError:
                raise ConfigError(f"invalid --change {key}={val!r}: expected an integer") from None
    return out


def _cmd_measure(args: argparse.Namespace) -> int:
    from .host.measurement import measure, metadata

    output = _check_output(args.output, args.force) if args.output else None
    aim7_only = [f for f, v in (("--reaim", args.reaim), ("--children", args.children),
                                ("--jobs", args.jobs)) if v is not None]  # fmt: skip
    if aim7_only and (args.bench != "aim7" or args.sched_latency):
        what = "--sched-latency" if args.bench == "aim7" else f"measure {args.bench}"
        raise ConfigError(f"invalid {aim7_only[0]} with {what}: it is measure aim7's")
    if args.bench in ("rt-app", "record"):
        return _cmd_measure_script(args, output)
    if args.target:
        raise ConfigError(
            f"invalid argument {args.target[0]!r}: measure {args.bench} takes options only "
            "(a file or command goes with 'measure rt-app FILE' or 'measure record -- CMD')"
        )
    if args.sched_latency:
        return _cmd_measure_latency(args, output)
    if args.bench == "aim7":
        return _cmd_measure_aim7(args, output)
    kw: dict[str, Any] = {
        "mode": _csv(args.mode, str, "--mode"),
        "reps": args.reps,
        "perf": args.perf,
        "progress": not args.no_progress,
    }
    if args.loops is not None:
        kw["loops"] = args.loops
    if args.bench == "hackbench":
        kw["groups"] = _csv(args.groups, int, "--groups")
        kw["ipc"] = _csv(args.ipc, str, "--ipc")
    if args.pinned is not None:
        pins = _csv(args.pinned, str, "--pinned")
        bad = [x for x in pins if x not in ("yes", "no")]
        if bad or not pins:
            raise ConfigError(f"invalid --pinned={args.pinned!r}: expected no, yes or no,yes")
        kw["pinned"] = [x == "yes" for x in pins]
    if args.change:
        kw["changes"] = [_change(c) for c in args.change]
    df = measure(args.bench, **kw)
    if output is not None:
        return _write_frame(df, output, "--output", "runs", metadata(df))
    print(df)
    return 0


def _cmd_measure_aim7(args: argparse.Namespace, output: Path | None) -> int:
    """``measure aim7 --reaim DIR``: re-aim-7's load points (``host.aim7``)."""
    from .host.measurement import measure, metadata

    given = [
        flag
        for flag, v, default in (
            ("--groups", args.groups, _GROUPS),
            ("--ipc", args.ipc, _IPC),
            ("--mode", args.mode, _MODE),
            ("--loops", args.loops, None),
            ("--pinned", args.pinned, None),
            ("--perf", args.perf, "perf"),
        )
        if v != default
    ] + ["--change"] * bool(args.change)
    if given:
        raise ConfigError(
            f"invalid {given[0]} for measure aim7: it is an option of the perf benches; "
            "aim7 takes --reaim, --children, --jobs and --reps"
        )
    if args.reaim is None:
        raise ConfigError(
            "invalid measure aim7 without --reaim: give the directory of a re-aim-7 build "
            "(reaim, workfile.compute, reaim.config); schedlab does not ship it"
        )
    kw: dict[str, Any] = {"reps": args.reps, "progress": not args.no_progress}
    kw["reaim"] = args.reaim
    if args.children is not None:
        kw["children"] = _csv(args.children, int, "--children")
    if args.jobs is not None:
        kw["jobs"] = args.jobs
    df = measure("aim7", **kw)
    if output is not None:
        return _write_frame(df, output, "--output", "runs", metadata(df))
    print(df)
    return 0


def _cmd_measure_script(args: argparse.Namespace, output: Path | None) -> int:
    """``measure rt-app FILE``: rt-app's runs of a description, a row per
    thread and repetition; ``measure record -- CMD``: a schedule recorded
    (tracefs or perf sched record), as the text ``workloads.from_trace`` reads."""
    from .host import rtapp

    if args.bench == "rt-app":
        if len(args.target) != 1:
            raise ConfigError(
                f"invalid arguments {args.target!r}: expected one rt-app JSON file "
                "(schedlab measure rt-app FILE.json)"
            )
        df = rtapp.measure_rt_app(args.target[0], reps=args.reps, perf=args.perf)
        if output is not None:
            return _write_frame(df, output, "--output", "runs")
        print(df)
        return 0
    cmd = list(args.target)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise ConfigError("invalid arguments: expected a command (schedlab measure record -- CMD)")
    if output is None:
        raise ConfigError(
            "invalid arguments: measure record needs -o FILE.txt (the schedule's text; with "
            "perf, the perf.data is kept beside it)"
        )
    info = rtapp.record_schedule(cmd, output, method=args.method, perf=args.perf)
    how = (
        f"perf.data: {info['data']}"
        if info["method"] == "perf"
        else f"tracefs, {info['lost']} lost"
    )
    print(f"wrote {info['text']} ({how}); command exit status {info['status']}")
    return 0


def _cmd_latency(args: argparse.Namespace) -> int:
    from .analysis.latency import format_latency
    from .run.simulation import simulate

    output = _check_output(args.output, args.force) if args.output else None
    machine, kernel, w, duration, costs = _configured(args)
    r = simulate(machine, kernel, w, seed=args.seed, duration_s=duration, costs=costs, latency=True)
    df = r.latency(by=args.by, kind=args.kind)
    print(format_latency(df, sort=args.sort))
    if output is not None and _write_frame(df, output, "--output", "rows"):
        return EXIT_IO
    return 0 if r.ok else 1


def _cmd_measure_latency(args: argparse.Namespace, output: Path | None) -> int:
    from .host.sched_latency import measure_latency

    if args.bench != "hackbench" or args.pinned is not None or args.change:
        raise ConfigError(
            "invalid --sched-latency: it records hackbench only, without --pinned or --change"
        )
    kw: dict[str, Any] = {"loops": 200 if args.loops is None else args.loops}
    df = measure_latency(
        groups=_csv(args.groups, int, "--groups"),
        ipc=_csv(args.ipc, str, "--ipc"),
        mode=_csv(args.mode, str, "--mode"),
        reps=args.reps,
        perf=args.perf,
        progress=not args.no_progress,
        **kw,
    )
    if output is not None:
        return _write_frame(df, output, "--output", "task rows")
    print(df)
    return 0


def _sweep_epilog() -> str:
    example = "".join(f"  {line}\n" for line in SPEC_EXAMPLE.splitlines())
    notes = [
        "Grid keys: any Kernel or CostModel field, machine and kernel (preset names), and "
        '"workload.<argument>" (quoted).',
        f"Workload kinds: {', '.join(workloads.FACTORIES)}.",
        f"Machine presets: {', '.join(Machine.presets())}.",
        f"Kernel presets: {', '.join(Kernel.presets())}.",
        "Ctrl-C keeps the finished runs: in --checkpoint if given, else in OUTPUT.partial "
        "(a checkpoint beside -o, with its .sha256); the same command resumes from it and "
        "removes it once OUTPUT is written.",
        "Exit status: 0 if every run is ok, 1 if some are not, 2 for bad input, 74 if a file "
        "cannot be written (the finished runs are kept, the message says where), 130 on Ctrl-C.",
    ]
    return (
        "SPEC is a TOML file (schedlab.io.spec); only [workload] and its kind are "
        f"required:\n\n{example}\n"
        + "\n".join(textwrap.fill(n, 79, break_on_hyphens=False) for n in notes)
    )


def _run_parser(sub: Any) -> None:
    r = sub.add_parser("run", help="run one simulation", description="Run one simulation.")
    _config_args(r)
    r.add_argument("--json", action="store_true", help="print metrics as one JSON object")
    r.add_argument(
        "--perfetto",
        metavar="OUT.pftrace",
        default=None,
        help="also write the schedule as a Perfetto trace (needs schedlab[perfetto])",
    )
    r.set_defaults(fn=_cmd_run)


def _latency_parser(sub: Any) -> None:
    from .analysis.latency import BY, KINDS

    la = sub.add_parser(
        "latency",
        help="one simulation's scheduling delays, as perf sched latency prints them",
        description="Run one simulation with latency=True and print each task's (or "
        "group's) scheduling delays as perf sched latency does: count, average and "
        "maximum delay.",
    )
    _config_args(la)
    la.add_argument("--by", default="task", choices=BY, help="grouping (default: task)")
    la.add_argument(
        "--kind",
        default="all",
        choices=KINDS,
        help="all delays (perf's) or wake-up delays only (default: all)",
    )
    la.add_argument("--sort", default="max_us", help="column to sort by (default: max_us)")
    la.add_argument("-o", "--output", default=None, help="also write the frame (Parquet)")
    la.add_argument("--force", action="store_true", help="overwrite an existing --output file")
    la.set_defaults(fn=_cmd_latency)


def _config_args(r: Any) -> None:
    """The flags that configure one simulation (``run``, ``latency``)."""
    r.add_argument(
        "--machine", default="vm-2", help=_preset_help("machine", "vm-2", Machine.presets())
    )
    r.add_argument(
        "--kernel", default="v3.8", help=_preset_help("kernel", "v3.8", Kernel.presets())
    )
    r.add_argument(
        "--workload",
        default="spinners",
        help=f"the workload (default: spinners); one of {', '.join(workloads.FACTORIES)}",
    )
    r.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="workload argument, e.g. --param groups=5 --param ipc=pipe",
    )
    r.add_argument("--set", action="append", metavar="FIELD=VALUE", help="kernel field override")
    r.add_argument("--cost", action="append", metavar="FIELD=VALUE", help="cost model override")
    r.add_argument(
        "--nice", default="0,0,0", help="spinners: comma-separated nice values (default: 0,0,0)"
    )
    r.add_argument(
        "--run-us",
        type=float,
        default=None,
        help="spinners: CPU time of each loop, in µs (default: spin without end)",
    )
    r.add_argument(
        "--sleep-us", type=float, default=None, help="spinners: sleep after each loop, in µs"
    )
    r.add_argument("--yields", action="store_true", help="spinners: sched_yield() as they spin")
    r.add_argument(
        "--duration",
        type=float,
        default=None,
        help="bound on simulated seconds (spinners: default 1)",
    )
    r.add_argument("--seed", type=int, default=0, help="the run's seed (default: 0)")


def _sweep_parser(sub: Any) -> None:
    sw = sub.add_parser(
        "sweep",
        help="run a sweep spec (TOML) to a Parquet file",
        description="Run a sweep spec (TOML) to a Parquet file, a row per run.",
        epilog=_sweep_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sw.add_argument("spec", metavar="SPEC", help="the sweep spec, a TOML file (format below)")
    sw.add_argument(
        "-o",
        "--output",
        metavar="OUTPUT",
        required=True,
        help="Parquet file to write (checked before the sweep runs)",
    )
    sw.add_argument("--force", action="store_true", help="overwrite an existing --output file")
    sw.add_argument(
        "--threads", type=int, default=None, help="threads (default: the spec's, else every core)"
    )
    sw.add_argument(
        "--checkpoint",
        default=None,
        help="Parquet checkpoint written as runs finish: resume an interrupted (or killed) "
        "sweep from it",
    )
    sw.add_argument(
        "--memory-limit",
        metavar="SIZE",
        default=None,
        help="refuse a sweep whose estimated peak memory is above SIZE (e.g. 4G; default: "
        "half the memory this process may use)",
    )
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    sw.set_defaults(fn=_cmd_sweep)


_GROUPS, _IPC, _MODE = "1,2,5,10,20", "pipe,socket", "process,thread"


def _measure_parser(sub: Any) -> None:
    me = sub.add_parser(
        "measure",
        help="run perf bench sched messaging|pipe or rt-app on this host under perf stat, "
        "or record a command's schedule",
        description="Run perf bench sched messaging (hackbench) or pipe, or an rt-app "
        "description, on this host under perf stat; or record a command's schedule "
        "(through tracefs where it can be written, else perf sched record).",
    )
    me.add_argument(
        "bench",
        choices=["hackbench", "pipe", "aim7", "rt-app", "record"],
        help="the benchmark; aim7 --reaim DIR runs re-aim-7's compute mix at --children; "
        "rt-app FILE.json runs an rt-app description (a row per thread "
        "and repetition); record -o OUT.txt -- CMD records CMD's schedule for "
        "workloads.from_trace and compare_schedule",
    )
    me.add_argument("target", nargs="*", help="rt-app: the JSON file; record: -- CMD ...")
    me.add_argument(
        "--groups", default=_GROUPS, help="hackbench: group counts (default: 1,2,5,10,20)"
    )
    me.add_argument("--ipc", default=_IPC, help="hackbench: pipe and/or socket (default: both)")
    me.add_argument("--mode", default=_MODE, help="process and/or thread (default: both)")
    me.add_argument(
        "--reaim",
        default=None,
        help="aim7: re-aim-7's build directory (reaim, workfile.compute, reaim.config)",
    )
    me.add_argument("--children", default=None, help="aim7: children counts (default: 1,2,4)")
    me.add_argument("--jobs", type=int, default=None, help="aim7: jobs per child (default 100)")
    me.add_argument(
        "--loops", type=int, default=None, help="hackbench -l (default 200); pipe -l (20000)"
    )
    me.add_argument("--reps", type=int, default=3, help="repetitions of each (default: 3)")
    me.add_argument(
        "--pinned",
        default=None,
        help="no and/or yes: under taskset -c 0 (default: no for hackbench, both for pipe)",
    )
    me.add_argument(
        "--change",
        action="append",
        default=[],
        help="also measure under a change, e.g. 'policy=fifo rt_priority=1', 'policy=batch', "
        "'nice=5', 'affinity=0', 'policy=fifo rt_runtime_us=-1' (repeatable; the plain run is "
        "always measured)",
    )
    me.add_argument(
        "--sched-latency",
        action="store_true",
        help="hackbench under perf sched record, read with perf sched latency -p: a row per "
        "task and run (schedlab.host.sched_latency)",
    )
    me.add_argument(
        "--method",
        choices=["auto", "tracefs", "perf"],
        default="auto",
        help="record: tracefs (whole, refused when events were lost), perf (perf sched "
        "record) or auto (tracefs where writable; default)",
    )
    me.add_argument("--perf", default="perf", help="the perf binary (default: perf)")
    me.add_argument("-o", "--output", default=None, help="Parquet file to write")
    me.add_argument("--force", action="store_true", help="overwrite an existing --output file")
    me.add_argument("--no-progress", action="store_true", help="no progress bar")
    me.set_defaults(fn=_cmd_measure)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="schedlab", description=_plain(__doc__ or ""))
    p.add_argument(
        "--version", action="version", version=f"schedlab {__version__} ({build_profile})"
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="run the built-in demo scenario")
    d.add_argument("--quick", action="store_true", help="shorter runs")
    d.add_argument("--no-progress", action="store_true", help="no progress bar")
    d.set_defaults(fn=_cmd_demo)
    _run_parser(sub)
    _latency_parser(sub)
    _sweep_parser(sub)
    _measure_parser(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    # `measure record -- CMD ...`: the command is everything after "--".
    tail: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, tail = argv[:cut], argv[cut + 1 :]
    args = p.parse_args(argv)
    if tail:
        if getattr(args, "bench", None) != "record":
            p.error("'--' only goes before the command of 'schedlab measure record'")
        args.target = [*args.target, *tail]
    try:
        rc: int = args.fn(args)
        return rc
    except (SchedlabError, ValueError, TypeError, OverflowError) as e:
        # one line, whatever the message; EXIT_IO for a file the command writes
        print(f"schedlab: error: {str(e).replace(chr(10), ' ')}", file=sys.stderr)
        return EXIT_IO if isinstance(e, OutputError) else 2
    except KeyboardInterrupt:
        print("schedlab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
