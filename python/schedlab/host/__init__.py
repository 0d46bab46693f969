"""The real machine's side: what this host's kernel does, measured, and the
model fitted to it —

- ``measurement``: ``perf bench sched messaging|pipe`` under ``perf stat`` on
  this host, as a frame (``measure``; the CLI's ``schedlab measure``);
- ``calibration``: ``CostModel`` scale factors fitted to those measurements
  (``calibrate``, ``Calibration``);
- ``changes``: the changes ``measure`` runs a benchmark under (``chrt``,
  ``nice``, ``taskset``, the RT sysctls) and the ``/proc/interrupts`` counts;
- ``validation``: the model's predicted effects of those changes beside the
  measured ones (``validate``, ``Validation``).

The public names are here and in ``schedlab`` (``sl.measure``,
``sl.calibrate``, ``sl.Calibration``, ``sl.validate``, ``sl.Validation``).
"""

from .calibration import Calibration, calibrate
from .measurement import measure
from .validation import Validation, validate

__all__ = ["Calibration", "Validation", "calibrate", "measure", "validate"]
