"""Sweep checkpoints: the finished rows written to Parquet as a sweep goes
(``save_checkpoint``) and read back to resume it (``load_checkpoint``) only
if they are the rows schedlab wrote for this very sweep — the file's bytes
(its ``<checkpoint>.sha256`` digest file), the schedlab version, the sweep
(``sweep_fingerprint``), the rows' content hash, and each row a planned run's,
once, with its seed. Anything else is refused with a ``ConfigError``."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from .. import _core, inputs
from .._check import error_text, need_output_path
from ..exceptions import ConfigError, OutputError
from .plan import Planned, Run
from .rows import build_frame


def sweep_fingerprint(runs: Iterable[Run]) -> str:
    """A sha256 of the planned runs (each one's point, replicate, spec and
    error): a checkpoint resumes only the sweep it was written for."""
    h = hashlib.sha256()
    for r in runs:
        h.update(
            json.dumps(
                [r.point, r.replicate, r.spec, r.error], sort_keys=True, default=str
            ).encode()
        )
    return h.hexdigest()


def _content_hash(df: pl.DataFrame) -> str:
    """A sha256 of a frame's columns (names, dtypes, nulls and values), the
    same for the frame written and the frame read back from Parquet."""
    h = hashlib.sha256()
    h.update(f"{df.height}\0".encode())
    for name, s in zip(df.columns, df.get_columns(), strict=True):
        dtype = s.dtype
        h.update(f"{len(name)}:{name}\0{dtype}\0".encode())
        if dtype == pl.Null:
            continue
        h.update(s.is_null().to_numpy().tobytes())
        if dtype.is_numeric():
            a = s.fill_null(0).to_numpy()
            h.update(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
        elif dtype == pl.Boolean:
            h.update(s.fill_null(False).to_numpy().tobytes())
        elif dtype == pl.String:
            t = s.fill_null("")
            h.update(t.str.len_bytes().cast(pl.UInt64).to_numpy().astype("<u8").tobytes())
            h.update("".join(t.to_list()).encode())
        else:
            h.update(json.dumps(s.to_list(), sort_keys=True, default=str).encode())
    return h.hexdigest()


# What reading a corrupt Parquet file can raise: polars errors, OSError, and
# polars' panics (a BaseException, not an Exception).
_READ_ERRORS = (Exception, pl.exceptions.PanicException)


def _bad_checkpoint(path: Path, what: str) -> ConfigError:
    return ConfigError(
        f"invalid checkpoint={str(path)!r}: {what}; remove it or choose another path"
    )


def _real(path: Path) -> Path:
    """The file a checkpoint path names: a symlink's target (written in
    place, the link kept, as ``atomic_output`` does), else the path."""
    try:
        return Path(os.path.realpath(path)) if path.is_symlink() else path
    except OSError:  # a name too long: the write that follows says so
        return path


def _digest_path(path: Path) -> Path:
    """The checkpoint's byte-digest file, beside the file itself (a
    symlink's target): ``<checkpoint>.sha256``."""
    real = _real(path)
    return real.with_name(real.name + ".sha256")


def _file_sha256(path: Path, refuse: inputs.Refuse | None = None) -> str:
    """The sha256 of the regular file ``path``, read in blocks; one past
    ``inputs.MAX_CHECKPOINT_BYTES`` (or not a regular file) is refused
    (``refuse``'s exception for the reason, by default a ``ConfigError``
    naming ``checkpoint``)."""
    limit = inputs.MAX_CHECKPOINT_BYTES
    refuse = refuse or inputs.refusal("checkpoint", path)
    h = hashlib.sha256()
    n = 0
    with inputs.open_input("checkpoint", path, _EXPECTED, refuse) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            n += len(block)
            if n > limit:
                raise refuse(inputs.too_large(limit, "a sweep checkpoint"))
            h.update(block)
    return h.hexdigest()


