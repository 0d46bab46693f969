"""The real machine's side: what this host's kernel does, measured, and the
model fitted to it —

- ``measure``: ``perf bench sched messaging|pipe`` under ``perf stat`` on
  this host, as a frame (``measure``; the CLI's ``schedlab measure``);
- ``calibrate``: ``CostModel`` scale factors fitted to those measurements
  (``calibrate``, ``Calibration``).

The public names are re-exported by ``schedlab`` (``sl.measure``,
``sl.calibrate``, ``sl.Calibration``).
"""
