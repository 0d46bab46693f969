"""The exceptions schedlab raises.

Every invalid input is refused at the boundary with an error naming the
parameter, the value and what is allowed. Config errors are ``ValueError``s
(and wrong types ``TypeError``s), so ordinary ``except ValueError`` works.

The classes are declared once, in the compiled core (``src/bindings/errors.rs``),
and re-exported here: the class an error is raised with and the class you
catch are the same object.

- ``SchedlabError`` — base class of every schedlab error
- ``ConfigError(SchedlabError, ValueError)`` — a value outside what is allowed
- ``ConfigTypeError(SchedlabError, TypeError)`` — a value of the wrong type
- ``SimulationError(SchedlabError, RuntimeError)`` — a run could not be carried out
- ``MeasureError(SchedlabError, RuntimeError)`` — perf could not run, or printed
  something ``measure`` cannot read
"""

from __future__ import annotations

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
