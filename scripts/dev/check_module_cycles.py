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
from collections.abc import Callable
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
ROOM_DIRS = {"fair", "balance", "rt", "group", "stats"}
PATH = re.compile(r"\bcrate::([a-z_]+)(?:::([a-z_]+))?(?:::([a-z_]+))?")
Parts = tuple[str | None, ...]


def is_test(name: str) -> bool:
    return name.endswith("_tests.rs") or name == "tests.rs"


def room_of(path: Path) -> str | None:
    rel = path.relative_to(SRC).parts
    if rel[0] == "sched":
        if len(rel) == 2:
            return None if rel[1] == "mod.rs" else "sched::" + rel[1][:-3]
        return "sched::" + rel[1]
    return rel[0][:-3] if rel[0].endswith(".rs") else rel[0]


def top_of(path: Path) -> str:
    first = path.relative_to(SRC).parts[0]
    return first.removesuffix(".rs")


def target(parts: Parts) -> str | None:
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


def sources() -> list[tuple[Path, str]]:
    """Each file's code as the graphs read it, read once: no test code, no
    comments, and a top-level scheduler file's ``use super::x`` written as
    the ``crate::sched::x`` it names."""
    out = []
    for f in sorted(SRC.rglob("*.rs")):
        rel = f.relative_to(SRC).parts
        if rel[0] in ("bindings", "lib.rs") or is_test(rel[-1]):
            continue
        code = re.sub(r"^\s*//.*$", "", non_test(f.read_text()), flags=re.M)
        if f.parent == SRC / "sched":
            code = re.sub(r"^use super::", "use crate::sched::", code, flags=re.M)
        out.append((f, code))
    return out


def graph(
    files: list[tuple[Path, str]],
    node_of: Callable[[Path], str | None],
    target_of: Callable[[Parts], str | None],
) -> dict[str, set[str]]:
    """The edges between the nodes ``node_of`` puts files in (None: left
    out), each ``crate::`` path named mapped by ``target_of``."""
    g: dict[str, set[str]] = {}
    for f, code in files:
        node = node_of(f)
        if node is None:
            continue
        deps = g.setdefault(node, set())
        for m in PATH.finditer(code):
            t = target_of(m.groups())
            if t and t != node:
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


def crate_module(parts: Parts) -> str | None:
    """The crate's top-level module a path names, ``sched`` whole (its hub
    included): the engine and the scheduler, the result and the scheduler,
    must not import each other either."""
    a = parts[0]
    return a if a and ((SRC / f"{a}.rs").exists() or (SRC / a).is_dir()) else None


def main() -> int:
    files = sources()
    g = graph(files, room_of, target)
    top = graph(files, top_of, crate_module)
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
