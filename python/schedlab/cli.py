"""The ``schedlab`` command: ``schedlab demo`` and ``schedlab run``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import __version__, build_profile
from .exceptions import SchedlabError


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


def _cmd_run(args: argparse.Namespace) -> int:
    from .config import Kernel
    from .run import simulate
    from .workloads import spinners

    kernel = Kernel.preset(args.kernel)
    changes = {}
    for kv in args.set or []:
        if "=" not in kv:
            raise SystemExit(f"schedlab: error: --set expects FIELD=VALUE, got {kv!r}")
        k, v = kv.split("=", 1)
        changes[k] = _parse_value(v)
    if changes:
        kernel = kernel.replace(**changes)
    nice = [int(x) for x in args.nice.split(",")]
    w = spinners(nice=nice, run_us=args.run_us, sleep_us=args.sleep_us, yields=args.yields or None)
    r = simulate(args.machine, kernel, w, seed=args.seed, duration_s=args.duration)
    if args.json:
        print(json.dumps({"status": r.status, **r.metrics}))
    else:
        print(r)
        for k, v in r.metrics.items():
            print(f"{k:>20}  {v:,.6g}")
    return 0 if r.ok else 1


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
    r = sub.add_parser("run", help="run one simulation of spinners")
    r.add_argument("--machine", default="vm-2")
    r.add_argument("--kernel", default="v3.8")
    r.add_argument("--set", action="append", metavar="FIELD=VALUE", help="kernel field override")
    r.add_argument("--nice", default="0,0,0", help="comma-separated nice values, one per task")
    r.add_argument("--run-us", type=float, default=None)
    r.add_argument("--sleep-us", type=float, default=None)
    r.add_argument("--yields", action="store_true")
    r.add_argument("--duration", type=float, default=1.0, help="simulated seconds")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--json", action="store_true", help="print metrics as one JSON object")
    r.set_defaults(fn=_cmd_run)
    args = p.parse_args(argv)
    try:
        rc: int = args.fn(args)
        return rc
    except SchedlabError as e:
        print(f"schedlab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("schedlab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
