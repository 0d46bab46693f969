"""The exceptions schedlab raises.

Every invalid input is refused at the boundary with an error naming the
parameter, the value and what is allowed. Config errors are ``ValueError``s
(and wrong types ``TypeError``s), so ordinary ``except ValueError`` works:
``SchedlabError`` is the base of every schedlab error; ``ConfigError`` and
``ConfigTypeError`` are also ``ValueError`` and ``TypeError``;
``SimulationError`` and ``MeasureError`` are ``RuntimeError``s.

The classes are declared once, in the compiled core
(``src/bindings/errors.rs``), and re-exported here (the block below is
written from it by ``scripts/dev/gen_fields.py``): the class an error is
raised with and the class you catch are the same object.
"""

from __future__ import annotations

# BEGIN generated exceptions (scripts/dev/gen_fields.py)
from ._core import (
    BatchInterrupted,
    ConfigError,
    ConfigTypeError,
    MeasureError,
    SchedlabError,
    SimulationError,
)

__all__ = [
    "SchedlabError",
    "ConfigError",
    "ConfigTypeError",
    "SimulationError",
    "MeasureError",
    "BatchInterrupted",
]
# END generated exceptions
