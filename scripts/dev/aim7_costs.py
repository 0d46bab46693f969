"""Derive ``sl.workloads.aim7``'s per-test costs from a frame of
``scripts/realkernel/measure_aim7.py`` and write them as the core's table
(``src/workload/aim7_costs.rs``) and the docs' table (between the markers
in ``docs/guide/workloads.md``).

    python scripts/dev/aim7_costs.py            # rewrite both
    python scripts/dev/aim7_costs.py --check    # fail if either is stale

The rules (docs/guide/workloads.md, "AIM7 measured here"), all on medians
over the frame's repetitions of runs with one child unless said otherwise;
``J`` is the run's jobs, times are reaim's (10 ms resolution):

- a job's ``user_ns``/``sys_ns`` = ``childU_tm``/``childS_tm`` / J; for the
  disk tests that sync, from the ``-y`` runs (no ``system("sync")``), at
  each file size;
- ``block_ns`` = (``parent_tm`` − the children's CPU time) / J, or 0 when
  that gap is within two ticks of reaim's resolution (20 ms over the run);
- ``syncs`` per job = (forks with syncs − forks without) / J / 2 (each
  ``system("sync")`` forks ``sh``, which forks ``sync``);
- per ``system("sync")``: ``sync_user_ns`` / ``sync_sys_ns`` = (user / system
  time with syncs − without) / (J × syncs), ``sync_io_ns`` = (blocked time
  with − without) / (J × syncs), each at least 0;
- the two file sizes: ``POOLSIZE 0`` (``FILESIZE`` only) and the shipped
  config's one-child size (``FILESIZE + POOLSIZE``); tests without files
  take the same numbers at both;
- ``shared_lines``: the CPU time per job two children measured over one,
  less the median of that excess ratio over the tests with no system time
  (what two busy vCPUs cost each other anyway), for tests with system time
  above reaim's resolution (20 ms over the run) and no files; in lines of
  ``vm-2``'s ``CostModel.xfer_llc_ns`` (the distance of its two CPUs); 0
  when not above the pure-user tests' spread.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FRAME = ROOT / "notebooks" / "data" / "aim7-real-vm2.parquet"
RUST = ROOT / "src" / "workload" / "aim7_costs.rs"
DOC = ROOT / "docs" / "guide" / "workloads.md"
BEGIN, END = "<!-- BEGIN aim7 costs -->", "<!-- END aim7 costs -->"
#: reaim's times are whole 10 ms ticks: a gap of two is noise
RESOLUTION_S = 0.02
FIELDS = ("user_ns", "sys_ns", "block_ns", "sync_user_ns", "sync_sys_ns", "sync_io_ns")


def xfer_llc_ns() -> int:
    """The per-line cost the shared lines are counted in: ``vm-2``'s
    ``CostModel.xfer_llc_ns`` (its two CPUs share the last-level cache)."""
    import schedlab as sl

    return int(sl.CostModel.preset("vm-2").xfer_llc_ns)


def _med(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def derive(df: Any) -> dict[str, Any]:
    """The table: ``{"small_kb", "large_kb", "measured", "tests": [...]}``."""
    rows = df.to_dicts()
    tests: list[str] = []
    for r in rows:
        if r["test"] != "compute" and r["test"] not in tests:
            tests.append(r["test"])
    large_pool = max(r["poolsize_kb"] for r in rows)
    filesize = rows[0]["filesize_kb"]

    def pick(test: str, tasks: int, syncs: bool, pool: int) -> list[dict[str, Any]]:
        sel = [
            r
            for r in rows
            if r["test"] == test
            and r["tasks"] == tasks
            and r["syncs"] == syncs
            and r["poolsize_kb"] == pool
        ]
        if not sel:
            raise SystemExit(
                f"the frame has no run of {test} at {tasks} tasks, syncs={syncs}, pool {pool}"
            )
        return sel

    def per_job(sel: list[dict[str, Any]]) -> dict[str, float]:
        j = sel[0]["jobs"]
        cpu = [r["childU_tm"] + r["childS_tm"] for r in sel]
        gap = statistics.median(r["parent_tm"] - c for r, c in zip(sel, cpu, strict=True))
        return {
            "user": _med(sel, "childU_tm") / j * 1e9,
            "sys": _med(sel, "childS_tm") / j * 1e9,
            "cpu": statistics.median(cpu) / j * 1e9,
            "block": (gap / j * 1e9) if gap > RESOLUTION_S else 0.0,
            "forks": _med(sel, "forks") / j,
            "jobs": j,
            "sys_s": _med(sel, "childS_tm"),
        }

    out = []
    excess: dict[str, float] = {}
    for t in tests:
        disk = t.startswith("disk_")
        costs = {}
        syncs = 0
        for size, pool in (("small", 0), ("large", large_pool)):
            if not disk:
                body = per_job(pick(t, 1, True, large_pool))
                costs[size] = {
                    "user_ns": body["user"],
                    "sys_ns": body["sys"],
                    "block_ns": body["block"],
                    "sync_user_ns": 0.0,
                    "sync_sys_ns": 0.0,
                    "sync_io_ns": 0.0,
                }
                continue
            w = per_job(pick(t, 1, True, pool))
            y = per_job(pick(t, 1, False, pool))
            n = round((w["forks"] - y["forks"]) / 2)
            syncs = max(syncs, n)
            if n == 0:
                # no system("sync") (disk_src): -y changes nothing, the
                # runs with the default flags are the body
                y = w
            costs[size] = {
                "user_ns": y["user"],
                "sys_ns": y["sys"],
                "block_ns": y["block"],
                "sync_user_ns": max(0.0, (w["user"] - y["user"]) / n) if n else 0.0,
                "sync_sys_ns": max(0.0, (w["sys"] - y["sys"]) / n) if n else 0.0,
                "sync_io_ns": max(0.0, (w["block"] - y["block"]) / n) if n else 0.0,
            }
        one = per_job(pick(t, 1, True, large_pool))
        two = per_job(pick(t, 2, True, large_pool))
        # two children ran 2 J jobs: their CPU per job against one child's
        excess[t] = (two["cpu"] / 2 - one["cpu"]) / one["cpu"] if one["cpu"] else 0.0
        out.append(
            {
                "name": t,
                "syncs": syncs,
                "small": {k: round(v) for k, v in costs["small"].items()},
                "large": {k: round(v) for k, v in costs["large"].items()},
                "jobs": one["jobs"],
                "excess": excess[t],
                "disk": disk,
                # system time above reaim's resolution over the run
                "has_sys": one["sys_s"] > RESOLUTION_S,
            }
        )
    line_ns = xfer_llc_ns()
    pure = [e["excess"] for e in out if not e["disk"] and not e["has_sys"]]
    base = statistics.median(pure)
    spread = max(abs(x - base) for x in pure)
    for e in out:
        e["base"] = base
        over = e["excess"] - base
        shared = not e["disk"] and e["has_sys"] and over > spread
        cpu = e["large"]["user_ns"] + e["large"]["sys_ns"]
        e["shared_lines"] = round(over * cpu / line_ns) if shared else 0
    first = rows[0]
    return {
        "small_kb": filesize,
        "large_kb": filesize + large_pool,
        "measured": f"{first['date'][:10]}, Linux {first['kernel_release']}, "
        f"{first['cpus']} CPUs ({first['cpu_model']})",
        "base_excess": base,
        "xfer_llc_ns": line_ns,
        "pure_spread": spread,
        "tests": out,
    }


#: workfile.compute ("Compute Server Mix, unchanged from AIM"), 820 hits
HITS = {
    "add_double": 50,
    "add_int": 30,
    "add_long": 30,
    "array_rtns": 10,
    "disk_cp": 10,
    "disk_rd": 30,
    "disk_src": 10,
    "disk_wrt": 20,
    "div_double": 40,
    "div_int": 30,
    "matrix_rtns": 50,
    "mem_rtns_1": 40,
    "mem_rtns_2": 40,
    "mul_double": 50,
    "mul_int": 30,
    "mul_long": 30,
    "new_raph": 40,
    "num_rtns_1": 40,
    "page_test": 50,
    "series_1": 40,
    "shared_memory": 10,
    "sieve": 30,
    "stream_pipe": 20,
    "string_rtns": 30,
    "trig_rtns": 40,
    "udp_test": 20,
}


def rust(table: dict[str, Any]) -> str:
    def cost(c: dict[str, int]) -> str:
        return "JobCost { " + ", ".join(f"{k}: {c[k]:_}" for k in FIELDS) + " }"

    lines = [
        "//! AIM7's per-test costs, measured (generated by `scripts/dev/aim7_costs.py`",
        "//! from `notebooks/data/aim7-real-vm2.parquet`, the frame of",
        "//! `scripts/realkernel/measure_aim7.py`; do not edit: rerun the script).",
        f"//! Measured {table['measured']}.",
        "",
        "use super::aim7::{JobCost, TestCost};",
        "",
        "/// The file size of the `small` measurement (reaim.config `FILESIZE`, `POOLSIZE 0`), KB.",
        f"pub const SMALL_FILE_KB: u64 = {table['small_kb']};",
        "/// The file size of the `large` measurement (`FILESIZE` + `POOLSIZE`, one child), KB.",
        f"pub const LARGE_FILE_KB: u64 = {table['large_kb']};",
        "",
        "/// The 26 tests of `workfile.compute`, in the workfile's order.",
        "#[rustfmt::skip]",
        "pub const TESTS: [TestCost; 26] = [",
    ]
    for e in table["tests"]:
        lines += [
            "    TestCost {",
            f'        name: "{e["name"]}",',
            f"        hits: {HITS[e['name']]},",
            f"        syncs: {e['syncs']},",
            f"        small: {cost(e['small'])},",
            f"        large: {cost(e['large'])},",
            f"        shared_lines: {e['shared_lines']:_},",
            "    },",
        ]
    lines += ["];", ""]
    return "\n".join(lines)


def markdown(table: dict[str, Any]) -> str:
    us = lambda ns: f"{ns / 1000:,.1f}"  # noqa: E731
    head = (
        "| test | hits | jobs/run | user µs | sys µs | blocked µs | syncs | sync user µs | "
        "sync sys µs | sync blocked µs | 2-child excess | shared lines |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = []
    for e in table["tests"]:
        s, lg = e["small"], e["large"]

        def two(k: str, s: dict[str, int] = s, lg: dict[str, int] = lg) -> str:
            return us(lg[k]) if s[k] == lg[k] else f"{us(s[k])} / {us(lg[k])}"

        body.append(
            f"| `{e['name']}` | {HITS[e['name']]} | {e['jobs']} | {two('user_ns')} | "
            f"{two('sys_ns')} | {two('block_ns')} | {e['syncs']} | {two('sync_user_ns')} | "
            f"{two('sync_sys_ns')} | "
            f"{two('sync_io_ns')} | {e['excess'] * 100:+.0f} % | {e['shared_lines']:,} |"
        )
    note = (
        f"\nMeasured {table['measured']}. Two numbers are the "
        f"{table['small_kb']} KB / {table['large_kb']} KB file sizes. The 2-child excess "
        f"of the tests without system time: median {table['base_excess'] * 100:+.1f} %, "
        f"spread ±{table['pure_spread'] * 100:.1f} %; lines are counted at vm-2's "
        f"`xfer_llc_ns` = {table['xfer_llc_ns']} ns. `jobs/run` is the runs with syncs and "
        f"the shipped config; each variant of a disk test ran enough jobs for ≥ 1 s.\n"
    )
    return head + "\n".join(body) + "\n" + note


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--frame", type=Path, default=FRAME)
    a = ap.parse_args(argv)
    import polars as pl

    table = derive(pl.read_parquet(a.frame))
    want_rs = rust(table)
    doc = DOC.read_text()
    i, j = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    want_doc = doc[:i] + "\n" + markdown(table) + doc[j:]
    stale = [
        p for p, w in ((RUST, want_rs), (DOC, want_doc)) if not p.exists() or p.read_text() != w
    ]
    if a.check:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is stale: run scripts/dev/aim7_costs.py", file=sys.stderr)
        return 1 if stale else 0
    RUST.write_text(want_rs)
    DOC.write_text(want_doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
