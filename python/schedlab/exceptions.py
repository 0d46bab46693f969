"""The exceptions schedlab raises.

Every invalid input is refused at the boundary with an error naming the
parameter, the value and what is allowed. Config errors are ``ValueError``s
(and wrong types ``TypeError``s), so ordinary ``except ValueError`` works.
"""

from __future__ import annotations


class SchedlabError(Exception):
    """Base class of every schedlab error."""


class ConfigError(SchedlabError, ValueError):
    """A parameter has a value outside what is allowed."""


class ConfigTypeError(SchedlabError, TypeError):
    """A parameter has a value of the wrong type."""


class SimulationError(SchedlabError, RuntimeError):
    """A run could not be carried out."""


__all__ = ["SchedlabError", "ConfigError", "ConfigTypeError", "SimulationError"]