_EXPECTED = "a sweep checkpoint (Parquet) that schedlab wrote"
#: A digest as ``save_checkpoint`` writes it.
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _accepted(path: Path, digest: Path) -> list[str]:
    """The digests ``<checkpoint>.sha256`` accepts: a JSON object whose
    ``accept`` lists one or two sha256 digests (``save_checkpoint``);
    anything else — not a regular file, past ``inputs.MAX_DIGEST_BYTES``,
    not such JSON — is refused naming the checkpoint and the digest file."""

    def refuse(reason: str) -> ConfigError:
        return _bad_checkpoint(path, f"its digest file {str(digest)!r} cannot be read: {reason}")

    try:
        os.stat(digest)
    except FileNotFoundError:
        raise _bad_checkpoint(
            path,
            f"its digest file {str(digest)!r} is missing (copy it along with the checkpoint)",
        ) from None
    except (OSError, ValueError):
        pass  # said by open_input
    data = inputs.read_bounded(
        "checkpoint",
        digest,
        inputs.MAX_DIGEST_BYTES,
        "the digest file schedlab wrote beside the checkpoint",
        "a checkpoint's digest file",
        refuse,
    )
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as e:  # not UTF-8, not JSON, nested too deep
        raise refuse(f"not the JSON schedlab writes ({type(e).__name__})") from None
    accepted = doc.get("accept") if isinstance(doc, dict) else None
    if (
        not isinstance(accepted, list)
        or not 1 <= len(accepted) <= 2
        or not all(isinstance(a, str) and _SHA256.fullmatch(a) for a in accepted)
    ):
        raise refuse('expected {"accept": [one or two sha256 digests]}, as schedlab writes it')
    return accepted


def _check_bytes(path: Path) -> None:
    """Refuse a checkpoint whose bytes are not those schedlab wrote, before
    any Parquet reader sees them: a damaged length field can make polars
    abort the interpreter (seen with polars 2.1.0 on bit-flipped files),
    which no ``except`` can catch. ``<checkpoint>.sha256`` lists the digests
    of the file schedlab last wrote and of the one before (see
    ``save_checkpoint``: a kill between its two renames leaves either).
    Both files are read only if they are regular files, within their
    bounds (``inputs``)."""
    digest = _digest_path(path)
    accepted = _accepted(path, digest)
    actual = _file_sha256(path, lambda reason: _bad_checkpoint(path, reason))
    if actual not in accepted:
        raise _bad_checkpoint(
            path, "its bytes do not match the digest schedlab wrote (altered or corrupt)"
        )


def load_checkpoint(path: Path, fingerprint: str, runs: Planned) -> pl.DataFrame:
    """The resumable rows of the checkpoint at ``path`` (a frame, empty if
    there is no file), after checking that
    its bytes are those schedlab wrote (``<checkpoint>.sha256``), it reads,
    was written by this schedlab version for this sweep (``fingerprint``),
    is unaltered (its content hash) and holds only planned runs
    (``runs``), each once; else a ConfigError."""
    if not path.exists():
        return pl.DataFrame()
    _check_bytes(path)
    try:
        meta = pl.read_parquet_metadata(path)
    except _READ_ERRORS as e:  # a truncated or corrupt file
        raise _bad_checkpoint(path, f"it cannot be read ({type(e).__name__}: {e})") from None
    version = meta.get("schedlab.version")
    if version != _core.__version__:
        raise _bad_checkpoint(
            path,
            f"it was written by schedlab version {version!r}, not this one ({_core.__version__!r})",
        )
    if meta.get("schedlab.sweep") != fingerprint:
        raise _bad_checkpoint(path, "it holds a different sweep")
    expected = meta.get("schedlab.content_sha256")
    if not expected:
        raise _bad_checkpoint(path, "it has no content hash")
    try:
        df = pl.read_parquet(path)
    except _READ_ERRORS as e:
        raise _bad_checkpoint(path, f"it cannot be read ({type(e).__name__}: {e})") from None
    if _content_hash(df) != expected:
        raise _bad_checkpoint(path, "its rows do not match its content hash (altered or corrupt)")
    if df.height == 0:
        return df
    missing = [c for c in ("point", "replicate", "seed", "status") if c not in df.columns]
    if missing:
        raise _bad_checkpoint(path, f"it has no column {', '.join(missing)}")
    seen: set[tuple[Any, Any]] = set()
    cols = (df[c].to_list() for c in ("point", "replicate", "seed"))
    for point, replicate, row_seed in zip(*cols, strict=True):
        key = (point, replicate)
        seed = runs.seed_of(*key)
        if seed is None:
            raise _bad_checkpoint(
                path, f"it holds a row (point={key[0]!r}, replicate={key[1]!r}) not in the sweep"
            )
        if key in seen:
            raise _bad_checkpoint(
                path, f"it holds the row (point={key[0]}, replicate={key[1]}) more than once"
            )
        seen.add(key)
        if row_seed != seed:
            raise _bad_checkpoint(
                path,
                f"its row (point={key[0]}, replicate={key[1]}) has seed={row_seed!r}, "
                f"not the sweep's {seed}",
            )
    return df.filter(pl.col("status") != "cancelled")


