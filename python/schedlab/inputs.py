"""Reading input files within bounds. Every file schedlab reads — a sweep
spec, an rt-app description or log, a recorded trace, a checkpoint and its
digest file — is opened by ``open_input`` and read by ``read_bounded`` or
``text_lines``:

- only a regular file is read: a directory, a FIFO, a device (``/dev/zero``)
  or a socket is refused before it is opened, and again after (``fstat`` of
  the open file: a path swapped meanwhile, a symlink to one), and the open
  never blocks (``O_NONBLOCK``: a FIFO without a writer would wait forever);
- what is read is bounded while it is read, by the limits below: a file
  that grows past its bound is refused at the bound, and a compressed file
  by the size of the text it inflates to, not by its own;
- every refusal, and every OS error (a missing file, a symlink loop, a
  permission), is a ``ConfigError`` naming the parameter, the path and the
  limit or the reason.

The limits are module constants, read at each call (a test may lower
them); docs/guide/errors-and-limits.md lists them.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ._check import error_text, type_name
from .exceptions import ConfigError, ConfigTypeError

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

#: A sweep spec (``load_spec``, ``schedlab sweep``): a few hundred bytes.
MAX_SPEC_BYTES = 1 * MIB
#: An rt-app JSON description (``workloads.rt_app``), a file or a string:
#: rt-app's examples take a few KB, a generated one of hundreds of threads
#: a few hundred KB.
MAX_RTAPP_BYTES = 16 * MIB
#: An rt-app log file (``measure_rt_app`` reads one per thread): a line of
#: ~100 bytes per loop iteration.
MAX_RTAPP_LOG_BYTES = 1 * GIB
#: A recorded trace's text (``workloads.from_trace``, ``schedule_stats``,
#: ``compare_schedule``), after decompression for a gzipped one: a replay
#: holds at most ``_core.SCRIPT_MAX_OPS`` (4 million) operations, about
#: 1 GB of the switch and wake-up lines that make them.
MAX_TRACE_BYTES = 4 * GIB
#: The longest line of a trace, in characters: a ``sched_*`` line takes
#: under 300, the longest event the kernel prints a few KB.
MAX_TRACE_LINE = 1 * MIB
#: A sweep checkpoint (Parquet): a sweep holds at most 10⁷ runs, a row of
#: a checkpoint well under 1 KB (164 B in a 1,024-run sweep, measured).
MAX_CHECKPOINT_BYTES = 16 * GIB
#: A checkpoint's digest file (``<checkpoint>.sha256``): two sha256
#: digests in JSON, about 150 bytes.
MAX_DIGEST_BYTES = 4 * KIB

#: What a file of each non-regular kind is called in a refusal.
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def size_text(n: int) -> str:
    """``n`` bytes as the limits are written: ``1 MiB (1,048,576 bytes)``."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {name} ({n:,} bytes)"
    return f"{n:,} bytes"


def shown(path: str | os.PathLike[str]) -> str:
    """A path as a refusal shows it: cut in the middle past 120 characters."""
    p = os.fspath(path)
    return p if len(p) <= 120 else f"{p[:60]}...{p[-40:]}"


def input_path(param: str, path: Any, expected: str) -> Path:
    """``path`` as a ``Path`` if it is a ``str`` or ``os.PathLike`` of text
    (not an int, which ``open`` takes as a file descriptor; not bytes);
    else a ``ConfigTypeError`` naming ``param``."""
    if not isinstance(path, str | os.PathLike) or not isinstance(os.fspath(path), str):
        raise ConfigTypeError(
            f"invalid type for {param}: got {type_name(path)}, expected a file path "
            f"(str or os.PathLike) of {expected}"
        )
    return Path(path)


#: Makes the exception for a refusal from its reason (``"a FIFO (named
#: pipe); expected ..."``): by default ``invalid <param>=<path>: <reason>``.
Refuse = Callable[[str], ConfigError]


def refusal(param: str, path: Path) -> Refuse:
    """The default ``Refuse``: a ``ConfigError`` naming ``param`` and the path."""
    return lambda reason: ConfigError(f"invalid {param}={shown(path)!r}: {reason}")


def _check_kind(mode: int, expected: str, refuse: Refuse) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise refuse(
        f"{kind}; expected {expected} (a regular file: directories, FIFOs, devices and "
        "sockets are not read)"
    )


def open_input(param: str, path: Any, expected: str, refuse: Refuse | None = None) -> IO[bytes]:
    """The regular file ``path`` open for reading in binary (the caller
    closes it). Anything else — a directory, FIFO, device or socket, a
    missing or unreadable file, a symlink loop, a name the OS refuses — is
    a ``ConfigError`` naming ``param``, the path and ``expected`` (what the
    parameter takes), or ``refuse``'s exception for the reason. Opening
    never blocks: the kind is checked before the open and, on the open
    file, after it."""
    p = input_path(param, path, expected)
    refuse = refuse or refusal(param, p)
    try:
        _check_kind(os.stat(p).st_mode, expected, refuse)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(p, flags | getattr(os, "O_NOCTTY", 0))
    except ConfigError:
        raise
    except (OSError, ValueError) as e:  # ValueError: a NUL byte, an unencodable name
        raise refuse(f"cannot read it ({error_text(e)}); expected {expected}") from None
    try:
        _check_kind(os.fstat(fd).st_mode, expected, refuse)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def too_large(limit: int, what: str) -> str:
    """The reason a file holding more than ``limit`` bytes of ``what`` is
    refused."""
    return f"larger than {size_text(limit)}, the limit for {what}"


