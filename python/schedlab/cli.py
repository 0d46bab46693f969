"""The ``schedlab`` command: ``schedlab demo``, ``run``, ``sweep`` and ``measure``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import __version__, build_profile
from .exceptions import ConfigError, SchedlabError


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


def _cmd_run(args: argparse.Namespace) -> int:
    from . import workloads
    from .config import CostModel, Kernel, Machine
    from .run.simulation import simulate

    kernel = Kernel.preset(args.kernel)
    changes = _pairs(args.set, "--set")
    if changes:
        kernel = kernel.replace(**changes)
    machine = Machine.preset(args.machine)
    costs = CostModel.preset(machine).replace(**_pairs(args.cost, "--cost"))
    params = _pairs(args.param, "--param")
    if args.workload == "spinners":
        nice = [int(x) for x in args.nice.split(",")]
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


def _cmd_sweep(args: argparse.Namespace) -> int:
    from . import _core
    from .io.spec import load_spec, sweep_args
    from .run.checkpoint import load_checkpoint, sweep_fingerprint
    from .run.estimate import estimate, run_timing_sample
    from .run.execute import execute
    from .run.plan import plan_sweep

    output = _check_output(args.output, args.force)
    spec = load_spec(args.spec)
    if args.threads is not None:
        spec["threads"] = args.threads
    progress = not args.no_progress
    # planned lazily: counting needs no run, and memory stays bounded
    plan = plan_sweep(**sweep_args(spec), progress=progress, executor=None)
    valid = plan.count_valid()
    invalid = 0 if valid is None else plan.n_points - valid
    print(
        f"schedlab: {plan.n_runs} runs ({plan.n_points} points x {plan.replicates} "
        f"replicates{f'; invalid points: {invalid}' if invalid else ''}) to {args.output}",
        file=sys.stderr,
    )
    checkpoint = Path(args.checkpoint) if args.checkpoint else None
    fp = sweep_fingerprint(plan) if checkpoint else None
    rows = load_checkpoint(checkpoint, fp, plan) if checkpoint and fp else []
    # the time per run: from the checkpoint's finished runs, else from a
    # few timed runs (the sweep's own runs, not run again)
    timed = [r for r in rows if r["status"] != "error"]
    if not timed:
        timed = run_timing_sample(plan, {(r["point"], r["replicate"]) for r in rows})
        rows += timed
    print(f"schedlab: {estimate(plan, timed, plan.n_runs - len(rows))}", file=sys.stderr)
    df = execute(
        plan, plan.nthreads, progress, checkpoint=args.checkpoint, rows=rows, fingerprint=fp
    )
    df.write_parquet(
        output,
        metadata={
            "schedlab.spec": json.dumps(spec, default=str),
            "schedlab.version": _core.__version__,
            "schedlab.build_profile": _core.build_profile,
        },
    )
    ok = (df["status"] == "ok").sum()
    print(f"schedlab: {df.height} runs ({ok} ok) written to {args.output}", file=sys.stderr)
    return 0 if ok == df.height else 1


def _csv(text: str, conv: Any, flag: str) -> list[Any]:
    try:
        return [conv(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"invalid {flag}={text!r}: expected a comma-separated list") from None


def _change(text: str) -> dict[str, Any]:
    """A ``--change`` value, ``"key=value key=value"`` (keys: name, policy,
    rt_priority, nice, affinity — a comma-separated CPU list —,
    rt_runtime_us, rt_period_us), as ``measure``'s ``changes`` entry."""
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
        if not eq or key not in (*KEYS, "name"):
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
        df.write_parquet(output, metadata=metadata(df))
        print(f"schedlab: {df.height} runs written to {args.output}", file=sys.stderr)
    else:
        print(df)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="schedlab", description=__doc__)
    p.add_argument(
        "--version", action="version", version=f"schedlab {__version__} ({build_profile})"
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="run the built-in demo scenario")
    d.add_argument("--quick", action="store_true", help="shorter runs")
    d.add_argument("--no-progress", action="store_true")
    d.set_defaults(fn=_cmd_demo)
    r = sub.add_parser("run", help="run one simulation")
    r.add_argument("--machine", default="vm-2")
    r.add_argument("--kernel", default="v3.8")
    r.add_argument(
        "--workload", default="spinners", help="spinners, hackbench, pipe_pingpong, volano or aim7"
    )
    r.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="workload argument, e.g. --param groups=5 --param ipc=pipe",
    )
    r.add_argument("--set", action="append", metavar="FIELD=VALUE", help="kernel field override")
    r.add_argument("--cost", action="append", metavar="FIELD=VALUE", help="cost model override")
    r.add_argument("--nice", default="0,0,0", help="spinners: comma-separated nice values")
    r.add_argument("--run-us", type=float, default=None)
    r.add_argument("--sleep-us", type=float, default=None)
    r.add_argument("--yields", action="store_true")
    r.add_argument(
        "--duration",
        type=float,
        default=None,
        help="bound on simulated seconds (spinners: default 1)",
    )
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--json", action="store_true", help="print metrics as one JSON object")
    r.add_argument(
        "--perfetto",
        metavar="OUT.pftrace",
        default=None,
        help="also write the schedule as a Perfetto trace (needs schedlab[perfetto])",
    )
    r.set_defaults(fn=_cmd_run)
    sw = sub.add_parser("sweep", help="run a sweep spec (TOML) to a Parquet file")
    sw.add_argument("spec", help="the sweep spec (see schedlab.io.spec)")
    sw.add_argument(
        "-o",
        "--output",
        required=True,
        help="Parquet file to write (checked before the sweep runs)",
    )
    sw.add_argument("--force", action="store_true", help="overwrite an existing --output file")
    sw.add_argument("--threads", type=int, default=None)
    sw.add_argument(
        "--checkpoint", default=None, help="Parquet checkpoint: resume an interrupted sweep from it"
    )
    sw.add_argument("--no-progress", action="store_true")
    sw.set_defaults(fn=_cmd_sweep)
    me = sub.add_parser(
        "measure",
        help="run perf bench sched messaging|pipe on this host under perf stat",
    )
    me.add_argument("bench", choices=["hackbench", "pipe"])
    me.add_argument("--groups", default="1,2,5,10,20", help="hackbench: group counts")
    me.add_argument("--ipc", default="pipe,socket", help="hackbench: pipe and/or socket")
    me.add_argument("--mode", default="process,thread", help="process and/or thread")
    me.add_argument(
        "--loops", type=int, default=None, help="hackbench -l (default 200); pipe -l (20000)"
    )
    me.add_argument("--reps", type=int, default=3)
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
    me.add_argument("--perf", default="perf", help="the perf binary")
    me.add_argument("-o", "--output", default=None, help="Parquet file to write")
    me.add_argument("--force", action="store_true", help="overwrite an existing --output file")
    me.add_argument("--no-progress", action="store_true")
    me.set_defaults(fn=_cmd_measure)
    args = p.parse_args(argv)
    try:
        rc: int = args.fn(args)
        return rc
    except (SchedlabError, ValueError, TypeError, OverflowError) as e:
        # one line, whatever the message
        print(f"schedlab: error: {str(e).replace(chr(10), ' ')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("schedlab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
