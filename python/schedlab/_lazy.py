"""Names a package gives without importing its modules when it is imported:
``lazy_names(package, {name: module})`` is the package's module
``__getattr__`` (PEP 562), which imports ``package.module`` on first use of
``name``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """``__getattr__`` for ``package``: ``names[name]`` is the module (relative
    to the package) that holds ``name``; any other name is an ``AttributeError``."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f".{module}", package), name)

    return __getattr__