def read_bounded(
    param: str, path: Any, limit: int, expected: str, what: str, refuse: Refuse | None = None
) -> bytes:
    """The bytes of the regular file ``path`` (``open_input``), at most
    ``limit`` of them: one more is refused with a ``ConfigError`` naming
    ``param``, the path and the limit for ``what`` (or ``refuse``'s). At
    most ``limit + 1`` bytes are ever read, so a file that grows while it
    is read is refused as well."""
    p = input_path(param, path, expected)
    refuse = refuse or refusal(param, p)
    with open_input(param, p, expected, refuse) as f:
        try:
            data = f.read(limit + 1)
        except OSError as e:  # EIO
            raise refuse(f"cannot read it ({error_text(e)})") from None
    if len(data) > limit:
        raise refuse(too_large(limit, what))
    return data


class _Counted(io.RawIOBase):
    """``src``'s bytes (a file, or a ``GzipFile``'s decompressed ones),
    calling ``over()`` once more than ``limit`` have been read."""

    def __init__(
        self, src: IO[bytes] | io.BufferedIOBase, limit: int, over: Callable[[], BaseException]
    ) -> None:
        self.src: Any = src  # a file object or a GzipFile: both have readinto
        self.limit, self.over, self.count = limit, over, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n: int = self.src.readinto(b)
        self.count += n
        if self.count > self.limit:
            raise self.over()
        return n

    def close(self) -> None:
        self.src.close()
        super().close()


#: How much of a text input ``text_lines`` takes at a time.
_BLOCK = 1 << 16


def _split(data: bytes) -> list[str]:
    """``data`` (whole lines, or the end of the input) as text lines:
    UTF-8 with undecodable bytes replaced, universal newlines (``\\r\\n``
    and ``\\r`` end a line as ``\\n`` does), without their line ends."""
    text = data.decode("utf-8", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def text_lines(
    param: str,
    path: Path,
    src: IO[bytes] | io.BufferedIOBase,
    limit: int,
    line_limit: int,
    what: str,
    *,
    also_close: IO[bytes] | None = None,
) -> Iterator[str]:
    """The lines of ``src`` (bytes, e.g. ``open_input``'s file or a
    ``GzipFile`` over it; closed at the end) as UTF-8 text, undecodable
    bytes replaced, universal newlines, without their line ends. More than
    ``limit`` bytes of ``src`` (what it inflates to, for a ``GzipFile``) or
    a line of more than ``line_limit`` characters is a ``ConfigError``
    naming ``param``, the path and the limit, raised when the reading gets
    there: no more than a block (64 KiB) past either is ever held. The input
    is taken a block at a time and split at its last newline, so a line's
    bytes are decoded whole (a newline byte is never inside a UTF-8
    character) and the per-line work is the split's."""
    refuse = refusal(param, path)
    counted = _Counted(src, limit, lambda: refuse(too_large(limit, what)))

    def too_long(n: int) -> ConfigError:
        return refuse(
            f"line {n:,} is longer than {line_limit:,} characters, the limit for a line of {what}"
        )

    def checked(lines: list[str], n: int) -> list[str]:
        if lines and max(map(len, lines)) > line_limit:
            raise too_long(n + next(i for i, x in enumerate(lines) if len(x) > line_limit) + 1)
        return lines

    with contextlib.closing(also_close or src), contextlib.closing(counted):
        n, rest = 0, b""
        while True:
            block = counted.read(_BLOCK)
            if not block:
                if rest:
                    yield from checked(_split(rest), n)
                return
            cut = block.rfind(b"\n")
            if cut < 0:
                rest += block
            else:
                lines = checked(_split(rest + block[: cut + 1]), n)
                rest = block[cut + 1 :]
                n += len(lines)
                yield from lines
                del lines  # not held while the next block is split
            if len(rest) > line_limit:
                # no newline in rest: lines ended by a lone \r (one not last,
                # which may be half of a \r\n) are whole
                cr = rest.rfind(b"\r", 0, len(rest) - 1)
                if cr >= 0:
                    lines = checked(_split(rest[: cr + 1]), n)
                    rest = rest[cr + 1 :]
                    n += len(lines)
                    yield from lines
                # up to 4 bytes a character, and a character cut at the
                # block's end decodes as one
                if len(rest.decode("utf-8", "replace")) > line_limit + 1:
                    raise too_long(n + 1)
