"""The real machine's side: what this host's kernel does, measured, and the
model fitted to it —

- ``measurement``: ``perf bench sched messaging|pipe`` under ``perf stat`` on
  this host, as a frame (``measure``; the CLI's ``schedlab measure``);
- ``calibration``: ``CostModel`` scale factors fitted to those measurements
  (``calibrate``, ``Calibration``).

The public names are here and in ``schedlab`` (``sl.measure``,
``sl.calibrate``, ``sl.Calibration``).
"""

from .calibration import Calibration, calibrate
from .measurement import measure

__all__ = ["Calibration", "calibrate", "measure"]
