"""The plain-text tables the demo, the case comparison and the benchmark
print: a header, a rule, rows; first column left-aligned, the rest right."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    first = line(header)
    return "\n".join([first, "-" * len(first), *(line(r) for r in rows)])