def check_checkpoint_path(param: str, path: str | os.PathLike[str]) -> Path:
    """A checkpoint path, checked before any run as every output file is
    (``need_output_path``: a file name, not a directory or device, in a
    directory where files can be created); an existing file is allowed
    (it is resumed from)."""
    return need_output_path(param, path, force=True)


def save_checkpoint(
    path: Path, rows: pl.DataFrame | list[dict[str, Any]], fingerprint: str
) -> None:
    """Write ``rows`` (the sweep frame, or rows to build it from) to the
    checkpoint at ``path``, with the sweep's ``fingerprint``, the version
    and the content hash in its metadata, and its digest file beside it;
    each file is replaced atomically (written aside, then renamed). A write
    that fails (a full disk) leaves both files as they were, no temporary
    file behind, and raises ``OutputError`` (its ``partial`` the frame)."""
    df = rows if isinstance(rows, pl.DataFrame) else build_frame(rows)
    shown = path
    path = _real(path)
    tmp = path.with_name(path.name + ".tmp")
    digest = _digest_path(path)
    dtmp = digest.with_name(digest.name + ".tmp")
    try:
        for f in (tmp, dtmp):
            # a FIFO or device left at a temporary file's name would block
            # or swallow the write: the names are schedlab's own
            if f.is_symlink() or (f.exists() and not f.is_file()):
                f.unlink()
        df.write_parquet(
            tmp,
            metadata={
                "schedlab.sweep": fingerprint,
                "schedlab.version": _core.__version__,
                "schedlab.build_profile": _core.build_profile,
                "schedlab.content_sha256": _content_hash(df),
            },
        )
        # The digest file accepts the new bytes before they replace the old
        # ones, and still the old: a kill between the two renames leaves a
        # checkpoint the digest accepts, whichever of the two files it is.
        accept = [_file_sha256(tmp)]
        if path.exists():
            try:
                accept.append(_file_sha256(path))
            except (OSError, ConfigError):  # unreadable: the new bytes only
                pass
        dtmp.write_text(json.dumps({"accept": accept}))
        os.replace(dtmp, digest)
        os.replace(tmp, path)
    except (OSError, pl.exceptions.PolarsError) as e:
        for f in (tmp, dtmp):
            with contextlib.suppress(OSError):  # EROFS, ENAMETOOLONG: nothing to remove
                f.unlink(missing_ok=True)
        try:
            old = "; the checkpoint on disk is the last one written" if path.exists() else ""
        except OSError:
            old = ""
        err = OutputError(f"could not write checkpoint={str(shown)!r}: {error_text(e)}{old}")
        err.partial = df
        err.kept = None
        raise err from None


def remove_checkpoint(path: Path) -> None:
    """Remove the checkpoint at ``path`` and its digest file, if there."""
    digest = _digest_path(path)
    path.unlink(missing_ok=True)
    digest.unlink(missing_ok=True)
