#!/usr/bin/env python3
"""Fail if the scheduler's rooms import each other in a circle.

A room is a directory of ``src/sched/`` (``fair``, ``balance``, ``rt``,
``group``, ``stats``), one of its top-level files (``core``, ``rq``,
``task``, ``pelt``, ``hooks``, ...), or a top-level module of the crate
(``engine``, ``workload``, ``kernel``, ...). An edge is a ``crate::`` path
named in a file's non-test code. ``src/sched/mod.rs`` (the ``Sched`` struct
every room's ``impl Sched`` block extends, holding each room's state) is the
hub and is left out: an edge into or out of it is not a circle. Test code
(``*_tests.rs`` files and ``#[cfg(test)]`` modules) is left out too.

Usage: ``python scripts/dev/check_module_cycles.py [--graph]``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
ROOM_DIRS = {"fair", "balance", "rt", "group", "stats"}
PATH = re.compile(r"\bcrate::([a-z_]+)(?:::([a-z_]+))?(?:::([a-z_]+))?")
SUPER = re.compile(r"^use super::([a-z_]+)", re.M)


def is_test(name: str) -> bool:
    return name.endswith("_tests.rs") or name == "tests.rs"


def room_of(path: Path) -> str | None:
    rel = path.relative_to(SRC).parts
    if rel[0] == "bindings" or is_test(rel[-1]):
        return None
    if rel[0] == "sched":
        if len(rel) == 2:
            return None if rel[1] == "mod.rs" else "sched::" + rel[1][:-3]
        return "sched::" + rel[1]
    return rel[0][:-3] if rel[0].endswith(".rs") else rel[0]


def target(parts: tuple[str | None, ...]) -> str | None:
    a, b, _ = parts
    if a == "sched":
        if b is None:
            return None
        if b in ROOM_DIRS:
            return "sched::" + b
        return None if not (SRC / "sched" / f"{b}.rs").exists() else "sched::" + b
    return a


def non_test(text: str) -> str:
    cut = re.search(r"^#\[cfg\(test\)\]\s*\nmod tests", text, re.M)
    return text[: cut.start()] if cut else text


def graph() -> dict[str, set[str]]:
    g: dict[str, set[str]] = {}
    for f in sorted(SRC.rglob("*.rs")):
        room = room_of(f)
        if room is None:
            continue
        text = non_test(f.read_text())
        text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
        deps = g.setdefault(room, set())
        for m in PATH.finditer(text):
            t = target(m.groups())
            if t and t != room:
                deps.add(t)
        if f.parent == SRC / "sched" and f.name != "mod.rs":
            for m in SUPER.finditer(text):
                t = target(("sched", m.group(1), None))
                if t and t != room:
                    deps.add(t)
    return g


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one room."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def crate_graph() -> dict[str, set[str]]:
    """The same edges between the crate's top-level modules, ``sched`` whole
    (its hub included): the engine and the scheduler, the result and the
    scheduler, must not import each other either."""
    g: dict[str, set[str]] = {}
    for f in sorted(SRC.rglob("*.rs")):
        rel = f.relative_to(SRC).parts
        if rel[0] in ("bindings", "lib.rs") or is_test(rel[-1]):
            continue
        top = rel[0][:-3] if rel[0].endswith(".rs") else rel[0]
        text = re.sub(r"^\s*//.*$", "", non_test(f.read_text()), flags=re.M)
        deps = g.setdefault(top, set())
        for m in PATH.finditer(text):
            a = m.group(1)
            if a != top and ((SRC / f"{a}.rs").exists() or (SRC / a).is_dir()):
                deps.add(a)
    return g


def main() -> int:
    g = graph()
    top = crate_graph()
    if "--graph" in sys.argv:
        for v in sorted(g):
            print(f"{v}: {' '.join(sorted(g[v]))}")
    bad = [(g, c) for c in cycles(g)] + [(top, c) for c in cycles(top)]
    for gr, comp in bad:
        inner = {v: sorted(gr[v] & set(comp)) for v in comp}
        print("error: import circle among " + ", ".join(comp), file=sys.stderr)
        for v, ws in inner.items():
            print(f"  {v} -> {', '.join(ws)}", file=sys.stderr)
    if bad:
        return 1
    print(f"module rooms ok: {len(g)} rooms, {len(top)} crate modules, no import circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
