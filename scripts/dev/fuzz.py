"""Run the properties of tests/api/test_properties.py (constructors, workloads,
simulate, sweep) and tests/api/test_properties_host.py (calibrate's frames,
perf's parsers on arbitrary bytes, measure's runner, bisect's arguments)
with many more examples than CI (the hypothesis ``fuzz`` profile, a fresh
random stream each round), for a stretch of wall time, and print the
counts: calls per target, outcomes by kind (ok / each error class / a
library warning), failures.

    python scripts/dev/fuzz.py --minutes 30 [--examples 500] [-k simulate]
    python scripts/dev/fuzz.py --minutes 10 -k "calibrate or parse or measure or bisect"

Each round is one pytest process per test (so a hang or an abort loses one
round, not the stretch); a round past --round-timeout is counted as a hang.
Outputs of failing rounds are kept in --logs. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
API_TESTS = ROOT / "tests" / "api"
SUITES = [API_TESTS / "test_properties.py", API_TESTS / "test_properties_host.py"]


def collect(k: str | None) -> list[str]:
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", *map(str, SUITES)]
    if k:
        cmd += ["-k", k]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    return [line for line in out.splitlines() if "::" in line]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30.0, help="wall time to spend (default 30)")
    ap.add_argument("--examples", type=int, default=500, help="max_examples per round")
    ap.add_argument("-k", default="test_prop_", help="pytest -k (default: the properties)")
    ap.add_argument("--round-timeout", type=float, default=900.0, help="seconds per round")
    ap.add_argument("--logs", type=Path, default=Path("fuzz-logs"), help="where failing rounds go")
    ap.add_argument("--json", type=Path, default=None, help="also write the counts here")
    a = ap.parse_args()

    tests = collect(a.k)
    if not tests:
        print("no tests selected", file=sys.stderr)
        return 2
    outcomes: Counter[tuple[str, str]] = Counter()
    slowest: dict[str, float] = {}
    rounds: Counter[str] = Counter()
    failures: list[dict[str, str]] = []
    start = time.monotonic()
    deadline = start + a.minutes * 60
    n = 0
    while time.monotonic() < deadline:
        test = tests[n % len(tests)]
        n += 1
        with tempfile.TemporaryDirectory() as tmp:
            counts = Path(tmp) / "counts.json"
            env = dict(
                os.environ,
                SCHEDLAB_HYPOTHESIS="fuzz",
                SCHEDLAB_FUZZ_EXAMPLES=str(a.examples),
                SCHEDLAB_FUZZ_COUNTS=str(counts),
            )
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", test]
            try:
                p = subprocess.run(
                    cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=a.round_timeout
                )
                status = "passed" if p.returncode == 0 else f"failed(rc={p.returncode})"
                output = p.stdout + p.stderr
            except subprocess.TimeoutExpired as e:
                status = "hang"
                output = f"round timed out after {a.round_timeout} s\n{e.stdout or ''}"
            rounds[status] += 1
            if counts.exists():
                data = json.loads(counts.read_text())
                for t, o, c in data["outcomes"]:
                    outcomes[(t, o)] += c
                for t, s in data["slowest_s"].items():
                    slowest[t] = max(slowest.get(t, 0.0), s)
        if status != "passed":
            a.logs.mkdir(parents=True, exist_ok=True)
            log = a.logs / f"round{n:04d}.log"
            log.write_text(output)
            m = re.search(r"^E\s+(AssertionError.*)$", output, re.M)
            failures.append({"test": test, "status": status, "log": str(log),
                             "error": m.group(1)[:300] if m else output[-300:]})  # fmt: skip
            print(f"[{time.monotonic() - start:7.0f}s] {test}: {status} -> {log}", flush=True)
        else:
            print(f"[{time.monotonic() - start:7.0f}s] {test}: passed", flush=True)

    elapsed = time.monotonic() - start
    print(f"\n{n} rounds in {elapsed / 60:.1f} min ({a.examples} examples per round): "
          + ", ".join(f"{k} {v}" for k, v in sorted(rounds.items())))  # fmt: skip
    targets = sorted({t for t, _ in outcomes})
    print(f"\n{'target':34} {'calls':>8} {'slowest_s':>9}  outcomes")
    for t in targets:
        kinds = {o: c for (tt, o), c in outcomes.items() if tt == t}
        total = sum(c for o, c in kinds.items() if not o.startswith(("error_row", "row_", "warn:")))
        detail = ", ".join(f"{o} {c}" for o, c in sorted(kinds.items(), key=lambda x: -x[1]))
        print(f"{t:34} {total:8} {slowest.get(t, 0):9.2f}  {detail}")
    print(f"\nfailures: {len(failures)}")
    for f in failures:
        print(f"  {f['test']} {f['status']}: {f['error']}  ({f['log']})")
    if a.json:
        a.json.write_text(
            json.dumps(
                {
                    "rounds": dict(rounds),
                    "minutes": elapsed / 60,
                    "examples_per_round": a.examples,
                    "outcomes": [[t, o, c] for (t, o), c in sorted(outcomes.items())],
                    "slowest_s": slowest,
                    "failures": failures,
                },
                indent=1,
            )
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
