"""Progress: the ``progress=`` argument of the runners (``ProgressArg``), and
bars — a notebook widget when ipywidgets is installed, text otherwise —
without tqdm.auto's "IProgress not found" warning in a Jupyter kernel that
lacks ipywidgets."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

#: What ``progress=`` takes: ``True`` (a bar), ``False`` (none) or a callable
#: ``progress(done, total)`` called as runs finish.
ProgressArg = bool | Callable[[int, int], None]


def progress_bar(*args: Any, **kwargs: Any) -> Any:
    """``tqdm(*args, **kwargs)`` from ``tqdm.auto`` if ipywidgets can be
    imported, else from ``tqdm.std``."""
    if importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm as auto

        return auto(*args, **kwargs)
    from tqdm.std import tqdm as text

    return text(*args, **kwargs)


def progress_ticker(progress: ProgressArg, total: int, done: int) -> Callable[[int], None]:
    """A ``tick(n)`` to call as ``n`` more of ``total`` runs finish (``done``
    finished before): it calls ``progress(done, total)``, moves a bar
    (closed at ``total``) or does nothing, as ``progress`` says."""
    if callable(progress):
        count = [done]

        def cb(n: int) -> None:
            count[0] += n
            progress(count[0], total)

        return cb
    if not progress:
        return lambda n: None
    bar = progress_bar(total=total, initial=done, desc="schedlab sweep", unit="run")

    def upd(n: int) -> None:
        bar.update(n)
        if bar.n >= total:
            bar.close()

    return upd
