"""The exceptions schedlab raises.

Every invalid input is refused at the boundary with an error naming the
parameter, the value and what is allowed. Config errors are ``ValueError``s
(and wrong types ``TypeError``s), so ordinary ``except ValueError`` works:
``SchedlabError`` is the base of every schedlab error; ``ConfigError`` and
``ConfigTypeError`` are also ``ValueError`` and ``TypeError``;
``SimulationError`` and ``MeasureError`` are ``RuntimeError``s;
``OutputError`` (a file schedlab writes could not be written: a full disk,
a failing device) is an ``OSError`` and carries ``partial``, the rows the
file was to hold, and ``kept``, where they were saved instead.

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
    OutputError,
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
    "OutputError",
]
# END generated exceptions


class MachineMismatchWarning(UserWarning):
    """``calibrate`` was given a frame measured on a host other than the
    modelled machine (its recorded ``cpus`` differ from the machine's CPU
    count): the fit goes on, tuning one machine's costs to another's runs.
    ``calibrate(..., machine_mismatch="error")`` refuses instead,
    ``"ignore"`` says nothing."""


__all__ += ["MachineMismatchWarning"]
