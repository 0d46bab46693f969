"""Run the notebooks in place at full size and stamp them (`make notebooks`).

The docs site renders notebooks/*.ipynb with their stored outputs (mkdocs-jupyter,
``execute: false``); this refreshes those outputs. Each notebook runs top to bottom in
notebooks/ with ``NB_SMOKE`` and ``SCHEDLAB_MEASURE`` unset (the full-size story, on the
stored measurements), then gets a stamp in its metadata (``"schedlab"``: the sha256 of its
code cells and of tests/golden/presets.json, the model's numbers).
tests/api/test_docs_build.py fails on a notebook whose stamp differs from what this would write
now (its code or the model changed since its outputs were stored), or whose outputs are not
one full run.

    python scripts/dev/run_notebooks.py [NOTEBOOK.ipynb ...]   (default: all of them)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
NOTEBOOKS = ROOT / "notebooks"
GOLDEN = ROOT / "tests" / "golden" / "presets.json"
# what each notebook reads to pick its size or to measure the host; unset for the stored run
SIZE_ENV = ("NB_SMOKE", "SCHEDLAB_MEASURE")


def _source(cell: dict[str, Any]) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def code_sha256(nb: dict[str, Any]) -> str:
    """sha256 of the notebook's code cells, in order."""
    code = [_source(c) for c in nb["cells"] if c["cell_type"] == "code"]
    return hashlib.sha256("\n\0".join(code).encode()).hexdigest()


def stamp(nb: dict[str, Any]) -> dict[str, Any]:
    """What a full-size run of ``nb`` with the current model records in its metadata."""
    return {
        "code_sha256": code_sha256(nb),
        "golden_sha256": hashlib.sha256(GOLDEN.read_bytes()).hexdigest(),
        "nb_smoke": False,
    }


def run(path: Path, timeout: int) -> bool:
    """Execute ``path`` in place; False (not written) if the file changed while it ran."""
    import nbformat
    from nbclient import NotebookClient

    before = path.read_bytes()
    nb = nbformat.reads(before.decode(), as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        nb, timeout=timeout, record_timing=False, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    nb.metadata["schedlab"] = stamp(json.loads(nbformat.writes(nb)))  # type: ignore[no-untyped-call]
    if path.read_bytes() != before:
        return False
    nbformat.write(nb, path)  # type: ignore[no-untyped-call]
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run the notebooks at full size, store outputs.")
    ap.add_argument("paths", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per cell")
    args = ap.parse_args(argv)
    for k in SIZE_ENV:
        os.environ.pop(k, None)
    skipped = []
    for path in args.paths or sorted(NOTEBOOKS.glob("*.ipynb")):
        t0 = time.monotonic()
        print(f"{path.name} ...", end=" ", flush=True)
        written = run(path.resolve(), args.timeout)
        print(f"{time.monotonic() - t0:.0f} s{'' if written else ', NOT written'}", flush=True)
        if not written:
            skipped.append(path.name)
    if skipped:
        print(f"changed by someone else while they ran, not written: {skipped}", file=sys.stderr)
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
