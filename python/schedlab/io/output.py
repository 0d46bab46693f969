"""Writing result frames to files without losing them: ``write_parquet``
writes through a temporary file beside the target, renamed over it when
complete (``atomic.atomic_output``), so a failed write (a full disk, a
device error, Ctrl-C) leaves an existing file as it was and no temporary
file behind, and raises ``OutputError``; ``keep_frame`` then saves the
frame somewhere else (beside the target, else in the temporary directory)
and says where."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import polars as pl

from .._check import error_text
from ..exceptions import OutputError
from .atomic import atomic_output


@contextlib.contextmanager
def output_errors(param: str, path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn a failed write inside the block (an ``OSError`` such as a full
    disk, or polars' error for one) into ``OutputError`` naming ``param``
    and the path, its ``partial`` and ``kept`` None."""
    try:
        yield
    except OutputError:
        raise
    except (OSError, pl.exceptions.PolarsError) as e:
        err = OutputError(f"could not write {param}={os.fspath(path)!r}: {error_text(e)}")
        err.partial = None
        err.kept = None
        raise err from None


def write_parquet(
    df: pl.DataFrame,
    path: str | os.PathLike[str],
    metadata: dict[str, str] | None = None,
    param: str = "path",
) -> None:
    """Write ``df`` to ``path`` as Parquet, atomically (see the module); a
    failure raises ``OutputError`` naming ``param`` and the path, its
    ``partial`` the frame and ``kept`` None."""
    try:
        with output_errors(param, path), atomic_output(Path(path), "wb") as f:
            df.write_parquet(f, metadata=metadata)
    except OutputError as e:
        e.partial = df
        raise


def fallback_paths(target: Path, suffix: str) -> list[Path]:
    """Where to keep what ``target`` could not take: beside it as
    ``<target><suffix>``, then in the temporary directory."""
    name = f"{target.name}{suffix}"
    # in the temporary directory, the name cut to 100 bytes: the prefix and
    # the files written beside it must fit too
    short = os.fsencode(target.name)[:100].decode(errors="ignore") or "output"
    return [
        target.with_name(name),
        Path(tempfile.gettempdir()) / f"schedlab-{os.getpid()}-{short}{suffix}",
    ]


def keep_frame(
    failed: OutputError,
    df: pl.DataFrame,
    places: Sequence[Path],
    save: Callable[[Path, pl.DataFrame], None],
) -> OutputError:
    """After ``failed`` (a write that did not happen): ``save`` ``df`` at the
    first of ``places`` that takes it. Returns ``failed`` with ``partial``
    the frame, ``kept`` the path used (None if none took it) and a message
    saying where the rows are."""
    notes = []
    for place in places:
        try:
            save(place, df)
        except OutputError as e:
            notes.append(str(e))
            continue
        except (OSError, pl.exceptions.PolarsError) as e:
            notes.append(f"{place}: {error_text(e)}")
            continue
        err = OutputError(f"{failed}; the {df.height} rows are kept in {str(place)!r}")
        err.partial, err.kept = df, place
        return err
    err = OutputError(
        f"{failed}; the {df.height} rows could not be kept anywhere either ({'; '.join(notes)})"
    )
    err.partial, err.kept = df, None
    return err
