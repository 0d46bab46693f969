"""Progress bars: a notebook widget when ipywidgets is installed, text
otherwise — without tqdm.auto's "IProgress not found" warning in a Jupyter
kernel that lacks ipywidgets."""

from __future__ import annotations

import importlib.util
from typing import Any


def progress_bar(*args: Any, **kwargs: Any) -> Any:
    """``tqdm(*args, **kwargs)`` from ``tqdm.auto`` if ipywidgets can be
    imported, else from ``tqdm.std``."""
    if importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm as auto

        return auto(*args, **kwargs)
    from tqdm.std import tqdm as text

    return text(*args, **kwargs)
