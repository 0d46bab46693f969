"""The README's first command and its Quick start, run as written in a fresh venv (`make readme`).

The first command (``pip install '.[perfetto]' && schedlab demo``) runs verbatim in the
repository root with a new venv's pip: it builds the package from source as a user's would.
After ``make wheel`` that build reuses target/ (same release profile and ``python`` feature,
from pyproject.toml), so it costs pip's build environment, not a second compile. Then the
Python block under "## Quick start" runs verbatim with that venv's Python, in a temporary
directory (its output files land there, not in the repository).

    python scripts/dev/readme_check.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
README = ROOT / "README.md"


def fence(text: str, lang: str, after: str = "") -> str:
    """The body of the first ```lang block after the line ``after`` (from the top if empty)."""
    lines = text.splitlines()
    start = lines.index(after) + 1 if after else 0
    opening = lines.index(f"```{lang}", start)
    closing = lines.index("```", opening + 1)
    return "\n".join(lines[opening + 1 : closing]) + "\n"


def commands(text: str) -> list[str]:
    """The README's commands for a fresh machine: its first ```sh block, comments cut."""
    return [line.split("  #")[0].strip() for line in fence(text, "sh").splitlines()]


def quickstart(text: str) -> str:
    """The Python block under the README's "## Quick start" heading."""
    return fence(text, "python", after="## Quick start")


def main() -> int:
    text = README.read_text()
    first, code = commands(text)[0], quickstart(text)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="schedlab-readme-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env |= {
            "VIRTUAL_ENV": str(venv),
            "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
            "PIP_QUIET": "1",  # pip's own chatter only; the command is the README's
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
        print(f"readme: {first}   (fresh venv, in {ROOT})", flush=True)
        subprocess.run(["bash", "-c", f"set -e; {first}"], cwd=ROOT, env=env, check=True)
        t1 = time.monotonic()
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "quickstart.py").write_text(code)
        print("readme: the Quick start block of README.md, verbatim", flush=True)
        subprocess.run([venv / "bin" / "python", "quickstart.py"], cwd=work, env=env, check=True)
        t2 = time.monotonic()
    print(
        f"readme: ok: venv and first command {t1 - t0:.0f} s, Quick start {t2 - t1:.0f} s, "
        f"{time.monotonic() - t0:.0f} s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
