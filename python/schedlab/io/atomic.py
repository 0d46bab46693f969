"""Atomic file output: ``atomic_output`` writes through a temporary file
beside the target and renames it over the target only once the file is
complete, so an interrupted write (an exception, Ctrl-C, a full disk)
leaves an existing file as it was. The ftrace and Perfetto exports and the
result tables' writers (``schedlab.io.output``) use it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal


@contextlib.contextmanager
def atomic_output(path: Path, mode: Literal["w", "wb"]) -> Iterator[IO[Any]]:
    """A file to write ``path``'s new content to: a temporary file beside it
    (beside the target of a symlink), renamed over it with ``os.replace``
    when the ``with`` block ends normally and removed if it raises (Ctrl-C
    included), so ``path`` is either its old self or the complete new file.
    The new file gets the old one's permission bits, or those ``open()``
    would give."""
    target = Path(os.path.realpath(path))
    old_mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    tmp, fd = _create_temp(target)
    try:
        if old_mode is not None:
            os.chmod(fd, old_mode)
        with open(fd, mode, encoding=None if mode == "wb" else "utf-8") as f:
            yield f
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create_temp(target: Path) -> tuple[Path, int]:
    """A new file ``.<name>.<random>.tmp`` beside ``target`` (mode 0666 less
    the umask, as ``open()`` creates files) and its descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
